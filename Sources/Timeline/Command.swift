/// One change to a project, carrying the final state of what it touches, never a delta.
///
/// Commands are what the store's single `commit` takes and what the pure edit functions
/// (``Project/splitClip(_:at:newID:)`` and friends) return. A command says "clip c7 is now
/// this value", never "move c7 by one second", so replaying it, undoing around it or receiving
/// it from another process can never apply a change to the wrong base.
///
/// ```swift
/// let commands = try project.splitClip(Clip.ID(7), at: 96_000, newID: Clip.ID(8))
/// // [.setClip(left, track: t1), .setClip(right, track: t1)]
/// ```
public enum Command: Sendable, Hashable {
  /// Adds the source, or replaces the source with the same id.
  case setSource(Source)
  /// Removes sources; fails while a clip uses one.
  case removeSources([Source.ID])
  /// Makes the track exactly this value: its settings *and* its clips. A new track is appended
  /// after the existing ones. Clips the track held that are not in `track.clips` are removed;
  /// a clip listed here that sat on another track moves to this one.
  case setTrack(Track)
  /// Gives the tracks this display order; must list every track exactly once.
  case setTrackOrder([Track.ID])
  /// Removes tracks together with their clips.
  case removeTracks([Track.ID])
  /// Adds the clip to `track`, or replaces the clip with the same id (moving it to `track` if
  /// it was elsewhere).
  case setClip(Clip, track: Track.ID)
  /// Removes clips.
  case removeClips([Clip.ID])
  /// Sets the gain of the whole mix.
  case setMasterGain(Gain)
  /// Makes the chain of `owner` exactly these effects, in this order. An effect listed here
  /// that sat in another chain moves to this one; effects the chain held that are not listed
  /// are removed.
  case setEffects([Effect], on: ChainOwner)
  /// Adds the marker, or replaces the marker with the same id (moved, renamed).
  case setMarker(Marker)
  /// Removes markers.
  case removeMarkers([Marker.ID])
  /// Adds the send, or replaces the send with the same id.
  case setSend(Send)
  /// Removes sends.
  case removeSends([Send.ID])
  /// Keeps the take (a recorded alternative that does not play), or replaces the one with its
  /// id.
  case setTake(Take)
  /// Forgets kept takes.
  case removeTakes([Clip.ID])
}

extension Project {
  /// The project after `commands`, applied in order, with everything they touch validated.
  ///
  /// This is the reference meaning of a command list. The store writes the same result to its
  /// tables; tests compare the two.
  public func applying(_ commands: [Command]) throws(TimelineError) -> Project {
    try applyingWithChanges(commands).project
  }

  /// ``applying(_:)``, also returning the ids of everything the commands may have changed
  /// (added, removed or modified): what a store must write and a subscriber re-read.
  public func applyingWithChanges(
    _ commands: [Command]
  ) throws(TimelineError) -> (
    project: Project, changed: ChangedIDs
  ) {
    var result = self
    var changed = ChangedIDs()
    var setTakes: Set<Clip.ID> = []
    for command in commands {
      try result.apply(command, changed: &changed)
      if case .setTake(let take) = command { setTakes.insert(take.id) }
    }
    result.followPlayingClips(from: self, changed: &changed, setTakes: setTakes)
    if changed.takes {
      for take in result.takes where setTakes.contains(take.id) { try result.validate(take) }
    }
    let located = result.locate(changed.clips)
    do {
      try result.validate(tracks: changed.tracks, clips: located.values.lazy.map(\.clip))
    } catch {
      // Sets iterate in an order that differs per process: when several things are invalid,
      // go again in id order so the error names the same one every time.
      try result.validate(
        tracks: changed.tracks.sorted(),
        clips: located.sorted { $0.key < $1.key }.lazy.map(\.value.clip))
    }
    return (result, changed)
  }

  /// Validates the settings of `tracks` (those still in the project) and `clips`, in the order
  /// given.
  private func validate(
    tracks: some Sequence<Track.ID>, clips: some Sequence<Clip>
  ) throws(TimelineError) {
    for id in tracks {
      if let track = track(id) { try track.validateSettings(sampleRate: sampleRate) }
    }
    for clip in clips { try validate(clip) }
  }

