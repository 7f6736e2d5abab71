import Foundation
import Testing

/// Rough edges an editor found by trying the tool (issue 23), each with the test that would
/// have caught it.
@Suite("Editing: rough edges")
struct EditorRoughEdgesTests {
  /// c2 (1–3 s) overlaps c1 (0–2 s): removing c1 with ripple used to move c3 to 2 s, inside
  /// c2. It is refused in one line that names the overlap and the cut that removes both, and
  /// nothing changes.
  @Test func aRippleRemovalUnderAnOverlappingClipIsRefused() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "Voice")
    for (at, from) in [("0", "0"), ("1s", "2s"), ("4s", "4s")] {
      try ws.tape("clip", "add", song, "t1", "s1", "--at", at, "--from", from, "--length", "2s")
    }
    let before = try ws.fingerprint("song.tape")
    let refused = try ws.tape(
      "clip", "rm", song, "c1", "--ripple", status: 65, environment: ["NO_COLOR": "1"])
    #expect(
      refused.stderr
        == "error: c2 overlaps c1 and would stay where it is while the clips after c1 moved left under it; remove c1 without --ripple, or cut its time, which cuts c2 too: tape cut \(song) --from 0s --to 2s --tracks t1 --ripple\n"
    )
    #expect(try ws.fingerprint("song.tape") == before)
    // Without the overlap the ripple works as before.
    try ws.tape("clip", "rm", song, "c2")
    try ws.tape("clip", "rm", song, "c1", "--ripple")
    #expect(try ws.tape("ls", song, "--frames").stdout.contains("c3     s1      96000f"))
  }

  /// A project named by one character in the current folder (`tape new a`): Foundation's
  /// `deletingLastPathComponent` traps on such a name, and every command that took the
  /// project's folder from it (new, import, ls, render, diff…) died with an illegal
  /// instruction (exit 132). Each works, and so does a render to a one-character name.
  @Test func aOneCharacterProjectNameWorks() throws {
    let ws = try Workspace()
    let folder = URL(fileURLWithPath: ws.path(""))
    @discardableResult
    func tape(_ arguments: String...) throws -> TapeBinary.Result {
      let result = try TapeBinary.run(arguments, directory: folder)
      #expect(
        result.status == 0 && !result.killedBySignal,
        "tape \(arguments.joined(separator: " ")) → \(result.status): \(result.stderr)")
      return result
    }
    try tape("new", "a")
    try tape("import", "a", TestAudio.path("speech-mono-48k-16.wav"))
    try tape("track", "add", "a", "Voice")
    try tape("clip", "add", "a", "t1", "s1", "--at", "0", "--length", "1s")
    #expect(try tape("ls", "a").stdout.hasPrefix("version 4 "))
    try tape("render", "a", "-o", "m", "--format", "wav")
    #expect(FileManager.default.fileExists(atPath: ws.path("m")))
    #expect(try tape("diff", "a", "2", "3").stdout == "t1 added \"Voice\"\n")
  }

  /// A listing whose reader stops early (`| head`) ends quietly with exit 0, past the 64 KB a
  /// pipe holds: ls, history --all (its default shows the last 30) and diff (it was "could not write the result…", exit 74; diff's
  /// words are bounded now, its `--json` lists every change).
  @Test func aListingWhoseReaderStopsIsNoError() throws {
    let ws = try Workspace()
    let song = ws.path("big.tape")
    let made = try TapeBinary.run(
      TapeBinary.testing, ["fixture", song, "--clips", "1500", "--versions", "2000"])
    #expect(made.status == 0, "\(made.stderr)")
    for arguments in [
      ["ls", song], ["history", song, "--all"], ["diff", song, "1", "2000", "--json"],
    ] {
      let piped = try TapeBinary.run(
        URL(fileURLWithPath: "/bin/bash"),
        [
          "-c", "\"$0\" \"$@\" | head -c 100 >/dev/null; echo ${PIPESTATUS[0]}",
          TapeBinary.url.path,
        ] + arguments, environment: ["NO_COLOR": "1"])
      #expect(piped.stdout == "0\n", "\(arguments): \(piped.stderr)")
      #expect(piped.stderr == "", "\(arguments)")
      // And the whole listing is longer than a pipe holds, so the reader did stop it.
      #expect(try TapeBinary.run(arguments).stdout.utf8.count > 65_536, "\(arguments)")
    }
    // An edit's printed ids are its result: losing them is still an error.
    let edit = try TapeBinary.run(
      URL(fileURLWithPath: "/bin/bash"),
      ["-c", "exec \"$0\" track add \"$1\" X >&-", TapeBinary.url.path, song],
      environment: ["NO_COLOR": "1"])
    #expect(edit.status == 74, "\(edit.stderr)")
    // With standard output (or error) closed, nothing printed lands in a file the command
    // opened: the project is whole (a descriptor opened first took the number 1 and the ids
    // were written over the project's header).
    for closed in [">&-", "2>&-"] {
      _ = try TapeBinary.run(
        URL(fileURLWithPath: "/bin/bash"),
        ["-c", "exec \"$0\" track add \"$1\" Y \(closed)", TapeBinary.url.path, song])
      let check = try TapeBinary.run(TapeBinary.testing, ["verify", song])
      #expect(check.status == 0, "\(closed): \(check.stdout)\(check.stderr)")
    }
  }

  /// Batches: one that changes nothing says so, as single edits do; one of comments only is no
  /// error; `--as` twice on a line is named; `insert --length 0` names --length.
  @Test func batchAndInsertMessages() throws {
    let ws = try Workspace()
    let song = try ErrorPathTests.project(ws)
    let head = try ws.head(of: song)
    func batch(_ script: String) throws -> TapeBinary.Result {
      try TapeBinary.run(
        URL(fileURLWithPath: "/bin/bash"),
        ["-c", "printf \"$2\" | \"$0\" batch \"$1\"", TapeBinary.url.path, song, script],
        environment: ["NO_COLOR": "1"])
    }
    let same = try batch("track set t1 --gain 0\\n")
    #expect(same.status == 0)
    #expect(same.stderr == "note: nothing changed; the project stays at version \(head)\n")
    let comments = try batch("# nothing yet\\n\\n")
    #expect(comments.status == 0)
    #expect(
      comments.stderr
        == "note: the script has no edits; nothing changed; the project stays at version \(head)\n"
    )
    let twice = try batch("track add B --as x --as y\\n")
    #expect(twice.status == 64)
    #expect(
      twice.stderr == "error: line 1: --as is given twice; a line names one id: --as NAME\n")
    #expect(try ws.head(of: song) == head)

    let gap = try ws.tape(
      "insert", song, "--at", "1s", "--length", "0", status: 65, environment: ["NO_COLOR": "1"])
    #expect(gap.stderr == "error: a gap of no time inserts nothing; give --length more than 0\n")
  }
}
