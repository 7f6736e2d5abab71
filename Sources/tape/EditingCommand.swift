import ArgumentParser
import AudioFiles
import Foundation
import Interchange
import Timeline
import TimelineStore

/// `-m/--message` and `--json`: what every editing command takes besides its project.
struct EditOptions: ParsableArguments {
  @Option(
    name: [.customShort("m"), .customLong("message")],
    help: "Label the new version with this text (default: what the command did).")
  var message: String?
  @Flag(help: "Print machine-readable JSON on stdout.") var json = false

  func validate() throws {
    guard let message else { return }
    try RawArguments.requireText(message, "the message")
    guard !message.allSatisfy(\.isWhitespace) else {
      throw ValidationError("the message is empty; say what the edit does, or leave -m out")
    }
    guard message.count <= 500 else {
      throw ValidationError(
        "the message is \(message.count) characters long; a label is one line of at most 500")
    }
    guard !message.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else {
      throw ValidationError(
        "the message holds a control character (a newline, a tab…); write it on one line")
    }
  }
}

/// One editing subcommand: parse → the commands it makes against the project → one commit →
/// print. The rules of each edit live in `Timeline` (``Timeline/Project`` edits); a command
/// only turns its arguments into values and names what it did. `tape batch` runs many of them
/// as one commit.
protocol EditingCommand: ParsableCommand {
  var project: ProjectArgument { get }
  var options: EditOptions { get }
  /// The version's label unless `-m` gives one.
  var label: String { get }
  /// Reads from the store what the edit needs besides the project (a paste's clipboard),
  /// before the write transaction opens. Nothing by default.
  mutating func load(from store: TimelineStore) throws
  /// Whether ``load(from:)`` reads anything: a batch then parses a line of this command before
  /// its transaction, to load it, even when the line uses an earlier line's `--as` name (whose
  /// id the transaction gives). False by default.
  static var loadsFromStore: Bool { get }
  /// Takes what `other`, the same batch line parsed before its `@NAME`s were known, loaded.
  /// Nothing by default.
  mutating func takeLoaded(from other: any EditingCommand)
  /// Slow work done before the write transaction opens (reading and decoding audio files),
  /// with the project as it is then. Nothing by default.
  mutating func prepare(_ project: Project) throws
  /// The commands this command makes against `project`, allocating new ids from `ids`.
  func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command]
  /// The ids printed after the commit: by default those the edit created.
  func printed(created: [String]) -> [String]
  /// What to say on stderr when the edit changed nothing (no version was made); nil for
  /// nothing, when the command has said why itself.
  func unchanged(version: Int64) -> String?
  /// Notes for stderr about what the edit made of `project` where it could not do all that was
  /// asked (a crossfade shorter than asked, say): none by default.
  func notes(_ project: Project) throws -> [String]
  /// What the edit reads of the project, when it can say (the clips its arguments name): then
  /// it reads only that (``runScoped(_:)``). nil, the default, reads the whole project.
  func scope() throws -> EditScope?
}

extension EditingCommand {
  mutating func load(from store: TimelineStore) throws {}

  static var loadsFromStore: Bool { false }

  mutating func takeLoaded(from other: any EditingCommand) {}

  mutating func prepare(_ project: Project) throws {}

  func printed(created: [String]) -> [String] { created }

  func notes(_ project: Project) throws -> [String] { [] }

  func scope() throws -> EditScope? { nil }

  func unchanged(version: Int64) -> String? {
    "note: nothing changed; the project stays at version \(version)"
  }

  mutating func run() throws {
    try reportingErrors {
      if environmentVariable("TAPE_SCOPED_EDITS") != "0",
        let scope = try scope(), try runScoped(scope)
      {
        return
      }
      let store = try openStore(project.file)
      let command = self
      let (result, notes) = try commit(to: store) { command.sourceHashUpgrades($0.sources) }
      // Not an error (a script may set what is already set), but worth a word: no version.
      if result.changed.isEmpty, let note = unchanged(version: result.version) {
        writeOut(ProjectWords.escaped(note) + "\n")
      }
      for note in notes { writeOut("note: \(note)\n") }
      try MutationOutput(version: result.version, ids: printed(created: result.newIDs)).print(
        json: options.json)
    }
  }

