import ArgumentParser
import AudioFiles
import Foundation
import Interchange
import Playback
import Recording
import SafeFiles
import Synchronization
import TerminalViews
import Timeline
import TimelineStore

struct Record: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "record",
    abstract: "Record from an ALSA device into a new clip on a track; prints the clip's id.",
    discussion: """
      Captures from --device into a new take, song.tape-recordings/take-….wav beside the \
      project, written as it comes (its header rewritten and the file synced every half \
      second), at the device's own sample format (a 16-bit device gives a 16-bit take, float \
      stays float; --format asks for one) and the project's rate. It stops after --duration, \
      on q, Ctrl-C or SIGTERM, and the take becomes a source and one clip on TRACK at --at \
      (default: the end of the track's last clip), in one version: one undo.
      On a terminal, a status line shows the time recorded, the input's peak over the last \
      tenth of a second and a CLIP warning once a sample reached full scale; the summary \
      (stderr) says the take's peak, its clipped samples and any overrun (a period the \
      device or the disk lost, never silent), and each gap becomes a marker (overrun1, …) \
      where it lands, in the take's version; what the disk's lateness dropped is silence in \
      the take, so that what follows stays in place. A full disk stops the take and keeps it: added, \
      or, with no room left to add it, left for --recover, the line saying which.
      A recorder that died (kill -9, a power cut) leaves its take and a note of where it was \
      to land: 'tape record FILE --recover' adds every such take as its clip, with all it \
      wrote (at most the last half second before the end is lost), aligned and punched as \
      the recording would have (the round trip is noted as soon as it is measured), and every \
      other tape command on the project says in one line that a take waits.
      --play plays the project while recording (from --from to --to, following edits as tape \
      play does; to --output, default --device) and the take lands where what was heard was: \
      the round trip the devices report (snd_pcm_delay of both) is compensated, plus the \
      extra latency 'tape record --calibrate --device NAME' measured with a loopback (clicks \
      played and captured), kept per device in $XDG_CONFIG_HOME/tape/latency.json; the \
      summary says which was used. With --punch-in and --punch-out only that range of the \
      take is kept, crossfaded (10 ms) into the track's clips, which are cut under it: one \
      version. With --loop (and --from, --to) the range plays over and over and each pass \
      is a take: the last plays, the others are kept as takes of the range ('tape take ls', \
      'tape take use' choose), all in one version; a last pass cut short is kept when it \
      lasts a second or more. --monitor sends the input to --output (default --device) while \
      recording, and the summary states its latency (the capture's period plus the output's \
      buffer). See docs/reference/recording.md.
      Example: tape record song.tape Voice --device hw:1 --channels 1
      Example: tape record song.tape t2 --at 1:30 --duration 30s --json
      Example: tape record song.tape Voice --device hw:1 --monitor
      Example: tape record song.tape Voice --play --from 1:00 --to 1:30 --device hw:1
      Example: tape record song.tape Voice --play --from 1:00 --to 1:08 --loop --device hw:1
      Example: tape record --calibrate --device hw:1
      Example: tape record song.tape --recover
      """)

  @Argument(
    help: "The project file (for example song.tape; optional with --calibrate).",
    completion: .file(extensions: ["tape"]))
  var file: String?
  @Argument(help: "The track: its id (t1) or its name (not with --recover).", completion: ids("t"))
  var track: String?
  @Option(
    parsing: .unconditional,
    help:
      "Where the take starts on the timeline (default: the end of the track's last clip; with --play, where play starts)."
  )
  var at: String?
  @Option(help: "The ALSA capture device ('arecord -L' lists them).") var device = "default"
  @Option(parsing: .unconditional, help: "Channels to record: 1 or 2 (default: the project's).")
  var channels: Int?
  @Option(
    parsing: .unconditional, help: "Stop after this long (default: on q, Ctrl-C or SIGTERM).")
  var duration: String?
  @Option(help: "The sample format: s16, s24, s32 or float (default: the widest the device takes).")
  var format: String?
  @Flag(help: "Add every take a recorder left unfinished (killed, a power cut) as its clip.")
  var recover = false
  @Flag(
    help:
      "Play the project while recording (overdub): the take lands where what was heard was, the round trip compensated."
  )
  var play = false
  @Option(parsing: .unconditional, help: "With --play: start playing here (default 0).")
  var from: String?
  @Option(
    parsing: .unconditional,
    help: "With --play: stop playing, and recording, here (default: the project's end).")
  var to: String?
  @Option(
    help: "With --play, --monitor or --calibrate: the ALSA device played to (default: --device).")
  var output: String?
  @Option(
    parsing: .unconditional,
    help:
      "With --play, --monitor or --calibrate: frames per period of the device played to (default: 256, or the nearest it takes)."
  )
  var period: Int?
  @Option(
    name: .customLong("punch-in"), parsing: .unconditional,
    help:
      "With --play: keep the take only from here (to --punch-out), crossfaded into what was there."
  )
  var punchIn: String?
  @Option(
    name: .customLong("punch-out"), parsing: .unconditional,
    help: "With --play: keep the take only up to here (from --punch-in).")
  var punchOut: String?
  @Flag(
    help:
      "With --play, --from and --to: play the range over and over and keep each pass as a take (the last plays)."
  )
  var loop = false
  @Flag(
    help:
      "Measure the round trip of --device (its output looped to its input) and keep it for --play."
  )
  var calibrate = false
  @Flag(
    help:
      "Send the input to --output (default: --device) while recording (software monitoring); the summary states its latency."
  )
  var monitor = false
  @OptionGroup var options: EditOptions

  /// The project file; checked as every command's is.
  var project: ProjectArgument {
    var argument = ProjectArgument()
    argument.file = file ?? ""
    return argument
  }

  func validate() throws {
    if let file {
      var argument = ProjectArgument()
      argument.file = file
      try argument.validate()
    }
    if calibrate {
      guard track == nil, at == nil, duration == nil, format == nil, !recover, !play, from == nil,
        to == nil, !monitor
      else {
        throw ValidationError(
          "--calibrate takes only --device, --output, --period and --channels (and a project, for its rate): tape record --calibrate --device hw:1"
        )
      }
      if let channels, !(1...2).contains(channels) {
        throw ValidationError("--channels \(channels): record 1 (mono) or 2 (stereo) channels")
      }
      return
    }
    guard file != nil else {
      throw ValidationError("name the project file (tape record song.tape t1)")
    }
    if !play {
      for (name, value) in [("--from", from), ("--to", to)] where value != nil {
        throw ValidationError(
          "\(name) is for a recording that plays the project; add --play, or leave \(name) out")
      }
      if output != nil && !monitor {
        throw ValidationError(
          "--output is the device a recording plays to: add --play (overdub) or --monitor, or leave --output out"
        )
      }
      if punchIn != nil || punchOut != nil {
        throw ValidationError(
          "--punch-in and --punch-out keep part of a take recorded while the project plays; add --play"
        )
      }
      if period != nil && !monitor {
        throw ValidationError(
          "--period is for the device played to; add --play or --monitor, or leave it out")
      }
    }
    if loop {
      guard play, from != nil, to != nil else {
        throw ValidationError(
          "--loop records one take per pass over a range; give --play --from T --to T with it (tape record song.tape t1 --play --from 10s --to 18s --loop)"
        )
      }
      guard punchIn == nil else {
        throw ValidationError(
          "--loop and --punch-in/--punch-out do not go together yet; record the takes with --loop, or punch one take"
        )
      }
      // The takes are of the range itself: a loop's passes land where they were heard.
      guard at == nil else {
        throw ValidationError(
          "--loop keeps its takes where the range plays (--from to --to); leave out --at, or record without --loop to place one take elsewhere"
        )
      }
    }
    if (punchIn == nil) != (punchOut == nil) {
      throw ValidationError(
        "give --punch-in and --punch-out together (tape record song.tape t1 --play --punch-in 10s --punch-out 12s)"
      )
    }
    if recover {
      guard track == nil, at == nil, channels == nil, duration == nil, format == nil, !play,
        !monitor
      else {
        throw ValidationError(
          "--recover takes only the project (tape record song.tape --recover); it adds the takes where they were to land"
        )
      }
      return
    }
    guard track != nil else {
      throw ValidationError("name the track to record on (tape record song.tape t1)")
    }
    if let channels, !(1...2).contains(channels) {
      throw ValidationError("--channels \(channels): record 1 (mono) or 2 (stereo) channels")
    }
    if let format, CaptureFormat(rawValue: format) == nil {
      throw ValidationError(
        "--format \(format) is not a sample format; use s16, s24, s32 or float")
    }
  }

  func run() throws {
    Interrupt.install()
    // --recover says itself what it finds.
    PendingTakes.quiet = recover
    try reportingErrors {
      if recover {
        try recoverTakes()
        return
      }
      if calibrate {
        try calibrateDevice()
        return
      }
      try record()
      // The clip's id reaches stdout before a signal ends the process.
      try StandardOutput.flush()
      Interrupt.reraiseIfRequested()
    }
  }

  private func record() throws {
    let store = try openStore(project.file)
    let current = store.snapshot.project
    let trackID = try resolveTrack(track ?? "", current)
    guard let chosen = current.track(trackID) else { throw TimelineError.unknownTrack(trackID) }
    // With --play: the range played, and where the take lands by default (where play starts).
    let range = try play ? playRange(current) : nil
    if loop, let range {
      try Play.checkLoop(
        FrameRange(start: FramePosition(range.lowerBound), end: FramePosition(range.upperBound)),
        sampleRate: current.sampleRate)
    }
    let start =
      try at.map { try parsePosition($0, current, option: "--at") }
      ?? range.map { FramePosition($0.lowerBound) }
      ?? chosen.clips.map(\.timelineEnd).max() ?? .zero
    let calibration = try play ? LatencyStore().calibration(input: device, output: playedTo) : nil
    let limit = try duration.map { text in
      let frames = try parseTime(text, current, option: "--duration").frames
      guard frames > 0 else {
        throw UsageError(message: "--duration \(text) records nothing; give a length over 0")
      }
      return frames
    }
    let recorder = try Recorder(
      Recorder.Configuration(
        device: device, sampleRate: current.sampleRate, channels: channels ?? current.channels,
        format: format.flatMap(CaptureFormat.init(rawValue:)), frames: limit,
        writerWaitsForCapture: ProcessInfo.processInfo.environment["TAPE_TEST_WRITER_WAITS"] == "1")
    )
    let folder = PendingTake.folder(forProject: project.file)
    let name = Takes.newName()
    let punch = try punchRange(current).map { $0.start.frames..<$0.end.frames }
    let pending = PendingTake(
      take: name, track: trackID.rawValue, timelineStart: start.frames,
      sampleRate: current.sampleRate, channels: recorder.configuration.channels, punch: punch,
      loop: loop ? range : nil)
    let hold = try pending.write(in: folder)
    let takePath = "\(folder)/\(name)"
    let take: TakeFile
    do {
      take = try TakeFile(
        creating: takePath, sampleRate: current.sampleRate,
        channels: recorder.configuration.channels, bits: recorder.format.bitsPerSample,
        float: recorder.format.isFloat)
      PendingTake.syncFolder(of: takePath)
    } catch {
      hold.release()
      throw error
    }
    let shownTake = storedPath(RawPath(takePath).absolute, project: project.file).description
    writeOut(
      ProjectWords.escaped(
        "tape record: recording \(device) (\(recorder.format.described), \(current.sampleRate) Hz, \(recorder.configuration.channels == 1 ? "mono" : "stereo")) into \(shownTake), to land on \(trackID) at \(TimeDisplayOption.show(start.frames, sampleRate: current.sampleRate, frames: false))"
      ) + "\n")
    let captureClock = StreamClock()
    recorder.clock = captureClock
    var overdub: Overdub?
    var monitoring: Monitor?
    do {
      if let range {
        let request = DeviceRequest(name: playedTo, period: period)
        // What a play checks before it opens a device (the overdub compiles what it finds).
        try request.validate()
        try EffectChecks.beforePlay(current, bypassMissing: false, file: project.file)
        do {
          overdub = try Overdub(
            store: store, file: project.file, project: current, range: range, request: request,
            loop: loop)
        } catch let error as RecordingError {
          throw UsageError(message: error.description)
        }
      }
      monitoring = try startMonitor(recorder, project: current, player: overdub?.player)
      try recorder.start(write: { try take.append($0) }, tick: { try take.refresh() })
    } catch {
      monitoring?.stop()
      hold.release()
      unlink(takePath)
      throw error
    }
    var playReport: LivePlayer.Report?
    let report: Recorder.Report
    if let overdub {
      do {
        try overdub.start()
      } catch {
        recorder.stop()
        _ = recorder.wait()
        hold.release()
        unlink(takePath)
        throw error
      }
    }
    let progress = TakeProgress(
      note: pending, hold: hold, recorder: recorder, captureClock: captureClock,
      overdub: overdub, calibration: calibration, at: start.frames)
    if let overdub {
      report = RecordSession(
        recorder: recorder, sampleRate: current.sampleRate, playing: { overdub.player.isPlaying },
        tick: progress.update
      ).run()
      playReport = overdub.stop()
      monitoring?.stop()
    } else {
      report = RecordSession(
        recorder: recorder, sampleRate: current.sampleRate, tick: progress.update
      ).run()
      monitoring?.stop()
    }
    var failure = report.failure
    do {
      try take.finish()
    } catch {
      failure = failure ?? error
    }
    // What the take holds: what was captured (what the ring dropped as silence), less what a
    // full disk did not take.
    let seconds = Double(take.frames) / Double(current.sampleRate)
    var summary =
      "tape record: recorded \(String(format: "%.3f", seconds)) s; peak \(Takes.decibels(report.peak)), \(report.clipped) clipped samples, \(report.deviceOverruns + report.ringOverruns) overruns"
    if !report.realtimePriority { summary += " (no realtime priority)" }
    writeOut(ProjectWords.escaped(summary) + "\n")
    if let monitoring {
      let latency = monitoring.latency(capturePeriod: recorder.granted.period)
      writeOut(
        ProjectWords.escaped(
          "tape record: monitored on \(monitoring.device): latency \(latency) frames (\(String(format: "%.2f ms", Double(latency) / Double(current.sampleRate) * 1_000))): the capture's period \(recorder.granted.period) + the output's buffer \(monitoring.granted.bufferFrames)"
        ) + "\n")
      if let failure = monitoring.failure {
        writeOut(ProjectWords.escaped("warning: the monitor stopped early: \(failure)") + "\n")
      }
    }
    if report.deviceOverruns > 0 {
      writeOut(
        "warning: the device overran \(report.deviceOverruns) times (the capture thread was late): the take has gaps there, and what follows each is early by what it lost\n"
      )
    }
    if report.ringOverruns > 0 {
      writeOut(
        "warning: \(report.ringOverruns) periods (\(String(format: "%.3f", Double(report.droppedFrames) / Double(current.sampleRate))) s) were dropped because the disk was late: the take holds silence in their place\n"
      )
    }
    if report.unfilledFrames > 0 {
      writeOut(
        "warning: \(String(format: "%.3f", Double(report.unfilledFrames) / Double(current.sampleRate))) s of them came after the take's first \(Recorder.gapsFilledAtMost) gaps and are missing, not silence: what follows lands early by them\n"
      )
    }
    guard take.frames > 0 else {
      hold.release()
      unlink(takePath)
      if let failure { throw failure }
      throw DataError(
        message: "nothing was captured from \(device); the project is unchanged")
    }
    let diskFull =
      (failure as? AudioFileError).map {
        if case .diskFull = $0 { true } else { false }
      } == true
    if let failure, !diskFull {
      writeOut(ProjectWords.escaped("warning: the recording stopped early: \(failure)") + "\n")
    }
    var landing = start.frames
    var trip: Int64?
    if let overdub, let playReport {
      let aligned = overdub.landing(
        capture: captureClock, capturePeriod: recorder.granted.period, calibration: calibration,
        at: start.frames)
      landing = aligned.timelineStart
      trip = aligned.trip?.offset
      writeOut(ProjectWords.escaped("tape record: \(aligned.said)") + "\n")
      if playReport.xruns > 0 {
        writeOut(
          "warning: the play had \(playReport.xruns) dropouts: what was heard after one is out of step with the take by its length\n"
        )
      }
      if let failure = playReport.failure {
        writeOut(ProjectWords.escaped("warning: the play stopped early: \(failure)") + "\n")
      }
    }
    let final = progress.finished(timelineStart: landing, roundTrip: trip)
    let added: Takes.Added
    do {
      added = try Takes.add(
        [(note: final, path: takePath)], to: store, file: project.file,
        label: options.message
          ?? (punchIn != nil
            ? "Punch \(name) on \(trackID)"
            : loop ? "Record takes \(name) on \(trackID)" : "Record \(name) on \(trackID)"))
    } catch  where diskFull {
      // Not added: the note (where it lands, its punch, loop and gaps) stays for --recover.
      progress.save(final)
      // A ToolFailure: exit 74 (an I/O error), its message as it is.
      throw ToolFailure(
        message: Takes.diskFullLine(
          take: shownTake, frames: take.frames, sampleRate: current.sampleRate,
          file: project.file, added: false))
    }
    let clip = (
      version: added.version, ids: added.clips.map(\.description),
      markers: added.gaps.map { $0.said(sampleRate: current.sampleRate) }
    )
    if loop {
      writeOut(
        "tape record: \(clip.ids.count) take\(clip.ids.count == 1 ? "" : "s") (\(clip.ids.joined(separator: " "))); \(clip.ids.last ?? "") plays ('tape take use \(project.file) ID' chooses another)\n"
      )
    }
    hold.release()
    if !clip.markers.isEmpty {
      writeOut(
        ProjectWords.escaped(
          "tape record: the take's gaps (overruns): \(clip.markers.joined(separator: "; "))")
          + "\n")
    }
    if diskFull {
      writeOut(
        ProjectWords.escaped(
          Takes.diskFullLine(
            take: shownTake, frames: take.frames, sampleRate: current.sampleRate,
            file: project.file, added: true)) + "\n")
    }
    try MutationOutput(
      version: clip.version, ids: clip.ids,
      done: "the take was added all the same as version \(clip.version)"
    ).print(json: options.json)
  }

  /// With --monitor: the monitor on --output (or --device), started before the capture (it
  /// plays silence until the input comes); with --play, mixed into `player`'s play.
  private func startMonitor(
    _ recorder: Recorder, project: Project, player: LivePlayer?
  ) throws -> Monitor? {
    guard monitor else { return nil }
    let monitoring =
      if let player {
        try Monitor(
          mixingInto: player, sampleRate: project.sampleRate, channels: project.channels,
          inputChannels: recorder.configuration.channels)
      } else {
        try Monitor(
          device: playedTo, period: period, sampleRate: project.sampleRate,
          channels: project.channels, inputChannels: recorder.configuration.channels)
      }
    recorder.monitor = monitoring
    try monitoring.start()
    return monitoring
  }

  /// The device played to: --output, or the capture device.
  var playedTo: String { output ?? device }

  /// --from/--to as the range --play plays (to the project's end, as edits move it, without
  /// --to).
  private func playRange(_ project: Project) throws -> Range<Int64> {
    let rate = Int64(project.sampleRate)
    let punch = try punchRange(project)
    // A punch plays from 2 s before it (pre-roll) to 1 s after it, unless told.
    let start =
      try from.map { try parsePosition($0, project, option: "--from") }
      ?? punch.map { FramePosition(max(0, $0.start.frames - 2 * rate)) } ?? .zero
    if let punch, start > punch.start {
      throw UsageError(message: "--from is after --punch-in; start playing before the punch")
    }
    guard let to else {
      return start.frames..<(punch.map { $0.end.frames + rate } ?? Int64.max)
    }
    let end = try parsePosition(to, project, option: "--to")
    if let punch, end.frames < punch.end.frames + rate / 100 {
      throw UsageError(
        message:
          "--to is before --punch-out and its crossfade; stop playing at least 10 ms after the punch"
      )
    }
    guard start < end else {
      throw UsageError(
        message:
          "the range would be empty: --from is not before --to; give --to after --from")
    }
    return start.frames..<end.frames
  }

  /// --punch-in/--punch-out as a range; nil without them.
  private func punchRange(_ project: Project) throws -> FrameRange? {
    guard let punchIn, let punchOut else { return nil }
    let start = try parsePosition(punchIn, project, option: "--punch-in")
    let end = try parsePosition(punchOut, project, option: "--punch-out")
    guard end.frames - start.frames > Int64(project.sampleRate / 100) else {
      throw UsageError(
        message:
          "--punch-out is not after --punch-in by more than its 10 ms crossfade; give a longer punch"
      )
    }
    return FrameRange(start: start, end: end)
  }

  /// `--calibrate`: plays clicks on the output and captures them, and keeps the round trip.
  private func calibrateDevice() throws {
    var rate = 48_000
    var channelCount = channels ?? 2
    if let file {
      let project = try retryingReads { try openStore(file, access: .read) }.snapshot.project
      rate = project.sampleRate
      channelCount = channels ?? project.channels
    }
    let store = LatencyStore()
    writeOut(
      ProjectWords.escaped(
        "tape record: calibrating \(LatencyStore.key(input: device, output: playedTo)): \(LatencyCalibration.clickFrames(sampleRate: rate).count) clicks over 3 s at \(rate) Hz"
      ) + "\n")
    let measured = try LatencyCalibration.measure(
      input: device, output: playedTo, sampleRate: rate, channels: channelCount, period: period)
    try store.save(measured, input: device, output: playedTo)
    let milliseconds = { (frames: Int64) in
      String(format: "%.2f ms", Double(frames) / Double(rate) * 1_000)
    }
    writeOut(
      ProjectWords.escaped(
        "tape record: round trip \(measured.roundTripFrames) frames (\(milliseconds(measured.roundTripFrames))): the devices report \(measured.playbackDelay) (playback) + \(measured.captureDelay) (capture), \(measured.extraFrames) more measured; \(measured.clicksHeard) of \(measured.clicks) clicks heard; kept in \(store.path)"
      ) + "\n")
    if options.json {
      printJSON(
        .object([
          ("device", .string(LatencyStore.key(input: device, output: playedTo))),
          ("sampleRate", .integer(Int64(rate))),
          ("roundTripFrames", .integer(measured.roundTripFrames)),
          ("extraFrames", .integer(measured.extraFrames)),
          ("playbackDelay", .integer(measured.playbackDelay)),
          ("captureDelay", .integer(measured.captureDelay)),
          ("clicks", .integer(Int64(measured.clicks))),
          ("clicksHeard", .integer(Int64(measured.clicksHeard))), ("file", .string(store.path)),
        ]))
    } else {
      print(measured.roundTripFrames)
    }
  }

  /// `--recover`: every take no recorder holds, added where it was to land, in one version.
  private func recoverTakes() throws {
    let found = try PendingTake.all(in: PendingTake.folder(forProject: project.file))
    for busy in found where busy.recording {
      writeOut(
        ProjectWords.escaped(
          "note: \(busy.note.take) is being recorded now by another tape record; left alone")
          + "\n")
    }
    let waiting = found.filter { !$0.recording }
    let store = try openStore(project.file)
    guard !waiting.isEmpty else {
      writeOut("note: no take waits to be recovered\n")
      try MutationOutput(version: store.snapshot.version, ids: []).print(json: options.json)
      return
    }
    let rate = store.snapshot.project.sampleRate
    guard
      let added = try Takes.recover(
        waiting, to: store, file: project.file, label: options.message,
        say: { writeOut(ProjectWords.escaped("tape record: \($0)") + "\n") })
    else {
      try MutationOutput(version: store.snapshot.version, ids: []).print(json: options.json)
      return
    }
    if !added.gaps.isEmpty {
      writeOut(
        ProjectWords.escaped(
          "tape record: the takes' gaps (overruns): \(added.gaps.map { $0.said(sampleRate: rate) }.joined(separator: "; "))"
        ) + "\n")
    }
    try MutationOutput(version: added.version, ids: added.clips.map(\.description)).print(
      json: options.json)
  }
}

