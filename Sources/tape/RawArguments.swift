import ArgumentParser
import Foundation
import Timeline

/// The command line as bytes: Linux file names need not be valid UTF-8, and
/// `CommandLine.arguments` has already replaced such bytes with U+FFFD (naming a file that does
/// not exist).
///
/// Each argument that is not valid UTF-8 reaches the parser as its readable form (`caf\xE9.wav`,
/// ``Timeline/RawPath/description``), so any message that quotes it reads right; a command
/// taking a path turns it back into its bytes with ``path(_:)``. Text arguments (a track's
/// name) refuse it with ``requireText(_:_:)``.
enum RawArguments {
  /// Readable form → the argument's bytes, for the arguments that are not UTF-8.
  nonisolated(unsafe) private(set) static var raw: [String: RawPath] = [:]

  /// The arguments after the program's name, for the parser.
  static func load() -> [String] {
    (1..<Int(CommandLine.argc)).map { index in
      guard let pointer = CommandLine.unsafeArgv[index] else { return "" }
      return argument(
        Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer)))
          .map { UInt8(bitPattern: $0) })
    }
  }

  /// An argument for the parser from its bytes (a word of the command line or of a batch
  /// script).
  static func argument(_ bytes: [UInt8]) -> String {
    let path = RawPath(bytes: bytes)
    if let text = path.string { return text }
    raw[path.description] = path
    return path.description
  }

  /// The bytes of a path argument.
  static func path(_ argument: String) -> RawPath { raw[argument] ?? RawPath(argument) }

  /// Whether `argument` stands for bytes that are not UTF-8.
  static func isRaw(_ argument: String) -> Bool { raw[argument] != nil }

  /// Refuses a path that is not UTF-8 where Tape needs text: the project (SQLite opens it, and
  /// its `-wal` and cache, by name), a render's output, the demo's folder.
  static func requireUTF8Path(_ argument: String, _ what: String) throws {
    guard isRaw(argument) else { return }
    throw ValidationError(
      "the \(what) path '\(argument)' is not valid UTF-8; Tape reads audio files by any name, but needs a UTF-8 name here: rename it"
    )
  }

  /// Refuses an argument that is not UTF-8 where text is wanted.
  static func requireText(_ argument: String, _ what: String) throws {
    guard isRaw(argument) else { return }
    throw ValidationError("\(what) '\(argument)' is not valid UTF-8; write it in UTF-8")
  }

  /// The short names of Tape's options: `-h` (help), `-o` (an output file), `-m` (a version's
  /// label). HelpTests checks it against every command's help.
  static let shortNames: Set<Character> = ["h", "o", "m"]

  /// Why `words` (a command line after `tape`, or a batch line) would not parse as meant: a
  /// word, before any `--`, that starts with one `-` and a letter but is no short option of
  /// Tape nor a bundle of them (`-dash`, `-x`); nil when there is none.
  ///
  /// Why: the parser takes `-dash` for the short options -d -a -s -h, and the -h among them
  /// printed the help and exited 0 with nothing done (a script took the help for the new
  /// track's id); `-x` gave "missing expected argument". Such a word is refused, for every
  /// command, with the fix: a value that starts with `-` goes after `--` (`tape track add
  /// song.tape -- -dash`), or joined to its option with `=` (`--name=-dash`). `-help` still
  /// asks for the help; `-3dB`, `-250ms`, `-` and `--name=-x` are not such words.
  static func dashedValue(in words: [String], shownAs prefix: [String]) -> String? {
    for (index, word) in words.enumerated() {
      if word == "--" { return nil }
      let letters = word.dropFirst()
      guard word.first == "-", let first = letters.first, first.isLetter, !word.contains("="),
        word != "-help", !letters.allSatisfy(shortNames.contains)
      else { continue }
      let (found, path) = Tape.subcommand(named: words.prefix(index))
      // The value of an option that takes one (`--gain -inf`): the parser reads it as that, and
      // says what is wrong with it (`'-inf' is not a gain`).
      if index > 0, takesValue(words[index - 1], found) { continue }
      let command = (prefix + words.prefix(path)).joined(separator: " ")
      let fixed = (prefix + words[..<index] + ["--"] + words[index...]).map(quoted)
        .joined(separator: " ")
      var message = "'\(word)' is not an option of \(command)"
      // After `-m` or `-o` (which take a value, as the long options checked above do not
      // reach here): the value may be joined to it.
      if index > 0, ["-m", "-o"].contains(words[index - 1]) {
        message +=
          "; if it is the value of \(words[index - 1]), join them with '=': \(words[index - 1])=\(quoted(word)); if it is an argument, write '--' before it (and any options before that): \(fixed)"
      } else {
        message +=
          "; if it is a value, write '--' before it (and any options before that): \(fixed)"
      }
      return message
    }
    return nil
  }

  /// Whether `option` (`--gain`) is an option of `command` that takes a value: its help shows
  /// it with a placeholder (`--gain <gain>`). Read only for a word that looks like short
  /// options, which is rare.
  static func takesValue(_ option: String, _ command: any ParsableCommand.Type) -> Bool {
    guard option.hasPrefix("--"), option.count > 2, !option.contains("=") else { return false }
    return command.helpMessage(includeHidden: true, columns: 10_000).contains("\(option) <")
  }

  /// `word` as a shell would need it written: as it is, or in single quotes.
  static func quoted(_ word: String) -> String {
    let plain = word.allSatisfy {
      $0.isASCII && ($0.isLetter || $0.isNumber || "@%+=:,./_-".contains($0))
    }
    if plain && !word.isEmpty { return word }
    return "'" + word.replacing("'", with: #"'\''"#) + "'"
  }
}
