/// A send: a copy of one track's sound fed into another track (an aux bus, a shared reverb).
///
/// A send is a value like a marker: the store keeps it in a tracked table, so adding one,
/// changing its gain, pan or tap, and removing it are versions that undo, redo and checkout
/// restore exactly. Post-fader (the default) it taps what its track sends to its output, after
/// the track's whole chain and its mute; pre-fader it taps the track's clips (at their clip
/// gains) and inputs before the track's gain, pan, envelope, effects and mute.
///
/// ```swift
/// let send = Send(id: Send.ID(1), from: Track.ID(1), to: Track.ID(5), gain: Gain(decibels: -6))
/// send.id.description  // "n1"
/// ```
public struct Send: Sendable, Hashable, Codable, Identifiable, IdentifiedEntity {
  public typealias ID = EntityID<Send>
  public static let idPrefix = "n"
  public static let entityName = "send"

  public let id: ID
  /// The track whose sound is sent.
  public var from: Track.ID
  /// The track that receives it (mixed with its clips, before its gain, pan and effects).
  public var to: Track.ID
  /// The send's level.
  public var gain: Gain
  /// −1 (left) … 0 (centre) … +1 (right): a balance on the sent stereo signal.
  public var pan: Double
  /// Taps before the track's gain, pan and envelope (and so before its effects).
  public var isPreFader: Bool
  /// Automation of the send's level over its ``gain``, in dB as a track's volume envelope
  /// (``Envelope``); nil for none.
  public var envelope: Envelope?

  public init(
    id: ID, from: Track.ID, to: Track.ID, gain: Gain = .unity, pan: Double = 0,
    isPreFader: Bool = false, envelope: Envelope? = nil
  ) {
    self.id = id
    self.from = from
    self.to = to
    self.gain = gain
    self.pan = pan
    self.isPreFader = isPreFader
    self.envelope = envelope
  }

  /// `pre` or `post`: the tap as commands and JSON say it.
  public var tap: String { isPreFader ? "pre" : "post" }
}
