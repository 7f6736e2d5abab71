import ArgumentParser
import Foundation
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
    abstract: "Step back through history (survives quitting and crashes).",
    discussion: "Example: tape undo song.tape --steps 3"
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @OptionGroup var steps: StepsOption
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors {
      let store = try openStore(project.file)
      let before = store.snapshot.version
      let snapshot = try store.undo(steps: steps.steps)
      try HeadMoveOutput(store: store, verb: "undo", from: before, to: snapshot.version)
        .print(json: output.json)
    }
  }
}

struct Redo: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Step forward again, toward the version you were last at.",
    discussion: "Example: tape redo song.tape"
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @OptionGroup var steps: StepsOption
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors {
      let store = try openStore(project.file)
      let before = store.snapshot.version
      let snapshot = try store.redo(steps: steps.steps)
      try HeadMoveOutput(store: store, verb: "redo", from: before, to: snapshot.version)
        .print(json: output.json)
    }
  }
}

struct Checkout: ParsableCommand {
  static let configuration = CommandConfiguration(
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
      let store = try openStore(project.file)
      let before = store.snapshot.version
      let snapshot = try store.checkout(store.resolveVersion(version))
      try HeadMoveOutput(store: store, verb: "checkout", from: before, to: snapshot.version)
        .print(json: output.json)
    }
  }
}

/// What undo, redo and checkout print: the version reached and what changed, as `tape watch`
/// says it (`undo: back to v41 "Move c3" — c3 moved 0:05.000 → 0:03.000`) but bounded
/// (``DiffWords/boundedLines(_:)``: a ripple edit's moved clips are one phrase); with `--json` the
/// mutation object (`version`, `ids`) plus `from`, `label` and `changes` as `tape diff` gives
/// them.
struct HeadMoveOutput {
  let store: TimelineStore
  let verb: String
  let from: Int64
  let to: Int64

  func print(json: Bool) throws {
    StandardOutput.done = "the head did move, to version \(to)"
    // Where the head came from, as the move recorded it (another process may have moved it
    // between opening the store and this move); the head seen at open otherwise.
    let recorded = (try? store.lastMove()).flatMap { $0 }
    let from = recorded.flatMap { $0.to == to ? $0.from : nil } ?? self.from
    let label = (try? store.entry(to))?.flatMap { $0 }?.label ?? ""
    let words = DiffWords(sampleRate: store.snapshot.project.sampleRate)
    // What changed is said from a read of both versions: the head has moved whatever happens.
    let diff = from == to ? nil : try? store.diff(from: from, to: to).diff
    if json {
      printJSON(
        .object([
          ("version", .int(to)), ("ids", .array([])), ("from", .int(from)),
          ("label", .string(label)),
          ("changes", .array(diff.map { words.changesJSON($0) } ?? [])),
        ]))
    } else {
      let reached =
        switch verb {
        case "undo": "back to"
        case "redo": "forward to"
        default: "at"
        }
      let changes = diff.map { words.boundedLines($0) } ?? []
      Swift.print(
        "\(verb): \(reached) v\(to) \(words.quoted(label))\(changes.isEmpty ? "" : " — " + changes.joined(separator: "; "))"
      )
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
      Example: tape history song.tape --json
      """,
    subcommands: [HistoryCommand.self, HistoryPrune.self], defaultSubcommand: HistoryCommand.self)
}

struct HistoryCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "show",
    abstract: "Show the version tree, with the head and the tags marked (the default).",
    discussion: "'tape history FILE' is 'tape history show FILE' (see 'tape history --help').")

  @OptionGroup var project: ProjectArgument
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors(readerMayStop: true) {
      let (history, tags) = try retryingReads {
        let store = try openStore(project.file, access: .read)
        return (try store.history(), try store.tags())
      }
      if output.json {
        printJSON(historyJSON(history, tags: tags))
      } else {
        print(HistoryTree(history, tags: tags).text, terminator: "")
      }
    }
  }
}

/// The `tape history --json` contract. Documented in the README; keep stable.
func historyJSON(_ history: History, tags: [VersionTag] = []) -> JSONValue {
  let names = Dictionary(grouping: tags, by: \.version).mapValues { $0.map(\.name) }
  let formatter = ISO8601DateFormatter()
  formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
  return .object([
    ("head", .int(history.head)),
    (
      "versions",
      .array(
        history.versions.map { entry in
          .object([
            ("version", .int(entry.version)), ("parent", entry.parent.map(JSONValue.int) ?? .null),
            ("label", .string(entry.label)), ("date", .string(formatter.string(from: entry.date))),
            ("tags", .array((names[entry.version] ?? []).map(JSONValue.string))),
          ])
        })
    ),
  ])
}

/// The history as a tree: a run of versions continues on one line of descent; where a version
/// has several children, each branch is drawn below it, indented.
struct HistoryTree {
  let text: String

  init(_ history: History, tags: [VersionTag] = []) {
    let names = Dictionary(grouping: tags, by: \.version).mapValues { $0.map(\.name) }
    var children: [Int64: [HistoryEntry]] = [:]
    var roots: [HistoryEntry] = []
    for entry in history.versions {
      if let parent = entry.parent {
        children[parent, default: []].append(entry)
      } else {
        roots.append(entry)
      }
    }
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    var lines: [String] = []
    // Explicit stack instead of recursion: a linear history may be 100,000 versions deep.
    var stack: [(entry: HistoryEntry, prefix: String, branch: String)] = roots.reversed().map {
      ($0, "", "")
    }
    while let (entry, prefix, branch) = stack.popLast() {
      let named = (names[entry.version] ?? []).map { " [\(escaped($0))]" }.joined()
      let marker = named + (entry.version == history.head ? "  ← head" : "")
      lines.append(
        "\(prefix)\(branch)\(pad(String(entry.version), 5)) \(formatter.string(from: entry.date))  \(escaped(entry.label))\(marker)"
      )
      let kids = children[entry.version] ?? []
      let childPrefix = prefix + (branch == "├─ " ? "│  " : branch == "└─ " ? "   " : "")
      if kids.count == 1 {
        stack.append((kids[0], childPrefix, ""))
      } else {
        for (index, kid) in kids.enumerated().reversed() {
          stack.append((kid, childPrefix, index == kids.count - 1 ? "└─ " : "├─ "))
        }
      }
    }
    text = lines.joined(separator: "\n") + "\n"
  }
}
