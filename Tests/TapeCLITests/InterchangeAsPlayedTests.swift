import Foundation
import Testing

/// Interchange as other tools read it: an export that plays, in the reference library, what
/// Tape plays; an import that drops nothing without a word; EDL timecode as broadcast uses it.
@Suite("Interchange as other tools read it")
struct InterchangeAsPlayedTests {
  /// Clips as (start, length, source start) per track name, from `tape ls --json`.
  func clips(_ ws: Workspace, _ song: String) throws -> [[String]] {
    let project = try #require(
      try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    var rows: [[String]] = []
    for track in project["tracks"] as? [[String: Any]] ?? [] {
      for clip in track["clips"] as? [[String: Any]] ?? [] {
        rows.append([
          track["name"] as? String ?? "", "\(clip["timelineStart"] ?? "")",
          "\(clip["length"] ?? "")", "\(clip["sourceStart"] ?? "")",
        ])
      }
    }
    return rows.sorted { $0.lexicographicallyPrecedes($1) }
  }

  /// `text` (an .otio file's) with every `metadata` emptied: what another tool keeps of it.
  func withoutMetadata(_ text: String) throws -> String {
    func strip(_ value: Any) -> Any {
      if var object = value as? [String: Any] {
        if object["metadata"] != nil { object["metadata"] = [String: Any]() }
        return object.mapValues(strip)
      }
      if let array = value as? [Any] { return array.map(strip) }
      return value
    }
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
    return String(
      decoding: try JSONSerialization.data(withJSONObject: strip(object)), as: UTF8.self)
  }

