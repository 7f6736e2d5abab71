/// Edits of a stretch of time across tracks, and of whole clips and tracks: range cuts with and
/// without ripple, inserted gaps, copies, reordering. Like every edit here they return commands
/// carrying final state.
extension Project {
  // MARK: Range edits

  /// Removes `range` from the timeline of `tracks` (every track when nil): clips inside it go,
  /// clips crossing an edge are trimmed to it, a clip spanning it is split in two (the part
  /// after it gets a new id from `newClipID`). With `ripple`, everything after the range on
  /// those tracks moves left by its length, closing the gap, their envelopes too
  /// (``Envelope/removing(_:)``).
  ///
  /// Everywhere outside the range the audio is exactly what it was: a fade the range cuts
  /// through keeps the gain of every frame that remains, as the part of its curve that
  /// remains (``Fade/silentCut``, ``Fade/fullCut``), the rule envelopes follow. A new edge that
  /// cut no fade is a hard cut, or fades over `edgeFade` when its length is not zero; an edge
  /// fade that does not fit beside a part's other fade is refused, naming every such part at
  /// once (``TimelineError/edgeFadeDoesNotFit(clip:end:fade:room:otherFade:sampleRate:)``,
  /// ``TimelineError/edgeFadesDoNotFit(_:sampleRate:)``).
  ///
  /// ```swift
  /// // Remove the "um" at 12.3–12.8 s from every track and close the gap.
  /// try project.cutRange(FrameRange(start: 590_400, end: 614_400), ripple: true) { ids.newClipID() }
  /// ```
  ///
  /// With `ripple` and a `crossfade`, the two sides of the range are joined by a real
  /// crossfade instead of edge fades: the clips ending at the range's start play on past the
  /// join and the clips starting at its end start before it, each over the audio the cut
  /// removed (their handles), with complementary curves (``crossfadeClips(_:_:_:)``;
  /// ``rippleCrossfadeShortfalls(_:tracks:crossfade:)`` says where a handle was short).
  public func cutRange(
    _ range: FrameRange, tracks: [Track.ID]? = nil, ripple: Bool, edgeFade: Fade = .none,
    crossfade: Crossfade? = nil, newClipID: () -> Clip.ID
  ) throws(TimelineError) -> [Command] {
    try rippleCut(
      range, tracks: tracks, ripple: ripple, edgeFade: edgeFade, crossfade: crossfade,
      newClipID: newClipID
    ).commands
  }

  /// Where `cutRange(range, tracks:, ripple: true, crossfade:)` makes a shorter crossfade than
  /// asked, because a side's source had too little audio beyond the join.
  public func rippleCrossfadeShortfalls(
    _ range: FrameRange, tracks: [Track.ID]? = nil, crossfade: Crossfade
  ) throws(TimelineError) -> [ShortCrossfade] {
    var next: Int64 = 0
    return try rippleCut(range, tracks: tracks, ripple: true, crossfade: crossfade) {
      next -= 1
      return Clip.ID(next)
    }.shortfalls
  }

