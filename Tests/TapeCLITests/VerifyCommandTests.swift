import Foundation
import Testing

/// `tape verify`: passes a sound project, fails each kind of damage it is for with exit 65 and
/// a line naming the fix, and never changes the file.
@Suite("tape verify")
struct VerifyCommandTests {
  /// A project of 3 versions: a source (a copy of a test file), a track, a clip.
  static func project(_ ws: Workspace) throws -> String {
    let song = ws.path("song.tape")
    let audio = try ws.copyTestAudio("speech-mono-48k-16.wav")
    try ws.tape("new", song)
    try ws.tape("import", song, audio)
    try ws.tape("track", "add", song, "Voice")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "1s")
    return song
  }

  @Test func aSoundProjectPassesEveryCheck() throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    let before = try ws.fingerprint("song.tape")
    let text = try ws.tape("verify", song)
    let lines = text.stdout.split(separator: "\n")
    #expect(lines.count == 6 && lines.allSatisfy { $0.hasPrefix("ok    ") }, "\(text.stdout)")
    #expect(text.stdout.contains("history: 4 versions, head 4"), "\(text.stdout)")
    let json = try #require(
      try parseJSON(ws.tape("verify", song, "--json").stdout) as? [String: Any])
    #expect(json["ok"] as? Bool == true)
    #expect(json["integrity"] as? String == "ok")
    #expect(json["versions"] as? Int == 4)
    #expect((json["missingSources"] as? [Any])?.isEmpty == true)
    #expect(try ws.fingerprint("song.tape") == before)
  }

  /// A clip row changed behind history's back (as a bug or a stray `sqlite3` would): no
  /// command notices, undoing from the head no longer reaches the empty project, and verify
  /// says so.
  @Test func rowsThatHistoryDoesNotExplainFail() throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    try ws.tape("verify", song)
    try sqlite3(
      song,
      "INSERT INTO track (id, position, name, gainDB, pan, muted, solo) VALUES (9, 9, 'Stray', 0, 0, 0, 0)"
    )
    let before = try ws.fingerprint("song.tape")
    let result = try ws.tape("verify", song, status: 65, environment: ["NO_COLOR": "1"])
    #expect(result.stdout.contains("FAIL  history: undoing from the head"), "\(result.stdout)")
    #expect(
      result.stderr == "error: \(song) fails a check (history); see the lines above\n",
      "\(result.stderr)")
    let json = try ws.tape("verify", song, "--json", status: 65)
    let report = try #require(try parseJSON(json.stdout) as? [String: Any])
    #expect(report["ok"] as? Bool == false)
    #expect(report["undoToFirstVersionWorks"] as? Bool == false)
    #expect(try ws.fingerprint("song.tape") == before)
  }

  @Test func aMissingSourceFailsNamingRelink() throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    try FileManager.default.removeItem(atPath: ws.path("speech-mono-48k-16.wav"))
    let result = try ws.tape("verify", song, status: 65, environment: ["NO_COLOR": "1"])
    #expect(
      result.stdout.contains(
        "FAIL  sources: s1 missing; point each at its file with 'tape relink \(song) s1 PATH'"),
      "\(result.stdout)")
    #expect(result.stderr.contains("fails a check (sources)"), "\(result.stderr)")
  }
}
