import ArgumentParser
import Foundation
import Interchange
import SafeFiles
import Timeline
import TimelineStore

/// `tape shell FILE`: edit lines from standard input, each committed as its own version as
/// soon as it is read, the project kept open in between.
///
/// Why: a process per edit costs its start, its parse and the opening of the project, 40–60 ms
/// under load (issue 43), so a shell loop of `tape fx set` reached about 25 changes a second,
/// and setters started concurrently committed out of order. One process reading a pipe commits
/// in the order it reads, and a line costs its parse and its commit.
///
/// Rule: the write lock is taken only inside each line's commit (``TimelineStore/commit``),
/// never between lines. Why: other processes edit the same project meanwhile (a user's other
/// terminal, a controller); each commit catches up with theirs first, so every line sees them.
struct Shell: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "shell",
    abstract: "Apply edit lines from standard input as they come, each as its own version.",
    discussion: """
      One process for many edits, for scripts and live control: each line is an editing \
      command of the batch language ('tape batch --help': clip, track, fx, marker, send, import, \
      relink, cut, insert, split, paste, master, without 'tape' and the project), applied \
      as soon as it is read, in order, as its own version and undo step, with the project \
      kept open between lines. Each line is answered on stdout at once: 'line N: vV' and \
      the ids it made, or with --json one object per line. A line's -m TEXT labels its \
      version; its --as NAME names the id it creates, which later lines use as @NAME. Blank \
      lines and # comments are skipped. A bad line prints 'error: line N: …' on stderr, \
      changes nothing, and the shell goes on with the next; at the end the exit status is 0 \
      when every line was applied, else the code of the first line that failed. Edits that \
      other processes make meanwhile are seen by the next line. It ends at the end of its \
      input, or on Ctrl-C, SIGTERM or SIGHUP once the line under way is applied, closing \
      the project. Typed at a terminal, Ctrl-D ends it.
      Example: tape shell song.tape
      Example: printf 'track add Pad --as pad\\nclip add @pad s1 --at 0\\n' | tape shell song.tape
      Example: cat edits.txt | tape shell song.tape --json
      """)

  @OptionGroup var project: ProjectArgument
  @Flag(
    help: """
      Answer each line with one JSON object on stdout: line, version, ids, label, changed, \
      error.
      """)
  var json = false

  func run() throws {
    Interrupt.install()
    let wake = Interrupt.wakeDescriptor()
    var failure: Int32?
    try reportingErrors {
      let store = try openStore(project.file)
      let identity = FileIdentity(path: project.file)
      var session = ShellSession(file: project.file, store: store, json: json)
      var input = InputLines(descriptor: STDIN_FILENO, wake: wake)
      while let (number, line) = try input.next() {
        // The open connection would go on writing to a file that is no longer the project's.
        guard let now = FileIdentity(path: project.file), let identity,
          now.isSameFile(as: identity)
        else {
          throw MissingInput(
            message:
              "\(project.file) was deleted or replaced while the shell had it open; line \(number) and those after it were not applied; start a shell on the new one"
          )
        }
        if let code = try session.apply(line, number: number), failure == nil {
          failure = code
        }
        // Each result reaches a reader of the pipe before the next line is read.
        try StandardOutput.flush()
      }
    }
    if Interrupt.requested() {
      StoresClosedAtExit.closeAll()
      Interrupt.reraiseIfRequested()
    }
    if let failure { throw ExitCode(failure) }
  }
}

/// What `tape shell` keeps from line to line: the open project and the names `--as` gave.
struct ShellSession {
  let file: String
  let store: TimelineStore
  let json: Bool
  /// The ids the lines' `--as NAME` named, by name.
  private var named: [String: String] = [:]
  /// The sources whose SHA-256 identity has been looked at once this session
  /// (``EditingCommand/sourceHashUpgrades(_:)`` reads each source's file).
  private var looked: Set<Source.ID> = []

  init(file: String, store: TimelineStore, json: Bool) {
    self.file = file
    self.store = store
    self.json = json
  }

