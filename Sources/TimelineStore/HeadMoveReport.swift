public import Interchange
public import Timeline

/// Where a move of the head (undo, redo, checkout) went and what it changed, said as
/// `tape watch` says it but bounded (``/Interchange/DiffWords/boundedLines(_:)``: a ripple
/// edit's moved clips are one phrase): `undo: back to v41 "Move c3" — c3 moved 0:05.000 →
/// 0:03.000`; and as JSON, the mutation object (`version`, `ids`) plus `from`, `label` and
/// `changes` as `tape diff --json` gives them.
///
/// ```swift
/// let editor = try ScopedEditor(at: "song.tape")
/// let move = try editor.undo()
/// print(HeadMoveReport(.undo, move).line)
/// ```
public struct HeadMoveReport: Sendable {
  /// Which move it was: its word in the line.
  public enum Kind: String, Sendable, Hashable {
    case undo, redo, checkout
  }

  /// Which move it was.
  public let kind: Kind
  /// The head before the move.
  public let from: Int64
  /// The head after it.
  public let to: Int64
  /// The label of the version reached.
  public let label: String
  /// What changed from `from` to `to`; nil when it could not be read (the head has moved
  /// whatever happens), and not said when the head did not move.
  public let diff: ProjectDiff?
  /// The project's rate, to say the diff's times.
  public let sampleRate: Int

  /// The report of a move of the head from `from` to `to` (a `label`ed version), with what it
  /// changed when that could be read.
  public init(
    _ kind: Kind, from: Int64, to: Int64, label: String, diff: ProjectDiff?, sampleRate: Int
  ) {
    self.kind = kind
    self.from = from
    self.to = to
    self.label = label
    self.diff = diff
    self.sampleRate = sampleRate
  }

  /// The report of a move that read what it changed (``ScopedEditor``).
  public init(_ kind: Kind, _ move: ScopedMove) {
    self.init(
      kind, from: move.from, to: move.to, label: move.label, diff: move.diff,
      sampleRate: move.sampleRate)
  }

  /// What changed, unless the head stayed where it was.
  private var change: ProjectDiff? { from == to ? nil : diff }

  /// The `--json` object: `{"version": 41, "ids": [], "from": 42, "label": …, "changes": […]}`.
  public var json: JSON {
    let words = DiffWords(sampleRate: sampleRate)
    return .object([
      ("version", .integer(to)), ("ids", .array([])), ("from", .integer(from)),
      ("label", .string(label)),
      ("changes", .array(change.map { words.changesJSON($0) } ?? [])),
    ])
  }

  /// `undo: back to v41 "Move c3" — c3 moved 0:05.000 → 0:03.000` (`redo: forward to`,
  /// `checkout: at`).
  public var line: String {
    let words = DiffWords(sampleRate: sampleRate)
    let reached =
      switch kind {
      case .undo: "back to"
      case .redo: "forward to"
      case .checkout: "at"
      }
    let changes = change.map { words.boundedLines($0) } ?? []
    return
      "\(kind.rawValue): \(reached) v\(to) \(words.quoted(label))\(changes.isEmpty ? "" : " — " + changes.joined(separator: "; "))"
  }
}
