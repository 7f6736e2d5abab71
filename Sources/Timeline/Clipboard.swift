/// What plays in a stretch of time on some tracks, kept under a name to be pasted elsewhere in
/// the same project: the clips that overlap the range, each cut to it, and each track's volume
/// envelope over it.
///
/// Made by ``Project/copyRange(_:tracks:name:)`` and placed by
/// ``Project/paste(_:at:tracks:ripple:overwrite:newClipID:)``. Every time in a clipboard is
/// relative to
/// the range's start, so a clipboard does not depend on where it was copied from; the pieces
/// name the sources they play, which must still be in the project when it is pasted.
///
/// ```swift
/// let board = try project.copyRange(FrameRange(start: 480_000, count: 96_000), name: "hook")
/// let commands = try project.paste(board, at: 1_440_000, ripple: false) { ids.newClipID() }
/// ```
public struct Clipboard: Sendable, Hashable, Codable {
  /// One clip as copied: cut to the range, placed `offset` frames after its start.
  public struct Piece: Sendable, Hashable, Codable {
    /// The track it was copied from (one of ``Clipboard/tracks``).
    public var track: Track.ID
    /// The clip it was copied from (it may since have changed or gone; the piece has not).
    public var copiedFrom: Clip.ID
    public var source: Source.ID
    /// Where it starts, from the range's start.
    public var offset: FrameCount
    /// The crop: which frames of the source it plays.
    public var sourceRange: FrameRange
    public var gain: Gain
    public var fadeIn: Fade
    public var fadeOut: Fade

    public init(
      track: Track.ID, copiedFrom: Clip.ID, source: Source.ID, offset: FrameCount,
      sourceRange: FrameRange, gain: Gain, fadeIn: Fade, fadeOut: Fade
    ) {
      self.track = track
      self.copiedFrom = copiedFrom
      self.source = source
      self.offset = offset
      self.sourceRange = sourceRange
      self.gain = gain
      self.fadeIn = fadeIn
      self.fadeOut = fadeOut
    }

    /// The piece as a clip `id` whose range starts at `position`.
    public func clip(id: Clip.ID, at position: FramePosition) -> Clip {
      Clip(
        id: id, source: source, timelineStart: position + offset, sourceRange: sourceRange,
        gain: gain, fadeIn: fadeIn, fadeOut: fadeOut)
    }
  }

  /// One track copied: its id, its envelope and pan lane over the range (times from the
  /// range's start; nil when the track had none) and its sends' envelopes.
  public struct CopiedTrack: Sendable, Hashable, Codable {
    public var id: Track.ID
    public var envelope: Envelope?
    /// The pan lane over the range (``Envelope/excerpt(_:)`` of its curve); nil for none.
    public var panEnvelope: ParameterEnvelope?
    /// Every send of the track, with its envelope over the range (nil for none). A clipboard
    /// kept before these were copied has none, and a paste leaves the sends alone.
    public var sends: [CopiedSend]

    public init(
      id: Track.ID, envelope: Envelope?, panEnvelope: ParameterEnvelope? = nil,
      sends: [CopiedSend] = []
    ) {
      self.id = id
      self.envelope = envelope
      self.panEnvelope = panEnvelope
      self.sends = sends
    }
  }

  /// A send of a copied track: which it was, where it went, and its envelope over the range
  /// (times from the range's start; nil when it had none).
  public struct CopiedSend: Sendable, Hashable, Codable {
    public var id: Send.ID
    public var to: Track.ID
    public var envelope: Envelope?

    public init(id: Send.ID, to: Track.ID, envelope: Envelope?) {
      self.id = id
      self.to = to
      self.envelope = envelope
    }
  }

  public var name: String
  /// Where it was copied from, on the timeline of the version it was copied at.
  public var range: FrameRange
  /// The tracks copied, in the display order they had: what `--tracks` of a paste maps onto,
  /// in this order.
  public var tracks: [CopiedTrack]
  /// In timeline order (offset, then the track's place in ``tracks``, then the clip's id).
  public var pieces: [Piece]
  /// Whether it holds its tracks' pan lanes and sends' envelopes (every clipboard copied since
  /// they were kept; false for one kept by an older Tape, which knew none): a paste of one
  /// without leaves the target's lanes as they are, where one with them lays them over the
  /// range (a track copied without a pan lane flattening the target's to its own pan).
  public var keepsLanes: Bool

  public init(
    name: String, range: FrameRange, tracks: [CopiedTrack], pieces: [Piece],
    keepsLanes: Bool = true
  ) {
    self.name = name
    self.range = range
    self.tracks = tracks
    self.pieces = pieces
    self.keepsLanes = keepsLanes
  }

  /// How long it is: the range's length (silence copied at either end included).
  public var length: FrameCount { range.count }

  /// The most characters a name has.
  public static let maximumNameLength = 64

  /// Refuses a name that is not 1–64 letters, digits, `-`, `_` and `.` (starting with a letter
  /// or digit): a name scripts can type unquoted, and that no option or `@NAME` of a batch can
  /// be mistaken for.
  public static func validate(name: String) throws(TimelineError) {
    guard let first = name.unicodeScalars.first, name.count <= maximumNameLength,
      first.properties.isAlphabetic || ("0"..."9").contains(first),
      name.unicodeScalars.allSatisfy({
        $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)
      })
    else { throw .invalidClipboardName(name) }
  }
}
