/// A stretch of the timeline where two versions' mixes can differ, and what a diff between them
/// blames for it (clip, track, source and effect ids, or `master`).
public struct SoundingChange: Sendable, Hashable {
  public var range: FrameRange
  /// An id (`c3`), `master`, or for a mute or solo the ids of the tracks whose mute or solo
  /// changed, joined by commas (`t2,t3`).
  public var blame: String

  public init(range: FrameRange, blame: String) {
    self.range = range
    self.blame = blame
  }
}

extension ProjectDiff {
  /// Where the mixes of `a` and `b` (the two sides of this diff) can differ, each stretch with
  /// what the diff blames for it; empty when nothing that changed can sound. Conservative: a
  /// stretch may turn out to sound the same, never the other way round; but clips that were
  /// only split (``silentSplits()``: every frame played from the same source frame at the
  /// same gain) are known to change nothing.
  ///
  /// - A clip: where it was, if its track played there, and where it is, if its track plays.
  ///   Fades lie inside a clip, and so does a crossfade (two overlapping clips).
  /// - A source (relinked): every clip that plays it, on either side.
  /// - A track's gain, pan or envelope: its clips; a mute or solo: the clips of every track
  ///   whose turn to be heard it changed.
  /// - The master gain, or any effect: the whole project.
  /// - Anything that reaches an effect chain (a change on a track with effects, or any change
  ///   with effects on the master): the whole project, from 0 to the end, since an effect
  ///   carries state from the start, a tail past the change, and may look ahead.
  /// - A send, a track's output, or any change while either side routes a track into another
  ///   (a bus can hold effects, and a routed graph is delayed as a whole): the whole project.
  /// - Names, markers, the order of tracks: nothing.
  public func soundingChanges(from a: Project, to b: Project) -> [SoundingChange] {
    let end = max(a.timelineEnd, b.timelineEnd)
    guard end > .zero else { return [] }
    let whole = FrameRange(start: .zero, end: end)
    let byID = (
      Dictionary(a.tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }),
      Dictionary(b.tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    )
    let audible = (Set(a.mixedTracks.map(\.id)), Set(b.mixedTracks.map(\.id)))
    let masterEffects =
      !a.masterEffects.isEmpty || !b.masterEffects.isEmpty || a.hasRouting || b.hasRouting
    func hasEffects(_ track: Track.ID) -> Bool {
      !(byID.0[track]?.effects.isEmpty ?? true) || !(byID.1[track]?.effects.isEmpty ?? true)
    }
    var changes: [SoundingChange] = []
    func add(_ range: FrameRange, on track: Track.ID?, _ blame: String) {
      guard range.count > .zero else { return }
      let reachesEffects = masterEffects || track.map(hasEffects) == true
      changes.append(SoundingChange(range: reachesEffects ? whole : range, blame: blame))
    }
    /// Each clip of `track` on side `side` (0: a, 1: b), if the track is heard there.
    func addClips(of track: Track.ID, side: Int, _ blame: String) {
      let found = side == 0 ? byID.0[track] : byID.1[track]
      let heard = side == 0 ? audible.0.contains(track) : audible.1.contains(track)
      guard let found, heard else { return }
      for clip in found.clips {
        add(FrameRange(start: clip.timelineStart, count: clip.length), on: track, blame)
      }
    }
    if formatChanged || masterGainChanged {
      changes.append(SoundingChange(range: whole, blame: "master"))
    }
    for change in effects {
      changes.append(SoundingChange(range: whole, blame: change.id.description))
    }
    for change in sends {
      changes.append(SoundingChange(range: whole, blame: change.id.description))
    }
    for change in tracks where change.before != nil && change.after != nil {
      // A pan lane sounds on what the track receives too.
      if change.before?.output != change.after?.output
        || change.before?.panEnvelope != change.after?.panEnvelope
      {
        changes.append(SoundingChange(range: whole, blame: change.id.description))
      }
    }
    let splits = silentSplits()
    for change in clips where !splits.contains(change.id) {
      if let old = change.before, audible.0.contains(old.track) {
        add(
          FrameRange(start: old.clip.timelineStart, count: old.clip.length), on: old.track,
          change.id.description)
      }
      if let new = change.after, audible.1.contains(new.track) {
        add(
          FrameRange(start: new.clip.timelineStart, count: new.clip.length), on: new.track,
          change.id.description)
      }
    }
    for change in sources {
      for (side, project) in [a, b].enumerated() {
        for track in project.tracks
        where (side == 0 ? audible.0 : audible.1).contains(track.id) {
          for clip in track.clips where clip.source == change.id {
            add(
              FrameRange(start: clip.timelineStart, count: clip.length), on: track.id,
              change.id.description)
          }
        }
      }
    }
    // Mutes and solos: the tracks whose turn to be heard changed, blamed on the tracks whose
    // mute or solo did (a track added or removed soloed silences or frees the others).
    let switchers = switchingTracks(byID, audible)
    let blamed = diffSwitchers()
    for track in switchers {
      for side in 0...1 {
        addClips(of: track, side: side, blamed.isEmpty ? track.description : blamed)
      }
    }
    for change in tracks {
      guard let old = change.before, let new = change.after,
        old.gain != new.gain || old.pan != new.pan || old.envelope != new.envelope
      else { continue }
      addClips(of: change.id, side: 0, change.id.description)
      addClips(of: change.id, side: 1, change.id.description)
    }
    return changes
  }

