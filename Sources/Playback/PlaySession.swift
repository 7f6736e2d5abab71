import Foundation
import Mixing
public import SafeFiles
import TerminalViews
public import Timeline
public import TimelineStore

/// One `tape play` in progress: the status line and keys on a terminal, the store's updates
/// handed to the player, the file played watched, and the player's report at the end.
///
/// It writes its lines (`tape play: …`) and the status line to stderr itself; the summary is
/// the caller's to print from the ``LivePlayer/Report`` that ``run()`` returns.
///
/// ```swift
/// let opened = PlaySession.OpenedFile(path: "song.tape")
/// let session = PlaySession(
///   player: player, store: store, device: "default", sampleRate: 48_000,
///   showsFrames: false, json: false)
/// session.watch(opened)
/// session.follow(store, from: version)
/// let report = session.run()
/// session.removeOrphans()
/// ```
///
/// Rule: everything here runs on the thread that calls ``run()`` (or on the follower task,
/// which only offers snapshots); nothing runs on the audio thread.
/// Why: the player's realtime contract (see ``LivePlayer``) is the player's alone; a session
/// only calls its thread-safe controls (`setPaused`, `seek`, `offer`, `stop`).
public final class PlaySession: @unchecked Sendable {
  /// The player played.
  public let player: LivePlayer
  /// The store the project was read from (its versions' labels, and its updates when followed).
  public let store: TimelineStore
  /// The device's name, as the user gave it.
  public let device: String
  /// The project's rate: what positions are counted in.
  public let sampleRate: Int
  /// Whether times on the status line are frames (`96000f`) rather than `m:ss.mmm`.
  public let showsFrames: Bool
  /// Whether the summary is JSON (then the device's line is not said).
  public let json: Bool
  /// Keys and a status line: on a terminal, and in its foreground. In the background
  /// (`tape play song.tape &`) it plays as a script would: a change of the terminal's mode
  /// from there stops the process ("Stopped (tty output)"), and its keys are the shell's.
  private var terminal = PlaySession.inForeground

  /// Whether standard input and error are a terminal and this process is in its foreground.
  public static var inForeground: Bool {
    isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1
      && tcgetpgrp(STDIN_FILENO) == getpgrp()
  }
  private var labels: [Int64: String] = [:]
  private var follower: Task<Void, Never>?
  /// Whether space last asked for a pause.
  private var pauseRequested = false
  private var keyInput = KeyInput()
  /// Lines for the user from the decoded audio's library (a source file that went away).
  private let notices: @Sendable () -> [String]
  /// Where the play is, told every 50 ms while it plays (for `tape view`'s playhead).
  private let playhead: (_ frame: Int64, _ paused: Bool) -> Void

  /// The device claimed for the play (``DeviceClaim``), kept as long as the session.
  var claim: DeviceClaim?

  /// The range `l` would loop, as it is now (to the project's end as edits move it, without
  /// `--to`); nil, not checked.
  public var loopRange: (() -> FrameRange)?

  /// A session of `player`, started already, playing a project of `store`.
  ///
  /// - Parameters:
  ///   - player: the player, started.
  ///   - store: the store its project was read from.
  ///   - device: the device's name, as the user gave it.
  ///   - sampleRate: the project's rate.
  ///   - showsFrames: times on the status line as frames (`96000f`).
  ///   - json: the summary is JSON (the device's line is not said).
  ///   - notices: lines from the decoded audio's library, said as they come.
  ///   - playhead: told the position (the project's frames) and whether it is paused, every
  ///     50 ms while it plays.
  public init(
    player: LivePlayer, store: TimelineStore, device: String, sampleRate: Int,
    showsFrames: Bool, json: Bool, notices: @escaping @Sendable () -> [String] = { [] },
    playhead: @escaping (_ frame: Int64, _ paused: Bool) -> Void = { _, _ in }
  ) {
    self.notices = notices
    self.playhead = playhead
    self.player = player
    self.store = store
    self.device = device
    self.sampleRate = sampleRate
    self.showsFrames = showsFrames
    self.json = json
  }

  /// The project file played, and its log and shared memory, as they were when it was
  /// opened (see ``watch(_:)``).
  public struct OpenedFile: Sendable, Hashable {
    /// The path played.
    public let path: String
    /// The file it named.
    public let project: FileIdentity
    /// Its `-wal`, if any.
    public let log: FileIdentity?
    /// Its `-shm`, if any.
    public let shared: FileIdentity?

