/// A crossfade: two clips both play for `length` frames, one fading out while the other fades
/// in, over audio each takes from its source beyond the join (its handle).
///
/// The curves are complementary, so the join keeps its level: `equalPower` (the default) keeps
/// the power constant, right for two uncorrelated sides (two takes, a cut between words);
/// `linear` and `sCurve` keep the amplitude constant, right where both sides are the same
/// recording, time-aligned. `exponential` has no complement and is refused.
public struct Crossfade: Sendable, Hashable {
  public var length: FrameCount
  public var curve: FadeCurve

  public init(length: FrameCount, curve: FadeCurve = .equalPower) {
    self.length = length
    self.curve = curve
  }
}

/// Where a crossfade could not be as long as asked, because a side had too little audio in its
/// source beyond the join: what was asked and what each side had.
public struct ShortCrossfade: Sendable, Hashable {
  public var track: Track.ID
  /// The join, on the timeline after the edit.
  public var at: FramePosition
  public var asked: FrameCount
  /// The overlap made: `before + after` (0: none could be made, each side fades on its own).
  public var made: FrameCount
  /// The clips ending at the join and the frames their sources have after it (the smallest).
  public var lefts: [Clip.ID]
  public var leftHandle: FrameCount
  /// The clips starting at the join and the frames their sources have before it.
  public var rights: [Clip.ID]
  public var rightHandle: FrameCount

  public init(
    track: Track.ID, at: FramePosition, asked: FrameCount, made: FrameCount, lefts: [Clip.ID],
    leftHandle: FrameCount, rights: [Clip.ID], rightHandle: FrameCount
  ) {
    self.track = track
    self.at = at
    self.asked = asked
    self.made = made
    self.lefts = lefts
    self.leftHandle = leftHandle
    self.rights = rights
    self.rightHandle = rightHandle
  }
}

extension Project {
  /// Joins the adjacent clips `left` and `right` (on one track, `left` ending exactly where
  /// `right` starts) with an overlapping crossfade centred on the join: `left` plays on past it
  /// and `right` starts before it, each over audio from its source (less where a source has
  /// less; ``crossfadeShortfall(_:_:_:)`` says where).
  ///
  /// ```swift
  /// try project.crossfadeClips(Clip.ID(3), Clip.ID(4), Crossfade(length: FrameCount(960)))
  /// ```
  public func crossfadeClips(
    _ left: Clip.ID, _ right: Clip.ID, _ crossfade: Crossfade
  ) throws(TimelineError) -> [Command] {
    let (a, b, track) = try adjacentPair(left, right)
    let joined = try joining(lefts: [a], rights: [b], at: b.timelineStart, crossfade)
    var edited = track
    edited.clips = ClipList(
      track.clips.map { clip in
        (joined.lefts + joined.rights).first { $0.id == clip.id } ?? clip
      })
    return [.setTrack(edited)]
  }

  /// Whether `left` and `right` are on one track and already overlap, `right` starting inside
  /// `left` and ending after it: a crossfade for ``crossfadeOverlap(_:_:curve:)``; the overlap's
  /// length, or nil.
  public func overlap(_ left: Clip.ID, _ right: Clip.ID) -> FrameCount? {
    guard let (a, track) = clip(left), let (b, other) = clip(right), track.id == other.id,
      a.timelineStart < b.timelineStart, b.timelineStart < a.timelineEnd,
      a.timelineEnd <= b.timelineEnd
    else { return nil }
    return FrameCount(a.timelineEnd.frames - b.timelineStart.frames)
  }

  /// Crossfades two clips that already overlap (``overlap(_:_:)``) over their overlap: `left`
  /// fades out and `right` fades in across it with `curve` and its complement; neither moves
  /// or changes length. Fades they had there are replaced; a fade that no longer fits beside a
  /// clip's other fade is refused.
  ///
  /// ```swift
  /// try project.crossfadeOverlap(Clip.ID(3), Clip.ID(4), curve: .equalPower)
  /// ```
  public func crossfadeOverlap(
    _ left: Clip.ID, _ right: Clip.ID, curve: FadeCurve
  ) throws(TimelineError) -> [Command] {
    guard curve != .exponential else { throw .crossfadeCurve(curve) }
    guard let length = overlap(left, right), let (a, track) = clip(left),
      let (b, _) = clip(right)
    else { _ = try adjacentPair(left, right); return [] }
    let fade = Fade(length: length, curve: curve)
    var out = a
    out.fadeOut = fade
    try out.checkCrossfadeFits(at: .fadeOut, sampleRate: sampleRate)
    var into = b
    into.fadeIn = fade
    try into.checkCrossfadeFits(at: .fadeIn, sampleRate: sampleRate)
    return [.setClip(out, track: track.id), .setClip(into, track: track.id)]
  }

  /// Where ``crossfadeClips(_:_:_:)`` would make a shorter crossfade than asked; nil where it
  /// makes the whole length.
  public func crossfadeShortfall(
    _ left: Clip.ID, _ right: Clip.ID, _ crossfade: Crossfade
  ) throws(TimelineError) -> ShortCrossfade? {
    let (a, b, track) = try adjacentPair(left, right)
    return try joining(lefts: [a], rights: [b], at: b.timelineStart, crossfade)
      .shortfall(track: track.id, at: b.timelineStart, asked: crossfade.length)
  }

