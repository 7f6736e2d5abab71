import Foundation
import Testing

/// Runs `sql` on `file` with the sqlite3 shell, which SQLite's own tools use to make the
/// damage a flipped byte makes (a NULL where the schema forbids it, a schema text that no
/// longer parses) without depending on which byte of this build's file holds what.
func sqlite3(_ file: String, _ sql: String) throws {
  let result = try TapeBinary.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [file, sql])
  #expect(result.status == 0, "sqlite3 \(sql): \(result.stderr)")
}

/// The head a project is at, read without Tape.
func storedHead(_ file: String) throws -> String {
  try TapeBinary.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [file, "SELECT version FROM head"])
    .stdout
}

/// `song.tape` in `ws`: 600 clips in version 2, one gain edit in version 3, and a checkout of
/// the empty version 1 kept pending by an editor (`tape-testing hold-checkout`) that was then
/// killed: the rows hold version 3, the head is version 1.
func projectWithAMovePending(_ ws: Workspace) throws -> String {
  let song = ws.path("song.tape")
  let made = try TapeBinary.run(
    TapeBinary.testing, ["fixture", song, "--clips", "600", "--versions", "3"])
  #expect(made.status == 0, "\(made.stderr)")
  let (holder, out, _) = try startTape(
    ["hold-checkout", song, "1", "--seconds", "60"], executable: TapeBinary.testing)
  let acknowledged = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
  kill(holder.processIdentifier, SIGKILL)
  holder.waitUntilExit()
  #expect(acknowledged == "checkout 1\n")
  return song
}

@Suite("Damaged projects: one line, exit 65, nothing changed, never a crash")
struct DamagedProjectTests {
  static func damaged(_ detail: String, _ file: String) -> String {
    "error: the project file is damaged (\(detail)); restore it from a backup, or see what sqlite3 can save with 'sqlite3 \(file) .recover' (the file was not changed)\n"
  }

