import Foundation
import ReferenceRenders
import Testing

/// `tape copy` and `tape paste` through the real binary: a paste renders exactly what the
/// copied range rendered (checked against `tape render --from --to` of the original), ripple
/// moves what follows, undo restores the render, and refusals change nothing.
@Suite("Range copy and paste")
struct CopyPasteTests {
  /// Three tracks with gains, pans and fades on both sides of the range 1–2.5 s, an envelope on
  /// t1 with points inside and around it:
  /// - t1: c1 at 0–3 s (fades 0.2 s and 0.3 s, outside the range: dropped), c2 at 2.2–3.7 s
  ///   (a 0.1 s fade-in inside the range: kept);
  /// - t2: c3 at 0.5–3.5 s (an s-curve fade-in 0.2 s and fade-out 0.3 s, outside);
  /// - t3: c4 at 1.2–1.8 s (a 0.1 s fade-out inside), c5 at 2.4–3.4 s (across the range's end).
  static func project(_ space: Workspace) throws -> String {
    let song = space.path("song.tape")
    try space.tape("new", song)
    try space.tape(
      "import", song, TestAudio.path("speech-mono-48k-16.wav"),
      TestAudio.path("piano-stereo-44k-24.wav"))
    try space.tape("track", "add", song, "Voice", "--gain", "-3", "--pan", "-0.3")
    try space.tape("track", "add", song, "Piano", "--gain", "-2", "--pan", "0.4")
    try space.tape("track", "add", song, "Bed")
    try space.tape(
      "clip", "add", song, "t1", "s1", "--at", "0", "--length", "3s", "--gain", "-6", "--fade-in",
      "0.2s", "--fade-out", "0.3s")
    try space.tape(
      "clip", "add", song, "t1", "s1", "--at", "2.2s", "--from", "3s", "--length", "1.5s",
      "--fade-in", "0.1s")
    try space.tape(
      "clip", "add", song, "t2", "s2", "--at", "0.5s", "--length", "3s", "--gain", "-6",
      "--fade-in", "0.2s", "--fade-out", "0.3s", "--curve", "s-curve")
    try space.tape(
      "clip", "add", song, "t3", "s2", "--at", "1.2s", "--length", "0.6s", "--gain", "-9",
      "--fade-out", "0.1s")
    try space.tape(
      "clip", "add", song, "t3", "s2", "--at", "2.4s", "--from", "1s", "--length", "1s")
    try space.tape(
      "track", "envelope", song, "t1", "--set", "0s:0dB,1.4s:-6dB,2.2s:-12dB,4s:0dB", "--shape",
      "db,linear,hold")
    return song
  }

  static func render(
    _ space: Workspace, _ file: String, _ name: String, _ extra: String...
  ) throws -> [Float] {
    try space.tape(["render", file, "-o", space.path(name), "--bits", "32f"] + extra)
    return try ReferenceRender.decode(space.path(name))
  }

  /// The largest difference between two renders in dBFS (−inf when equal); +inf when their
  /// lengths differ.
  static func difference(_ a: [Float], _ b: [Float]) -> Double {
    guard a.count == b.count else { return .infinity }
    let peak = zip(a, b).map { abs(Double($0) - Double($1)) }.max() ?? 0
    return peak == 0 ? -.infinity : 20 * log10(peak)
  }

