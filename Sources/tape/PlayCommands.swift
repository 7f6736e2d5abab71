import ArgumentParser
import AudioFiles
import Foundation
import Interchange
import Mixing
import Playback
import SafeFiles
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
      // Read again across a writer's busy moment (the last editor removing the log as it
      // closes), as the read commands do.
      let store = try retryingReads {
        try openStore(self.project.file, access: follow ? .follow : .read)
      }
      // What the path, its log and shared memory name now, as opened: the first version's
      // decode may take seconds, and a log removed meanwhile is a log lost all the same.
      let opened = PlaySession.OpenedFile(path: self.project.file)
      let chosen = try span.version(in: store)
      let version = chosen ?? store.snapshot.version
      let project: Project
      if chosen != nil {
        project = try retryingReads { try store.project(at: version) }
      } else {
        project = store.snapshot.project
      }
      let range = try span.range(of: project)
      if loop { try Self.checkLoop(range, sampleRate: project.sampleRate) }
      // Where the play is, for `tape view` (the project's cache folder; never the project).
      let playhead = PlayheadFile(projectPath: store.path)
      let started: PlaySession?
      do {
        started = try PlaySession.start(
          project, version: version, store: store, opened: opened,
          request: PlaySession.Request(
            file: self.project.file, device: request, range: range, followsEnd: span.to == nil,
            loop: loop, bypassMissing: bypassMissing, follow: follow, showsFrames: times.frames,
            json: json.json),
          checkEffects: { [file = self.project.file, bypassMissing] in
            try EffectChecks.beforePlay($0, bypassMissing: bypassMissing, file: file)
          },
          playhead: { playhead.write(frame: $0, paused: $1) })
      } catch is PlaySession.StoppedBeforeFirstSound {
        Interrupt.reraiseIfRequested()
        return
      }
      // `q` stopped the first decode: said, and nothing more to do.
      guard let session = started else { return }
      defer { withExtendedLifetime(session) {} }
      let report = session.run()
      playhead.remove()
      session.removeOrphans()
      if json.json {
        printJSON(session.reportJSON(report, range: range, following: follow && store.canFollow))
      } else {
        print(session.reportText(report, times: times))
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
    guard let shortfall = LivePlayer.loopShortfall(range.count, sampleRate: sampleRate) else {
      return
    }
    throw UsageError(
      message:
        "--loop over \(shortfall); loop a longer range, or play it without --loop")
  }
}

/// The summary a play prints: what the session reports, in words or JSON.
extension PlaySession {
  func reportText(_ report: LivePlayer.Report, times: TimeDisplayOption) -> String {
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

/// How `tape` ends after a signal: its open projects closed first
/// (``StoresClosedAtExit/closeAll()``), then the signal raised again.
extension Interrupt {
  static func reraiseIfRequested() {
    reraiseIfRequested(afterClosing: { StoresClosedAtExit.closeAll() })
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
