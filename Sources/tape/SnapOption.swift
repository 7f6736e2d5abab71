import ArgumentParser
import AudioFiles
import Mixing
import Timeline

/// `--snap clips|zero|GRID`: where the times an edit takes land (``Timeline/SnapRule``).
struct SnapOption: ParsableArguments {
  @Option(
    help: """
      Snap the time: clips (to the nearest clip edge within 100 ms), zero (to the nearest \
      zero crossing of the mix within 10 ms) or a grid (500ms, 1/4@120bpm: its nearest line).
      """)
  var snap: String?
  /// Whether ``apply(_:_:file:excluding:)`` has moved a time: a reference, so that the label
  /// (read after the edit, ``TimelineStore/commit(label:coalescingKey:_:)``) can say it.
  private let moved = Moved()

  enum CodingKeys: CodingKey { case snap }

  /// Set when a snap moves a time.
  private final class Moved: @unchecked Sendable {
    var any = false
  }

  /// `snapped to RULE` for a history label when a snap moved a time; nil when nothing snapped
  /// (no `--snap`, or every time was already where it would snap to).
  var shown: String? { moved.any ? snap : nil }

  /// `position` snapped as asked (unchanged without `--snap`); `excluding`'s edges do not
  /// count as clip edges; `file` is the project, whose audio `zero` renders.
  func apply(
    _ position: FramePosition, _ project: Project, file: String, excluding: Clip.ID? = nil
  ) throws -> FramePosition {
    guard let snap else { return position }
    let rule = try SnapRule(parsing: snap, sampleRate: project.sampleRate)
    let snapped =
      rule == .zeroCrossing
      ? try zeroCrossing(near: position, project, file: file)
      : project.snapped(position, to: rule, excluding: excluding)
    if snapped != position { moved.any = true }
    return snapped
  }

  /// The nearest zero crossing of the mix (before effects, as `tape silences` hears it) within
  /// ``SnapRule/zeroWindowSeconds`` of `position`, rendering just that stretch; `position`
  /// when there is none.
  private func zeroCrossing(
    near position: FramePosition, _ project: Project, file: String
  ) throws -> FramePosition {
    let window = Int((SnapRule.zeroWindowSeconds * Double(project.sampleRate)).rounded())
    let start = max(0, position.frames - Int64(window) - 1)
    let end = position.frames + Int64(window) + 1
    var analysed = project
    analysed.masterEffects = []
    // Nor routing: each track's clips straight to the sum (buses would need a rack).
    analysed.sends = []
    for index in analysed.tracks.indices {
      analysed.tracks[index].effects = []
      analysed.tracks[index].output = nil
    }
    let audio = try AudioCache(forProject: file).sources(for: analysed)
    let plan = try RenderPlan(project: analysed, audio: audio.audio)
    let channels = plan.outputChannels
    let frames = Int(end - start)
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: frames * channels)
    defer { buffer.deallocate() }
    try audio.makeResident(plan, range: start..<end)
    RenderKernel.render(plan.view, from: start, frames: frames, into: buffer)
    let mix = (0..<frames).map { frame in
      (0..<channels).reduce(0.0) { $0 + Double(buffer[frame * channels + $1]) }
    }
    guard
      let index = ZeroCrossing.nearest(
        in: mix, center: Int(position.frames - start), window: window)
    else { return position }
    return FramePosition(start + Int64(index))
  }
}
