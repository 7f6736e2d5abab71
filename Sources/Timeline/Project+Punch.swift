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
    let (cutStart, cutEnd) = (kept.start + crossfade, kept.end - crossfade)
    let cut = try cutRange(
      FrameRange(start: cutStart, end: cutEnd), tracks: [track], ripple: false,
      newClipID: newClipID)
    let afterCut = try applying(cut)
    guard let cutTrack = afterCut.track(track) else { throw .unknownTrack(track) }
    // What plays in each crossfade under the take fades out (in) along the crossfade's
    // complement, so that the two sides sum to 1 wherever it plays: a part the cut made, and
    // a clip that ends (starts) inside the crossfade. A part with no room for the whole curve
    // beside its other fade (a clip that starts inside the crossfade, or fades in there) plays
    // the stretch of the curve it has room for, rather than refusing the punch after the take
    // was recorded. A fade the clip already has there is kept.
    func faded(_ clip: Clip) -> Clip {
      var clip = clip
      let (start, end) = (clip.timelineStart, clip.timelineEnd)
      if end > kept.start && end <= cutStart && clip.fadeOut.length == .zero {
        let from = max(start + clip.fadeIn.length, kept.start)
        if end > from {
          let (length, silent) = (end - from, cutStart - end)
          clip.fadeOut = Fade(
            length: length, curve: .linear, silentCut: silent,
            fullCut: crossfade - length - silent)
        }
      }
      if start >= cutEnd && start < kept.end && clip.fadeIn.length == .zero {
        let to = min(end - clip.fadeOut.length, kept.end)
        if to > start {
          let (length, silent) = (to - start, start - cutEnd)
          clip.fadeIn = Fade(
            length: length, curve: .linear, silentCut: silent,
            fullCut: crossfade - length - silent)
        }
      }
      return clip
    }
    var edited = cutTrack
    edited.clips = ClipList(cutTrack.clips.map(faded))
    let fades: [Command] = edited == cutTrack ? [] : [.setTrack(edited)]
    let after = try afterCut.applying(fades)
    let added = try after.addClip(
      clip, source: sourceID, track: track, at: kept.start,
      sourceStart: FramePosition(kept.start.frames - takeStart.frames),
      sourceEnd: FramePosition(kept.end.frames - takeStart.frames), fadeIn: fade, fadeOut: fade)
    return cut + fades + added
  }
}
