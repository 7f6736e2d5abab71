import Foundation
import Testing

/// `tape marker …` and `@NAME` in time arguments, through the real binary: markers listed,
/// moved, renamed and removed as history; ripple edits moving them; names refused with a
/// clear line that changes nothing.
@Suite("Markers on the command line")
struct MarkerCommandTests {
  /// One track with a 6 s clip of speech (c1), and a marker m1 "chorus" at 2 s.
  static func project(_ space: Workspace) throws -> String {
    let song = space.path("song.tape")
    try space.tape("new", song)
    try space.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try space.tape("track", "add", song, "Voice")
    try space.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "6s")
    #expect(try space.tape("marker", "add", song, "2s", "chorus").stdout == "m1\n")
    return song
  }

  static func markers(_ space: Workspace, _ song: String) throws -> [[String: String]] {
    let list = try #require(
      try parseJSON(space.tape("marker", "ls", song, "--json").stdout) as? [[String: Any]])
    return list.map { $0.mapValues { "\($0)" } }
  }

  @Test func addMoveRenameRemoveAndListAsHistory() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    #expect(try space.tape("marker", "add", song, "@chorus+1:00.5", "outro").stdout == "m2\n")
    #expect(try space.tape("marker", "add", song, "c1.start", "top").stdout == "m3\n")
    #expect(
      try space.tape("marker", "ls", song).stdout
        == "m3   0:00.000   top\nm1   0:02.000   chorus\nm2   1:02.500   outro\n")
    #expect(
      try space.tape("marker", "ls", song, "--frames").stdout
        == "m3   0f         top\nm1   96000f     chorus\nm2   3000000f   outro\n")
    let listing = try #require(
      try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    #expect(
      (listing["markers"] as? [[String: Any]])?.map {
        "\($0["id"] ?? "") \($0["name"] ?? "") \($0["frame"] ?? "")"
      }
        == ["m3 top 0", "m1 chorus 96000", "m2 outro 3000000"])
    #expect(
      try space.tape("ls", song).stdout.contains(
        "\nmarkers m3 \"top\" 0:00.000 · m1 \"chorus\" 0:02.000 · m2 \"outro\" 1:02.500\n"))

    // A nudge from where the marker is; by name as well as by id.
    try space.tape("marker", "move", song, "m1", "--to", "+1s")
    try space.tape("marker", "move", song, "outro", "--to", "-500ms")
    try space.tape("marker", "rename", song, "m1", "refrain")
    try space.tape("marker", "rm", song, "m3")
    #expect(
      try Self.markers(space, song) == [
        ["id": "m1", "name": "refrain", "frame": "144000"],
        ["id": "m2", "name": "outro", "frame": "2976000"],
      ])
    try space.tape("undo", song, "--steps", "2")
    let diff = try space.tape("diff", song, "7", "11").stdout
    #expect(
      diff
        == """
        m1 renamed "chorus" → "refrain", moved 0:02.000 → 0:03.000
        m2 "outro" moved 1:02.500 → 1:02.000
        m3 "top" removed (at 0:00.000)

        """)
    let json = try #require(
      try parseJSON(space.tape("diff", song, "9", "10", "--json").stdout) as? [String: Any])
    let changes = try #require(json["changes"] as? [[String: Any]])
    #expect(changes.count == 1)
    #expect(changes.first?["kind"] as? String == "marker")
    #expect(changes.first?["words"] as? String == #"m1 renamed "chorus" → "refrain""#)
    #expect((changes.first?["before"] as? [String: Any])?["name"] as? String == "chorus")
    #expect((changes.first?["after"] as? [String: Any])?["frame"] as? Int == 144_000)
    // Back to where both undos left it, then forward again: the markers exactly as they were.
    try space.tape("redo", song, "--steps", "2")
    #expect(try Self.markers(space, song).map { $0["name"] } == ["refrain", "outro"])
    try space.tape("checkout", song, "7")
    #expect(
      try Self.markers(space, song) == [
        ["id": "m3", "name": "top", "frame": "0"],
        ["id": "m1", "name": "chorus", "frame": "96000"],
        ["id": "m2", "name": "outro", "frame": "3000000"],
      ])
    // Ids are never reused: after the undo of m3's removal and a new marker, m4.
    #expect(try space.tape("marker", "add", song, "4s", "bridge").stdout == "m4\n")
  }

  /// `@NAME` in the time options of several commands, with offsets.
  @Test func aMarkerNameWorksInEveryTimeArgument() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    try space.tape("marker", "add", song, "4s", "verse")
    try space.tape("track", "add", song, "Bed")
    try space.tape("clip", "add", song, "t2", "s1", "--at", "@chorus-500ms", "--length", "1s")
    try space.tape("clip", "move", song, "c2", "--to", "@verse+250ms")
    try space.tape("split", song, "--at", "@chorus", "--tracks", "t1")
    let listing = try #require(
      try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    #expect(
      RangeAndBatchTests.layout(listing) == [
        ["c1 0 0 96000", "c3 96000 96000 192000"], ["c2 204000 0 48000"],
      ])
    // A cut between two markers, without ripple: the markers stay.
    try space.tape("cut", song, "--from", "@chorus", "--to", "@chorus+1s", "--tracks", "t1")
    #expect(
      try Self.markers(space, song).map { $0["frame"] } == ["96000", "192000"])
    #expect(
      try space.tape("clip", "ls", song, "--from", "@verse", "--to", "@verse+1s").stdout
        .contains("c2"))
    // A render of the second after the chorus marker.
    let render = try #require(
      try parseJSON(
        space.tape(
          "render", song, "-o", space.path("chorus.wav"), "--from", "@chorus", "--to",
          "@chorus+1s", "--json"
        ).stdout) as? [String: Any])
    #expect(render["from"] as? Int == 96_000)
    #expect(render["frames"] as? Int == 48_000)
    // In envelope points too (they were refused as "not a time"): a marker with an offset and
    // a clip's edge, beside a plain time.
    try space.tape(
      "track", "envelope", song, "t1", "--set", "0s:0dB,@chorus:-8dB,c3.end-1s:-inf")
    try space.tape("track", "envelope", song, "t1", "--add", "@verse+0.5s:-3dB")
    let after = try #require(
      try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    let tracks = try #require(after["tracks"] as? [[String: Any]])
    let points = try #require(tracks.first?["envelope"] as? [[String: Any]])
    let c3 = try #require(
      (tracks.first?["clips"] as? [[String: Any]])?.first { $0["id"] as? String == "c3" })
    let c3End = try #require(c3["timelineStart"] as? Int) + (c3["length"] as? Int ?? 0)
    let frames = try Self.markers(space, song).compactMap { Int($0["frame"] ?? "") }
    #expect(
      points.map { $0["frame"] as? Int }
        == [0, frames[0], frames[1] + 24_000, c3End - 48_000].sorted())
    let unknown = try space.tape(
      "track", "envelope", song, "t1", "--set", "0s:0dB,@nope:-3dB", status: 64,
      environment: ["NO_COLOR": "1"])
    #expect(unknown.stderr.hasPrefix("error: @nope: no marker 'nope'"), "\(unknown.stderr)")
  }

  /// Ripple edits move the markers: a cut (the one inside the range to its start, the one
  /// after left by the range's length), an insert, a clip removal with --ripple.
  @Test func rippleEditsMoveMarkers() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    try space.tape("marker", "add", song, "4s", "verse")
    try space.tape("marker", "add", song, "1s", "intro")
    try space.tape("cut", song, "--from", "1.5s", "--to", "2.5s", "--ripple")
    #expect(
      try Self.markers(space, song).map { "\($0["name"] ?? "") \($0["frame"] ?? "")" }
        == ["intro 48000", "chorus 72000", "verse 144000"])
    let undo = try space.tape("undo", song)
    #expect(undo.stdout.contains(#"m1 "chorus" moved 0:01.500 → 0:02.000"#), "\(undo.stdout)")
    #expect(undo.stdout.contains(#"m2 "verse" moved 0:03.000 → 0:04.000"#), "\(undo.stdout)")
    try space.tape("insert", song, "--at", "@chorus", "--length", "1s")
    #expect(
      try Self.markers(space, song).map { "\($0["name"] ?? "") \($0["frame"] ?? "")" }
        == ["intro 48000", "chorus 144000", "verse 240000"])
    try space.tape("undo", song)
    try space.tape("clip", "rm", song, "c1", "--ripple")
    #expect(
      try Self.markers(space, song).map { "\($0["name"] ?? "") \($0["frame"] ?? "")" }
        == ["chorus 0", "verse 0", "intro 0"])
  }

  /// Every refusal is one line that says what to do, and leaves the project as it was.
  /// (Model errors exit 65, as every edit's do; what does not parse, 64.)
  @Test(arguments: [
    (["marker", "add", "FILE", "1s", "chorus"], 65, "marker m1 is already named 'chorus'"),
    (["marker", "add", "FILE", "1s", "m7"], 65, "'m7' looks like an id"),
    (["marker", "add", "FILE", "1s", "42"], 65, "'42' looks like an id"),
    (["marker", "add", "FILE", "1s", "two\nlines"], 65, "holds a control character"),
    (["marker", "add", "FILE", "1s", ""], 65, "cannot be empty"),
    (["marker", "add", "FILE", "1s", "@x"], 65, "starts with @"),
    (["marker", "add", "FILE", "@chorsu", "x"], 64, "no marker 'chorsu'; did you mean 'chorus'?"),
    (["marker", "rename", "FILE", "m2", "y"], 65, "no marker m2"),
    (["marker", "rename", "FILE", "chorsu", "y"], 64, "did you mean 'chorus'?"),
    (["marker", "move", "FILE", "m1", "--to", "-3s"], 64, "before the timeline's start"),
    (["cut", "FILE", "--from", "@chorus", "--to", "@verse"], 64, "no marker 'verse'"),
    (["cut", "FILE", "--from", "@chorus", "--to", "@chorus+1x"], 64, "'1x' is not a time"),
    (["clip", "move", "FILE", "c1", "--to", "@chorus-3s"], 64, "before the timeline's start"),
    (["insert", "FILE", "--at", "@", "--length", "1s"], 64, "'@' names no marker"),
    (["marker", "rm", "FILE", "m1", "m5"], 65, "no marker m5"),
  ])
  func refusalsAreOneLineAndChangeNothing(
    arguments: [String], status: Int32, message: String
  )
    throws
  {
    let space = try Workspace()
    let song = try Self.project(space)
    let before = try space.fingerprint("song.tape")
    let result = try space.tape(arguments.map { $0 == "FILE" ? song : $0 }, status: status)
    #expect(result.stderr.hasPrefix("error: "), "\(result.stderr)")
    #expect(result.stderr.contains(message), "\(result.stderr)")
    #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    #expect(result.stdout == "")
    #expect(try space.fingerprint("song.tape") == before)
  }

  /// A batch takes marker lines and @NAME for markers in times. A word that is exactly @NAME
  /// for a name an earlier line gave with --as is that id (here @chorus is track t2, though a
  /// marker is named chorus too); any other @… word is a marker's time; an @NAME that is
  /// neither says so.
  @Test func aBatchTakesMarkersAndTellsNamesFromMarkers() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    let script = space.path("edits.txt")
    try """
    marker add 4s verse
    track add Bed --as chorus
    clip add @chorus s1 --at @verse-1s --length 1s
    marker move chorus --to @verse+1s
    cut --from @verse --to @verse+500ms --tracks t1 --ripple
    marker add 0.5s bridge --as b
    marker rename @b coda
    """.write(toFile: script, atomically: true, encoding: .utf8)
    #expect(try space.tape("batch", song, script).stdout == "m2\nt2\nc2\nc3\nm3\n")
    #expect(
      try Self.markers(space, song).map { "\($0["name"] ?? "") \($0["frame"] ?? "")" }
        == ["coda 24000", "verse 192000", "chorus 216000"])
    let listing = try #require(
      try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    #expect(RangeAndBatchTests.layout(listing)[1] == ["c2 144000 0 48000"])

    let before = try space.fingerprint("song.tape")
    try "clip add @drums s1 --at 0 --length 1s\n".write(
      toFile: script, atomically: true, encoding: .utf8)
    let failed = try space.tape("batch", song, script, status: 64)
    #expect(
      failed.stderr
        == "error: line 1: @drums is not named by an earlier line (name an id with --as NAME), nor a marker ('tape marker ls' lists them)\n"
    )
    #expect(try space.fingerprint("song.tape") == before)
  }
}