  private func rippleCut(
    _ range: FrameRange, tracks: [Track.ID]?, ripple: Bool, edgeFade: Fade = .none,
    crossfade: Crossfade?, newClipID: () -> Clip.ID
  ) throws(TimelineError) -> (commands: [Command], shortfalls: [ShortCrossfade]) {
    guard range.count > .zero else { throw .emptyRange(range, sampleRate: sampleRate) }
    let joins = ripple && crossfade != nil
    var commands: [Command] = []
    var shortfalls: [ShortCrossfade] = []
    var misfits: [EdgeFadeMisfit] = []
    for track in try chosenTracks(tracks) {
      var edited = track
      var clips: [Clip] = []
      // The sides of the join: parts with a hard edge at the range's start or end.
      var lefts: [Int] = []
      var rights: [Int] = []
      // The clips the right sides were cut from: a spanning clip's right part is new, and its
      // old id is the one a note can name.
      var rightOrigins: [Clip.ID] = []
      for clip in track.clips {
        let (before, after) = clip.parts(
          outside: range, edgeFade: joins ? .none : edgeFade, misfits: &misfits)
        if let before {
          if joins && clip.timelineEnd > range.start && before.fadeOut.length == .zero {
            lefts.append(clips.count)
          }
          clips.append(before)
        }
        if var after {
          if before != nil && after.id == clip.id { after = after.withID(newClipID()) }
          if ripple && after.timelineStart >= range.end {
            after = after.moved(to: after.timelineStart - range.count)
          }
          if joins && clip.timelineStart < range.end && after.fadeIn.length == .zero {
            rights.append(clips.count)
            rightOrigins.append(clip.id)
          }
          clips.append(after)
        }
      }
      if let crossfade, joins, !lefts.isEmpty || !rights.isEmpty {
        var joined = try joining(
          lefts: lefts.map { clips[$0] }, rights: rights.map { clips[$0] }, at: range.start,
          crossfade)
        joined.sides.rights = rightOrigins
        for (index, clip) in zip(lefts + rights, joined.lefts + joined.rights) {
          clips[index] = clip
        }
        if let short = joined.shortfall(track: track.id, at: range.start, asked: crossfade.length) {
          shortfalls.append(short)
        }
      }
      edited.clips = ClipList(clips)
      if ripple { edited = edited.removingTime(range) }
      if edited != track { commands.append(.setTrack(edited)) }
    }
    if ripple { commands += sendsMoved(from: try chosenTracks(tracks)) { $0.removing(range) } }
    if let first = misfits.first {
      throw misfits.count == 1
        ? .edgeFadeDoesNotFit(
          clip: first.clip, end: first.end, fade: first.fade, room: first.room,
          otherFade: first.otherFade, sampleRate: sampleRate)
        : .edgeFadesDoNotFit(misfits, sampleRate: sampleRate)
    }
    if ripple { commands += markersRippled(removing: range) }
    return (commands, shortfalls)
  }

  /// Opens a gap of `length` at `position` on `tracks` (every track when nil): clips starting
  /// at or after it move right by `length`; a clip playing across it is split there (the right
  /// part gets a new id) and its right part moves. A split inside a fade keeps every frame's
  /// gain, as ``Clip/split(at:newID:sampleRate:)`` does.
  public func insertGap(
    at position: FramePosition, length: FrameCount, tracks: [Track.ID]? = nil,
    newClipID: () -> Clip.ID
  ) throws(TimelineError) -> [Command] {
    guard length > .zero else { throw .emptyGap }
    var commands: [Command] = []
    for track in try chosenTracks(tracks) {
      var edited = track
      var clips: [Clip] = []
      for clip in track.clips {
        if clip.timelineStart >= position {
          clips.append(clip.moved(to: clip.timelineStart + length))
        } else if clip.timelineEnd > position {
          let (left, right) = try clip.split(
            at: position, newID: newClipID(), sampleRate: sampleRate)
          clips += [left, right.moved(to: position + length)]
        } else {
          clips.append(clip)
        }
      }
      edited.clips = ClipList(clips)
      edited = edited.openingTime(at: position, length: length)
      if edited != track { commands.append(.setTrack(edited)) }
    }
    commands += sendsMoved(from: try chosenTracks(tracks)) {
      $0.opening(at: position, length: length)
    }
    return commands + markersShifted(openingAt: position, length: length)
  }

  /// Removes a clip; with `ripple`, every clip of its track that starts at or after its end
  /// moves left by its length, closing the hole, and the track's envelope with them
  /// (``Envelope/removing(_:)``).
  ///
  /// A ripple removal of a clip that another clip overlaps is refused
  /// (``TimelineError/rippleOverlap(removed:range:staying:track:envelope:sampleRate:)``): the
  /// overlapping clip would stay where it is while the
  /// clips after the hole (and the envelope) moved left into it. Cutting the clip's time from
  /// the track (``cutRange(_:tracks:ripple:edgeFade:crossfade:newClipID:)``) cuts both.
  public func removeClip(_ id: Clip.ID, ripple: Bool) throws(TimelineError) -> [Command] {
    guard let (clip, track) = self.clip(id) else { throw .unknownClip(id) }
    guard ripple else { return [.removeClips([id])] }
    if let staying = track.clips.first(where: {
      $0.id != id && $0.timelineStart < clip.timelineEnd && $0.timelineEnd > clip.timelineStart
    }) {
      throw .rippleOverlap(
        removed: id, range: clip.timelineRange, staying: staying.id, track: track.id,
        envelope: track.envelope != nil, sampleRate: sampleRate)
    }
    var edited = track
    edited.clips = ClipList(
      track.clips.compactMap { other in
        if other.id == id { return nil }
        return other.timelineStart >= clip.timelineEnd
          ? other.moved(to: other.timelineStart - clip.length) : other
      })
    edited = edited.removingTime(clip.timelineRange)
    return [.setTrack(edited)] + sendsMoved(from: [track]) { $0.removing(clip.timelineRange) }
      + markersRippled(removing: clip.timelineRange)
  }

