public import AudioFiles
import Foundation
import SafeFiles
import Synchronization
import Timeline

/// What `tape play` shows while its first sound waits for sources to be decoded (a cache that
/// does not have them yet): nothing for half a second, then what it does, on one line of
/// stderr that a terminal sees updated (each source checked or decoded, how far) and a script
/// sees once; with `json`, nothing.
///
/// ```swift
/// let starting = StartingLine(json: false)
/// cache.progress = { starting.update($0) }
/// starting.begin()
/// defer { starting.end() }
/// try player.start(project, version: version)
/// ```
public final class StartingLine: @unchecked Sendable {
  private struct State {
    var sources: [(id: Source.ID, name: String, phase: DecodeProgress.Phase)] = []
    var started: ContinuousClock.Instant?
    var said = false
    var drawn = false
  }
  private let state = Mutex(State())
  private let json: Bool
  private var timer: (any DispatchSourceTimer)?
  /// How long a start may take before it says what it does.
  public static let patience: Duration = .milliseconds(500)

  /// A line for a play whose summary is `json` (then it says nothing).
  public init(json: Bool) {
    self.json = json
  }

  /// A decode reports (any thread).
  public func update(_ progress: DecodeProgress) {
    // Escaped: a file's name may hold any byte.
    let name = ProjectWords.escaped(progress.source.path.lastComponent.description)
    state.withLock { state in
      if let index = state.sources.firstIndex(where: { $0.id == progress.source.id }) {
        state.sources[index].phase = progress.phase
      } else {
        state.sources.append((progress.source.id, name, progress.phase))
      }
    }
  }

  /// The start begins: looks every 200 ms from now on.
  public func begin() {
    state.withLock { $0.started = .now }
    let timer = DispatchSource.makeTimerSource(queue: .global())
    timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(200))
    timer.setEventHandler { [weak self] in self?.look() }
    timer.resume()
    self.timer = timer
  }

  /// The start is over (played, failed or stopped): the line goes from a terminal.
  public func end() {
    timer?.cancel()
    timer = nil
    let drawn = state.withLock { state in
      state.started = nil
      return state.drawn
    }
    if drawn { writeWhole("\r\u{1B}[K") }
  }

  private func look() {
    let onTerminal = PlaySession.inForeground
    let line: String? = state.withLock { state in
      guard let started = state.started, ContinuousClock.now - started >= Self.patience,
        !state.sources.isEmpty
      else { return nil }
      let parts = state.sources.map { source in
        switch source.phase {
        case .checking: "\(source.id) \(source.name) checked against what was imported"
        case .decoding(let frames, let total):
          "\(source.id) \(source.name) \(total > 0 ? frames * 100 / total : 100)%"
        }
      }
      if onTerminal {
        state.drawn = true
        return
          "\r\u{1B}[Ktape play: decoding before the first sound: \(parts.joined(separator: ", ")) (Ctrl-C stops)"
      }
      guard !state.said else { return nil }
      state.said = true
      let names = state.sources.map { "\($0.id) \($0.name)" }.joined(separator: ", ")
      return
        "tape play: decoding \(names) before the first sound (not in the decoded-audio cache yet)\n"
    }
    guard let line, !json else { return }
    writeWhole(line)
  }
}

/// The terminal's keys while `play` decodes its first version, before its status line: `q`
/// stops the decode (``PlayStop``). Only in the terminal's foreground, as the keys of the play.
///
/// ```swift
/// let early = EarlyKeys()
/// do { try player.start(project, version: version) } catch { early.end(); … }
/// early.end()
/// ```
public final class EarlyKeys {
  private var saved = termios()
  private var raw = false
  /// Whether `q` was typed.
  public private(set) var quit = false

  /// Takes the terminal's keys (when this process is in its foreground) until ``end()``.
  public init() {
    guard PlaySession.inForeground, tcgetattr(STDIN_FILENO, &saved) == 0 else { return }
    raw = true
    Termination.rememberTerminal()
    Termination.restoreTerminalOnCrash()
    var settings = Suspend.keysAsTyped(saved)
    tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    PlayStop.onMainThread = { [unowned self] in
      var request = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
      if poll(&request, 1, 0) > 0 {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(STDIN_FILENO, &bytes, bytes.count)
        if bytes[..<max(0, count)].contains(where: {
          $0 == UInt8(ascii: "q") || $0 == UInt8(ascii: "Q")
        }) {
          self.quit = true
        }
      }
      return self.quit
    }
  }

  /// The terminal as it was; keys are the play's again.
  public func end() {
    PlayStop.onMainThread = { false }
    guard raw else { return }
    raw = false
    tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    Termination.forgetTerminal()
  }
}

/// A quit asked for while audio may be decoding (`q`, Ctrl-C, SIGTERM, SIGHUP): the decode
/// stops within milliseconds instead of finishing a source of hours first, and keeps nothing.
///
/// Rule: a cache that a play or a scrub decodes with is ``stoppable(_:)``.
/// Why: a first play of a long source decodes for seconds before any sound, and `q` or Ctrl-C
/// must end it then, not after.
public enum PlayStop {
  private static let flag = Atomic<Bool>(false)
  /// What the main thread may also look at while it decodes (scrub's keys typed meanwhile).
  nonisolated(unsafe) public static var onMainThread: () -> Bool = { false }

  /// Asks every stoppable decode to stop (any thread).
  public static func request() { flag.store(true, ordering: .relaxed) }

  /// Whether a stop was asked for: ``request()``, a signal (`Interrupt`), or, looked at on the
  /// main thread, ``onMainThread``.
  public static var requested: Bool {
    if flag.load(ordering: .relaxed) || Interrupt.requested() { return true }
    // The keys are read on the main thread (which waits for the first chunks of a decode
    // running on another): the decode itself learns of a `q` from the flag.
    guard Thread.isMainThread, onMainThread() else { return false }
    request()
    return true
  }

  /// `cache`, its hashing and decoding stopped by a quit.
  public static func stoppable(_ cache: AudioCache) -> AudioCache {
    var cache = cache
    cache.isCancelled = { PlayStop.requested }
    return cache
  }
}
