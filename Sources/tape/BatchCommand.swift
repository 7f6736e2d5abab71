import ArgumentParser
import Foundation
import SafeFiles
import Timeline
import TimelineStore

/// An error of one line of a batch script: reported as `line N: …` with the line's own code.
struct BatchLineError: Error {
  let line: Int
  let underlying: any Error
}

struct Batch: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "batch",
    abstract: "Apply a script of edits as one version: one undo step, all or nothing.",
    discussion: """
      Each line is a tape editing command without 'tape' and the project: clip add, split, \
      copy, move, trim, slip, set, crossfade, rm; track add, set, envelope, move, duplicate, \
      rm; fx add, set, bypass, move, rm; marker add, move, rename, rm; send add, set, rm; \
      import; relink; cut; \
      insert; split; paste; master. Words are split as a shell splits them ('…' and "…" quote, \\ escapes), and # \
      starts a comment. Every line is checked and applied in order, each seeing the ones \
      before it; an error on any line is reported as 'line N: …' and nothing is applied.
      A line's --as NAME names the id it creates (the first, if several); later lines use it \
      as @NAME. A word @NAME that no earlier line named is a marker, for a time \
      (--at @chorus, @chorus+2s), or a clip's name, for a clip (clip set @intro); a name \
      given by --as wins over a marker's and a clip's.
      Example: tape batch song.tape edits.txt -m "Rough cut"
      Example: printf 'track add Drums --as d\\nclip add @d s1 --at 0\\n' | tape batch song.tape
      """)

  @OptionGroup var project: ProjectArgument
  @Argument(help: "The script (default: standard input, also as -).", completion: .file())
  var script: String?
  @OptionGroup var options: EditOptions

  /// The subcommands a batch takes, as their first words.
  static let editing = [
    "clip", "track", "fx", "import", "relink", "cut", "insert", "split", "paste", "master",
    "marker", "send",
  ]

  func run() throws {
    try reportingErrors {
      let lines = try BatchScript.lines(of: script.map(RawArguments.path))
      var parsed: [BatchLine] = []
      var names: Set<String> = []
      for (number, words) in lines {
        let line = try BatchLine(number: number, words: words, file: project.file, known: names)
        try line.command.map { try Self.refuseLabel($0, line: number) }
        if let name = line.name { names.insert(name) }
        parsed.append(line)
      }
      let store = try openStore(project.file)
      // A script of comments and blank lines edits nothing: said as for any edit that changes
      // nothing, not an error (a generated script may have no edits today).
      guard !parsed.isEmpty else {
        writeOut(
          "note: the script has no edits; nothing changed; the project stays at version \(store.snapshot.version)\n"
        )
        try MutationOutput(version: store.snapshot.version, ids: []).print(json: options.json)
        return
      }
      for index in parsed.indices {
        do {
          try parsed[index].command?.load(from: store)
        } catch {
          throw BatchLineError(line: parsed[index].number, underlying: error)
        }
      }
      for index in parsed.indices where !parsed[index].usesNames {
        do {
          try parsed[index].command?.prepare(store.snapshot.project)
        } catch {
          throw BatchLineError(line: parsed[index].number, underlying: error)
        }
      }
      let label =
        options.message
        ?? "Batch \(script.map { $0 == "-" ? "from stdin" : RawArguments.path($0).lastComponent.description } ?? "from stdin") (\(parsed.count) edit\(parsed.count == 1 ? "" : "s"))"
      let file = project.file
      var created: [String] = []
      var notes: [String] = []
      let result = try store.edit(label: label) { start, ids in
        var current = start
        var named: [String: String] = [:]
        var all: [Command] = []
        created = []
        notes = []
        for line in parsed {
          do {
            var command: any EditingCommand
            if !line.usesNames, let parsed = line.command {
              command = parsed
            } else {
              command = try line.parsed(with: named, file: file)
              if let loaded = line.command { command.takeLoaded(from: loaded) }
              try Self.refuseLabel(command, line: line.number)
              try command.prepare(current)
            }
            let before = ids
            notes += try command.notes(current).map { "line \(line.number): \($0)" }
            let commands = try command.edit(current, &ids)
            current = try current.applying(commands)
            all += commands
            let new = ids.created(since: before)
            created += new
            if let name = line.name {
              guard let first = new.first else { throw BatchLine.namesNothing(name) }
              named[name] = first
            }
          } catch let error as BatchLineError {
            // The line's words do not parse.
            throw error
          } catch {
            throw BatchLineError(
              line: line.number, underlying: line.unknownName(named: named, current) ?? error)
          }
        }
        return all
      }
      if result.changed.isEmpty {
        writeOut("note: nothing changed; the project stays at version \(result.version)\n")
      }
      for note in notes { writeOut("note: \(note)\n") }
      try MutationOutput(version: result.version, ids: created).print(json: options.json)
    }
  }

  /// A line's `-m` is refused: the batch is one version, labelled by the batch's own `-m`.
  static func refuseLabel(_ command: any EditingCommand, line: Int) throws {
    guard command.options.message == nil else {
      throw BatchLineError(
        line: line,
        underlying: UsageError(
          message: "-m labels the whole batch: give it to 'tape batch', not to a line"))
    }
  }
}

