public import Foundation
public import Interchange
import Timeline

/// How `tape log` says a subject's versions (``SubjectLog``) and the last versions of the
/// head's line (``RecentChanges``): a field by its name as `ls --json` has it (`track`,
/// `source`, `frame`), times in clock form (`0:01.500`, or `72000f` with `frames`; frames in
/// JSON), ids with their prefix, gains in decibels.
///
/// ```swift
/// let log = try store.log(of: .clip(Clip.ID(3)), allBranches: false)
/// let format = LogFormat(subject: .clip(Clip.ID(3)), sampleRate: 48_000)
/// for entry in log.entries { print(format.line(entry, marked: false)) }
/// // v14  2026-11-25 18:40:01  "Trim c3": timelineStart 0:01.000 → 0:01.500
/// print(format.json(log, all: false, omitted: 0).line)
/// ```
public struct LogFormat: Sendable {
  /// Whose versions are said.
  public let subject: LogSubject
  /// The project's rate, for times in clock form.
  public let sampleRate: Int
  /// Whether times are said as frames (`72000f`) rather than `m:ss.mmm`.
  public let frames: Bool

  /// How `subject`'s log is said, its times at `sampleRate`, in frames when `frames`.
  public init(subject: LogSubject, sampleRate: Int, frames: Bool = false) {
    self.subject = subject
    self.sampleRate = sampleRate
    self.frames = frames
  }

  /// A version's date in local time: `2026-11-25 18:40:01`.
  public static func date(_ date: Date) -> String {
    // One formatter for every line: making one costs more than a line (a log may have
    // thousands).
    dateFormatter.string(from: date)
  }

  private static let dateFormatter = {
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    return formatter
  }()

  /// What a stored column is called in the output, and how its value reads.
  fileprivate enum Kind {
    case time, gain, id(String), flag, number, text, bytes, chain
    /// A track's place in the order: 0-based in `--json` (as stored, and as it always was),
    /// from 1 in the text, as `track move --to`, `tape diff` and `ls` count.
    case row
  }

  private func field(_ column: String) -> (name: String, kind: Kind) {
    switch (subject, column) {
    case (.clip, "trackID"): ("track", .id("t"))
    case (.clip, "sourceID"): ("source", .id("s"))
    case (.clip, "timelineStart"), (.clip, "sourceStart"), (.clip, "length"),
      (.clip, "fadeInLength"), (.clip, "fadeOutLength"):
      (column, .time)
    case (.track, "muted"), (.track, "solo"), (.effect, "bypassed"): (column, .flag)
    case (.track, "position"): (column, .row)
    case (_, "gainDB"): (column, .gain)
    case (.marker, "position"): ("frame", .time)
    case (.effect, "trackID"): ("chain", .chain)
    case (.track, "output"): ("output", .chain)
    case (.effect, "sidechain"): ("sidechain", .id("t"))
    case (.send, "fromID"): ("from", .id("t"))
    case (.send, "toID"): ("to", .id("t"))
    case (.send, "preFader"): ("pre-fader", .flag)
    case (.effect, "position"): ("index", .number)
    case (.effect, "state"): ("state", .bytes)
    case (.source, "path"): ("path", .text)
    case (_, "name"), (_, "plugin"), (_, "parameters"), (_, "contentHash"), (_, "fadeInCurve"),
      (_, "fadeOutCurve"):
      (column, .text)
    default: (column, .number)
    }
  }

  private func words(_ value: LogValue?, _ kind: Kind) -> String {
    guard let value else { return "none" }
    switch (value, kind) {
    case (.null, .chain): return "master"
    case (.null, .gain): return "-inf dB"
    case (.null, _): return "none"
    case (.integer(let count), .time):
      return TimeValue.shown(FrameCount(count), sampleRate: sampleRate, inFrames: frames)
    case (.integer(let id), .id), (.integer(let id), .chain):
      return kind.prefix + "\(id)"
    case (.integer(let flag), .flag): return flag != 0 ? "yes" : "no"
    case (.integer(let index), .row): return "\(index + 1)"
    case (.real(let decibels), .gain): return "\(Gain(decibels: decibels))"
    case (.integer(let decibels), .gain): return "\(Gain(decibels: Double(decibels)))"
    case (.integer(let number), _): return "\(number)"
    case (.real(let number), _): return String(format: "%g", number)
    case (.text(let text), _): return "\"\(ProjectWords.escaped(text))\""
    case (.bytes(let bytes), .text):
      return "\"\(ProjectWords.escaped(String(decoding: bytes, as: UTF8.self)))\""
    case (.bytes(let bytes), _): return "\(bytes.count) bytes"
    }
  }

