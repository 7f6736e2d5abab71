/// One kept alternative of a recorded range: a take that does not play.
///
/// `tape record --loop` records one take per pass over a range of a track. The take that plays
/// is an ordinary clip on the track (render, play and every edit see nothing new); the others
/// are kept here, each as the clip it would be (its id is the take's name, `c12`), with the
/// track, the range they were recorded over, and the clip that plays in their place (the
/// group's playing clip). Choosing another take (``Project/choosingTake(_:)``) swaps the two in
/// one version, so undo and redo see each choice.
///
/// A group follows its playing clip: when an edit moves it (a move, a ripple edit of its
/// track), its kept takes and its range move by as much (to its track, if it changed track);
/// when an edit removes it (or its track), its kept takes go with it. A take keeps its clip's
/// source, placement, crop, gain and fades; a take that is not playing keeps no name.
///
/// ```swift
/// let take = Take(clip: clip, track: Track.ID(2), playing: Clip.ID(7), range: range)
/// take.id.description  // the clip's id, "c9"
/// ```
public struct Take: Sendable, Hashable, Codable, Identifiable {
  /// The kept clip: not on any track while it does not play.
  public var clip: Clip
  /// The track whose range it was recorded on.
  public var track: Track.ID
  /// The clip that plays in its place: its group's take on the track.
  public var playing: Clip.ID
  /// The range its group was recorded over (the loop's `--from`…`--to`).
  public var range: FrameRange

  public init(clip: Clip, track: Track.ID, playing: Clip.ID, range: FrameRange) {
    self.clip = clip
    self.track = track
    self.playing = playing
    self.range = range
  }

  /// The take's name: its clip's id.
  public var id: Clip.ID { clip.id }
}

/// One range's takes, as ``Project/takeGroups(on:)`` lists them.
public struct TakeGroup: Sendable, Hashable {
  /// The range recorded over.
  public var range: FrameRange
  /// The track.
  public var track: Track.ID
  /// Every take in recording order (by clip id: the takes of one recording get increasing
  /// ids), the playing one included; take `n` is `takes[n - 1]`.
  public var takes: [Clip]
  /// The id of the one that plays (on the track).
  public var playing: Clip.ID

  /// Take `id`'s number (1, 2, …).
  public func number(of id: Clip.ID) -> Int? {
    takes.firstIndex { $0.id == id }.map { $0 + 1 }
  }
}

extension Take {
  /// One pass of a looped recording: where its take plays and which frames of the capture it
  /// holds.
  public struct Pass: Sendable, Hashable {
    public var timelineStart: FramePosition
    public var sourceRange: FrameRange
  }

  /// The passes of a capture `captured` frames long, recorded while `range` played in a
  /// loop, whose frame 0 lines up with timeline frame `landing` of the first pass (the round
  /// trip compensated, as an overdub's take): pass `k` is the capture from
  /// `range.start - landing + k · range.count`, `range.count` frames long, to play at
  /// `range.start`. The first pass starts later when the capture began after the range did;
  /// the last, cut short by the end of the capture, is kept when it holds at least
  /// `minimumPartial` frames (and always when it is the only one).
  ///
  /// ```swift
  /// Take.passes(landing: 47_000, range: loop, captured: 290_000, minimumPartial: 48_000)
  /// ```
  public static func passes(
    landing: Int64, range: FrameRange, captured: Int64, minimumPartial: Int64
  ) -> [Pass] {
    let length = range.count.frames
    guard length > 0, captured > 0 else { return [] }
    var passes: [Pass] = []
    var pass: Int64 = 0
    while true {
      var sourceStart = range.start.frames - landing + pass * length
      var timelineStart = range.start.frames
      var count = length
      if sourceStart < 0 {
        timelineStart -= sourceStart
        count += sourceStart
        sourceStart = 0
      }
      if sourceStart >= captured { break }
      let full = sourceStart + count <= captured
      count = min(count, captured - sourceStart)
      if count > 0, full || count >= minimumPartial || passes.isEmpty {
        passes.append(
          Pass(
            timelineStart: FramePosition(timelineStart),
            sourceRange: FrameRange(start: FramePosition(sourceStart), count: FrameCount(count))))
      }
      if !full { break }
      pass += 1
    }
    return passes
  }

  /// Where a gap (an overrun) after take frame `gap` of a loop's capture lands: which of
  /// `passes` holds it (a gap on the border of two is the later pass's: its first frame is
  /// the one after the gap) and the timeline frame there; nil when no pass holds it (it fell
  /// before the first, or in a last stretch too short to keep).
  public static func place(gap: Int64, in passes: [Pass]) -> (pass: Int, position: FramePosition)? {
    guard
      let index = passes.lastIndex(where: {
        $0.sourceRange.start.frames <= gap && gap <= $0.sourceRange.end.frames
      })
    else { return nil }
    let pass = passes[index]
    return (index, pass.timelineStart + FrameCount(gap - pass.sourceRange.start.frames))
  }
}

