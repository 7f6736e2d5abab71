/// The ids of the sources, tracks and clips a change may have added, removed or modified.
///
/// A store reports these with every new snapshot (parsed from the commit's changeset); a
/// subscriber re-reads or re-diffs only them. A superset is allowed: an id listed here whose value
/// did not change simply produces no entry in a ``ProjectDiff``.
public struct ChangedIDs: Sendable, Hashable {
  public var sources: Set<Source.ID>
  public var tracks: Set<Track.ID>
  public var clips: Set<Clip.ID>
  /// Whether the order of the tracks may have changed.
  public var trackOrder: Bool
  /// Whether the project's own settings (rate, channels, master gain) may have changed.
  public var format: Bool
  /// Whether any effect chain may have changed (chains are short: a reader compares them all).
  public var effects: Bool
  /// Whether any marker may have changed (a reader compares them all).
  public var markers: Bool
  /// Whether any send may have changed (a reader compares them all).
  public var sends: Bool
  /// Whether any kept take may have changed (a reader compares them all).
  public var takes: Bool = false

  public init(
    sources: Set<Source.ID> = [], tracks: Set<Track.ID> = [], clips: Set<Clip.ID> = [],
    trackOrder: Bool = false, format: Bool = false, effects: Bool = false,
    markers: Bool = false, sends: Bool = false
  ) {
    self.sources = sources
    self.tracks = tracks
    self.clips = clips
    self.trackOrder = trackOrder
    self.format = format
    self.effects = effects
    self.markers = markers
    self.sends = sends
  }

  public var isEmpty: Bool {
    sources.isEmpty && tracks.isEmpty && clips.isEmpty && !trackOrder && !format && !effects
      && !markers && !sends && !takes
  }

  /// Everything in `project`: the change from nothing to it.
  public init(everythingIn project: Project) {
    self.init(
      sources: Set(project.sources.map(\.id)), tracks: Set(project.tracks.map(\.id)),
      clips: Set(project.allClips.map(\.id)), trackOrder: true, format: true, effects: true,
      markers: true, sends: true)
    takes = true
  }
}
