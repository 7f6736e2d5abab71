import ArgumentParser
import AudioFiles
import Foundation
import Interchange
import Mixing
import Playback
import SafeFiles
import Synchronization
import TerminalViews
import Timeline
import TimelineStore
import Viewer

/// What part of which version `render` and `play` work on.
struct SpanOptions: ParsableArguments {
  @Option(parsing: .unconditional, help: "Start on the timeline (default 0).") var from: String?
  @Option(parsing: .unconditional, help: "End on the timeline (default: the end of the last clip).")
  var to: String?
  @Option(
    help: ArgumentHelp(
      "Use this version (a number or a tag's name) instead of the current one (the head does not move).",
      valueName: "version"))
  var version: String?

  /// The version `--version` names in `store`, a number or a tag's name (the store's one
  /// resolver, ``TimelineStore/resolveVersion(_:mustExist:)``); nil without it.
  func version(in store: TimelineStore) throws -> Int64? {
    try version.map { try store.resolveVersion($0) }
  }

  /// The chosen version of the project in `store`, the range to cover, and the version compiled
  /// into a render plan over its decoded audio. The range is checked before any audio is loaded.
  ///
  /// With `stem`, only those tracks are compiled (``Project/stem(of:masterGain:)``), over the
  /// range of the whole project, so that every stem lines up with the mix.
  ///
  /// A project with effects gets an ``EffectRack`` of its own (processors run from the start of
  /// the range); its plugins are checked before any audio is read: a missing one is an error
  /// naming it, unless `bypassMissing`, when the effects it plays are skipped (and listed in
  /// the rack's ``EffectRack/skipped``).
  func compile(
    _ store: TimelineStore, cache: AudioCache,
    stem: (tracks: [Track.ID], masterGain: Bool)? = nil, bypassMissing: Bool = false
  ) throws -> (
    project: Project, plan: RenderPlan, audio: ProjectAudio, range: FrameRange, rack: EffectRack?
  ) {
    let whole =
      if let version = try version(in: store) {
        try store.project(at: version)
      } else {
        store.snapshot.project
      }
    let range = try range(of: whole)
    let project = try stem.map { try whole.stem(of: $0.tracks, masterGain: $0.masterGain) } ?? whole
    let (plan, audio, rack) = try Self.offlinePlan(
      project, cache: cache, bypassMissing: bypassMissing, file: store.path)
    return (project, plan, audio, range, rack)
  }

  /// The plan an offline render of `project` runs: its audio from `cache`, its effects from a
  /// rack of their own (a missing plugin refused unless `bypassMissing`, checked before any
  /// audio is read). What `render` and `compare` both render.
  static func offlinePlan(
    _ project: Project, cache: AudioCache, bypassMissing: Bool, file: String? = nil
  ) throws -> (plan: RenderPlan, audio: ProjectAudio, rack: EffectRack?) {
    var rack: EffectRack?
    if !project.allEffects.isEmpty || project.hasRouting {
      try EffectChecks.run(project, file: file, bypassMissing: bypassMissing)
      rack = EffectRack(
        sampleRate: project.sampleRate, channels: project.channels,
        maximumFrames: EffectRack.offlineFrames, bypassMissing: bypassMissing,
        projectFolder: file.map(projectFolder))
    }
    let audio = try cache.sources(for: project)
    return (try RenderPlan(project: project, audio: audio.audio, effects: rack), audio, rack)
  }

  /// Refuses a bare number for --from/--to next to `--frames`: it is seconds, and a script
  /// that reads frames from `--frames` output and passes them back as bare numbers would get
  /// a time 48,000 times too far.
  func checkUnits(_ times: TimeDisplayOption) throws {
    guard times.frames else { return }
    for (name, value) in [("--from", from), ("--to", to)] {
      guard let value, !value.isEmpty, value.allSatisfy({ $0.isNumber || $0 == "." }) else {
        continue
      }
      throw UsageError(
        message:
          value.contains(".")
          ? "\(name) \(value) is seconds even with --frames; write \(value)s to say so"
          : "\(name) \(value) is seconds even with --frames; write \(value)f for frames or \(value)s for seconds"
      )
    }
  }

