import ArgumentParser
import Foundation
import Testing

@testable import tape

/// The documentation's examples and every `Example:` of the `--help` texts, run the way a reader
/// would run them, so that none drifts from what `tape` does; and the documentation's own
/// promises: a short README, a current command reference, no link that leaves the repository.
@Suite("The documentation and help examples run as written")
struct ReadmeTests {
  /// Every `sh` block of a page (README.md, CONTRIBUTING.md, every `.md` under docs/) whose
  /// first line does not start `# not run by the tests` (a reason may follow), in order, in a
  /// fresh folder of its own holding a copy of `TestAudio/`, with the built binary as `tape`
  /// and ALSA's `null` device as the default: each command line must exit 0 (or fail, when its
  /// comment says `fails`), and a `# prints …` comment must name exactly the ids it printed
  /// (and contain any "quoted" text it printed). `tape play` lines run for at most a second;
  /// `tape scrub` needs a terminal (ScrubTests drives it in tmux) and is skipped, saying so.
  /// The README's quick start must also draw the picture the README shows, byte for byte.
  @Test(arguments: DocPages.all)
  func thePageRunsAsWritten(_ page: String) throws {
    let readme = try Readme(text: DocPages.text(page))
    let space = try Workspace()
    let work = space.path("reader")
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: TestAudio.path(""), toPath: work + "/TestAudio")
    let environment = try Readme.environment(in: space)
    let output = space.path("out")
    try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)

    var script = "cd \(shellQuoted(work))\n"
    var ran: [Readme.Command] = []
    var skipped: [String] = []
    for block in readme.blocks where !block.notRun {
      for command in block.commands {
        if let problem = command.notATapeCommand {
          Issue.record(
            "\(page):\(command.line): \(problem); mark its block '# not run by the tests' or make it a tape command"
          )
          continue
        }
        if command.words.first == "tape" && command.words.dropFirst().first == "scrub" {
          skipped.append(
            "\(page):\(command.line) (tape scrub needs a terminal; ScrubTests drives it in tmux)")
          continue
        }
        var text = command.text
        if command.words.first == "tape" && command.words.dropFirst().first == "play" {
          text = "timeout -s INT 1 " + text
        }
        let file = "\(output)/\(command.line)"
        script +=
          "{ \(text)\n} >\(shellQuoted(file + ".out")) 2>\(shellQuoted(file + ".err")) </dev/null; echo $? >\(shellQuoted(file + ".status"))\n"
        ran.append(command)
      }
    }
    let result = try TapeBinary.run(
      URL(fileURLWithPath: "/bin/bash"), ["-c", script], environment: environment)
    #expect(result.status == 0, "\(page): \(result.stderr)")

    for command in ran {
      let file = "\(output)/\(command.line)"
      let status = Int(
        (try? String(contentsOfFile: file + ".status", encoding: .utf8))?
          .trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
      let stdout = (try? String(contentsOfFile: file + ".out", encoding: .utf8)) ?? ""
      let stderr = (try? String(contentsOfFile: file + ".err", encoding: .utf8)) ?? ""
      let said = "\(page):\(command.line): \(command.text)"
      if command.expectsFailure {
        #expect(status != 0, "\(said)\nsucceeded, but its comment says it fails")
      } else if command.words.dropFirst().first == "play" {
        // 124: timeout stopped a play that was still going after a second.
        #expect(status == 0 || status == 124, "\(said)\nexited \(status ?? -1): \(stderr)")
      } else {
        #expect(status == 0, "\(said)\nexited \(status ?? -1): \(stderr)")
      }
      if let promise = command.prints {
        let printed = stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        let ids = Readme.ids(in: promise)
        if !ids.isEmpty {
          #expect(printed == ids, "\(said)\nprinted \(printed), its comment says \(ids)")
        }
        for quoted in Readme.quoted(in: promise) {
          #expect(stdout.contains(quoted), "\(said)\nprinted \(stdout), not \"\(quoted)\"")
        }
      }
    }
    print(
      "\(page): ran \(ran.count) command lines of \(readme.blocks.filter { !$0.notRun }.count) blocks; not run: \(readme.blocks.filter(\.notRun).map { "\(page):\($0.line)" }.joined(separator: ", ")); skipped: \(skipped.joined(separator: ", "))"
    )
    if page == "README.md" {
      #expect(ran.count >= 10)
      // The picture at the top of the README is the quick start's `tape draw`.
      let drawn = FileManager.default.contents(atPath: work + "/timeline.svg")
      let shown = FileManager.default.contents(atPath: DocPages.path(DocPages.picture))
      #expect(drawn != nil, "README.md: the quick start drew no timeline.svg")
      let same = drawn == shown
      #expect(
        same,
        "\(DocPages.picture) is not what the README's quick start draws; run the quick start and copy its timeline.svg there"
      )
    }
  }

  /// The README is a newcomer's page: at most 250 lines; the rest belongs to the guide, the
  /// reference, the design and CONTRIBUTING.md.
  @Test func theReadmeIsShort() throws {
    let lines = try DocPages.text("README.md").split(
      separator: "\n", omittingEmptySubsequences: false)
    let count = lines.last == "" ? lines.count - 1 : lines.count
    #expect(count <= 250, "README.md has \(count) lines; at most 250 (move the rest to docs/)")
  }

  /// docs/reference/commands.md is what scripts/reference.py makes from the built binary's
  /// argument parser, so the command reference cannot drift from `--help`.
  @Test func theCommandReferenceIsCurrent() throws {
    let result = try TapeBinary.run(
      URL(fileURLWithPath: "/usr/bin/python3"),
      [DocPages.path("scripts/reference.py"), TapeBinary.url.path, "-"])
    try #require(result.status == 0, "scripts/reference.py failed: \(result.stderr)")
    let generated = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    let checkedIn = try DocPages.text("docs/reference/commands.md")
      .split(separator: "\n", omittingEmptySubsequences: false)
    let same = generated == checkedIn
    let first =
      zip(generated, checkedIn).enumerated().first { $0.element.0 != $0.element.1 }?.offset
      ?? min(generated.count, checkedIn.count)
    #expect(
      same,
      """
      docs/reference/commands.md is not what the parser says (from line \(first + 1): \
      "\(checkedIn.dropFirst(first).first ?? "")" where the parser gives \
      "\(generated.dropFirst(first).first ?? "")"); run \
      scripts/reference.py .build/debug/tape docs/reference/commands.md and commit it
      """)
  }

  /// Every link of every page is a relative path to a file of the checkout (and an anchor, when
  /// given, is a heading of that page); and nothing in the repository names the folder outside
  /// it that the design once lived in.
  @Test func nothingLinksOutsideTheRepository() throws {
    for page in DocPages.all {
      let text = try DocPages.text(page)
      for link in DocPages.links(in: text) {
        let said = "\(page): link (\(link))"
        guard !link.contains("://"), !link.hasPrefix("/"), !link.hasPrefix("mailto:") else {
          Issue.record("\(said) leaves the repository")
          continue
        }
        let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let resolved =
          parts[0].isEmpty
          ? DocPages.path(page)
          : DocPages.root.appendingPathComponent(page).deletingLastPathComponent()
            .appendingPathComponent(String(parts[0])).standardizedFileURL.path
        guard resolved.hasPrefix(DocPages.root.path + "/"),
          FileManager.default.fileExists(atPath: resolved)
        else {
          Issue.record("\(said) is not a file of the repository")
          continue
        }
        if parts.count == 2, resolved.hasSuffix(".md") {
          let anchors = DocPages.anchors(in: try String(contentsOfFile: resolved, encoding: .utf8))
          let found = anchors.contains(String(parts[1]))
          #expect(found, "\(said): no such heading there")
        }
      }
    }
    // The design was once a page beside the repository; nothing may point there.
    let outside = "../" + "shared/"
    let places = ["Package.swift", "Sources", "Tests", "scripts", "Benchmarks", ".ci"]
    for place in places {
      for file in DocPages.files(under: place) {
        guard let text = try? String(contentsOfFile: DocPages.path(file), encoding: .utf8) else {
          continue
        }
        #expect(!text.contains(outside), "\(file) names \(outside), outside the repository")
      }
    }
    for page in DocPages.all {
      #expect(!(try DocPages.text(page)).contains(outside), "\(page) names \(outside)")
    }
  }

  /// Every `Example:` line of every command's help: it parses (ArgumentParser, as `tape` does),
  /// and it runs, through bash, against a fresh copy of a project that has the ids, versions
  /// and files the examples name. Examples that cannot run here (a device, a terminal, another
  /// host, a process that never ends) are parsed only, and listed.
  @Test func everyHelpExampleParsesAndRuns() throws {
    let examples = HelpExamples.all(Tape.self, path: [])
    #expect(examples.count >= 30, "only \(examples.count) examples found")
    let space = try Workspace()
    let fixture = try HelpExamples.fixture(in: space)
    let environment = try Readme.environment(in: space)
    var ran = 0
    var parsedOnly: [String] = []
    for (index, example) in examples.enumerated() {
      let said = "tape \(example.command.joined(separator: " ")) --help: Example: \(example.text)"
      let words = try #require(Readme.words(example.text), "\(said): unbalanced quotes")
      // The `tape …` part of a pipeline, without `tape`.
      let segments = words.split(separator: "|").map(Array.init)
      let tapeWords = try #require(
        segments.first { $0.first == "tape" }, "\(said): no tape command in it")
      do {
        _ = try Tape.parseAsRoot(Array(tapeWords.dropFirst()))
      } catch {
        Issue.record("\(said)\ndoes not parse: \(Tape.fullMessage(for: error))")
        continue
      }
      #expect(
        Array(tapeWords.dropFirst().prefix(example.command.count)) == example.command,
        "\(said)\nis an example of another command")
      if let reason = HelpExamples.parseOnly(tapeWords, pipeline: segments.count > 1) {
        parsedOnly.append("\(example.text) (\(reason))")
        continue
      }
      // A fresh copy of the project for each, in a folder of its own.
      let folder = space.path("example-\(index)")
      try HelpExamples.copy(fixture, to: folder, creates: tapeWords.dropFirst().first == "new")
      let result = try TapeBinary.run(
        URL(fileURLWithPath: "/bin/bash"), ["-c", example.text], environment: environment,
        directory: URL(fileURLWithPath: folder))
      #expect(result.status == 0, "\(said)\nexited \(result.status): \(result.stderr)")
      ran += 1
    }
    print(
      "help examples: \(examples.count) found, \(ran) run against a project, \(parsedOnly.count) parsed only: \(parsedOnly.joined(separator: "; "))"
    )
  }
}