  /// The clips whose changes only split clips: on each track, every old clip that changed is
  /// played now by new clips that are exactly its successive parts (``Clip/leftPart(endingAt:)``,
  /// ``Clip/rightPart(startingAt:)``: the same source frames at the same gain, fades cut so
  /// that every frame keeps its gain), and every new clip is one such part. Ids and names may
  /// differ. Any other change on a track keeps all of that track's clip changes sounding.
  public func silentSplits() -> Set<Clip.ID> {
    var byTrack: [Track.ID: (before: [Clip], after: [Clip], ids: [Clip.ID])] = [:]
    var mixed: Set<Track.ID> = []
    for change in clips {
      if let old = change.before, let new = change.after, old.track != new.track {
        mixed.insert(old.track)
        mixed.insert(new.track)
        continue
      }
      let track = (change.before ?? change.after)?.track
      guard let track else { continue }
      if let old = change.before { byTrack[track, default: ([], [], [])].before.append(old.clip) }
      if let new = change.after { byTrack[track, default: ([], [], [])].after.append(new.clip) }
      byTrack[track, default: ([], [], [])].ids.append(change.id)
    }
    var silent: Set<Clip.ID> = []
    for (track, group) in byTrack where !mixed.contains(track) && !group.before.isEmpty {
      var parts = group.after.sorted(by: Clip.timelineOrder)
      var explained = true
      for whole in group.before.sorted(by: Clip.timelineOrder) {
        var rest = whole
        while true {
          guard
            let index = parts.firstIndex(where: {
              $0.timelineStart == rest.timelineStart && $0.timelineEnd <= rest.timelineEnd
            })
          else {
            explained = false
            break
          }
          let part = parts.remove(at: index)
          let finished = part.timelineEnd == rest.timelineEnd
          let expected = finished ? rest : rest.leftPart(endingAt: part.timelineEnd)
          guard Self.sameSound(part, expected) else {
            explained = false
            break
          }
          if finished { break }
          rest = rest.rightPart(startingAt: part.timelineEnd)
        }
        if !explained { break }
      }
      if explained && parts.isEmpty { silent.formUnion(group.ids) }
    }
    return silent
  }

  /// Whether two clips play the same frames at the same gains: equal but for id and name.
  static func sameSound(_ a: Clip, _ b: Clip) -> Bool {
    var named = a
    named.name = b.name
    return named.withID(b.id) == b
  }

  /// The tracks on both sides that are heard on one and not the other.
  private func switchingTracks(
    _ tracks: ([Track.ID: Track], [Track.ID: Track]), _ audible: (Set<Track.ID>, Set<Track.ID>)
  ) -> [Track.ID] {
    tracks.0.keys.filter { tracks.1[$0] != nil && audible.0.contains($0) != audible.1.contains($0) }
      .sorted()
  }

  /// The tracks whose mute or solo this diff changes (or that came or went soloed), as one
  /// blame: `t2` or `t2,t3`.
  private func diffSwitchers() -> String {
    tracks.filter { change in
      switch (change.before, change.after) {
      case (let old?, let new?): old.isMuted != new.isMuted || old.isSolo != new.isSolo
      case (let old?, nil): old.isSolo
      case (nil, let new?): new.isSolo
      default: false
      }
    }.map(\.id.description).joined(separator: ",")
  }
}
