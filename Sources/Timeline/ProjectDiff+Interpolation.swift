extension ProjectDiff {
  /// The project part of the way from the diff's old snapshot to its new one, for views that
  /// animate a change: positions, lengths, crops, gains, pans and fades tween; clips that
  /// appear grow in from their start and clips that go shrink away; a clip that changes track is
  /// on its old track for the first half and on its new one for the second (see
  /// ``trackTransition(of:at:easing:)`` to draw it between the rows).
  ///
  /// `t` runs from 0 (exactly the old snapshot) to 1 (exactly the new one), eased with
  /// `easing` (``Easing/linear`` is what the player's ramps use). Views only: an intermediate
  /// project need not validate (a growing clip may be shorter than its fades).
  ///
  /// ```swift
  /// for frame in 0...9 { draw(diff.interpolated(at: Double(frame) / 9, easing: .smooth)) }
  /// ```
  public func interpolated(at t: Double, easing: Easing = .linear) -> Project {
    guard let before, let after else { return Project(sampleRate: 48_000, channels: 2) }
    if t <= 0 { return before }
    if t >= 1 { return after }
    let u = easing(t)
    var project = after
    // Tracks: settings tween; the new order holds from the start.
    for change in tracks {
      guard let old = change.before, let new = change.after,
        let index = project.tracks.firstIndex(where: { $0.id == change.id })
      else { continue }
      project.tracks[index].gain = Gain(
        decibels: Self.tween(old.gain.decibels, new.gain.decibels, u))
      project.tracks[index].pan = Self.tween(old.pan, new.pan, u)
    }
    // Markers: a moved one slides (added and removed ones are as they end).
    for change in markers {
      guard let old = change.before, let new = change.after,
        let index = project.markers.firstIndex(where: { $0.id == change.id })
      else { continue }
      project.markers[index].position = FramePosition(
        Self.tween(old.position.frames, new.position.frames, u))
    }
    if !markers.isEmpty { project.markers.sort(by: Marker.timelineOrder) }
    // Clips: each changed one taken out and put back at its tweened place, in the tracks
    // the changes touch only (a view animating one clip of 100,000 redoes one track's list).
    var placed: [Track.ID: [Clip]] = [:]
    var leaving: [Track.ID: [Clip.ID]] = [:]
    var ghosts: [Track] = []
    var ghostIndex: [Track.ID: Int] = [:]
    for change in clips {
      if let new = change.after { leaving[new.track, default: []].append(change.id) }
      let clip: Clip
      let track: Track.ID
      switch (change.before, change.after) {
      case (let old?, let new?):
        clip = Self.tween(old.clip, new.clip, u)
        track = u < 0.5 ? old.track : new.track
      case (nil, let new?):
        clip = Self.scaled(new.clip, by: u)
        track = new.track
      case (let old?, nil):
        clip = Self.scaled(old.clip, by: 1 - u)
        track = old.track
      case (nil, nil):
        continue
      }
      guard clip.length.frames > 0 else { continue }
      if project.track(track) != nil {
        placed[track, default: []].append(clip)
      } else if let index = ghostIndex[track] {
        ghosts[index].clips.insertInOrder(clip)
      } else if let old = before.track(track) {
        // A track that goes away with its clips: shown shrinking where it was.
        var ghost = old
        ghost.clips = [clip]
        ghostIndex[track] = ghosts.count
        ghosts.append(ghost)
      }
    }
    for index in project.tracks.indices {
      let id = project.tracks[index].id
      let gone = leaving[id] ?? []
      let back = placed[id] ?? []
      if gone.isEmpty && back.isEmpty { continue }
      project.tracks[index].clips.replace(removing: gone, inserting: back)
    }
    project.tracks.append(contentsOf: ghosts)
    return project
  }

  /// For a clip that changes track: its old and new tracks and how far (0…1, eased) it is from
  /// the one to the other at `t`; nil for a clip that stays on its track.
  public func trackTransition(
    of id: Clip.ID, at t: Double, easing: Easing = .linear
  ) -> (from: Track.ID, to: Track.ID, progress: Double)? {
    guard let change = clips.first(where: { $0.id == id }), let old = change.before,
      let new = change.after, old.track != new.track
    else { return nil }
    return (old.track, new.track, easing(t))
  }

  private static func tween(_ a: Double, _ b: Double, _ u: Double) -> Double {
    a + (b - a) * u
  }

  private static func tween(_ a: Int64, _ b: Int64, _ u: Double) -> Int64 {
    a + Int64((Double(b - a) * u).rounded())
  }

  private static func tween(_ a: Clip, _ b: Clip, _ u: Double) -> Clip {
    var clip = b
    clip.timelineStart = FramePosition(tween(a.timelineStart.frames, b.timelineStart.frames, u))
    clip.sourceRange = FrameRange(
      start: FramePosition(tween(a.sourceRange.start.frames, b.sourceRange.start.frames, u)),
      count: FrameCount(tween(a.length.frames, b.length.frames, u)))
    clip.gain = Gain(decibels: tween(a.gain.decibels, b.gain.decibels, u))
    clip.fadeIn.length = FrameCount(tween(a.fadeIn.length.frames, b.fadeIn.length.frames, u))
    clip.fadeOut.length = FrameCount(tween(a.fadeOut.length.frames, b.fadeOut.length.frames, u))
    return clip
  }

  /// `clip` at `share` of its length (growing from its start), its fades scaled alike.
  private static func scaled(_ clip: Clip, by share: Double) -> Clip {
    var scaled = clip
    scaled.sourceRange = FrameRange(
      start: clip.sourceRange.start,
      count: FrameCount(Int64((Double(clip.length.frames) * share).rounded())))
    scaled.fadeIn.length = FrameCount(Int64((Double(clip.fadeIn.length.frames) * share).rounded()))
    scaled.fadeOut.length = FrameCount(
      Int64((Double(clip.fadeOut.length.frames) * share).rounded()))
    return scaled
  }
}