  /// `--from`/`--to` as a frame range; by default the whole project.
  func range(of project: Project) throws -> FrameRange {
    let start = try from.map { try parsePosition($0, project, option: "--from") } ?? .zero
    let end = try to.map { try parsePosition($0, project, option: "--to") } ?? project.timelineEnd
    if to == nil && end == .zero {
      throw DataError(
        message:
          "nothing to play or render: the project has no clips; add one with 'tape clip add', or give --to for silence"
      )
    }
    guard start < end else {
      let shown = { (position: FramePosition) in
        TimeValue.clock(FrameCount(position.frames), sampleRate: project.sampleRate)
      }
      throw UsageError(
        message: to == nil
          ? "--from \(shown(start)) is past the end of the project (\(shown(end))); give a --from before \(shown(end)), or --to for silence after the end"
          : "the range would be empty: --from \(shown(start)) is not before --to \(shown(end)); give --to after --from"
      )
    }
    return FrameRange(start: start, count: FrameCount(end.frames - start.frames))
  }
}

struct Play: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "play",
    abstract: "Play the project through ALSA, hearing every edit as it is made.",
    discussion: """
      Plays what 'tape render' would write, from --from to --to (by default the whole \
      project, to its end as edits move it, then on while its effects ring out, as a \
      render's tail: until under -90 dBFS for 1 s, at most 30 s). While it plays, every change to the project, \
      from this shell or another (an edit, undo, redo, checkout), is heard within a few \
      milliseconds: gain, pan, mute and solo changes ramp over 20 ms, other changes crossfade \
      over 5.3 ms (256 frames at 48 kHz), without a click. --version V plays that version and follows nothing; \
      so does --no-follow. A project read without its log (read-only, nobody editing) is \
      opened immutably and cannot be followed: playback says so.
      On a terminal: one status line (position, version, xruns; "mix": the most a \
      period's mix took over the last second, as a share of the period; "thread": the \
      device thread's CPU share of that second, conversions included, waits not; "overs": \
      samples past full scale) and keys: space \
      pause/resume, ←/→ seek 5 s, l loop on/off, q quit (fading out over 5.3 ms, as Ctrl-C \
      does). Ctrl-Z fades out and closes the device while the process is stopped (a JACK \
      client leaves the graph); fg or bg opens it again and plays on from there.
      A device that does not take the project's rate runs at its own, and Tape converts \
      exactly (a 1 kHz tone stays 1 kHz, an hour lasts an hour; see \
      docs/reference/playback.md). The device \
      gets exactly --period frames per period, at its rate, when it is given (the JACK \
      plugin takes only multiples of JACK's own period), else 256 or the nearest the device \
      takes, and --periods periods of buffer; without realtime \
      priority (SCHED_FIFO) the default buffer holds at least 80 ms, so that a busy machine \
      does not drop periods. Format and channel conversion go through ALSA's plug layer \
      only when the device needs it. Xruns count the dropouts the device played, those ALSA \
      does not report included (a buffer found run dry, a stop the player could not see).
      Example: tape play song.tape --loop
      Example: tape play song.tape --device jackrec --period 256 --json
      """)

  @OptionGroup var project: ProjectArgument
  @Option(help: "The ALSA device ('aplay -L' lists them).") var device = "default"
  @OptionGroup var span: SpanOptions
  @Flag(help: "Start again at --from when the end is reached.") var loop = false
  @Flag(help: "Play the version the head is at now, and follow no later change.")
  var noFollow = false
  @Option(
    parsing: .unconditional,
    help:
      "Frames per period at the device's rate, exactly (default: 256, or the nearest the device takes)."
  )
  var period: Int?
  @Flag(
    help:
      "Play effects whose LV2 plugin is not installed as if bypassed (and say which), instead of refusing."
  )
  var bypassMissing = false
  @Option(
    parsing: .unconditional,
    help: """
      Periods in the device's buffer (default 4; at normal priority, enough for 80 ms).
      """)
  var periods: Int?
  @OptionGroup var times: TimeDisplayOption
  @OptionGroup var json: JSONOption

  func run() throws {
    Interrupt.install()
    try reportingErrors {
      try span.checkUnits(times)
      let request = DeviceRequest(name: device, period: period, periods: periods)
      try request.validate()
      let follow = span.version == nil && !noFollow
      let store = try openStore(project.file, access: follow ? .follow : .read)
      // What the path, its log and shared memory name now, as opened: the first version's
      // decode may take seconds, and a log removed meanwhile is a log lost all the same.
      let opened = PlaySession.opened(self.project.file)
      let chosen = try span.version(in: store)
      let version = chosen ?? store.snapshot.version
      let project = chosen != nil ? try store.project(at: version) : store.snapshot.project
      let range = try span.range(of: project)
      if loop { try Self.checkLoop(range, sampleRate: project.sampleRate) }
      let starting = StartingLine(json: json.json)
      var cache = PlayStop.stoppable(AudioCache(forProject: self.project.file, lockingMemory: true))
      cache.progress = { starting.update($0) }
      let library = AudioLibrary(cache: cache)
      try EffectChecks.beforePlay(project, bypassMissing: bypassMissing, file: self.project.file)
      let effects = PlayerEffects(
        bypassMissing: bypassMissing, projectFolder: projectFolder(self.project.file))
      let player = try LivePlayer(
        LivePlayer.Configuration(
          device: request, sampleRate: project.sampleRate, channels: project.channels,
          range: range.start.frames..<(span.to == nil ? Int64.max : range.end.frames),
          loop: loop, ringsOut: true),
        compile: { project, version, sequence in
          try effects.compile(
            project, version: version, sequence: sequence, audio: library.audio(for: project))
        },
        load: { audio, chunk in try library.makeResident(audio, chunk) })
      effects.prepare(for: player, project: project)
      // Keys while the first version decodes (a long source: seconds): `q` stops it.
      let early = EarlyKeys()
      starting.begin()
      do {
        try player.start(project, version: version)
        starting.end()
        early.end()
      } catch {
        starting.end()
        early.end()
        // A decode stopped by Ctrl-C or SIGTERM: the process ends with that signal, as after a
        // play, having said so; by `q`: it ends as a play does.
        if Interrupt.requested() {
          writeOut(
            "tape play: stopped before the first sound, while decoding; nothing was played\n")
        }
        Interrupt.reraiseIfRequested()
        if case AudioFileError.decodeStopped = error, early.quit {
          writeOut("tape play: \(error)\n")
          return
        }
        throw error
      }
      for note in effects.notes() { writeOut(ProjectWords.escaped("note: \(note)") + "\n") }
      // Another play of this user's on the device (which mixes both) is said.
      let claim = DeviceClaim(device: device, playing: self.project.file)
      defer { withExtendedLifetime(claim) {} }
      let session = PlaySession(
        player: player, store: store, device: device, sampleRate: project.sampleRate,
        times: times, json: json.json, notices: { library.takeNotices() })
      session.watch(opened)
      let followsEnd = span.to == nil
      session.loopRange = { [store] in
        guard followsEnd else { return range }
        let end = max(range.start, store.snapshot.project.timelineEnd)
        return FrameRange(start: range.start, end: end)
      }
      if let other = claim.otherPlayer {
        session.note("\(device) is played by another tape play too (\(other)): both are heard")
      }
      if follow && !store.canFollow {
        session.note(
          "\(self.project.file) is opened read-only without its log, so edits made while it plays will not be heard"
        )
      }
      if follow { session.follow(store, from: version) }
      let report = session.run()
      session.removeOrphans()
      if json.json {
        printJSON(session.reportJSON(report, range: range, following: follow && store.canFollow))
      } else {
        print(session.reportText(report))
      }
      try StandardOutput.flush()
      if let failure = report.failure { throw failure }
      Interrupt.reraiseIfRequested()
    }
  }
}

