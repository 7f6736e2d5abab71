import Foundation
import Testing

@Suite("tape relink")
struct RelinkTests {
  @Test func relinkFollowsAMovedFileAndRefusesOtherAudio() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    let original = ws.path("speech.wav")
    try FileManager.default.copyItem(
      atPath: TestAudio.path("speech-mono-48k-16.wav"), toPath: original)
    try ws.tape("new", song)
    try ws.tape("import", song, original)
    try ws.tape("track", "add", song, "Voice")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--from", "1s", "--length", "2s")

    let moved = ws.path("moved.wav")
    try FileManager.default.moveItem(atPath: original, toPath: moved)
    try ws.tape("relink", song, "s1", moved)
    let json = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    #expect((json["sources"] as? [[String: Any]])?.first?["path"] as? String == moved)

    // Different audio: refused without --force, project unchanged.
    let before = try ws.fingerprint("song.tape")
    let other = TestAudio.path("tone-mono-44k-24.aiff")
    let refused = try TapeBinary.run(["relink", song, "s1", other], environment: ["NO_COLOR": "1"])
    #expect(refused.status == 65)
    #expect(
      refused.stderr
        == "error: \(other) is not the same audio as source s1 (\(moved)); use --force to relink it anyway\n"
    )
    #expect(try ws.fingerprint("song.tape") == before)

    // With --force a different file is accepted only if every clip fits: the tone is 2 s long
    // and the clip plays 1 s–3 s; the 4 s piano fits.
    let short = try TapeBinary.run(
      ["relink", song, "s1", other, "--force"], environment: ["NO_COLOR": "1"])
    #expect(short.status == 65)
    #expect(
      short.stderr
        == "error: clip c1 plays 1s–3s of source s1, which is only 2s long; end it at 2s or earlier\n"
    )
    #expect(try ws.fingerprint("song.tape") == before)
    try ws.tape("relink", song, "s1", TestAudio.path("piano-stereo-44k-24.wav"), "--force")
    let after = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    let source = try #require((after["sources"] as? [[String: Any]])?.first)
    #expect(source["sampleRate"] as? Int == 44_100)
    #expect(source["channels"] as? Int == 2)
    try ws.tape("undo", song)
  }

  /// `ls` says which sources are missing, marks their clips, and ends with the fix; `--json`
  /// has `missing`, and `projectFrames`, a source's length at the project's rate (what
  /// `--length` takes), beside `frames` at its own.
  @Test func lsMarksMissingSources() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    let copy = ws.path("piano.wav")
    try FileManager.default.copyItem(
      atPath: TestAudio.path("piano-stereo-44k-24.wav"), toPath: copy)
    try ws.tape("import", song, copy)
    try ws.tape("track", "add", song, "Piano")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "1s")
    let fine = try ws.tape("ls", song).stdout
    #expect(!fine.contains("missing") && !fine.contains("! c1"))
    try FileManager.default.removeItem(atPath: copy)
    let text = try ws.tape("ls", song).stdout
    #expect(text.contains("\(copy)  (missing)"))
    #expect(text.contains("\n! c1 "))
    #expect(
      text.hasSuffix(
        "! source s1 is missing (1 clip marked !); point it at its file with 'tape relink \(song) s1 PATH'\n"
      ))
    let json = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    let source = try #require((json["sources"] as? [[String: Any]])?.first)
    #expect(source["missing"] as? Bool == true)
    let frames = try #require(source["frames"] as? Int)
    #expect(source["sampleRate"] as? Int == 44_100)
    #expect(source["projectFrames"] as? Int == Int((Double(frames) * 48_000 / 44_100).rounded()))
    // A render names the fix with this project's path, ready to paste.
    let render = try TapeBinary.run(
      ["render", song, "-o", ws.path("mix.wav")], environment: ["NO_COLOR": "1"])
    #expect(render.status != 0)
    #expect(render.stderr.contains("'tape relink \(song) s1 PATH'"), "\(render.stderr)")
  }
}