/// One line of the batch language (`tape batch`'s script, `tape shell`'s input): its words,
/// the command they parse to, and the name it gives.
struct BatchLine {
  let number: Int
  /// The words as written, `--as NAME` taken out (and in the shell each `@NAME` an earlier
  /// line gave replaced by its id).
  let words: [String]
  let name: String?
  /// Whether a word is `@NAME` for a name an earlier line gave with `--as` whose id is not
  /// known yet (in a batch, whose earlier lines have not run): such a line is parsed when it
  /// is applied, with the ids in place (``parsed(with:file:)``).
  let usesNames: Bool
  /// The command the words parse to; nil for a line that ``usesNames``, parsed when it is
  /// applied, unless its command reads the store first (``EditingCommand/loadsFromStore``):
  /// then also parsed now, with the names as written, to be loaded before the transaction.
  var command: (any EditingCommand)?
  /// How many of the words name the command (`clip set`: 2).
  let length: Int

  /// Who reads the lines, as the errors name it.
  enum Reader {
    case batch, shell

    /// `a batch`, `the shell`.
    var name: String { self == .batch ? "a batch" : "the shell" }
  }

  /// The line `words` (number `number`) of `reader`, for the project `file`. `known` are the
  /// names earlier lines gave with `--as`; `resolved`, where their ids are known already (the
  /// shell's earlier lines have committed), gives those ids, which then replace their `@NAME`
  /// words before the one parse.
  init(
    number: Int, words: [String], file: String, known: Set<String>,
    resolved: [String: String] = [:], reader: Reader = .batch
  ) throws {
    self.number = number
    var words = words
    var name: String?
    if words.filter({ $0 == "--as" }).count > 1 {
      throw BatchLineError(
        line: number,
        underlying: UsageError(message: "--as is given twice; a line names one id: --as NAME"))
    }
    if let index = words.firstIndex(of: "--as") {
      guard index + 1 < words.count else {
        throw BatchLineError(
          line: number, underlying: UsageError(message: "--as needs a name: --as NAME"))
      }
      let given = words[index + 1]
      guard !given.isEmpty,
        given.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" })
      else {
        throw BatchLineError(
          line: number,
          underlying: UsageError(
            message: "'\(given)' is not a name for --as; use letters, digits, - and _"))
      }
      guard !known.contains(given) else {
        throw BatchLineError(
          line: number,
          underlying: UsageError(message: "@\(given) is already named by an earlier line"))
      }
      name = given
      words.removeSubrange(index...index + 1)
    }
    // Any other @WORD is left for a time argument to read as a marker (checked when the line
    // is applied, against the project as the earlier lines left it).
    if !resolved.isEmpty { words = Self.replacing(words, with: resolved) }
    self.words = words
    self.name = name
    usesNames = words.contains { $0.hasPrefix("@") && known.contains(String($0.dropFirst())) }
    let (type, path) = try Self.command(named: words, line: number, reader: reader)
    length = path
    // Parsed once: swift-argument-parser's parse of a line is most of what applying it costs
    // (Benchmarks/shell-latency.py; issue 47's profile of a batch).
    command =
      usesNames && !((type as? any EditingCommand.Type)?.loadsFromStore ?? true)
      ? nil : try Self.parse(words, path: path, file: file, line: number, reader: reader)
  }

  /// The error of a line whose `--as NAME` has no id to name: the line creates none.
  static func namesNothing(_ name: String) -> UsageError {
    UsageError(message: "--as \(name): this line creates no id to name")
  }