extension Play {
  /// Refuses a loop too short for its wrap's fades (out over the last 5.3 ms, in over the
  /// first): the player would wrap it without them, with a click at every wrap.
  static func checkLoop(_ range: FrameRange, sampleRate: Int) throws {
    guard let shortfall = loopShortfall(range.count, sampleRate: sampleRate) else { return }
    throw UsageError(
      message:
        "--loop over \(shortfall); loop a longer range, or play it without --loop")
  }

  /// Why a loop of `length` frames is too short for its wrap's fades (`400 frames (8.3 ms) is
  /// shorter than the 513 frames (10.7 ms) its wrap needs to fade out and in without a
  /// click`), nil when it is long enough: `--loop`, play's `l` key and scrub say it alike.
  static func loopShortfall(_ length: FrameCount, sampleRate: Int) -> String? {
    let shortest = 2 * LiveMixer.transitionFrames(sampleRate: sampleRate) + 1
    guard length.frames < shortest else { return nil }
    let milliseconds = { (frames: Int64) in
      String(format: "%.1f ms", Double(frames) / Double(sampleRate) * 1_000)
    }
    return
      "\(length.frames) frames (\(milliseconds(length.frames))) is shorter than the \(shortest) frames (\(milliseconds(shortest))) its wrap needs to fade out and in without a click"
  }
}

