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
public struct EntityID<Entity: IdentifiedEntity>: Sendable, Hashable, Comparable, Codable,
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