  /// The sends from `tracks` whose envelopes `move` changes, changed: a send's envelope moves
  /// with the clips of the track it sends, as that track's own envelope does.
  func sendsMoved(from tracks: [Track], _ move: (Envelope) -> Envelope) -> [Command] {
    let ids = Set(tracks.map(\.id))
    return sends.compactMap { send in
      guard ids.contains(send.from), let envelope = send.envelope else { return nil }
      var moved = send
      moved.envelope = move(envelope)
      return moved == send ? nil : .setSend(moved)
    }
  }

  /// Splits every clip of `tracks` (every track when nil) that plays across `position` there:
  /// each left part keeps its id, each right part gets one from `newClipID`, in display order.
  /// A split inside a fade keeps every frame's gain (``Clip/split(at:newID:sampleRate:)``).
  public func splitAll(
    at position: FramePosition, tracks: [Track.ID]? = nil, newClipID: () -> Clip.ID
  ) throws(TimelineError) -> [Command] {
    var commands: [Command] = []
    for track in try chosenTracks(tracks) {
      for clip in track.clips where clip.timelineStart < position && clip.timelineEnd > position {
        let (left, right) = try clip.split(at: position, newID: newClipID(), sampleRate: sampleRate)
        commands += [.setClip(left, track: track.id), .setClip(right, track: track.id)]
      }
    }
    return commands
  }

  /// Slips the audio inside clip `id` by `offset` (later audio for a positive one) while the
  /// clip stays where it is on the timeline, with its length and fades: its crop moves through
  /// its source. A slip past either end of the source is refused with the most that fits.
  public func slipClip(_ id: Clip.ID, by offset: Int64) throws(TimelineError) -> [Command] {
    guard let (clip, track) = self.clip(id) else { throw .unknownClip(id) }
    let available = source(clip.source)?.frameCount(atRate: sampleRate) ?? .zero
    let start = clip.sourceRange.start.frames + offset
    let end = clip.sourceRange.end.frames + offset
    guard start >= 0, end <= available.frames else {
      throw .slipOutsideSource(
        clip: id, offset: offset,
        most: offset < 0
          ? -clip.sourceRange.start.frames : available.frames - clip.sourceRange.end.frames,
        sampleRate: sampleRate)
    }
    var slipped = clip
    slipped.sourceRange = FrameRange(start: FramePosition(start), count: clip.length)
    return [.setClip(slipped, track: track.id)]
  }

  // MARK: Overwrite

  /// Places clips over what lies under them, as Pro Tools' and Reaper's default edit modes
  /// do: clips in `removing` are taken away first (a moved clip does not cut itself), then on
  /// each placed clip's track the stretch it covers is cleared as
  /// ``cutRange(_:tracks:ripple:edgeFade:crossfade:newClipID:)`` clears it without ripple
  /// (clips under it trimmed, split, with their cut fades keeping every remaining frame's gain,
  /// or removed), then the placed clips are added. The commands are one edit: one undo step.
  ///
  /// ```swift
  /// // c7 moved to 12 s on t2, replacing what was there.
  /// let moved = project.clip(Clip.ID(7))!.clip.moved(to: FramePosition(576_000))
  /// try project.overwriting([(moved, Track.ID(2))], removing: [moved.id]) { ids.newClipID() }
  /// ```
  public func overwriting(
    _ placed: [(clip: Clip, track: Track.ID)], removing: [Clip.ID] = [],
    newClipID: () -> Clip.ID
  ) throws(TimelineError) -> [Command] {
    var edited = try clearing(under: placed, removing: removing, newClipID: newClipID)
    for (clip, track) in placed {
      edited = try edited.applying(edited.addClip(clip, to: track))
    }
    return tracks.compactMap { original in
      edited.track(original.id).flatMap { $0 == original ? nil : .setTrack($0) }
    }
  }

