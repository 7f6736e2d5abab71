import ArgumentParser
import Foundation
import Interchange
import Timeline
import TimelineStore

/// `tape tag`: names a version (its default, ``Name``), lists (`ls`) and deletes (`rm`) names.
/// Not an edit: no version, nothing to undo, and so not a batch command (a batch is one
/// version; a name is not part of one).
struct Tag: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "tag",
    abstract: "Name a version, so that any command that takes a version takes the name.",
    discussion: """
      'tape tag FILE NAME' names the current version, 'tape tag FILE V NAME' version V (a \
      number, or another tag's name). Every command that takes a version takes the name too: \
      checkout, diff, ls --version, render --version, play --version. A tag is kept in the \
      project file but is not history: tagging makes no version, undo, redo and checkout \
      never move or remove one, and no version's content changes. A name has up to 100 \
      characters, at least one that is not a digit (12 and v12 are version numbers), no \
      spaces or control characters, and does not start with '-'. A name another version \
      has is refused: delete it first. --list shows the tags (--json: {"tags": [...]}); \
      --delete removes one (the version stays).
      'tape tag ls FILE' and 'tape tag rm FILE NAME' do the same as --list and --delete.
      Example: tape tag song.tape rough-mix
      Example: tape tag song.tape 2 first-take
      Example: tape tag ls song.tape
      """,
    subcommands: [Name.self, List.self, Remove.self], defaultSubcommand: Name.self)

  struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ls",
      abstract: "List the tags: name, version and its label (as 'tape tag FILE --list').",
      discussion: "Example: tape tag ls song.tape --json")

    @OptionGroup var project: ProjectArgument
    @OptionGroup var output: JSONOption

    func run() throws {
      try Name.list(project.file, json: output.json)
    }
  }

  struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "rm",
      abstract: "Delete a tag; the version it named stays (as 'tape tag FILE --delete NAME').",
      discussion: "Example: tape tag rm song.tape rough-mix",
      aliases: ["remove"])

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The tag's name.") var name: String
    @OptionGroup var output: JSONOption

    func run() throws {
      try Name.change(project.file, json: output.json) { store in
        (try store.deleteTag(named: name), "deleted tag")
      }
    }
  }
}

extension Tag {
  /// `tape tag FILE [VERSION] NAME`, and the older `--list` and `--delete`.
  struct Name: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Name a version (the head by default): tape tag FILE [VERSION] NAME.",
      discussion: """
        The default of 'tape tag' ('tape tag FILE [VERSION] NAME'); see 'tape tag --help'.
        Example: tape tag add song.tape 2 first-take
        """)

    @OptionGroup var project: ProjectArgument
    @Argument(help: ArgumentHelp("[VERSION] NAME: the version (the head by default) and its name."))
    var words: [String] = []
    @Flag(help: "List the tags.") var list = false
    @Option(help: ArgumentHelp("Delete the tag with this name.", valueName: "name"))
    var delete: String?
    @OptionGroup var output: JSONOption

    func validate() throws {
      if list && delete != nil { throw ValidationError("give --list or --delete, not both") }
      if (list || delete != nil) && !words.isEmpty {
        throw ValidationError(
          "\(list ? "--list" : "--delete") takes no version or name; tag with 'tape tag FILE [VERSION] NAME' alone"
        )
      }
      if !list && delete == nil {
        guard !words.isEmpty else {
          throw ValidationError("name the version: tape tag FILE [VERSION] NAME")
        }
        guard words.count <= 2 else {
          throw ValidationError(
            "too many words: tape tag FILE [VERSION] NAME (a name has no spaces)")
        }
      }
    }

    func run() throws {
      if list { return try Self.list(project.file, json: output.json) }
      try Self.change(project.file, json: output.json) { store in
        if let delete { return (try store.deleteTag(named: delete), "deleted tag") }
        let version = try words.count == 2 ? store.resolveVersion(words[0]) : nil
        return (try store.tag(version, as: words[words.count - 1]), "tagged")
      }
    }

    /// Lists the tags of the project `file` (`--list`, `tag ls`).
    static func list(_ file: String, json: Bool) throws {
      try reportingErrors(readerMayStop: true) {
        let store = try retryingReads { try openStore(file, access: .read) }
        let tags = try store.tags()
        let labels = try tags.map { try store.entry($0.version)?.label ?? "" }
        if json {
          printJSON(.object([("tags", .array(zip(tags, labels).map(HistoryJSON.tag)))]))
        } else {
          for (tag, label) in zip(tags, labels) {
            print(tag.listed(label: label))
          }
        }
      }
    }

    /// Makes or deletes a tag of the project `file` (`change`: the tag and the verb to say) and
    /// says what it did.
    static func change(
      _ file: String, json: Bool,
      _ change: (TimelineStore) throws -> (tag: VersionTag, verb: String)
    ) throws {
      try reportingErrors {
        let store = try openStore(file)
        let (tag, verb) = try change(store)
        let label = try store.entry(tag.version)?.label ?? ""
        if json {
          printJSON(HistoryJSON.tag(tag, label: label))
        } else {
          print(tag.said(verb, label: label))
        }
      }
    }
  }

}