/// A page read as a reader sees it: its `sh` blocks and their command lines.
struct Readme {
  struct Command {
    /// The page's line of the command's first line (1-based).
    let line: Int
    /// The command as written, here-document included.
    let text: String
    /// Its words (of the first line, as a shell splits them; the comment left out).
    let words: [String]
    /// The comment after `#` on its first line, if any.
    let comment: String?

    /// What the comment says it prints: the text after "prints".
    var prints: String? {
      comment?.firstRange(of: "prints ").map { String(comment?[$0.upperBound...] ?? "") }
    }

    var expectsFailure: Bool { comment?.contains("fails") ?? false }

    /// Why this line is not something the test runs as a reader would, if it is not: a `tape`
    /// command, or `NAME=$(tape …)`.
    var notATapeCommand: String? {
      if words.first == "tape" { return nil }
      if let first = words.first, first.firstMatch(of: /^[A-Za-z_]\w*=\$\(tape$/) != nil {
        return nil
      }
      return "'\(text)' is not a tape command"
    }
  }

  struct Block {
    let line: Int
    let commands: [Command]
    /// Its first line starts with `# not run by the tests`.
    let notRun: Bool
  }

  let blocks: [Block]

  static let notRunMark = "# not run by the tests"

  init(text: String) throws {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var blocks: [Block] = []
    var index = 0
    while index < lines.count {
      guard lines[index] == "```sh" else {
        index += 1
        continue
      }
      let start = index + 1
      var end = start
      while end < lines.count && lines[end] != "```" { end += 1 }
      let body = Array(lines[start..<end])
      var commands: [Command] = []
      var at = 0
      while at < body.count {
        let first = body[at]
        let lineNumber = start + at + 1
        at += 1
        let trimmed = first.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
        var text = first
        // A here-document runs to its terminator.
        if let match = first.firstMatch(of: /<<-?\s*'?"?(\w+)'?"?/) {
          let terminator = String(match.1)
          while at < body.count {
            text += "\n" + body[at]
            at += 1
            if body[at - 1].trimmingCharacters(in: .whitespaces) == terminator { break }
          }
        }
        // A comment starts at a `#` after a blank (`fil4#stereo` is a word).
        let mark = first.firstMatch(of: /\s#\s+(.*)$/)
        let code = mark.map { String(first[..<$0.range.lowerBound]) } ?? first
        commands.append(
          Command(
            line: lineNumber, text: text, words: Readme.words(code) ?? [],
            comment: mark.map { String($0.1) }))
      }
      blocks.append(
        Block(
          line: start, commands: commands,
          notRun: body.first?.hasPrefix(Self.notRunMark) ?? false))
      index = end + 1
    }
    self.blocks = blocks
  }

  /// A line split into words as a shell splits them (`'…'`, `"…"`, `\`), with `|` a word of its
  /// own; nil when a quote is left open.
  static func words(_ line: String) -> [String]? {
    var words: [String] = []
    var current = ""
    var inWord = false
    var quote: Character?
    var escaped = false
    for character in line {
      if escaped {
        current.append(character)
        escaped = false
      } else if let open = quote {
        if character == open {
          quote = nil
        } else if character == "\\" && open == "\"" {
          escaped = true
        } else {
          current.append(character)
        }
      } else if character == "'" || character == "\"" {
        quote = character
        inWord = true
      } else if character == "\\" {
        escaped = true
        inWord = true
      } else if character == "|" {
        if inWord { words.append(current) }
        words.append("|")
        current = ""
        inWord = false
      } else if character.isWhitespace {
        if inWord { words.append(current) }
        current = ""
        inWord = false
      } else {
        current.append(character)
        inWord = true
      }
    }
    guard quote == nil else { return nil }
    if inWord { words.append(current) }
    return words
  }

  /// The ids a comment names (`s1`, `t2`, `c3`, `v8`…), in order.
  static func ids(in text: String) -> [String] {
    text.matches(of: /\b[a-z][0-9]+\b/).map { String($0.output) }
  }

  /// The "quoted" texts of a comment.
  static func quoted(in text: String) -> [String] {
    text.matches(of: /"([^"]+)"/).map { String($0.1) }
  }

