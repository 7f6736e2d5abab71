extension Project {
  /// A punch-in: of a take that lands at `takeStart` on `track` (its source `source`), only
  /// `range` is kept, crossfaded into what was there, as `tape record --punch-in/--punch-out`
  /// keeps it.
  ///
  /// Each crossfade is `crossfade` frames centred on its edge of `range`: the new clip `clip`
  /// plays `range` widened by half a crossfade at each end, fading in and out (linear) over a
  /// whole crossfade; the track's clips under it are cut from `range` narrowed by half a
  /// crossfade at each end (``cutRange(_:tracks:ripple:edgeFade:crossfade:newClipID:)``,
  /// without ripple), the new edges fading out and in over a crossfade (linear), so the two
  /// sides' gains sum to 1 across each crossfade. Nothing outside the widened range changes.
  ///
  /// ```swift
  /// // Keep 10–12 s of a take that started at 8 s, 10 ms crossfades.
  /// try project.punch(source: s4, track: t2, takeStart: FramePosition(384_000),
  ///   range: FrameRange(start: 480_000, end: 576_000), crossfade: FrameCount(480),
  ///   clip: ids.newClipID()) { ids.newClipID() }
  /// ```
  public func punch(
    source sourceID: Source.ID, track: Track.ID, takeStart: FramePosition, range: FrameRange,
    crossfade: FrameCount, clip: Clip.ID, newClipID: () -> Clip.ID
  ) throws(TimelineError) -> [Command] {
    guard let source = source(sourceID) else { throw .unknownSource(sourceID) }
    guard range.count > crossfade else { throw .emptyRange(range, sampleRate: sampleRate) }
    let half = FrameCount(crossfade.frames / 2)
    let kept = FrameRange(start: range.start - half, end: range.end + (crossfade - half))
    let take = FrameRange(start: takeStart, count: source.frameCount(atRate: sampleRate))
    guard kept.start >= take.start, kept.end <= take.end, kept.start >= .zero else {
      throw .punchOutsideTake(punch: kept, take: take, sampleRate: sampleRate)
    }
    let fade = Fade(length: crossfade)
    let cut = try cutRange(
      FrameRange(start: kept.start + crossfade, end: kept.end - crossfade), tracks: [track],
      ripple: false, edgeFade: fade, newClipID: newClipID)
    let after = try applying(cut)
    let added = try after.addClip(
      clip, source: sourceID, track: track, at: kept.start,
      sourceStart: FramePosition(kept.start.frames - takeStart.frames),
      sourceEnd: FramePosition(kept.end.frames - takeStart.frames), fadeIn: fade, fadeOut: fade)
    return cut + added
  }
}
