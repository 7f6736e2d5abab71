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
}
