import ArgumentParser
import AudioFiles
import CStandardOutput
import Effects
import Foundation
import Interchange
import Mixing
import Playback
import SafeFiles
import Synchronization
import Timeline
import TimelineStore

/// The project file every command takes first.
struct ProjectArgument: ParsableArguments {
  @Argument(
    help: "The project file (for example song.tape).", completion: .file(extensions: ["tape"]))
  var file: String

  /// The project this run works on, for messages written below the command line ("tape
  /// relink FILE …" names it).
  nonisolated(unsafe) static var named: String?

  func validate() throws {
    // `tape new ""` said SQLite's "unable to open database file".
    guard !file.isEmpty else {
      throw ValidationError("the project path is empty; name the project file, such as song.tape")
    }
    try RawArguments.requireUTF8Path(file, "project")
    Self.named = file
  }
}

/// Shell completion of ids from the project named on the command line: `c` clips, `t` tracks,
/// `s` sources, `v` versions (newest first). Nothing when no project can be read.
func ids(_ kind: Character) -> CompletionKind {
  .custom { words, _, prefix in
    guard
      let file = words.first(where: {
        $0.hasSuffix(".tape") && FileManager.default.fileExists(atPath: $0)
      }),
      let store = try? TimelineStore.open(at: file, access: .read)
    else { return [] }
    defer { try? store.close() }
    let project = store.snapshot.project
    let all: [String]
    switch kind {
    case "c": all = project.tracks.flatMap(\.clips).map(\.id.description)
    case "t": all = project.tracks.map(\.id.description)
    case "s": all = project.sources.map(\.id.description)
    case "m": all = project.markers.map(\.id.description)
    case "n": all = project.sends.map(\.id.description)
    default:
      all = ((try? store.history())?.versions ?? []).reversed().map { "\($0.version)" }
    }
    return all.filter { $0.hasPrefix(prefix) }
  }
}

/// `--json`, for commands whose output scripts read.
struct JSONOption: ParsableArguments {
  @Flag(help: "Print machine-readable JSON on stdout.")
  var json = false
}

/// `--frames`: times printed as raw frames (`96000f`) instead of `m:ss.mmm`.
struct TimeDisplayOption: ParsableArguments {
  @Flag(help: "Print times as frames (96000f) instead of m:ss.mmm.") var frames = false

  func show(_ frames: Int64, sampleRate: Int) -> String {
    Self.show(frames, sampleRate: sampleRate, frames: self.frames)
  }

  /// `count` frames as `m:ss.mmm`, or as `96000f` with `frames`.
  static func show(_ count: Int64, sampleRate: Int, frames: Bool) -> String {
    TimeValue.shown(FrameCount(count), sampleRate: sampleRate, inFrames: frames)
  }
}

/// The exit codes of BSD's sysexits.h, which `tape` uses for every failure.
enum Exit {
  static let usage: Int32 = 64
  static let dataError: Int32 = 65
  static let noInput: Int32 = 66
  static let software: Int32 = 70
  static let ioError: Int32 = 74
  static let busy: Int32 = 75
  /// Permission denied: an edit of a project this user may not write.
  static let noPermission: Int32 = 77
  /// 128 + SIGINT, what shells report for a command stopped by Ctrl-C.
  static let interrupted: Int32 = 130
}

/// Runs a command body and turns any failure into one line on stderr and its exit code.
///
/// Nothing is printed on stdout for a failed command, and no stack trace ever reaches the user.
///
/// Standard output is flushed and checked before the command counts as done: a result that could
/// not be written (a full disk, `> /dev/full`, a closed pipe) is exit 74 with one line, which says
/// when an edit was committed all the same.
///
/// With `readerMayStop` (a listing: `ls`, `history`, `diff`), a reader of stdout that went away
/// early (`tape ls song.tape | head`) is no error: the command ends quietly with exit 0, as
/// `cat` piped into `head` does. A command whose output is its result (the ids an edit made, a
/// render to `-o -`) still fails: what it printed was lost.
func reportingErrors(readerMayStop: Bool = false, _ body: () throws -> Void) throws {
  do {
    try body()
    try StandardOutput.flush()
  } catch let error as ExitCode {
    throw error
  } catch let error as OutputFailure where readerMayStop && error.code == EPIPE {
    return
  } catch {
    let (code, message) = describe(error)
    printError(message)
    throw ExitCode(code)
  }
}