  /// `words` with each word `@NAME` that `named` names replaced by its id.
  static func replacing(_ words: [String], with named: [String: String]) -> [String] {
    words.map { word in word.hasPrefix("@") ? named[String(word.dropFirst())] ?? word : word }
  }

  /// The line's command with each `@NAME` replaced by the id it names (a batch's line that
  /// ``usesNames``, when it is applied).
  func parsed(with named: [String: String], file: String) throws -> any EditingCommand {
    try Self.parse(
      Self.replacing(words, with: named), path: length, file: file, line: number, reader: .batch)
  }

  /// Why the line failed when it names by `@NAME` what is neither an earlier line's `--as`
  /// (`named`), a marker nor a clip's name in `project`: that, rather than what the parser
  /// made of it; nil when every such word names something.
  func unknownName(named: [String: String], _ project: Project) -> UsageError? {
    guard
      let unknown = words.first(where: {
        $0.hasPrefix("@") && named[String($0.dropFirst())] == nil
          && (try? parsePosition($0, project)) == nil
          && project.clip(named: String($0.dropFirst())) == nil
      })
    else { return nil }
    return UsageError(
      message:
        "\(unknown) is not named by an earlier line (name an id with --as NAME), nor a marker ('tape marker ls' lists them)"
    )
  }

  /// The command `words` name, and how many words name it (`clip set`: 2), when they name
  /// one that `reader` takes; the checks made without parsing the rest.
  static func command(
    named words: [String], line: Int, reader: Reader
  ) throws -> (type: any ParsableCommand.Type, length: Int) {
    if let help = words.first(where: { ["-h", "--help", "help"].contains($0) }) {
      throw BatchLineError(
        line: line,
        underlying: UsageError(
          message:
            "\(help) has no place in \(reader.name); run 'tape \(words.prefix(2).joined(separator: " ")) --help' to read the help"
        ))
    }
    if let message = RawArguments.dashedValue(in: words, shownAs: []) {
      throw BatchLineError(line: line, underlying: UsageError(message: message))
    }
    guard let first = words.first, Batch.editing.contains(first) else {
      let shown = words.first ?? ""
      throw BatchLineError(
        line: line,
        underlying: UsageError(
          message:
            "'\(shown)' is not an editing command; \(reader.name) takes \(Batch.editing.joined(separator: ", "))"
        ))
    }
    // The quick table first: a walk of the command tree by words costs a line more than the
    // rest of its reading (``BatchWords``).
    let (command, path) =
      (words.count >= 2 ? Tape.quickCommands[Array(words.prefix(2))].map { ($0, 2) } : nil)
      ?? Tape.quickCommands[[first]].map { ($0, 1) } ?? Tape.subcommand(named: words)
    guard command.configuration.subcommands.isEmpty else {
      let names = command.configuration.subcommands.map { $0._commandName }
      let given =
        path < words.count
        ? "'\(words.prefix(path + 1).joined(separator: " "))' is not a command"
        : "'\(words.prefix(path).joined(separator: " "))' needs a subcommand"
      throw BatchLineError(
        line: line,
        underlying: UsageError(
          message: "\(given); \(words[0]) takes \(names.joined(separator: ", "))"))
    }
    return (command, path)
  }

  /// The words, whose first `path` name the command (``command(named:line:reader:)``), as
  /// `tape WORDS` with the project inserted after the command's name.
  static func parse(
    _ words: [String], path: Int, file: String, line: Int, reader: Reader
  ) throws -> any EditingCommand {
    if let command = BatchWords.parse(words, path: path, file: file) { return command }
    guard BatchWords.mode != .own else {
      throw BatchLineError(
        line: line,
        underlying: UsageError(
          message: "the batch's own parser does not take this line (TAPE_BATCH_PARSER=own)"))
    }
    var arguments = words
    arguments.insert(file, at: path)
    let parsed: any ParsableCommand
    do {
      parsed = try Tape.quickParse(arguments) ?? Tape.parseAsRoot(arguments)
    } catch {
      let message = Tape.message(for: error).split(separator: "\n").first.map(String.init) ?? ""
      throw BatchLineError(
        line: line,
        underlying: UsageError(
          message:
            "\(Tape.oneLine(message.isEmpty ? "'\(words.joined(separator: " "))' is not a complete command" : message)); see: tape \(words.prefix(path).joined(separator: " ")) --help"
        ))
    }
    guard let editing = parsed as? any EditingCommand else {
      throw BatchLineError(
        line: line,
        underlying: UsageError(
          message:
            "'\(words.prefix(max(path, 1)).joined(separator: " "))' is not an editing command; \(reader.name) takes \(Batch.editing.joined(separator: ", "))"
        ))
    }
    return editing
  }
}