  /// Pasted where nothing plays, the clipboard renders what the range rendered, and the rest
  /// of the mix is untouched; the ids are printed in timeline order.
  @Test func aPastePlaysWhatTheRangePlayed() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    let range = try Self.render(space, song, "range.wav", "--from", "1s", "--to", "2.5s")
    let whole = try Self.render(space, song, "whole.wav", "--to", "4s")
    let copy = try space.tape("copy", song, "--from", "1s", "--to", "2.5s", "--as", "bridge")
    #expect(copy.stdout == "bridge\t0:01.500\t5 clips\tt1,t2,t3\t0:01.000–0:02.500\tversion 11\n")
    #expect(copy.stderr == "")
    let paste = try space.tape("paste", song, "bridge", "--at", "5s")
    // In timeline order: c1's piece (t1) and c3's (t2) at 5 s, c4's at 5.2 s, c2's at 6.2 s,
    // c5's at 6.4 s.
    #expect(paste.stdout == "c6\nc7\nc8\nc9\nc10\n")
    let pasted = try Self.render(space, song, "pasted.wav", "--from", "5s", "--to", "6.5s")
    #expect(range.count == 2 * 72_000)
    // Not a comparison of silences.
    #expect((range.map { abs($0) }.max() ?? 0) > 0.05)
    #expect(Self.difference(pasted, range) < -120)
    let after = try Self.render(space, song, "after.wav", "--to", "4s")
    #expect(Self.difference(after, whole) < -120)
    // Nothing was pasted but those five, and the fades outside the range are dropped.
    let clips = try #require(
      parseJSON(space.tape("clip", "ls", song, "--from", "5s", "--json").stdout)
        as? [[String: Any]])
    #expect(
      clips.map {
        "\($0["id"] ?? "") \($0["track"] ?? "") \($0["timelineStart"] ?? "") \($0["length"] ?? "") \(($0["fadeIn"] as? [String: Any])?["length"] ?? "") \(($0["fadeOut"] as? [String: Any])?["length"] ?? "")"
      } == [
        "c6 t1 240000 72000 0 0", "c9 t1 297600 14400 4800 0", "c7 t2 240000 72000 0 0",
        "c8 t3 249600 28800 0 4800", "c10 t3 307200 4800 0 0",
      ])
  }

  /// With --ripple the gap opens first (splitting c1 and pushing everything after 0.5 s
  /// right), so the whole mix is the old one with the range's render inserted at 0.5 s; one
  /// undo restores the old render exactly and redo the new one.
  @Test func aRipplePasteInsertsTheRangeAndUndoRestores() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    let original = try Self.render(space, song, "original.wav")
    let before = try space.tape("ls", song, "--json").stdout
    try space.tape("copy", song, "--from", "1s", "--to", "2.5s", "--as", "bridge")
    let paste = try space.tape("paste", song, "bridge", "--at", "0.5s", "--ripple")
    #expect(paste.stdout == "c6\nc7\nc8\nc9\nc10\n")
    let pasted = try Self.render(space, song, "pasted.wav")
    // Interleaved stereo: frame f is samples 2f and 2f + 1.
    let at = 2 * 24_000
    let expected =
      Array(original[..<at]) + Array(original[(2 * 48_000)..<(2 * 120_000)])
      + Array(original[at...])
    #expect(Self.difference(pasted, expected) < -120)
    // The clips after 0.5 s moved right by 1.5 s, c1's right part (c11) with them.
    let c5 = try #require(
      (parseJSON(space.tape("clip", "ls", song, "--tracks", "t3", "--json").stdout)
        as? [[String: Any]])?.last)
    #expect(c5["id"] as? String == "c5" && c5["timelineStart"] as? Int == 115_200 + 72_000)

    try space.tape("undo", song)
    #expect(try Self.render(space, song, "undone.wav") == original)
    var listing = try #require(
      try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    var old = try #require(try parseJSON(before) as? [String: Any])
    listing["version"] = nil
    old["version"] = nil
    #expect(NSDictionary(dictionary: listing).isEqual(to: old))
    try space.tape("redo", song)
    #expect(try Self.render(space, song, "redone.wav") == pasted)
  }

  /// --tracks maps the copied tracks in order; an envelope goes with its track's audio (a
  /// track copied without one brings 0 dB).
  @Test func pasteOntoOtherTracks() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    try space.tape("copy", song, "--from", "1s", "--to", "2.5s", "--tracks", "t1,t3", "--as", "two")
    try space.tape("track", "add", song, "Copy one", "--gain", "-3", "--pan", "-0.3")
    try space.tape("track", "add", song, "Copy two")
    let range = try Self.render(
      space, song, "range.wav", "--from", "1s", "--to", "2.5s", "--tracks", "t1,t3")
    let paste = try space.tape("paste", song, "two", "--at", "1s", "--tracks", "t4,t5")
    #expect(paste.stdout == "c6\nc7\nc8\nc9\n")
    let pasted = try Self.render(
      space, song, "pasted.wav", "--from", "1s", "--to", "2.5s", "--tracks", "t4,t5")
    #expect(Self.difference(pasted, range) < -120)
  }

  /// Copying is not history: no version, undo passes it by, and the clipboard survives undo;
  /// --list, --json and --delete; a name copied again is replaced, with a note.
  @Test func clipboardsAreNotHistory() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    let head = try space.head(of: song)
    try space.tape("copy", song, "--from", "0", "--to", "1s", "--tracks", "t2", "--as", "a")
    try space.tape("copy", song, "--from", "c4.start", "--to", "+0.1s", "--as", "b.2")
    #expect(try space.head(of: song) == head)
    try space.tape("undo", song)
    let listed = try space.tape("copy", song, "--list", "--frames")
    #expect(
      listed.stdout
        == "a\t48000f\t1 clip\tt2\t0f–48000f\tversion 11\nb.2\t4800f\t3 clips\tt1,t2,t3\t57600f–62400f\tversion 11\n"
    )
    let again = try space.tape(
      "copy", song, "--from", "0", "--to", "1.5s", "--tracks", "t2", "--as", "a", "--json",
      environment: ["NO_COLOR": "1"])
    #expect(again.stderr == "note: clipboard a replaced\n")
    let json = try #require(try parseJSON(again.stdout) as? [String: Any])
    #expect(
      json.keys.sorted() == ["clips", "from", "length", "name", "to", "tracks", "version"])
    #expect(json["version"] as? Int == 10)
    let piece = try #require((json["clips"] as? [[String: Any]])?.first)
    #expect(
      piece.keys.sorted() == [
        "copiedFrom", "fadeIn", "fadeOut", "gainDB", "length", "offset", "source", "sourceStart",
        "track",
      ])
    #expect(piece["offset"] as? Int == 24_000 && piece["length"] as? Int == 48_000)
    try space.tape("copy", song, "--delete", "a")
    let all = try #require(
      try parseJSON(space.tape("copy", song, "--list", "--json").stdout) as? [String: Any])
    #expect((all["clipboards"] as? [[String: Any]])?.map { $0["name"] as? String } == ["b.2"])
  }

  /// A fade the range cuts through is copied as its part inside the range, every frame at the
  /// gain it had (it was shortened to run from silence, with a note); a range where nothing
  /// plays copies silence, and says that.
  @Test func cutFadesAndSilenceAreNamed() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    let copy = try space.tape(
      "copy", song, "--from", "0.1s", "--to", "1s", "--tracks", "t1", "--as", "head", "--json",
      environment: ["NO_COLOR": "1"])
    #expect(copy.stderr == "")
    let json = try #require(try parseJSON(copy.stdout) as? [String: Any])
    let piece = try #require((json["clips"] as? [[String: Any]])?.first)
    #expect((piece["fadeIn"] as? [String: Any])?["length"] as? Int == 4_800)
    #expect((piece["fadeIn"] as? [String: Any])?["silentCut"] as? Int == 4_800)
    #expect((piece["fadeIn"] as? [String: Any])?["fullCut"] as? Int == 0)
    // Kept so by the project file: pasted in another process, the clip has it.
    let pasted = try space.tape("paste", song, "head", "--at", "20s").stdout
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let listing = try #require(
      try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    let clip = try #require(
      ((listing["tracks"] as? [[String: Any]]) ?? []).flatMap {
        ($0["clips"] as? [[String: Any]]) ?? []
      }.first { $0["id"] as? String == pasted })
    #expect((clip["fadeIn"] as? [String: Any])?["silentCut"] as? Int == 4_800)
    try space.tape("undo", song)
    let silence = try space.tape(
      "copy", song, "--from", "5s", "--to", "6s", "--as", "quiet", environment: ["NO_COLOR": "1"])
    #expect(
      silence.stderr
        == "note: no clip plays in that range on those tracks; quiet holds 1s of silence\n")
    #expect(silence.stdout == "quiet\t0:01.000\t0 clips\tt1,t2,t3\t0:05.000–0:06.000\tversion 11\n")
  }

  /// Every refusal says what is wrong in one line and leaves the file as it was.
  @Test func refusalsChangeNothing() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    try space.tape("copy", song, "--from", "1s", "--to", "2s", "--as", "x")
    // A clipboard of audio from a source that an undo then removes.
    try space.tape("import", song, TestAudio.path("noise-stereo-48k-16.flac"))
    try space.tape("clip", "add", song, "t3", "s3", "--at", "5s", "--length", "1s")
    try space.tape("copy", song, "--from", "5s", "--to", "6s", "--tracks", "t3", "--as", "noise")
    try space.tape("undo", song)
    try space.tape("undo", song)
    let fingerprint = try space.fingerprint("song.tape")
    let cases: [([String], Int32, String)] = [
      (
        ["paste", song, "nope", "--at", "1s"], 65,
        "no clipboard nope in this project (it has noise, x; 'tape copy \(song) --list' lists them); a clipboard belongs to the project it was copied in: pasting into another project is not supported"
      ),
      (
        ["paste", song, "x", "--at", "1s", "--tracks", "t1,t2"], 64,
        "clipboard x holds 3 tracks (t1,t2,t3) and --tracks names 2; name 3, in that order (the first takes what was copied from t1)"
      ),
      (
        ["paste", song, "x", "--at", "1s", "--tracks", "t1,t2,t1"], 64,
        "t1 is named twice in --tracks; name each track once"
      ),
      (
        ["paste", song, "x", "--at", "1s", "--tracks", "t1,t2,t9"], 65,
        "no track t9 in this project; 'tape ls' lists the tracks"
      ),
      (
        ["paste", song, "noise", "--at", "1s"], 65,
        "clipboard noise plays audio of source s3, which is no longer in the project; import the file again and copy the range again"
      ),
      (
        ["copy", song, "--from", "1s", "--to", "2s", "--as", "a/b"], 64,
        "'a/b' is not a clipboard name; use 1 to 64 letters, digits, '-', '_' and '.', starting with a letter or digit"
      ),
      (
        ["copy", song, "--from", "2s", "--to", "1s", "--as", "y"], 64,
        "--to 1s must come after --from 2s"
      ),
      (
        ["copy", song, "--from", "1s", "--to", "2s", "--tracks", "t7", "--as", "y"], 65,
        "no track t7 in this project; 'tape ls' lists the tracks"
      ),
      (
        // Nothing about pasting: this is no paste.
        ["copy", song, "--delete", "zz"], 65,
        "no clipboard zz in this project (it has noise, x; 'tape copy \(song) --list' lists them)"
      ),
      (["copy", song, "--from", "1s", "--to", "2s"], 64, "name the clipboard: --as NAME"),
      (
        ["copy", song, "--list", "--from", "1s"], 64,
        "--list takes no range; copy with --from, --to and --as alone"
      ),
    ]
    for (arguments, status, message) in cases {
      let result = try space.tape(arguments, status: status, environment: ["NO_COLOR": "1"])
      #expect(result.stderr.hasPrefix("error: \(message)"), "\(arguments): \(result.stderr)")
      #expect(result.stdout == "")
    }
    #expect(try space.fingerprint("song.tape") == fingerprint)
    // Once its track is gone, a clipboard pastes only with --tracks.
    try space.tape("track", "rm", song, "t2")
    let gone = try space.tape(
      "paste", song, "x", "--at", "1s", status: 65, environment: ["NO_COLOR": "1"])
    #expect(
      gone.stderr
        == "error: clipboard x was copied from track t2, which is no longer in the project; paste it onto other tracks with --tracks\n"
    )
  }

  /// A batch takes paste lines, with tracks named by earlier lines; one version for all.
  @Test func aBatchPastes() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    try space.tape("copy", song, "--from", "1s", "--to", "2.5s", "--tracks", "t3", "--as", "bed")
    let head = try space.head(of: song)
    let script = space.path("edits.txt")
    try "track add Again --as again\npaste bed --at 0 --tracks @again\npaste bed --at 10s\n".write(
      toFile: script, atomically: true, encoding: .utf8)
    let batch = try space.tape("batch", song, script)
    #expect(batch.stdout == "t4\nc6\nc7\nc8\nc9\n")
    #expect(try space.head(of: song) == head + 1)
    let range = try Self.render(
      space, song, "range.wav", "--from", "1s", "--to", "2.5s", "--tracks", "t3")
    let pasted = try Self.render(
      space, song, "pasted.wav", "--from", "0", "--to", "1.5s", "--tracks", "t4")
    #expect(Self.difference(pasted, range) < -120)
  }

  /// A pan lane and a send's envelope go with the range: pasted elsewhere (after the lanes
  /// end, where the pan holds at −0.5 and the send at −12 dB, so that without them the stretch
  /// would sound otherwise), the stretch renders as the range did, through the send's bus
  /// too; pasted with --ripple, the whole render is the old one with the range inserted (the
  /// send's envelope after the gap moved with the clips). Undo restores the render.
  /// A clipboard kept by a Tape that knew no lanes (its `lanes` flag 0, as v20 leaves every
  /// older one) holds none: its paste leaves the target track's pan lane as it is, where one
  /// copied now lays the copied track's pan over the range (found by review: the old one
  /// flattened the lane to the track's own pan).
  @Test func aClipboardFromBeforeLanesLeavesThePanLaneAlone() throws {
    let space = try Workspace()
    let song = space.path("old.tape")
    try space.tape("new", song)
    try space.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try space.tape("track", "add", song, "Voice")
    try space.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "3s")
    try space.tape("copy", song, "--from", "1s", "--to", "2s", "--tracks", "t1", "--as", "old")
    try sqlite3(song, "UPDATE clipboard SET lanes = 0 WHERE name = 'old'")
    try space.tape("track", "envelope", song, "t1", "--pan", "--set", "4s:-1,6s:1")
    // The lane's points, as (frame, value).
    let lane = { () throws -> [[Double]] in
      let json = try #require(
        try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
      let track = try #require((json["tracks"] as? [[String: Any]])?.first)
      return ((track["panAutomation"] as? [[String: Any]]) ?? []).map {
        [Double($0["frame"] as? Int ?? -1), $0["value"] as? Double ?? .nan]
      }
    }
    let before = try lane()
    try space.tape("paste", song, "old", "--at", "4.5s")
    #expect(try lane() == before, "the lane over 4.5–5.5 s kept")
    // The same range copied now carries the track's (lane-less) pan over the range.
    try space.tape("undo", song)
    try space.tape("copy", song, "--from", "1s", "--to", "2s", "--tracks", "t1", "--as", "new")
    try space.tape("paste", song, "new", "--at", "4.5s")
    #expect(try lane() != before, "a clipboard with lanes lays its pan over the range")
  }

  @Test func panLanesAndSendEnvelopesArePastedWithTheRange() throws {
    let space = try Workspace()
    let song = space.path("lanes.tape")
    try space.tape("new", song)
    try space.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try space.tape("track", "add", song, "Voice")
    try space.tape("track", "add", song, "Bus", "--pan", "0.7", "--gain", "-2")
    try space.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "3s")
    #expect(try space.tape("send", "add", song, "t1", "t2").stdout == "n1\n")
    try space.tape("track", "envelope", song, "t1", "--pan", "--set", "0.5s:-1,1.5s:1,2.2s:-0.5")
    try space.tape(
      "send", "envelope", song, "n1", "--set", "1.2s:-inf,2s:0dB,2.4s:-12dB", "--shape",
      "db,linear")
    let original = try Self.render(space, song, "original.wav")
    let range = try Self.render(space, song, "range.wav", "--from", "1s", "--to", "2.5s")
    #expect((range.map { abs($0) }.max() ?? 0) > 0.05)
    try space.tape("copy", song, "--from", "1s", "--to", "2.5s", "--tracks", "t1", "--as", "a")
    #expect(try space.tape("paste", song, "a", "--at", "5s").stdout == "c2\n")
    let pasted = try Self.render(space, song, "pasted.wav", "--from", "5s", "--to", "6.5s")
    print("pasted stretch vs range: \(Self.difference(pasted, range)) dB")
    #expect(Self.difference(pasted, range) < -120)
    // The first 3 s are untouched, and after the pasted stretch the lanes hold as before.
    let after = try Self.render(space, song, "after.wav")
    #expect(
      Self.difference(Array(after[..<(2 * 144_000)]), Array(original[..<(2 * 144_000)])) < -120)
    let json = try #require(
      try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    let sends = try #require(json["sends"] as? [[String: Any]])
    let points = try #require(sends.first?["envelope"] as? [[String: Any]])
    // The send's envelope now has points in the pasted stretch (-inf at 5.2 s) and ends at
    // -12 dB as before.
    #expect(points.contains { $0["frame"] as? Int == 249_600 && $0["gainDB"] is NSNull })
    #expect(points.last?["gainDB"] as? Double == -12)
    try space.tape("undo", song)
    #expect(try Self.render(space, song, "undone.wav") == original)

    try space.tape("paste", song, "a", "--at", "0.5s", "--ripple")
    let rippled = try Self.render(space, song, "rippled.wav")
    let at = 2 * 24_000
    let expected =
      Array(original[..<at]) + Array(original[(2 * 48_000)..<(2 * 120_000)])
      + Array(original[at...])
    print(
      "ripple paste vs the original with the range inserted: \(Self.difference(rippled, expected)) dB"
    )
    #expect(Self.difference(rippled, expected) < -120)
    try space.tape("undo", song)
    #expect(try Self.render(space, song, "undone2.wav") == original)
  }
}
