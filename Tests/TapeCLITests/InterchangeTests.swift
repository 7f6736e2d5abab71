import Foundation
import Testing

/// The OpenTimelineIO reference implementation (PyPI opentimelineio 0.18.1 and
/// otio-cmx3600-adapter), which `scripts/setup.sh` installs into `.venv` at the top of the
/// checkout, driven through Tests/Support/otio-check.py.
enum ReferenceOTIO {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardizedFileURL

  /// `TAPE_REFERENCE_PYTHON`, else the setup script's virtualenv.
  static var python: String {
    ProcessInfo.processInfo.environment["TAPE_REFERENCE_PYTHON"]
      ?? root.appendingPathComponent(".venv/bin/python").path
  }

  /// Runs the checker with `arguments` and returns what it printed; fails the test, saying how
  /// to install it, when the reference library is missing (CI installs it: never a skip).
  static func check(
    _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
  )
    throws -> String
  {
    try #require(
      FileManager.default.isExecutableFile(atPath: python),
      "the OpenTimelineIO reference library is missing: run scripts/setup.sh (it installs opentimelineio 0.18.1 and otio-cmx3600-adapter into .venv), or set TAPE_REFERENCE_PYTHON",
      sourceLocation: sourceLocation)
    let script = root.appendingPathComponent("Tests/Support/otio-check.py").path
    let result = try TapeBinary.run(URL(fileURLWithPath: python), [script] + arguments)
    try #require(
      result.status == 0, "otio-check.py \(arguments.joined(separator: " ")): \(result.stderr)",
      sourceLocation: sourceLocation)
    return result.stdout
  }

  /// The checker's lines as tab-separated fields.
  static func rows(_ text: String) -> [[String]] {
    text.split(separator: "\n").map {
      $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
    }
  }
}

@Suite("OpenTimelineIO and EDL interchange")
struct InterchangeTests {
  /// A project with what an export must carry: two tracks, overlapping clips on one (a
  /// crossfade), gaps, fades of every curve, clip and track gains, pan, mute, solo, an
  /// envelope, a marker, the master gain, effects on a track and the master, and a source no
  /// clip uses.
  func demoProject(_ ws: Workspace) throws -> String {
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    // A name a URL must escape: a space, '#', '%', a letter beyond ASCII.
    let piano = ws.path("piano take #2 100% ü.wav")
    try FileManager.default.copyItem(
      atPath: TestAudio.path("piano-stereo-44k-24.wav"), toPath: piano)
    try ws.tape(
      "import", song, TestAudio.path("speech-mono-48k-16.wav"), piano,
      TestAudio.path("strings-stereo-48k-float.wav"))
    try ws.tape("track", "add", song, "Voice", "--gain", "-3dB", "--pan", "0.25")
    try ws.tape("track", "add", song, "Piano", "--pan", "-0.5")
    try ws.tape(
      "clip", "add", song, "t1", "s1", "--at", "1s", "--length", "3s", "--fade-in", "50ms",
      "--fade-out", "300ms", "--gain", "-2dB")
    try ws.tape(
      "clip", "add", song, "t1", "s1", "--at", "3.5s", "--from", "1s", "--length", "1s",
      "--fade-in", "0.5s", "--curve", "equal-power")
    try ws.tape(
      "clip", "add", song, "t2", "s2", "--at", "0", "--length", "2s", "--fade-in", "1s",
      "--curve", "s-curve")
    try ws.tape(
      "clip", "add", song, "t2", "s2", "--at", "2.5s", "--from", "2s", "--length", "1s",
      "--fade-out", "0.25s", "--curve", "exponential")
    try ws.tape("track", "set", song, "t2", "--solo")
    try ws.tape("track", "envelope", song, "t1", "--set", "0s:0dB,2s:-6,3s:-inf")
    try ws.tape("marker", "add", song, "1s", "chorus")
    try ws.tape("master", song, "--gain", "-1dB")
    try ws.tape("fx", "add", song, "t1", "http://gareus.org/oss/lv2/fil4#stereo")
    try ws.tape("fx", "add", song, "master", "http://gareus.org/oss/lv2/dpl#stereo", "--bypass")
    return song
  }