/// Reading a batch script: lines of shell-like words.
enum BatchScript {
  /// The script's non-empty lines, numbered from 1, split into words. `nil` or `-` reads
  /// standard input.
  static func lines(of file: RawPath?) throws -> [(Int, [String])] {
    var bytes: [UInt8]
    if let file, file != "-" {
      guard let identity = file.withCString({ FileIdentity(cPath: $0) }) else {
        throw MissingInput(message: "the script \(file) does not exist")
      }
      // A file, or a pipe (`tape batch song.tape <(generate-edits)`).
      guard identity.isRegularFile || identity.isFIFO else {
        throw UsageError(message: "the script \(file) is not a file or a pipe")
      }
      bytes = try read(file.withCString { open($0, O_RDONLY | O_CLOEXEC) }, name: "\(file)")
    } else {
      guard isatty(STDIN_FILENO) == 0 else {
        throw UsageError(
          message: "no script: name a file, or pipe the edits in (tape batch FILE - < edits.txt)")
      }
      bytes = try read(STDIN_FILENO, name: "standard input")
    }
    // A UTF-8 byte-order mark, as some editors write one.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
    var result: [(Int, [String])] = []
    for (index, line) in bytes.split(
      separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false
    )
    .enumerated() {
      var line = Array(line)
      if line.last == UInt8(ascii: "\r") { line.removeLast() }
      do {
        let words = try split(line)
        if !words.isEmpty { result.append((index + 1, words)) }
      } catch {
        throw BatchLineError(line: index + 1, underlying: error)
      }
    }
    return result
  }

  private static func read(_ descriptor: Int32, name: String) throws -> [UInt8] {
    guard descriptor >= 0 else {
      throw PermissionError(
        message: "cannot read the script \(name): \(String(cString: strerror(errno)))")
    }
    defer { if descriptor != STDIN_FILENO { close(descriptor) } }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else {
        throw DataError(message: "cannot read \(name): \(String(cString: strerror(errno)))")
      }
      if count == 0 { return bytes }
      bytes += buffer[..<count]
      guard bytes.count <= 64 << 20 else {
        throw UsageError(message: "\(name) is over 64 MB; a batch script is text, one edit a line")
      }
    }
  }

  /// One line's words, as a shell splits them: blanks separate, `'…'` quotes literally,
  /// `"…"` quotes with `\"` and `\\` escaped, `\` escapes one character, `#` at a word's start
  /// begins a comment. A word whose bytes are not UTF-8 stands for them (``RawArguments``).
  static func split(_ line: [UInt8]) throws -> [String] {
    var words: [[UInt8]] = []
    // The word being read, appended to in place (a word is linear to read, however long), and
    // whether one has begun (`''` is a word, empty).
    var word: [UInt8] = []
    var inWord = false
    var index = 0
    func byte(_ character: Unicode.Scalar) -> UInt8 { UInt8(ascii: character) }
    while index < line.count {
      let c = line[index]
      switch c {
      case byte(" "), byte("\t"):
        if inWord { words.append(word) }
        word.removeAll(keepingCapacity: true)
        inWord = false
      case byte("#") where !inWord:
        index = line.count
        continue
      case byte("'"):
        guard let close = line[(index + 1)...].firstIndex(of: byte("'")) else {
          throw UsageError(message: "a ' quote is not closed")
        }
        word += line[(index + 1)..<close]
        inWord = true
        index = close
      case byte("\""):
        index += 1
        while index < line.count, line[index] != byte("\"") {
          if line[index] == byte("\\"), index + 1 < line.count,
            [byte("\""), byte("\\"), byte("$"), byte("`")].contains(line[index + 1])
          {
            index += 1
          }
          word.append(line[index])
          index += 1
        }
        guard index < line.count else { throw UsageError(message: "a \" quote is not closed") }
        inWord = true
      case byte("\\"):
        guard index + 1 < line.count else {
          throw UsageError(message: "a \\ ends the line; a batch command is one line")
        }
        word.append(line[index + 1])
        inWord = true
        index += 1
      default:
        word.append(c)
        inWord = true
      }
      index += 1
    }
    if inWord { words.append(word) }
    return words.map(RawArguments.argument)
  }
}
