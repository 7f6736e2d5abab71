/// What changed from one snapshot to the next, each change with its value before and after, so
/// a view can animate it (a clip sliding from 1 s on t1 to 3 s on t2, a fader moving).
///
/// A diff says nothing about *why* the project changed: an edit, an undo, a checkout and a commit
/// from another process look the same.
///
/// ```swift
/// let diff = ProjectDiff(from: before, to: after, changed: changedIDs)
/// for change in diff.clips where change.isMove { animate(change.before!, to: change.after!) }
/// ```
public struct ProjectDiff: Sendable, Hashable {
  public static func == (a: ProjectDiff, b: ProjectDiff) -> Bool {
    a.sources == b.sources && a.tracks == b.tracks && a.clips == b.clips
      && a.formatChanged == b.formatChanged && a.masterGainChanged == b.masterGainChanged
      && a.effects == b.effects && a.markers == b.markers && a.sends == b.sends
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(sources)
    hasher.combine(tracks)
    hasher.combine(clips)
    hasher.combine(formatChanged)
    hasher.combine(masterGainChanged)
    hasher.combine(effects)
    hasher.combine(markers)
    hasher.combine(sends)
  }

  /// One send's change: `before == nil` is an addition, `after == nil` a removal.
  public struct SendChange: Sendable, Hashable {
    public var id: Send.ID
    public var before: Send?
    public var after: Send?

    public init(id: Send.ID, before: Send?, after: Send?) {
      self.id = id
      self.before = before
      self.after = after
    }
  }

  /// One marker's change: `before == nil` is an addition, `after == nil` a removal.
  public struct MarkerChange: Sendable, Hashable {
    public var id: Marker.ID
    public var before: Marker?
    public var after: Marker?

    public init(id: Marker.ID, before: Marker?, after: Marker?) {
      self.id = id
      self.before = before
      self.after = after
    }
  }

  /// An effect, the chain it is in and its place there.
  public struct PlacedEffect: Sendable, Hashable {
    public var effect: Effect
    public var owner: ChainOwner
    public var index: Int

    public init(effect: Effect, owner: ChainOwner, index: Int) {
      self.effect = effect
      self.owner = owner
      self.index = index
    }
  }

  /// One effect's change: `before == nil` is an addition, `after == nil` a removal.
  public struct EffectChange: Sendable, Hashable {
    public var id: Effect.ID
    public var before: PlacedEffect?
    public var after: PlacedEffect?

    public init(id: Effect.ID, before: PlacedEffect?, after: PlacedEffect?) {
      self.id = id
      self.before = before
      self.after = after
    }
  }

  /// A clip and the track it is on.
  public struct PlacedClip: Sendable, Hashable {
    public var clip: Clip
    public var track: Track.ID

    public init(clip: Clip, track: Track.ID) {
      self.clip = clip
      self.track = track
    }
  }

  /// One clip's change: `before == nil` is an addition, `after == nil` a removal.
  public struct ClipChange: Sendable, Hashable {
    public var id: Clip.ID
    public var before: PlacedClip?
    public var after: PlacedClip?

    public init(id: Clip.ID, before: PlacedClip?, after: PlacedClip?) {
      self.id = id
      self.before = before
      self.after = after
    }

    /// Whether the clip changed position on the timeline or track.
    public var isMove: Bool {
      guard let before, let after else { return false }
      return before.track != after.track || before.clip.timelineStart != after.clip.timelineStart
    }
  }

  /// One track's change; settings and display index before and after (clips are in `clips`).
  public struct TrackChange: Sendable, Hashable {
    public var id: Track.ID
    public var before: TrackSettings?
    public var after: TrackSettings?

    public init(id: Track.ID, before: TrackSettings?, after: TrackSettings?) {
      self.id = id
      self.before = before
      self.after = after
    }
  }

  /// A track without its clips, and where it sits in the display order.
  public struct TrackSettings: Sendable, Hashable {
    public var index: Int
    public var name: String
    public var gain: Gain
    public var pan: Double
    public var isMuted: Bool
    public var isSolo: Bool
    public var envelope: Envelope?
    /// Where the track's sound goes: nil for the master.
    public var output: Track.ID?
    public var panEnvelope: ParameterEnvelope?

    init(_ track: Track, index: Int) {
      self.index = index
      name = track.name
      gain = track.gain
      pan = track.pan
      isMuted = track.isMuted
      isSolo = track.isSolo
      envelope = track.envelope
      output = track.output
      panEnvelope = track.panEnvelope
    }
  }

  public struct SourceChange: Sendable, Hashable {
    public var id: Source.ID
    public var before: Source?
    public var after: Source?

    public init(id: Source.ID, before: Source?, after: Source?) {
      self.id = id
      self.before = before
      self.after = after
    }
  }

  /// Sorted by id.
  public var sources: [SourceChange]
  /// Sorted by id.
  public var tracks: [TrackChange]
  /// Sorted by id.
  public var clips: [ClipChange]
  /// Rate or channels changed.
  public var formatChanged: Bool
  /// The master gain changed.
  public var masterGainChanged: Bool
  /// Effects added, removed, changed or moved in their chains; sorted by id.
  public var effects: [EffectChange]
  /// Markers added, removed, moved or renamed; sorted by id.
  public var markers: [MarkerChange]
  /// Sends added, removed or changed; sorted by id.
  public var sends: [SendChange]
  /// The two snapshots, for ``interpolated(at:easing:)``; not part of the diff's value (two
  /// diffs that list the same changes are equal).
  public let before: Project?
  public let after: Project?

