extension Clip {
  /// Splits the clip at timeline frame `position` into two clips that together play exactly what
  /// this one played.
  ///
  /// The left half keeps this clip's id and fade-in; the right half gets `newID` and keeps the
  /// fade-out. `position` must lie strictly inside the clip, and not inside a fade: a fade cut
  /// in two could not sound the same.
  ///
  /// ```swift
  /// let (left, right) = try clip.split(at: 96_000, newID: Clip.ID(9), sampleRate: 48_000)
  /// ```
  public func split(
    at position: FramePosition, newID: Clip.ID, sampleRate: Int
  )
    throws(TimelineError) -> (left: Clip, right: Clip)
  {
    guard position > timelineStart, position < timelineEnd else {
      throw .splitOutsideClip(clip: id, at: position, range: timelineRange, sampleRate: sampleRate)
    }
    let leftLength = position - timelineStart
    guard leftLength >= fadeIn.length else {
      throw .splitInsideFade(
        clip: id, end: .fadeIn, at: position, range: timelineRange, fade: fadeIn.length,
        sampleRate: sampleRate)
    }
    guard timelineEnd - position >= fadeOut.length else {
      throw .splitInsideFade(
        clip: id, end: .fadeOut, at: position, range: timelineRange, fade: fadeOut.length,
        sampleRate: sampleRate)
    }
    let cut = sourceRange.start + leftLength
    var left = self
    left.sourceRange = sourceRange.withEnd(cut)
    left.fadeOut = .none
    var right = Clip(
      id: newID, source: source, timelineStart: position, sourceRange: sourceRange.withStart(cut),
      gain: gain, fadeIn: .none, fadeOut: fadeOut)
    right.fadeOut = fadeOut
    return (left, right)
  }

  /// The clip with new timeline edges; the audio stays where it was on the timeline.
  ///
  /// Moving the start later crops the beginning; earlier uncrops it (as far as the source
  /// allows, which the project checks). Fades stay attached to their edges. `nil` keeps an edge.
  public func trimmed(
    start: FramePosition? = nil, end: FramePosition? = nil, sampleRate: Int
  )
    throws(TimelineError) -> Clip
  {
    let newStart = start ?? timelineStart
    let newEnd = end ?? timelineEnd
    guard newStart < newEnd else {
      throw .trimInverted(clip: id, start: newStart, end: newEnd, sampleRate: sampleRate)
    }
    var trimmed = self
    let sourceStart = sourceRange.start + (newStart - timelineStart)
    trimmed.timelineStart = newStart
    trimmed.sourceRange = FrameRange(start: sourceStart, count: newEnd - newStart)
    try trimmed.validateFades(sampleRate: sampleRate)
    return trimmed
  }

  /// The same clip starting at `position` on the timeline.
  public func moved(to position: FramePosition) -> Clip {
    var moved = self
    moved.timelineStart = position
    return moved
  }
}

extension Clip {
  /// Joins this clip with `right`, the clip that continues it, into one clip: the inverse of
  /// ``split(at:newID:sampleRate:)``. The result keeps this clip's id.
  ///
  /// `right` must start where this clip ends, on the timeline and in the same source, with the
  /// same gain, and there must be no fade between them.
  public func joined(with right: Clip) throws(TimelineError) -> Clip {
    guard right.source == source, right.timelineStart == timelineEnd,
      right.sourceRange.start == sourceRange.end, right.gain == gain,
      fadeOut.length == .zero, right.fadeIn.length == .zero
    else { throw .notJoinable(id, right.id) }
    var joined = self
    joined.sourceRange = sourceRange.withEnd(right.sourceRange.end)
    joined.fadeOut = right.fadeOut
    return joined
  }
}
