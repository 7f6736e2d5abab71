import ArgumentParser
import Foundation

/// The `Example:` lines of a command's help, whole: the parser wraps a discussion at the
/// terminal's width, which cut an example in the middle of a command (`--set` on one line,
/// `gain=-3` on the next). Each example the help holds is put back together and, when it is
/// wider than the help, broken between words with a shell's ` \` so that it still runs as
/// copied (never inside quotes).
enum ExampleLines {
  /// Every example of every command, as its discussion writes it.
  static let known: Set<String> = {
    var found = Set<String>()
    func walk(_ command: any ParsableCommand.Type) {
      for line in command.configuration.discussion.split(separator: "\n") {
        let text = line.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("Example: ") { found.insert(String(text.dropFirst(9))) }
      }
      for sub in command.configuration.subcommands { walk(sub) }
    }
    walk(Tape.self)
    return found
  }()

  /// `help` with each example it holds on lines of at most `width` columns, broken as above.
  static func unwrapped(_ help: String, width: Int) -> String {
    let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var out: [String] = []
    var index = 0
    while index < lines.count {
      let line = lines[index]
      index += 1
      let indent = String(line.prefix { $0 == " " })
      let text = line.dropFirst(indent.count)
      guard text.hasPrefix("Example: ") else {
        out.append(line)
        continue
      }
      var example = String(text.dropFirst(9))
      // The parser's continuation lines, while what they make is the start of an example.
      while index < lines.count, !known.contains(example) {
        let next = example + " " + lines[index].trimmingCharacters(in: .whitespaces)
        guard known.contains(where: { $0.hasPrefix(next) }) else { break }
        example = next
        index += 1
      }
      out += wrap(indent + "Example: ", words(example), width: width)
    }
    return out.joined(separator: "\n")
  }

  /// `words` after `prefix`, on lines of at most `width` columns where they fit, each line but
  /// the last ending with ` \`, the later ones indented by four columns more.
  static func wrap(_ prefix: String, _ words: [String], width: Int) -> [String] {
    var lines: [String] = []
    var current = prefix
    var empty = true
    let indent = String(repeating: " ", count: prefix.prefix { $0 == " " }.count + 4)
    for word in words {
      if !empty && current.count + 1 + word.count + 2 > width {
        lines.append(current + " \\")
        current = indent + word
      } else {
        current += (empty ? "" : " ") + word
      }
      empty = false
    }
    return lines + [current]
  }

  /// `text` split at spaces outside quotes: a quoted argument stays one word.
  static func words(_ text: String) -> [String] {
    var words: [String] = []
    var word = ""
    var quote: Character?
    for character in text {
      if let open = quote {
        if character == open { quote = nil }
        word.append(character)
      } else if character == "'" || character == "\"" {
        quote = character
        word.append(character)
      } else if character == " " {
        if !word.isEmpty { words.append(word) }
        word = ""
      } else {
        word.append(character)
      }
    }
    if !word.isEmpty { words.append(word) }
    return words
  }
}
