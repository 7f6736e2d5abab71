extension Clip {
  /// Splits the clip at timeline frame `position` into two clips that together play exactly what
  /// this one played.
  ///
  /// The left half keeps this clip's id and fade-in; the right half gets `newID` and keeps the
  /// fade-out. `position` must lie strictly inside the clip. A split inside a fade keeps every
  /// frame's gain: each half keeps its part of the fade's curve (``leftPart(endingAt:)``,
  /// ``rightPart(startingAt:)``).
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
    return (leftPart(endingAt: position), rightPart(startingAt: position).withID(newID))
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
  /// same gain, and no fade between them, or the two parts of one fade a split cut in two
  /// (which join back into it).
  public func joined(with right: Clip) throws(TimelineError) -> Clip {
    guard right.source == source, right.timelineStart == timelineEnd,
      right.sourceRange.start == sourceRange.end, right.gain == gain
    else { throw .notJoinable(id, right.id) }
    var joined = self
    joined.sourceRange = sourceRange.withEnd(right.sourceRange.end)
    joined.fadeOut = right.fadeOut
    // A fade-in the split cut (its full-level end in `right`), a fade-out (its silent end here).
    if fadeIn.fullCut > .zero {
      guard right.fadeIn.silentCut == fadeIn.silentCut + fadeIn.length,
        right.fadeIn.curve == fadeIn.curve, right.fadeIn.curveLength == fadeIn.curveLength
      else { throw .notJoinable(id, right.id) }
      joined.fadeIn.length = fadeIn.length + right.fadeIn.length
      joined.fadeIn.fullCut = right.fadeIn.fullCut
    } else if right.fadeIn.length > .zero {
      throw .notJoinable(id, right.id)
    }
    if right.fadeOut.fullCut > .zero {
      guard fadeOut.silentCut == right.fadeOut.silentCut + right.fadeOut.length,
        fadeOut.curve == right.fadeOut.curve, fadeOut.curveLength == right.fadeOut.curveLength
      else { throw .notJoinable(id, right.id) }
      joined.fadeOut.length = right.fadeOut.length + fadeOut.length
      joined.fadeOut.fullCut = fadeOut.fullCut
    } else if fadeOut.length > .zero {
      throw .notJoinable(id, right.id)
    }
    return joined
  }
}