  /// A fade-out before an abutting clip, a fade-in at the very start and after a gap, a
  /// crossfade made by `clip crossfade`: the reference library, lengthening clips into their
  /// transitions as OTIO means, plays every clip where Tape plays it (the abutting clip once
  /// started 0.5 s early with a fade-in); the crossfade is one transition on one track; and
  /// the file with Tape's metadata gone imports into the same clips and renders bit for bit.
  @Test func aReaderPlaysWhatTapePlays() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "Voice")
    try ws.tape(
      "clip", "add", song, "Voice", "s1", "--at", "0", "--length", "2s", "--fade-in", "0.2s",
      "--fade-out", "0.5s")
    try ws.tape("clip", "add", song, "Voice", "s1", "--at", "2s", "--from", "3s", "--length", "1s")
    try ws.tape(
      "clip", "add", song, "Voice", "s1", "--at", "4s", "--from", "1s", "--length", "2s",
      "--fade-in", "0.2s")
    try ws.tape("clip", "add", song, "Voice", "s1", "--at", "6s", "--from", "2s", "--length", "2s")
    try ws.tape("clip", "crossfade", song, "c3", "c4", "--length", "0.4s", "--curve", "linear")
    let out = ws.path("edit.otio")
    let export = try ws.tape("export", song, "-o", out)
    #expect(export.stderr == "")
    let read = ReferenceOTIO.rows(try ReferenceOTIO.check(["read", out, "48000"]))
    #expect(read.filter { $0[0] == "track" }.count == 1, "the crossfade is on one track: \(read)")
    #expect(read.contains(["transition", "Voice", "9600", "9600", "SMPTE_Dissolve"]))
    let played = ReferenceOTIO.rows(try ReferenceOTIO.check(["played", out, "48000"]))
    let expected = try clips(ws, song)
    #expect(played.sorted { $0.lexicographicallyPrecedes($1) } == expected)

    let plain = ws.path("plain.otio")
    try withoutMetadata(String(contentsOfFile: out, encoding: .utf8))
      .write(toFile: plain, atomically: true, encoding: .utf8)
    let back = ws.path("back.tape")
    let imported = try ws.tape("import-otio", plain, back)
    #expect(imported.stderr == "")
    #expect(try clips(ws, back) == expected)
    try ws.tape("render", song, "-o", ws.path("a.wav"), "--bits", "32f")
    try ws.tape("render", back, "-o", ws.path("b.wav"), "--bits", "32f")
    let original = try Data(contentsOf: ws.url.appendingPathComponent("a.wav"))
    #expect(original.count > 1_000_000)
    #expect(original == (try Data(contentsOf: ws.url.appendingPathComponent("b.wav"))))
  }

  /// A fade a range edit cut part of cannot be an OTIO dissolve (those run from or to
  /// silence): the export says so, naming the clip; Tape's own import keeps it exact.
  @Test func aPartlyCutFadeIsNamed() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "Voice")
    try ws.tape(
      "clip", "add", song, "Voice", "s1", "--at", "0", "--length", "2s", "--fade-out", "1s")
    try ws.tape("cut", song, "--from", "1.8s", "--to", "2s")
    let out = ws.path("edit.otio")
    let export = try ws.tape("export", song, "-o", out)
    #expect(
      export.stderr
        == "warning: c1 has a fade a range edit cut part of; OTIO's dissolves run from or to silence, so other tools fade it whole over the length that plays ('tape import-otio' keeps it exact)\n"
    )
    try ws.tape("import-otio", out, ws.path("back.tape"))
    #expect(try clips(ws, ws.path("back.tape")) == (try clips(ws, song)))
  }

  /// A timeline the reference library wrote with names, markers on a track and on a clip, a
  /// time warp, a freeze frame and a start at 01:00:00:00: the names are kept (made to fit,
  /// repeats numbered; a clip named after its file keeps no name), every marker lands where
  /// it plays, and what is not applied is one note each.
  @Test func anImportDropsNothingWithoutAWord() throws {
    let ws = try Workspace()
    let otio = ws.path("rich.otio")
    _ = try ReferenceOTIO.check(["rich", otio, TestAudio.path("speech-mono-48k-16.wav")])
    let song = ws.path("rich.tape")
    let result = try ws.tape("import-otio", otio, song)
    #expect(
      result.stderr == """
        note: clip 'fast' on track 'Dialog' is played at 2× by a time warp (LinearTimeWarp), which Tape does not apply: it plays at 1× here, for the same length
        note: clip 'speech-mono-48k-16.wav' on track 'Dialog' holds one frame (FreezeFrame), which Tape does not apply: its audio plays as it is
        note: 2 clip names were made to fit Tape's (letters, digits, - _ .; a name already taken is numbered): 'Take 1' → Take-1, 'Take 1' → Take-1-2
        note: the timeline starts at 01:00:00:00 (its global_start_time); Tape's starts at 0 and every time keeps its place from there ('tape export --start 01:00:00:00' writes it again)

        """)
    let listed = try #require(
      try parseJSON(ws.tape("clip", "ls", song, "--json").stdout) as? [[String: Any]])
    #expect(listed.map { $0["name"] as? String ?? "-" } == ["Take-1", "Take-1-2", "fast", "-"])
    let markers = try #require(
      try parseJSON(ws.tape("marker", "ls", song, "--json").stdout) as? [[String: Any]])
    // "Breath" is 0.5 s into the first clip's media, which plays from 0; the unnamed one is
    // named.
    #expect(
      markers.map { "\($0["name"] ?? "") \($0["frame"] ?? "")" } == [
        "Breath 24000", "Verse 120000", "Marker 144000",
      ])
  }

  /// What Tape cannot take is refused in one line naming the clip and its track, and writes
  /// nothing: a transition that is not a dissolve, a schema newer than Tape reads, clips timed
  /// at 44.1 and 48 kHz, a negative duration.
  @Test(arguments: ["wipe", "newer schema", "mixed rates", "negative duration", "before its media"])
  func whatCannotBeTakenIsRefused(_ kind: String) throws {
    let ws = try Workspace()
    let speech = TestAudio.path("speech-mono-48k-16.wav")
    _ = try ReferenceOTIO.check(["make", ws.path("good.otio"), "48000", speech, speech])
    var text = try String(contentsOfFile: ws.path("good.otio"), encoding: .utf8)
    let expected: String
    switch kind {
    case "wipe":
      text = text.replacingOccurrences(
        of: "\"transition_type\": \"SMPTE_Dissolve\"", with: "\"transition_type\": \"SMPTE_Wipe\"")
      expected =
        "error: cannot import bad.otio: item 3 of track 'Dialog' is a 'SMPTE_Wipe' transition, which Tape cannot play; make it a dissolve (SMPTE_Dissolve) or a cut in the tool that wrote it\n"
    case "newer schema":
      text = text.replacingOccurrences(of: "\"Clip.2\"", with: "\"Clip.3\"")
      expected =
        "error: cannot import bad.otio: clip 'one' on track 'Dialog' is a Clip.3, newer than the Clip.2 Tape reads; write the file with OpenTimelineIO 0.18 (its target_schema_versions can downgrade it)\n"
    case "mixed rates":
      // The piano clip (on Music) timed at 44.1 kHz, the dialog at 48 kHz.
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
      func retime(_ value: Any, _ inPiano: Bool) -> Any {
        if var object = value as? [String: Any] {
          let piano = inPiano || object["name"] as? String == "piano"
          if piano, object["OTIO_SCHEMA"] as? String == "RationalTime.1",
            let value = object["value"] as? Double
          {
            object["rate"] = 44_100.0
            object["value"] = value * 44_100 / 48_000
            return object
          }
          return object.mapValues { retime($0, piano) }
        }
        if let array = value as? [Any] { return array.map { retime($0, inPiano) } }
        return value
      }
      text = String(
        decoding: try JSONSerialization.data(withJSONObject: retime(object, false)),
        as: UTF8.self)
      expected =
        "error: cannot import bad.otio: clip 'one' on track 'Dialog' is timed at 48000 Hz and clip 'piano' on track 'Music' at 44100 Hz; give --rate 48000 (or --rate 44100) to choose the project's rate\n"
    case "before its media":
      // 'one' starts 0.1 s into its file: 0.1 s before it instead (it read "plays --0:00.100–…").
      let start = try #require(text.range(of: "\"value\": 4800.0"))
      text.replaceSubrange(start, with: "\"value\": -4800.0")
      expected =
        "error: cannot import bad.otio: clip 'one' on track 'Dialog' starts 0:00.100 before the beginning of speech-mono-48k-16.wav; fix its source_range in the tool that wrote it\n"
    default:
      // The first 24000 is the gap before 'one'.
      text = text.replacingOccurrences(of: "\"value\": 24000.0", with: "\"value\": -24000.0")
      expected =
        "error: cannot import bad.otio: item 1 of track 'Dialog' has a negative duration (-24000 frames at 48000 Hz); fix it in the tool that wrote it\n"
    }
    try text.write(toFile: ws.path("bad.otio"), atomically: true, encoding: .utf8)
    let result = try ws.tape("import-otio", ws.path("bad.otio"), ws.path("new.tape"), status: 65)
    #expect(result.stderr == expected)
    #expect(result.stdout == "")
    let left = try FileManager.default.contentsOfDirectory(atPath: ws.url.path)
    #expect(Set(left) == ["good.otio", "bad.otio"])
    if kind == "mixed rates" {
      // The fix the line names works.
      try ws.tape("import-otio", ws.path("bad.otio"), ws.path("new.tape"), "--rate", "48000")
    }
  }

  /// Every missing media file is named, with the clips that play it, in one line.
  @Test func everyMissingFileIsNamed() throws {
    let ws = try Workspace()
    try FileManager.default.copyItem(
      atPath: TestAudio.path("speech-mono-48k-16.wav"), toPath: ws.path("voice.wav"))
    try FileManager.default.copyItem(
      atPath: TestAudio.path("piano-stereo-44k-24.wav"), toPath: ws.path("piano.wav"))
    _ = try ReferenceOTIO.check([
      "make", ws.path("edit.otio"), "48000", ws.path("voice.wav"), ws.path("piano.wav"),
    ])
    try FileManager.default.removeItem(atPath: ws.path("voice.wav"))
    try FileManager.default.removeItem(atPath: ws.path("piano.wav"))
    let result = try ws.tape("import-otio", ws.path("edit.otio"), ws.path("new.tape"), status: 66)
    #expect(
      result.stderr
        == "error: cannot import edit.otio: 2 media files are missing: \(ws.path("voice.wav")) (clip 'one' on track 'Dialog', clip 'two' on track 'Dialog'); \(ws.path("piano.wav")) (clip 'piano' on track 'Music'); put them where the timeline says, or relink them in the tool that wrote it\n"
    )
    #expect(!FileManager.default.fileExists(atPath: ws.path("new.tape")))
  }

  /// `--start` puts the record timecode (EDL) and the global start (OTIO) where broadcast
  /// wants it, and 29.97 is counted drop-frame as OTIO counts it; a fade-in at the very start
  /// makes no event of no length.
  @Test func timecodeAsBroadcastWritesIt() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "Voice")
    try ws.tape(
      "clip", "add", song, "Voice", "s1", "--at", "0", "--length", "2s", "--fade-in", "0.4s")
    try ws.tape("clip", "add", song, "Voice", "s1", "--at", "62s", "--length", "1s")
    let edl = ws.path("edit.edl")
    let result = try ws.tape(
      "export", song, "-o", edl, "--fps", "25", "--start", "01:00:00:00")
    #expect(
      result.stderr
        == "warning: c1 fades in at the very start, where an EDL's dissolve needs something before it: its fade starts one frame later, after a frame of black; export .otio to keep it exact\n"
    )
    // The reference reader places events at their record timecode: 90,000 frames is an hour.
    let events = ReferenceOTIO.rows(try ReferenceOTIO.check(["edl", edl, "25"]))
    #expect(
      events.map { $0.joined(separator: " ") } == [
        "event A1 90000 1 0 black", "dissolve A1 9",
        "event A1 90001 49 1 \(TestAudio.path("speech-mono-48k-16.wav"))",
        "event A1 91550 25 0 \(TestAudio.path("speech-mono-48k-16.wav"))",
      ])
    let text = try String(contentsOfFile: edl, encoding: .utf8)
    #expect(text.contains("00:00:00:00 00:00:01:00 01:01:02:00 01:01:03:00"))
    // No event lasts no time (the black before a fade at the very start once did).
    #expect(events.filter { $0[0] == "event" }.allSatisfy { $0[3] != "0" })

    // 29.97 drop-frame: the second clip at 62 s is frame 1858 (62 × 30000/1001, rounded).
    let dropFrame = ws.path("ntsc.edl")
    try ws.tape("export", song, "-o", dropFrame, "--fps", "29.97", "--start", "01:00:00;00")
    let ntsc = try String(contentsOfFile: dropFrame, encoding: .utf8)
    #expect(ntsc.contains("FCM: DROP FRAME\n"))
    let recordIn = try ReferenceOTIO.check(["timecode", "\(107_892 + 1858)", "29.97", "1"])
    let recordOut = try ReferenceOTIO.check(["timecode", "\(107_892 + 1888)", "29.97", "1"])
    #expect(
      ntsc.contains(
        "00:00:00;00 00:00:01;00 \(recordIn.dropLast()) \(recordOut.dropLast())"), "\(ntsc)")

    let otio = ws.path("edit.otio")
    try ws.tape("export", song, "-o", otio, "--start", "01:00:00:00")
    #expect(try ReferenceOTIO.check(["start", otio]) == "01:00:00:00\n")
    let back = try ws.tape("import-otio", otio, ws.path("back.tape"))
    #expect(back.stderr.contains("note: the timeline starts at 01:00:00:00"))
    let bad = try ws.tape(
      "export", song, "-o", ws.path("x.edl"), "--fps", "29.97", "--start", "01:01:00;00",
      status: 64)
    #expect(
      bad.stderr.hasPrefix(
        "error: --start 01:01:00;00 is not a timecode at 29.97 fps; write HH:MM:SS;FF, for example 01:00:00;00"
      ))
  }
}
