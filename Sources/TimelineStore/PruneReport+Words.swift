public import Foundation

extension PruneReport {
  /// The report for people, one line each: what was dropped (`dry run: would drop 120 of 140
  /// versions (v1–v120)`), the tags dropped, where the history starts, and the bytes.
  ///
  /// ```swift
  /// print(try store.prune(PruneRequest(branches: true), dryRun: true).lines.joined(separator: "\n"))
  /// ```
  public var lines: [String] {
    let would = dryRun ? "would drop" : "dropped"
    let versions =
      dropped.isEmpty
      ? "no version"
      : "\(dropped.count) of \(versionsBefore) versions (\(Self.ranges(dropped)))"
    var lines = ["\(dryRun ? "dry run: " : "")\(would) \(versions)"]
    if !tagsDropped.isEmpty {
      lines.append("\(would) tags \(tagsDropped.joined(separator: ", "))")
    }
    lines.append("the history \(dryRun ? "would start" : "starts") at v\(root)")
    lines.append(
      "database \(bytesBefore) → \(bytesAfter) bytes (\(dryRun ? "would free" : "freed") \(bytesBefore - bytesAfter)); on disk with its log \(fileBytesBefore) → \(fileBytesAfter) bytes"
    )
    return lines
  }

  /// The runs of consecutive versions in `versions` (ascending): first and last of each.
  public static func runs(_ versions: [Int64]) -> [(first: Int64, last: Int64)] {
    var runs: [(first: Int64, last: Int64)] = []
    for version in versions {
      if let last = runs.last, last.last + 1 == version {
        runs[runs.count - 1].last = version
      } else {
        runs.append((version, version))
      }
    }
    return runs
  }

  /// `v1–v120, v130, v140–v141`: the runs of `versions` (ascending).
  public static func ranges(_ versions: [Int64]) -> String {
    runs(versions).map { $0.first == $0.last ? "v\($0.first)" : "v\($0.first)–v\($0.last)" }
      .joined(separator: ", ")
  }
}

extension PruneRequest {
  /// A date as ``before`` takes it: `2026-11-25`, `2026-11-25T14:00[:00]` or the same with a
  /// space, in local time; or ISO 8601 with a zone (`Z`, `+01:00`). Nil for anything else.
  ///
  /// ```swift
  /// PruneRequest(before: PruneRequest.date("2026-11-25"))
  /// ```
  public static func date(_ text: String) -> Date? {
    let zoned = ISO8601DateFormatter()
    if let date = zoned.date(from: text) { return date }
    let local = DateFormatter()
    local.locale = Locale(identifier: "en_US_POSIX")
    local.timeZone = .current
    for format in [
      "yyyy-MM-dd", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd HH:mm:ss",
      "yyyy-MM-dd HH:mm",
    ] {
      local.dateFormat = format
      if let date = local.date(from: text) { return date }
    }
    return nil
  }
}
