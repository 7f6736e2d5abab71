import Foundation
import Testing

@Suite("tape --help")
struct HelpTests {
  @Test func helpDescribesTheToolAndExitsZero() throws {
    let result = try TapeBinary.run(["--help"])
    #expect(result.status == 0)
    #expect(
      result.stdout.hasPrefix("OVERVIEW: Cut, mix, undo and render multitrack audio projects"))
    #expect(result.stdout.contains("USAGE: tape"))
    #expect(result.stderr == "")
  }

  /// `tape --help`, `-h` and `-v --help` are printed without parsing (Tape.main); `tape help`
  /// and `tape --help --help` take the parser's path: all print the same, at the default width
  /// and at another.
  @Test func theRootHelpIsTheParsersWhicheverWayItIsAsked() throws {
    for columns in [nil, "100"] {
      let environment = columns.map { ["COLUMNS": $0] } ?? [:]
      let parsed = try TapeBinary.run(["help"], environment: environment)
      #expect(parsed.status == 0 && parsed.stdout.hasPrefix("OVERVIEW: "))
      for asked in [["--help"], ["-h"], ["-v", "--help"], ["--help", "--help"]] {
        let result = try TapeBinary.run(asked, environment: environment)
        #expect(result.status == 0, "\(asked)")
        #expect(result.stdout == parsed.stdout, "\(asked) \(columns ?? "")")
        #expect(result.stderr == "")
      }
    }
  }

  /// Every command's help: one `--version` at most (ls, render and play have their own
  /// `--version V`; the tool's version is `tape --version` alone), no default said twice, no
  /// stray line-continuation backslash, and an example.
  @Test(arguments: [
    ["new"], ["import"], ["relink"], ["ls"], ["backup"], ["track", "add"], ["track", "ls"],
    ["track", "set"],
    ["track", "rm"],
    ["clip", "add"], ["clip", "split"], ["clip", "move"], ["clip", "trim"], ["clip", "set"],
    ["clip", "rm"], ["clip", "crossfade"], ["clip", "slip"], ["clip", "ls"], ["split"], ["cut"],
    ["copy"], ["paste"],
    ["silences"], ["fx", "plugins"], ["fx", "info"], ["fx", "presets"], ["marker", "add"],
    ["marker", "move"], ["marker", "rename"], ["marker", "rm"], ["marker", "ls"], ["send", "add"],
    ["send", "set"], ["send", "rm"], ["send", "ls"],
    ["undo"], ["redo"], ["checkout"], ["history"], ["history", "prune"], ["diff"], ["compare"],
    ["log"], ["watch"], ["view"], ["tag"], ["cache"], ["batch"], ["shell"],
    ["scrub"], ["render"], ["play"], ["record"], ["draw"], ["demo"], ["export"], ["import-otio"],
  ])
  func everyCommandsHelpIsClean(command: [String]) throws {
    let result = try TapeBinary.run(command + ["--help"])
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n")
    #expect(lines.filter { $0.trimmingPrefix(" ").hasPrefix("--version") }.count <= 1)
    // A backslash ends a line only where an example too wide for the help goes on (" \\").
    var inExample = false
    for line in lines {
      let text = line.trimmingCharacters(in: .whitespaces)
      if text.hasPrefix("Example: ") { inExample = true }
      #expect(
        !line.hasSuffix("\\") || (inExample && line.hasSuffix(" \\")),
        "a stray backslash:\n\(result.stdout)")
      if !line.hasSuffix("\\") { inExample = false }
    }
    let text = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(
      text.firstMatch(of: /\(default [^)]*\)\.? \(default:/) == nil,
      "a default said twice:\n\(result.stdout)")
    #expect(result.stdout.contains("Example: tape \(command[0])"), "no example")
    #expect(
      result.stdout.hasSuffix("130   stopped by Ctrl-C (another signal ends it by that signal)\n"))
  }

  /// A mistyped command, at any level and after `help`, is answered with the nearest names
  /// (`help rendr` printed the whole help and exited 0).
  @Test(arguments: [
    (
      ["rendr", "song.tape"],
      "'rendr' is not a command of tape; did you mean 'tape render'? ('tape --help' lists them)"
    ),
    (
      ["help", "rendr"],
      "'rendr' is not a command of tape; did you mean 'tape render'? ('tape --help' lists them)"
    ),
    (
      ["clip", "mvoe", "song.tape"],
      "'mvoe' is not a command of tape clip; did you mean 'tape clip move'? ('tape clip --help' lists them)"
    ),
    (
      ["trak", "ls"],
      "'trak' is not a command of tape; did you mean 'tape track'? ('tape --help' lists them)"
    ),
    (["frobnicate"], "'frobnicate' is not a command of tape ('tape --help' lists them)"),
  ])
  func aMistypedCommandGetsTheNearestNames(arguments: [String], message: String) throws {
    let result = try TapeBinary.run(arguments, environment: ["NO_COLOR": "1"])
    #expect(result.status == 64)
    #expect(result.stderr == "error: \(message)\n")
    #expect(result.stdout.isEmpty)
  }

  /// `-V` prints the version; `-v` works anywhere before `--`; `clip mv` is `clip move`;
  /// `track ls` lists the tracks.
  @Test func commandLineHabits() throws {
    #expect(try TapeBinary.run(["-V"]).stdout == "0.1.0\n")
    let space = try Workspace()
    let song = space.path("song.tape")
    try space.tape("new", song)
    try space.tape("track", "add", song, "Voice", "--gain", "-3dB")
    try space.tape("track", "add", song, "Bed")
    let verbose = try space.tape("track", "set", song, "t2", "--mute", "-v")
    #expect(
      verbose.stderr.contains("debug tape.store: [TimelineStore] committed version 4"),
      "\(verbose.stderr)")
    let named = try space.tape("track", "add", song, "--", "-v")
    #expect(named.stdout == "t3\n")
    let tracks = try space.tape("track", "ls", song)
    #expect(
      tracks.stdout
        == "t1 Voice  gain -3 dB  pan C  0 clips\nt2 Bed  gain 0 dB  pan C  0 clips  [muted]\nt3 -v  gain 0 dB  pan C  0 clips\n"
    )
    let listed = try #require(
      try parseJSON(space.tape("track", "ls", song, "--json").stdout) as? [[String: Any]])
    #expect(listed.map { $0["name"] as? String } == ["Voice", "Bed", "-v"])
    #expect(listed.map { $0["clips"] as? Int } == [0, 0, 0])
    try space.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try space.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "1s")
    try space.tape("clip", "mv", song, "c1", "--to", "2s")
    let clip = try #require(
      (try parseJSON(space.tape("clip", "ls", song, "--json").stdout) as? [[String: Any]])?.first)
    #expect(clip["timelineStart"] as? Int == 96_000)
  }

  /// Every command's help shows each of its examples once, whole: at 80 and at 60 columns an
  /// example wider than the help is broken between words with ` \` (so it still runs as
  /// copied), never cut in the middle of a command by the parser's wrapping; `track envelope`
  /// printed two of its examples twice.
  @Test(arguments: [80, 60])
  func examplesAreWholeAtEveryWidth(width: Int) throws {
    let dump = try TapeBinary.run(["--experimental-dump-help"])
    let root = try #require(
      (try parseJSON(dump.stdout) as? [String: Any])?["command"] as? [String: Any])
    var commands: [([String], [String])] = []
    func walk(_ path: [String], _ command: [String: Any]) {
      let examples = ((command["discussion"] as? String) ?? "").split(separator: "\n")
        .map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("Example: ") }
      commands.append((path, examples))
      for sub in command["subcommands"] as? [[String: Any]] ?? [] {
        guard let name = sub["commandName"] as? String, name != "help" else { continue }
        walk(path + [name], sub)
      }
    }
    walk([], root)
    for (path, examples) in commands where !examples.isEmpty {
      let help = try TapeBinary.run(path + ["--help"], environment: ["COLUMNS": "\(width)"])
      var shown: [String] = []
      var pending: String?
      for line in help.stdout.split(separator: "\n").map(String.init) {
        let text = line.trimmingCharacters(in: .whitespaces)
        if let start = pending {
          pending = nil
          let joined = start + " " + text
          if joined.hasSuffix(" \\") {
            pending = String(joined.dropLast(2))
          } else {
            shown.append(joined)
          }
          continue
        }
        guard text.hasPrefix("Example: ") else { continue }
        #expect(line.count <= width || !line.contains(" "), "\(path): \(line)")
        if text.hasSuffix(" \\") { pending = String(text.dropLast(2)) } else { shown.append(text) }
      }
      #expect(shown == examples, "\(path) at \(width) columns")
    }
  }

  /// Help, the version and completion scripts piped into a reader that stops early (`| head
  /// -1`) end quietly, every time (one run in three said "could not write the result").
  @Test(arguments: [
    ["--help"], ["help", "render"], ["render", "--help"], ["--generate-completion-script", "bash"],
    ["--version"],
  ])
  func aReaderThatStopsIsNoError(arguments: [String]) throws {
    for _ in 0..<20 {
      let piped = try TapeBinary.run(
        URL(fileURLWithPath: "/bin/bash"),
        ["-c", "\"$0\" \"$@\" | head -c 1 >/dev/null; echo ${PIPESTATUS[0]}", TapeBinary.url.path]
          + arguments)
      #expect(piped.stdout == "0\n", "\(arguments): \(piped.stderr)")
      #expect(piped.stderr.isEmpty, "\(arguments): \(piped.stderr)")
    }
  }

  /// bash completion (the script `tape --generate-completion-script bash` writes, run by a
  /// real bash) offers the ids of the project named on the line, and project files.
  @Test func bashCompletesIdsAndFiles() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "A")
    try ws.tape("track", "add", song, "B")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "1s")
    try ws.tape("clip", "add", song, "t2", "s1", "--at", "1s", "--length", "1s")
    let script = """
      source <(tape --generate-completion-script bash)
      complete_words() {
        COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="$*"
        COMP_POINT=${#COMP_LINE}; COMPREPLY=()
        _tape tape "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
        printf '%s\\n' "${COMPREPLY[@]}" | sort | tr '\\n' ' '; echo
      }
      complete_words tape clip move song.tape ''
      complete_words tape clip move song.tape c1 --track ''
      complete_words tape track set song.tape t
      complete_words tape relink song.tape ''
      complete_words tape checkout song.tape ''
      complete_words tape ls so
      """
    let path = TapeBinary.url.deletingLastPathComponent().path
    let result = try TapeBinary.run(
      URL(fileURLWithPath: "/bin/bash"), ["-c", script],
      environment: ["PATH": "\(path):/usr/bin:/bin"], directory: ws.url)
    #expect(
      result.stdout.split(separator: "\n") == [
        "c1 c2 ", "t1 t2 ", "t1 t2 ", "s1 ", "1 2 3 4 5 6 ", "song.tape song.tape-cache ",
      ], "\(result.stdout)\(result.stderr)")
  }

  /// The short options of every command (as the fish completion script lists them) are those
  /// `RawArguments.shortNames` knows: a word made of other letters (`-dash`) is refused as a
  /// value written without `--`, so a new short option must be added there.
  @Test func everyShortOptionIsOneTheArgumentCheckKnows() throws {
    let script = try TapeBinary.run(["--generate-completion-script", "fish"])
    #expect(script.status == 0)
    let names = Set(
      script.stdout.matches(of: /^complete .* -s '([^']+)'/.anchorsMatchLineEndings()).map {
        String($0.1)
      })
    #expect(names == ["h", "m", "o"])
  }

  @Test func theVersion() throws {
    let result = try TapeBinary.run(["--version"])
    #expect(result.status == 0 && result.stdout == "0.1.0\n")
  }

  /// The argument parser's own errors are one line, with where to look, exit 64: never the
  /// usage block. Negative times reach Tape's own parser, which says what is wrong.
  @Test(arguments: [
    (
      ["play", "song.tape", "--period", "abc"], "the value 'abc' is invalid for '--period'",
      "play"
    ),
    (["clip", "add", "song.tape"], "missing expected argument '<track>'", "clip add"),
    (["clip", "add", "song.tape", "t1", "s1", "--at"], "missing value for '--at'", "clip add"),
    (["--nope"], "unknown option '--nope'", ""),
    (["watch", "song.tape", "--count", "x"], "the value 'x' is invalid for '--count'", "watch"),
    (["diff", "song.tape", "1", "2", "3"], "unexpected argument '3'", "diff"),
    (["clip", "split", "song.tape"], "missing expected argument '<clip>'", "clip split"),
  ])
  func parserErrorsAreOneLine(arguments: [String], message: String, command: String) throws {
    let result = try TapeBinary.run(arguments, environment: ["NO_COLOR": "1"])
    #expect(result.status == 64)
    #expect(result.stdout.isEmpty)
    let see = command.isEmpty ? "tape --help" : "tape \(command) --help"
    #expect(result.stderr == "error: \(message); see: \(see)\n")
  }

  @Test(arguments: [
    ["play", "nosuch.tape", "--from", "-1s"], ["clip", "move", "nosuch.tape", "c1", "--to", "-2s"],
  ])
  func negativeTimesAreTapesOwnError(arguments: [String]) throws {
    let result = try TapeBinary.run(arguments, environment: ["NO_COLOR": "1"])
    #expect(result.stderr.split(separator: "\n").count == 1)
    #expect(result.stderr.hasPrefix("error: "))
  }

  @Test func anUnknownOptionIsAUsageError() throws {
    let result = try TapeBinary.run(["--no-such-option"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("--no-such-option"))
  }
}
