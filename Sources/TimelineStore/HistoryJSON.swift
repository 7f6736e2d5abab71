import Foundation
public import Interchange
import Timeline

/// The JSON of the history's outputs: `tape history --json`, `tape tag --json`, `tape history
/// prune --json` and `tape log --json` without an id. Each is a contract documented in
/// docs/reference/json.md, its keys in the order listed there.
///
/// ```swift
/// let history = try store.history()
/// print(HistoryJSON.history(head: history.head, shown: history.versions, omitted: 0).line)
/// // {"head": 2, "versions": [{"version": 1, "parent": null, …}], "omitted": 0}
/// ```
///
/// Rule: keys are never renamed, reordered or dropped; a new one is added at the end of its
/// object. Why: scripts read them. What if you change one: every script that reads it breaks
/// silently.
public enum HistoryJSON {
  /// `versions` (every one unless a limit left some out), each with its tags; `omitted` counts
  /// the versions left out.
  public static func history(
    head: Int64, shown: [HistoryEntry], omitted: Int, tags: [VersionTag] = []
  ) -> JSON {
    let names = Dictionary(grouping: tags, by: \.version).mapValues { $0.map(\.name) }
    let formatter = dateFormatter()
    return .object([
      ("head", .integer(head)),
      (
        "versions",
        .array(
          shown.map { entry in
            .object([
              ("version", .integer(entry.version)),
              ("parent", entry.parent.map(JSON.integer) ?? .null),
              ("label", .string(entry.label)),
              ("date", .string(formatter.string(from: entry.date))),
              ("tags", .array((names[entry.version] ?? []).map(JSON.string))),
            ])
          })
      ),
      ("omitted", .integer(Int64(omitted))),
    ])
  }

  /// A tag, with the label of the version it names.
  public static func tag(_ tag: VersionTag, label: String) -> JSON {
    .object([
      ("name", .string(tag.name)), ("version", .integer(tag.version)), ("label", .string(label)),
      ("date", .string(dateFormatter().string(from: tag.date))),
    ])
  }

  /// What a prune dropped (or would drop, `dryRun`): the versions as runs `[first, last]`, the
  /// tags, and the bytes before and after.
  public static func prune(_ report: PruneReport) -> JSON {
    .object([
      ("dryRun", .bool(report.dryRun)),
      ("versionsBefore", .integer(Int64(report.versionsBefore))),
      ("versionsAfter", .integer(Int64(report.versionsAfter))),
      ("versionsDropped", .integer(Int64(report.dropped.count))),
      (
        "dropped",
        .array(
          PruneReport.runs(report.dropped).map { .array([.integer($0.first), .integer($0.last)]) }
        )
      ),
      ("root", .integer(report.root)),
      ("tagsDropped", .array(report.tagsDropped.map(JSON.string))),
      ("bytesBefore", .integer(report.bytesBefore)),
      ("bytesAfter", .integer(report.bytesAfter)),
      ("bytesFreed", .integer(report.bytesBefore - report.bytesAfter)),
      ("fileBytesBefore", .integer(report.fileBytesBefore)),
      ("fileBytesAfter", .integer(report.fileBytesAfter)),
    ])
  }

  /// The last versions of the head's line, each with what it changed as `tape diff --json`
  /// says it (times at `sampleRate`).
  public static func recent(_ recent: RecentChanges, sampleRate: Int) -> JSON {
    let words = DiffWords(sampleRate: sampleRate)
    let formatter = dateFormatter()
    let objects: [JSON] = recent.versions.map { version in
      let entry = version.entry
      return .object([
        ("version", .integer(entry.version)),
        ("parent", entry.parent.map(JSON.integer) ?? .null),
        ("date", .string(formatter.string(from: entry.date))), ("label", .string(entry.label)),
        ("changes", .array(version.diff.map { words.changesJSON($0) } ?? [])),
      ])
    }
    return .object([
      ("head", .integer(recent.head)), ("versions", .array(objects)),
      ("omitted", .integer(Int64(recent.earlier))),
    ])
  }

  /// ISO 8601 with milliseconds, in UTC: `2026-11-25T17:40:01.123Z`.
  static func dateFormatter() -> ISO8601DateFormatter {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter
  }
}
