import ArgumentParser
import Foundation
import Interchange
import Timeline
import TimelineStore

/// `--steps N` for undo and redo.
struct StepsOption: ParsableArguments {
  // Unconditional: `--steps -1` is a bad number, not "missing value".
  @Option(parsing: .unconditional, help: "How many steps.") var steps = 1

  func validate() throws {
    guard steps >= 1 else { throw ValidationError("--steps must be 1 or more") }
  }
}

struct Undo: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "undo",
    abstract: "Step back through history (survives quitting and crashes).",
    discussion: "Example: tape undo song.tape --steps 3"
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @OptionGroup var steps: StepsOption
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors {
      try HeadMoveOutput.move(
        project.file, .undo, scoped: { try $0.undo(steps: steps.steps) },
        whole: { try $0.undo(steps: steps.steps) }
      ).print(json: output.json)
    }
  }
}

struct Redo: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "redo",
    abstract: "Step forward again, toward the version you were last at.",
    discussion: "Example: tape redo song.tape"
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @OptionGroup var steps: StepsOption
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors {
      try HeadMoveOutput.move(
        project.file, .redo, scoped: { try $0.redo(steps: steps.steps) },
        whole: { try $0.redo(steps: steps.steps) }
      ).print(json: output.json)
    }
  }
}

struct Checkout: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "checkout",
    abstract: "Go to any version in history, on any branch.",
    discussion: "Example: tape checkout song.tape 12")

  @OptionGroup var project: ProjectArgument
  @Argument(
    help:
      "The version: its number ('tape history' lists them) or a tag's name ('tape tag FILE --list').",
    completion: ids("v"))
  var version: String
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors {
      try HeadMoveOutput.move(
        project.file, .checkout,
        scoped: { try $0.checkout($0.resolveVersion(version)) },
        whole: { try $0.checkout($0.resolveVersion(version)) }
      ).print(json: output.json)
    }
  }
}

/// Undo, redo and checkout: the move and what it prints (``HeadMoveReport``).
enum HeadMoveOutput {
  /// Moves the head of `file` and says where to: by default reading only what the move
  /// changes (``ScopedEditor``, `scoped`: at 50,000 clips an undo read every row to build a
  /// project it then dropped); with `TAPE_SCOPED_EDITS=0` on the whole project (`whole`), as
  /// an app's store does (ScopedEditTests compares the two).
  static func move(
    _ file: String, _ kind: HeadMoveReport.Kind, scoped: (ScopedEditor) throws -> ScopedMove,
    whole: (TimelineStore) throws -> StoreSnapshot
  ) throws -> HeadMoveReport {
    guard environmentVariable("TAPE_SCOPED_EDITS") == "0" else {
      let editor = try ScopedEditor(
        at: file, busyTimeout: try busyTimeout() ?? TimelineStore.defaultBusyTimeout)
      StoresClosedAtExit.keep(editor)
      sayNotes(editor.notes)
      return HeadMoveReport(kind, try scoped(editor))
    }
    // The command exits right after its move: its rows are written at once.
    let store = try openStore(file, keepingLargeMovesPending: false)
    let before = store.snapshot.version
    let to = try whole(store).version
    // Where the head came from, as the move recorded it (another process may have moved it
    // between opening the store and this move); the head seen at open otherwise.
    let recorded = (try? store.lastMove()).flatMap { $0 }
    let from = recorded.flatMap { $0.to == to ? $0.from : nil } ?? before
    return HeadMoveReport(
      kind, from: from, to: to, label: (try? store.entry(to))?.flatMap { $0 }?.label ?? "",
      // What changed is said from a read of both versions.
      diff: from == to ? nil : try? store.diff(from: from, to: to).diff,
      sampleRate: store.snapshot.project.sampleRate)
  }
}

extension HeadMoveReport {
  func print(json: Bool) throws {
    StandardOutput.done = "the head did move, to version \(to)"
    if json {
      printJSON(self.json)
    } else {
      printLine(line)
    }
  }
}

/// `tape history`: shows the tree (``HistoryCommand``, the default, so `tape history FILE`
/// shows it) or prunes it (`tape history prune FILE …`, ``HistoryPrune``). A group, because a
/// command with a FILE argument of its own takes `prune` for the file.
struct HistoryGroup: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "history",
    abstract: "Show the version tree, with the head and the tags marked; prune it.",
    discussion: """
      'tape history FILE' shows the tree (as 'tape history show FILE'); 'tape history prune \
      FILE' drops old versions or abandoned branches (see 'tape history prune --help').
      A history of more than 30 versions shows the last 30 of the head's line (its ancestors, \
      the head, and the versions redo leads to) and says at the end how many it left out; \
      --limit N shows the last N, --all the whole tree. --json lists every version unless \
      --limit is given (and says how many it left out in "omitted").
      Example: tape history song.tape --json
      Example: tape history song.tape --limit 5
      """,
    subcommands: [HistoryCommand.self, HistoryPrune.self], defaultSubcommand: HistoryCommand.self)
}

struct HistoryCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "show",
    abstract: "Show the version tree, with the head and the tags marked (the default).",
    discussion: "'tape history FILE' is 'tape history show FILE' (see 'tape history --help').")

  /// How many versions `tape history` shows without --limit or --all.
  static let defaultLimit = 30

  @OptionGroup var project: ProjectArgument
  @Flag(help: "Every version, on every branch (the whole tree).") var all = false
  @Option(
    parsing: .unconditional, help: "Show the last N versions of the head's line (default 30).")
  var limit: Int?
  @OptionGroup var output: JSONOption

  func validate() throws {
    if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more") }
    if all && limit != nil { throw ValidationError("give --all or --limit, not both") }
  }

  func run() throws {
    try reportingErrors(readerMayStop: true) {
      let store = try retryingReads { try openStore(project.file, access: .read) }
      let tags = try retryingReads { try store.tags() }
      let limit = all ? nil : limit ?? (output.json ? nil : Self.defaultLimit)
      // A long history is not read whole for its last versions.
      let window = try limit.map { count in try retryingReads { try store.headLine(last: count) } }
      // Up to the limit, the whole tree, branches and all.
      guard let limit, let window, window.total > limit else {
        let history = try retryingReads { try store.history() }
        if output.json {
          printJSON(
            HistoryJSON.history(head: history.head, shown: history.versions, omitted: 0, tags: tags)
          )
        } else {
          print(
            HistoryDrawing(head: history.head, versions: history.versions, tags: tags).text,
            terminator: "")
        }
        return
      }
      let omitted = window.total - window.entries.count
      if output.json {
        printJSON(
          HistoryJSON.history(
            head: window.head, shown: window.entries, omitted: omitted, tags: tags))
        return
      }
      print(
        HistoryDrawing(head: window.head, versions: window.entries, tags: tags).text, terminator: ""
      )
      var parts = ["\(window.earlier) earlier on this line"]
      if window.later > 0 { parts.append("\(window.later) later on it") }
      let others = omitted - window.earlier - window.later
      if others > 0 { parts.append("\(others) on other branches") }
      print(
        "(\(omitted) more version\(omitted == 1 ? "" : "s") not shown: \(parts.joined(separator: ", ")); 'tape history \(project.file) --all' shows every version, --limit N the last N)"
      )
    }
  }
}
