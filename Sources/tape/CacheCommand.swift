import ArgumentParser
import AudioFiles
import Foundation
import Interchange
import Timeline
import TimelineStore

/// `tape cache`: what the decoded-audio cache holds for a project, and removing what no version
/// uses any more. Explicit, never automatic.
struct CacheCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "cache",
    abstract: "Show the decoded-audio cache of a project; --clean removes what no version uses.",
    discussion: """
      Lists each file of the project's cache (song.tape-cache/, and its entries in the user's \
      cache ~/.cache/tape when the project's folder is read-only): decoded audio (.f32), \
      source identity records (.source) and waveform overviews ('tape draw's .peaks), their size, the sources they serve and the first \
      version that has each source, or 'unused' when no version of the history has it any \
      more (after a relink, or a prune). --clean removes the unused ones from the project's \
      own folder only (the user's cache is shared with other projects), never one that a \
      process has open (a player) or that is younger than 10 minutes (an import writes its \
      audio before the project has the source). --json: {"entries": [...], "bytes", \
      "unusedBytes"} (and "removed", "inUse" with --clean).
      Example: tape cache song.tape
      Example: tape cache song.tape --clean --json
      """)

  @OptionGroup var project: ProjectArgument
  @Flag(help: "Remove the entries no version uses.") var clean = false
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors(readerMayStop: !clean) {
      let file = project.file
      let store = try retryingReads { try openStore(file, access: .read) }
      let history = try store.sourcesInHistory()
      let rate = store.snapshot.project.sampleRate
      let head = Set(store.snapshot.project.sources)
      let cache = AudioCache(forProject: file)
      let entries = cache.entries(for: history.map(\.source), projectRate: rate)
      // By the source's value, not its id: a relinked source has other audio (another entry)
      // from the version of the relink on, and only one of them is the head's.
      let firstVersion = Dictionary(
        history.map { ($0.source, $0.firstVersion) }, uniquingKeysWith: min)
      /// The first version that has `id` as `entry` serves it.
      func first(_ id: Source.ID, _ entry: CacheListing) -> Int64? {
        entry.users.filter { $0.id == id }.compactMap { firstVersion[$0] }.min()
      }
      /// Whether the head has `id` as `entry` serves it.
      func inHead(_ id: Source.ID, _ entry: CacheListing) -> Bool {
        entry.users.contains { $0.id == id && head.contains($0) }
      }
      var removed: [CacheListing] = []
      var inUse: [CacheListing] = []
      if clean { (removed, inUse) = cache.clean(entries) }
      let gone = Set(removed.map(\.path))
      let shown = entries.filter { !gone.contains($0.path) }
      let formatter = ISO8601DateFormatter()
      func json(_ entry: CacheListing) -> JSON {
        .object([
          ("path", .string(entry.path)), ("kind", .string(entry.kind.rawValue)),
          ("bytes", .integer(entry.bytes)),
          ("modified", .string(formatter.string(from: entry.modified))),
          ("sources", .array(entry.sources.map { .string($0.description) })),
          (
            "firstVersions",
            .array(entry.sources.compactMap { first($0, entry) }.map(JSON.integer))
          ),
          ("usedByHead", .bool(entry.sources.contains { inHead($0, entry) })),
          ("unused", .bool(entry.sources.isEmpty)),
          ("projectFolder", .bool(entry.isProjectFolder)),
        ])
      }
      let bytes = shown.reduce(Int64(0)) { $0 + $1.bytes }
      let unused = shown.filter(\.sources.isEmpty).reduce(Int64(0)) { $0 + $1.bytes }
      if output.json {
        var fields: [(String, JSON)] = [
          ("entries", .array(shown.map(json))), ("bytes", .integer(bytes)),
          ("unusedBytes", .integer(unused)),
        ]
        if clean {
          fields.append(("removed", .array(removed.map(json))))
          fields.append(("inUse", .array(inUse.map(json))))
        }
        printJSON(.object(fields))
        return
      }
      for entry in shown {
        let used =
          entry.sources.isEmpty
          ? "unused"
          : entry.sources.map { id in
            "\(id) since v\(first(id, entry).map(String.init) ?? "?")\(inHead(id, entry) ? " (head)" : "")"
          }.joined(separator: ", ")
        print("\(entry.path)\t\(entry.kind.rawValue)\t\(entry.bytes) bytes\t\(used)")
      }
      for entry in removed { print("removed \(entry.path) (\(entry.bytes) bytes)") }
      for entry in inUse {
        print("kept \(entry.path): in use (open, or written in the last 10 minutes)")
      }
      let kinds = CacheListing.Kind.allCases.compactMap { kind -> String? in
        let count = shown.filter { $0.kind == kind }.count
        return count == 0 ? nil : "\(count) \(kind.rawValue)"
      }
      print(
        "\(shown.count) files\(kinds.isEmpty ? "" : " (\(kinds.joined(separator: ", ")))"), \(bytes) bytes, \(unused) unused"
      )
    }
  }
}
