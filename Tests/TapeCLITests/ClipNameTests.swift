import Foundation
import Testing

/// Clip names (issue 23): `--name` on `clip add`/`clip set`, shown by `ls`, taken as `@NAME`
/// where a clip id is taken, said by `diff`, kept by history.
@Suite("Clip names")
struct ClipNameTests {
  static func clipsJSON(_ ws: Workspace, _ song: String) throws -> [[String: Any]] {
    let json = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    return ((json["tracks"] as? [[String: Any]]) ?? []).flatMap {
      ($0["clips"] as? [[String: Any]]) ?? []
    }
  }

  @Test func aNamedClipIsCalledByItsName() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "Voice")
    try ws.tape("marker", "add", song, "3s", "chorus")
    #expect(
      try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "2s", "--name", "intro")
        .stdout == "c1\n")
    #expect(try ws.tape("ls", song).stdout.contains("@intro"))
    #expect(try Self.clipsJSON(ws, song).map { $0["name"] as? String } == ["intro"])

    // @intro where a clip is taken; @chorus, a marker, where a time is.
    try ws.tape("clip", "set", song, "@intro", "--gain", "-3")
    try ws.tape("clip", "move", song, "@intro", "--to", "@chorus")
    var clips = try Self.clipsJSON(ws, song)
    #expect(clips.first?["timelineStart"] as? Int == 144_000)
    #expect(clips.first?["gainDB"] as? Double == -3)

    // A split's right part and a copy have no name; the left part keeps it.
    #expect(try ws.tape("clip", "split", song, "@intro", "--at", "4s").stdout == "c1\nc2\n")
    #expect(try ws.tape("clip", "copy", song, "@intro", "--to", "10s").stdout == "c3\n")
    clips = try Self.clipsJSON(ws, song)
    #expect(clips.map { $0["name"] as? String } == ["intro", nil, nil])
    #expect(clips.map { $0["name"] is NSNull } == [false, true, true])

    // Names are unique, in a name's form, and an unknown one is said as such; nothing changes.
    let before = try ws.fingerprint("song.tape")
    for (arguments, status, message) in [
      (
        ["clip", "set", song, "c2", "--name", "intro"], Int32(65),
        "error: clip c1 is already named 'intro'; clip names are unique (rename it with 'tape clip set \(song) c1 --name NAME', or choose another name)\n"
      ),
      (
        ["clip", "set", song, "c2", "--name", "c7"], 64,
        "error: 'c7' is not a clip name; use 1 to 64 letters, digits, '-', '_' and '.', starting with a letter or digit, and not an id's form such as c3\n"
      ),
      (
        ["clip", "rm", song, "@outro"], 65,
        "error: no clip is named 'outro'; 'tape ls' shows the clips' names\n"
      ),
    ] {
      let result = try TapeBinary.run(arguments, environment: ["NO_COLOR": "1"])
      #expect(result.status == status, "\(arguments)")
      #expect(result.stderr == message)
    }
    #expect(try ws.fingerprint("song.tape") == before)

    // Renamed, said by diff; undo brings the old name back; --no-name removes it.
    let head = try ws.head(of: song)
    try ws.tape("clip", "set", song, "@intro", "--name", "verse")
    #expect(
      try ws.tape("diff", song, "\(head)", "\(head + 1)").stdout
        == "c1 renamed \"intro\" → \"verse\"\n")
    try ws.tape("undo", song)
    #expect(try Self.clipsJSON(ws, song).first?["name"] as? String == "intro")
    try ws.tape("redo", song)
    try ws.tape("clip", "set", song, "@verse", "--no-name")
    #expect(try Self.clipsJSON(ws, song).first?["name"] is NSNull)
    #expect(try ws.tape("history", song).stdout.contains("Set @verse no name"))

    // In a batch too; a name given by --as wins over a clip's.
    let script = ws.path("edits.txt")
    try "clip set c2 --name bridge\nclip set @bridge --gain -6\n".write(
      toFile: script, atomically: true, encoding: .utf8)
    try ws.tape("batch", song, script)
    #expect(try Self.clipsJSON(ws, song)[1]["gainDB"] as? Double == -6)
  }

  /// `@NAME.start` and `@NAME.end` are a named clip's edges wherever a time is taken, as
  /// `c3.start`/`c3.end` are by id (they were read as a marker called `verse.end`), with an
  /// offset; a marker whose name is the text after `@` (up to the offset) is read first.
  @Test func aNamedClipsEdgesAreTimes() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "Voice")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "1s")
    try ws.tape(
      "clip", "add", song, "t1", "s1", "--at", "3s", "--length", "2s", "--name", "verse")
    let starts = { try Self.clipsJSON(ws, song).map { $0["timelineStart"] as? Int } }

    // Scoped (clip move reads only the clips it names) and whole (cut reads all).
    try ws.tape("clip", "move", song, "c1", "--to", "@verse.end")
    #expect(try starts() == [144_000, 240_000])
    try ws.tape("clip", "move", song, "c1", "--to", "@verse.start-2s")
    #expect(try starts() == [48_000, 144_000])
    try ws.tape("cut", song, "--from", "@verse.start+1s", "--to", "@verse.end")
    #expect(try Self.clipsJSON(ws, song).map { $0["length"] as? Int } == [48_000, 48_000])

    let unknown = try TapeBinary.run(
      ["clip", "move", song, "c1", "--to", "@chorus.end"], environment: ["NO_COLOR": "1"])
    #expect(unknown.status == 65)
    #expect(
      unknown.stderr == "error: no clip is named 'chorus'; 'tape ls' shows the clips' names\n")

    // A marker called verse.end is read first.
    try ws.tape("marker", "add", song, "7s", "verse.end")
    try ws.tape("clip", "move", song, "c1", "--to", "@verse.end+1s")
    #expect(try starts() == [144_000, 384_000])
  }
}