  private func adjacentPair(
    _ left: Clip.ID, _ right: Clip.ID
  ) throws(TimelineError) -> (Clip, Clip, Track) {
    guard let (a, track) = clip(left) else { throw .unknownClip(left) }
    guard let (b, other) = clip(right) else { throw .unknownClip(right) }
    guard track.id == other.id, a.timelineEnd == b.timelineStart else {
      throw .notAdjacent(
        left: left, leftEnd: a.timelineEnd, right: right, rightStart: b.timelineStart,
        sameTrack: track.id == other.id, sampleRate: sampleRate)
    }
    return (a, b, track)
  }

  /// The frames `clip`'s source has after its crop (`after`) or before it.
  func handle(of clip: Clip, after: Bool) -> FrameCount {
    guard after else { return FrameCount(clip.sourceRange.start.frames) }
    let length = source(clip.source)?.frameCount(atRate: sampleRate) ?? .zero
    return FrameCount(max(0, length.frames - clip.sourceRange.end.frames))
  }

  /// `lefts` (ending at `seam`) and `rights` (starting at it) crossfaded into each other: the
  /// overlap is centred on the seam as far as every side's handle allows, and the longer side
  /// makes up what the shorter lacks. Where no overlap is possible at all (no handle either
  /// side, or one side has no clip), each side fades on its own over `crossfade.length` at
  /// the seam, as a cut's edge fade does.
  func joining(
    lefts: [Clip], rights: [Clip], at seam: FramePosition, _ crossfade: Crossfade
  ) throws(TimelineError) -> Join {
    guard crossfade.curve != .exponential else { throw .crossfadeCurve(crossfade.curve) }
    let leftRoom = lefts.map { handle(of: $0, after: true) }.min() ?? .zero
    let rightRoom = rights.map { handle(of: $0, after: false) }.min() ?? .zero
    let half = FrameCount(crossfade.length.frames / 2)
    var after = min(half, leftRoom)
    var before = min(crossfade.length - after, rightRoom)
    after = min(crossfade.length - before, leftRoom)
    // Nothing to overlap (no handle either side, or no clip on one side): no extension,
    // and each side fades to (or from) silence at the seam over the whole length.
    if lefts.isEmpty || rights.isEmpty || after + before == .zero {
      (after, before) = (.zero, .zero)
    }
    let overlap = after + before
    let fade = Fade(length: overlap > .zero ? overlap : crossfade.length, curve: crossfade.curve)
    var joined = Join(
      lefts: [], rights: [], after: after, before: before, leftRoom: leftRoom,
      rightRoom: rightRoom, sides: (lefts.map(\.id), rights.map(\.id)))
    for clip in lefts {
      var edited = clip
      edited.sourceRange = clip.sourceRange.withEnd(clip.sourceRange.end + after)
      edited.fadeOut = fade
      try edited.checkCrossfadeFits(at: .fadeOut, sampleRate: sampleRate)
      joined.lefts.append(edited)
    }
    for clip in rights {
      var edited = clip
      edited.timelineStart = clip.timelineStart - before
      edited.sourceRange = clip.sourceRange.withStart(clip.sourceRange.start - before)
      edited.fadeIn = fade
      try edited.checkCrossfadeFits(at: .fadeIn, sampleRate: sampleRate)
      joined.rights.append(edited)
    }
    return joined
  }

  /// What ``joining(lefts:rights:at:_:)`` made of one seam.
  struct Join {
    var lefts: [Clip]
    var rights: [Clip]
    /// How far the lefts now play past the seam, and the rights start before it.
    var after: FrameCount
    var before: FrameCount
    var leftRoom = FrameCount.zero
    var rightRoom = FrameCount.zero
    var sides: (lefts: [Clip.ID], rights: [Clip.ID]) = ([], [])

    func shortfall(track: Track.ID, at seam: FramePosition, asked: FrameCount) -> ShortCrossfade? {
      guard !sides.lefts.isEmpty, !sides.rights.isEmpty, after + before < asked else { return nil }
      return ShortCrossfade(
        track: track, at: seam, asked: asked, made: after + before, lefts: sides.lefts,
        leftHandle: leftRoom, rights: sides.rights, rightHandle: rightRoom)
    }
  }
}

extension Clip {
  /// Whether this clip and `later` (which starts after it) crossfade as `tape clip crossfade`
  /// makes them: they overlap, this clip's fade-out and `later`'s fade-in each cover exactly
  /// the overlap, and neither fade was cut by a range edit, so the stretch is one dissolve from
  /// one into the other (not two clips playing over each other by mistake).
  public func crossfades(into later: Clip) -> Bool {
    let overlap = timelineEnd.frames - later.timelineStart.frames
    return later.timelineStart > timelineStart && overlap > 0
      && fadeOut.length.frames == overlap && later.fadeIn.length.frames == overlap
      && fadeOut.isWhole && later.fadeIn.isWhole
  }

  /// Refuses a crossfade (this clip's new fade at `end`) that does not fit beside its other
  /// fade.
  func checkCrossfadeFits(
    at end: TimelineError.FadeEnd, sampleRate: Int
  ) throws(TimelineError) {
    guard fadeIn.length + fadeOut.length > length else { return }
    let (crossfade, other) =
      end == .fadeIn ? (fadeIn.length, fadeOut.length) : (fadeOut.length, fadeIn.length)
    throw .crossfadeDoesNotFit(
      clip: id, crossfade: crossfade, room: length - other, sampleRate: sampleRate)
  }
}
