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
}