  private func json(_ value: LogValue?, _ kind: Kind) -> JSON {
    guard let value else { return .null }
    switch (value, kind) {
    case (.null, .chain): return .string("master")
    case (.null, _): return .null
    case (.integer(let id), .id), (.integer(let id), .chain): return .string(kind.prefix + "\(id)")
    case (.integer(let flag), .flag): return .bool(flag != 0)
    case (.integer(let number), .gain): return .number(Double(number))
    case (.integer(let number), _): return .integer(number)
    case (.real(let number), _): return .number(number)
    case (.text(let text), _): return .string(text)
    case (.bytes(let bytes), _): return .string(bytes.map { String(format: "%02x", $0) }.joined())
    }
  }

  /// `v14  2026-11-25 18:40:01  "Trim c3": timelineStart 0:01.000 → 0:01.500, length …`;
  /// `marked`, a version off the head's line says so.
  public func line(_ entry: LogEntry, marked: Bool) -> String {
    let words = DiffWords(sampleRate: sampleRate)
    var parts: [String] = []
    for field in entry.fields {
      if field.name == "envelope" {
        parts.append("envelope edited")
        continue
      }
      let (column, kind) = self.field(field.name)
      // Called as `tape diff` calls it ("t2 moved from row 2 to 1").
      let name = if case .row = kind { "row" } else { column }
      switch entry.change {
      case .added: parts.append("\(name) \(self.words(field.after, kind))")
      case .removed: parts.append("\(name) was \(self.words(field.before, kind))")
      case .changed:
        parts.append("\(name) \(self.words(field.before, kind)) → \(self.words(field.after, kind))")
      }
    }
    let what =
      switch entry.change {
      case .added: "\(subject) added: "
      case .removed: "\(subject) removed: "
      case .changed: ""
      }
    let off = marked && !entry.isOnHeadLine ? " (off the head's line)" : ""
    return
      "v\(entry.entry.version)  \(Self.date(entry.entry.date))  \(words.quoted(entry.entry.label))\(off): \(what)\(parts.joined(separator: ", "))"
  }

  /// The `tape log FILE ID --json` contract (docs/reference/json.md); keep stable. `all`
  /// says whether the log is of every branch; `omitted` counts the versions a limit left out.
  public func json(_ log: SubjectLog, all: Bool, omitted: Int) -> JSON {
    let formatter = HistoryJSON.dateFormatter()
    return .object([
      ("id", .string(subject.description)), ("head", .integer(log.head)), ("all", .bool(all)),
      (
        "versions",
        .array(
          log.entries.map { entry in
            .object([
              ("version", .integer(entry.entry.version)),
              ("parent", entry.entry.parent.map(JSON.integer) ?? .null),
              ("date", .string(formatter.string(from: entry.entry.date))),
              ("label", .string(entry.entry.label)), ("change", .string(entry.change.rawValue)),
              ("onHeadLine", .bool(entry.isOnHeadLine)),
              (
                "fields",
                .array(
                  entry.fields.map { field in
                    let (name, kind) = self.field(field.name)
                    return .object([
                      ("field", .string(name)), ("before", json(field.before, kind)),
                      ("after", json(field.after, kind)),
                    ])
                  })
              ),
            ])
          })
      ),
      ("omitted", .integer(Int64(omitted))),
    ])
  }
}

extension LogFormat {
  /// The last versions of the head's line (``RecentChanges``), newest first, one line each
  /// with what the version changed as `tape diff` says it, bounded
  /// (``/Interchange/DiffWords/boundedLines(_:)``): `v14  2026-11-25 18:40:01  "Trim c3":
  /// c3 trimmed …`.
  public static func lines(_ recent: RecentChanges, sampleRate: Int) -> [String] {
    let words = DiffWords(sampleRate: sampleRate)
    return recent.versions.map { version in
      let entry = version.entry
      let changes = version.diff.map { words.boundedLines($0) } ?? []
      return
        "v\(entry.version)  \(date(entry.date))  \(words.quoted(entry.label))\(changes.isEmpty ? "" : ": " + changes.joined(separator: "; "))"
    }
  }
}

extension LogFormat.Kind {
  fileprivate var prefix: String {
    switch self {
    case .id(let prefix): prefix
    case .chain: "t"
    default: ""
    }
  }
}
