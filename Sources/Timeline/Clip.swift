import Synchronization

/// One placement of a source's audio on a track: which frames of the source play, where on the
/// timeline, how loud, and with which fades.
///
/// A clip plays `sourceRange` of its source (the crop, at the project rate) starting at
/// `timelineStart`:
/// `out[timelineStart + i] += source[sourceRange.start + i] · gain · fade(i)` for
/// `0 ≤ i < sourceRange.count`. Clips are immutable values; the edit functions
/// (``split(at:newID:)``, ``trimmed(start:end:)``, ``moved(to:)``…) return new clips.
///
/// ```swift
/// let clip = Clip(id: Clip.ID(1), source: Source.ID(1), timelineStart: 48_000,
///                 sourceRange: FrameRange(start: 0, count: 96_000))
/// clip.timelineRange  // [48000, 144000)
/// ```
public struct Clip: Sendable, Hashable, Codable, Identifiable, IdentifiedEntity {
  public typealias ID = EntityID<Clip>
  public static let idPrefix = "c"
  public static let entityName = "clip"

  public let id: ID
  public var source: Source.ID
  /// Where the clip's first frame plays on the timeline.
  public var timelineStart: FramePosition
  /// The crop: which frames of the source (at the project rate) the clip plays.
  public var sourceRange: FrameRange
  public var gain: Gain
  public var fadeIn: Fade
  public var fadeOut: Fade
  /// A name the clip can be called by (`@intro` where a clip id is taken), unique in the
  /// project (``validateName(_:)``); nil for none. A copy or a new part of it has none.
  public var name: String? {
    get { ClipName.text(of: nameNumber) }
    set { nameNumber = ClipName.number(of: newValue) }
  }
  /// The name as its number in ``ClipName``'s table (0 for none): what the clip stores, so
  /// that a clip holds no reference and copies as plain bytes.
  private var nameNumber: UInt32

  public init(
    id: ID, source: Source.ID, timelineStart: FramePosition, sourceRange: FrameRange,
    gain: Gain = .unity, fadeIn: Fade = .none, fadeOut: Fade = .none, name: String? = nil
  ) {
    self.id = id
    self.source = source
    self.timelineStart = timelineStart
    self.sourceRange = sourceRange
    self.gain = gain
    self.fadeIn = fadeIn
    self.fadeOut = fadeOut
    self.nameNumber = ClipName.number(of: name)
  }

  /// The most characters a clip's name has.
  public static let maximumNameLength = 64

  /// Refuses a clip name that is not 1–64 letters, digits, `-`, `_` and `.` starting with a
  /// letter or digit (so that `@NAME` reads as one word in a script), or that is written as an
  /// id (`c3`, `12`), which a command would read as one.
  public static func validateName(_ name: String) throws(TimelineError) {
    guard let first = name.unicodeScalars.first, name.count <= maximumNameLength,
      first.properties.isAlphabetic || ("0"..."9").contains(first),
      name.unicodeScalars.allSatisfy({
        $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)
      }), !Marker.looksLikeID(name)
    else { throw .invalidClipName(name) }
  }

  /// The clip's length in frames (the crop's length).
  public var length: FrameCount { sourceRange.count }

  /// The frames the clip covers on the timeline.
  public var timelineRange: FrameRange { FrameRange(start: timelineStart, count: length) }

  /// The first timeline frame after the clip.
  public var timelineEnd: FramePosition { timelineStart + length }
}

extension Clip {
  private enum CodingKeys: String, CodingKey {
    case id, source, timelineStart, sourceRange, gain, fadeIn, fadeOut, name
  }

  /// The same keys, in the same order, as the stored properties had when `name` was one.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(id, forKey: .id)
    try container.encode(source, forKey: .source)
    try container.encode(timelineStart, forKey: .timelineStart)
    try container.encode(sourceRange, forKey: .sourceRange)
    try container.encode(gain, forKey: .gain)
    try container.encode(fadeIn, forKey: .fadeIn)
    try container.encode(fadeOut, forKey: .fadeOut)
    try container.encodeIfPresent(name, forKey: .name)
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      id: try container.decode(ID.self, forKey: .id),
      source: try container.decode(Source.ID.self, forKey: .source),
      timelineStart: try container.decode(FramePosition.self, forKey: .timelineStart),
      sourceRange: try container.decode(FrameRange.self, forKey: .sourceRange),
      gain: try container.decode(Gain.self, forKey: .gain),
      fadeIn: try container.decode(Fade.self, forKey: .fadeIn),
      fadeOut: try container.decode(Fade.self, forKey: .fadeOut),
      name: try container.decodeIfPresent(String.self, forKey: .name))
  }
}

/// The table of clip names: each name a clip has had in this process, numbered from 1, so
/// that a ``Clip`` stores a number instead of a string.
///
/// Why: a clip with a `String` is not plain data, so every copy of a clip (a snapshot's chunk
/// of clips is copied whenever one of its clips changes, and a checkout of thousands of
/// clips copies most chunks) went through a call per clip and a reference count; with a number,
/// copying a chunk is copying its bytes. Equal names get the same number, so clips compare and
/// hash as before. The table only grows (a name stays numbered while the process runs): names
/// are short and few, and nothing else would know when a number is no longer held.
enum ClipName {
  private static let table = Mutex<(names: [String], numbers: [String: UInt32])>(([], [:]))

  /// The number of `name` (0 for nil), numbering it if it is new.
  static func number(of name: String?) -> UInt32 {
    guard let name else { return 0 }
    return table.withLock { table in
      if let number = table.numbers[name] { return number }
      table.names.append(name)
      let number = UInt32(table.names.count)
      table.numbers[name] = number
      return number
    }
  }

  /// The name numbered `number` (nil for 0).
  static func text(of number: UInt32) -> String? {
    guard number > 0 else { return nil }
    return table.withLock { $0.names[Int(number) - 1] }
  }
}
