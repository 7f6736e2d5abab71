import Foundation
import ReferenceRenders
import Testing

/// Overwrite edits (`clip move`, `clip copy` and `paste` with `--overwrite`) against splices of
/// the renders before them: the placed audio replaces what lay under it on its track and
/// nothing else changes; and `clip crossfade` of clips that already overlap.
@Suite("Overwrite edits and crossfades over an overlap")
struct OverwriteTests {
  /// Noise on Voice at 0–4 s (fade-in 0.2 s, fade-out 0.5 s), speech at 5–6 s on it; piano
  /// on Bed at 0–3 s, which no edit here touches.
  static func project(_ space: Workspace) throws -> String {
    let song = space.path("song.tape")
    try space.tape("new", song)
    try space.tape(
      "import", song, TestAudio.path("noise-stereo-48k-16.flac"),
      TestAudio.path("speech-mono-48k-16.wav"), TestAudio.path("piano-stereo-44k-24.wav"))
    try space.tape("track", "add", song, "Voice", "--gain", "-2", "--pan", "0.3")
    try space.tape("track", "add", song, "Bed", "--gain", "-6")
    try space.tape(
      "clip", "add", song, "Voice", "s1", "--at", "0", "--length", "4s", "--fade-in", "0.2s",
      "--fade-out", "0.5s", "--gain", "-3")
    try space.tape("clip", "add", song, "Voice", "s2", "--at", "5s", "--length", "1s")
    try space.tape("clip", "add", song, "Bed", "s3", "--at", "0", "--length", "3s")
    return song
  }

  /// Each track's stem (32-bit float, interleaved stereo), by file name.
  static func stems(_ space: Workspace, _ song: String, _ name: String) throws -> [String: [Float]]
  {
    try space.tape("render", song, "--stems", space.path(name), "--bits", "32f")
    var stems: [String: [Float]] = [:]
    for file in try FileManager.default.contentsOfDirectory(atPath: space.path(name)) {
      stems[file] = try ReferenceRender.decode(space.path("\(name)/\(file)"))
    }
    return stems
  }

  /// `stem` from `from` to `to` seconds (48 kHz stereo), zeros where it has ended.
  static func slice(_ stem: [Float], _ from: Double, _ to: Double) -> [Float] {
    let (start, end) = (Int(from * 48_000) * 2, Int(to * 48_000) * 2)
    return (start..<end).map { $0 < stem.count ? stem[$0] : 0 }
  }

  /// The largest difference in dBFS, or +inf when the lengths differ.
  static func difference(_ a: [Float], _ b: [Float]) -> Double {
    guard a.count == b.count else { return .infinity }
    let peak = zip(a, b).map { abs(Double($0) - Double($1)) }.max() ?? 0
    return peak == 0 ? -.infinity : 20 * log10(peak)
  }

