public import Timeline

/// Why a store operation failed, with a message that says what to do about it.
///
/// Every failing operation leaves the project exactly as it was: the transaction is rolled back.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
  /// No file at the path.
  case notFound(path: String)
  /// `create` was asked to overwrite an existing file.
  case alreadyExists(path: String)
  /// The file exists but is not a Tape project (not SQLite, or SQLite without Tape's marker).
  case notAProject(path: String)
  /// A newer Tape wrote this project; this version cannot read it safely.
  case newerSchema(path: String)
  /// SQLite reported corruption.
  case corrupt(detail: String)
  /// Another process held the write lock for longer than the busy timeout.
  case busy
  /// The operating system refused to read or write the file.
  case io(detail: String)
  /// An edit of a project this user may not write; `reason` says why.
  case readOnly(path: String, reason: String)
  /// A project that cannot be read without writing beside it; `reason` says why.
  case cannotRead(path: String, reason: String)
  /// A project read without locks (it is read-only here) changed while it was read.
  case changedWhileReading(path: String)
  /// The edit is not valid for the current project.
  case invalidEdit(TimelineError)
  case nothingToUndo
  case nothingToRedo
  /// Fewer steps are available than asked for.
  case notEnoughSteps(requested: Int, available: Int, direction: String)
  case unknownVersion(Int64)
  /// `HEAD~N` with N past the first version: the head has `available` versions before it.
  case beforeFirstVersion(reference: String, head: Int64, available: Int64)
  /// A version reference that is neither a version number nor a tag's name.
  case unknownReference(String)
  /// A tag name the rules refuse (see ``VersionTag/check(name:)``); `reason` says which rule.
  case invalidTagName(name: String, reason: String)
  /// `tape tag` with a name another version already has.
  case tagExists(name: String, version: Int64)
  /// A name with no tag, for `tape tag --delete`.
  case unknownTag(String)
  /// A prune would drop versions that tags name; `tags` are those names.
  case tagsOnPrunedVersions([String])
  /// The disk holding the project has (almost) no space left: `free` bytes.
  case diskFull(path: String, free: Int64)
  /// A signal stopped the process before the change was committed.
  case interrupted
  /// A recorded change no longer matches the data it should apply to.
  case historyDiverged
  case internalFailure(String)

  public var description: String {
    switch self {
    case .notFound(let path):
      return "no project at \(path); create one with 'tape new \(path)'"
    case .alreadyExists(let path):
      return "\(path) already exists; choose another name or remove it first"
    case .notAProject(let path):
      return "\(path) is not a Tape project; give the path of a file made by 'tape new'"
    case .newerSchema(let path):
      return
        "\(path) was written by a newer version of Tape; upgrade tape to open it (the file was not changed)"
    case .corrupt(let detail):
      return
        "the project file is damaged (\(detail)); restore it from a backup, or see what sqlite3 can save with 'sqlite3 FILE .recover' (the file was not changed)"
    case .busy:
      return
        "project is busy: another tape process is writing to it; try again when it has finished"
    case .io(let detail):
      return "could not read or write the project: \(detail)"
    case .readOnly(let path, let reason):
      return
        "\(path) is read-only: \(reason); nothing was changed (reading it works: tape ls, history, render)"
    case .cannotRead(let path, let reason):
      return "cannot read \(path): \(reason)"
    case .changedWhileReading(let path):
      return
        "\(path) changed while it was being read (another process wrote to it); run the command again"
    case .invalidEdit(let error):
      return error.description
    case .nothingToUndo:
      return "nothing to undo: the project is at its first version"
    case .nothingToRedo:
      return "nothing to redo; 'tape history' shows the versions you can check out"
    case .notEnoughSteps(let requested, let available, let direction):
      return
        "cannot \(direction) \(requested) steps: only \(available) available; use --steps \(available)"
    case .unknownVersion(let version):
      return "no version \(version) in this project; 'tape history' lists the versions"
    case .beforeFirstVersion(let reference, let head, let available):
      return
        "\(reference) goes back past the first version: the head, version \(head), has \(available) version\(available == 1 ? "" : "s") before it (HEAD~\(available) is the first)"
    case .unknownReference(let reference):
      return
        "no version or tag '\(reference)' in this project; 'tape history' lists the versions, 'tape tag FILE --list' the tags"
    case .invalidTagName(let name, let reason):
      return "'\(name)' cannot name a version: \(reason)"
    case .tagExists(let name, let version):
      return
        "tag '\(name)' already names version \(version); delete it first (tape tag FILE --delete \(name)) or choose another name"
    case .unknownTag(let name):
      return "no tag '\(name)' in this project; 'tape tag FILE --list' lists the tags"
    case .tagsOnPrunedVersions(let tags):
      return
        "the prune would drop versions named by tags \(tags.map { "'\($0)'" }.joined(separator: ", ")); keep them (a smaller prune), delete the tags (tape tag FILE --delete NAME), or add --drop-tags; nothing was changed"
    case .diskFull(let path, let free):
      return
        "the disk that holds \(path) is full (\(free / 1_024) KB free); free some space and run the command again (nothing was changed)"
    case .interrupted:
      return "stopped by a signal before the change was committed; nothing was changed"
    case .historyDiverged:
      return
        "the project's history no longer matches its data, so nothing was changed; please report this with the project file"
    case .internalFailure(let detail):
      return "internal error: \(detail)"
    }
  }
}