  /// Makes the edit as one version of `store`, open for writing: ``load(from:)`` and
  /// ``prepare(_:)`` first, outside the write transaction, then one commit of the source
  /// identities `upgrades` names for the project as it is then (``sourceHashUpgrades(_:)``)
  /// and of the edit's commands. With `naming`, a `--as NAME` of `tape shell`, an edit that
  /// creates no id is refused inside the transaction, so it changes nothing. Returns the
  /// commit and the edit's notes; prints nothing.
  mutating func commit(
    to store: TimelineStore, upgrades: (Project) -> [SourceUpgrade],
    naming name: String? = nil
  ) throws -> (result: TimelineStore.CommitResult, notes: [String]) {
    try load(from: store)
    try prepare(store.snapshot.project)
    let upgrades = upgrades(store.snapshot.project)
    let command = self
    var notes: [String] = []
    let result = try store.edit(label: command.options.message ?? command.label) { project, ids in
      notes = try command.notes(project)
      let before = ids
      let commands = try command.edit(project, &ids)
      if let name, ids.created(since: before).isEmpty {
        throw BatchLine.namesNothing(name)
      }
      // First, so that the edit's own change of a source (a relink) wins.
      return upgrades.filter { project.source($0.id) == $0.before }.map { .setSource($0.after) }
        + commands
    }
    return (result, notes)
  }
}

/// A source whose identity an edit upgrades to SHA-256 (``EditingCommand/sourceHashUpgrades(_:)``):
/// written only if the source is still `before` when the edit commits.
typealias SourceUpgrade = (id: Source.ID, before: Source, after: Source)

extension EditingCommand {
  /// The sources of a project made before SHA-256 identities (`xh64:`) whose files are still
  /// the audio imported, with their SHA-256 recorded: an edit writes them in its own version
  /// (so a failed edit changes nothing), once. Missing or changed files keep their old
  /// identity (a render then says what is wrong).
  func sourceHashUpgrades(_ sources: [Source]) -> [SourceUpgrade] {
    let folder = projectFolder(project.file)
    return sources.filter { $0.contentHash.hasPrefix("xh64:") }.compactMap { source in
      guard
        let hash = try? ContentHash.upgrade(
          source.contentHash, at: source.path.resolved(against: folder))
      else { return nil }
      var after = source
      after.contentHash = hash
      return (source.id, source, after)
    }
  }
}

extension EditingCommand {
  /// Makes the edit on the part of the project `scope` names (``TimelineStore/ScopedEditor``),
  /// and prints as ``run()`` does: a one-clip edit of a 100,000-clip project reads one clip,
  /// not every row. False when it needs the whole project (nothing was written).
  ///
  /// A command with a scope must look up no clip in `edit` but those its scope names; the
  /// commands it makes are checked against the part, and anything beyond it (or a source to
  /// upgrade, ``sourceHashUpgrades(_:)``) makes the edit on the whole project, as every other
  /// command does. A scoped run calls neither ``load(from:)``, ``prepare(_:)`` nor
  /// ``notes(_:)``: a command that needs them gives no scope. `TAPE_SCOPED_EDITS=0` makes every
  /// edit on the whole project: tests run both paths on copies of the same projects and compare
  /// the files (ScopedEditTests).
  func runScoped(_ scope: EditScope) throws -> Bool {
    let editor = try ScopedEditor(
      at: project.file, busyTimeout: try busyTimeout() ?? TimelineStore.defaultBusyTimeout)
    StoresClosedAtExit.keep(editor)
    sayNotes(editor.notes)
    if let waiting = PendingTakes.notice(for: project.file) { sayNotes([waiting]) }
    let command = self
    let outcome = try editor.edit(scope: scope, label: options.message ?? label) { part, ids in
      // A source that may need its SHA-256 identity (``sourceHashUpgrades(_:)``): the whole
      // project's edit sees to it.
      guard !part.sources.contains(where: { $0.contentHash.hasPrefix("xh64:") }) else {
        return nil
      }
      return try command.edit(part, &ids)
    }
    guard case .committed(let result) = outcome else { return false }
    if result.changed.isEmpty, let note = unchanged(version: result.version) {
      writeOut(ProjectWords.escaped(note) + "\n")
    }
    try MutationOutput(version: result.version, ids: printed(created: result.newIDs)).print(
      json: options.json)
    return true
  }
}
