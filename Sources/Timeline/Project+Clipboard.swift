/// Range copy and paste: what plays in a stretch of time, kept as a ``Clipboard`` and placed
/// again elsewhere on the timeline.
extension Project {
  /// What plays in `range` on `tracks` (every track when nil, in display order), as a clipboard
  /// named `name`.
  ///
  /// Every clip that overlaps the range becomes a piece cut to it (its crop moved and
  /// shortened as a trim would), with its gain and the fades that lie in the range, every frame
  /// at exactly the gain it had (``Clip/leftPart(endingAt:)``, ``Clip/rightPart(startingAt:)``):
  /// - a fade wholly inside the range is kept as it is;
  /// - a fade wholly outside it is dropped: the piece starts (or ends) with what played at the
  ///   range's edge, a hard edge, exactly as the range played;
  /// - a fade the range cuts through keeps the part of its curve inside the range
  ///   (``Fade/silentCut``, ``Fade/fullCut``), as a cut keeps what remains of one.
  ///
  /// Each track's envelope, pan lane and sends' envelopes over the range are copied too
  /// (``Envelope/excerpt(_:)``), so that the pieces pasted on a track with the same settings
  /// play exactly what the range played, through its sends too. Track gain, pan, sends and
  /// effects are not copied: they belong to the track pasted onto.
  public func copyRange(
    _ range: FrameRange, tracks: [Track.ID]? = nil, name: String
  ) throws(TimelineError) -> Clipboard {
    try Clipboard.validate(name: name)
    guard range.count > .zero else { throw .emptyRange(range, sampleRate: sampleRate) }
    let chosen = try chosenTracks(tracks)
    var pieces: [(order: Int, piece: Clipboard.Piece)] = []
    for (order, track) in chosen.enumerated() {
      for clip in track.clips {
        guard let part = clip.timelineRange.intersection(range) else { continue }
        let kept = clip.rightPart(startingAt: part.start).leftPart(endingAt: part.end)
        let piece = Clipboard.Piece(
          track: track.id, copiedFrom: clip.id, source: clip.source,
          offset: part.start - range.start, sourceRange: kept.sourceRange, gain: clip.gain,
          fadeIn: kept.fadeIn, fadeOut: kept.fadeOut)
        pieces.append((order, piece))
      }
    }
    pieces.sort {
      ($0.piece.offset, $0.order, $0.piece.copiedFrom) < (
        $1.piece.offset, $1.order, $1.piece.copiedFrom
      )
    }
    let copied = chosen.map { track in
      Clipboard.CopiedTrack(
        id: track.id, envelope: track.envelope?.excerpt(range),
        panEnvelope: track.panEnvelope.map { ParameterEnvelope(curve: $0.curve.excerpt(range)) },
        sends: sends.filter { $0.from == track.id }.map { send in
          Clipboard.CopiedSend(id: send.id, to: send.to, envelope: send.envelope?.excerpt(range))
        })
    }
    return Clipboard(name: name, range: range, tracks: copied, pieces: pieces.map(\.piece))
  }

