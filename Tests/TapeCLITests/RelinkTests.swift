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
    // Inside the project's folder: kept relative to it.
    #expect((json["sources"] as? [[String: Any]])?.first?["path"] as? String == "moved.wav")

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
    #expect(text.contains("piano.wav  (missing)"))
    #expect(text.contains("\n! c1 "))
    #expect(
      text.hasSuffix(
        "! source s1 is missing (1 clip marked !); point it at its file with 'tape relink \(song) s1 PATH', or find it in a folder with 'tape relink \(song) --folder DIR'\n"
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

/// Paths as bytes, relative sources, and `relink --folder`.
@Suite("Source paths")
struct SourcePathTests {
  /// Runs `tape` through bash so that arguments can hold any bytes: `$'caf\xe9.wav'`.
  static func bash(_ script: String, in ws: Workspace) throws -> TapeBinary.Result {
    try TapeBinary.run(
      URL(fileURLWithPath: "/bin/bash"), ["-c", script, TapeBinary.url.path],
      environment: ["NO_COLOR": "1"], directory: ws.url)
  }

  @Test func aFileNameThatIsNotUTF8IsImportedRenderedAndKeptExactly() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    let copy = try Self.bash(
      "cp '\(TestAudio.path("speech-mono-48k-16.wav"))' $'caf\\xe9.wav' && cp '\(TestAudio.path("speech-mono-48k-16.wav"))' plain.wav",
      in: ws)
    #expect(copy.status == 0)
    let imported = try Self.bash(#""$0" import song.tape $'caf\xe9.wav' plain.wav"#, in: ws)
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(imported.stdout == "s1\ns2\n")
    try ws.tape("track", "add", song, "A")
    try ws.tape("track", "add", song, "B")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "1s")
    try ws.tape("clip", "add", song, "t2", "s2", "--at", "1s", "--length", "1s")

    // Shown escaped, kept as bytes: the JSON has the readable form and the exact bytes.
    let listing = try ws.tape("ls", song).stdout
    #expect(listing.contains("caf\\xE9.wav"))
    let json = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    let sources = try #require(json["sources"] as? [[String: Any]])
    #expect(sources[0]["path"] as? String == "caf\\xE9.wav")
    #expect(sources[0]["pathHex"] as? String == "636166e92e776176")
    #expect(sources[1]["pathHex"] == nil)

    // The render reads it: the same audio from either name, sample for sample.
    try ws.tape("render", song, "-o", ws.path("both.wav"), "--bits", "32f")
    try ws.tape("clip", "move", song, "c2", "--track", "t1", "--to", "1s")
    try ws.tape("clip", "set", song, "c1", "--gain", "0")
    let samples = try Self.bash(
      #""$0" render song.tape -o moved.wav --bits 32f >/dev/null && cmp both.wav moved.wav"#,
      in: ws)
    #expect(samples.status == 0, "\(samples.stdout) \(samples.stderr)")

    // A relink to another odd name, undone and redone: the bytes survive the history.
    let relinked = try Self.bash(
      #"cp plain.wav $'\xff\xfe.wav' && "$0" relink song.tape s2 $'\xff\xfe.wav'"#, in: ws)
    #expect(relinked.status == 0, "\(relinked.stderr)")
    try ws.tape("undo", song)
    try ws.tape("redo", song)
    let redone = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    let after = try #require(redone["sources"] as? [[String: Any]])
    #expect(after[1]["pathHex"] as? String == "fffe2e776176")
    #expect(after[1]["missing"] as? Bool == false)
    try ws.tape("render", song, "-o", ws.path("again.wav"), "--bits", "32f")

    // A render through a symlink to the Latin-1 source is refused: it is a source, and its
    // name cannot be followed as text (it used to write a new file named with U+FFFD).
    let over = try Self.bash(
      #"ln -s $'caf\xe9.wav' link.wav && "$0" render song.tape -o link.wav"#, in: ws)
    #expect(over.status == 74)
    #expect(
      over.stderr
        == "error: link.wav is a symlink to 'caf\\xE9.wav', a name that is not valid UTF-8; write to a file with a UTF-8 name\n"
    )
    let intact = try Self.bash(
      #"cmp $'caf\xe9.wav' plain.wav && ls | grep -c $'\xef\xbf\xbd'"#, in: ws)
    #expect(intact.stdout == "0\n", "\(intact.stdout) \(intact.stderr)")
  }

  /// Where UTF-8 is needed (a name, the project's path, a render's output) an argument that is
  /// not UTF-8 is one line, exit 64, and nothing changes.
  @Test func textArgumentsThatAreNotUTF8AreRefusedInOneLine() throws {
    let ws = try Workspace()
    try ws.tape("new", ws.path("song.tape"))
    let before = try ws.fingerprint("song.tape")
    for (script, expected) in [
      (
        #""$0" track add song.tape $'Dr\xfcms'"#,
        "error: the track name 'Dr\\xFCms' is not valid UTF-8; write it in UTF-8; see: tape track add --help\n"
      ),
      (
        #""$0" new $'caf\xe9.tape'"#,
        "error: the project path 'caf\\xE9.tape' is not valid UTF-8; Tape reads audio files by any name, but needs a UTF-8 name here: rename it; see: tape new --help\n"
      ),
      (
        #""$0" render song.tape -o $'mix\xe9.wav'"#,
        "error: the output path 'mix\\xE9.wav' is not valid UTF-8; Tape reads audio files by any name, but needs a UTF-8 name here: rename it; see: tape render --help\n"
      ),
    ] {
      let result = try Self.bash(script, in: ws)
      #expect(result.status == 64)
      #expect(result.stderr == expected)
    }
    #expect(try ws.fingerprint("song.tape") == before)
    #expect(!FileManager.default.fileExists(atPath: ws.path("caf\u{FFFD}.tape")))
  }

  /// A source inside the project's folder is kept relative to it: move the folder, and the
  /// project still plays; a source outside stays absolute.
  @Test func aProjectFolderMovesWithItsAudio() throws {
    let ws = try Workspace()
    let folder = ws.path("session")
    try FileManager.default.createDirectory(
      atPath: folder + "/audio", withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: TestAudio.path("piano-stereo-44k-24.wav"), toPath: folder + "/audio/piano.wav")
    let song = folder + "/song.tape"
    try ws.tape("new", song)
    try ws.tape(
      "import", song, folder + "/audio/./piano.wav", TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "Piano")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "2s")
    try ws.tape("clip", "add", song, "t1", "s2", "--at", "2s", "--length", "1s")
    let json = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    let sources = try #require(json["sources"] as? [[String: Any]])
    #expect(sources[0]["path"] as? String == "audio/piano.wav")
    #expect(sources[0]["absolutePath"] as? String == folder + "/audio/piano.wav")
    #expect(sources[1]["path"] as? String == TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("render", song, "-o", ws.path("before.wav"))

    // Moved, and used from another working folder by a relative project path.
    try FileManager.default.moveItem(atPath: folder, toPath: ws.path("moved"))
    let moved = ws.path("moved/song.tape")
    #expect(!(try ws.tape("ls", moved).stdout.contains("missing")))
    let render = try TapeBinary.run(
      ["render", "moved/song.tape", "-o", "after.wav"], directory: ws.url)
    #expect(render.status == 0, "\(render.stderr)")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: ws.path("after.wav")))
        == Data(contentsOf: URL(fileURLWithPath: ws.path("before.wav"))))
  }

  /// `relink --folder` finds every missing source by name and audio, in one version.
  @Test func relinkFolderFindsMissingSourcesByNameAndAudio() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    let old = ws.path("old")
    try FileManager.default.createDirectory(atPath: old, withIntermediateDirectories: true)
    for (name, audio) in [
      ("piano.wav", "piano-stereo-44k-24.wav"), ("speech.wav", "speech-mono-48k-16.wav"),
      ("tone.aiff", "tone-mono-44k-24.aiff"),
    ] {
      try FileManager.default.copyItem(atPath: TestAudio.path(audio), toPath: "\(old)/\(name)")
    }
    try ws.tape("import", song, old + "/piano.wav", old + "/speech.wav", old + "/tone.aiff")
    try ws.tape("track", "add", song, "All")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "1s")
    try ws.tape("clip", "add", song, "t1", "s2", "--at", "1s", "--length", "1s")
    try ws.tape("render", song, "-o", ws.path("before.wav"))
    let headBefore = try ws.head(of: song)

    // The files move: piano into a subfolder; speech.wav's name now holds other audio; tone
    // is nowhere.
    let new = ws.path("new")
    try FileManager.default.createDirectory(
      atPath: new + "/deep/er", withIntermediateDirectories: true)
    try FileManager.default.moveItem(atPath: old + "/piano.wav", toPath: new + "/deep/er/piano.wav")
    try FileManager.default.copyItem(
      atPath: TestAudio.path("piano-stereo-44k-24.wav"), toPath: new + "/speech.wav")
    try FileManager.default.removeItem(atPath: old)

    // Nothing to find in an empty folder: exit 66, one line, nothing changes.
    try FileManager.default.createDirectory(
      atPath: ws.path("empty"), withIntermediateDirectories: true)
    let fingerprint = try ws.fingerprint("song.tape")
    let none = try TapeBinary.run(
      ["relink", song, "--folder", ws.path("empty")], environment: ["NO_COLOR": "1"])
    #expect(none.status == 66)
    #expect(
      none.stderr
        == "error: no missing source was found under \(ws.path("empty")): s1 (piano.wav: no file of that name), s2 (speech.wav: no file of that name), s3 (tone.aiff: no file of that name); relink them one by one with 'tape relink \(song) ID PATH'\n"
    )
    #expect(try ws.fingerprint("song.tape") == fingerprint)

    let result = try TapeBinary.run(
      ["relink", song, "--folder", new, "--json"], environment: ["NO_COLOR": "1"])
    #expect(result.status == 0)
    #expect(
      result.stderr
        == "warning: not found under \(new): s2 (speech.wav: only different audio), s3 (tone.aiff: no file of that name)\n"
    )
    let output = try #require(try parseJSON(result.stdout) as? [String: Any])
    #expect(output["ids"] as? [String] == ["s1"])
    #expect(try ws.head(of: song) == headBefore + 1)
    let json = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    let sources = try #require(json["sources"] as? [[String: Any]])
    #expect(
      sources.map { $0["path"] as? String } == [
        "new/deep/er/piano.wav", "old/speech.wav", "old/tone.aiff",
      ])
    #expect(sources.map { $0["missing"] as? Bool } == [false, true, true])

    // The found one plays as before; speech put back by hand, the render is the old one.
    try FileManager.default.copyItem(
      atPath: TestAudio.path("speech-mono-48k-16.wav"), toPath: new + "/deep/speech.wav")
    let second = try TapeBinary.run(["relink", song, "--folder", new])
    #expect(second.status == 0 && second.stdout == "s2\n", "\(second.stderr)")
    try ws.tape("render", song, "-o", ws.path("after.wav"))
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: ws.path("after.wav")))
        == Data(contentsOf: URL(fileURLWithPath: ws.path("before.wav"))))
    try ws.tape("undo", song)
    let undone = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    #expect((undone["sources"] as? [[String: Any]])?[1]["path"] as? String == "old/speech.wav")
  }
}
