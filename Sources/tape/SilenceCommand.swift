import ArgumentParser
import AudioFiles
import Foundation
import Interchange
import Mixing
import Timeline
import TimelineStore

struct Silences: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "silences",
    abstract: "List the quiet stretches of the mix or a track, or cut them out (strip silence).",
    discussion: """
      A quiet stretch is one where every sample of the mix (or of --track's stem: the track as \
      it plays, its mute and solo set aside) stays below --below, for at least --longer. Each \
      is listed with its start and end (--json: an array of {"start", "end"} in frames).
      With --cut, each stretch is cut from the tracks (every track for the mix, --track's \
      alone otherwise), keeping --pad of it at each end so that words do not touch, all in \
      one version; --ripple closes the gaps, as 'tape cut --ripple' does.
      Example: tape silences song.tape --below -50dB --longer 400ms
      Example: tape silences song.tape --track t1 --cut --ripple --pad 100ms
      """)

  @OptionGroup var project: ProjectArgument
  @Option(
    name: [.customLong("track"), .customLong("tracks")],
    help: "Only this track's stem, by id or name (default: the whole mix).", completion: ids("t"))
  var track: String?
  @Option(parsing: .unconditional, help: "The level a quiet sample stays below.")
  var below = "-50dB"
  @Option(parsing: .unconditional, help: "How long a quiet stretch lasts at least.")
  var longer = "400ms"
  @Flag(help: "Cut the quiet stretches out (one version).") var cut = false
  @Flag(help: "With --cut: close the gaps, moving everything after each left.") var ripple = false
  @Option(
    parsing: .unconditional, help: "With --cut: how much of each stretch to keep at each end.")
  var pad = "100ms"
  @OptionGroup var times: TimeDisplayOption
  @OptionGroup var options: EditOptions

  func validate() throws {
    if ripple && !cut { throw ValidationError("--ripple goes with --cut") }
    if options.message != nil && !cut { throw ValidationError("-m labels the version --cut makes") }
  }

  func run() throws {
    try reportingErrors(readerMayStop: !cut) {
      let file = self.project.file
      let store = try retryingReads { try openStore(file, access: cut ? .write : .read) }
      let project = store.snapshot.project
      let chosen = try track.map { try resolveTrack($0, project) }
      let threshold = try Gain(parsing: below)
      let minimum = try parseTime(longer, project, option: "--longer")
      guard minimum > .zero else {
        throw UsageError(message: "--longer \(longer) is no time; give how long a silence lasts")
      }
      let quiet = try Silence.ranges(
        in: project, cache: AudioCache(forProject: file), track: chosen,
        below: Float(threshold.linear), longer: minimum)
      guard cut else {
        print(listing(quiet, sampleRate: project.sampleRate), terminator: "")
        return
      }
      let keep = try parseTime(pad, project, option: "--pad")
      let cuts = Project.silenceCuts(quiet, pad: keep)
      let label =
        options.message
        ?? "Strip silence below \(below) longer than \(longer)\(track.map { " on \($0)" } ?? "") (\(cuts.count) cut\(cuts.count == 1 ? "" : "s"))"
      let result = try store.edit(label: label) { current, ids in
        guard current == project else {
          throw DataError(
            message:
              "\(file) changed while its silences were measured; run the command again")
        }
        return try current.cutRanges(cuts, tracks: chosen.map { [$0] }, ripple: ripple) {
          ids.newClipID()
        }
      }
      if result.changed.isEmpty {
        writeOut(
          "note: no silence to cut; nothing changed; the project stays at version \(result.version)\n"
        )
      }
      try MutationOutput(version: result.version, ids: result.newIDs).print(json: options.json)
    }
  }

  private func listing(_ ranges: [FrameRange], sampleRate: Int) -> String {
    if options.json {
      return JSON.array(
        ranges.map {
          .object([("start", .integer($0.start.frames)), ("end", .integer($0.end.frames))])
        }
      ).line + "\n"
    }
    let show = { (frames: Int64) in times.show(frames, sampleRate: sampleRate) }
    return ranges.map {
      "\(show($0.start.frames))\t\(show($0.end.frames))\t\(show($0.count.frames))\n"
    }.joined()
  }
}