  /// A version whose label is NULL (2 in 300 random byte flips made one): `history` and
  /// `checkout` crashed with SIGILL and a stack trace (GRDB's subscript traps), and checkout
  /// had moved the head before crashing.
  @Test func aNullLabelIsDamageNotACrash() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("track", "add", song, "A")
    try ws.tape("track", "add", song, "B")
    try sqlite3(
      song,
      "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(sql, 'label TEXT NOT NULL', 'label TEXT') WHERE name = 'version'"
    )
    try sqlite3(song, "UPDATE version SET label = NULL WHERE id = 2")
    let before = try ws.fingerprint("song.tape")
    for command in [
      ["history", song], ["history", song, "--json"], ["checkout", song, "2"], ["undo", song],
    ] {
      let result = try TapeBinary.run(command, environment: ["NO_COLOR": "1"])
      #expect(!result.killedBySignal, "\(command)")
      #expect(result.status == 65, "\(command)")
      #expect(
        result.stderr == Self.damaged("table version: column label holds NULL", song),
        "\(command)")
      #expect(result.stdout == "")
      #expect(try ws.fingerprint("song.tape") == before, "\(command)")
      #expect(try storedHead(song) == "3\n", "\(command)")
    }
    // What does not need the label still works.
    try ws.tape("ls", song)
  }

  /// A clip row edited behind Tape's back while a large history move is pending (left by a
  /// killed editor): an edit, which folds the move first, and a redo, which checks the rows it
  /// covers, are refused in one line, and nothing changes. (The store's close tried the fold
  /// again and logged its failure: a second line, a dated warning, after the error.)
  @Test func aRowChangedUnderAPendingMoveIsRefusedInOneLine() throws {
    let ws = try Workspace()
    let song = try projectWithAMovePending(ws)
    try sqlite3(song, "UPDATE clip SET timelineStart = timelineStart + 1 WHERE id = 5")
    let before = try ws.fingerprint("song.tape")
    for command in [["track", "add", song, "A"], ["redo", song]] {
      let result = try TapeBinary.run(command, environment: ["NO_COLOR": "1"])
      #expect(result.status == 65, "\(command)")
      #expect(
        result.stderr
          == "error: the project's history no longer matches its data, so nothing was changed; please report this with the project file\n",
        "\(command)")
      #expect(try ws.fingerprint("song.tape") == before, "\(command)")
    }
    #expect(try storedHead(song) == "1\n")
  }

  /// A page of the clip table zeroed (a disk's damage): every command refuses the project,
  /// also a one-clip edit, which reads only the clips it names (it had committed two versions
  /// into the damaged file; found by a user trial). The edit walks every page of the clip
  /// tables first.
  @Test func aDamagedClipPageStopsOneClipEdits() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("tone-mono-44k-24.aiff"))
    try ws.tape("track", "add", song, "A")
    let adds = (0..<300).map { "clip add t1 s1 --at \($0)s --length 0.5s" }.joined(separator: "\n")
    let script = ws.path("adds.txt")
    try (adds + "\n").write(toFile: script, atomically: true, encoding: .utf8)
    try ws.tape("batch", song, script)
    try sqlite3(song, "PRAGMA wal_checkpoint(TRUNCATE)")
    let pages = try TapeBinary.run(
      URL(fileURLWithPath: "/usr/bin/sqlite3"),
      [song, "SELECT pageno FROM dbstat WHERE name = 'clip' AND pagetype = 'leaf' ORDER BY pageno"]
    ).stdout.split(separator: "\n").compactMap { Int($0) }
    try #require(pages.count >= 3, "\(pages)")
    // A leaf in the middle: c1 is on the first, c300 on the last.
    let file = try FileHandle(forWritingTo: URL(fileURLWithPath: song))
    try file.seek(toOffset: UInt64(pages[pages.count / 2] - 1) * 4_096)
    try file.write(contentsOf: Data(count: 4_096))
    try file.close()
    let before = try ws.fingerprint("song.tape")
    let head = try storedHead(song)
    for command in [
      ["ls", song], ["clip", "set", song, "c1", "--gain", "-3"],
      ["clip", "move", song, "c300", "--to", "+1s"],
    ] {
      let result = try TapeBinary.run(command, environment: ["NO_COLOR": "1"])
      #expect(result.status == 65, "\(command): \(result.stderr)")
      #expect(
        result.stderr == Self.damaged("table clip: its pages are damaged", song), "\(command)")
      #expect(try ws.fingerprint("song.tape") == before, "\(command)")
      #expect(try storedHead(song) == head, "\(command)")
    }
  }

  /// A schema whose text was damaged: a column renamed by one byte (`no such column: gainDB`
  /// was exit 70, "internal error") and a statement that no longer parses (SQLite's message
  /// quoted the damaged bytes). Readers and edits alike: exit 65, the table named, the fix.
  @Test(arguments: [
    ("replace(sql, 'gainDB', 'gainDX')", "table clip: no such column: gainDB"),
    (
      "replace(sql, 'CREATE TABLE', 'CREATE0TABLE' || char(27) || '[31m')",
      "table clip: malformed database schema"
    ),
  ])
  func aDamagedSchemaNamesTheTable(damage: String, detail: String) throws {
    let ws = try Workspace()
    let song = try ErrorPathTests.project(ws)
    try sqlite3(
      song,
      "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = \(damage) WHERE name = 'clip'")
    let before = try ws.fingerprint("song.tape")
    for command in [
      ["ls", song], ["ls", song, "--json"], ["history", song],
      ["clip", "set", song, "c1", "--gain", "-3"],
      ["render", song, "-o", ws.path("mix.wav")], ["undo", song],
    ] {
      let result = try TapeBinary.run(command, environment: ["NO_COLOR": "1"])
      #expect(result.status == 65, "\(command)")
      #expect(result.stderr == Self.damaged(detail, song), "\(command)")
      #expect(result.stdout == "")
      #expect(try ws.fingerprint("song.tape") == before, "\(command)")
    }
    #expect(!FileManager.default.fileExists(atPath: ws.path("mix.wav")))
  }

  /// A flipped byte inside a CHECK rule of the schema (`'edit'` becomes `'ed\x13t'` in
  /// head_move's list of causes, found by the byte-flip fuzzer) refused every edit's journal
  /// row: an internal error (exit 70). It is damage: one line naming the table, exit 65,
  /// nothing changed; readers still read.
  @Test func aDamagedConstraintIsDamage() throws {
    let ws = try Workspace()
    let song = try ErrorPathTests.project(ws)
    try sqlite3(
      song,
      "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(sql, '''edit''', '''ed' || char(19) || 't''') WHERE name = 'head_move'"
    )
    let before = try ws.fingerprint("song.tape")
    let edit = try TapeBinary.run(
      ["clip", "set", song, "c1", "--gain", "-3"], environment: ["NO_COLOR": "1"])
    #expect(edit.status == 65, "\(edit.stderr)")
    #expect(
      edit.stderr
        == Self.damaged("table head_move: a constraint in the file refuses what Tape writes", song))
    #expect(try ws.fingerprint("song.tape") == before)
    #expect(try TapeBinary.run(["ls", song]).status == 0)
  }
}
