import Foundation
import ReferenceRenders
import Testing

/// `tape render --tracks` and `--stems`: each track as it plays in the mix, lined up with it.
@Suite("Stems")
struct StemTests {
  /// The stems of every track add up to the mix, sample for sample (32-bit float); a track the
  /// mix does not hear (muted, or not soloed) gets no stem, and a note says so, so that the
  /// files written still add up to the mix (a muted track's stem was written playing: the
  /// stems minus the mix peaked at -16 dBFS); --all-tracks writes every track as if none were
  /// muted; --no-master-gain leaves the master gain out; --tracks of every track is the mix.
  @Test func stemsAddUpToTheMix() throws {
    let space = try Workspace()
    let file = space.path("song.tape")
    try space.tape("new", file)
    try space.tape(
      "import", file, TestAudio.path("speech-mono-48k-16.wav"),
      TestAudio.path("piano-stereo-44k-24.wav"))
    try space.tape("track", "add", file, "Voice / lead", "--pan", "-0.3")
    try space.tape("track", "add", file, "Piano", "--gain", "-2dB")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "3s")
    try space.tape("clip", "add", file, "t2", "s2", "--at", "1s", "--length", "3s")
    try space.tape("track", "envelope", file, "t1", "--set", "0s:0dB,2s:-12dB")
    try space.tape("master", file, "--gain", "-3dB")
    func render(_ arguments: String...) throws {
      try space.tape(["render", file, "--bits", "32f"] + arguments)
    }
    func read(_ name: String) throws -> [Float] { try ReferenceRender.decode(space.path(name)) }

    try render("-o", space.path("mix.wav"))
    try render("--stems", space.path("stems"))
    let files = try FileManager.default.contentsOfDirectory(atPath: space.path("stems")).sorted()
    #expect(files == ["t1-Voice___lead.wav", "t2-Piano.wav"])
    let mix = try read("mix.wav")
    let voice = try read("stems/t1-Voice___lead.wav")
    let piano = try read("stems/t2-Piano.wav")
    #expect(voice.count == mix.count && piano.count == mix.count)
    let worst = zip(mix, zip(voice, piano)).map { abs($0 - ($1.0 + $1.1)) }.max() ?? 1
    #expect(worst < 1e-6, "the stems add up to the mix within \(worst)")
    #expect(voice.contains { $0 != 0 } && piano.contains { $0 != 0 })

    // Muted: the mix is the voice alone, and so are the stems written.
    try space.tape("track", "set", file, "t2", "--mute")
    try render("-o", space.path("muted.wav"))
    let muted = try space.tape(
      "render", file, "--bits", "32f", "--stems", space.path("heard"),
      environment: ["NO_COLOR": "1"])
    #expect(
      muted.stderr.hasPrefix(
        "note: no stem for t2 Piano (muted): the mix does not hear it; --all-tracks writes every track\n"
      ), "\(muted.stderr)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: space.path("heard")) == [
        "t1-Voice___lead.wav"
      ])
    #expect(try read("heard/t1-Voice___lead.wav") == (try read("muted.wav")))
    // Every track as if none were muted: the stems as before.
    try render("--stems", space.path("all"), "--all-tracks")
    #expect(try read("all/t2-Piano.wav") == piano)
    #expect(try read("all/t1-Voice___lead.wav") == voice)

    // Soloed too: the same; a solo on the muted track leaves nothing heard, and the refusal
    // names the fix, which works.
    try space.tape("track", "set", file, "t1", "--solo")
    try render("-o", space.path("solo.wav"))
    #expect(try read("solo.wav") == voice)
    try space.tape("track", "set", file, "t1", "--unsolo", "--mute")
    let none = try space.tape(
      "render", file, "--stems", space.path("none"), status: 65, environment: ["NO_COLOR": "1"])
    #expect(
      none.stderr.hasSuffix(
        "error: the mix hears no track (every one is muted), so no stems; unmute one, or give --all-tracks\n"
      ), "\(none.stderr)")
    try render("--stems", space.path("none"), "--all-tracks")
    try space.tape("track", "set", file, "t1", "--solo", "--unmute")
    try render("--tracks", "t2", "-o", space.path("piano.wav"))
    #expect(try read("piano.wav") == piano)
    try render("--tracks", "t1,t2", "-o", space.path("both.wav"))
    #expect(try read("both.wav") == mix)

    // Without the master gain: 3 dB louder, sample for sample.
    try render("--tracks", "t1", "-o", space.path("raw.wav"), "--no-master-gain")
    let gain = Float(pow(10, 3.0 / 20))
    let raw = try read("raw.wav")
    #expect(zip(raw, voice).allSatisfy { abs($0 - $1 * gain) < 1e-6 })

    let refused = try space.tape(
      "render", file, "--tracks", "t9", "-o", space.path("x.wav"), status: 65,
      environment: ["NO_COLOR": "1"])
    #expect(refused.stderr == "error: no track t9 in this project; 'tape ls' lists the tracks\n")
    let both = try space.tape(
      "render", file, "--stems", space.path("stems"), "--tracks", "t1", status: 64,
      environment: ["NO_COLOR": "1"])
    #expect(
      both.stderr.hasPrefix("error: --stems writes every track; give --tracks with -o instead"))
  }

  /// A stem whose file would be a source of the project is refused before any stem is
  /// written: the other stems are not written either, the source is unchanged, and the message
  /// names --stems, the option given.
  @Test func aStemOverASourceIsRefusedBeforeAnyIsWritten() throws {
    let space = try Workspace()
    let file = space.path("st.tape")
    try space.tape("new", file)
    try space.tape("import", file, TestAudio.path("speech-mono-48k-16.wav"))
    try space.tape("track", "add", file, "Voice")
    try space.tape("track", "add", file, "Piano")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0")
    let out = space.path("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
    let piano = out + "/t2-Piano.wav"
    try FileManager.default.copyItem(
      atPath: TestAudio.path("tone-mono-44k-24.aiff"), toPath: piano)
    try space.tape("import", file, piano)
    let before = try Data(contentsOf: URL(fileURLWithPath: piano))
    let project = try space.fingerprint("st.tape")

    let refused = try space.tape(
      "render", file, "--stems", out, status: 64, environment: ["NO_COLOR": "1"])
    #expect(
      refused.stderr
        == "error: --stems \(out) would write the stem \(piano), which is a source of this project; rendering there would destroy it, so give --stems another folder\n"
    )
    #expect(refused.stdout == "")
    #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["t2-Piano.wav"])
    #expect(try Data(contentsOf: URL(fileURLWithPath: piano)) == before)
    #expect(try space.fingerprint("st.tape") == project)

    // Another folder takes the stems.
    try space.tape("render", file, "--stems", space.path("stems"))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: space.path("stems")).sorted() == [
        "t1-Voice.wav", "t2-Piano.wav",
      ])
  }
}
