/// The pure edit functions: each reads this snapshot, checks the edit, and returns the commands
/// that carry the final state. Nothing here changes the project; commit the commands to the store.
///
/// ```swift
/// let commands = try project.setClipGain(Clip.ID(3), Gain(decibels: -3))
/// try store.commit(commands, label: "Clip gain")
/// ```
extension Project {
  // MARK: Clips

  /// Adds a new clip to `track`.
  public func addClip(_ clip: Clip, to track: Track.ID) throws(TimelineError) -> [Command] {
    guard self.track(track) != nil else { throw .unknownTrack(track) }
    guard self.clip(clip.id) == nil else { throw .duplicateID("\(clip.id)") }
    try validate(clip)
    if let name = clip.name { try checkClipName(name, for: clip.id) }
    return [.setClip(clip, track: track)]
  }

  /// Names clip `id` (`nil` removes its name); a name another clip has is refused.
  public func nameClip(_ id: Clip.ID, _ name: String?) throws(TimelineError) -> [Command] {
    let (clip, track) = try existingClip(id)
    if let name { try checkClipName(name, for: id) }
    var named = clip
    named.name = name
    return [.setClip(named, track: track.id)]
  }

  /// The clip named `name`, if any.
  public func clip(named name: String) -> Clip? {
    for track in tracks {
      if let clip = track.clips.first(where: { $0.name == name }) { return clip }
    }
    return nil
  }

  /// Refuses `name` for clip `id` when it is not a valid name or another clip has it.
  func checkClipName(_ name: String, for id: Clip.ID) throws(TimelineError) {
    try Clip.validateName(name)
    if let other = clip(named: name), other.id != id {
      throw .duplicateClipName(name, existing: other.id)
    }
  }

  /// A new clip `id` playing `source` from `sourceStart` to `sourceEnd` (the source's end when
  /// nil), starting at `position` on `track`: what `tape clip add` does.
  public func addClip(
    _ id: Clip.ID, source sourceID: Source.ID, track: Track.ID, at position: FramePosition,
    sourceStart: FramePosition = .zero, sourceEnd: FramePosition? = nil, gain: Gain = .unity,
    fadeIn: Fade = .none, fadeOut: Fade = .none, name: String? = nil
  ) throws(TimelineError) -> [Command] {
    guard let source = source(sourceID) else { throw .unknownSource(sourceID) }
    let end = sourceEnd ?? FramePosition(source.frameCount(atRate: sampleRate).frames)
    guard end > sourceStart else { throw .emptyClip }
    return try addClip(
      Clip(
        id: id, source: sourceID, timelineStart: position,
        sourceRange: FrameRange(start: sourceStart, end: end), gain: gain, fadeIn: fadeIn,
        fadeOut: fadeOut, name: name),
      to: track)
  }

  /// Sets a clip's gain and fades at once (`nil` keeps each as it is): what `tape clip set`
  /// does.
  public func setClip(
    _ id: Clip.ID, gain: Gain?, fadeIn: Fade?, fadeOut: Fade?
  ) throws(TimelineError) -> [Command] {
    let (clip, track) = try existingClip(id)
    var changed = clip
    if let gain {
      try gain.validate(as: "gain of clip \(id)")
      changed.gain = gain
    }
    changed.fadeIn = fadeIn ?? clip.fadeIn
    changed.fadeOut = fadeOut ?? clip.fadeOut
    try changed.validateFades(sampleRate: sampleRate)
    return [.setClip(changed, track: track.id)]
  }

  /// Splits a clip at a timeline frame; see ``Clip/split(at:newID:sampleRate:)``.
  public func splitClip(
    _ id: Clip.ID, at position: FramePosition, newID: Clip.ID
  )
    throws(TimelineError) -> [Command]
  {
    let (clip, track) = try existingClip(id)
    guard self.clip(newID) == nil else { throw .duplicateID("\(newID)") }
    let (left, right) = try clip.split(at: position, newID: newID, sampleRate: sampleRate)
    return [.setClip(left, track: track.id), .setClip(right, track: track.id)]
  }

  /// Moves a clip's edges on the timeline, keeping its audio in place.
  public func trimClip(
    _ id: Clip.ID, start: FramePosition?, end: FramePosition?
  )
    throws(TimelineError) -> [Command]
  {
    let (clip, track) = try existingClip(id)
    let trimmed = try clip.trimmed(start: start, end: end, sampleRate: sampleRate)
    try validate(trimmed)
    return [.setClip(trimmed, track: track.id)]
  }

  /// Moves a clip to a new timeline position and/or another track.
  public func moveClip(
    _ id: Clip.ID, to position: FramePosition?, track newTrack: Track.ID?
  )
    throws(TimelineError) -> [Command]
  {
    let (clip, track) = try existingClip(id)
    if let newTrack, self.track(newTrack) == nil { throw .unknownTrack(newTrack) }
    let moved = clip.moved(to: position ?? clip.timelineStart)
    try validate(moved)
    return [.setClip(moved, track: newTrack ?? track.id)]
  }

  /// Sets a clip's fades; `nil` keeps a fade as it is.
  public func setClipFades(
    _ id: Clip.ID, fadeIn: Fade?, fadeOut: Fade?
  )
    throws(TimelineError) -> [Command]
  {
    let (clip, track) = try existingClip(id)
    var changed = clip
    changed.fadeIn = fadeIn ?? clip.fadeIn
    changed.fadeOut = fadeOut ?? clip.fadeOut
    try changed.validateFades(sampleRate: sampleRate)
    return [.setClip(changed, track: track.id)]
  }