extension Project {
  /// The take groups of `track` (all tracks with nil), by range start: each group's takes, the
  /// playing clip among them.
  public func takeGroups(on track: Track.ID? = nil) -> [TakeGroup] {
    var byPlaying: [Clip.ID: [Take]] = [:]
    for take in takes where track == nil || take.track == track {
      byPlaying[take.playing, default: []].append(take)
    }
    var groups: [TakeGroup] = []
    for (playing, kept) in byPlaying {
      guard let first = kept.first, let clip = self.clip(playing)?.clip else { continue }
      groups.append(
        TakeGroup(
          range: first.range, track: first.track,
          takes: (kept.map(\.clip) + [clip]).sorted { $0.id < $1.id }, playing: playing))
    }
    return groups.sorted { ($0.range.start, $0.playing) < ($1.range.start, $1.playing) }
  }

  /// The commands that add one recording's takes of `range` on `track`, in recording order:
  /// the last plays (a clip on the track), the others are kept. One take is one clip.
  ///
  /// ```swift
  /// let commands = try project.addingTakes([pass1, pass2, pass3], track: t, range: loop)
  /// ```
  public func addingTakes(
    _ clips: [Clip], track: Track.ID, range: FrameRange
  ) throws(TimelineError) -> [Command] {
    guard let playing = clips.last else { return [] }
    var commands = try addClip(playing, to: track)
    for clip in clips.dropLast() {
      commands.append(.setTake(Take(clip: clip, track: track, playing: playing.id, range: range)))
    }
    return commands
  }

  /// The commands that make take `id` the one that plays in its group: the clip now playing
  /// becomes a kept take, `id`'s clip takes its place on the track, and every take of the
  /// group names it as the one that plays. Nothing when it plays already.
  public func choosingTake(_ id: Clip.ID) throws(TimelineError) -> [Command] {
    if takes.contains(where: { $0.playing == id }) { return [] }
    guard let chosen = takes.first(where: { $0.id == id }) else {
      if let placed = clip(id) {
        throw .notATake(id, track: placed.track.id)
      }
      throw .unknownClip(id)
    }
    guard let playing = clip(chosen.playing) else { throw .unknownClip(chosen.playing) }
    // Parts of the take that plays (a split, a cut inside the range): same source, on its
    // track, over the range.
    let parts = playing.track.clips.filter {
      $0.id != playing.clip.id && $0.source == playing.clip.source
        && $0.timelineStart < chosen.range.end && $0.timelineEnd > chosen.range.start
    }
    guard parts.isEmpty else {
      throw .takeInParts(playing: playing.clip.id, parts: parts.map(\.id))
    }
    var commands: [Command] = [
      .removeTakes([id]), .removeClips([playing.clip.id]),
      .setClip(chosen.clip, track: playing.track.id),
    ]
    var old = playing.clip
    old.name = nil
    commands.append(
      .setTake(Take(clip: old, track: playing.track.id, playing: id, range: chosen.range)))
    for var other in takes where other.playing == chosen.playing && other.id != id {
      other.playing = id
      commands.append(.setTake(other))
    }
    return commands
  }

  /// Checks a take: its clip as a clip (a source that has its crop), its id on no track, its
  /// track there.
  func validate(_ take: Take) throws(TimelineError) {
    guard track(take.track) != nil else { throw .unknownTrack(take.track) }
    try validate(take.clip)
    guard take.range.count.frames > 0 else { throw .nonPositiveLength(clip: take.id) }
    if let placed = place(of: take.id) {
      throw .duplicateID("take \(take.id), also a clip on \(tracks[placed.track].id)")
    }
  }

  /// After an edit's commands: the kept takes whose playing clip the edit moved move with it
  /// (by as much as its source's origin moved, so a trim moves nothing; to its track), and those whose playing clip it removed go. Takes the edit
  /// set itself are left as it set them.
  mutating func followPlayingClips(
    from old: Project, changed: inout ChangedIDs, setTakes: Set<Clip.ID>
  ) {
    guard !takes.isEmpty, !changed.clips.isEmpty || !changed.tracks.isEmpty else { return }
    var result: [Take] = []
    var touched = false
    for take in takes {
      if setTakes.contains(take.id) || !changed.clips.contains(take.playing) {
        result.append(take)
        continue
      }
      guard let now = clip(take.playing) else {
        touched = true
        continue
      }
      guard let was = old.clip(take.playing) else {
        result.append(take)
        continue
      }
      // Where the clip's source would start: a move changes it, a trim does not.
      let origin = { (clip: Clip) in clip.timelineStart.frames - clip.sourceRange.start.frames }
      let shift = origin(now.clip) - origin(was.clip)
      var moved = take
      moved.track = now.track.id
      moved.clip.timelineStart = FramePosition(max(0, take.clip.timelineStart.frames + shift))
      moved.range = FrameRange(
        start: FramePosition(max(0, take.range.start.frames + shift)), count: take.range.count)
      if moved != take { touched = true }
      result.append(moved)
    }
    if touched {
      takes = result
      changed.takes = true
    }
  }
}