  /// This project with `removing` taken away and, on each placed clip's track, the stretch it
  /// will cover cleared (``overwriting(_:removing:newClipID:)``).
  func clearing(
    under placed: [(clip: Clip, track: Track.ID)], removing: [Clip.ID] = [],
    newClipID: () -> Clip.ID
  ) throws(TimelineError) -> Project {
    var cleared = self
    if !removing.isEmpty { cleared = try cleared.applying(cleared.removeClips(removing)) }
    for (clip, track) in placed {
      guard cleared.track(track) != nil else { throw .unknownTrack(track) }
      let covered = clip.timelineRange
      guard covered.count > .zero,
        cleared.track(track)?.clips.contains(where: {
          $0.timelineStart < covered.end && covered.start < $0.timelineEnd
        }) == true
      else { continue }
      cleared = try cleared.applying(
        cleared.cutRange(covered, tracks: [track], ripple: false, newClipID: newClipID))
    }
    return cleared
  }

  // MARK: Copies

  /// A new clip `newID` with `id`'s source range, gain and fades, starting at `position` on
  /// `track` (its own track when nil).
  public func copyClip(
    _ id: Clip.ID, to position: FramePosition, track: Track.ID?, newID: Clip.ID
  ) throws(TimelineError) -> [Command] {
    guard let (clip, own) = self.clip(id) else { throw .unknownClip(id) }
    return try addClip(clip.withID(newID).moved(to: position), to: track ?? own.id)
  }

  /// A copy of track `id` (settings and clips, the clips under new ids), named `name`, placed
  /// right after it.
  public func duplicateTrack(
    _ id: Track.ID, newID: Track.ID, name: String, effectIDs: [Effect.ID] = [],
    newClipID: () -> Clip.ID
  ) throws(TimelineError) -> [Command] {
    guard let track = self.track(id) else { throw .unknownTrack(id) }
    guard self.track(newID) == nil else { throw .duplicateID("\(newID)") }
    var copy = Track(
      id: newID, name: name, gain: track.gain, pan: track.pan, isMuted: track.isMuted,
      isSolo: track.isSolo, envelope: track.envelope, panEnvelope: track.panEnvelope)
    try copy.validateSettings(sampleRate: sampleRate)
    copy.clips = ClipList(track.clips.map { $0.withID(newClipID()) })
    // The copy's effects, under the ids given (one per effect of the track; none, no effects).
    copy.effects = zip(track.effects, effectIDs).map { effect, id in
      Effect(
        id: id, plugin: effect.plugin, parameters: effect.parameters,
        isBypassed: effect.isBypassed, state: effect.state, sidechain: effect.sidechain,
        automation: effect.automation)
    }
    var order = tracks.map(\.id)
    order.insert(newID, at: (order.firstIndex(of: id) ?? order.count - 1) + 1)
    return [.setTrack(copy), .setTrackOrder(order)]
  }

  /// The tracks `ids` names (every track when nil), in display order; unknown ids refused.
  func chosenTracks(_ ids: [Track.ID]?) throws(TimelineError) -> [Track] {
    guard let ids else { return tracks }
    for id in ids where track(id) == nil { throw .unknownTrack(id) }
    let chosen = Set(ids)
    return tracks.filter { chosen.contains($0.id) }
  }
}

extension Clip {
  /// The same clip under another id, and without a name (a name calls one clip).
  public func withID(_ newID: Clip.ID) -> Clip {
    Clip(
      id: newID, source: source, timelineStart: timelineStart, sourceRange: sourceRange,
      gain: gain, fadeIn: fadeIn, fadeOut: fadeOut)
  }

