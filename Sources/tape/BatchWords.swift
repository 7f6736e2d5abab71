import ArgumentParser
import Foundation

/// The batch language's own parser for its common lines (`clip add t1 s1 --at 2s`): the same
/// words as the command line, read into the same command values, without swift-argument-parser.
///
/// Why, measured: swift-argument-parser builds a command's whole argument table by reflection
/// for every parse, and a batch parses a line of each edit: 80 % of what a batch of 10,000
/// `clip add` lines cost after the other fixes of issue 47 (2.6 s of CPU) went to it. Here a
/// line is one pass over its words against a table made once (``specs``); Benchmarks/batch-cost.py
/// measures a batch beside the one-clip edits it replaces.
///
/// Rule: a line this parser does not take whole goes to swift-argument-parser, which parses it
/// or says what is wrong with it: a command not in ``specs`` (envelopes, effects, imports…), an
/// option or word it does not know, a flag given twice, an option without its value, a value that
/// starts with `-` for an option that does not take one, a word that starts with `-` where no
/// option takes it, `--`, `--option=value`, `-m`, too few or too many arguments, a missing
/// option the command needs, a check of the command's own (`validate()`) that fails. What it
/// takes, it takes as swift-argument-parser would: debug builds (the ones the tests run) parse
/// every such line with swift-argument-parser too and stop with an internal error when the two
/// commands differ in any stored value (``checked(_:_:)``).
///
/// What if you don't: a line the two read differently does something else in a batch than on
/// the command line. A mistake that only the fast path accepts is an edit no one asked for; an
/// error text of its own would drift from the command line's. So this parser writes no error:
/// every message a line's words can earn is swift-argument-parser's (as on the command line),
/// or the command's own, from the same `edit` the command line runs (a bad time, gain or id).
/// `TAPE_BATCH_PARSER=argument-parser` sends every line to swift-argument-parser, and
/// `TAPE_BATCH_PARSER=own` refuses a line this parser does not take (BatchWordsTests and
/// Benchmarks/batch-cost.py compare them).
enum BatchWords {
  /// The words of a line after its command's name, sorted by kind.
  struct Words {
    var arguments: [String] = []
    var values: [String: String] = [:]
    var flags: Set<String> = []

    /// The value of the option `name` (`--at`), if given.
    subscript(_ name: String) -> String? { values[name] }

    /// Whether the flag `name` (`--ripple`) is given.
    func has(_ name: String) -> Bool { flags.contains(name) }
  }

  /// What a command takes, and how its words make the command.
  struct Spec: Sendable {
    /// How many arguments (words that are not options) it takes: exactly these.
    let arguments: Int
    /// The options that take a value, by each name (`--track` and `--tracks` both name
    /// `--tracks`): the name they are read as, and whether the value may start with `-`
    /// (`parsing: .unconditional`: `--gain -3`).
    let values: [String: (key: String, dashed: Bool)]
    /// The options that take no value (`--ripple`, `--json`).
    let flags: Set<String>
    /// The command, every stored value set; nil when a value it needs is missing. Throws what
    /// `validate()` throws.
    let make: @Sendable (Words, _ file: String) throws -> (any EditingCommand)?

    init(
      arguments: Int = 0, values: [String] = [], dashed: [String] = [], flags: [String] = [],
      aliases: [String: String] = [:],
      make: @escaping @Sendable (Words, String) throws -> (any EditingCommand)?
    ) {
      self.arguments = arguments
      var table: [String: (key: String, dashed: Bool)] = [:]
      for name in values { table[name] = (name, false) }
      for name in dashed { table[name] = (name, true) }
      for (alias, name) in aliases { table[alias] = table[name] }
      self.values = table
      self.flags = Set(flags + ["--json"])
      self.make = make
    }
  }

  /// Who parses a line: this parser, else swift-argument-parser (the default); only
  /// swift-argument-parser (`TAPE_BATCH_PARSER=argument-parser`); only this parser, a line it
  /// does not take refused (`own`, for tests).
  enum Mode {
    case both, argumentParser, own
  }