    /// What `path` and its `-wal` and `-shm` name now (nil when the path names nothing).
    public init?(path: String) {
      guard let project = FileIdentity(path: path) else { return nil }
      self.path = path
      self.project = project
      log = FileIdentity(path: path + "-wal")
      shared = FileIdentity(path: path + "-shm")
    }
  }

  /// The project file played, as opened.
  private var file: OpenedFile?
  /// Said once: the path no longer names the file played, or its log went.
  private var lost = false
  private var lastLook = ContinuousClock.now

  /// Remembers the file played as it was opened (``OpenedFile``), so that a project replaced
  /// (`mv b.tape a.tape`), deleted, or whose log was removed, is noticed while it plays.
  public func watch(_ opened: OpenedFile?) {
    file = opened
  }

  /// Says once that the file played is gone or replaced, or its log removed: what was
  /// loaded plays on, and no later change can be heard.
  private func lookAtFile() {
    guard !lost, let file, ContinuousClock.now - lastLook > .milliseconds(200) else { return }
    lastLook = .now
    let now = FileIdentity(path: file.path)
    let log = FileIdentity(path: file.path + "-wal")
    let what: String
    if now == nil || !(now?.isSameFile(as: file.project) ?? false) {
      switch store.whereabouts {
      case .inPlace: return
      case .deleted: what = now == nil ? "was deleted" : "was replaced by another file"
      case .renamed(let name): what = "was renamed to \(name)"
      case .moved: what = now == nil ? "was moved away" : "was replaced by another file"
      }
    } else if let before = file.log, follower != nil,
      !(log.map { $0.isSameFile(as: before) } ?? false)
    {
      what = "lost its log (\(file.path)-wal)"
    } else {
      return
    }
    lost = true
    follower?.cancel()
    note(
      "\(file.path) \(what) while it played; playing what was loaded, and no later edit will be heard"
    )
  }

  /// After a play whose file was deleted: its `-wal` and `-shm`, when they are still the ones
  /// it had open (no new project took the name since), go too, instead of being left behind.
  public func removeOrphans() {
    guard let file else { return }
    Self.removeOrphans(of: file.path, log: file.log, shared: file.shared)
  }

  /// Removes `path`'s `-wal` and `-shm` when `path` names nothing any more and they are still
  /// `log` and `shared`, the ones opened with it (SQLite leaves them when its file was deleted
  /// under it).
  public static func removeOrphans(of path: String, log: FileIdentity?, shared: FileIdentity?) {
    guard FileIdentity(path: path) == nil else { return }
    for (suffix, before) in [("-wal", log), ("-shm", shared)] {
      guard let before, let now = FileIdentity(path: path + suffix), now.isSameFile(as: before)
      else { continue }
      unlink(path + suffix)
    }
  }

  /// A line for the user on stderr (above the status line on a terminal): `tape play: line`,
  /// escaped.
  public func note(_ line: String) {
    let clear = terminal ? clearing() : ""
    drawnColumns = 0
    writeWhole("\(clear)tape play: \(ProjectWords.escaped(line))\n")
  }

  /// The columns the status line took when it was drawn (0: none is on the screen).
  private var drawnColumns = 0

  /// What clears the status line last drawn: its row, and the rows above that it takes now
  /// that the terminal is narrower than when it was drawn (a terminal that reflows wraps it:
  /// every shrink left a stale copy of it above the new one).
  private func clearing() -> String {
    let columns = Self.columns() ?? drawnColumns
    guard columns > 0, drawnColumns > columns else { return "\r\u{1B}[K" }
    let rows = (drawnColumns + columns - 1) / columns
    return "\r\u{1B}[\(rows - 1)A\u{1B}[J"
  }

  /// The terminal's width in columns, when stderr is one.
  private static func columns() -> Int? {
    var size = winsize()
    guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
    return Int(size.ws_col)
  }

  /// Offers every later snapshot of `store` to the player, with its cause.
  public func follow(_ store: TimelineStore, from version: Int64) {
    let player = player
    follower = Task.detached {
      for await update in store.updates() where !update.moves.isEmpty {
        player.offer(update.project, version: update.version, cause: update.cause?.rawValue)
      }
    }
  }

