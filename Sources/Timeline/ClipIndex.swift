internal import HashTreeCollections

/// Where each clip of a project is: its track and its start, so that a clip is found by a
/// binary search in its track (clips are kept in ``Clip/timelineOrder(_:_:)``) instead of a scan of
/// the whole project.
///
/// Whoever holds successive snapshots (the store) keeps one index per snapshot, updated for the
/// clips that changed only (``updating(_:)``), so a ``ProjectDiff`` of k changed clips costs
/// O(k log n) however large the project.
///
/// ```swift
/// var index = ClipIndex(project)                      // O(n), once
/// index = index.updating([(clip.id, .placed(clip, on: track.id))])
/// index.clip(clip.id, in: newProject)                 // O(log n)
/// ```
public struct ClipIndex: Sendable, Hashable {
  /// A clip's track and start: enough to find it.
  public struct Place: Sendable, Hashable {
    public var track: Track.ID
    public var start: FramePosition

    public init(track: Track.ID, start: FramePosition) {
      self.track = track
      self.start = start
    }
  }

  /// What happened to a clip.
  public enum Change: Sendable, Hashable {
    case placed(Clip, on: Track.ID)
    case removed
  }

  /// A persistent map (a CHAMP trie): an updated copy shares all but O(log n) nodes with this
  /// one, so updating an index another snapshot holds does not copy it.
  private var places: TreeDictionary<Clip.ID, Place>

  /// The index of every clip of `project` (a scan: once per project, not per change).
  public init(_ project: Project) {
    var places: TreeDictionary<Clip.ID, Place> = [:]
    for track in project.tracks {
      for clip in track.clips {
        places[clip.id] = Place(track: track.id, start: clip.timelineStart)
      }
    }
    self.places = places
  }

  /// This index with `changes` made.
  public func updating(_ changes: some Sequence<(Clip.ID, Change)>) -> ClipIndex {
    var copy = self
    for (id, change) in changes {
      switch change {
      case .placed(let clip, let track):
        copy.places[id] = Place(track: track, start: clip.timelineStart)
      case .removed:
        copy.places[id] = nil
      }
    }
    return copy
  }

  public func place(of id: Clip.ID) -> Place? {
    places[id]
  }

  public var count: Int { places.count }

  /// Where each of `ids` is in `project` (which this index describes): the clip and its
  /// track, found track by track (a lookup in the index and a binary search in the track
  /// each). Ids not in the project are absent.
  public func locate(
    _ ids: some Collection<Clip.ID>, in project: Project
  ) -> [Clip.ID: (clip: Clip, track: Track.ID)] {
    var found: [Clip.ID: (clip: Clip, track: Track.ID)] = [:]
    found.reserveCapacity(ids.count)
    for place in places(of: ids, in: project) { found[place.clip.id] = (place.clip, place.track) }
    return found
  }

  /// ``locate(_:in:)`` as a list, with each clip's position in its track's list: what a caller
  /// that writes the clips back where they are asks for (``ClipList/replaceInPlace(at:with:)``),
  /// so that each is searched for once. In no set order; an id not in the project is left out.
  public func places(
    of ids: some Collection<Clip.ID>, in project: Project
  ) -> [(clip: Clip, track: Track.ID, position: Int)] {
    var found: [(clip: Clip, track: Track.ID, position: Int)] = []
    found.reserveCapacity(ids.count)
    // A few (an undo of one edit): each on its own, without the per-track tables below.
    if ids.count <= 4 {
      for id in ids {
        guard let place = places[id],
          let track = project.tracks.firstIndex(where: { $0.id == place.track }),
          let position = project.tracks[track].clips.index(of: id, at: place.start)
            ?? project.tracks[track].clips.index(of: id)
        else { continue }
        found.append((project.tracks[track].clips[position], place.track, position))
      }
      return found
    }
    var trackIndex: [Track.ID: Int] = [:]
    for (index, track) in project.tracks.enumerated() { trackIndex[track.id] = index }
    var byTrack = Array(repeating: [(Clip.ID, FramePosition)](), count: project.tracks.count)
    for id in ids {
      guard let place = places[id], let index = trackIndex[place.track] else { continue }
      byTrack[index].append((id, place.start))
    }
    for (index, wanted) in byTrack.enumerated() where !wanted.isEmpty {
      let clips = project.tracks[index].clips
      let track = project.tracks[index].id
      let keys = wanted.map { (start: $0.1, id: $0.0) }.sorted {
        ($0.start, $0.id) < ($1.start, $1.id)
      }
      for (key, placed) in zip(keys, clips.clips(at: keys)) {
        if let placed {
          found.append((placed.clip, track, placed.position))
        } else if let position = clips.index(of: key.id) {
          found.append((clips[position], track, position))
        }
      }
    }
    return found
  }

  /// The clip `id` of `project` (which this index describes) and its track.
  public func clip(_ id: Clip.ID, in project: Project) -> ProjectDiff.PlacedClip? {
    guard let place = places[id],
      let track = project.tracks.first(where: { $0.id == place.track }),
      let clip = track.clips.clip(id, at: place.start) ?? track.clips.clip(id)
    else { return nil }
    return ProjectDiff.PlacedClip(clip: clip, track: track.id)
  }
}