/// One `tape play` in progress: the status line and keys on a terminal, the store's updates
/// handed to the player, and the final report.
final class PlaySession: @unchecked Sendable {
  let player: LivePlayer
  let store: TimelineStore
  let device: String
  let sampleRate: Int
  let times: TimeDisplayOption
  let json: Bool
  /// Keys and a status line: on a terminal, and in its foreground. In the background
  /// (`tape play song.tape &`) it plays as a script would: a change of the terminal's mode
  /// from there stops the process ("Stopped (tty output)"), and its keys are the shell's.
  private var terminal = PlaySession.inForeground

  /// Whether standard input and error are a terminal and this process is in its foreground.
  static var inForeground: Bool {
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

  /// The range `l` would loop, as it is now (to the project's end as edits move it, without
  /// `--to`); nil, not checked.
  var loopRange: (() -> FrameRange)?

  init(
    player: LivePlayer, store: TimelineStore, device: String, sampleRate: Int,
    times: TimeDisplayOption, json: Bool, notices: @escaping @Sendable () -> [String] = { [] }
  ) {
    self.notices = notices
    self.player = player
    self.store = store
    self.device = device
    self.sampleRate = sampleRate
    self.times = times
    self.json = json
  }

  /// The project file played, and its log and shared memory, as they were when it was
  /// opened (see ``watch(_:)``).
  private var file:
    (path: String, project: FileIdentity, log: FileIdentity?, shared: FileIdentity?)?
  /// Said once: the path no longer names the file played, or its log went.
  private var lost = false
  private var lastLook = ContinuousClock.now

  /// What `path` and its `-wal` and `-shm` name now (nil when the path names nothing).
  static func opened(
    _ path: String
  ) -> (path: String, project: FileIdentity, log: FileIdentity?, shared: FileIdentity?)? {
    guard let project = FileIdentity(path: path) else { return nil }
    return (path, project, FileIdentity(path: path + "-wal"), FileIdentity(path: path + "-shm"))
  }

  /// Remembers the file played as it was opened (``opened(_:)``), so that a project replaced
  /// (`mv b.tape a.tape`), deleted, or whose log was removed, is noticed while it plays.
  func watch(
    _ opened: (path: String, project: FileIdentity, log: FileIdentity?, shared: FileIdentity?)?
  ) {
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
  func removeOrphans() {
    guard let file else { return }
    Self.removeOrphans(of: file.path, log: file.log, shared: file.shared)
  }

  /// Removes `path`'s `-wal` and `-shm` when `path` names nothing any more and they are still
  /// `log` and `shared`, the ones opened with it (SQLite leaves them when its file was deleted
  /// under it).
  static func removeOrphans(of path: String, log: FileIdentity?, shared: FileIdentity?) {
    guard FileIdentity(path: path) == nil else { return }
    for (suffix, before) in [("-wal", log), ("-shm", shared)] {
      guard let before, let now = FileIdentity(path: path + suffix), now.isSameFile(as: before)
      else { continue }
      unlink(path + suffix)
    }
  }

  /// A line for the user on stderr (above the status line on a terminal).
  func note(_ line: String) {
    let clear = terminal ? clearing() : ""
    drawnColumns = 0
    writeOut("\(clear)tape play: \(ProjectWords.escaped(line))\n")
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
  func follow(_ store: TimelineStore, from version: Int64) {
    let player = player
    follower = Task.detached {
      for await update in store.updates() where !update.moves.isEmpty {
        player.offer(update.project, version: update.version, cause: update.cause?.rawValue)
      }
    }
  }

  /// Runs until the play ends, `q`, or a signal; returns the player's report.
  func run() -> LivePlayer.Report {
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
      writeOut(clearing())
      drawnColumns = 0
      tcsetattr(STDIN_FILENO, TCSANOW, &saved)
      Termination.forgetTerminal()
    }
    takeTerminal()
    defer { giveTerminalBack() }
    // Ctrl-Z (any SIGTSTP), on a terminal or not, closes the device before the process stops.
    Suspend.install()
    var lastDraw = ContinuousClock.now - .seconds(1)
    // Where the play is, for `tape view` (the project's cache folder; never the project).
    let playhead = PlayheadFile(projectPath: store.path)
    defer { playhead.remove() }
    var lastPlayhead = ContinuousClock.now - .seconds(1)
    while player.isPlaying {
      if ContinuousClock.now - lastPlayhead >= .milliseconds(50) {
        lastPlayhead = .now
        let status = player.status
        playhead.write(frame: status.position, paused: status.paused)
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
          let shortfall = Play.loopShortfall(range.count, sampleRate: sampleRate)
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

  /// The status line: position, version and its label, xruns, the mix's peak share of a period
  /// and the device thread's CPU share over the last second, and samples past full scale.
  private func draw() {
    let status = player.status
    let version = status.version ?? 0
    let label = self.label(of: version)
    let state = status.paused ? "paused" : "playing"
    let line =
      "\(state) \(times.show(status.position, sampleRate: sampleRate))  v\(version) \(label)  xruns \(player.underruns)  mix \(percent(player.mixLoad))  thread \(percent(player.threadLoad))\(player.overs > 0 ? "  overs \(player.overs)" : "")\(status.loop ? "  [loop]" : "")  (space pause, ←/→ seek, l loop, q quit)"
    let shown = fitted(line)
    let clear = clearing()
    drawnColumns = TerminalText.width(shown)
    writeOut(clear + shown)
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

  func reportText(_ report: LivePlayer.Report) -> String {
    let played = times.show(report.frames, sampleRate: sampleRate)
    var parts = ["played \(played) on \(device)"]
    if report.xruns > 0 { parts.append("\(report.xruns) underruns") }
    if report.swaps.count > 1 { parts.append("\(report.swaps.count - 1) changes heard") }
    return parts.joined(separator: ", ")
  }

  /// The `tape play --json` summary: documented in docs/reference/json.md; keep stable.
  func reportJSON(_ report: LivePlayer.Report, range: FrameRange, following: Bool) -> JSON {
    .object([
      ("device", .string(device)), ("frames", .integer(report.frames)),
      ("underruns", .integer(Int64(report.xruns))), ("xruns", .integer(Int64(report.xruns))),
      ("period", .integer(Int64(report.period))),
      ("bufferFrames", .integer(Int64(report.bufferFrames))),
      ("deviceRate", .integer(Int64(report.deviceRate))),
      (
        "rateConversion",
        report.conversion.map { conversion in
          .object([
            ("by", .string("tape")), ("from", .integer(Int64(conversion.inputRate))),
            ("to", .integer(Int64(conversion.outputRate))),
            ("taps", .integer(Int64(conversion.taps))),
            ("passbandHz", .number(conversion.passband)),
            ("stopbandHz", .number(conversion.stopband)),
            ("attenuationDB", .number(conversion.attenuation)),
          ])
        } ?? .null
      ),
      ("deviceFrames", .integer(report.deviceFrames)),
      ("recoveredXruns", .integer(Int64(report.recoveredXruns))),
      ("unreportedXruns", .integer(Int64(report.unreportedXruns))),
      ("suspensions", .integer(Int64(report.suspensions))),
      ("viaPlug", .bool(report.viaPlug)), ("realtimePriority", .bool(report.realtimePriority)),
      ("following", .bool(following)), ("from", .integer(range.start.frames)),
      ("missingFrames", .integer(Int64(report.missingFrames))),
      (
        "audioThreadPageFaults",
        .object([
          ("major", .integer(Int64(report.majorPageFaults))),
          ("minor", .integer(Int64(report.minorPageFaults))),
        ])
      ),
      ("cpuPeak", .number((report.peakLoad * 10_000).rounded() / 10_000)),
      ("overs", .integer(Int64(report.overs))),
      ("cpuMean", .number((report.meanLoad * 10_000).rounded() / 10_000)),
      (
        "swaps",
        .array(
          report.swaps.map { swap, cause, renderedAt in
            .object([
              ("version", .integer(swap.version)), ("cause", cause.map(JSON.string) ?? .null),
              ("kind", .string("\(swap.kind)")), ("frame", .integer(swap.frame)),
              ("position", .integer(swap.position)), ("length", .integer(swap.length)),
              ("renderedAt", .integer(Int64(renderedAt))),
            ])
          })
      ),
    ])
  }
}

/// What `play` shows while its first sound waits for sources to be decoded (a cache that does
/// not have them yet): nothing for half a second, then what it does, on one line that a
/// terminal sees updated (each source checked or decoded, how far) and a script sees once.
final class StartingLine: @unchecked Sendable {
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
  static let patience: Duration = .milliseconds(500)

  init(json: Bool) {
    self.json = json
  }

  /// A decode reports (any thread).
  func update(_ progress: DecodeProgress) {
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
  func begin() {
    state.withLock { $0.started = .now }
    let timer = DispatchSource.makeTimerSource(queue: .global())
    timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(200))
    timer.setEventHandler { [weak self] in self?.look() }
    timer.resume()
    self.timer = timer
  }

  /// The start is over (played, failed or stopped): the line goes from a terminal.
  func end() {
    timer?.cancel()
    timer = nil
    let drawn = state.withLock { state in
      state.started = nil
      return state.drawn
    }
    if drawn { writeOut("\r\u{1B}[K") }
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
    writeOut(line)
  }
}

/// The terminal's keys while `play` decodes its first version, before its status line: `q`
/// stops the decode (``PlayStop``). Only in the terminal's foreground, as the keys of the play.
final class EarlyKeys {
  private var saved = termios()
  private var raw = false
  /// Whether `q` was typed.
  private(set) var quit = false

  init() {
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
  func end() {
    PlayStop.onMainThread = { false }
    guard raw else { return }
    raw = false
    tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    Termination.forgetTerminal()
  }
}

/// A quit asked for while audio may be decoding (`q`, Ctrl-C, SIGTERM, SIGHUP): the decode
/// stops within milliseconds instead of finishing a source of hours first, and keeps nothing.
enum PlayStop {
  private static let flag = Atomic<Bool>(false)
  /// What the main thread may also look at while it decodes (scrub's keys typed meanwhile).
  nonisolated(unsafe) static var onMainThread: () -> Bool = { false }

  static func request() { flag.store(true, ordering: .relaxed) }

  static var requested: Bool {
    if flag.load(ordering: .relaxed) || Interrupt.requested() { return true }
    // The keys are read on the main thread (which waits for the first chunks of a decode
    // running on another): the decode itself learns of a `q` from the flag.
    guard Thread.isMainThread, onMainThread() else { return false }
    request()
    return true
  }

  /// `cache`, its hashing and decoding stopped by a quit.
  static func stoppable(_ cache: AudioCache) -> AudioCache {
    var cache = cache
    cache.isCancelled = { PlayStop.requested }
    return cache
  }
}

/// Ctrl-C, SIGTERM or SIGHUP during `play` (and `scrub`): playback stops, the summary is
/// printed, the terminal is restored, and then the process ends with that signal
/// (``reraiseIfRequested()``). `tape shell` stops reading lines the same way.
enum Interrupt {
  private static let signalNumber = Atomic<Int32>(0)
  /// The write end of ``wakeDescriptor()``'s pipe, -1 until it is made.
  private static let wake = Atomic<Int32>(-1)

  static func install() {
    // Made now, not first in the handler, where making a static could interrupt a malloc
    // (see ``SafeFiles/Termination/install(message:)``).
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
  static func wakeDescriptor() -> Int32? {
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

  static func requested() -> Bool {
    signalNumber.load(ordering: .relaxed) != 0
  }

  /// Ends the process with the signal that stopped it, if one did, so the parent sees it,
  /// having closed the projects it opened (a reader that is the last to close a project copies
  /// its log into it: the edits heard while playing are in the file).
  static func reraiseIfRequested() {
    let number = signalNumber.load(ordering: .relaxed)
    guard number != 0 else { return }
    StoresClosedAtExit.closeAll()
    signal(number, SIG_DFL)
    raise(number)
  }
}

/// The check of a project's effects that a render or a play makes before it starts
/// (``EffectRack/check(_:catalog:)``): missing and unusable plugins refused together, in one
/// line; stored values the installed plugins do not take, one warning line per effect, each
/// said once per process (a render with --loudness compiles the project more than once).
enum EffectChecks {
  nonisolated(unsafe) private static var warned: Set<String> = []

  /// What a play (or scrub, or `record --play`) checks before any device is opened: ``run(_:file:bypassMissing:warn:)``
  /// for a project with effects; `!warn` for a full-screen view, which has no line to say a
  /// warning on.
  static func beforePlay(
    _ project: Project, bypassMissing: Bool, file: String? = nil, warn: Bool = true
  ) throws {
    guard !project.allEffects.isEmpty else { return }
    try run(project, file: file, bypassMissing: bypassMissing, warn: warn)
  }

  static func run(
    _ project: Project, file: String?, bypassMissing: Bool, warn: Bool = true
  ) throws {
    let check = EffectRack.check(project, projectFolder: file.map(projectFolder))
    if let refusal = check.refusal(bypassMissing: bypassMissing) {
      if case .effectFiles = refusal, let file {
        // The fixes it names, with this project's file: ones that work when run.
        throw DataError(
          message: refusal.description.replacingOccurrences(
            of: "'tape fx set FILE ", with: "'tape fx set \(file) "
          ).replacingOccurrences(of: "'tape relink FILE ", with: "'tape relink \(file) "))
      }
      guard case .pluginsUnusable = refusal, let file else { throw refusal }
      // The fix it names, with this project's file: one that works when run.
      throw DataError(
        message: refusal.description.replacingOccurrences(
          of: "'tape fx rm FILE ", with: "'tape fx rm \(file) "))
    }
    guard warn else { return }
    for warning in check.warnings where warned.insert(warning).inserted {
      let line = file.map {
        warning.replacingOccurrences(of: "'tape fx set FILE ", with: "'tape fx set \($0) ")
      }
      _ = writeOut(ProjectWords.escaped("warning: \(line ?? warning)") + "\n")
    }
  }
}