  /// `edit`, then Voice's stem is `expected` made of pieces of its stem before (each a
  /// `(from, to)` in seconds, nil for silence of that length), Bed's is unchanged, and one
  /// undo restores the render bit for bit.
  func check(
    after setup: [String] = [], _ edit: [String], printed: String,
    expected pieces: [(Double, Double)?], lengths: [Double],
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let space = try Workspace()
    let song = try Self.project(space)
    if !setup.isEmpty { try space.tape(setup.map { $0 == "FILE" ? song : $0 }) }
    let before = try Self.stems(space, song, "before")
    try space.tape(["render", song, "-o", space.path("before.wav"), "--bits", "32f"])
    let result = try space.tape(edit.map { $0 == "FILE" ? song : $0 })
    #expect(result.stdout == printed, sourceLocation: sourceLocation)
    let after = try Self.stems(space, song, "after")
    let voice = try #require(before["t1-Voice.wav"])
    var expected: [Float] = []
    for (piece, length) in zip(pieces, lengths) {
      expected +=
        piece.map { Self.slice(voice, $0.0, $0.1) }
        ?? [Float](repeating: 0, count: Int(length * 48_000) * 2)
    }
    let edited = try #require(after["t1-Voice.wav"])
    // Not a comparison of silences.
    #expect((edited.map { abs($0) }.max() ?? 0) > 0.05, sourceLocation: sourceLocation)
    let spliced = Self.difference(
      Self.slice(edited, 0, Double(expected.count / 2) / 48_000), expected)
    #expect(
      spliced < -120, "Voice differs from the splice by \(spliced) dBFS",
      sourceLocation: sourceLocation)
    let bed = try #require(before["t2-Bed.wav"])
    let bedAfter = try #require(after["t2-Bed.wav"])
    let bedLength = Double(min(bed.count, bedAfter.count) / 2) / 48_000
    let bedSame = Self.slice(bed, 0, bedLength) == Self.slice(bedAfter, 0, bedLength)
    #expect(bedSame, "Bed changed", sourceLocation: sourceLocation)
    try space.tape("undo", song)
    try space.tape(["render", song, "-o", space.path("undone.wav"), "--bits", "32f"])
    let undone = try ReferenceRender.decode(space.path("undone.wav"))
    let restored = undone == (try ReferenceRender.decode(space.path("before.wav")))
    #expect(restored, "undo did not restore the render", sourceLocation: sourceLocation)
  }

  /// The speech moved to 1 s replaces 1–2 s of the noise (split around it; its fades stay);
  /// nothing is printed, as for any move.
  @Test func aMoveReplacesWhatLiesUnder() throws {
    try check(
      ["clip", "move", "FILE", "c2", "--to", "1s", "--overwrite"], printed: "",
      expected: [(0, 1), (5, 6), (2, 4)], lengths: [1, 1, 2])
  }

  /// A copy of the speech at 3.5 s replaces the noise' fade-out; the original stays at 5 s.
  /// Only the copy's id is printed.
  @Test func aCopyReplacesWhatLiesUnder() throws {
    try check(
      ["clip", "copy", "FILE", "c2", "--to", "3.5s", "--overwrite"], printed: "c4\n",
      expected: [(0, 3.5), (5, 6), nil, (5, 6)], lengths: [3.5, 1, 0.5, 1])
  }

  /// The range 5–6 s pasted at 0.5 s over the noise replaces 0.5–1.5 s of them on Voice only
  /// (Bed was not copied); the pasted clip's id is printed, not the noise' right part's.
  @Test func aPasteReplacesWhatLiesUnder() throws {
    try check(
      after: ["copy", "FILE", "--from", "5s", "--to", "6s", "--tracks", "Voice", "--as", "word"],
      ["paste", "FILE", "word", "--at", "0.5s", "--overwrite"], printed: "c4\n",
      expected: [(0, 0.5), (5, 6), (1.5, 4)], lengths: [0.5, 1, 2.5])
  }

  /// --ripple and --overwrite together are refused, and nothing changes.
  @Test func rippleAndOverwriteAreOneOrTheOther() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    try space.tape("copy", song, "--from", "5s", "--to", "6s", "--as", "word")
    let before = try space.fingerprint("song.tape")
    let result = try space.tape(
      "paste", song, "word", "--at", "1s", "--ripple", "--overwrite", status: 64)
    #expect(
      result.stderr.hasPrefix(
        "error: --ripple opens a gap for the paste and --overwrite replaces what is there; choose one"
      ))
    #expect(try space.fingerprint("song.tape") == before)
  }

  /// Two clips that overlap crossfade over the overlap without moving: c1's fade-out and c2's
  /// fade-in cover exactly it, with the curve asked; a --length that is not the overlap is
  /// refused naming it, and clips that only touch still need one.
  @Test func clipsThatOverlapCrossfadeOverTheOverlap() throws {
    let space = try Workspace()
    let song = space.path("song.tape")
    try space.tape("new", song)
    try space.tape("import", song, TestAudio.path("noise-stereo-48k-16.flac"))
    try space.tape("track", "add", song, "A")
    try space.tape("clip", "add", song, "A", "s1", "--at", "0", "--length", "2s")
    try space.tape("clip", "add", song, "A", "s1", "--at", "1.5s", "--from", "2s", "--length", "2s")
    try space.tape("clip", "add", song, "A", "s1", "--at", "3.5s", "--length", "1s")
    let before = try space.fingerprint("song.tape")
    let wrong = try space.tape(
      "clip", "crossfade", song, "c1", "c2", "--length", "0.2s", status: 64)
    #expect(
      wrong.stderr.hasPrefix(
        "error: c1 and c2 already overlap by 0.5s, so they crossfade over that, not 0.2s; leave out --length"
      ), "\(wrong.stderr)")
    let touching = try space.tape("clip", "crossfade", song, "c2", "c3", status: 64)
    #expect(
      touching.stderr.hasPrefix(
        "error: c2 and c3 do not overlap; say how long they play together: --length 20ms"),
      "\(touching.stderr)")
    #expect(try space.fingerprint("song.tape") == before)
    try space.tape("clip", "crossfade", song, "c1", "c2", "--curve", "linear")
    let clips = try #require(
      try parseJSON(space.tape("clip", "ls", song, "--json").stdout) as? [[String: Any]])
    let summary = clips.map { clip in
      let fade = { (key: String) in
        let value = clip[key] as? [String: Any]
        return "\(value?["length"] ?? "") \(value?["curve"] ?? "")"
      }
      return
        "\(clip["id"] ?? "") \(clip["timelineStart"] ?? "") \(clip["length"] ?? "") in \(fade("fadeIn")) out \(fade("fadeOut"))"
    }
    #expect(
      summary == [
        "c1 0 96000 in 0 linear out 24000 linear", "c2 72000 96000 in 24000 linear out 0 linear",
        "c3 168000 48000 in 0 linear out 0 linear",
      ])
    // Over the overlap the two sides' gains add up to one (linear): the render there is the
    // sum of the two clips' audio weighted by complementary ramps, checked against the
    // source itself.
    try space.tape("render", song, "-o", space.path("mix.wav"), "--bits", "32f")
    let mix = try ReferenceRender.decode(space.path("mix.wav"))
    let noise = try ReferenceRender.decode(TestAudio.path("noise-stereo-48k-16.flac"))
    var worst = 0.0
    for frame in 72_000..<96_000 {
      let x = Double(frame - 72_000) / 24_000
      for channel in 0..<2 {
        let left = Double(noise[2 * frame + channel])
        let right = Double(noise[2 * (frame - 72_000 + 96_000) + channel])
        let model = left * (1 - x) + right * x
        worst = max(worst, abs(model - Double(mix[2 * frame + channel])))
      }
    }
    #expect(20 * log10(max(worst, 1e-30)) < -120, "the overlap differs from the model by \(worst)")
  }
}