  /// The environment a reader's shell has here: `tape` on PATH (the built binary), a HOME
  /// whose ALSA default device is `null`, a decoded-audio cache inside the workspace.
  static func environment(in space: Workspace) throws -> [String: String] {
    let bin = space.path("bin")
    let home = space.path("home")
    for folder in [bin, home] {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    try FileManager.default.createSymbolicLink(
      atPath: bin + "/tape", withDestinationPath: TapeBinary.url.path)
    try "pcm.!default { type null }\n".write(
      toFile: home + "/.asoundrc", atomically: true, encoding: .utf8)
    return [
      "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
      "HOME": home, "XDG_CACHE_HOME": space.path("cache"), "NO_COLOR": "1",
    ]
  }
}

/// The pages of the documentation: README.md, CONTRIBUTING.md and every `.md` under docs/.
enum DocPages {
  /// The top of the checkout.
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardizedFileURL

  /// The picture at the top of the README, drawn by its quick start.
  static let picture = "docs/quick-start.svg"

  /// Every page, as a path from the top of the checkout, in a stable order.
  static var all: [String] {
    ["README.md", "CONTRIBUTING.md"] + files(under: "docs").filter { $0.hasSuffix(".md") }
  }

  /// `relative` (a path from the top of the checkout) as an absolute path.
  static func path(_ relative: String) -> String {
    root.appendingPathComponent(relative).path
  }

