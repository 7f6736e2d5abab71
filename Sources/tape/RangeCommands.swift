import ArgumentParser
import Foundation
import Timeline
import TimelineStore

/// `--tracks t1,t2` or `--all` (the default): the tracks a range edit touches.
struct TrackChoice: ParsableArguments {
  @Option(
    name: [.customLong("tracks"), .customLong("track")],
    help: "Only these tracks, comma-separated: ids or names (t1,t3 or Voice,Bed).",
    completion: ids("t"))
  var tracks: String?
  @Flag(help: "Every track (the default).") var all = false

  func validate() throws {
    if tracks != nil && all { throw ValidationError("give --tracks or --all, not both") }
  }

  /// The tracks named (by id or name), or nil for every track.
  func chosen(_ project: Project) throws -> [Track.ID]? {
    try tracks.map { try parseTrackIDs($0, project) }
  }

  var shown: String { tracks.map { " on \($0)" } ?? "" }
}

/// Tracks separated by commas (`t1,t3`, `Voice,Bed`), each as ``resolveTrack(_:_:)`` reads it.
func parseTrackIDs(_ text: String, _ project: Project) throws -> [Track.ID] {
  try text.split(separator: ",", omittingEmptySubsequences: false).map {
    try resolveTrack(String($0), project)
  }
}

/// A track as the command line names it: its id (`t3`), or its name (`Voice`) when exactly one
/// track of `project` has it. An id is read as one first: a track named like an id is named by
/// its id.
func resolveTrack(_ text: String, _ project: Project) throws -> Track.ID {
  let trimmed = text.trimmingCharacters(in: .whitespaces)
  if let id = Track.ID(parsing: trimmed) { return id }
  let named = project.tracks.filter { $0.name == trimmed }
  guard named.count == 1 else {
    throw UsageError(
      message: named.isEmpty
        ? "'\(ProjectWords.escaped(trimmed))' is neither a track id (t1) nor a track's name; 'tape track ls' lists them"
        : "\(named.count) tracks are named '\(ProjectWords.escaped(trimmed))' (\(named.map(\.id.description).joined(separator: ", "))); name one by its id"
    )
  }
  return named[0].id
}

struct Cut: EditingCommand {
  static let configuration = CommandConfiguration(
    commandName: "cut",
    abstract: "Remove a stretch of time from tracks; --ripple closes the gap.",
    discussion: """
      Clips inside the range are removed, clips crossing an edge are trimmed to it, and a clip \
      spanning it is split in two (the part after it gets a new id, printed). With --ripple, \
      everything after the range on those tracks moves left by its length, so the tracks stay \
      in sync: an "um" leaves in one command. Without it, silence stays where the range was.
      The new edges are hard cuts, which can click where the audio is not silent. With \
      --ripple, --crossfade D joins the two sides with a real crossfade: the audio before the \
      range plays on D/2 past the join and the audio after it starts D/2 before it, over the \
      audio the cut removed, one fading out while the other fades in (--crossfade-curve: \
      equal-power, the default, for different material either side; linear or s-curve for \
      the same recording). Where a side has less audio than that, the crossfade is shorter \
      and a note says so. Without --ripple there is nothing to cross to: each new edge fades \
      over D instead (refused, naming every clip in the way, where D does not fit beside a \
      clip's other fade). A range that cuts through a fade keeps the gain of every frame \
      that remains: what is left of the fade is the part of its curve that remains ('ls' \
      shows it as '0.1s of 0.3s'). Volume envelopes move with --ripple, \
      and so do markers: those after the range move left by its length, those inside it to \
      its start. Everywhere else the audio outside the range is exactly what it was.
      --snap moves --from and --to: clips to the nearest clip edge on any track within 100 ms \
      (farther, the time stays), zero to the nearest zero crossing of the mix (its channels \
      summed, before effects) within 10 ms, or a grid to its nearest line from 0: a time \
      (250ms) or a note at a tempo (1/4@120bpm is 0.5 s).
      Example: tape cut song.tape --from 12.3s --to 12.8s --ripple --crossfade 5ms
      Example: tape cut song.tape --from 1:00 --to 1:30 --tracks t1,t2
      Example: tape cut song.tape --from @chorus --to @chorus+2s
      Example: tape cut song.tape --from 0:59.97 --to 1:30.04 --snap clips
      """
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @Option(parsing: .unconditional, help: "Where the range starts on the timeline.") var from: String
  @Option(parsing: .unconditional, help: "Where it ends (exclusive).") var to: String
  @OptionGroup var choice: TrackChoice
  @Flag(help: "Move everything after the range left by its length.") var ripple = false
  @Option(
    parsing: .unconditional,
    help: "A crossfade of this length across the join (with --ripple), or a fade at each new edge.")
  var crossfade: String?
  @Option(
    help: "The crossfade's curves: equal-power (default), linear or s-curve (the same recording).")
  var crossfadeCurve: String = "equal-power"
  @OptionGroup var snapping: SnapOption
  @OptionGroup var options: EditOptions

  var label: String {
    "Cut \(from)–\(to)\(choice.shown)\(ripple ? " with ripple" : "")\(snapping.shown.map { " snapped to \($0)" } ?? "")"
  }

  func validate() throws {
    if crossfade == nil && crossfadeCurve != "equal-power" {
      throw ValidationError("--crossfade-curve needs --crossfade")
    }
  }

  private func range(_ project: Project) throws -> FrameRange {
    let typed = try parsePosition(from, project, option: "--from")
    let start = try snapping.apply(typed, project, file: self.project.file)
    // A nudge (--to +0.5s) counts from --from as typed.
    let end = try snapping.apply(
      try parsePosition(to, project, relativeTo: typed, option: "--to"), project,
      file: self.project.file)
    guard end > start else {
      guard snapping.snap != nil,
        try parsePosition(to, project, relativeTo: typed, option: "--to") > typed
      else {
        throw UsageError(message: "--to \(to) must come after --from \(from)")
      }
      throw UsageError(
        message:
          "--from \(from) and --to \(to) snap to the same time (\(TimeValue.exact(FrameCount(start.frames), sampleRate: project.sampleRate))); choose a finer --snap or times farther apart"
      )
    }
    return FrameRange(start: start, end: end)
  }

  /// The crossfade asked for, if any.
  private func join(_ project: Project) throws -> Crossfade? {
    guard let crossfade else { return nil }
    let length = try parseTime(crossfade, project, option: "--crossfade")
    guard length > .zero else { return nil }
    return Crossfade(length: length, curve: try parseCurve(crossfadeCurve))
  }

  func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
    let join = try join(project)
    return try project.cutRange(
      try range(project), tracks: try choice.chosen(project), ripple: ripple,
      edgeFade: ripple ? .none : Fade(length: join?.length ?? .zero, curve: join?.curve ?? .linear),
      crossfade: ripple ? join : nil
    ) { ids.newClipID() }
  }

