public import Glibc
import Synchronization

/// What has been typed on standard input, waiting up to `milliseconds` for it: at most 64
/// bytes; nil when nothing came (or the input ended). `tape play` (``PlaySession``) and
/// `tape record` read their keys through it, and hand them to a `KeyInput` (`TerminalViews`),
/// which keeps an arrow split between two reads whole.
public func typedBytes(waiting milliseconds: Int32) -> ArraySlice<UInt8>? {
  var request = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
  guard poll(&request, 1, milliseconds) > 0 else { return nil }
  var buffer = [UInt8](repeating: 0, count: 64)
  let got = read(STDIN_FILENO, &buffer, buffer.count)
  guard got > 0 else { return nil }
  return buffer[..<got]
}

/// Writes `text` whole to `descriptor` (stderr unless told), retrying short writes and EINTR;
/// false when it could not.
///
/// Rule: a session's lines go out through this, never `FileHandle.write` or `print`. Why:
/// `FileHandle.write` traps when the write fails (a closed stderr), and `print` buffers what
/// a status line must show now.
@discardableResult
func writeToTerminal(_ text: String, to descriptor: Int32 = STDERR_FILENO) -> Bool {
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

/// SIGTSTP (Ctrl-Z): the loop has the player (if any) fade out and close its device, restores
/// the terminal, stops the process for real, and, when the shell continues it (`fg`, `bg`),
/// has the player open its device again and puts the terminal back in its mode.
///
/// Rule: the handler only sets a flag; the loop that plays looks at ``requested()`` and calls
/// ``stop(leave:back:)``.
/// Why: a process stopped with its device open stalls a JACK graph, and one stopped in raw
/// mode leaves the shell's terminal unusable.
///
/// ```swift
/// Suspend.install()
/// if Suspend.requested() {
///   _ = player.suspend()
///   Suspend.stop(leave: { /* terminal as it was */ }, back: { player.resume() })
/// }
/// ```
public enum Suspend {
  private static let flag = Atomic<Bool>(false)

  /// Takes SIGTSTP from now on (and counts a SIGCONT the player did not see coming, a
  /// SIGSTOP's, as a dropout: ``LivePlayer/noteContinued()``).
  public static func install() {
    signal(SIGTSTP) { _ in Suspend.flag.store(true, ordering: .relaxed) }
    // A stop the player did not see coming (SIGSTOP) is a dropout: SIGCONT counts them.
    _ = LivePlayer.continuations
    signal(SIGCONT) { _ in LivePlayer.noteContinued() }
    // A parent may have started us with them blocked (the mask is inherited).
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGTSTP)
    sigaddset(&signals, SIGCONT)
    pthread_sigmask(SIG_UNBLOCK, &signals, nil)
  }

  /// Whether Ctrl-Z came since the last look (the look clears it).
  public static func requested() -> Bool {
    flag.exchange(false, ordering: .relaxed)
  }

  /// `settings` with keys delivered one by one, unechoed, and reads that never wait: how
  /// `play`, `scrub` and `record` read their keys.
  public static func keysAsTyped(_ settings: termios) -> termios {
    var raw = settings
    raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
    withUnsafeMutablePointer(to: &raw.c_cc) {
      $0.withMemoryRebound(to: cc_t.self, capacity: Int(NCCS)) {
        $0[Int(VMIN)] = 0
        $0[Int(VTIME)] = 0
      }
    }
    return raw
  }

  /// Runs `leave`, stops the process until SIGCONT, then runs `back`.
  public static func stop(leave: () -> Void, back: () -> Void) {
    leave()
    signal(SIGTSTP, SIG_DFL)
    // Unblocked again: closing a JACK device in `leave` puts back the signal mask the thread
    // had when it was opened, and a process started with SIGTSTP blocked (as a test runner's
    // children are) would then not stop here, but take it as a second Ctrl-Z after `fg`.
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGTSTP)
    pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    raise(SIGTSTP)
    // Continued.
    install()
    back()
  }
}

/// SIGWINCH: the terminal was resized; the next look redraws (`tape scrub`).
public enum Resize {
  private static let flag = Atomic<Bool>(false)

  /// Takes SIGWINCH from now on.
  public static func install() {
    signal(SIGWINCH) { _ in Resize.flag.store(true, ordering: .relaxed) }
  }

  /// Whether the terminal was resized since the last look (the look clears it).
  public static func happened() -> Bool {
    flag.exchange(false, ordering: .relaxed)
  }
}
