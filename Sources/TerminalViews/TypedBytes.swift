import Glibc

/// What has been typed on standard input, waiting up to `milliseconds` for it: at most 64
/// bytes; nil when nothing came (or the input ended). `tape play` (Playback's `PlaySession`) and
/// `tape record` read their keys through it, and hand them to a ``KeyInput``,
/// which keeps an arrow split between two reads whole.
public func typedBytes(waiting milliseconds: Int32) -> ArraySlice<UInt8>? {
  var request = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
  guard poll(&request, 1, milliseconds) > 0 else { return nil }
  var buffer = [UInt8](repeating: 0, count: 64)
  let got = read(STDIN_FILENO, &buffer, buffer.count)
  guard got > 0 else { return nil }
  return buffer[..<got]
}