  static func text(_ page: String) throws -> String {
    try String(contentsOfFile: path(page), encoding: .utf8)
  }

  /// The files under `folder` (or `folder` itself when it is a file), as paths from the top of
  /// the checkout, sorted; build products and dependencies left out.
  static func files(under folder: String) -> [String] {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path(folder), isDirectory: &isFolder) else {
      return []
    }
    guard isFolder.boolValue else { return [folder] }
    let found = FileManager.default.enumerator(atPath: path(folder))?.allObjects ?? []
    return found.compactMap { $0 as? String }
      .filter { !$0.hasPrefix(".build") && !$0.contains("/.build") }
      .map { folder + "/" + $0 }
      .filter {
        var folder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path($0), isDirectory: &folder)
          && !folder.boolValue
      }
      .sorted()
  }

  /// The targets of a page's Markdown links and images (`[text](target)`), outside code.
  static func links(in text: String) -> [String] {
    var prose = ""
    var inFence = false
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
        inFence.toggle()
        continue
      }
      if !inFence { prose += line.replacing(/`[^`]*`/, with: "") + "\n" }
    }
    return prose.matches(of: /\]\(([^)\s]+)\)/).map { String($0.1) }
  }

  /// The anchors GitHub makes for a page's headings: lower case, spaces as `-`, punctuation
  /// other than `-` and `_` left out.
  static func anchors(in text: String) -> Set<String> {
    var anchors: Set<String> = []
    var inFence = false
    for line in text.split(separator: "\n") {
      if line.hasPrefix("```") { inFence.toggle() }
      guard !inFence, let heading = line.firstMatch(of: /^#{1,6} +(.*)$/) else { continue }
      var anchor = ""
      for character in heading.1.lowercased() {
        if character == " " {
          anchor.append("-")
        } else if character.isLetter || character.isNumber || character == "-"
          || character == "_"
        {
          anchor.append(character)
        }
      }
      anchors.insert(anchor)
    }
    return anchors
  }
}