/// The one-line notice every command gives when a take waits to be recovered.
enum PendingTakes {
  /// Set by `tape record`, which says what it finds itself.
  nonisolated(unsafe) static var quiet = false

  /// The line every command on `file` says when a take waits to be recovered
  /// (``Takes/waitingNotice(forProject:)``); nil when none, or with ``quiet``.
  static func notice(for file: String) -> String? {
    quiet ? nil : Takes.waitingNotice(forProject: file)
  }
}

/// The recording's loop on the main thread: the status line on a terminal, `q`, a signal.
final class RecordSession {
  let recorder: Recorder
  let sampleRate: Int
  /// With --play: whether the play goes on (the recording ends with it).
  let playing: () -> Bool

  /// Called on every pass of the loop (the pending note's updates).
  let tick: () -> Void

  init(
    recorder: Recorder, sampleRate: Int, playing: @escaping () -> Bool = { true },
    tick: @escaping () -> Void = {}
  ) {
    self.recorder = recorder
    self.sampleRate = sampleRate
    self.playing = playing
    self.tick = tick
  }

  func run() -> Recorder.Report {
    var saved = termios()
    let onTerminal = PlaySession.inForeground && tcgetattr(STDIN_FILENO, &saved) == 0
    if onTerminal {
      Termination.rememberTerminal()
      var settings = Suspend.keysAsTyped(saved)
      tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    }
    defer {
      if onTerminal {
        writeOut("\r\u{1B}[K")
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
        Termination.forgetTerminal()
      }
    }
    var lastDraw = ContinuousClock.now - .seconds(1)
    while recorder.isCapturing && playing() {
      if Interrupt.requested() { break }
      tick()
      if onTerminal {
        if quitTyped() { break }
        if ContinuousClock.now - lastDraw >= .milliseconds(100) {
          lastDraw = .now
          draw()
        }
      } else {
        usleep(20_000)
      }
    }
    recorder.stop()
    return recorder.wait()
  }

  /// Whether `q` was typed since the last look (waits up to 30 ms for a key).
  private func quitTyped() -> Bool {
    guard let typed = typedBytes(waiting: 30) else { return false }
    return typed.contains { $0 == UInt8(ascii: "q") || $0 == UInt8(ascii: "Q") }
  }

  /// `recording 0:04.210  peak -12.3 dBFS  CLIP 3  overruns 0  (q stop)`.
  private func draw() {
    let levels = recorder.takeLevels()
    let time = TimeDisplayOption.show(recorder.frames, sampleRate: sampleRate, frames: false)
    let clip = levels.clipped > 0 ? "  CLIP \(levels.clipped)" : ""
    writeOut(
      "\r\u{1B}[Krecording \(time)  peak \(Takes.decibels(levels.peak))\(clip)  overruns \(recorder.overruns)  (q stop)"
    )
  }
}
