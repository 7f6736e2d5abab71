import ArgumentParser
import Interchange
import Timeline
import TimelineStore

/// `tape verify FILE`: the store's own checks (``TimelineStore/verify()``) and the sources'
/// presence, changing nothing.
struct Verify: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "verify",
    abstract: "Check a project file and its whole history, changing nothing.",
    discussion: """
      What to run after a crash, a recovery or a copy: SQLite's integrity check and foreign \
      keys, that undoing every version from the head reaches the first one, that every stored \
      history block equals the versions it stands for, that a large history move left \
      pending finds its rows, and that every source's file is where the project says. Prints \
      one line a check and exits 0 when all pass, 65 when one fails (the line says what to \
      do). Reads only: it may run while others play and edit the project.
      Example: tape verify song.tape
      """)

  @OptionGroup var project: ProjectArgument
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors {
      let store = try openStore(project.file, access: .read)
      let report = try store.verify()
      let folder = projectFolder(project.file)
      let missing = store.snapshot.project.sources.filter { isMissing($0, projectFolder: folder) }
      let file = project.file
      let checks: [(name: String, ok: Bool, text: String)] = [
        (
          "integrity", report.integrity == "ok",
          report.integrity == "ok"
            ? "SQLite's integrity check: ok"
            : "SQLite's integrity check: \(report.integrity); restore the file from a backup, or see what sqlite3 can save with 'sqlite3 \(file) .recover'"
        ),
        (
          "foreignKeys", report.foreignKeyViolations == 0,
          report.foreignKeyViolations == 0
            ? "foreign keys: ok"
            : "foreign keys: \(report.foreignKeyViolations) rows refer to rows that are gone; restore the file from a backup"
        ),
        (
          "history", report.undoToFirstVersionWorks,
          report.undoToFirstVersionWorks
            ? "history: \(report.versions) versions, head \(report.head), undoing them all reaches the first"
            : "history: undoing from the head (version \(report.head)) does not reach the first version; restore the file from a backup"
        ),
        (
          "historyBlocks", report.historyBlocksMatch,
          report.historyBlocksMatch
            ? "history blocks: \(report.historyBlocks), each equal to its versions"
            : "history blocks: one differs from the versions it stands for; restore the file from a backup"
        ),
        (
          "pendingMove", report.pendingMoveMatches,
          report.pendingMoveMatches
            ? (report.pendingMoveRows == 0
              ? "pending move: none"
              : "pending move: \(report.pendingMoveRows) rows, as history says")
            : "pending move: it does not match history; restore the file from a backup"
        ),
        (
          "sources", missing.isEmpty,
          missing.isEmpty
            ? "sources: all \(store.snapshot.project.sources.count) present"
            : "sources: \(missing.map(\.id.description).joined(separator: ", ")) missing; point each at its file with 'tape relink \(file) \(missing[0].id) PATH', or find them in a folder with 'tape relink \(file) --folder DIR'"
        ),
      ]
      let failed = checks.filter { !$0.ok }
      if output.json {
        printJSON(
          .object(
            [
              ("file", .string(file)), ("ok", .bool(failed.isEmpty)),
              ("version", .integer(report.head)), ("versions", .integer(Int64(report.versions))),
              ("integrity", .string(report.integrity)),
              ("foreignKeyViolations", .integer(Int64(report.foreignKeyViolations))),
              ("undoToFirstVersionWorks", .bool(report.undoToFirstVersionWorks)),
              ("historyBlocks", .integer(Int64(report.historyBlocks))),
              ("historyBlocksMatch", .bool(report.historyBlocksMatch)),
              ("pendingMoveRows", .integer(Int64(report.pendingMoveRows))),
              ("pendingMoveMatches", .bool(report.pendingMoveMatches)),
              ("missingSources", .array(missing.map { .string($0.id.description) })),
            ]))
      } else {
        for check in checks {
          print(ProjectWords.escaped((check.ok ? "ok    " : "FAIL  ") + check.text))
        }
      }
      guard failed.isEmpty else {
        throw DataError(
          message:
            "\(file) fails \(failed.count == 1 ? "a check" : "\(failed.count) checks") (\(failed.map(\.name).joined(separator: ", "))); see the lines above"
        )
      }
    }
  }
}
