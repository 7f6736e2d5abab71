import ArgumentParser
import Foundation
import Logging
import SafeFiles
import Timeline

/// The `tape` command: argument parsing and wiring only; the work lives in the libraries.
@main
struct Tape: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "tape",
    abstract: "Cut, mix, undo and render multitrack audio projects from the command line.",
    discussion: """
      A project is one SQLite file (song.tape) holding the timeline, its sources and its whole \
      undo history. Times are written 1.5, 1.5s, 250ms, 1:02.5, 01:02:03.250 or 96000f; gains \
      as -3, -3dB or +2.5dB. Ids are short and stable: s1 (source), t1 (track), c1 (clip), m1 (marker); \
      a time can name a marker: @chorus, @chorus+2s. \
      'tape --version' (or -V) prints the version; -v (--verbose), anywhere on the line, \
      also prints on stderr what a command does (files read, cache hits, commits and their \
      times; as TAPE_LOG=debug). A mistyped command is answered with the nearest names.
      """,
    groupedSubcommands: [
      CommandGroup(
        name: "Project",
        subcommands: [New.self, Import.self, Relink.self, List.self, Backup.self, Verify.self]),
      CommandGroup(name: "Tracks", subcommands: [TrackCommand.self, SendCommand.self]),
      CommandGroup(name: "Clips", subcommands: [ClipCommand.self]),
      CommandGroup(
        name: "Time ranges and the mix",
        subcommands: [
          Cut.self, Insert.self, SplitAll.self, Copy.self, Paste.self, Silences.self,
          Master.self, MarkerCommand.self,
        ]),
      CommandGroup(name: "Effects", subcommands: [Fx.self]),
      CommandGroup(name: "Scripts", subcommands: [Batch.self, Shell.self]),
      CommandGroup(
        name: "History",
        subcommands: [
          Undo.self, Redo.self, Checkout.self, HistoryGroup.self, Diff.self, Compare.self,
          Log.self, Watch.self, View.self, Scrub.self, Tag.self, CacheCommand.self,
        ]),
      CommandGroup(
        name: "Render, play, record and draw",
        subcommands: [Render.self, Play.self, Record.self, TakeCommand.self, Draw.self]),
      CommandGroup(name: "Other editors", subcommands: [Export.self, ImportOTIO.self]),
      CommandGroup(name: "Getting started", subcommands: [Demo.self]),
    ]
  )

  static let version = "0.1.0"

  /// Runs the command line. A reader of stdout that goes away (`tape ls | head -1`) is a write
  /// error Tape reports, not a silent death by SIGPIPE.
  static func main() {
    // Started with standard input, output or error closed (`tape … >&-`), the process would
    // hand the first files it opens those numbers, and what it prints would be written into
    // them (a project, a render). Each is taken by /dev/null opened the other way, so using it
    // fails as using a closed one does (EBADF: a lost output is still an error), as SQLite
    // does for its own files.
    for descriptor in STDIN_FILENO...STDERR_FILENO where fcntl(descriptor, F_GETFD) == -1 {
      _ = open("/dev/null", descriptor == STDIN_FILENO ? O_WRONLY : O_RDONLY)
    }
    signal(SIGPIPE, SIG_IGN)
    #if DEBUG
      // The tests' check of the quick-command table against the command tree, every entry at
      // once (QuickCommandTests): exit 70 with an internal error at the first wrong one.
      if ProcessInfo.processInfo.environment["TAPE_CHECK_QUICK_COMMANDS"] != nil {
        for words in quickCommands.keys { _ = quickParse(words) }
        Foundation.exit(0)
      }
    #endif
    StandardOutput.divert()
    // Ctrl-\ quits at once, as it does any program: the Swift runtime would take it for a
    // crash, print a backtrace and wait for a key.
    signal(SIGQUIT, SIG_DFL)
    var quit = sigset_t()
    sigemptyset(&quit)
    sigaddset(&quit, SIGQUIT)
    pthread_sigmask(SIG_UNBLOCK, &quit, nil)
    // Diagnostics on stderr, never stdout (scripts read stdout): TAPE_LOG=debug (or `tape -v
    // COMMAND …`) shows what the store does and when (commits carry CLOCK_MONOTONIC stamps),
    // which audio files are read and whether the decoded cache had them; the default shows
    // warnings.
    var arguments = RawArguments.load()
    // -v anywhere before a `--` (which ends the options: a value that is `-v` goes after it).
    let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
    let verbose = arguments[..<end].contains { $0 == "-v" || $0 == "--verbose" }
    if verbose {
      arguments =
        arguments[..<end].filter { $0 != "-v" && $0 != "--verbose" }
        + arguments[end...]
    }
    let named = environmentVariable("TAPE_LOG").flatMap {
      $0.isEmpty ? nil : $0
    }
    let chosen = named.flatMap { Logger.Level(rawValue: $0) }
    if let named, chosen == nil {
      // A typo (TAPE_LOG=degub) was ignored silently.
      let levels = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
      printError("TAPE_LOG=\(named) is not a log level; use one of \(levels), or unset it")
      Foundation.exit(Exit.usage)
    }
    let level = verbose ? .debug : chosen ?? .warning
    LoggingSystem.bootstrap { label in
      var handler = StreamLogHandler.standardError(label: label)
      handler.logLevel = level
      return handler
    }
    do {
      // `tape --version`, by hand. Why not `CommandConfiguration(version:)` or a flag of the
      // root: either gives every subcommand a `--version` flag, and `ls`, `render` and `play`
      // have a `--version V` option of their own (their help listed two; a root flag even took
      // `--version 4` from them).
      if arguments == ["--version"] || arguments == ["-V"] {
        try reportingErrors(readerMayStop: true) { print(version) }
        return
      }
      // `tape rendr …`, `tape help rendr`: the nearest command's name, not the usage block.
      if let unknown = unknownCommand(arguments) {
        printError(unknown)
        throw ExitCode(Exit.usage)
      }
      try refuseNegativeVersion(arguments)
      if let message = RawArguments.dashedValue(in: arguments, shownAs: ["tape"]) {
        printError(message)
        throw ExitCode(Exit.usage)
      }
      // `tape --help`, rendered once: the parser's path builds the whole command tree, then
      // renders the help twice (for the exit code, then for the text), 2 of its 5 ms.
      // `tape help` takes that path; HelpTests checks that both print the same.
      if arguments == ["--help"] || arguments == ["-h"] { printHelpAndExit(helpMessage()) }
      var command = try quickParse(arguments) ?? parseAsRoot(arguments)
      try command.run()
      StoresClosedAtExit.closeAll()
      // Stopped by a signal meanwhile: the process ends by it, not by a success.
      Termination.awaitEndIfStopping()
    } catch {
      Termination.awaitEndIfStopping()
      StoresClosedAtExit.closeAll()
      if exitCode(for: error) == .success {
        printHelpAndExit(fullMessage(for: error) + defaultsHelp(arguments))
      }
      // Our own failures were printed where they happened.
      if error is ExitCode { exit(withError: error) }
      // The argument parser's: one line and where to look, never the usage block.
      let message = Self.message(for: error).split(separator: "\n").first.map(String.init) ?? ""
      printError("\(oneLine(message)); see: \(commandPath()) --help")
      Foundation.exit(Exit.usage)
    }
  }

  /// Prints `help` (or a completion script) and exits 0: printed here, so that output that
  /// cannot be written is an error; a reader that goes away (`tape --help | head -3`) is none,
  /// as for any listing. A command's help ends with the exit codes.
  static func printHelpAndExit(_ help: String) -> Never {
    let isHelp = help.hasPrefix("OVERVIEW:") || help.hasPrefix("USAGE:")
    print(isHelp ? ExampleLines.unwrapped(help, width: helpWidth()) + exitCodes : help)
    do {
      try StandardOutput.flush()
    } catch let failure as OutputFailure {
      if failure.code == EPIPE { Foundation.exit(0) }
      printError(failure.message)
      Foundation.exit(Exit.ioError)
    } catch {}
    Foundation.exit(0)
  }

  /// For the help of a group that has a default subcommand (`tape history`, `tape copy`,
  /// `tape tag`), that default's usage and options, which the group's help leaves out: `tape
  /// history --help` did not list `--limit` and `--all`. Empty otherwise.
  static func defaultsHelp(_ arguments: [String]) -> String {
    let words = arguments.first == "help" ? Array(arguments.dropFirst()) : arguments
    let (command, length) = subcommand(named: words.filter { $0 != "--help" && $0 != "-h" })
    guard let fallback = command.configuration.defaultSubcommand,
      length == words.filter({ $0 != "--help" && $0 != "-h" }).count
    else { return "" }
    let help = helpMessage(for: fallback, columns: helpWidth())
    guard let usage = help.range(of: "USAGE:") else { return "" }
    let path = (["tape"] + words.prefix(length) + [fallback._commandName]).joined(separator: " ")
    return "\n\nWHAT '\(path)' (THE DEFAULT) TAKES:\n\n" + help[usage.lowerBound...]
  }

  /// The width the parser wraps help to: `COLUMNS`, else the terminal's, else 80.
  static func helpWidth() -> Int {
    if let columns = environmentVariable("COLUMNS").flatMap({ Int($0) }), columns > 0 {
      return columns
    }
    var size = winsize()
    guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
    return Int(size.ws_col)
  }

  /// What ends every command's help.
  static let exitCodes = """

    EXIT CODES:
      0     success
      64    a word, an option or a value the command does not take
      65    an edit the project refuses, or data that is not what it should be
      66    a missing project, source or file
      70    an internal error (please report it)
      74    reading or writing failed (a full disk, a device that went away)
      75    busy: another process held the project's write lock too long
      77    permission denied: the project may not be edited by you
      130   stopped by Ctrl-C (another signal ends it by that signal)
    """

  /// The line for a command the words do not name (`tape rendr`, `tape clip mvoe`, `tape help
  /// rendr`), with the nearest names of that level; nil when they name one (or start with an
  /// option: the parser says what is wrong then).
  static func unknownCommand(_ arguments: [String]) -> String? {
    let asked = arguments.first == "help" ? Array(arguments.dropFirst()) : arguments
    let (command, length) = subcommand(named: asked)
    let subcommands = command.configuration.subcommands.filter {
      $0.configuration.shouldDisplay && $0._commandName != "help"
    }
    // A group with a default (`history` is `history show`) takes the word as the default's.
    guard !subcommands.isEmpty, command.configuration.defaultSubcommand == nil,
      length < asked.count, !asked[length].hasPrefix("-")
    else {
      return nil
    }
    let word = asked[length]
    let path = (["tape"] + asked.prefix(length)).joined(separator: " ")
    let names = subcommands.flatMap { [$0._commandName] + $0.configuration.aliases }
    let near = names.map { ($0, NameSuggestion.editDistance($0, word)) }
      .filter { $0.1 <= max(1, min(2, word.count / 3)) || $0.0.hasPrefix(word) }
      .sorted { $0.1 < $1.1 }.prefix(3).map { "'\(path) \($0.0)'" }
    let suggestion = near.isEmpty ? "" : "; did you mean \(near.joined(separator: " or "))?"
    return
      "'\(ProjectWords.escaped(word))' is not a command of \(path)\(suggestion) ('\(path) --help' lists them)"
  }

  /// The commands a script runs most, by the words that name them: parsed on their own, without
  /// the whole command tree. Why: `parseAsRoot` builds every subcommand's parser, and the
  /// dynamic casts that takes scan the binary's protocol conformances, about 3 ms of a 13 ms
  /// edit (Benchmarks/edit-latency.py). A test checks this table against the tree
  /// (QuickCommandTests, with the debug build).
  static let quickCommands: [[String]: any ParsableCommand.Type] = [
    ["clip", "add"]: ClipCommand.Add.self, ["clip", "split"]: ClipCommand.Split.self,
    ["clip", "copy"]: ClipCommand.Copy.self, ["clip", "move"]: ClipCommand.Move.self,
    ["clip", "trim"]: ClipCommand.Trim.self, ["clip", "set"]: ClipCommand.Set.self,
    ["clip", "crossfade"]: ClipCommand.Crossfade.self, ["clip", "slip"]: ClipCommand.Slip.self,
    ["clip", "ls"]: ClipCommand.ListClips.self, ["split"]: SplitAll.self,
    ["clip", "mv"]: ClipCommand.Move.self,
    ["clip", "rm"]: ClipCommand.Remove.self,
    ["clip", "remove"]: ClipCommand.Remove.self,
    ["track", "add"]: TrackCommand.Add.self, ["track", "set"]: TrackCommand.Set.self,
    ["track", "envelope"]: TrackCommand.EnvelopeCommand.self,
    ["track", "move"]: TrackCommand.Move.self, ["track", "duplicate"]: TrackCommand.Duplicate.self,
    ["track", "rm"]: TrackCommand.Remove.self, ["track", "remove"]: TrackCommand.Remove.self,
    ["cut"]: Cut.self, ["insert"]: Insert.self, ["master"]: Master.self,
    ["paste"]: Paste.self,
    ["undo"]: Undo.self, ["redo"]: Redo.self, ["ls"]: List.self, ["log"]: Log.self,
    ["fx", "add"]: Fx.Add.self, ["fx", "set"]: Fx.Set.self, ["fx", "bypass"]: Fx.Bypass.self,
    ["fx", "move"]: Fx.Move.self, ["fx", "rm"]: Fx.Remove.self, ["fx", "remove"]: Fx.Remove.self,
    ["fx", "envelope"]: Fx.FxEnvelope.self,
    ["marker", "add"]: MarkerCommand.Add.self, ["marker", "move"]: MarkerCommand.Move.self,
    ["marker", "rename"]: MarkerCommand.Rename.self, ["marker", "rm"]: MarkerCommand.Remove.self,
    ["marker", "remove"]: MarkerCommand.Remove.self, ["marker", "ls"]: MarkerCommand.List.self,
    ["send", "add"]: SendCommand.Add.self, ["send", "set"]: SendCommand.Set.self,
    ["send", "rm"]: SendCommand.Remove.self, ["send", "remove"]: SendCommand.Remove.self,
    ["send", "ls"]: SendCommand.List.self,
  ]

  /// `arguments` parsed as one of ``quickCommands``; nil when they name none, ask for help, or
  /// do not parse (the full parse then says why, with the usage of the right command).
  static func quickParse(_ arguments: [String]) -> (any ParsableCommand)? {
    guard !arguments.contains(where: { ["-h", "--help", "help"].contains($0) }) else {
      return nil
    }
    for length in [2, 1] where arguments.count >= length {
      let words = Array(arguments.prefix(length))
      guard let type = quickCommands[words] else { continue }
      #if DEBUG
        // Debug builds check the entry against the command tree (the test command runs a
        // release build; QuickCommandTests runs this check with the debug one).
        let found = subcommand(named: words)
        if found.length != words.count || ObjectIdentifier(found.command) != ObjectIdentifier(type)
          || type.configuration._superCommandName != CommandConfiguration.parsedAloneMark
        {
          printError(
            "internal error: the quick command table is wrong for '\(words.joined(separator: " "))'"
          )
          Foundation.exit(Exit.software)
        }
      #endif
      return try? type.parse(Array(arguments.dropFirst(length)))
    }
    return nil
  }

  /// The subcommand the leading `words` name in the command tree (by name or alias), and how
  /// many of the words that took: the one walk of the tree by words (the quick table's check,
  /// the usage hint, a batch line).
  static func subcommand(
    named words: some Sequence<String>
  ) -> (command: any ParsableCommand.Type, length: Int) {
    var command: any ParsableCommand.Type = Tape.self
    var length = 0
    for word in words {
      guard
        let next = command.configuration.subcommands.first(where: {
          $0._commandName == word || $0.configuration.aliases.contains(word)
        })
      else { break }
      command = next
      length += 1
    }
    return (command, length)
  }

  /// The parser's message in our style: `Missing value for '--at <at>'` → `missing value for
  /// --at`.
  static func oneLine(_ message: String) -> String {
    var text = message.replacing(#/\ <[a-z-]+>'/#, with: "'")
    if let first = text.first { text = first.lowercased() + text.dropFirst() }
    return text.trimmingCharacters(in: .whitespaces)
  }

  /// `tape checkout FILE -1`: the parser takes `-1` for an option and said "missing expected
  /// argument"; it is a version that cannot be.
  static func refuseNegativeVersion(_ arguments: [String]) throws {
    guard arguments.first == "checkout",
      let negative = arguments.dropFirst().prefix(while: { $0 != "--" }).first(where: {
        $0.count > 1 && $0.first == "-" && $0.dropFirst().allSatisfy { "0123456789".contains($0) }
      })
    else { return }
    printError(
      "\(negative) is not a version: versions are numbered from 1 ('tape history' lists them)")
    throw ExitCode(Exit.usage)
  }

  /// The subcommand the arguments name (`clip add`), as far as they name one.
  static func commandPath() -> String {
    let words = CommandLine.arguments.dropFirst().filter { $0 != "-v" && $0 != "--verbose" }
    return (["tape"] + words.prefix(subcommand(named: words).length)).joined(separator: " ")
  }
}

extension CommandConfiguration {
  /// What ``parsedAlone()`` sets.
  static let parsedAloneMark = "tape"

  /// This configuration, for a command of ``Tape/quickCommands``: marked as having a
  /// super-command, which makes ArgumentParser skip its search for
  /// `--generate-completion-script` (two more parsers, 0.3 ms of an 8 ms edit) when the command
  /// is parsed on its own. Nothing else changes: the mark is read only for the help of the
  /// command at the root of a parse, and a quick parse shows no help (with `--help`, or when
  /// the words do not parse, the whole tree is parsed, with `tape` at its root).
  func parsedAlone() -> CommandConfiguration {
    var configuration = self
    configuration._superCommandName = Self.parsedAloneMark
    return configuration
  }
}