  private mutating func apply(
    _ command: Command, changed: inout ChangedIDs
  )
    throws(TimelineError)
  {
    switch command {
    case .setSource(let source):
      try source.validate()
      changed.sources.insert(source.id)
      if let index = sources.firstIndex(where: { $0.id == source.id }) {
        sources[index] = source
        // A changed source may invalidate the crops of the clips that use it.
        changed.clips.formUnion(allClips.filter { $0.source == source.id }.map(\.id))
      } else {
        sources.append(source)
        sources.sort { $0.id < $1.id }
      }
    case .removeSources(let ids):
      for id in ids {
        guard sources.contains(where: { $0.id == id }) else { throw .unknownSource(id) }
        let users =
          allClips.filter { $0.source == id }.map(\.id)
          + takes.filter { $0.clip.source == id }.map(\.id)
        guard users.isEmpty else { throw .sourceInUse(id, clips: users) }
        sources.removeAll { $0.id == id }
        changed.sources.insert(id)
      }
    case .setTrack(let track):
      let incoming = Set(track.clips.map(\.id))
      guard incoming.count == track.clips.count else {
        throw .duplicateID(track.clips.map(\.id.description).joined(separator: ","))
      }
      // Touch only the tracks that lose a clip, found by lookups while the track is long.
      for index in tracks.indices where tracks[index].id != track.id {
        let leaving: [Clip.ID] =
          incoming.count < tracks[index].clips.count
          ? incoming.filter { tracks[index].clips.contains(id: $0) }
          : tracks[index].clips.map(\.id).filter { incoming.contains($0) }
        if !leaving.isEmpty { tracks[index].clips.remove(ids: leaving) }
      }
      var sorted = track
      if !sorted.clips.isSorted { sorted.clips.sort(by: Clip.timelineOrder) }
      let incomingEffects = Set(track.effects.map(\.id))
      if !incomingEffects.isEmpty
        || tracks.first(where: { $0.id == track.id }).map({ !$0.effects.isEmpty }) == true
      {
        try takeEffects(incomingEffects, into: .track(track.id), count: track.effects.count)
        changed.effects = true
      }
      if let index = tracks.firstIndex(where: { $0.id == track.id }) {
        let before = tracks[index].clips
        let rerouted = tracks[index].output != track.output
        tracks[index] = sorted
        if rerouted { try validateRouting(startingAt: track.id) }
        if before != sorted.clips {
          // Clips added, changed or moved here, and clips this track no longer lists.
          changed.clips.formUnion(Set(sorted.clips).subtracting(before).map(\.id))
          changed.clips.formUnion(Set(before.map(\.id)).subtracting(incoming))
        }
      } else {
        tracks.append(sorted)
        changed.clips.formUnion(incoming)
        if track.output != nil { try validateRouting(startingAt: track.id) }
      }
      changed.tracks.insert(track.id)
    case .setTrackOrder(let order):
      guard order.count == tracks.count, Set(order) == Set(tracks.map(\.id)) else {
        throw .trackOrderMismatch
      }
      let byID = Dictionary(uniqueKeysWithValues: tracks.map { ($0.id, $0) })
      tracks = order.compactMap { byID[$0] }
      changed.trackOrder = true
    case .removeTracks(let ids):
      for id in ids {
        guard let index = tracks.firstIndex(where: { $0.id == id }) else {
          throw .unknownTrack(id)
        }
        changed.clips.formUnion(tracks[index].clips.map(\.id))
        changed.tracks.insert(id)
        if takes.contains(where: { $0.track == id }) {
          takes.removeAll { $0.track == id }
          changed.takes = true
        }
        if !tracks[index].effects.isEmpty { changed.effects = true }
        tracks.remove(at: index)
        // What the track received goes to the master; its sends and those to it go.
        for other in tracks.indices where tracks[other].output == id {
          tracks[other].output = nil
          changed.tracks.insert(tracks[other].id)
        }
        if sends.contains(where: { $0.from == id || $0.to == id }) {
          sends.removeAll { $0.from == id || $0.to == id }
          changed.sends = true
        }
        // Side chains from it go (the effects stay, their side-chain inputs silent).
        for other in tracks.indices {
          for slot in tracks[other].effects.indices
          where tracks[other].effects[slot].sidechain == id {
            tracks[other].effects[slot].sidechain = nil
            changed.effects = true
          }
        }
      }
    case .setClip(let clip, let trackID):
      guard let target = tracks.firstIndex(where: { $0.id == trackID }) else {
        throw .unknownTrack(trackID)
      }
      if tracks[target].clips.count(of: clip.id) == 1,
        let place = tracks[target].clips.index(of: clip.id),
        tracks[target].clips[place].timelineStart == clip.timelineStart,
        !tracks.indices.contains(where: { $0 != target && tracks[$0].clips.contains(id: clip.id) })
      {
        // Where it was (a gain, a fade, a crop that keeps the start): replaced in place, one
        // chunk copied, instead of taken out and put back.
        tracks[target].clips[place] = clip
      } else {
        for index in tracks.indices where tracks[index].clips.contains(id: clip.id) {
          tracks[index].clips.remove(id: clip.id)
        }
        tracks[target].clips.insertInOrder(clip)
      }
      changed.clips.insert(clip.id)
    case .setMasterGain(let gain):
      try gain.validate(as: "master gain")
      masterGain = gain
      // Project-level settings travel with the format.
      changed.format = true
    case .setEffects(let effects, let owner):
      if case .track(let id) = owner, track(id) == nil { throw .unknownTrack(id) }
      for effect in effects { try effect.validate(sampleRate: sampleRate) }
      try takeEffects(Set(effects.map(\.id)), into: owner, count: effects.count)
      switch owner {
      case .master:
        // The master's chain runs on the whole mix, after every track: nothing to align a
        // side chain with.
        if let effect = effects.first(where: { $0.sidechain != nil }) {
          throw .invalidEffect(
            effect.id,
            reason:
              "an effect on the master cannot take a side chain; put it on a track (a bus) instead"
          )
        }
        masterEffects = effects
      case .track(let id):
        if let index = tracks.firstIndex(where: { $0.id == id }) { tracks[index].effects = effects }
      }
      changed.effects = true
      if case .track(let id) = owner, effects.contains(where: { $0.sidechain != nil }) {
        try validateRouting(startingAt: id)
      }
    case .setMarker(let marker):
      try validate(marker)
      markers.removeAll { $0.id == marker.id }
      let position = markers.firstIndex { Marker.timelineOrder(marker, $0) } ?? markers.endIndex
      markers.insert(marker, at: position)
      changed.markers = true
    case .removeMarkers(let ids):
      for id in ids {
        guard markers.contains(where: { $0.id == id }) else { throw .unknownMarker(id) }
        markers.removeAll { $0.id == id }
      }
      changed.markers = true
    case .setSend(let send):
      sends.removeAll { $0.id == send.id }
      let position = sends.firstIndex { send.id < $0.id } ?? sends.endIndex
      sends.insert(send, at: position)
      try validateRouting(startingAt: send.from)
      changed.sends = true
    case .removeSends(let ids):
      for id in ids {
        guard sends.contains(where: { $0.id == id }) else { throw .unknownSend(id) }
        sends.removeAll { $0.id == id }
      }
      changed.sends = true
    case .removeClips(let ids):
      for id in ids {
        guard let (index, _) = place(of: id) else { throw .unknownClip(id) }
        tracks[index].clips.remove(id: id)
        changed.clips.insert(id)
      }
    case .setTake(let take):
      takes.removeAll { $0.id == take.id }
      let position = takes.firstIndex { take.id < $0.id } ?? takes.endIndex
      takes.insert(take, at: position)
      changed.takes = true
    case .removeTakes(let ids):
      for id in ids {
        guard takes.contains(where: { $0.id == id }) else { throw .unknownClip(id) }
        takes.removeAll { $0.id == id }
      }
      changed.takes = true
    }
  }

  /// Takes the effects `ids` out of every chain but `owner`'s (they are moving there); fails
  /// when the list names an effect twice.
  private mutating func takeEffects(
    _ ids: Set<Effect.ID>, into owner: ChainOwner, count: Int
  ) throws(TimelineError) {
    guard ids.count == count else { throw .duplicateID("an effect id") }
    if ids.isEmpty { return }
    if owner != .master { masterEffects.removeAll { ids.contains($0.id) } }
    for index in tracks.indices
    where ChainOwner.track(tracks[index].id) != owner
      && tracks[index].effects.contains(where: { ids.contains($0.id) })
    {
      tracks[index].effects.removeAll { ids.contains($0.id) }
    }
  }
}
