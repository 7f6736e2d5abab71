public import Glibc
import Synchronization

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
