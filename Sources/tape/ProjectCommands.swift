import ArgumentParser
import AudioFiles
import Foundation
import Interchange
import SafeFiles
import TerminalViews
import Timeline
import TimelineStore

struct New: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "new",
    abstract: "Create an empty project file.",
    discussion: "Example: tape new song.tape --rate 48000 --channels 2")

  @OptionGroup var project: ProjectArgument
  @Option(parsing: .unconditional, help: "Sample rate of the timeline in Hz.") var rate = 48_000
  @Option(parsing: .unconditional, help: "Output channels: 1 (mono) or 2 (stereo).")
  var channels = 2
  @OptionGroup var output: JSONOption

  func run() throws {
    Termination.install(
      message: ProjectWords.escaped("new interrupted; \(project.file) was not created"))
    try reportingErrors {
      let store = try TimelineStore.create(at: project.file, sampleRate: rate, channels: channels)
      sayNotes(store.notes)
      Termination.install(
        message: ProjectWords.escaped("interrupted; \(project.file) was created all the same"))
      try MutationOutput(
        version: store.snapshot.version, ids: [],
        done: "\(project.file) was created all the same"
      ).print(json: output.json)
    }
  }
}

struct Import: EditingCommand {
  static let configuration = CommandConfiguration(
    commandName: "import",
    abstract: "Register audio files as sources; prints their ids.",
    discussion: """
      Every file is opened and read completely first; if any is missing, unreadable, not audio, \
      truncated or has more than two channels, nothing is imported. Each file is then decoded \
      once (and resampled to the project rate) into song.tape-cache/ beside the project.
      Example: tape import song.tape vocals.wav drums.flac
      """)

  @OptionGroup var project: ProjectArgument
  @Argument(
    help: "Audio files (WAV, FLAC, AIFF, Ogg… anything libsndfile reads).", completion: .file())
  var audio: [String]
  @OptionGroup var options: EditOptions
  /// The files, read by ``prepare(_:)``.
  var probed: [AudioFileInfo] = []

  enum CodingKeys: CodingKey {
    case project, audio, options
  }

  func validate() throws {
    guard !audio.isEmpty else { throw ValidationError("name at least one audio file to import") }
  }

  var label: String {
    let names = probed.map(\.path.lastComponent.description)
    return names.count == 1 ? "Import \(names[0])" : "Import \(names.count) files"
  }

  /// Reads every file whole, then decodes (and resamples) each into the cache, so renders
  /// start at once; the cache is keyed by content, so the source's id plays no part.
  mutating func prepare(_ current: Project) throws {
    Termination.install(message: "import interrupted; nothing was imported")
    probed = try audio.map { try AudioProbe.probe(RawArguments.path($0)) }
    let cache = AudioCache(forProject: project.file)
    for info in probed {
      _ = try cache.load(
        Source(
          id: Source.ID(0), path: info.path, contentHash: info.contentHash,
          sampleRate: info.sampleRate, channels: info.channels,
          frameCount: FrameCount(info.frameCount)),
        projectRate: current.sampleRate)
    }
  }

  func edit(_ current: Project, _ ids: inout IDAllocator) throws -> [Command] {
    probed.map { info in
      .setSource(
        Source(
          id: ids.newSourceID(), path: storedPath(info.path, project: project.file),
          contentHash: info.contentHash, sampleRate: info.sampleRate, channels: info.channels,
          frameCount: FrameCount(info.frameCount)))
    }
  }
}

struct List: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "ls",
    abstract: "Show the timeline: sources, tracks and clips.",
    discussion: "Example: tape ls song.tape --json"
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @OptionGroup var output: JSONOption
  @Option(
    help: ArgumentHelp(
      "Show this version (a number or a tag's name) instead of the current one (the head does not move).",
      valueName: "version"))
  var version: String?
  @OptionGroup var times: TimeDisplayOption

  func run() throws {
    try reportingErrors(readerMayStop: true) {
      let shown = try retryingReads {
        let store = try openStore(project.file, access: .read)
        if let reference = version {
          let version = try store.resolveVersion(reference)
          return StoreSnapshot(version: version, project: try store.project(at: version))
        }
        return store.snapshot
      }
      if output.json {
        printJSON(projectJSON(shown, file: project.file))
      } else {
        let folder = projectFolder(project.file)
        let missing = shown.project.sources.filter { isMissing($0, projectFolder: folder) }
        print(
          TimelineTable(
            shown.project, version: shown.version, file: project.file, frames: times.frames,
            missing: Set(missing.map(\.id))
          ).text, terminator: "")
      }
    }
  }
}