  /// Sets a clip's gain.
  public func setClipGain(_ id: Clip.ID, _ gain: Gain) throws(TimelineError) -> [Command] {
    let (clip, track) = try existingClip(id)
    try gain.validate(as: "gain of clip \(id)")
    var changed = clip
    changed.gain = gain
    return [.setClip(changed, track: track.id)]
  }

  /// Removes clips.
  public func removeClips(_ ids: [Clip.ID]) throws(TimelineError) -> [Command] {
    for id in ids { _ = try existingClip(id) }
    return [.removeClips(ids)]
  }

  // MARK: Tracks

  /// Adds an empty track after the existing ones.
  public func addTrack(_ track: Track) throws(TimelineError) -> [Command] {
    guard self.track(track.id) == nil else { throw .duplicateID("\(track.id)") }
    try track.validateSettings(sampleRate: sampleRate)
    var empty = track
    empty.clips = []
    return [.setTrack(empty)]
  }

  /// Sets a track's settings (name, gain, pan, mute, solo), keeping its clips; `nil` keeps a
  /// setting as it is.
  public func setTrack(
    _ id: Track.ID, name: String? = nil, gain: Gain? = nil, pan: Double? = nil,
    muted: Bool? = nil, solo: Bool? = nil, output: Track.ID?? = nil
  ) throws(TimelineError) -> [Command] {
    guard var track = track(id) else { throw .unknownTrack(id) }
    track.name = name ?? track.name
    track.gain = gain ?? track.gain
    track.pan = pan ?? track.pan
    track.isMuted = muted ?? track.isMuted
    track.isSolo = solo ?? track.isSolo
    try track.validateSettings(sampleRate: sampleRate)
    if let output {
      track.output = output
      var routed = self
      if let index = routed.tracks.firstIndex(where: { $0.id == id }) {
        routed.tracks[index].output = output
      }
      try routed.validateRouting(startingAt: id)
    }
    return [.setTrack(track)]
  }

  /// Gives a track volume automation (nil removes it), without the points the others already
  /// imply (``Envelope/compacted()``).
  public func setEnvelope(_ id: Track.ID, _ envelope: Envelope?) throws(TimelineError) -> [Command]
  {
    guard var track = track(id) else { throw .unknownTrack(id) }
    track.envelope = envelope
    try track.validateSettings(sampleRate: sampleRate)
    track.envelope = envelope?.compacted()
    return [.setTrack(track)]
  }

  /// `current` pan automation of a track after `edit`, its values pan positions (−1 … +1, read
  /// as ``Track/pan(parsing:)`` reads them); nil when no point is left. `name` is how messages
  /// name the lane (`t1 pan`).
  ///
  /// ```swift
  /// let sweep = try Project.panAutomation(
  ///   nil, by: .set("0s:-1,2s:1", shapes: nil), name: "t1 pan", sampleRate: 48_000)
  /// ```
  public static func panAutomation(
    _ current: ParameterEnvelope?, by edit: EnvelopeEdit, name: String, sampleRate: Int
  ) throws(TimelineError) -> ParameterEnvelope? {
    try ParameterEnvelope.edited(current, by: edit, name: name, sampleRate: sampleRate) {
      (text: String) throws(TimelineError) -> Double in try Track.pan(parsing: text)
    }
  }

  /// Sets the pan automation of track `id` (nil removes it; see ``Track/panEnvelope``).
  public func setPanEnvelope(
    _ id: Track.ID, _ envelope: ParameterEnvelope?
  ) throws(TimelineError) -> [Command] {
    guard var track = track(id) else { throw .unknownTrack(id) }
    track.panEnvelope = envelope
    try track.validateSettings(sampleRate: sampleRate)
    return [.setTrack(track)]
  }

  /// Sets the gain automation of send `id` (nil removes it; see ``Send/envelope``).
  public func setSendEnvelope(
    _ id: Send.ID, _ envelope: Envelope?
  ) throws(TimelineError) -> [Command] {
    guard var send = send(id) else { throw .unknownSend(id) }
    send.envelope = envelope
    try send.envelope?.validate(send: id, sampleRate: sampleRate)
    send.envelope = envelope?.compacted()
    return [.setSend(send)]
  }

  /// Sets the gain of the whole mix.
  public func setMasterGain(_ gain: Gain) throws(TimelineError) -> [Command] {
    try gain.validate(as: "master gain")
    return [.setMasterGain(gain)]
  }

  /// Moves a track to `index` in the display order (clamped to the ends).
  public func moveTrack(_ id: Track.ID, to index: Int) throws(TimelineError) -> [Command] {
    guard tracks.contains(where: { $0.id == id }) else { throw .unknownTrack(id) }
    var order = tracks.map(\.id)
    order.removeAll { $0 == id }
    order.insert(id, at: min(max(index, 0), order.count))
    return [.setTrackOrder(order)]
  }

  /// Removes tracks with their clips.
  public func removeTracks(_ ids: [Track.ID]) throws(TimelineError) -> [Command] {
    for id in ids where track(id) == nil { throw .unknownTrack(id) }
    return [.removeTracks(ids)]
  }

  private func existingClip(_ id: Clip.ID) throws(TimelineError) -> (Clip, Track) {
    guard let found = clip(id) else { throw .unknownClip(id) }
    return found
  }
}