/// `tape history prune`: drops old versions or abandoned branches, explicitly, after saying
/// what goes.
struct HistoryPrune: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "prune",
    abstract: "Drop old versions or abandoned branches to make the file smaller.",
    discussion: """
      --keep-last N keeps the head and the N-1 versions above it on its line (and everything \
      below the oldest of them); --before DATE drops the versions of the head's line made \
      before DATE (2026-11-25, or 2026-11-25T14:00:00, local time; the head always stays); \
      either drops every branch that splits off above the oldest version kept, which \
      becomes the first version (undo stops there). --branches drops every version that is \
      not on the line to the head and to where redo leads; it combines with the others. The \
      versions kept read, check out, render and undo exactly as before, and the head is not \
      touched; then the file is compacted (VACUUM). Tags on dropped versions refuse the \
      prune, unless --drop-tags drops them too. --dry-run shows what would go and the bytes \
      it would free (measured on a copy) and changes nothing. Refused, with nothing changed, \
      while another process is writing to the project.
      Example: tape history prune song.tape --keep-last 2 --dry-run
      Example: tape history prune song.tape --branches --json
      """)

  @OptionGroup var project: ProjectArgument
  @Option(
    parsing: .unconditional,
    help: ArgumentHelp("Keep this many versions of the head's line.", valueName: "n"))
  var keepLast: Int?
  @Option(help: ArgumentHelp("Drop the versions made before this date.", valueName: "date"))
  var before: String?
  @Flag(help: "Drop the abandoned branches.") var branches = false
  @Flag(help: "Drop the tags of the versions dropped instead of refusing.") var dropTags = false
  @Flag(help: "Only show what would be dropped and the bytes it would free.") var dryRun = false
  @OptionGroup var output: JSONOption

  func validate() throws {
    guard keepLast != nil || before != nil || branches else {
      throw ValidationError("say what to drop: --keep-last N, --before DATE or --branches")
    }
    if keepLast != nil && before != nil {
      throw ValidationError("give --keep-last or --before, not both")
    }
    if let keepLast, keepLast < 1 { throw ValidationError("--keep-last must be 1 or more") }
    if let before, PruneRequest.date(before) == nil {
      throw ValidationError(
        "--before \(before) is not a date; write 2026-11-25 or 2026-11-25T14:00:00 (local time), or add a zone (Z, +01:00)"
      )
    }
  }

  func run() throws {
    try reportingErrors {
      // A dry run only reads the project (it prunes a copy): a read-only project can be asked.
      let store = try openStore(project.file, access: dryRun ? .read : .write)
      let request = PruneRequest(
        keepLast: keepLast, before: before.flatMap(PruneRequest.date), branches: branches,
        dropTags: dropTags)
      let report = try store.prune(request, dryRun: dryRun)
      if output.json {
        printJSON(HistoryJSON.prune(report))
      } else {
        print(report.lines.joined(separator: "\n"))
      }
    }
  }
}
