public import Glibc

/// Writes `text` whole to `descriptor` (stderr unless told), retrying short writes and EINTR;
/// false when it could not.
///
/// Rule: messages, status lines and a session's screen go out through this, never
/// `FileHandle.write` or `print`.
/// Why: `FileHandle.write` traps when the write fails, so `tape ls nosuch 2>/dev/full` (or a
/// closed stderr) crashed with SIGILL instead of exiting with the error's own code; and
/// `print` buffers what a status line must show now.
/// What if it fails: nothing is retried but EINTR; the caller decides (the command line exits
/// with the error it was reporting).
@discardableResult
public func writeWhole(_ text: String, to descriptor: Int32 = STDERR_FILENO) -> Bool {
  var bytes = Array(text.utf8)
  var offset = 0
  while offset < bytes.count {
    let written = bytes.withUnsafeMutableBytes { buffer -> Int in
      guard let base = buffer.baseAddress else { return 0 }
      return Glibc.write(descriptor, base + offset, buffer.count - offset)
    }
    if written > 0 {
      offset += written
    } else if written < 0 && errno == EINTR {
      continue
    } else {
      return false
    }
  }
  return true
}