  static let mode: Mode =
    switch environmentVariable("TAPE_BATCH_PARSER") {
    case "argument-parser": .argumentParser
    case "own": .own
    default: .both
    }

  /// The command `words` make, whose first `path` name it (``BatchLine/command(named:line:reader:)``),
  /// for the project `file`; nil when this parser does not take the line whole (see the rule
  /// above): swift-argument-parser then parses it.
  static func parse(_ words: [String], path: Int, file: String) -> (any EditingCommand)? {
    guard mode != .argumentParser, let spec = specs[Array(words.prefix(path))],
      let sorted = sort(words.dropFirst(path), spec)
    else { return nil }
    let command: (any EditingCommand)?
    do {
      command = try spec.make(sorted, file)
    } catch {
      return nil
    }
    #if DEBUG
      if let command { checked(command, words.prefix(path) + [file] + words.dropFirst(path)) }
    #endif
    return command
  }

  /// The words after the command's name sorted into arguments, option values and flags as
  /// `spec` takes them; nil for anything it does not take.
  static func sort(_ words: ArraySlice<String>, _ spec: Spec) -> Words? {
    var sorted = Words()
    var index = words.startIndex
    while index < words.endIndex {
      let word = words[index]
      index += 1
      guard word.hasPrefix("-") else {
        guard sorted.arguments.count < spec.arguments else { return nil }
        sorted.arguments.append(word)
        continue
      }
      if let option = spec.values[word] {
        // Given twice, the last is taken, as swift-argument-parser takes it.
        guard index < words.endIndex else { return nil }
        let value = words[index]
        index += 1
        if !option.dashed && value.hasPrefix("-") { return nil }
        sorted.values[option.key] = value
      } else if spec.flags.contains(word), !sorted.flags.contains(word) {
        sorted.flags.insert(word)
      } else {
        return nil
      }
    }
    guard sorted.arguments.count == spec.arguments else { return nil }
    return sorted
  }

  #if DEBUG
    /// Stops with an internal error unless swift-argument-parser parses `arguments` (`clip add
    /// FILE t1 …`) to a command equal, value for value, to `command`.
    static func checked(_ command: any EditingCommand, _ arguments: [String]) {
      var fast = ""
      var slow = ""
      dump(command, to: &fast)
      if let parsed = try? Tape.quickParse(arguments) ?? Tape.parseAsRoot(arguments) {
        dump(parsed, to: &slow)
      }
      guard fast != slow else { return }
      printError(
        "internal error: the batch parser reads '\(arguments.joined(separator: " "))' otherwise than the command line:\n\(fast)\nwhere it parses to\n\(slow)"
      )
      Foundation.exit(Exit.software)
    }
  #endif

  // MARK: The commands

  /// The project argument, checked as the parser checks it.
  static func project(_ file: String) throws -> ProjectArgument {
    var project = ProjectArgument()
    project.file = file
    try project.validate()
    return project
  }

  /// `--json` (a line's `-m` goes to swift-argument-parser, and is refused).
  static func editOptions(_ words: Words) throws -> EditOptions {
    var options = EditOptions()
    options.message = nil
    options.json = words.has("--json")
    try options.validate()
    return options
  }

  static func snapping(_ words: Words) -> SnapOption {
    var snapping = SnapOption()
    snapping.snap = words["--snap"]
    return snapping
  }

  static func choice(_ words: Words) throws -> TrackChoice {
    var choice = TrackChoice()
    choice.tracks = words["--tracks"]
    choice.all = words.has("--all")
    try choice.validate()
    return choice
  }

