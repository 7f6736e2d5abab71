/// One immutable snapshot of a whole project: its format, sources and tracks.
///
/// Snapshots are values: code may make modified copies, and the only thing it can do with them
/// is commit them to the store as ``Command``s. Tracks are in display order.
///
/// ```swift
/// let project = Project(sampleRate: 48_000, channels: 2)
/// project.tracks.isEmpty  // true
/// ```
public struct Project: Sendable, Hashable, Codable {
  /// Frames per second of the timeline and of everything rendered from it.
  public var sampleRate: Int
  /// Output channels: 1 (mono) or 2 (stereo).
  public var channels: Int
  /// Sorted by id.
  public var sources: [Source]
  /// In display order, top to bottom.
  public var tracks: [Track]
  /// The gain of the whole mix, after every track.
  public var masterGain: Gain
  /// The master's effect chain, in the order it runs, after the master gain.
  public var masterEffects: [Effect]
  /// The markers, sorted by position, then by id (``Marker/timelineOrder(_:_:)``).
  public var markers: [Marker]
  /// The sends from track to track, sorted by id.
  public var sends: [Send]
  /// The kept takes that do not play (``Take``), sorted by id.
  public var takes: [Take] = []

  public init(
    sampleRate: Int, channels: Int, sources: [Source] = [], tracks: [Track] = [],
    masterGain: Gain = .unity, masterEffects: [Effect] = [], markers: [Marker] = [],
    sends: [Send] = []
  ) {
    self.sampleRate = sampleRate
    self.channels = channels
    self.sources = sources.sorted { $0.id < $1.id }
    self.tracks = tracks
    self.masterGain = masterGain
    self.masterEffects = masterEffects
    self.markers = markers.sorted(by: Marker.timelineOrder)
    self.sends = sends.sorted { $0.id < $1.id }
  }

  public static let supportedSampleRates = [
    8_000, 11_025, 16_000, 22_050, 32_000, 44_100, 48_000, 88_200, 96_000, 176_400, 192_000,
  ]

  public func source(_ id: Source.ID) -> Source? {
    sources.first { $0.id == id }
  }

  public func track(_ id: Track.ID) -> Track? {
    tracks.first { $0.id == id }
  }

  /// The clip with `id` and the track it is on.
  public func clip(_ id: Clip.ID) -> (clip: Clip, track: Track)? {
    for track in tracks where track.clips.contains(id: id) {
      if let clip = track.clip(id) { return (clip, track) }
    }
    return nil
  }

  /// The index of the track holding clip `id`, and the clip's index in it: O(tracks · log n).
  public func place(of id: Clip.ID) -> (track: Int, clip: Int)? {
    for index in tracks.indices where tracks[index].clips.contains(id: id) {
      if let position = tracks[index].clips.index(of: id) { return (index, position) }
    }
    return nil
  }

  /// How many clips the tracks hold.
  public var clipCount: Int { tracks.reduce(0) { $0 + $1.clips.count } }

  /// Every clip in the project, track by track.
  public var allClips: [Clip] { tracks.flatMap(\.clips) }

  /// The first frame after the last clip ends; 0 for an empty project.
  public var timelineEnd: FramePosition {
    tracks.lazy.flatMap(\.clips).map(\.timelineEnd).max() ?? .zero
  }
}

extension Project {
  /// Where each of `ids` is: the clip and its track. Ids not in the project are absent.
  ///
  /// A lookup per id and track (O(k · tracks · log n)) while the ids are few against the
  /// clips, one pass over the clips otherwise.
  public func locate(_ ids: Set<Clip.ID>) -> [Clip.ID: (clip: Clip, track: Track.ID)] {
    var found: [Clip.ID: (clip: Clip, track: Track.ID)] = [:]
    found.reserveCapacity(ids.count)
    if ids.count * max(tracks.count, 1) * 16 <= clipCount || ids.count <= 8 {
      for id in ids {
        for track in tracks {
          if let clip = track.clips.clip(id) {
            found[id] = (clip, track.id)
            break
          }
        }
      }
      return found
    }
    let filter = EntityIDFilter(ids)
    for track in tracks {
      for clip in track.clips where filter.contains(clip.id) {
        found[clip.id] = (clip, track.id)
      }
    }
    return found
  }
}