  func listing(_ ws: Workspace, _ song: String) throws -> [String: Any] {
    try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
  }

  /// `value` without ids, id references and the version: what must survive a round trip.
  func withoutIDs(_ value: Any) -> Any {
    if let object = value as? [String: Any] {
      return object.filter { !["id", "source", "version"].contains($0.key) }.mapValues(withoutIDs)
    }
    if let array = value as? [Any] { return array.map(withoutIDs) }
    return value
  }

  /// The sample data of a WAV file (its `data` chunk).
  func pcm(_ path: String) throws -> Data {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    var offset = 12
    while offset + 8 <= bytes.count {
      let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
      let size = bytes[offset + 4..<offset + 8].enumerated().reduce(0) {
        $0 | Int($1.element) << (8 * $1.offset)
      }
      if id == "data" { return bytes[offset + 8..<min(bytes.count, offset + 8 + size)] }
      offset += 8 + size + size % 2
    }
    Issue.record("no data chunk in \(path)")
    return Data()
  }

  /// The reference library reads the export; each clip's track, start, duration, crop and file
  /// are those of `tape ls --json`; the overlapping clips of Voice are on a second track named
  /// after it; every fade is also a dissolve; the muted track is disabled.
  @Test func theReferenceLibraryReadsTheExport() throws {
    let ws = try Workspace()
    let song = try demoProject(ws)
    try ws.tape("track", "set", song, "t1", "--mute")
    let out = ws.path("edit.otio")
    #expect(try ws.tape("export", song, "-o", out).stdout == out + "\n")
    let text = try String(contentsOfFile: out, encoding: .utf8)
    #expect(!text.contains("\"tracks\": null") && !text.contains("\"children\": null"))
    #expect(text.contains("/piano%20take%20%232%20100%25%20%C3%BC.wav\""))
    let rows = ReferenceOTIO.rows(try ReferenceOTIO.check(["read", out, "48000"]))
    let tracks = rows.filter { $0[0] == "track" }.map { Array($0[1...]) }
    #expect(
      tracks == [
        ["Voice", "Audio", "disabled"], ["Voice (2)", "Audio", "disabled"],
        ["Piano", "Audio", "enabled"],
      ])
    let project = try listing(ws, song)
    let sources = try #require(project["sources"] as? [[String: Any]])
    let files = Dictionary(
      uniqueKeysWithValues: sources.map {
        ($0["id"] as? String ?? "", $0["absolutePath"] as? String ?? "")
      })
    var expected: Set<[String]> = []
    var fades: Set<[String]> = []
    for track in try #require(project["tracks"] as? [[String: Any]]) {
      let name = track["name"] as? String ?? ""
      for clip in track["clips"] as? [[String: Any]] ?? [] {
        let url = files[clip["source"] as? String ?? ""] ?? ""
        expected.insert([
          name, "\(clip["timelineStart"] ?? "")", "\(clip["length"] ?? "")",
          "\(clip["sourceStart"] ?? "")", url,
        ])
        for (key, column) in [("fadeIn", "out"), ("fadeOut", "in")] {
          let length = (clip[key] as? [String: Any])?["length"] as? Int ?? 0
          if length > 0 { fades.insert([name, column, "\(length)"]) }
        }
      }
    }
    let clips = rows.filter { $0[0] == "clip" }
    let base = { (lane: String) in lane.replacingOccurrences(of: " (2)", with: "") }
    #expect(Set(clips.map { [base($0[1])] + $0[2...] }) == expected)
    #expect(clips.count == expected.count)
    #expect(clips.filter { $0[1] == "Voice (2)" }.count == 1)
    let transitions = rows.filter { $0[0] == "transition" }
    #expect(transitions.allSatisfy { $0[4] == "SMPTE_Dissolve" })
    var seen: Set<[String]> = []
    for row in transitions {
      if row[2] != "0" { seen.insert([base(row[1]), "in", row[2]]) }
      if row[3] != "0" { seen.insert([base(row[1]), "out", row[3]]) }
    }
    #expect(seen == fades)
  }

  /// Export, then import into a new project: `ls --json` is the original's (ids aside), the
  /// render is the original's bit for bit, and the import is one version that one undo empties.
  /// Clip names and fades a range edit cut through come back too (both were lost: found by a
  /// user trial).
  @Test func aRoundTripIsExact() throws {
    let ws = try Workspace()
    let song = try demoProject(ws)
    try ws.tape("clip", "set", song, "c1", "--name", "intro")
    // Through c1's fade-out (3.7–4 s) and c2's fade-in (3.5–4 s): both keep cut curves.
    try ws.tape("cut", song, "--from", "3.8s", "--to", "3.9s", "--tracks", "t1")
    let cut = try #require(
      try parseJSON(ws.tape("clip", "ls", song, "--json").stdout) as? [[String: Any]])
    #expect(cut.contains { $0["name"] as? String == "intro" })
    let out = ws.path("edit.otio")
    try ws.tape("export", song, "-o", out)
    let back = ws.path("back.tape")
    let imported = try ws.tape("import-otio", out, back)
    #expect(imported.stdout == "t1\nt2\n")
    #expect(imported.stderr == "")
    let original = try listing(ws, song)
    let copy = try listing(ws, back)
    let canonical = { (value: Any) throws -> String in
      String(
        decoding: try JSONSerialization.data(
          withJSONObject: withoutIDs(value), options: [.sortedKeys, .withoutEscapingSlashes]),
        as: UTF8.self)
    }
    let expected = try canonical(original)
    #expect(expected.contains("\"plugin\":\"http://gareus.org/oss/lv2/fil4#stereo\""))
    #expect(try canonical(copy) == expected)
    try ws.tape("render", song, "-o", ws.path("a.wav"), "--bits", "32f")
    try ws.tape("render", back, "-o", ws.path("b.wav"), "--bits", "32f")
    let mix = try pcm(ws.path("a.wav"))
    #expect(mix.count > 100_000)
    #expect(mix == (try pcm(ws.path("b.wav"))))
    // Every track as it plays, its mute and solo aside (Piano is soloed, so the mix alone
    // would not hear Voice).
    try ws.tape("render", song, "--stems", ws.path("a"), "--bits", "32f", "--all-tracks")
    try ws.tape("render", back, "--stems", ws.path("b"), "--bits", "32f", "--all-tracks")
    for stem in ["t1-Voice.wav", "t2-Piano.wav"] {
      let original = try pcm(ws.path("a/" + stem))
      #expect(original.contains { $0 != 0 })
      #expect(original == (try pcm(ws.path("b/" + stem))), "\(stem)")
    }
    let history = try #require(
      try parseJSON(ws.tape("history", back, "--json").stdout) as? [String: Any])
    #expect((history["versions"] as? [Any])?.count == 2)
    try ws.tape("undo", back)
    #expect((try listing(ws, back)["tracks"] as? [Any])?.count == 0)
    // An existing project is never overwritten.
    let before = try ws.fingerprint("back.tape")
    let again = try ws.tape("import-otio", out, back, status: 64)
    #expect(
      again.stderr
        == "error: \(back) already exists; import-otio makes a new project: name a file that does not exist, or remove \(back) first\n"
    )
    #expect(try ws.fingerprint("back.tape") == before)
  }

  /// Routing and automation survive an export and import: a track's output, a send with its
  /// envelope, a pan lane, a side chain and an effect parameter's lane come back as they were
  /// (`ls --json` equal, every id included, as the new project numbers them alike), the
  /// render bit for bit, and the import is still one version.
  @Test func aRoundTripKeepsRoutingAndAutomation() throws {
    let compressor = "http://lsp-plug.in/plugins/lv2/sc_compressor_stereo"
    try Plugins.require(compressor)
    let ws = try Workspace()
    let song = ws.path("routed.tape")
    try ws.tape("new", song)
    try ws.tape(
      "import", song, TestAudio.path("speech-mono-48k-16.wav"),
      TestAudio.path("strings-stereo-48k-float.wav"))
    for name in ["Voice", "Music", "Bus"] { try ws.tape("track", "add", song, name) }
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "3s")
    try ws.tape("clip", "add", song, "t2", "s2", "--at", "0", "--length", "3s")
    try ws.tape("track", "set", song, "Voice", "--output", "Bus")
    try ws.tape("send", "add", song, "Music", "Bus", "--gain", "-6", "--pan", "0.3")
    try ws.tape("send", "envelope", song, "n1", "--set", "0.5s:-inf,1.5s:0dB", "--shape", "linear")
    try ws.tape("track", "envelope", song, "Music", "--pan", "--set", "0s:-1,2s:1")
    try ws.tape(
      "fx", "add", song, "Music", compressor, "--sidechain", "Voice", "--set", "sct=External",
      "--set", "al=-30dB")
    try ws.tape("fx", "envelope", song, "f1", "cr", "--set", "0s:1,2s:20")
    let out = ws.path("routed.otio")
    try ws.tape("export", song, "-o", out)
    let back = ws.path("back.tape")
    let imported = try ws.tape("import-otio", out, back)
    #expect(imported.stdout == "t1\nt2\nt3\n")
    #expect(imported.stderr == "")
    var original = try listing(ws, song)
    var copy = try listing(ws, back)
    for key in ["version", "sources"] {
      original[key] = nil
      copy[key] = nil
    }
    let canonical = { (value: Any) throws -> String in
      String(
        decoding: try JSONSerialization.data(
          withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]),
        as: UTF8.self)
    }
    let expected = try canonical(original)
    for field in ["\"sidechain\":\"t1\"", "\"output\":\"t3\"", "\"panAutomation\":[", "\"cr\":["] {
      #expect(expected.contains(field), "\(field)")
    }
    #expect(try canonical(copy) == expected)
    try ws.tape("render", song, "-o", ws.path("a.wav"), "--bits", "32f")
    try ws.tape("render", back, "-o", ws.path("b.wav"), "--bits", "32f")
    let mix = try pcm(ws.path("a.wav"))
    #expect(mix.count > 100_000)
    #expect(mix == (try pcm(ws.path("b.wav"))))
    let history = try #require(
      try parseJSON(ws.tape("history", back, "--json").stdout) as? [String: Any])
    #expect((history["versions"] as? [Any])?.count == 2)
  }

  /// A timeline the reference library wrote (gaps, a video track, a dissolve between two clips,
  /// a fade from a gap, a disabled track), at an audio rate and at 25 fps, imports into the
  /// clips OTIO means.
  @Test(arguments: [48_000, 25])
  func aTimelineWrittenByTheReferenceLibraryImports(rate: Int) throws {
    let ws = try Workspace()
    let otio = ws.path("made.otio")
    let speech = TestAudio.path("speech-mono-48k-16.wav")
    let piano = TestAudio.path("piano-stereo-44k-24.wav")
    _ = try ReferenceOTIO.check(["make", otio, "\(rate)", speech, piano])
    let song = ws.path("made.tape")
    let result = try ws.tape("import-otio", otio, song)
    #expect(result.stderr == "note: skipped 1 track that is not audio: V1\n")
    let project = try listing(ws, song)
    #expect(project["sampleRate"] as? Int == 48_000)
    let tracks = try #require(project["tracks"] as? [[String: Any]])
    let summary = tracks.map { track in
      [track["name"] as? String ?? "", "\(track["muted"] ?? "")"]
        + (track["clips"] as? [[String: Any]] ?? []).map { clip in
          let fade = { (key: String) in ((clip[key] as? [String: Any])?["length"] as? Int) ?? -1 }
          return
            "\(clip["timelineStart"] ?? "") \(clip["length"] ?? "") \(clip["sourceStart"] ?? "") \(fade("fadeIn")) \(fade("fadeOut"))"
        }
    }
    // What otio-check.py make wrote, in its frames, and at 48 kHz.
    let r = rate
    let k = 48_000 / rate
    let (gap, oneFrom, one) = (r / 2 * k, r / 10 * k, r * k)
    let (inOffset, outOffset) = (r / 10 * k, r / 20 * k)
    let (twoFrom, two) = (2 * r * k, r / 2 * k)
    let (musicGap, fadeIn, pianoLength) = (r / 4 * k, r / 8 * k, r * k)
    // Dialog: a gap, "one", then a dissolve into "two": "one" runs on into it by its
    // out_offset and fades out over all of it; "two" starts earlier by its in_offset (from
    // earlier in its file) and fades in over all of it.
    let fade = inOffset + outOffset
    #expect(
      summary == [
        [
          "Dialog", "0", "\(gap) \(one + outOffset) \(oneFrom) 0 \(fade)",
          "\(gap + one - inOffset) \(two + inOffset) \(twoFrom - inOffset) \(fade) 0",
        ],
        ["Music", "1", "\(musicGap) \(pianoLength) 0 \(fadeIn) 0"],
      ])
    let sources = try #require(project["sources"] as? [[String: Any]])
    #expect(sources.map { $0["absolutePath"] as? String } == [speech, piano])
  }

  /// The EDL read back by the reference reader has one event per clip on its channel at its
  /// frames, dissolves from and to black for its fades, and a third lane in a second EDL.
  @Test func theReferenceReaderReadsTheEDL() throws {
    let ws = try Workspace()
    let song = try demoProject(ws)
    let out = ws.path("edit.edl")
    let result = try ws.tape("export", song, "-o", out, "--fps", "25")
    #expect(result.stdout == "\(out)\n\(ws.path("edit-2.edl"))\n")
    #expect(result.stderr.contains("note: \(out) holds A t1 Voice, A2 t1 Voice (2)\n"))
    let project = try listing(ws, song)
    let tracks = try #require(project["tracks"] as? [[String: Any]])
    // The edit points not on a frame at 25 fps (1920 samples at 48 kHz), counted here.
    let points = tracks.flatMap { $0["clips"] as? [[String: Any]] ?? [] }.flatMap { clip in
      let start = clip["timelineStart"] as? Int ?? 0
      let fade = { (key: String) in (clip[key] as? [String: Any])?["length"] as? Int ?? 0 }
      return [
        start, start + (clip["length"] as? Int ?? 0), clip["sourceStart"] as? Int ?? 0,
        fade("fadeIn"), fade("fadeOut"),
      ]
    }
    let off = points.filter { $0 % 1920 != 0 }.count
    #expect(off == 8)
    #expect(
      result.stderr.contains(
        "warning: \(off) edits are not on a frame at 25 fps and were rounded to the nearest (by up to 20.0 ms); export .otio to keep them exact\n"
      ))
    // Piano's first clip fades in at 0: no event of no length before it (a frame of black).
    #expect(
      result.stderr.hasSuffix(
        "warning: c3 fades in at the very start, where an EDL's dissolve needs something before it: its fade starts one frame later, after a frame of black; export .otio to keep it exact\n"
      ))
    let sources = try #require(project["sources"] as? [[String: Any]])
    let files = Dictionary(
      uniqueKeysWithValues: sources.map {
        ($0["id"] as? String ?? "", $0["absolutePath"] as? String ?? "")
      })
    let frame = { (value: Any?) in Int(((Double(value as? Int ?? 0) * 25 / 48_000)).rounded()) }
    /// The events each clip should read back as, on a channel.
    func events(_ clip: [String: Any], channel: String, first: Bool = false) -> [String] {
      let start = frame(clip["timelineStart"])
      let length = frame(clip["length"])
      let fadeIn = frame((clip["fadeIn"] as? [String: Any])?["length"])
      let fadeOut = frame((clip["fadeOut"] as? [String: Any])?["length"])
      let file = files[clip["source"] as? String ?? ""] ?? ""
      var lines: [String] = []
      // A fade at the very start begins a frame late, after a frame of black.
      let late = first && fadeIn > 0 && start == 0 ? 1 : 0
      if fadeIn > 0 {
        // A channel that starts with a fade starts with black from 00:00:00:00.
        if first { lines.append("event \(channel) 0 \(start + late) 0 black") }
        lines.append("dissolve \(channel) \(fadeIn - late)")
      }
      lines.append(
        "event \(channel) \(start + late) \(length - fadeOut - late) \(frame(clip["sourceStart"]) + late) \(file)"
      )
      if fadeOut > 0 {
        lines += [
          "dissolve \(channel) \(fadeOut)",
          "event \(channel) \(start + length - fadeOut) \(fadeOut) 0 black",
        ]
      }
      return lines
    }
    let voice = tracks[0]["clips"] as? [[String: Any]] ?? []
    let piano = tracks[1]["clips"] as? [[String: Any]] ?? []
    let read = ReferenceOTIO.rows(try ReferenceOTIO.check(["edl", out, "25"])).map {
      $0.joined(separator: " ")
    }
    // c2 overlaps c1 on Voice: it is on A2.
    let a1 = read.filter { $0.contains(" A1 ") }
    let a2 = read.filter { $0.contains(" A2 ") }
    #expect(a1 == events(voice[0], channel: "A1", first: true))
    #expect(a2 == events(voice[1], channel: "A2", first: true))
    let second = ReferenceOTIO.rows(try ReferenceOTIO.check(["edl", ws.path("edit-2.edl"), "25"]))
      .map { $0.joined(separator: " ") }
    #expect(
      second == events(piano[0], channel: "A1", first: true) + events(piano[1], channel: "A1"))
  }

  /// A clip on a frame at every rate: no warning. The format comes from the extension only.
  @Test func exportsChooseTheirFormatByExtension() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "A")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "1s", "--length", "2s")
    for fps in [24, 25, 30] {
      let edl = ws.path("e\(fps).edl")
      let result = try ws.tape("export", song, "-o", edl, "--fps", "\(fps)")
      #expect(result.stderr == "")
      // At 1 s for 2 s, whatever the rate.
      #expect(
        try ReferenceOTIO.check(["edl", edl, "\(fps)"])
          == "event\tA1\t\(fps)\t\(2 * fps)\t0\t\(TestAudio.path("speech-mono-48k-16.wav"))\n")
    }
    let text = try ws.tape("export", song, "-o", ws.path("edit.txt"), status: 64)
    #expect(
      text.stderr.hasPrefix(
        "error: tape export writes OpenTimelineIO (.otio) or a CMX3600 EDL (.edl); name the output edit.otio or edit.edl"
      ))
    let fps = try ws.tape("export", song, "-o", ws.path("edit.edl"), "--fps", "29", status: 64)
    #expect(
      fps.stderr.hasPrefix(
        "error: --fps 29 is not a timecode rate; give 24, 25, 30 or 29.97 (drop-frame)"))
    #expect(!FileManager.default.fileExists(atPath: ws.path("edit.edl")))
    // Version 1, before any track: an empty list of tracks (never null, which the reference
    // reader cannot read), and an import of it is refused for having no audio track.
    let empty = ws.path("empty.otio")
    try ws.tape("export", song, "-o", empty, "--version", "1")
    #expect(try ReferenceOTIO.check(["read", empty, "48000"]) == "")
    #expect(try String(contentsOfFile: empty, encoding: .utf8).contains("\"children\": []"))
    try ws.tape("import-otio", empty, ws.path("empty.tape"), status: 65)
    // A project named like an export is not overwritten by its own export.
    let named = ws.path("p.otio")
    try ws.tape("new", named)
    let before = try ws.fingerprint("p.otio")
    let itself = try ws.tape("export", named, "-o", named, status: 64)
    #expect(
      itself.stderr
        == "error: -o \(named) is the project file itself; exporting there would destroy it, so choose another output name\n"
    )
    #expect(try ws.fingerprint("p.otio") == before)
  }

  /// An export to several EDLs checks every file it would write before it writes any: the
  /// second EDL's name held by another project, or the third's by the project itself, refuses
  /// it with nothing written and nothing changed. EDLs an earlier export wrote are replaced.
  @Test func everyEDLIsCheckedBeforeAnyIsWritten() throws {
    let ws = try Workspace()
    // A project named as the third EDL of `-o e.edl` would be: five lanes (four tracks, one of
    // them with overlapping clips) make three EDLs.
    let song = ws.path("e-3.edl")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    for (index, name) in ["A", "B", "C", "D"].enumerated() {
      try ws.tape("track", "add", song, name)
      try ws.tape("clip", "add", song, "t\(index + 1)", "s1", "--at", "0", "--length", "2s")
    }
    try ws.tape("clip", "add", song, "t4", "s1", "--at", "1s", "--length", "2s")
    let other = ws.path("e-2.edl")
    try ws.tape("new", other)
    try ws.tape("track", "add", other, "Keep me")
    let project = try ws.fingerprint("e-3.edl")
    let kept = try ws.fingerprint("e-2.edl")
    let out = ws.path("e.edl")

    let overOther = try ws.tape(
      "export", song, "-o", out, status: 64, environment: ["NO_COLOR": "1"])
    #expect(
      overOther.stderr
        == "error: -o \(out) would also write \(other), which is a SQLite database (a Tape project?); an export replaces only EDLs there, so choose another output name or move \(other) away\n"
    )
    #expect(overOther.stdout == "")
    #expect(try ws.fingerprint("e-2.edl") == kept)
    #expect(try ws.fingerprint("e-3.edl") == project)
    #expect(!FileManager.default.fileExists(atPath: out))

    try FileManager.default.removeItem(atPath: other)
    let overItself = try ws.tape(
      "export", song, "-o", out, status: 64, environment: ["NO_COLOR": "1"])
    #expect(
      overItself.stderr
        == "error: -o \(out) would also write \(song), which is the project file itself; exporting there would destroy it, so choose another output name\n"
    )
    #expect(try ws.fingerprint("e-3.edl") == project)
    #expect(!FileManager.default.fileExists(atPath: out))
    #expect(!FileManager.default.fileExists(atPath: other))

    // Elsewhere, twice: the second export replaces the EDLs of the first.
    let edit = ws.path("edit.edl")
    let files = [edit, ws.path("edit-2.edl"), ws.path("edit-3.edl")]
    #expect(try ws.tape("export", song, "-o", edit).stdout == files.map { $0 + "\n" }.joined())
    #expect(try ws.tape("export", song, "-o", edit).stdout == files.map { $0 + "\n" }.joined())
    #expect(try String(contentsOfFile: files[2], encoding: .utf8).hasPrefix("TITLE: e-3.edl\n"))
  }

  /// Malformed OTIO, no audio tracks, missing media and a crop outside its media: one clear
  /// line each, and no project file.
  @Test(arguments: ["malformed", "video only", "missing media", "outside its media"])
  func badInputIsRefusedAndWritesNothing(_ kind: String) throws {
    let ws = try Workspace()
    let otio = ws.path("bad.otio")
    let speech = TestAudio.path("speech-mono-48k-16.wav")
    _ = try ReferenceOTIO.check(["make", ws.path("good.otio"), "48000", speech, speech])
    var text = try String(contentsOfFile: ws.path("good.otio"), encoding: .utf8)
    let expected: String
    switch kind {
    case "malformed":
      text = String(text.prefix(200))
      expected = "error: cannot import bad.otio: it is not JSON (line "
    case "video only":
      text = text.replacingOccurrences(of: "\"Audio\"", with: "\"Video\"")
      expected =
        "error: cannot import bad.otio: it has no audio tracks (only 3 tracks of another kind (video)); Tape imports tracks of kind \"Audio\" only\n"
    case "missing media":
      text = text.replacingOccurrences(of: "speech-mono-48k-16.wav", with: "no-such-file.wav")
      expected =
        "error: cannot import bad.otio: a media file is missing: \(TestAudio.path("no-such-file.wav")) (clip 'one' on track 'Dialog', clip 'two' on track 'Dialog', clip 'piano' on track 'Music'); put it where the timeline says, or relink it in the tool that wrote it\n"
    default:
      // "two" starts 6.396 s into the 6.401 s file (less 0.1 s for its dissolve) and lasts
      // 0.6 s.
      text = text.replacingOccurrences(of: "\"value\": 96000.0", with: "\"value\": 307000.0")
      expected =
        "error: cannot import bad.otio: clip 'two' on track 'Dialog' plays 0:06.296–0:06.896 of speech-mono-48k-16.wav, which is only 0:06.401 long; fix its source_range in the tool that wrote it\n"
    }
    try text.write(toFile: otio, atomically: true, encoding: .utf8)
    let song = ws.path("new.tape")
    let result = try ws.tape("import-otio", otio, song, status: kind == "missing media" ? 66 : 65)
    #expect(result.stderr.hasPrefix(expected), "\(result.stderr)")
    #expect(result.stderr.split(separator: "\n").count == 1)
    #expect(result.stdout == "")
    let left = try FileManager.default.contentsOfDirectory(atPath: ws.url.path)
    #expect(Set(left) == ["good.otio", "bad.otio"])
  }
}