/// The `tape ls --json` contract: every time in frames. Documented in docs/reference/json.md; keep stable.
func projectJSON(_ snapshot: StoreSnapshot, file: String) -> JSON {
  let folder = projectFolder(file)
  return ProjectJSON.project(
    snapshot.project, version: snapshot.version, folder: folder,
    missing: Set(
      snapshot.project.sources.filter { isMissing($0, projectFolder: folder) }.map(\.id)))
}

/// Whether a source's file is gone from where the project in `projectFolder` says it is.
func isMissing(_ source: Source, projectFolder: RawPath) -> Bool {
  source.path.resolved(against: projectFolder).withCString { FileIdentity(cPath: $0) } == nil
}

/// The absolute folder of the project file `file`: what its sources' relative paths are
/// relative to.
func projectFolder(_ file: String) -> RawPath {
  RawPath.folder(ofProject: file)
}

/// Where a source at `file` (absolute) is kept in the project `project`
/// (``RawPath/stored(inProject:)``).
func storedPath(_ file: RawPath, project: String) -> RawPath {
  file.stored(inProject: project)
}

struct Relink: EditingCommand {
  static let configuration = CommandConfiguration(
    commandName: "relink",
    abstract: "Point a source at its file's new place, or find every missing source in a folder.",
    discussion: """
      The new file must hold the same audio (same content hash) unless --force is given; with \
      --force it may be different audio, as long as every clip still fits inside it. A file \
      inside the project's folder is kept by its path relative to the project, so the folder \
      can move with its audio.
      With --folder DIR, every source whose file is missing is looked for under DIR (and its \
      subfolders) by its file name; a file of that name holding the same audio (same content \
      hash) is taken, and all are relinked in one version (one undo step). Sources not found \
      are named; nothing is relinked unless at least one is found.
      An effect's file (a convolver's impulse response, set with 'tape fx set --file') is \
      relinked the same way by the effect's id, and --key names which of its files when it \
      has several.
      Example: tape relink song.tape s2 ~/audio/moved/drums.wav
      Example: tape relink song.tape --folder ~/audio/moved
      Example: tape relink song.tape f3 ~/irs/hall.wav
      """)

  @OptionGroup var project: ProjectArgument
  @Argument(help: "The source id (s1), or an effect's (f1) for its file.", completion: ids("s"))
  var source: String?
  @Argument(help: "The audio file's new path.", completion: .file()) var path: String?
  @Option(
    help: "Relink every missing source to a file of the same name and audio under this folder.",
    completion: .directory)
  var folder: String?
  @Flag(help: "Accept a file with different audio.") var force = false
  @Option(help: "Which file of the effect, by its key (ir), when it has several.") var key: String?
  @OptionGroup var options: EditOptions
  /// The files each source gets, found by ``prepare(_:)``.
  var found: [(Source.ID, AudioFileInfo)] = []
  /// The effect whose file is relinked, and the file, found by ``prepare(_:)``.
  var effectFile: (Effect.ID, AudioFileInfo)?

  enum CodingKeys: CodingKey {
    case project, source, path, folder, force, key, options
  }

  func validate() throws {
    if folder != nil {
      guard source == nil else {
        throw ValidationError("give either a source and its new path, or --folder DIR, not both")
      }
      guard !force else {
        throw ValidationError(
          "--folder only takes files holding the same audio; relink a source to different audio by its id with --force"
        )
      }
    } else if source == nil || path == nil {
      throw ValidationError(
        "name a source and its new path (tape relink FILE s1 PATH), or a folder to search (--folder DIR)"
      )
    }
  }

  var label: String {
    if let effectFile { return "Relink the file of \(effectFile.0)" }
    return found.count == 1 ? "Relink \(found[0].0)" : "Relink \(found.count) sources"
  }

  mutating func prepare(_ current: Project) throws {
    if let folder {
      found = try missingSources(in: current, under: RawArguments.path(folder))
      return
    }
    guard let source, let path else { return }
    if source.hasPrefix(Effect.idPrefix) {
      effectFile = (
        try parseID(source, as: Effect.ID.self), try AudioProbe.probe(RawArguments.path(path))
      )
      return
    }
    let id = try parseID(source, as: Source.ID.self)
    let info = try AudioProbe.probe(RawArguments.path(path))
    found = [(id, info)]
  }

