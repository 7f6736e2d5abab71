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
    output: Track.ID? = nil
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
  }

  /// A track holding `clips`, sorted by ``Clip/timelineOrder(_:_:)`` (shared when they are).
  public init(
    id: ID, name: String, gain: Gain = .unity, pan: Double = 0, isMuted: Bool = false,
    isSolo: Bool = false, envelope: Envelope? = nil, clips: ClipList, effects: [Effect] = [],
    output: Track.ID? = nil
  ) {
    self.init(
      id: id, name: name, gain: gain, pan: pan, isMuted: isMuted, isSolo: isSolo,
      envelope: envelope, effects: effects, output: output)
    self.clips = clips
    if !clips.isSorted { self.clips.sort(by: Clip.timelineOrder) }
  }

  /// The clip with `id`, if it is on this track: O(log n).
  public func clip(_ id: Clip.ID) -> Clip? {
    clips.clip(id)
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
