import Foundation
import Testing

@Suite("Editing commands end to end")
struct EditingCommandTests {
  /// A whole session through the binary, checking each command's stdout and the final JSON.
  @Test func aSessionOfEdits() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    #expect(try ws.tape("new", song, "--rate", "48000", "--channels", "2").stdout == "")
    let speech = TestAudio.path("speech-mono-48k-16.wav")
    let piano = TestAudio.path("piano-stereo-44k-24.wav")
    #expect(try ws.tape("import", song, speech, piano).stdout == "s1\ns2\n")
    #expect(try ws.tape("track", "add", song, "Voice", "--gain", "-3dB").stdout == "t1\n")
    #expect(
      try ws.tape("track", "add", song, "Piano", "--pan", "-0.5", "--json").stdout
        == "{\"version\": 4, \"ids\": [\"t2\"]}\n")
    #expect(
      try ws.tape(
        "clip", "add", song, "t1", "s1", "--at", "1s", "--length", "3s", "--fade-in", "50ms"
      ).stdout == "c1\n")
    #expect(
      try ws.tape(
        "clip", "add", song, "t2", "s2", "--at", "0", "--fade-out", "1s", "--curve", "s-curve"
      ).stdout == "c2\n")
    #expect(try ws.tape("clip", "split", song, "c1", "--at", "2.5s").stdout == "c1\nc3\n")
    #expect(try ws.tape("clip", "move", song, "c3", "--to", "5s", "--track", "t2").stdout == "")
    #expect(try ws.tape("clip", "trim", song, "c2", "--start", "0:00.500").stdout == "")
    try ws.tape(
      "clip", "set", song, "c1", "--gain", "-6", "--fade-in", "100ms", "--fade-in-curve",
      "equal-power")
    try ws.tape("track", "set", song, "t1", "--name", "Lead", "--mute", "--pan=0.25")
    try ws.tape("track", "set", song, "t2", "--solo")
    #expect(
      try ws.tape(
        "clip", "add", song, "t2", "s1", "--at", "9s", "--from", "1s", "--to", "2s", "--json"
      ).stdout == "{\"version\": 13, \"ids\": [\"c4\"]}\n")
    try ws.tape("clip", "rm", song, "c4")

    let json = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    #expect(json["version"] as? Int == 14)
    #expect(json["sampleRate"] as? Int == 48_000)
    #expect(json["channels"] as? Int == 2)
    let sources = try #require(json["sources"] as? [[String: Any]])
    #expect(sources.map { $0["id"] as? String } == ["s1", "s2"])
    #expect(sources.map { $0["path"] as? String } == [speech, piano])
    #expect(sources.map { $0["frames"] as? Int } == [307_233, 176_400])  // soxi: 6.400688 s, 4 s
    #expect(sources.map { $0["sampleRate"] as? Int } == [48_000, 44_100])
    #expect(sources.map { $0["channels"] as? Int } == [1, 2])
    let tracks = try #require(json["tracks"] as? [[String: Any]])
    #expect(tracks.map { $0["name"] as? String } == ["Lead", "Piano"])
    #expect(tracks.map { $0["gainDB"] as? Double } == [-3, 0])
    #expect(tracks.map { $0["pan"] as? Double } == [0.25, -0.5])
    #expect(tracks.map { $0["muted"] as? Bool } == [true, false])
    #expect(tracks.map { $0["solo"] as? Bool } == [false, true])
    let lead = try #require(tracks[0]["clips"] as? [[String: Any]])
    // c1: 1 s … 2.5 s after the split, from the start of s1, -6 dB, 100 ms equal-power fade-in.
    #expect(lead.count == 1)
    #expect(lead[0]["id"] as? String == "c1")
    #expect(lead[0]["timelineStart"] as? Int == 48_000)
    #expect(lead[0]["sourceStart"] as? Int == 0)
    #expect(lead[0]["length"] as? Int == 72_000)
    #expect(lead[0]["gainDB"] as? Double == -6)
    #expect((lead[0]["fadeIn"] as? [String: Any])?["length"] as? Int == 4_800)
    #expect((lead[0]["fadeIn"] as? [String: Any])?["curve"] as? String == "equalPower")
    let piano2 = try #require(tracks[1]["clips"] as? [[String: Any]])
    // c2 trimmed to start at 0.5 s (audio in place: source from 0.5 s); c3 moved to 5 s.
    #expect(piano2.map { $0["id"] as? String } == ["c2", "c3"])
    #expect(piano2.map { $0["timelineStart"] as? Int } == [24_000, 240_000])
    #expect(piano2.map { $0["sourceStart"] as? Int } == [24_000, 72_000])
    #expect(piano2.map { $0["length"] as? Int } == [168_000, 72_000])
    #expect((piano2[0]["fadeOut"] as? [String: Any])?["length"] as? Int == 48_000)
    #expect((piano2[0]["fadeOut"] as? [String: Any])?["curve"] as? String == "sCurve")
  }

  @Test func undoRedoCheckoutAndHistory() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("track", "add", song, "A")
    try ws.tape("track", "add", song, "B")
    try ws.tape("track", "add", song, "C")
    // The mutation object's contract (version, ids empty), and where the head came from.
    func moved(_ arguments: String...) throws -> (version: Int?, ids: Int?, from: Int?) {
      let json = try #require(try parseJSON(ws.tape(arguments).stdout) as? [String: Any])
      return (json["version"] as? Int, (json["ids"] as? [Any])?.count, json["from"] as? Int)
    }
    #expect(try moved("undo", song, "--json") == (3, 0, 4))
    #expect(try moved("undo", song, "--steps", "2", "--json") == (1, 0, 3))
    try ws.tape("undo", song, status: 65)
    #expect(try moved("redo", song, "--steps", "2", "--json") == (3, 0, 1))
    try ws.tape("track", "add", song, "D")  // version 5, a branch from 3
    #expect(try moved("checkout", song, "4", "--json") == (4, 0, 5))
    let names = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    #expect(
      (names["tracks"] as? [[String: Any]])?.map { $0["name"] as? String } == ["A", "B", "C"])
    let past = try #require(
      try parseJSON(ws.tape("ls", song, "--json", "--version", "5").stdout) as? [String: Any])
    #expect((past["tracks"] as? [[String: Any]])?.map { $0["name"] as? String } == ["A", "B", "D"])
    #expect(past["version"] as? Int == 5)

    let history = try #require(
      try parseJSON(ws.tape("history", song, "--json").stdout) as? [String: Any])
    #expect(history["head"] as? Int == 4)
    let versions = try #require(history["versions"] as? [[String: Any]])
    #expect(versions.map { $0["version"] as? Int } == [1, 2, 3, 4, 5])
    #expect(versions.map { $0["parent"] as? Int } == [nil, 1, 2, 3, 3])
    #expect(
      versions.map { $0["label"] as? String } == [
        "New project", "Add track A", "Add track B", "Add track C", "Add track D",
      ])
    #expect(
      versions.allSatisfy {
        ($0["date"] as? String).flatMap(ISO8601DateFormatter.withFractions.date) != nil
      })

    let tree = try ws.tape("history", song).stdout.split(separator: "\n").map { line in
      // Drop the date column, which varies.
      line.replacingOccurrences(
        of: #"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  "#, with: "", options: .regularExpression)
    }
    #expect(
      tree == [
        "1     New project", "2     Add track A", "3     Add track B",
        "├─ 4     Add track C  ← head", "└─ 5     Add track D",
      ])
  }

  @Test func lsShowsAReadableTable() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("tone-mono-44k-24.aiff"))
    try ws.tape("track", "add", song, "Tone", "--gain", "-3", "--pan", "-1")
    try ws.tape(
      "clip", "add", song, "t1", "s1", "--at", "1:00", "--fade-out", "250ms", "--curve",
      "exponential")
    let text = try ws.tape("ls", song).stdout
    #expect(text.contains("version 4 · 48000 Hz · stereo · length 1:02.000"))
    #expect(text.contains("t1 Tone  gain -3 dB  pan L100"))
    #expect(
      text.contains(
        "c1     s1      1:00.000   1:02.000   0:00.000   0 dB     -                  0.25s exponential"
      ))
  }
}

extension ISO8601DateFormatter {
  nonisolated(unsafe) static let withFractions: ISO8601DateFormatter = {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter
  }()
}
