import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Ctrl-C, SIGTERM or SIGHUP asked to stop a command that stops itself (`tape play`,
/// `tape scrub`, `tape shell`): its loop looks at ``requested()``, ends what it does (the play
/// fades out, its summary is printed, the terminal restored), and only then ends the process
/// with that signal (``reraiseIfRequested(afterClosing:)``).
///
/// Rule: the handler only stores the signal's number and writes one byte to a pipe; everything
/// else runs on the command's own thread, after it has seen ``requested()``.
/// Why: a signal handler may interrupt a `malloc` or a lock; and a play stopped at once would
/// leave the terminal raw, the device open and no summary.
/// What if a loop does not look: the signal is never acted on; a loop that waits in `poll` for
/// something else takes ``wakeDescriptor()`` among its descriptors.
///
/// ```swift
/// Interrupt.install()
/// while player.isPlaying && !Interrupt.requested() { usleep(20_000) }
/// player.stop()
/// Interrupt.reraiseIfRequested(afterClosing: { /* close the stores */ })
/// ```
public enum Interrupt {
  private static let signalNumber = Atomic<Int32>(0)
  /// The write end of ``wakeDescriptor()``'s pipe, -1 until it is made.
  private static let wake = Atomic<Int32>(-1)

  /// Takes SIGINT, SIGTERM and SIGHUP (the terminal closing, an ssh session dropped) from now
  /// on, unblocking them (a parent may have started the process with them blocked).
  public static func install() {
    // Made now, not first in the handler, where making a static could interrupt a malloc
    // (see ``Termination/install(message:)``).
    _ = (signalNumber.load(ordering: .relaxed), wake.load(ordering: .relaxed))
    signal(SIGINT) { number in Interrupt.handle(number) }
    signal(SIGTERM) { number in Interrupt.handle(number) }
    // The terminal closing (an ssh session dropped): stop the same way, with the summary.
    signal(SIGHUP) { number in Interrupt.handle(number) }
    // A parent may have started us with these signals blocked (some process launchers do).
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGINT)
    sigaddset(&signals, SIGTERM)
    sigaddset(&signals, SIGHUP)
    pthread_sigmask(SIG_UNBLOCK, &signals, nil)
  }

  /// The handler: what it does is safe in one (an atomic store, a `write`).
  private static func handle(_ number: Int32) {
    signalNumber.store(number, ordering: .relaxed)
    let descriptor = wake.load(ordering: .relaxed)
    if descriptor >= 0 {
      var byte: UInt8 = 1
      _ = write(descriptor, &byte, 1)
    }
  }

  /// A descriptor that becomes readable when a stop is asked for, for a thread that waits in
  /// `poll` for something else too (`tape shell` waiting for its next line): the handler runs
  /// on whichever thread the signal picks, and `signal`'s handlers restart a blocking `read`.
  /// Made once; nil when no pipe can be made (then only ``requested()`` says so).
  public static func wakeDescriptor() -> Int32? {
    enum Made {
      static let read: Int32? = {
        var ends: [Int32] = [-1, -1]
        // (Glibc's module does not offer pipe2.)
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
          _ = fcntl(end, F_SETFD, FD_CLOEXEC)
          _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        Interrupt.wake.store(ends[1], ordering: .relaxed)
        return ends[0]
      }()
    }
    return Made.read
  }

  /// Whether one of the signals came since ``install()``.
  public static func requested() -> Bool {
    signalNumber.load(ordering: .relaxed) != 0
  }

  /// Ends the process with the signal that stopped it, if one did, so the parent sees it,
  /// having run `close` first (`tape` closes the projects it opened there: a reader that is the
  /// last to close a project copies its log into it, so the edits heard while playing are in
  /// the file). Returns when no signal came.
  public static func reraiseIfRequested(afterClosing close: () -> Void) {
    let number = signalNumber.load(ordering: .relaxed)
    guard number != 0 else { return }
    close()
    signal(number, SIG_DFL)
    raise(number)
  }
}