  /// Applies one line of input (`nil`: a line too long to read) as its own version and
  /// prints its result, or its error (then nothing changed). Returns the error's exit code,
  /// nil when the line was applied or held no edit. Throws only when the result could not be
  /// written.
  mutating func apply(_ bytes: [UInt8]?, number: Int) throws -> Int32? {
    var line: BatchLine?
    do {
      guard let bytes else {
        throw UsageError(
          message: "the line is over \(InputLines.longest >> 20) MB; an edit is one line of text")
      }
      let words = try BatchScript.split(bytes)
      guard !words.isEmpty else { return nil }
      let parsed = try BatchLine(
        number: number, words: words, file: file, known: Set(named.keys), resolved: named,
        reader: .shell)
      line = parsed
      // With every name resolved, a line is parsed at once.
      guard var command = parsed.command else {
        preconditionFailure("a line of tape shell was left unparsed")
      }
      let copy = command
      let upgrades = { [looked] (project: Project) -> [SourceUpgrade] in
        copy.sourceHashUpgrades(project.sources.filter { !looked.contains($0.id) })
      }
      looked.formUnion(store.snapshot.project.sources.map(\.id))
      let (result, notes) = try command.commit(to: store, upgrades: upgrades, naming: parsed.name)
      if let name = parsed.name, let first = result.newIDs.first { named[name] = first }
      let ids = command.printed(created: result.newIDs)
      if result.changed.isEmpty, let note = command.unchanged(version: result.version) {
        writeOut(
          "note: line \(number): \(ProjectWords.escaped(String(note.trimmingPrefix("note: "))))\n")
      }
      for note in notes { writeOut("note: line \(number): \(note)\n") }
      StandardOutput.done =
        "line \(number) was committed all the same, as version \(result.version)"
      if json {
        printJSON(
          .object([
            ("line", .integer(Int64(number))), ("version", .integer(result.version)),
            ("ids", .array(ids.map(JSON.string))),
            (
              "label",
              result.changed.isEmpty ? .null : .string(command.options.message ?? command.label)
            ),
            ("changed", .bool(!result.changed.isEmpty)), ("error", .null),
          ]))
      } else {
        print((["line \(number): v\(result.version)"] + ids).joined(separator: " "))
      }
      return nil
    } catch {
      StandardOutput.done = nil
      var underlying = (error as? BatchLineError)?.underlying ?? error
      if !(error is BatchLineError),
        let unknown = line?.unknownName(named: named, store.snapshot.project)
      {
        underlying = unknown
      }
      let (code, message) = describe(underlying)
      printError("line \(number): \(message)")
      if json {
        printJSON(
          .object([
            ("line", .integer(Int64(number))), ("version", .integer(store.snapshot.version)),
            ("ids", .array([])), ("label", .null), ("changed", .bool(false)),
            ("error", .object([("code", .integer(Int64(code))), ("message", .string(message))])),
          ]))
      }
      return code
    }
  }
}

/// Standard input, line by line as it arrives: a line is handed over as soon as its newline
/// is read, never held for more input (a pipe from a live controller).
struct InputLines {
  /// The longest line read whole, in bytes; a longer one is skipped to its end and reported.
  static let longest = 1 << 20

  private let descriptor: Int32
  private let wake: Int32?
  private var buffer: [UInt8] = []
  /// What one `read` fills.
  private var chunk = [UInt8](repeating: 0, count: 65_536)
  /// Where the unread part of `buffer` starts.
  private var start = 0
  private var ended = false
  private var number = 0
  /// The current line grew past ``longest``: its bytes are being dropped up to its end.
  private var skipping = false

  init(descriptor: Int32, wake: Int32?) {
    self.descriptor = descriptor
    self.wake = wake
  }

  /// The next line, numbered from 1, without its newline (or the `\r` before it, or a UTF-8
  /// byte-order mark starting the input); its bytes are nil when it was over ``longest``. nil
  /// at the end of input, or once a stop is asked for (``Interrupt``).
  mutating func next() throws -> (number: Int, bytes: [UInt8]?)? {
    while !Interrupt.requested() {
      if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
        var line = Array(buffer[start..<newline])
        start = newline + 1
        number += 1
        if number == 1, line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        defer { skipping = false }
        return (number, skipping ? nil : line)
      }
      if ended {
        guard start < buffer.count || skipping else { return nil }
        // A last line without its newline.
        buffer.append(UInt8(ascii: "\n"))
        continue
      }
      if buffer.count - start > Self.longest {
        skipping = true
        start = buffer.count
      }
      if start > 0 {
        buffer.removeSubrange(..<start)
        start = 0
      }
      try fill()
    }
    return nil
  }

  /// Waits for input (or a stop) and appends what came; sets `ended` at the end of input.
  private mutating func fill() throws {
    var waiting = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
    if let wake { waiting.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0)) }
    let ready = poll(&waiting, nfds_t(waiting.count), -1)
    if ready < 0 {
      guard errno == EINTR else {
        throw DataError(
          message: "cannot wait for standard input: \(String(cString: strerror(errno)))")
      }
      return
    }
    // A stop was asked for: ``next()`` sees it.
    if waiting.count > 1 && waiting[1].revents != 0 { return }
    let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
    if count < 0 {
      if errno == EINTR || errno == EAGAIN { return }
      throw DataError(message: "cannot read standard input: \(String(cString: strerror(errno)))")
    }
    if count == 0 {
      ended = true
    } else {
      buffer += chunk[..<count]
    }
  }
}
