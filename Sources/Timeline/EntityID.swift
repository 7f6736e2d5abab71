/// A kind of model value that is identified by a short, stable, prefixed id (`s3`, `t1`, `c12`).
public protocol IdentifiedEntity {
  /// The letter that starts this kind's ids on the command line and in JSON.
  static var idPrefix: String { get }
  /// What this kind is called in messages ("clip", "track", "source").
  static var entityName: String { get }
}

/// The id of one source, track or clip: a positive integer shown with its kind's prefix.
///
/// Each model type has its own id type (`Clip.ID`, `Track.ID`, `Source.ID`), so one kind's id
/// can never be passed for another's. Ids are allocated by the store and never reused, not even
/// after an undo.
///
/// ```swift
/// let id = Clip.ID(12)
/// id.description              // "c12"
/// Clip.ID(parsing: "c12")     // Clip.ID(12)
/// Clip.ID(parsing: "t12")     // nil: that is a track id
/// ```
public struct EntityID<Entity: IdentifiedEntity>: Sendable, BitwiseCopyable, Hashable, Comparable,
  Codable,
  CustomStringConvertible
{
  public let rawValue: Int64

  public init(_ rawValue: Int64) {
    self.rawValue = rawValue
  }

  /// Parses `c12` (or a bare `12`) into an id of this kind; `nil` for anything else.
  public init?(parsing text: String) {
    var digits = Substring(text)
    if digits.hasPrefix(Entity.idPrefix) { digits = digits.dropFirst(Entity.idPrefix.count) }
    guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), let value = Int64(digits), value > 0
    else { return nil }
    self.rawValue = value
  }

  public var description: String { "\(Entity.idPrefix)\(rawValue)" }

  public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

  public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

  /// The hash of the number itself, by `Int64`'s one-shot path: what a `Set`, a `Dictionary`
  /// or a `TreeDictionary` of ids asks for. The synthesized form fed the number through a
  /// `Hasher` built and finished for each id, a tenth of the in-memory part of a large
  /// checkout (perf, 100,000 clips). The same value as `hash(into:)` gives a hasher seeded
  /// alike, as `Hashable` requires.
  public func _rawHashValue(seed: Int) -> Int { rawValue._rawHashValue(seed: seed) }

  /// Encodes as the prefixed string (`"c12"`), the form scripts see in `--json` output.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let id = Self(parsing: text) else {
      throw DecodingError.dataCorruptedError(
        in: container, debugDescription: "'\(text)' is not a \(Entity.entityName) id")
    }
    self = id
  }
}

extension Character {
  var isASCIIDigit: Bool { isASCII && isNumber }
}

/// A set of ids for testing membership while scanning a whole project: one bit per id, so a
/// test costs a shift and a mask where `Set.contains` hashes (SipHash). Ids are small positive
/// integers handed out in order; a set whose largest id is far beyond its size falls back to
/// a `Set`.
public struct EntityIDFilter<Entity: IdentifiedEntity>: Sendable {
  private let words: [UInt64]
  private let fallback: Set<EntityID<Entity>>?

  public init(_ ids: Set<EntityID<Entity>>) {
    let largest = ids.lazy.map(\.rawValue).max() ?? 0
    guard ids.allSatisfy({ $0.rawValue >= 0 }), largest < max(1 << 20, Int64(ids.count) * 64)
    else {
      words = []
      fallback = ids
      return
    }
    var words = [UInt64](repeating: 0, count: Int(largest / 64) + 1)
    for id in ids { words[Int(id.rawValue / 64)] |= 1 << UInt64(id.rawValue % 64) }
    self.words = words
    fallback = nil
  }

  @inline(__always)
  public func contains(_ id: EntityID<Entity>) -> Bool {
    if let fallback { return fallback.contains(id) }
    let word = Int(truncatingIfNeeded: id.rawValue >> 6)
    guard id.rawValue >= 0, word < words.count else { return false }
    return words[word] & (1 << UInt64(id.rawValue & 63)) != 0
  }
}