  public var isEmpty: Bool {
    sources.isEmpty && tracks.isEmpty && clips.isEmpty && !formatChanged && !masterGainChanged
      && effects.isEmpty && markers.isEmpty && sends.isEmpty
  }

  /// The diff from `old` to `new`, examining only `changed` (everything when `nil`).
  ///
  /// With the snapshots' ``ClipIndex``es each changed clip is found by a binary search in its
  /// track: the diff costs O(k log n) for k changed clips. Without, the projects are scanned.
  public init(
    from old: Project, to new: Project, changed: ChangedIDs? = nil,
    indexes: (old: ClipIndex, new: ClipIndex)? = nil
  ) {
    let changed =
      changed
      ?? {
        var all = ChangedIDs(everythingIn: old)
        let added = ChangedIDs(everythingIn: new)
        all.sources.formUnion(added.sources)
        all.tracks.formUnion(added.tracks)
        all.clips.formUnion(added.clips)
        return all
      }()
    effects = changed.effects ? Self.effectChanges(from: old, to: new) : []
    markers = changed.markers ? Self.markerChanges(from: old, to: new) : []
    sends = changed.sends ? Self.sendChanges(from: old, to: new) : []
    formatChanged = old.sampleRate != new.sampleRate || old.channels != new.channels
    masterGainChanged = old.masterGain != new.masterGain
    before = old
    after = new

    sources = changed.sources.sorted().compactMap { id in
      let before = old.source(id)
      let after = new.source(id)
      return before == after ? nil : SourceChange(id: id, before: before, after: after)
    }

    // Track settings, and indices when the order may have moved.
    var trackIDs = changed.tracks
    if changed.trackOrder || old.tracks.count != new.tracks.count {
      trackIDs.formUnion(old.tracks.map(\.id))
      trackIDs.formUnion(new.tracks.map(\.id))
    }
    let oldIndex = Dictionary(uniqueKeysWithValues: old.tracks.enumerated().map { ($1.id, $0) })
    let newIndex = Dictionary(uniqueKeysWithValues: new.tracks.enumerated().map { ($1.id, $0) })
    tracks = trackIDs.sorted().compactMap { id in
      let before = oldIndex[id].map { TrackSettings(old.tracks[$0], index: $0) }
      let after = newIndex[id].map { TrackSettings(new.tracks[$0], index: $0) }
      return before == after ? nil : TrackChange(id: id, before: before, after: after)
    }

    if let indexes {
      clips = changed.clips.sorted().compactMap { id in
        let before = indexes.old.clip(id, in: old)
        let after = indexes.new.clip(id, in: new)
        return before == after ? nil : ClipChange(id: id, before: before, after: after)
      }
      return
    }
    let oldClips = Self.placedClips(old, ids: changed.clips)
    let newClips = Self.placedClips(new, ids: changed.clips)
    clips = changed.clips.sorted().compactMap { id in
      let before = oldClips[id]
      let after = newClips[id]
      return before == after ? nil : ClipChange(id: id, before: before, after: after)
    }
  }

  private static func sendChanges(from old: Project, to new: Project) -> [SendChange] {
    let before = Dictionary(uniqueKeysWithValues: old.sends.map { ($0.id, $0) })
    let after = Dictionary(uniqueKeysWithValues: new.sends.map { ($0.id, $0) })
    return Set(before.keys).union(after.keys).sorted().compactMap { id in
      before[id] == after[id] ? nil : SendChange(id: id, before: before[id], after: after[id])
    }
  }

  private static func markerChanges(from old: Project, to new: Project) -> [MarkerChange] {
    let before = Dictionary(uniqueKeysWithValues: old.markers.map { ($0.id, $0) })
    let after = Dictionary(uniqueKeysWithValues: new.markers.map { ($0.id, $0) })
    return Set(before.keys).union(after.keys).sorted().compactMap { id in
      before[id] == after[id] ? nil : MarkerChange(id: id, before: before[id], after: after[id])
    }
  }

  private static func effectChanges(from old: Project, to new: Project) -> [EffectChange] {
    func placed(_ project: Project) -> [Effect.ID: PlacedEffect] {
      Dictionary(
        uniqueKeysWithValues: project.allEffects.map {
          ($0.effect.id, PlacedEffect(effect: $0.effect, owner: $0.owner, index: $0.index))
        })
    }
    let (before, after) = (placed(old), placed(new))
    return Set(before.keys).union(after.keys).sorted().compactMap { id in
      before[id] == after[id] ? nil : EffectChange(id: id, before: before[id], after: after[id])
    }
  }

  private static func placedClips(_ project: Project, ids: Set<Clip.ID>) -> [Clip.ID: PlacedClip] {
    project.locate(ids).mapValues { PlacedClip(clip: $0.clip, track: $0.track) }
  }
}