/// The `Example:` lines of the `--help` texts, and a project they can run against.
enum HelpExamples {
  struct Example {
    /// The command's words after `tape` (`["clip", "split"]`).
    let command: [String]
    let text: String
  }

  /// Every example of `command` and the commands under it, in the order `--help` lists them.
  static func all(_ command: any ParsableCommand.Type, path: [String]) -> [Example] {
    let configuration = command.configuration
    let here = configuration.discussion.split(separator: "\n")
      .map { $0.trimmingCharacters(in: .whitespaces) }
      .filter { $0.hasPrefix("Example: ") }
      .map { Example(command: path, text: String($0.dropFirst("Example: ".count))) }
    return here
      + configuration.subcommands.flatMap { all($0, path: path + [$0._commandName]) }
  }

  /// Why an example is parsed but not run here, if it is not run.
  static func parseOnly(_ words: [String], pipeline: Bool) -> String? {
    switch words.dropFirst().first {
    case "play": return "needs an audio device"
    case "record" where !words.contains("--recover"): return "needs a capture device"
    case "scrub": return "needs a terminal"
    case "take" where words.dropFirst(2).first == "use":
      return "needs a looped recording; RecordTests records one"
    case "watch", "view": return "runs until stopped"
    case "demo": return "builds a demo in /tmp; DemoAndPlayTests runs it"
    case "render" where pipeline: return "sends the render to another host"
    default: return nil
    }
  }

