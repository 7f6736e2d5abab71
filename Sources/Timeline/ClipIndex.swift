/// Where each clip of a project is: its track and its start, so that a clip is found by a
/// binary search in its track (clips are kept in ``Clip/timelineOrder``) instead of a scan of
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

  private var places: [Clip.ID: Place]

  /// The index of every clip of `project` (a scan: once per project, not per change).
  public init(_ project: Project) {
    var places: [Clip.ID: Place] = [:]
    places.reserveCapacity(project.tracks.reduce(0) { $0 + $1.clips.count })
    for track in project.tracks {
      for index in track.clips.indices {
        places[track.clips[index].id] = Place(
          track: track.id, start: track.clips[index].timelineStart)
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

  /// The clip `id` of `project` (which this index describes) and its track.
  public func clip(_ id: Clip.ID, in project: Project) -> ProjectDiff.PlacedClip? {
    guard let place = places[id],
      let track = project.tracks.first(where: { $0.id == place.track })
    else { return nil }
    let clips = track.clips
    // The first clip at or after (start, id) in timeline order.
    var (low, high) = (clips.startIndex, clips.endIndex)
    while low < high {
      let middle = (low + high) / 2
      let candidate = clips[middle]
      if (candidate.timelineStart, candidate.id) < (place.start, id) {
        low = middle + 1
      } else {
        high = middle
      }
    }
    guard low < clips.endIndex, clips[low].id == id else { return nil }
    return ProjectDiff.PlacedClip(clip: clips[low], track: track.id)
  }
}
