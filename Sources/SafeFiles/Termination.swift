import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// What Tape does when it is asked to stop (SIGINT, SIGTERM, SIGHUP) in the middle of writing:
/// remove the temporary files it named, print one line, and die of the same signal, so the
/// parent (a shell, a script, a supervisor) sees exactly why it stopped.
///
/// Rule: a stopped command leaves nothing new behind. Why: a render or an import killed half-way
/// used to leave a multi-gigabyte `.partial` file. Most temporary files need nothing from this
/// type: they are unnamed (`O_TMPFILE`, see ``SafeOutput``) and vanish with the process, even
/// on `kill -9`. Only the fallback for file systems without `O_TMPFILE` names a file, and
/// registers it here with ``remember(_:)`` until it is renamed into place or removed.
///
/// The handler does only what a signal handler may: `unlink`, `rmdir`, `write`, `tcsetattr`,
/// `sem_post`, `raise`. What needs more (a project's log copied into its file, which is SQLite's
/// work) runs on a thread of its own after the handler, before the process ends
/// (``beforeStopping(_:)``).
///
/// ```swift
/// Termination.install(message: "render interrupted; mix.wav was not written")
/// let token = Termination.remember("/music/.mix.wav.tape-1f2e…")
/// defer { Termination.forget(token) }
/// ```
public enum Termination {
  /// The named temporary files to remove, as `strdup`ed C strings (their addresses; 0 = free).
  private static let slots: [Slot] = (0..<32).map { _ in Slot() }
  /// The line to print, a `strdup`ed C string, or 0.
  private static let message = Slot()
  /// The terminal settings to restore (a heap copy of `termios`), or 0.
  private static let terminal = Slot()
  /// What to write to the terminal when restoring it (leave the alternate screen, show the
  /// cursor), a `strdup`ed C string, or 0.
  private static let terminalReset = Slot()

  private final class Slot: Sendable {
    let address = Atomic<Int>(0)
  }

  /// Installs the handler for SIGINT, SIGTERM and SIGHUP, and ignores SIGPIPE (a reader that
  /// goes away is then a write error that Tape reports, not a silent death).
  ///
  /// - Parameter text: printed on stderr, as one `error:` line, when a signal stops the
  ///   command; nil prints nothing.
  public static func install(message text: String? = nil) {
    install(message: text, signals: [SIGINT, SIGTERM, SIGHUP])
  }

  private static func install(message text: String?, signals handled: [Int32]) {
    if let text {
      replace(message, with: strdup(text))
    }
    // Every static the handler reads is made here, before any signal can arrive: a static
    // is made on first use, and a Slot is a class, allocated; made inside the handler, that
    // malloc could interrupt another (glibc then aborts: "malloc(): invalid size"; a `tape
    // new` stopped by SIGTERM or SIGINT died so, 2 rounds of 30 on a fresh-clone CI run).
    _ = (slots.count, message, terminal, terminalReset, closerWake)
    _ = handling.load(ordering: .sequentiallyConsistent)
    _ = deferring.load(ordering: .sequentiallyConsistent)
    _ = pending.load(ordering: .sequentiallyConsistent)
    signal(SIGPIPE, SIG_IGN)
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { signal in Termination.handle(signal) }
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    for signal in handled {
      sigaction(signal, &action, nil)
    }
    // A parent may have started us with these signals blocked (some launchers do); a command
    // must still stop when asked.
    var signals = sigset_t()
    sigemptyset(&signals)
    for signal in handled { sigaddset(&signals, signal) }
    pthread_sigmask(SIG_UNBLOCK, &signals, nil)
  }

  /// Installs the handler for SIGINT, SIGTERM and SIGHUP where the process has none (the
  /// default action, which ends it at once): a command that handles them itself (a player
  /// stopping its device first) keeps its own.
  public static func installWhereUnhandled() {
    install(
      message: nil,
      signals: [SIGINT, SIGTERM, SIGHUP].filter { signal in
        var current = sigaction()
        sigaction(signal, nil, &current)
        return current.__sigaction_handler.sa_handler == nil
      })
  }

  /// Runs `body` when a signal stops the process, after the handler has removed the files it
  /// names and printed its line, on a thread made now for it (a handler may call nothing that
  /// locks or allocates), and ends the process with that signal once `body` returns. A second
  /// signal meanwhile ends it at once. Meanwhile the other threads go on, but none starts a
  /// ``withoutInterruption(_:)`` body (which would publish a file the line said was not
  /// written): it waits for the end. Installed once per process; later calls do nothing.
  public static func beforeStopping(_ body: @escaping @Sendable () -> Void) {
    guard !closerInstalled.exchange(true, ordering: .sequentiallyConsistent) else { return }
    sem_init(closerWake, 0, 0)
    let box = Unmanaged.passRetained(Closer(body)).toOpaque()
    var thread = pthread_t()
    let made = pthread_create(
      &thread, nil,
      { context in
        guard let context else { return nil }
        let closer = Unmanaged<Closer>.fromOpaque(context).takeRetainedValue()
        while sem_wait(Termination.closerWake) != 0 {}
        closer.body()
        Termination.endWithPendingSignal()
      }, box)
    if made == 0 {
      pthread_detach(thread)
      closerWakeReady.store(true, ordering: .sequentiallyConsistent)
    } else {
      Unmanaged<Closer>.fromOpaque(box).release()
    }
  }