  func edit(_ current: Project, _ ids: inout IDAllocator) throws -> [Command] {
    if let (id, info) = effectFile { return try relinkEffect(id, to: info, in: current) }
    return try found.map { id, info in
      guard let old = current.source(id) else { throw TimelineError.unknownSource(id) }
      // A source of an older project has the old fingerprint: compared in its own kind.
      let same =
        old.contentHash.hasPrefix("xh64:")
        ? try ContentHash.matches(info.path, old.contentHash)
        : info.contentHash == old.contentHash
      guard force || same else {
        throw DataError(
          message:
            "\(info.path) is not the same audio as source \(id) (\(old.path.resolved(against: projectFolder(project.file)))); use --force to relink it anyway"
        )
      }
      return .setSource(
        Source(
          id: id, path: storedPath(info.path, project: project.file),
          contentHash: info.contentHash, sampleRate: info.sampleRate, channels: info.channels,
          frameCount: FrameCount(info.frameCount)))
    }
  }

  /// The effect `id` with its file (the one `--key` names, or its only one) at `info`'s path:
  /// the same content unless `--force`.
  private func relinkEffect(
    _ id: Effect.ID, to info: AudioFileInfo, in current: Project
  ) throws -> [Command] {
    guard var effect = current.effect(id)?.effect else { throw TimelineError.unknownEffect(id) }
    let keys = effect.files.keys.sorted()
    guard !keys.isEmpty else {
      throw DataError(
        message:
          "effect \(id) has no file to relink; set one with 'tape fx set \(project.file) \(id) --file KEY=PATH'"
      )
    }
    let key: String
    if let given = self.key {
      guard keys.contains(given) else {
        throw UsageError(
          message:
            "effect \(id) has no file '\(given)'; its files are \(keys.map { "'\($0)'" }.joined(separator: ", "))"
        )
      }
      key = given
    } else {
      guard keys.count == 1 else {
        throw UsageError(
          message:
            "effect \(id) has \(keys.count) files (\(keys.joined(separator: ", "))); say which with --key"
        )
      }
      key = keys[0]
    }
    let old = effect.files[key]?.contentHash ?? ""
    guard force || info.contentHash == old else {
      throw DataError(
        message:
          "\(info.path) is not the same content as effect \(id)'s \(key); use --force to relink it anyway, or set another file with 'tape fx set \(project.file) \(id) --file \(key)=PATH'"
      )
    }
    effect.files[key] = EffectFile(
      path: storedPath(info.path, project: project.file), contentHash: info.contentHash)
    return try current.replaceEffect(effect)
  }

  /// `--folder`: the file under `folder` with the name and audio of each missing source.
  /// Says on stderr which were not found (an error when none was).
  private func missingSources(
    in current: Project, under folder: RawPath
  ) throws -> [(Source.ID, AudioFileInfo)] {
    guard let identity = folder.withCString({ FileIdentity(cPath: $0) }), identity.isDirectory
    else {
      throw MissingInput(message: "'\(folder)' is not a folder; name the folder to search")
    }
    let home = projectFolder(project.file)
    let missing = current.sources.filter { isMissing($0, projectFolder: home) }
    guard !missing.isEmpty else {
      writeOut("nothing to relink: every source's file is where the project says\n")
      return []
    }
    let names = Set(missing.map(\.path.lastComponent))
    let candidates = FolderSearch.files(named: names, under: folder.absolute)
    var found: [(Source.ID, AudioFileInfo)] = []
    var notFound: [String] = []
    for source in missing {
      let name = source.path.lastComponent
      let match = candidates[name, default: []].first { file in
        (try? ContentHash.matches(file, source.contentHash)) == true
      }
      if let match {
        found.append((source.id, try AudioProbe.probe(match)))
      } else {
        let reason =
          candidates[name, default: []].isEmpty ? "no file of that name" : "only different audio"
        notFound.append("\(source.id) (\(ProjectWords.escaped(name.description)): \(reason))")
      }
    }
    guard !found.isEmpty else {
      throw MissingInput(
        message:
          "no missing source was found under \(ProjectWords.escaped(folder.description)): \(notFound.joined(separator: ", ")); relink them one by one with 'tape relink \(project.file) ID PATH'"
      )
    }
    if !notFound.isEmpty {
      writeOut(
        ProjectWords.escaped(
          "warning: not found under \(folder): \(notFound.joined(separator: ", "))") + "\n")
    }
    return found
  }