  /// Runs until the play ends, `q`, or a signal (`Interrupt`); returns the player's report.
  ///
  /// Says the device's line (unless ``json``) and a missing realtime priority first; on a
  /// terminal in the foreground, takes its keys (space, ←/→, l, q) and draws the status line
  /// every 100 ms; closes the device on Ctrl-Z (``Suspend``) and opens it again on `fg`.
  public func run() -> LivePlayer.Report {
    let granted = player.granted
    let deviceRate = player.deviceRate
    if !json {
      let latency = Double(granted.bufferFrames) / Double(deviceRate) * 1_000
      let converted = player.conversion.map { ", converted by Tape from \($0.inputRate) Hz" } ?? ""
      note(
        "\(device): \(deviceRate) Hz\(converted), period \(granted.period) frames, buffer \(granted.bufferFrames) frames (\(String(format: "%.1f", latency)) ms)\(granted.viaPlug ? ", converted by ALSA's plug layer" : "")"
      )
    }
    if !player.realtimePriority {
      note(
        "no realtime priority (SCHED_FIFO needs root or an rtprio limit in /etc/security/limits.conf); playing at normal priority\(granted.bufferFrames > granted.period * 4 ? String(format: " with a longer buffer (%.0f ms)", Double(granted.bufferFrames) / Double(deviceRate) * 1_000) : "")"
      )
    }
    var saved = termios()
    var raw = false
    let onTerminal = isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1
    // Keys and the status line while in the terminal's foreground: from the start, or from
    // the `fg` of a play started in the background (`tape play song.tape &`), or sent there
    // (Ctrl-Z, `bg`). From the background a change of the terminal's mode would stop it.
    func takeTerminal() {
      guard onTerminal, !raw, PlaySession.inForeground, tcgetattr(STDIN_FILENO, &saved) == 0
      else { return }
      raw = true
      terminal = true
      // Remembered as it is, before raw mode: a crash or Ctrl-\ restores this.
      Termination.rememberTerminal()
      Termination.restoreTerminalOnCrash()
      var settings = Suspend.keysAsTyped(saved)
      tcsetattr(STDIN_FILENO, TCSANOW, &settings)
      Suspend.install()
    }
    func giveTerminalBack() {
      guard raw else { return }
      raw = false
      terminal = false
      writeWhole(clearing())
      drawnColumns = 0
      tcsetattr(STDIN_FILENO, TCSANOW, &saved)
      Termination.forgetTerminal()
    }
    takeTerminal()
    defer { giveTerminalBack() }
    // Ctrl-Z (any SIGTSTP), on a terminal or not, closes the device before the process stops.
    Suspend.install()
    var lastDraw = ContinuousClock.now - .seconds(1)
    var lastPlayhead = ContinuousClock.now - .seconds(1)
    while player.isPlaying {
      if ContinuousClock.now - lastPlayhead >= .milliseconds(50) {
        lastPlayhead = .now
        let status = player.status
        playhead(status.position, status.paused)
      }
      if Interrupt.requested() {
        player.stop()
        break
      }
      for message in player.takeMessages() + notices() { note(message) }
      lookAtFile()
      if Suspend.requested() {
        // Ctrl-Z: a fade-out, the device closed (a JACK client leaves the graph instead of
        // stalling it), the terminal as it was while stopped; on SIGCONT (`fg`, `bg`) the
        // device opened again and the play on from where it faded out; keys again after
        // `fg`, none after `bg`.
        _ = player.suspend()
        Suspend.stop(
          leave: { giveTerminalBack() },
          back: {
            player.resume()
            takeTerminal()
          })
      }
      if !raw { takeTerminal() }
      if raw {
        if readKeys() { break }
        if ContinuousClock.now - lastDraw > .milliseconds(100) {
          lastDraw = .now
          draw()
        }
      } else {
        usleep(20_000)
      }
    }
    for message in player.takeMessages() + notices() { note(message) }
    follower?.cancel()
    return player.wait()
  }