  /// What remains of this clip outside `range`: the part before it and the part after it
  /// (either nil when nothing remains there; both keep this clip's id). Every frame that
  /// remains keeps its gain exactly: a fade the range cuts through keeps the part of its curve
  /// that remains (``leftPart(endingAt:)``, ``rightPart(startingAt:)``). A new edge that cut no
  /// fade gets `edgeFade`; one that does not fit beside the part's other fade is returned in
  /// `misfits` for the caller to name with the others.
  func parts(
    outside range: FrameRange, edgeFade: Fade, misfits: inout [EdgeFadeMisfit]
  ) -> (before: Clip?, after: Clip?) {
    let (start, end) = (timelineStart, timelineEnd)
    guard start < range.end, end > range.start else {
      return start >= range.end ? (nil, self) : (self, nil)
    }
    var before: Clip?
    if start < range.start {
      var part = leftPart(endingAt: range.start)
      if part.fadeOut.length == .zero && edgeFade.length > .zero {
        part.fadeOut = edgeFade
        if let misfit = part.edgeFadeMisfit(edgeFade, at: .fadeOut) { misfits.append(misfit) }
      }
      before = part
    }
    var after: Clip?
    if end > range.end {
      var part = rightPart(startingAt: range.end)
      if part.fadeIn.length == .zero && edgeFade.length > .zero {
        part.fadeIn = edgeFade
        if let misfit = part.edgeFadeMisfit(edgeFade, at: .fadeIn) { misfits.append(misfit) }
      }
      after = part
    }
    return (before, after)
  }

  /// The part of this clip before timeline frame `position` (`timelineStart < position ≤
  /// timelineEnd`), under the same id, every frame at exactly the gain it had: a fade-out the
  /// new end cuts keeps the part of its curve before it (its silent end cut away), a fade-in
  /// longer than the part keeps its first frames (its full-level end cut away).
  public func leftPart(endingAt position: FramePosition) -> Clip {
    let kept = position - timelineStart
    var part = self
    part.sourceRange = sourceRange.withEnd(sourceRange.start + kept)
    part.fadeIn = fadeIn.keepingSilentEnd(kept)
    part.fadeOut = fadeOut.droppingSilentEnd(timelineEnd - position)
    return part
  }

  /// The part of this clip from timeline frame `position` on (`timelineStart ≤ position <
  /// timelineEnd`), under the same id, every frame at exactly the gain it had (the mirror of
  /// ``leftPart(endingAt:)``).
  public func rightPart(startingAt position: FramePosition) -> Clip {
    let kept = timelineEnd - position
    var part = self
    part.timelineStart = position
    part.sourceRange = sourceRange.withStart(sourceRange.start + (position - timelineStart))
    part.fadeIn = fadeIn.droppingSilentEnd(position - timelineStart)
    part.fadeOut = fadeOut.keepingSilentEnd(kept)
    return part
  }

  /// Why a new edge's fade (already set at `end`) does not fit beside the clip's other fade;
  /// nil when it fits.
  private func edgeFadeMisfit(_ fade: Fade, at end: TimelineError.FadeEnd) -> EdgeFadeMisfit? {
    guard fadeIn.length + fadeOut.length > length else { return nil }
    let otherFade = end == .fadeIn ? fadeOut.length : fadeIn.length
    return EdgeFadeMisfit(
      clip: id, end: end, fade: fade.length, room: length - otherFade, otherFade: otherFade)
  }
}

/// A new edge's fade that does not fit beside the other fade of the clip part it was put on:
/// which clip, at which end, how long the fade, and how much room the other fade leaves.
public struct EdgeFadeMisfit: Sendable, Hashable {
  public var clip: Clip.ID
  public var end: TimelineError.FadeEnd
  public var fade: FrameCount
  public var room: FrameCount
  public var otherFade: FrameCount

  public init(
    clip: Clip.ID, end: TimelineError.FadeEnd, fade: FrameCount, room: FrameCount,
    otherFade: FrameCount
  ) {
    self.clip = clip
    self.end = end
    self.fade = fade
    self.room = room
    self.otherFade = otherFade
  }
}