func describe(_ error: any Error) -> (Int32, String) {
  let (code, message) = describeInGeneral(error)
  // A fix that names the project (`tape clip move FILE c3 …`, `sqlite3 FILE .recover`): the
  // one on the command line, in a form a shell takes.
  let command = /(?<command>tape(?: [a-z][a-z-]*){1,2}|sqlite3) FILE(?<after>[ )]|$)/
  guard let file = ProjectArgument.named, message.contains(command) else {
    return (code, message)
  }
  let quoted =
    file.allSatisfy { $0.isLetter || $0.isNumber || "/._-+".contains($0) }
    ? file : "'\(file.replacingOccurrences(of: "'", with: "'\\''"))'"
  return (
    code, message.replacing(command) { "\($0.output.command) \(quoted)\($0.output.after)" }
  )
}

private func describeInGeneral(_ error: any Error) -> (Int32, String) {
  switch error {
  case let error as StoreError:
    switch error {
    case .notFound: return (Exit.noInput, error.description)
    case .busy, .changedWhileReading: return (Exit.busy, error.description)
    case .readOnly, .cannotRead: return (Exit.noPermission, error.description)
    case .io, .diskFull: return (Exit.ioError, error.description)
    case .alreadyExists, .invalidTagName: return (Exit.usage, error.description)
    case .interrupted: return (Exit.interrupted, error.description)
    case .invalidEdit(let inner): return describe(inner)
    case .internalFailure: return (Exit.software, error.description)
    default: return (Exit.dataError, error.description)
    }
  case let error as TimelineError:
    switch error {
    case .invalidTime, .timeTooLarge, .invalidGain, .invalidPan, .emptyClip, .emptyRange,
      .invalidEnvelopePoint, .emptyEnvelope, .invalidEnvelopeShape, .envelopeShapeCount,
      .envelopeShapeCountForAddedPoints,
      .envelopeShapeInPoint, .invalidClipboardName, .clipboardTrackCount, .trackNamedTwice,
      .invalidSnap, .invalidClipName, .notAnID, .nudgeWithoutBase, .timeBeforeStart,
      .noMarkerNamed, .unknownMarkerName, .timelinePlaceForSourceTime:
      return (Exit.usage, error.description)
    default: return (Exit.dataError, error.description)
    }
  case let error as AudioFileError:
    switch error {
    case .missing: return (Exit.noInput, error.description)
    case .unreadable, .io, .cannotCreate, .write, .takeWrite, .diskFull:
      return (Exit.ioError, error.description)
    case .unsupportedOutput, .tooLong: return (Exit.usage, error.description)
    case .cancelled, .decodeStopped: return (Exit.interrupted, error.description)
    case .output(let inner): return describe(inner)
    case .cache: return (Exit.ioError, error.description)
    case .unsafeRecordingsFolder: return (Exit.noPermission, error.description)
    default: return (Exit.dataError, error.description)
    }
  case let error as SafeFileError:
    switch error {
    case .isFolder, .unsupportedKind: return (Exit.usage, error.description)
    case .foreignSymlink: return (Exit.noPermission, error.description)
    default: return (Exit.ioError, error.description)
    }
  case let error as MixingError:
    return (Exit.dataError, error.description)
  case let error as EffectError:
    switch error {
    case .unknownPlugin: return (Exit.noInput, error.description)
    case .unknownSymbol, .invalidValue, .outOfRange, .valueCount, .unsupportedChannels,
      .invalidConfiguration, .ambiguousPlugin, .unknownPreset, .ambiguousPreset, .symbolRepeated:
      return (Exit.usage, error.description)
    default: return (Exit.dataError, error.description)
    }
  case let error as PlaybackError:
    switch error {
    case .badPeriod, .badPeriods: return (Exit.usage, error.description)
    default: return (Exit.ioError, error.description)
    }
  case let error as OutputFailure:
    return (Exit.ioError, error.message)
  case let error as UsageError:
    return (Exit.usage, error.message)
  case let error as PermissionError:
    return (Exit.noPermission, error.message)
  case let error as MissingInput:
    return (Exit.noInput, error.message)
  case let error as DataError:
    return (Exit.dataError, error.message)
  case let error as ToolFailure:
    return (Exit.ioError, error.message)
  case let error as BatchLineError:
    let (code, message) = describe(error.underlying)
    return (code, "line \(error.line): \(message)")
  default:
    // Never a Swift value as the language prints one (`usageError(message: "…")`).
    let text = "\(error)"
    let words =
      text.contains(/\b[A-Za-z]+\((?:[a-z][A-Za-z]*: |")/)
      ? "an unexpected \(type(of: error)); please report it" : text
    return (Exit.software, "internal error: \(words)")
  }
}

/// Tape's own output (every `print` in this executable): written to its own stream on
/// standard output, apart from C's `stdout`, which ``StandardOutput/divert()`` points at stderr
/// for what libraries and plugins print. Formats as `Swift.print` does.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
  printLine(items.map { String(describing: $0) }.joined(separator: separator), terminator)
}

/// `print` under a name of its own, for types that have a `print` method of theirs (never
/// `Swift.print`, which writes to C's `stdout`: stderr, once diverted).
func printLine(_ text: String, _ terminator: String = "\n") {
  // A failure stays on the stream (its error flag), and ``StandardOutput/flush()`` reports it.
  _ = tape_write_output(StandardOutput.own, text + terminator)
}

/// What a command printed on stdout reaches it, or the command fails.
enum StandardOutput {
  /// Keeps what libraries and plugins print with C's `printf` out of Tape's standard output
  /// (see `tape_divert_standard_output`): x42's convolver printed "SF rate: 48000, …" into
  /// `tape fx add … --json`, and would have into audio rendered to `-o -`. Done once, at the
  /// start; where it cannot be (standard output closed), nothing changes.
  static func divert() {
    _ = tape_divert_standard_output(&own)
  }

  /// Tape's own stream on descriptor 1 once ``divert()`` has made it, else nil (C's `stdout`
  /// is Tape's). Set once, at the start, before any other thread runs.
  nonisolated(unsafe) static var own: UnsafeMutablePointer<FILE>?

  /// What the command did all the same, said when its output could not be written ("the edit
  /// itself was committed as version 7…").
  nonisolated(unsafe) static var done: String?

  /// Flushes stdout; throws ``OutputFailure`` when anything printed could not be written.
  static func flush() throws {
    let code = tape_flush_standard_output(own)
    if code != 0 { throw OutputFailure(code: code, done: done) }
  }
}

/// Standard output could not be written (exit 74).
struct OutputFailure: Error {
  let code: Int32
  let done: String?

  var message: String {
    let reason = code == EPIPE ? "the reader went away" : String(cString: strerror(code))
    return
      "could not write the result to standard output (\(reason))\(done.map { "; \($0)" } ?? "")"
  }
}

/// A mistake in how a command was called, found after parsing (an id of the wrong kind, say).
///
/// These errors describe themselves as their message: one thrown from a command's
/// `validate()` reaches the user through the argument parser, which prints
/// `String(describing:)`, and `tape fx set F f1 --set gain` printed
/// `usageError(message: "…")`.
struct UsageError: Error, CustomStringConvertible {
  let message: String
  var description: String { message }
}

/// Something this user may not do to a file, found by a command itself (exit 77).
struct PermissionError: Error, CustomStringConvertible {
  let message: String
  var description: String { message }
}

/// An input that is not there (any more), found by a command itself (exit 66).
struct MissingInput: Error, CustomStringConvertible {
  let message: String
  var description: String { message }
}

/// Input that is well-formed but unusable, found by a command itself (exit 65).
struct DataError: Error, CustomStringConvertible {
  let message: String
  var description: String { message }
}

/// The environment variable `name`, or nil. `ProcessInfo.processInfo.environment` builds a
/// dictionary of the whole environment at each use, a cost every command paid at start.
func environmentVariable(_ name: String) -> String? {
  getenv(name).map { String(cString: $0) }
}

/// `TAPE_BUSY_TIMEOUT` in seconds (0 to 3600), nil when unset; anything else is refused
/// (it used to trap on `nan` or `1e10`, and a typo was silently ignored).
func busyTimeout() throws -> Double? {
  guard let text = environmentVariable("TAPE_BUSY_TIMEOUT") else { return nil }
  // Digits with at most one point, as documented: not ` 5`, `+3`, `0x10` or `1e2`, which
  // Double(_:) would also take.
  let pieces = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
  guard pieces.count <= 2, pieces.contains(where: { !$0.isEmpty }),
    pieces.allSatisfy({ $0.allSatisfy { "0123456789".contains($0) } }),
    let seconds = Double(text), seconds.isFinite, (0...3_600).contains(seconds)
  else {
    throw UsageError(
      message:
        "TAPE_BUSY_TIMEOUT=\(text) is not a number of seconds from 0 to 3600; unset it for the default (\(Int(TimelineStore.defaultBusyTimeout)) s)"
    )
  }
  return seconds
}

/// Writes `text` whole to `descriptor` (stderr unless told): ``SafeFiles/writeWhole(_:to:)``.
@discardableResult
func writeOut(_ text: String, to descriptor: Int32 = STDERR_FILENO) -> Bool {
  writeWhole(text, to: descriptor)
}

/// Writes `error: message` to stderr, the prefix red on a terminal unless NO_COLOR is set. A
/// message over 1,000 characters (one quoting thousands of stray arguments) keeps its start and
/// its end, where the fix is.
func printError(_ message: String) {
  // A signal stopping the process has said what happened: nothing more, it ends meanwhile.
  Termination.awaitEndIfStopping()
  let colour = isatty(STDERR_FILENO) == 1 && environmentVariable("NO_COLOR") == nil
  let prefix = colour ? "\u{1B}[1;31merror:\u{1B}[0m" : "error:"
  // A name with a newline, ESC or BEL in it (a file, a source) is shown as `ls` shows it, so
  // an error is always one line and never moves the cursor or rings the bell.
  let safe = ProjectWords.escaped(message)
  let shown =
    safe.count > 1_000
    ? "\(safe.prefix(700)) … \(safe.suffix(250))" : safe
  writeOut("\(prefix) \(shown)\n")
}

/// Prints `value` as one line of JSON on stdout.
func printJSON(_ value: JSON) {
  print(value.line)
}

/// What every mutating command prints: the new ids alone, one per line, or with `--json`
/// `{"version": N, "ids": [...]}`.
struct MutationOutput {
  let version: Int64
  let ids: [String]
  /// What happened, said when the output cannot be written.
  var done: String?

  func print(json: Bool) throws {
    StandardOutput.done =
      done
      ?? "the edit itself was committed as version \(version) and can be undone with 'tape undo'"
    if json {
      printJSON(.object([("version", .integer(version)), ("ids", .array(ids.map(JSON.string)))]))
    } else {
      for id in ids { printLine(id) }
    }
  }
}

/// A history label naming what changed, in the user's own words: `Set c3 gain -2dB, fade-out 2s`.
func historyLabel(_ action: String, _ changes: [(String, String?)]) -> String {
  let parts = changes.compactMap { name, value in
    value.map { name.isEmpty ? $0 : "\(name) \($0)" }
  }
  return parts.isEmpty ? action : "\(action) \(parts.joined(separator: ", "))"
}

/// How a label says where a time took something: `to 5s`, or `by -1s` for a nudge (`+10ms`,
/// `-1s`), which is relative to where it was ("Move c1 to -1s" read as a move to before 0).
func toOrBy(_ time: String) -> (String, String) {
  let trimmed = time.trimmingCharacters(in: .whitespaces)
  return (trimmed.hasPrefix("+") || trimmed.hasPrefix("-") ? "by" : "to", trimmed)
}

// MARK: Parsing values that need the project

/// A clip given by its id (`c3`) or by its name (`@intro`, ``Timeline/Clip/name``). Where a
/// clip is taken, `@NAME` is a clip's name; in a time argument it is a marker (`--at @chorus`):
/// different arguments, so the two never meet. In a batch, a name an earlier line gave with
/// `--as` wins over both.
func parseClipID(_ text: String, _ project: Project) throws -> Clip.ID {
  guard text.hasPrefix("@") else { return try parseID(text, as: Clip.ID.self) }
  let name = String(text.dropFirst())
  guard let clip = project.clip(named: name) else { throw TimelineError.unknownClipName(name) }
  return clip.id
}

func parseID<Entity>(_ text: String, as _: EntityID<Entity>.Type) throws -> EntityID<Entity> {
  guard let id = EntityID<Entity>(parsing: text) else {
    throw TimelineError.notAnID(text, entity: Entity.entityName, prefix: Entity.idPrefix)
  }
  return id
}

/// `text` read as a time (``TimeValue``); a time too large names `option` (`--length`).
func parseTime(_ text: String, _ project: Project, option: String? = nil) throws -> FrameCount {
  do {
    return try TimeValue(parsing: text, sampleRate: project.sampleRate).frames
  } catch .timeTooLarge(_, let rate, nil) {
    throw TimelineError.timeTooLarge(text, sampleRate: rate, option: option)
  }
}

/// A timeline time as the command line takes it (``Timeline/TimeExpression``): a time, a
/// clip's edge, a marker, or a nudge from `base`.
func parsePosition(
  _ text: String, _ project: Project, relativeTo base: FramePosition? = nil,
  option: String? = nil
) throws -> FramePosition {
  try TimeExpression.position(text, in: project, relativeTo: base, option: option)
}

/// A time into a source (`clip add --from`, `--to`; ``Timeline/TimeExpression/sourceTime(_:option:in:)``).
func parseSourceTime(
  _ text: String, option: String, _ project: Project
) throws -> FramePosition {
  try TimeExpression.sourceTime(text, option: option, in: project)
}

func parseCurve(_ text: String) throws -> FadeCurve {
  guard let curve = FadeCurve(parsing: text) else {
    throw UsageError(
      message: "'\(text)' is not a fade curve; use linear, equal-power, s-curve or exponential")
  }
  return curve
}

/// Runs `body` (which opens the project for reading and reads it) again when it met a writer
/// half-way: SQLite answered busy while the log was being reset, or an immutable read saw the
/// file change under it. Readers never wait for a writer's transaction, but these moments last
/// milliseconds; after about 3 s of them the error stands.
func retryingReads<Value>(_ body: () throws -> Value) throws -> Value {
  var attempt = 0
  while true {
    do {
      return try body()
    } catch let error as StoreError where attempt < 60 {
      switch error {
      case .busy, .changedWhileReading: break
      default: throw error
      }
      attempt += 1
      usleep(UInt32(min(100, 5 * attempt)) * 1_000)
    }
  }
}

/// Opens the project named on the command line, for editing unless `access` says otherwise
/// (read commands open it read-only: they never wait for an editor, never make one wait, and
/// write nothing). `TAPE_BUSY_TIMEOUT` (seconds) overrides how long an edit waits for another
/// process's write before failing with "project is busy". The store stays open until the
/// command has finished (``StoresClosedAtExit``) unless `closedAtExit` is false. A command
/// that makes one history move and exits passes `keepingLargeMovesPending: false` (see
/// ``TimelineStore/open(at:access:busyTimeout:durability:keepingLargeMovesPending:)``).
func openStore(
  _ file: String, access: TimelineStore.Access = .write, closedAtExit: Bool = true,
  keepingLargeMovesPending: Bool = true
) throws -> TimelineStore {
  let timeout = try busyTimeout()
  let store = try TimelineStore.open(
    at: file, access: access, busyTimeout: timeout ?? TimelineStore.defaultBusyTimeout,
    keepingLargeMovesPending: keepingLargeMovesPending)
  if closedAtExit { StoresClosedAtExit.keep(store) }
  sayNotes(store.notes)
  if let waiting = PendingTakes.notice(for: file) { sayNotes([waiting]) }
  return store
}

/// Opens `file` to follow its moves (`tape watch`, `tape view`), or refuses in one line when it
/// can only be read here: following needs its log beside it. `verb` says what the user would do
/// as another user ("watch", "view").
func openStoreToFollow(_ file: String, verb: String) throws -> TimelineStore {
  let store = try retryingReads { try openStore(file, access: .follow) }
  guard store.canFollow else {
    throw PermissionError(
      message:
        "\(file) can only be read here (its mode or its folder's, or a read-only mount), and following its moves needs its log beside it; \(verb) it as a user who may write its folder"
    )
  }
  return store
}

/// What opening a project did that its user should know (a log set aside: see
/// ``TimelineStore/notes``), a `note:` line each on stderr.
func sayNotes(_ notes: [String]) {
  for note in notes { writeOut(ProjectWords.escaped("note: \(note)") + "\n") }
}

/// The stores a command opened, closed when it has finished, just before the process exits
/// (``closeAll()``), rather than when their last reference goes.
///
/// Why: releasing a store releases its GRDB queue, and disposing a Dispatch queue starts a
/// Dispatch worker thread, which the exit then has to wait for and tear down: about 1 ms of a
/// 9 ms edit (Benchmarks/edit-latency.py). Closing is what the store's deinitializer did: it
/// checkpoints the log into the project file and removes it.
///
/// `tape demo` runs many commands in one process and closes their stores after each, as their
/// own processes would.
enum StoresClosedAtExit {
  private static let stores = Mutex<(open: [any ClosedAtExit], closed: [any ClosedAtExit])>(
    ([], []))

  static func keep(_ store: any ClosedAtExit) {
    let first = stores.withLock { stores in
      defer { stores.open.append(store) }
      return stores.open.isEmpty && stores.closed.isEmpty
    }
    if first {
      // Stopped by a signal, a command leaves each project it opened one file too: its log is
      // copied into it before the process ends (if it was the last to have it open, nothing
      // else would). A command that handles the signals itself (play, scrub) closes its stores
      // as it ends (``Interrupt/reraiseIfRequested()``).
      Termination.installWhereUnhandled()
      Termination.beforeStopping { StoresClosedAtExit.foldLogs() }
    }
  }

  /// Copies the log of every project still open into its file (``TimelineStore/foldLog(at:waitingUpTo:)``):
  /// what a command stopped by a signal does before it ends.
  static func foldLogs() {
    let open = stores.withLock { $0.open }
    for path in Set(open.map(\.path)) { TimelineStore.foldLog(at: path) }
  }

  /// Closes every open kept store, the last opened first, and keeps referencing them, so that
  /// none is released before the process exits. In that order the first store opened, which
  /// for an edit is its write connection, closes last: the last connection to a project is the
  /// one that checkpoints its log into the file. As in the deinitializer, a close that fails is
  /// not reported: what it could not checkpoint stays in the log beside the project, and the
  /// next open reads it.
  static func closeAll() {
    let open = stores.withLock { stores in
      defer {
        stores.closed += stores.open
        stores.open = []
      }
      return stores.open
    }
    for store in open.reversed() { try? store.close() }
  }
}

/// A store ``StoresClosedAtExit`` keeps: a whole project's or a scoped editor's.
protocol ClosedAtExit: Sendable {
  var path: String { get }
  func close() throws(StoreError)
}

extension TimelineStore: ClosedAtExit {}

extension ScopedEditor: ClosedAtExit {}
