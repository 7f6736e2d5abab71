/// A track: its mix settings and the clips that play on it, ordered by timeline start.
///
/// Clips on one track may overlap; overlapping clips sum. A soloed track silences every track
/// that is not soloed; a muted track is silent whatever its solo state.
public struct Track: Sendable, Hashable, Codable, Identifiable, IdentifiedEntity {
  public typealias ID = EntityID<Track>
  public static let idPrefix = "t"
  public static let entityName = "track"

  public let id: ID
  public var name: String
  public var gain: Gain
  /// −1 (left) … 0 (centre) … +1 (right).
  public var pan: Double
  public var isMuted: Bool
  public var isSolo: Bool
  /// Volume automation over the track's gain; nil for none.
  public var envelope: Envelope?
  /// Pan automation (−1 … +1): where it has points it sets the pan, in place of ``pan`` (as
  /// Ardour's automated panner follows its lane); nil for none, ``pan`` then applies.
  public var panEnvelope: ParameterEnvelope?
  /// Sorted by `timelineStart`, then by id (``Clip/timelineOrder(_:_:)``).
  public var clips: ClipList
  /// The track's effect chain, in the order it runs: after its clips are summed and its gain,
  /// pan and envelope applied, before mute and solo.
  public var effects: [Effect]
  /// The track its sound goes to (a bus: mixed with that track's clips, before its gain, pan
  /// and effects); nil for the master, the default.
  public var output: Track.ID?

  public init(
    id: ID, name: String, gain: Gain = .unity, pan: Double = 0, isMuted: Bool = false,
    isSolo: Bool = false, envelope: Envelope? = nil, clips: [Clip] = [], effects: [Effect] = [],
    output: Track.ID? = nil, panEnvelope: ParameterEnvelope? = nil
  ) {
    self.id = id
    self.name = name
    self.gain = gain
    self.pan = pan
    self.isMuted = isMuted
    self.isSolo = isSolo
    self.envelope = envelope
    self.clips = ClipList(clips.sorted(by: Clip.timelineOrder))
    self.effects = effects
    self.output = output
    self.panEnvelope = panEnvelope
  }

  /// A track holding `clips`, sorted by ``Clip/timelineOrder(_:_:)`` (shared when they are).
  public init(
    id: ID, name: String, gain: Gain = .unity, pan: Double = 0, isMuted: Bool = false,
    isSolo: Bool = false, envelope: Envelope? = nil, clips: ClipList, effects: [Effect] = [],
    output: Track.ID? = nil, panEnvelope: ParameterEnvelope? = nil
  ) {
    self.init(
      id: id, name: name, gain: gain, pan: pan, isMuted: isMuted, isSolo: isSolo,
      envelope: envelope, effects: effects, output: output, panEnvelope: panEnvelope)
    self.clips = clips
    if !clips.isSorted { self.clips.sort(by: Clip.timelineOrder) }
  }

  /// The clip with `id`, if it is on this track: O(log n).
  public func clip(_ id: Clip.ID) -> Clip? {
    clips.clip(id)
  }
}

extension Track {
  /// This track's automation (volume, pan, its effects' lanes) with `range` taken out of the
  /// timeline, as a ripple takes it out of its clips (``Envelope/removing(_:)``).
  public func removingTime(_ range: FrameRange) -> Track {
    var moved = self
    moved.envelope = envelope?.removing(range)
    moved.panEnvelope = panEnvelope?.removing(range)
    moved.effects = effects.map { $0.removingTime(range) }
    return moved
  }

  /// This track's automation with a gap opened, as an insert opens it in its clips.
  public func openingTime(at position: FramePosition, length: FrameCount) -> Track {
    var moved = self
    moved.envelope = envelope?.opening(at: position, length: length)
    moved.panEnvelope = panEnvelope?.opening(at: position, length: length)
    moved.effects = effects.map { $0.openingTime(at: position, length: length) }
    return moved
  }
}

extension Clip {
  /// The order clips take on a track: by timeline start, then by id.
  public static func timelineOrder(_ a: Clip, _ b: Clip) -> Bool {
    (a.timelineStart, a.id) < (b.timelineStart, b.id)
  }
}

extension Track {
  /// A pan position as typed (`-0.5`, `1`): a number from -1 (left) to 1 (right).
  public static func pan(parsing text: String) throws(TimelineError) -> Double {
    guard
      let pan = Double(String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())),
      pan.isFinite
    else {
      throw .invalidPan(text)
    }
    guard (-1.0...1.0).contains(pan) else { throw .panOutOfRange(track: nil, pan: pan) }
    return pan
  }
}
