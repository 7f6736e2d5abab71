/// A named time on the timeline: `m1 "chorus" at 1:02.500`.
///
/// A marker is a value like a clip: the store keeps it in a tracked table, so adding, moving,
/// renaming or removing one is one version that undo, redo and checkout restore exactly. Its
/// name is how a time argument names it (`--at @chorus`, `@chorus+2s`), so names are unique
/// in a project, one line, and never an id's form (`m1`, `c3`, `12`).
///
/// ```swift
/// let chorus = Marker(id: Marker.ID(1), name: "chorus", position: FramePosition(2_976_000))
/// chorus.id.description  // "m1"
/// ```
public struct Marker: Sendable, Hashable, Codable, Identifiable, IdentifiedEntity {
  public typealias ID = EntityID<Marker>
  public static let idPrefix = "m"
  public static let entityName = "marker"

  public let id: ID
  public var name: String
  /// Where the marker is on the timeline, in frames at the project rate.
  public var position: FramePosition

  public init(id: ID, name: String, position: FramePosition) {
    self.id = id
    self.name = name
    self.position = position
  }

  /// The order of ``Project/markers``: by position, then by id.
  public static func timelineOrder(_ a: Marker, _ b: Marker) -> Bool {
    (a.position, a.id) < (b.position, b.id)
  }

  /// The longest name, in characters (as a tag's).
  public static let maximumNameLength = 100

  /// Checks `name` as a marker's name: not blank, no blanks at either end, no control
  /// character (a newline, a tab), and not an id's form (`m1`, `c3`, `t2`, `12`), which a
  /// command would read as an id. What every marker of a project must be, old ones included
  /// (``validateNew(name:)`` adds the rules for a name being given).
  public static func validate(name: String) throws(TimelineError) {
    guard !name.trimmingBlanks.isEmpty else { throw .invalidMarkerName(name, reason: .blank) }
    guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else { throw .invalidMarkerName(name, reason: .controlCharacter) }
    guard name.trimmingBlanks == name else { throw .invalidMarkerName(name, reason: .blanksAround) }
    guard !looksLikeID(name) else { throw .invalidMarkerName(name, reason: .idForm) }
    guard !name.hasPrefix("@") else { throw .invalidMarkerName(name, reason: .at) }
  }

  /// Checks `name` as a name being given to a marker (added, renamed, imported): the rules of
  /// ``validate(name:)``, and not ending in what reads as an offset (`take+2s`, `bar-12`:
  /// `@take+2s` would mean both it and 2 s after `take`), and at most ``maximumNameLength``
  /// characters. Markers named so before these rules keep their names: they still move, ripple
  /// and undo.
  public static func validateNew(name: String) throws(TimelineError) {
    try validate(name: name)
    guard name.count <= maximumNameLength else {
      throw .invalidMarkerName(name, reason: .tooLong(name.count))
    }
    if let sign = name.lastIndex(where: { $0 == "+" || $0 == "-" }), sign > name.startIndex {
      let suffix = String(name[name.index(after: sign)...])
      if suffix.first.map({ $0.isASCII && ($0.isNumber || $0 == ".") }) == true,
        (try? TimeValue(parsing: suffix, sampleRate: 48_000)) != nil
      {
        throw .invalidMarkerName(name, reason: .readsAsOffset(String(name[sign...])))
      }
    }
  }

  /// Whether `text` is written as an id: an optional letter, then digits only.
  static func looksLikeID(_ text: String) -> Bool {
    var digits = Substring(text)
    if let first = digits.first, first.isASCII, first.isLetter { digits = digits.dropFirst() }
    return !digits.isEmpty && digits.allSatisfy(\.isASCIIDigit)
  }

  /// Why a name cannot be a marker's.
  public enum NameProblem: Sendable, Hashable {
    case blank
    case controlCharacter
    case blanksAround
    case idForm
    case at
    /// It ends in a sign and a time (`-12` of `bar-12`), which `@NAME` reads as an offset.
    case readsAsOffset(String)
    /// More characters than ``maximumNameLength``: how many.
    case tooLong(Int)
  }
}

extension Project {
  /// The marker with `id`.
  public func marker(_ id: Marker.ID) -> Marker? {
    markers.first { $0.id == id }
  }

  /// The marker named `name` (names are unique).
  public func marker(named name: String) -> Marker? {
    markers.first { $0.name == name }
  }
}