  /// Places `clipboard` at `position`: a new clip for each piece (ids from `newClipID`, taken
  /// first and in timeline order), at `position` plus its offset, on the track it was copied
  /// from, or on `tracks` (the clipboard's tracks mapped onto them in order: as many as it
  /// holds, each once). With `ripple`, a gap of the clipboard's length is opened there first on
  /// those tracks (``insertGap(at:length:tracks:newClipID:)``); with `overwrite`, what lies
  /// under each piece on its track is cleared first (``overwriting(_:removing:newClipID:)``);
  /// with neither, the pieces play over whatever is there (clips on a track sum).
  ///
  /// Each track's envelope over the pasted range becomes the copied one
  /// (``Envelope/replacing(_:with:)``): a track copied without an envelope brings a flat 0 dB,
  /// and a track without one that receives a flat 0 dB stays without. Its pan lane likewise
  /// (a track copied without one brings the pasted-on track's own pan, and a track without one
  /// that receives its own pan stays without), and so does the envelope of each of its sends
  /// that has a copied counterpart: the send copied (pasted on the track it came from), or
  /// else a copied send to the same track (a copied send without an envelope brings 0 dB).
  /// Sends with no counterpart keep their envelopes.
  ///
  /// A clipboard whose tracks (without `tracks`) or sources are no longer in the project is
  /// refused, naming them.
  public func paste(
    _ clipboard: Clipboard, at position: FramePosition, tracks destinations: [Track.ID]? = nil,
    ripple: Bool, overwrite: Bool = false, newClipID: () -> Clip.ID
  ) throws(TimelineError) -> [Command] {
    let copied = clipboard.tracks.map(\.id)
    let targets: [Track.ID]
    if let destinations {
      guard destinations.count == copied.count else {
        throw .clipboardTrackCount(name: clipboard.name, copied: copied, given: destinations.count)
      }
      var seen: Set<Track.ID> = []
      for id in destinations {
        guard track(id) != nil else { throw .unknownTrack(id) }
        guard seen.insert(id).inserted else { throw .trackNamedTwice(id) }
      }
      targets = destinations
    } else {
      for id in copied where track(id) == nil {
        throw .clipboardTrackGone(name: clipboard.name, track: id)
      }
      targets = copied
    }
    for piece in clipboard.pieces where source(piece.source) == nil {
      throw .clipboardSourceGone(name: clipboard.name, source: piece.source)
    }
    let target = Dictionary(uniqueKeysWithValues: zip(copied, targets))
    let place = Dictionary(uniqueKeysWithValues: tracks.enumerated().map { ($1.id, $0) })
    // The new ids first, in timeline order: the order they are printed in.
    // By offset, then the destination's place, then the clipboard's own order (a sort is not
    // stable).
    let ordered = clipboard.pieces.enumerated().sorted {
      ($0.element.offset, place[target[$0.element.track] ?? $0.element.track] ?? 0, $0.offset)
        < ($1.element.offset, place[target[$1.element.track] ?? $1.element.track] ?? 0, $1.offset)
    }.map(\.element)
    let pasted = ordered.map { piece in
      (track: target[piece.track] ?? piece.track, clip: piece.clip(id: newClipID(), at: position))
    }
    var base = self
    if ripple {
      base = try applying(
        insertGap(at: position, length: clipboard.length, tracks: targets, newClipID: newClipID))
    }
    if overwrite {
      base = try base.clearing(under: pasted.map { ($0.clip, $0.track) }, newClipID: newClipID)
    }
    let range = FrameRange(start: position, count: clipboard.length)
    let flat = Envelope(points: [Envelope.Point(time: .zero, decibels: 0)])
    var commands: [Command] = []
    for (copiedTrack, id) in zip(clipboard.tracks, targets) {
      guard let original = track(id), var edited = base.track(id) else { continue }
      edited.clips = ClipList(
        (edited.clips + pasted.filter { $0.track == id }.map(\.clip)).sorted(
          by: Clip.timelineOrder))
      if edited.envelope != nil || copiedTrack.envelope != nil {
        let replaced = (edited.envelope ?? flat).replacing(
          range, with: copiedTrack.envelope ?? flat)
        edited.envelope = edited.envelope == nil && replaced == flat ? nil : replaced
      }
      if clipboard.keepsLanes, edited.panEnvelope != nil || copiedTrack.panEnvelope != nil {
        let own = Envelope(points: [Envelope.Point(time: .zero, decibels: edited.pan)])
        let replaced = (edited.panEnvelope?.curve ?? own).replacing(
          range, with: copiedTrack.panEnvelope?.curve ?? own)
        edited.panEnvelope =
          edited.panEnvelope == nil && replaced == own ? nil : ParameterEnvelope(curve: replaced)
      }
      if edited != original { commands.append(.setTrack(edited)) }
      // Its sends: moved by a ripple, and over the range as the copied ones were.
      var unmatched = copiedTrack.sends
      for send in base.sends where send.from == id {
        var edited = send
        let match =
          unmatched.firstIndex { $0.id == send.id && copiedTrack.id == id }
          ?? unmatched.firstIndex { $0.to == send.to }
        if let match {
          let copiedSend = unmatched.remove(at: match)
          if send.envelope != nil || copiedSend.envelope != nil {
            let replaced = (send.envelope ?? flat).replacing(
              range, with: copiedSend.envelope ?? flat)
            edited.envelope = send.envelope == nil && replaced == flat ? nil : replaced
          }
        }
        if edited != self.send(send.id) { commands.append(.setSend(edited)) }
      }
    }
    return commands
  }
}

extension Envelope {
  /// The gain over `range` as an envelope of its own, its times from the range's start: a
  /// point at 0 with the gain at the range's start, the points inside it, and a point at its
  /// last frame with the gain there, each shape made explicit where a segment is cut
  /// (`explicitShape(at:)`), the last one a hold. Every frame of the range has the gain it
  /// had (``replacing(_:with:)`` puts it back).
  public func excerpt(_ range: FrameRange) -> Envelope {
    let (a, b) = (range.start.frames, range.end.frames)
    var kept = points(before: b).filter { $0.time.frames > a }
    kept.insert(
      Point(time: FramePosition(a), decibels: decibels(at: a), shape: explicitShape(at: a)), at: 0)
    var shifted = kept.map { point in
      Point(
        time: FramePosition(point.time.frames - a), decibels: point.decibels, shape: point.shape)
    }
    shifted[shifted.count - 1].shape = .hold
    return Envelope(points: shifted)
  }

  /// This envelope with `excerpt` (times from 0, as ``excerpt(_:)`` makes one) over `range`:
  /// before the range and from its end on, every frame keeps its gain; in it, frame
  /// `range.start + i` has the excerpt's gain at `i` (the excerpt's first gain before its
  /// first point, its last after its last). The result is ``compacted()``.
  public func replacing(_ range: FrameRange, with excerpt: Envelope) -> Envelope {
    guard !excerpt.points.isEmpty else { return self }
    let (p, end) = (range.start.frames, range.end.frames)
    var inner = excerpt.points.filter { $0.time.frames < range.count.frames }.map { point in
      Point(
        time: FramePosition(point.time.frames + p), decibels: point.decibels, shape: point.shape)
    }
    if let first = excerpt.points.first, inner.first?.time.frames != p {
      inner.insert(Point(time: FramePosition(p), decibels: first.decibels, shape: .hold), at: 0)
    }
    inner[inner.count - 1].shape = .hold
    var kept = points(before: p) + inner
    kept.append(
      Point(time: FramePosition(end), decibels: decibels(at: end), shape: explicitShape(at: end)))
    kept += points.filter { $0.time.frames > end }
    return Envelope(points: kept).compacted()
  }
}