  func notes(_ project: Project) throws -> [String] {
    guard ripple, let join = try join(project) else { return [] }
    return try project.rippleCrossfadeShortfalls(
      try range(project), tracks: try choice.chosen(project), crossfade: join
    ).map { shortCrossfadeNote($0, project) }
  }
}

/// A note on a crossfade shorter than asked: where, how long, and why.
func shortCrossfadeNote(_ short: ShortCrossfade, _ project: Project) -> String {
  let show = { (n: FrameCount) in TimeValue.seconds(n, sampleRate: project.sampleRate) }
  let at = show(FrameCount(short.at.frames))
  let sides =
    "\(short.lefts.map(\.description).joined(separator: ", ")) has \(show(short.leftHandle)) of audio after it, \(short.rights.map(\.description).joined(separator: ", ")) \(show(short.rightHandle)) before it"
  guard short.made > .zero else {
    return
      "no crossfade at \(at) on \(short.track): \(sides); each side fades over \(show(short.asked)) instead"
  }
  return
    "the crossfade at \(at) on \(short.track) is \(show(short.made)), not \(show(short.asked)): \(sides)"
}

struct Insert: EditingCommand {
  static let configuration = CommandConfiguration(
    commandName: "insert",
    abstract: "Open a gap of silence in tracks, moving everything after it right.",
    discussion: """
      A clip playing across --at is split there (its right part gets a new id, printed) and \
      moves with the rest; inside a fade each part keeps its part of the fade's curve. \
      Markers at or after --at move right with it. --snap moves --at first, as for 'tape cut'.
      Example: tape insert song.tape --at 30s --length 2s
      Example: tape insert song.tape --at 29.9s --length 2s --snap clips
      """
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @Option(parsing: .unconditional, help: "Where the gap starts on the timeline.") var at: String
  @Option(parsing: .unconditional, help: "How long the gap is.") var length: String
  @OptionGroup var choice: TrackChoice
  @OptionGroup var snapping: SnapOption
  @OptionGroup var options: EditOptions

  var label: String {
    "Insert \(length) at \(at)\(snapping.shown.map { " snapped to \($0)" } ?? "")\(choice.shown)"
  }

  func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
    try project.insertGap(
      at: try snapping.apply(
        try parsePosition(at, project, option: "--at"), project, file: self.project.file),
      length: try parseTime(length, project, option: "--length"), tracks: try choice.chosen(project)
    ) { ids.newClipID() }
  }
}

struct Master: EditingCommand {
  static let configuration = CommandConfiguration(
    commandName: "master",
    abstract: "Set the gain of the whole mix.",
    discussion: "Example: tape master song.tape --gain -3dB"
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @Option(parsing: .unconditional, help: "The master gain in dB (-3, -3dB, +2dB, 0).")
  var gain: String
  @OptionGroup var options: EditOptions

  var label: String { "Master gain \(gain)" }

  func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
    try project.setMasterGain(try Gain(parsing: gain))
  }
}

struct SplitAll: EditingCommand {
  static let configuration = CommandConfiguration(
    commandName: "split",
    abstract: "Split every clip under a time, on every track or some; prints the new right parts.",
    discussion: """
      Each clip playing across --at is cut in two there (as 'clip split' cuts one): the left \
      part keeps its id, the right part gets a new one, printed in track order. Inside a fade \
      each part keeps its part of the fade's curve. --snap moves --at first, as for 'tape cut'.
      Example: tape split song.tape --at 1:02.5
      Example: tape split song.tape --at c3.end --tracks t1,t2
      """
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @Option(parsing: .unconditional, help: "The timeline time to split at.") var at: String
  @OptionGroup var choice: TrackChoice
  @OptionGroup var snapping: SnapOption
  @OptionGroup var options: EditOptions

  var label: String {
    "Split at \(at)\(choice.shown)\(snapping.shown.map { " snapped to \($0)" } ?? "")"
  }

  func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
    let position = try snapping.apply(
      try parsePosition(at, project, option: "--at"), project, file: self.project.file)
    return try project.splitAll(at: position, tracks: try choice.chosen(project)) {
      ids.newClipID()
    }
  }
}