  /// Handles the keys typed since the last look; true for `q`.
  private func readKeys() -> Bool {
    guard let typed = typedBytes(waiting: 30) else { return false }
    // An arrow split between two reads (many keys at once) is kept whole for the next.
    let bytes = keyInput.take(typed)
    let count = bytes.count
    var index = 0
    let step = Int64(5 * sampleRate)
    while index < count {
      switch bytes[index] {
      case UInt8(ascii: "q"), UInt8(ascii: "Q"):
        PlayStop.request()
        player.stop()
        return true
      case UInt8(ascii: " "):
        // The state asked for, not the status: that says paused only once the fade-out has
        // ended, so a second space during it would pause again instead of resuming.
        pauseRequested.toggle()
        player.setPaused(pauseRequested)
      case UInt8(ascii: "l"), UInt8(ascii: "L"):
        // A loop too short for its wrap's fades is refused in one line, as --loop is.
        if !player.status.loop, let range = loopRange?(),
          let shortfall = LivePlayer.loopShortfall(range.count, sampleRate: sampleRate)
        {
          note("l: a loop over \(shortfall); play a longer range to loop it")
        } else {
          player.setLoop(!player.status.loop)
        }
      case 0x1B where index + 2 < count && bytes[index + 1] == UInt8(ascii: "["):
        let position = player.destination
        if bytes[index + 2] == UInt8(ascii: "C") { player.seek(to: position + step) }
        if bytes[index + 2] == UInt8(ascii: "D") { player.seek(to: max(0, position - step)) }
        index += 2
      default:
        break
      }
      index += 1
    }
    return false
  }

  /// `frames` as the status line shows a time: `96000f` with ``showsFrames``, else `m:ss.mmm`.
  private func show(_ frames: Int64) -> String {
    TimeValue.shown(FrameCount(frames), sampleRate: sampleRate, inFrames: showsFrames)
  }

  /// The status line: position, version and its label, xruns, the mix's peak share of a period
  /// and the device thread's CPU share over the last second, and samples past full scale.
  private func draw() {
    let status = player.status
    let version = status.version ?? 0
    let label = self.label(of: version)
    let state = status.paused ? "paused" : "playing"
    let line =
      "\(state) \(show(status.position))  v\(version) \(label)  xruns \(player.underruns)  mix \(percent(player.mixLoad))  thread \(percent(player.threadLoad))\(player.overs > 0 ? "  overs \(player.overs)" : "")\(status.loop ? "  [loop]" : "")  (space pause, ←/→ seek, l loop, q quit)"
    let shown = fitted(line)
    let clear = clearing()
    drawnColumns = TerminalText.width(shown)
    writeWhole(clear + shown)
  }

  /// The status line cut to the terminal's width, by columns (a wide character takes two): a
  /// line that wraps would leave a copy of itself on every redraw.
  private func fitted(_ line: String) -> String {
    guard let columns = Self.columns() else { return line }
    // Leave the last column free (a 1-column terminal gets one).
    return TerminalText.prefix(line[...], columns: max(1, columns - 1))
  }

  private func percent(_ share: Double) -> String {
    "\(Int((share * 100).rounded()))%"
  }

  private func label(of version: Int64) -> String {
    if let known = labels[version] { return known }
    // Escaped: a label holds what a file name or a script gave it, escapes included.
    let label =
      (try? store.entry(version)).flatMap { $0 }.map { "\"\(ProjectWords.escaped($0.label))\"" }
      ?? ""
    labels[version] = label
    return label
  }
}

extension LivePlayer {
  /// Why a loop of `length` frames is too short for its wrap's fades (`400 frames (8.3 ms) is
  /// shorter than the 513 frames (10.7 ms) its wrap needs to fade out and in without a
  /// click`), nil when it is long enough: `--loop`, play's `l` key and scrub say it alike.
  ///
  /// Why: the player wraps a loop with a fade-out over its last
  /// `LiveMixer.transitionFrames(sampleRate:)` and a fade-in over its first; a shorter loop
  /// would wrap without them, with a click at every wrap.
  public static func loopShortfall(_ length: FrameCount, sampleRate: Int) -> String? {
    let shortest = 2 * LiveMixer.transitionFrames(sampleRate: sampleRate) + 1
    guard length.frames < shortest else { return nil }
    let milliseconds = { (frames: Int64) in
      String(format: "%.1f ms", Double(frames) / Double(sampleRate) * 1_000)
    }
    return
      "\(length.frames) frames (\(milliseconds(length.frames))) is shorter than the \(shortest) frames (\(milliseconds(shortest))) its wrap needs to fade out and in without a click"
  }
}