  func printed(created: [String]) -> [String] {
    folder == nil ? [] : found.map(\.0.description)
  }

  /// `--folder` with nothing missing has said so already.
  func unchanged(version: Int64) -> String? {
    folder != nil && found.isEmpty
      ? nil : "note: nothing changed; the project stays at version \(version)"
  }
}

/// Finds files by name in a folder tree, for `relink --folder`.
enum FolderSearch {
  /// The regular files (symlinks to them included) under `folder`, at any depth, whose names
  /// are in `names`, each list sorted. Symlinked folders are not entered (they could loop);
  /// unreadable folders are passed over.
  static func files(named names: Set<RawPath>, under folder: RawPath) -> [RawPath: [RawPath]] {
    var found: [RawPath: [RawPath]] = [:]
    var pending = [folder]
    var visited = 0
    while let current = pending.popLast(), visited < 100_000 {
      visited += 1
      guard let directory = current.withCString({ opendir($0) }) else { continue }
      defer { closedir(directory) }
      while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
          RawPath(bytes: Array(raw.prefix { $0 != 0 }))
        }
        if name == "." || name == ".." { continue }
        let path = current.appending(name)
        var info = stat()
        guard path.withCString({ lstat($0, &info) }) == 0 else { continue }
        if info.st_mode & S_IFMT == S_IFDIR {
          pending.append(path)
        } else if names.contains(name),
          let target = path.withCString({ FileIdentity(cPath: $0) }), target.isRegularFile
        {
          found[name, default: []].append(path)
        }
      }
    }
    return found.mapValues { $0.sorted() }
  }
}

struct Backup: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "backup",
    abstract: "Copy a project, with its whole history, safely while others play and edit it.",
    discussion: """
      The way to copy a project that may be open: a plain cp of song.tape can miss the latest \
      edits (they wait in song.tape-wal until Tape copies them into the file). The copy holds \
      every version committed when it began, appears complete or not at all, and never \
      replaces an existing file. Sources stay named as the project names them (a path \
      relative to the project's folder is relative to the copy's): copy the copy back beside \
      them, or relink it.
      Example: tape backup song.tape song-monday.tape
      """)

  @OptionGroup var project: ProjectArgument
  @Argument(help: "Where to write the copy (a new file).", completion: .file(extensions: ["tape"]))
  var destination: String
  @OptionGroup var output: JSONOption

  func validate() throws {
    guard !destination.isEmpty else {
      throw ValidationError("the backup's path is empty; name the file to write")
    }
  }

  func run() throws {
    Termination.install(
      message: ProjectWords.escaped("backup interrupted; \(destination) was not written"))
    try reportingErrors {
      let store = try retryingReads { try openStore(project.file, access: .read) }
      let report = try store.backup(to: destination)
      let relative = store.snapshot.project.sources.filter { !$0.path.isAbsolute }
      let moved = projectFolder(project.file) != projectFolder(destination)
      if output.json {
        printJSON(
          .object([
            ("file", .string(project.file)), ("backup", .string(report.path)),
            ("version", .integer(report.version)), ("bytes", .integer(report.bytes)),
          ]))
      } else {
        print(
          ProjectWords.escaped(
            "\(report.path): version \(report.version) of \(project.file) and its history, \(megabytes(report.bytes))"
          ))
      }
      if moved, !relative.isEmpty {
        let ids = relative.map(\.id.description).joined(separator: ", ")
        writeOut(
          ProjectWords.escaped(
            "note: \(ids) \(relative.count == 1 ? "is" : "are") named relative to the project's folder; beside \(destination) \(relative.count == 1 ? "it is" : "they are") missing until the copy is put back there, or relinked (tape relink)"
          ) + "\n")
      }
    }
  }

  /// `1.2 MB`, `340 KB`.
  private func megabytes(_ bytes: Int64) -> String {
    bytes >= 1_000_000
      ? String(format: "%.1f MB", Double(bytes) / 1_000_000)
      : "\(max(1, (bytes + 500) / 1_000)) KB"
  }
}
