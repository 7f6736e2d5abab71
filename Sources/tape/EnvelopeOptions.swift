import ArgumentParser
import Timeline

/// The options every envelope command takes (`tape track envelope`, `tape fx envelope`, `tape
/// send envelope`), read into one ``EnvelopeEdit``: the same forms, shapes and checks for all.
struct EnvelopeEditOptions: ParsableArguments {
  @Option(
    parsing: .unconditional,
    help:
      "Breakpoints: TIME:VALUE pairs, comma-separated (0s:0dB,10s:-6dB,12s:-inf for a volume envelope)."
  )
  var set: String?
  @Option(
    help:
      "Segment shapes (db, linear or hold for a gain; linear or hold for a parameter or pan), one for all or one per segment (linear,hold); with --add, one for all or one per added point."
  )
  var shape: String?
  @Flag(help: "Remove the envelope.") var clear = false
  @Option(parsing: .unconditional, help: "Points to add: TIME:VALUE pairs, comma-separated.")
  var add: String?
  @Option(parsing: .unconditional, help: "Times of points to remove, comma-separated.")
  var remove: String?
  @Option(parsing: .unconditional, help: "The time of a point to move (with --to).")
  var move: String?
  @Option(parsing: .unconditional, help: "Where --move takes the point.") var to: String?

  /// Exactly one edit, `--shape` only with points, `--move` with `--to`.
  func check() throws {
    guard [set != nil, clear, add != nil, remove != nil, move != nil].filter({ $0 }).count == 1
    else {
      throw ValidationError(
        "give one of --set POINTS, --add POINTS, --remove TIMES, --move TIME --to TIME or --clear")
    }
    guard shape == nil || set != nil || add != nil else {
      throw ValidationError("--shape shapes the points of --set or --add; give them together")
    }
    guard (move != nil) == (to != nil) else {
      throw ValidationError("--move TIME and --to TIME go together")
    }
  }

  /// The history label: `Envelope t1 add 5s:-6dB hold`.
  func label(_ name: String) -> String {
    if clear { return "Clear envelope of \(name)" }
    if let add { return "Envelope \(name) add \(add)" + (shape.map { " \($0)" } ?? "") }
    if let remove { return "Envelope \(name) remove \(remove)" }
    if let move, let to { return "Envelope \(name) move \(move) to \(to)" }
    return "Envelope \(name) \(set ?? "")" + (shape.map { " \($0)" } ?? "")
  }

  /// The edit, its times read as every timeline time is (markers, clip edges).
  func edit(_ project: Project) throws -> EnvelopeEdit {
    if clear { return .clear }
    if let add {
      return .add(try TrackCommand.framesAt(add, project, option: "--add"), shapes: shape)
    }
    if let remove {
      return .remove(
        try remove.split(separator: ",", omittingEmptySubsequences: false).map {
          try parsePosition(String($0), project, option: "--remove")
        })
    }
    if let move, let to {
      let from = try parsePosition(move, project, option: "--move")
      return .move(from, to: try parsePosition(to, project, relativeTo: from, option: "--to"))
    }
    return .set(try TrackCommand.framesAt(set ?? "", project, option: "--set"), shapes: shape)
  }
}