  /// A project, song.tape, that has what the examples name: sources s1 (100 s) and s2
  /// (drums.flac, also as ~/audio/moved/drums.wav), tracks t1–t3, clip c3 across 0–94 s (from 1 s
  /// of s1) and c4 right after it, an envelope on t1 (points at 0, 10 and 12 s), an EQ f1 on t1
  /// (x42's fil4), a marker m1 "chorus" at 62 s, a send n1 from t2 to t3, 23 versions and one
  /// to redo, a clipboard
  /// `verse` (10–20 s of every track), a tag `rough-mix` on the head; vocals.wav, drums.flac, edits.txt and edit.otio (its
  /// export) beside it.
  static func fixture(in space: Workspace) throws -> String {
    let folder = space.path("fixture")
    // The sources outside the project's folder, so that the project names them absolutely
    // and a copy of it elsewhere still finds them.
    let sources = space.path("sources")
    let moved = space.path("home") + "/audio/moved"
    for place in [folder, sources, moved] {
      try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
    }
    let long = sources + "/long.wav"
    try tool(
      "/usr/bin/sox",
      [
        "-n", "-r", "48000", "-c", "1", "-b", "16", long, "synth", "100", "sine", "220", "vol",
        "0.3",
      ])
    let drums = sources + "/drums.wav"
    try tool("/usr/bin/sox", [TestAudio.path("noise-stereo-48k-16.flac"), drums])
    try FileManager.default.copyItem(atPath: drums, toPath: moved + "/drums.wav")
    try FileManager.default.copyItem(
      atPath: TestAudio.path("noise-stereo-48k-16.flac"), toPath: folder + "/drums.flac")
    try FileManager.default.copyItem(
      atPath: TestAudio.path("speech-mono-48k-16.wav"), toPath: folder + "/vocals.wav")
    try "track add Pad\n".write(toFile: folder + "/edits.txt", atomically: true, encoding: .utf8)
    // An impulse response for the examples of file parameters, and the same one moved. Its
    // noise the same in every run (sox -R): sox seeds it from the clock otherwise, and the
    // render example's `--true-peak -2dBTP` held or failed with the impulse response drawn
    // (CI drew ones whose 220 Hz gain took the mix to -1.47 dBTP, where -10 is usual).
    let hall = sources + "/hall.wav"
    try tool(
      "/usr/bin/sox",
      [
        "-R", "-n", "-r", "48000", "-c", "2", "-b", "32", "-e", "floating-point", hall, "synth",
        "0.01", "whitenoise", "fade", "q", "0", "0.01", "0.01", "vol", "0.1",
      ])
    try FileManager.default.createDirectory(
      atPath: space.path("home") + "/irs", withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: hall, toPath: space.path("home") + "/irs/hall.wav")
    let song = folder + "/song.tape"
    for arguments in [
      ["new", song], ["import", song, long], ["import", song, drums],
      ["track", "add", song, "One"], ["track", "add", song, "Two"],
      ["track", "add", song, "Three"],
      ["clip", "add", song, "t1", "s1", "--at", "0", "--length", "10s"],
      ["clip", "add", song, "t2", "s2", "--at", "0", "--length", "4s"],
      ["clip", "add", song, "t3", "s1", "--at", "0", "--from", "1s", "--length", "94s"],
      ["clip", "add", song, "t3", "s1", "--at", "94s", "--from", "95s", "--length", "5s"],
      // c5 over the end of c2: two clips that overlap, for `clip crossfade c2 c5`.
      ["clip", "add", song, "t2", "s2", "--at", "3.5s", "--from", "3s", "--length", "1s"],
      ["track", "envelope", song, "t1", "--set", "0s:0dB,10s:-6dB,12s:-inf"],
      ["fx", "add", song, "t1", "http://gareus.org/oss/lv2/fil4#stereo"],
      // f2, for the examples of presets (x42's autotune ships two).
      ["fx", "add", song, "t2", "http://gareus.org/oss/lv2/fat1"],
      // f3, for the examples of file parameters (x42's IR convolver and its impulse response).
      ["fx", "add", song, "t3", "zeroconvolv#CfgStereo", "--file", "ir=\(hall)"],
      ["marker", "add", song, "62s", "chorus"],
      ["send", "add", song, "t2", "t3", "--gain", "-6"],
    ] {
      try TapeBinary.run(arguments).checked(arguments)
    }
    for step in 1...9 {
      let arguments = ["track", "set", song, "t2", "--gain", "-\(step)dB"]
      try TapeBinary.run(arguments).checked(arguments)
    }
    try TapeBinary.run(["undo", song]).checked(["undo"])
    // A clipboard for the paste examples, a tag for the tag examples (neither a version).
    let copy = ["copy", song, "--from", "10s", "--to", "20s", "--as", "verse"]
    try TapeBinary.run(copy).checked(copy)
    let tag = ["tag", song, "rough-mix"]
    try TapeBinary.run(tag).checked(tag)
    // An OpenTimelineIO export for `import-otio`.
    let export = ["export", song, "-o", folder + "/edit.otio"]
    try TapeBinary.run(export).checked(export)
    return folder
  }

  /// A copy of the fixture's project and files in `folder` (the sources stay where they are:
  /// the project names them absolutely); without the project when the example creates one.
  static func copy(_ fixture: String, to folder: String, creates: Bool) throws {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    guard !creates else { return }
    for name in ["song.tape", "vocals.wav", "drums.flac", "edits.txt", "edit.otio"] {
      try FileManager.default.copyItem(atPath: fixture + "/" + name, toPath: folder + "/" + name)
    }
  }
}

extension TapeBinary.Result {
  /// Throws unless the command exited 0.
  func checked(_ arguments: [String]) throws {
    guard status == 0 else {
      throw TmuxError(message: "tape \(arguments.joined(separator: " ")) failed: \(stderr)")
    }
  }
}
