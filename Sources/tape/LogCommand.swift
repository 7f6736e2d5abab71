import ArgumentParser
import Foundation
import Interchange
import Timeline
import TimelineStore

struct Log: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "log",
    abstract: "Show every version that changed a clip, track, source, marker or effect.",
    discussion: """
      Newest first, on the head's line (the head and its ancestors; --all: every branch, \
      marking the versions off the head's line): the version, its date and label, and each \
      field the version changed, before → after (a track's volume automation is said as \
      'envelope edited'). It reads the changes each version recorded: nothing is checked out \
      or replayed, so it stays fast on a long history. Without an id: the last --limit \
      versions of the head's line (30 by default), each with what it changed.
      Example: tape log song.tape c3
      Example: tape log song.tape t1 --all --json
      """
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @Argument(
    help:
      "A clip (c3), track (t2), source (s1), marker (m1), effect (f1) or send (n1); none: every change."
  )
  var id: String?
  @Flag(help: "Every branch, not only the head's line.") var all = false
  @Option(
    parsing: .unconditional,
    help: "At most this many versions (without an id: 30 unless given).")
  var limit: Int?
  @OptionGroup var times: TimeDisplayOption
  @OptionGroup var json: JSONOption

  func validate() throws {
    if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more") }
    if id == nil && all { throw ValidationError("--all goes with an id: tape log FILE c3 --all") }
  }

  func run() throws {
    try reportingErrors(readerMayStop: true) {
      let store = try retryingReads { try openStore(project.file, access: .read) }
      guard let id else {
        try printRecent(store)
        return
      }
      let subject = try Self.subject(id)
      var log = try retryingReads { try store.log(of: subject, allBranches: all) }
      if log.entries.isEmpty && !all {
        // Never on the head's line: an id of another branch, or of nothing at all.
        let everywhere = try retryingReads { try store.log(of: subject, allBranches: true) }
        guard !everywhere.entries.isEmpty else {
          throw DataError(
            message: "no version of this project has \(subject); 'tape ls' lists the ids")
        }
        if !json.json {
          print(
            "no version on the head's line changed \(subject) (\(everywhere.entries.count) on other branches: add --all)"
          )
          return
        }
      }
      let dropped = limit.map { max(0, log.entries.count - $0) } ?? 0
      if let limit { log = log.newest(limit) }
      let format = LogFormat(
        subject: subject, sampleRate: store.snapshot.project.sampleRate, times: times)
      if json.json {
        printJSON(format.json(log, all: all, omitted: dropped))
      } else {
        for entry in log.entries { print(format.line(entry, marked: all)) }
        if dropped > 0 {
          print("(\(dropped) older version\(dropped == 1 ? "" : "s") not shown: drop --limit)")
        }
      }
    }
  }

  /// The id on the command line as a subject of the log.
  static func subject(_ text: String) throws -> LogSubject {
    let kinds: [(String, (String) -> LogSubject?)] = [
      ("c", { Clip.ID(parsing: $0).map(LogSubject.clip) }),
      ("t", { Track.ID(parsing: $0).map(LogSubject.track) }),
      ("s", { Source.ID(parsing: $0).map(LogSubject.source) }),
      ("m", { Marker.ID(parsing: $0).map(LogSubject.marker) }),
      ("f", { Effect.ID(parsing: $0).map(LogSubject.effect) }),
      ("n", { Send.ID(parsing: $0).map(LogSubject.send) }),
    ]
    for (prefix, parse) in kinds where text.hasPrefix(prefix) {
      if let subject = parse(text) { return subject }
    }
    throw UsageError(
      message:
        "'\(text)' is not an id; give a clip (c3), track (t2), source (s1), marker (m1), effect (f1) or send (n1) ('tape ls' lists them)"
    )
  }

  /// Without an id: the last versions of the head's line, newest first, each with what it
  /// changed in the words of `tape diff`.
  private func printRecent(_ store: TimelineStore) throws {
    let recent = try retryingReads { try store.recentChanges(last: limit ?? 30) }
    let words = DiffWords(sampleRate: store.snapshot.project.sampleRate)
    var objects: [JSON] = []
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    for (entry, diff) in recent.versions.map({ ($0.entry, $0.diff) }) {
      if json.json {
        objects.append(
          .object([
            ("version", .integer(entry.version)),
            ("parent", entry.parent.map(JSON.integer) ?? .null),
            ("date", .string(formatter.string(from: entry.date))), ("label", .string(entry.label)),
            ("changes", .array(diff.map { words.changesJSON($0) } ?? [])),
          ]))
      } else {
        let changes = diff.map { words.boundedLines($0) } ?? []
        print(
          "v\(entry.version)  \(LogFormat.date(entry.date))  \(words.quoted(entry.label))\(changes.isEmpty ? "" : ": " + changes.joined(separator: "; "))"
        )
      }
    }
    let omitted = recent.earlier
    if json.json {
      printJSON(
        .object([
          ("head", .integer(recent.head)), ("versions", .array(objects)),
          ("omitted", .integer(Int64(omitted))),
        ]))
    } else if omitted > 0 {
      print(
        "(\(omitted) older version\(omitted == 1 ? "" : "s") of the head's line not shown: --limit N shows the last N)"
      )
    }
  }
}

/// How `tape log` says a subject's fields: names as `ls --json` has them (`track`, `source`,
/// `frame`), times in clock form (frames in JSON), ids with their prefix.
struct LogFormat {
  let subject: LogSubject
  let sampleRate: Int
  let times: TimeDisplayOption

  static func date(_ date: Date) -> String {
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
    case (.integer(let frames), .time): return times.show(frames, sampleRate: sampleRate)
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
  func line(_ entry: LogEntry, marked: Bool) -> String {
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

  /// The `tape log FILE ID --json` contract (docs/reference/json.md); keep stable.
  func json(_ log: SubjectLog, all: Bool, omitted: Int) -> JSON {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
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

extension LogFormat.Kind {
  fileprivate var prefix: String {
    switch self {
    case .id(let prefix): prefix
    case .chain: "t"
    default: ""
    }
  }
}
