import ArgumentParser
import AudioFiles
import Foundation
import Mixing
import Playback
import Timeline
import TimelineStore

/// What part of which version `render` and `play` work on.
struct SpanOptions: ParsableArguments {
  @Option(help: "Start on the timeline (default 0).") var from: String?
  @Option(help: "End on the timeline (default: the end of the last clip).") var to: String?
  @Option(help: "Use this version instead of the current one (the head does not move).")
  var version: Int64?

  /// The chosen version of the project in `store`, the range to cover, and the version compiled
  /// into a render plan over its decoded audio. The range is checked before any audio is loaded.
  func compile(
    _ store: TimelineStore, cache: AudioCache
  ) throws -> (project: Project, plan: RenderPlan, audio: ProjectAudio, range: FrameRange) {
    let project = if let version { try store.project(at: version) } else { store.snapshot.project }
    let range = try range(of: project)
    let audio = try cache.sources(for: project)
    let plan = try RenderPlan(project: project, audio: audio.audio)
    return (project, plan, audio, range)
  }

  /// `--from`/`--to` as a frame range; by default the whole project.
  private func range(of project: Project) throws -> FrameRange {
    let start = try from.map { try parsePosition($0, project) } ?? .zero
    let end = try to.map { try parsePosition($0, project) } ?? project.timelineEnd
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
        message:
          "the range would be empty: --from \(shown(start)) is not before the end \(shown(end)); give --to after --from"
      )
    }
    return FrameRange(start: start, count: FrameCount(end.frames - start.frames))
  }
}

struct Play: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Play the project through an ALSA device.",
    discussion: """
      Plays exactly what 'tape render' would write, from --from to --to. Ctrl-C stops.
      Example: tape play song.tape --from 1:00 --device default
      """)

  @OptionGroup var project: ProjectArgument
  @Option(help: "The ALSA device ('aplay -L' lists them).") var device = "default"
  @OptionGroup var span: SpanOptions
  @OptionGroup var times: TimeDisplayOption
  @OptionGroup var json: JSONOption

  func run() throws {
    Interrupt.install()
    try reportingErrors {
      let (project, plan, audio, range) = try span.compile(
        try openStore(self.project.file, access: .read),
        cache: AudioCache(forProject: self.project.file))
      let bar = ProgressBar(
        total: range.count.frames, sampleRate: project.sampleRate, verb: "playing")
      defer { bar.finish() }
      let report = try PlanPlayer.play(
        plan, range: range, device: device,
        prepare: { try audio.makeResident(plan, range: $0) }, progress: bar.update,
        isCancelled: Interrupt.requested)
      bar.finish()
      let played = times.show(report.frames, sampleRate: project.sampleRate)
      if json.json {
        printJSON(
          .object([
            ("device", .string(device)), ("frames", .int(report.frames)),
            ("underruns", .int(Int64(report.underruns))),
          ]))
      } else {
        print(
          "played \(played) on \(device)\(report.underruns > 0 ? ", \(report.underruns) underruns" : "")"
        )
      }
    }
  }
}
