/// Strip silence: cutting the quiet stretches a render found out of the timeline.
extension Project {
  /// What a strip-silence cuts of each quiet stretch: the stretch less `pad` at each end (so
  /// that words do not touch), in order; stretches no longer than twice `pad` are left alone.
  ///
  /// Rule: the cut keeps `pad` of every silence on both sides. Why: a silence cut to nothing
  /// joins the end of one phrase to the start of the next, which sounds like a jump. What if
  /// `pad` is zero: each stretch is cut whole.
  ///
  /// ```swift
  /// let cuts = Project.silenceCuts(quiet, pad: FrameCount(4_800))  // 100 ms at 48 kHz
  /// ```
  public static func silenceCuts(_ quiet: [FrameRange], pad: FrameCount) -> [FrameRange] {
    quiet.compactMap { range -> FrameRange? in
      let start = range.start + pad
      let end = range.end - pad
      return end > start ? FrameRange(start: start, end: end) : nil
    }
  }

  /// Cuts each of `ranges` (in order, not overlapping) from `tracks` (every track when nil),
  /// as ``cutRange(_:tracks:ripple:edgeFade:crossfade:newClipID:)`` does, all in one list of
  /// commands; with `ripple` every gap is closed.
  ///
  /// Rule: the ranges are cut from the last to the first. Why: a ripple moves everything after
  /// a cut left, so cutting the earlier ranges first would move the later ones out from under
  /// their positions. What if they overlap: a later cut removes what an earlier one moved into
  /// it; give ``silenceCuts(_:pad:)``'s ranges, which never do.
  ///
  /// ```swift
  /// let commands = try project.cutRanges(cuts, tracks: nil, ripple: true) { ids.newClipID() }
  /// ```
  public func cutRanges(
    _ ranges: [FrameRange], tracks: [Track.ID]? = nil, ripple: Bool, newClipID: () -> Clip.ID
  ) throws(TimelineError) -> [Command] {
    var edited = self
    var commands: [Command] = []
    for range in ranges.reversed() {
      let made = try edited.cutRange(range, tracks: tracks, ripple: ripple, newClipID: newClipID)
      edited = try edited.applying(made)
      commands += made
    }
    return commands
  }
}
