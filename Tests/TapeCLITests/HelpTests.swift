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

  /// Every command's help: one `--version` at most (ls, render and play have their own
  /// `--version V`; the tool's version is `tape --version` alone), no default said twice, no
  /// stray line-continuation backslash, and an example.
  @Test(arguments: [
    ["new"], ["import"], ["relink"], ["ls"], ["track", "add"], ["track", "set"], ["track", "rm"],
    ["clip", "add"], ["clip", "split"], ["clip", "move"], ["clip", "trim"], ["clip", "set"],
    ["clip", "rm"], ["undo"], ["redo"], ["checkout"], ["history"], ["diff"], ["watch"],
    ["scrub"], ["render"], ["play"], ["demo"],
  ])
  func everyCommandsHelpIsClean(command: [String]) throws {
    let result = try TapeBinary.run(command + ["--help"])
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n")
    #expect(lines.filter { $0.trimmingPrefix(" ").hasPrefix("--version") }.count <= 1)
    #expect(!lines.contains { $0.hasSuffix("\\") }, "a stray backslash:\n\(result.stdout)")
    let text = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(
      text.firstMatch(of: /\(default [^)]*\)\.? \(default:/) == nil,
      "a default said twice:\n\(result.stdout)")
    #expect(result.stdout.contains("Example: tape \(command[0])"), "no example")
  }

  @Test func theVersion() throws {
    let result = try TapeBinary.run(["--version"])
    #expect(result.status == 0 && result.stdout == "0.1.0\n")
  }

  /// The argument parser's own errors are one line, with where to look, exit 64: never the
  /// usage block. Negative times reach Tape's own parser, which says what is wrong.
  @Test(arguments: [
    (
      ["play", "song.tape", "--version", "abc"], "the value 'abc' is invalid for '--version'",
      "play"
    ),
    (["clip", "add", "song.tape"], "missing expected argument '<track>'", "clip add"),
    (["clip", "add", "song.tape", "t1", "s1", "--at"], "missing value for '--at'", "clip add"),
    (["--nope"], "unknown option '--nope'", ""),
    (["clip", "frob"], "unexpected argument 'frob'", "clip"),
    (["watch", "song.tape", "--count", "x"], "the value 'x' is invalid for '--count'", "watch"),
    (["diff", "song.tape", "1"], "missing expected argument '<to>'", "diff"),
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