  /// Whether a signal is stopping the process and ``beforeStopping(_:)``'s body runs: the
  /// process ends when it returns. What would publish a result now must not (the line said it
  /// was not written): a commit rolls back, a file is not put in place.
  public static var isStopping: Bool {
    handling.load(ordering: .sequentiallyConsistent)
      && closerWakeReady.load(ordering: .sequentiallyConsistent)
  }

  /// Waits for the end when ``isStopping``; returns at once otherwise. For a thread that would
  /// otherwise print an error of its own after the signal's line, or exit with another status
  /// before the signal ends the process.
  public static func awaitEndIfStopping() {
    while isStopping { pause() }
  }

  private final class Closer: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }

  /// Set once ``beforeStopping(_:)`` was called.
  private static let closerInstalled = Atomic<Bool>(false)
  /// Set once its thread waits on ``closerWake``.
  private static let closerWakeReady = Atomic<Bool>(false)
  /// What the handler posts to wake that thread.
  nonisolated(unsafe) private static let closerWake: UnsafeMutablePointer<sem_t> = {
    let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    semaphore.initialize(to: sem_t())
    return semaphore
  }()

  /// Ends the process with the signal that stopped it (after ``beforeStopping(_:)``'s body).
  private static func endWithPendingSignal() -> Never {
    let number = pending.load(ordering: .sequentiallyConsistent)
    signal(number, SIG_DFL)
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, number)
    pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    raise(number)
    _exit(128 + number)
  }

  /// Registers `path` to be removed if a signal stops the process; returns a token for
  /// ``forget(_:)``, or nil when all slots are taken (the file then stays on a signal).
  public static func remember(_ path: String) -> Int? {
    guard let copy = strdup(path) else { return nil }
    let bits = Int(bitPattern: copy)
    for (index, slot) in slots.enumerated() {
      if slot.address.compareExchange(expected: 0, desired: bits, ordering: .sequentiallyConsistent)
        .exchanged
      {
        return index
      }
    }
    free(copy)
    return nil
  }

  /// Runs `body` (the creation of a file and its ``remember(_:)``, say) with SIGINT, SIGTERM
  /// and SIGHUP held back until it returns, whichever thread they arrive on: a signal that
  /// comes meanwhile is handled right after.
  ///
  /// Rule: a file is created and remembered inside this, never apart. Why: a signal between the
  /// two left the file behind (a `tape new` stopped there left its `.song.tape.tape-XXXXXX`
  /// folder), and blocking signals on one thread does not stop them running on another.
  public static func withoutInterruption<Result, Failure: Error>(
    _ body: () throws(Failure) -> Result
  ) throws(Failure) -> Result {
    // Stopping already (``beforeStopping(_:)``'s body runs): wait for the end.
    awaitEndIfStopping()
    deferring.add(1, ordering: .sequentiallyConsistent)
    defer {
      if deferring.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 {
        let signal = pending.load(ordering: .sequentiallyConsistent)
        if signal != 0 { handle(signal) }
      }
    }
    return try body()
  }

  /// How many ``withoutInterruption(_:)`` bodies are running.
  private static let deferring = Atomic<Int>(0)
  /// A signal that came during one, to handle after it (0: none).
  private static let pending = Atomic<Int32>(0)
  /// Set by the one call of the handler that cleans up and ends the process.
  private static let handling = Atomic<Bool>(false)

  /// Stops removing the path registered under `token` (it was renamed into place, or removed).
  public static func forget(_ token: Int?) {
    guard let token else { return }
    replace(slots[token], with: nil)
  }

  /// Restores standard input's terminal settings as they are now if a signal stops the
  /// process (a player puts the terminal in raw mode); ``forgetTerminal()`` stops doing so.
  /// `reset` is written to standard error when the terminal is restored (for example the
  /// escape sequences that leave a full-screen view).
  public static func rememberTerminal(reset: String? = nil) {
    replace(terminalReset, with: reset.flatMap { strdup($0) })
    var settings = termios()
    guard tcgetattr(STDIN_FILENO, &settings) == 0 else { return }
    let copy = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    copy.initialize(to: settings)
    swapTerminal(copy)
  }

  /// Also restores the remembered terminal settings when the process crashes (SIGSEGV,
  /// SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE), then lets the crash proceed as it would have:
  /// the handler that was there before (Swift's backtracer, say) takes it from there.
  ///
  /// Installed once per process: a second install would take its own handler for the one
  /// before it, and a Ctrl-\ would then loop in it.
  public static func restoreTerminalOnCrash() {
    guard !crashHandlersInstalled.exchange(true, ordering: .sequentiallyConsistent) else { return }
    for (index, signal) in crashSignals.enumerated() {
      var action = sigaction()
      action.__sigaction_handler.sa_handler = { signal in
        Termination.restoreTerminalNow()
        // Put the previous handler back; returning re-runs the faulting instruction, or the
        // raise, into it.
        if let index = Termination.crashSignals.firstIndex(of: signal) {
          sigaction(signal, Termination.previousActions + index, nil)
        }
        // Ctrl-\ is no fault to re-run: it is sent again, to the handler put back.
        if signal == SIGQUIT { raise(SIGQUIT) }
      }
      sigemptyset(&action.sa_mask)
      action.sa_flags = 0
      sigaction(signal, &action, previousActions + index)
    }
  }

  private static let crashHandlersInstalled = Atomic<Bool>(false)
  private static let crashSignals = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGQUIT]
  /// The handlers there before ``restoreTerminalOnCrash()``, one per crash signal.
  nonisolated(unsafe) private static let previousActions: UnsafeMutablePointer<sigaction> = {
    let actions = UnsafeMutablePointer<sigaction>.allocate(capacity: 7)
    actions.initialize(repeating: sigaction(), count: 7)
    return actions
  }()

  public static func forgetTerminal() {
    swapTerminal(nil)
    replace(terminalReset, with: nil)
  }

  /// Restores the remembered terminal: async-signal-safe.
  private static func restoreTerminalNow() {
    if let settings = UnsafePointer<termios>(
      bitPattern: terminal.address.load(ordering: .sequentiallyConsistent))
    {
      tcsetattr(STDIN_FILENO, TCSANOW, settings)
    }
    if let reset = UnsafePointer<CChar>(
      bitPattern: terminalReset.address.load(ordering: .sequentiallyConsistent))
    {
      _ = write(STDERR_FILENO, reset, strlen(reset))
    }
  }

  private static func swapTerminal(_ settings: UnsafeMutablePointer<termios>?) {
    let old = terminal.address.exchange(
      settings.map { Int(bitPattern: $0) } ?? 0, ordering: .sequentiallyConsistent)
    UnsafeMutablePointer<termios>(bitPattern: old)?.deallocate()
  }

  private static func replace(_ slot: Slot, with pointer: UnsafeMutablePointer<CChar>?) {
    let old = slot.address.exchange(
      pointer.map { Int(bitPattern: $0) } ?? 0, ordering: .sequentiallyConsistent)
    if old != 0 { free(UnsafeMutableRawPointer(bitPattern: old)) }
  }

  /// Writes `text` to standard error from its constant bytes: async-signal-safe.
  private static func writeError(_ text: StaticString) {
    _ = write(STDERR_FILENO, text.utf8Start, text.utf8CodeUnitCount)
  }

  /// The signal handler: async-signal-safe calls only.
  private static func handle(_ signalNumber: Int32) {
    guard !handling.load(ordering: .sequentiallyConsistent) else {
      // A second signal while ``beforeStopping(_:)``'s body runs: end now.
      if closerWakeReady.load(ordering: .sequentiallyConsistent) {
        signal(signalNumber, SIG_DFL)
        raise(signalNumber)
      }
      return
    }
    pending.store(signalNumber, ordering: .sequentiallyConsistent)
    guard deferring.load(ordering: .sequentiallyConsistent) == 0,
      handling.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent)
        .exchanged
    else { return }
    // Files first, then the (private) folders they were in.
    for slot in slots {
      let address = slot.address.load(ordering: .sequentiallyConsistent)
      if let path = UnsafePointer<CChar>(bitPattern: address) { unlink(path) }
    }
    for slot in slots {
      let address = slot.address.load(ordering: .sequentiallyConsistent)
      if let path = UnsafePointer<CChar>(bitPattern: address) { rmdir(path) }
    }
    restoreTerminalNow()
    if let text = UnsafePointer<CChar>(
      bitPattern: message.address.load(ordering: .sequentiallyConsistent))
    {
      // StaticStrings: bytes in the binary, no allocation. (A String argument is converted to
      // a pointer by a copy when it is small, and a malloc in a handler that interrupted one
      // corrupts the heap: a `tape new` stopped by SIGHUP died of a glibc malloc assertion.)
      if isatty(STDERR_FILENO) == 1 { writeError("\r\u{1B}[K") }
      writeError("error: ")
      _ = write(STDERR_FILENO, text, strlen(text))
      writeError("\n")
    }
    signal(signalNumber, SIG_DFL)
    if closerWakeReady.load(ordering: .sequentiallyConsistent) {
      sem_post(closerWake)
      return
    }
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, signalNumber)
    pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    raise(signalNumber)
  }
}