  /// The commands this parser takes, by the words that name them; every other goes to
  /// swift-argument-parser. Each sets every stored value of its command, with the defaults
  /// its declaration gives.
  static let specs: [[String]: Spec] = {
    var specs: [[String]: Spec] = [:]
    specs[["clip", "add"]] = Spec(
      arguments: 2, values: ["--curve", "--name"],
      dashed: ["--at", "--from", "--length", "--to", "--gain", "--fade-in", "--fade-out"]
    ) { words, file in
      guard let at = words["--at"] else { return nil }
      var command = ClipCommand.Add()
      command.project = try project(file)
      command.track = words.arguments[0]
      command.source = words.arguments[1]
      command.at = at
      command.from = words["--from"]
      command.length = words["--length"]
      command.to = words["--to"]
      command.gain = words["--gain"]
      command.fadeIn = words["--fade-in"]
      command.fadeOut = words["--fade-out"]
      command.curve = words["--curve"] ?? "linear"
      command.name = words["--name"]
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["clip", "split"]] = Spec(arguments: 1, values: ["--snap"], dashed: ["--at"]) {
      words, file in
      guard let at = words["--at"] else { return nil }
      var command = ClipCommand.Split()
      command.project = try project(file)
      command.clip = words.arguments[0]
      command.at = at
      command.snapping = snapping(words)
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["clip", "copy"]] = Spec(
      arguments: 1, values: ["--track", "--snap"], dashed: ["--to"], flags: ["--overwrite"]
    ) { words, file in
      guard let to = words["--to"] else { return nil }
      var command = ClipCommand.Copy()
      command.project = try project(file)
      command.clip = words.arguments[0]
      command.to = to
      command.track = words["--track"]
      command.overwrite = words.has("--overwrite")
      command.snapping = snapping(words)
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    let move = Spec(
      arguments: 1, values: ["--track", "--snap"], dashed: ["--to"], flags: ["--overwrite"]
    ) { words, file in
      var command = ClipCommand.Move()
      command.project = try project(file)
      command.clip = words.arguments[0]
      command.to = words["--to"]
      command.track = words["--track"]
      command.overwrite = words.has("--overwrite")
      command.snapping = snapping(words)
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["clip", "move"]] = move
    specs[["clip", "mv"]] = move
    specs[["clip", "trim"]] = Spec(arguments: 1, values: ["--snap"], dashed: ["--start", "--end"]) {
      words, file in
      var command = ClipCommand.Trim()
      command.project = try project(file)
      command.clip = words.arguments[0]
      command.start = words["--start"]
      command.end = words["--end"]
      command.snapping = snapping(words)
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["clip", "slip"]] = Spec(arguments: 1, dashed: ["--by"]) { words, file in
      guard let by = words["--by"] else { return nil }
      var command = ClipCommand.Slip()
      command.project = try project(file)
      command.clip = words.arguments[0]
      command.by = by
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["clip", "set"]] = Spec(
      arguments: 1, values: ["--fade-in-curve", "--fade-out-curve", "--name"],
      dashed: ["--gain", "--fade-in", "--fade-out"], flags: ["--no-name"]
    ) { words, file in
      var command = ClipCommand.Set()
      command.project = try project(file)
      command.clip = words.arguments[0]
      command.gain = words["--gain"]
      command.fadeIn = words["--fade-in"]
      command.fadeOut = words["--fade-out"]
      command.fadeInCurve = words["--fade-in-curve"]
      command.fadeOutCurve = words["--fade-out-curve"]
      command.name = words["--name"]
      command.noName = words.has("--no-name")
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["clip", "crossfade"]] = Spec(arguments: 2, values: ["--curve"], dashed: ["--length"]) {
      words, file in
      var command = ClipCommand.Crossfade()
      command.project = try project(file)
      command.left = words.arguments[0]
      command.right = words.arguments[1]
      command.length = words["--length"]
      command.curve = words["--curve"] ?? "equal-power"
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    let removeClip = Spec(arguments: 1, flags: ["--ripple"]) { words, file in
      var command = ClipCommand.Remove()
      command.project = try project(file)
      command.clip = words.arguments[0]
      command.ripple = words.has("--ripple")
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["clip", "rm"]] = removeClip
    specs[["clip", "remove"]] = removeClip
    specs[["track", "add"]] = Spec(arguments: 1, dashed: ["--gain", "--pan"]) { words, file in
      var command = TrackCommand.Add()
      command.project = try project(file)
      command.name = words.arguments[0]
      command.gain = words["--gain"]
      command.pan = words["--pan"]
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["track", "set"]] = Spec(
      arguments: 1, values: ["--name", "--output"], dashed: ["--gain", "--pan"],
      flags: ["--mute", "--unmute", "--solo", "--unsolo"]
    ) { words, file in
      // Both of a pair: swift-argument-parser says they exclude each other.
      guard !(words.has("--mute") && words.has("--unmute")),
        !(words.has("--solo") && words.has("--unsolo"))
      else { return nil }
      var command = TrackCommand.Set()
      command.project = try project(file)
      command.track = words.arguments[0]
      command.name = words["--name"]
      command.gain = words["--gain"]
      command.pan = words["--pan"]
      command.mute = words.has("--mute") ? .mute : words.has("--unmute") ? .unmute : nil
      command.solo = words.has("--solo") ? .solo : words.has("--unsolo") ? .unsolo : nil
      command.output = words["--output"]
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["track", "move"]] = Spec(arguments: 1, dashed: ["--to"]) { words, file in
      // An integer as swift-argument-parser reads one (`Int(String)`); anything else is its
      // error to give.
      guard let to = words["--to"].flatMap({ Int($0) }) else { return nil }
      var command = TrackCommand.Move()
      command.project = try project(file)
      command.track = words.arguments[0]
      command.to = to
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["track", "duplicate"]] = Spec(arguments: 1, values: ["--name"]) { words, file in
      var command = TrackCommand.Duplicate()
      command.project = try project(file)
      command.track = words.arguments[0]
      command.name = words["--name"]
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    let removeTrack = Spec(arguments: 1) { words, file in
      var command = TrackCommand.Remove()
      command.project = try project(file)
      command.track = words.arguments[0]
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["track", "rm"]] = removeTrack
    specs[["track", "remove"]] = removeTrack
    specs[["marker", "move"]] = Spec(arguments: 1, dashed: ["--to"]) { words, file in
      guard let to = words["--to"] else { return nil }
      var command = MarkerCommand.Move()
      command.project = try project(file)
      command.marker = words.arguments[0]
      command.to = to
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["marker", "rename"]] = Spec(arguments: 2) { words, file in
      var command = MarkerCommand.Rename()
      command.project = try project(file)
      command.marker = words.arguments[0]
      command.name = words.arguments[1]
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    let tracks = ["--track": "--tracks"]
    specs[["cut"]] = Spec(
      values: ["--tracks", "--crossfade-curve", "--snap"],
      dashed: ["--from", "--to", "--crossfade"],
      flags: ["--all", "--ripple"], aliases: tracks
    ) { words, file in
      guard let from = words["--from"], let to = words["--to"] else { return nil }
      var command = Cut()
      command.project = try project(file)
      command.from = from
      command.to = to
      command.choice = try choice(words)
      command.ripple = words.has("--ripple")
      command.crossfade = words["--crossfade"]
      command.crossfadeCurve = words["--crossfade-curve"] ?? "equal-power"
      command.snapping = snapping(words)
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["insert"]] = Spec(
      values: ["--tracks", "--snap"], dashed: ["--at", "--length"], flags: ["--all"],
      aliases: tracks
    ) { words, file in
      guard let at = words["--at"], let length = words["--length"] else { return nil }
      var command = Insert()
      command.project = try project(file)
      command.at = at
      command.length = length
      command.choice = try choice(words)
      command.snapping = snapping(words)
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["split"]] = Spec(
      values: ["--tracks", "--snap"], dashed: ["--at"], flags: ["--all"], aliases: tracks
    ) { words, file in
      guard let at = words["--at"] else { return nil }
      var command = SplitAll()
      command.project = try project(file)
      command.at = at
      command.choice = try choice(words)
      command.snapping = snapping(words)
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    specs[["master"]] = Spec(dashed: ["--gain"]) { words, file in
      guard let gain = words["--gain"] else { return nil }
      var command = Master()
      command.project = try project(file)
      command.gain = gain
      command.options = try editOptions(words)
      try command.validate()
      return command
    }
    return specs
  }()
}
