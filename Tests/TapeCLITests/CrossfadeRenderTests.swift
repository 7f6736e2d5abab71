import Foundation
import ReferenceRenders
import Testing

/// `tape cut --ripple --crossfade` and `tape clip crossfade` rendered, against the tests' own
/// float64 model of an overlapping crossfade.
@Suite("Crossfades, rendered")
struct CrossfadeRenderTests {
  /// A mono 48 kHz project of a 0.5-amplitude 440 Hz sine (6 s, sox, no dither: a whole
  /// number of cycles later the samples repeat exactly) with one 4 s clip.
  static func sine(in space: Workspace) throws -> (file: String, samples: [Double]) {
    let sine = try sineWave(in: space)
    let file = space.path("sine.tape")
    try space.tape("new", file, "--channels", "1")
    try space.tape("import", file, sine)
    try space.tape("track", "add", file, "Sine")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "4s")
    return (file, try ReferenceRender.decode(sine).map(Double.init))
  }

  /// sine.wav in `space`: 6 s of a mono 48 kHz 0.5-amplitude 440 Hz sine, 16-bit, made by sox
  /// without dither.
  static func sineWave(in space: Workspace) throws -> String {
    let sine = space.path("sine.wav")
    try tool(
      "/usr/bin/sox",
      [
        "-D", "-n", "-r", "48000", "-c", "1", "-b", "16", sine, "synth", "6", "sine", "440", "vol",
        "0.5",
      ])
    return sine
  }

  /// The level (RMS) of `samples` in windows of `width` frames from `start` to `end`.
  static func levels(_ samples: [Float], from start: Int, to end: Int, width: Int) -> [Double] {
    stride(from: start, to: end, by: width).map { at in
      let window = samples[at..<min(samples.count, at + width)]
      return (window.reduce(0) { $0 + Double($1) * Double($1) } / Double(window.count))
        .squareRoot()
    }
  }

  /// The issue's case: a 5 ms crossfade at a ripple cut of a steady 440 Hz sine left a 10 ms
  /// hole (level 0.047 of 0.354). Now both sides overlap over the removed audio: the level
  /// stays within 3 dB of the sine's everywhere around the join, and every sample is the
  /// model's (equal-power: sin and cos of the ramp, each side reading its own source frames).
  @Test func aRippleCrossfadeHasNoHoleAndIsTheModel() throws {
    let space = try Workspace()
    let (file, source) = try Self.sine(in: space)
    try space.tape("cut", file, "--from", "1.3s", "--to", "1.7s", "--ripple", "--crossfade", "5ms")
    let out = space.path("cut.wav")
    try space.tape("render", file, "-o", out, "--bits", "32f")
    let rendered = try ReferenceRender.decode(out)
    #expect(rendered.count == 172_800)

    let steady = 0.5 / 2.0.squareRoot()
    let around = Self.levels(rendered, from: 62_400 - 2_400, to: 62_400 + 2_400, width: 120)
    #expect(
      around.allSatisfy { $0 > steady * 0.7 && $0 < steady * 1.42 },
      "levels around the join: \(around.map { String(format: "%.3f", $0) })")

    // The model: the left plays source 0..<62_520 (120 frames past the join at 62_400), fading
    // out over its last 240; the right plays from source frame 81_480 (120 before the cut's
    // end at 81_600) from timeline frame 62_280, fading in over its first 240.
    let (join, half, length) = (62_400, 120, 240)
    var worst = 0.0
    for frame in 0..<172_800 {
      var expected = 0.0
      if frame < join + half {
        let fromEnd = join + half - frame
        let gain = fromEnd <= length ? sin(Double(fromEnd) / Double(length) * .pi / 2) : 1
        expected += source[frame] * gain
      }
      if frame >= join - half {
        let i = frame - (join - half)
        let gain = i < length ? sin(Double(i) / Double(length) * .pi / 2) : 1
        expected += source[81_600 - half + i] * gain
      }
      worst = max(worst, abs(expected - Double(rendered[frame])))
    }
    #expect(worst < 1e-6, "largest difference from the model: \(worst) (\(20 * log10(worst)) dBFS)")
  }

  /// The same recording either side, cut by a whole number of the sine's cycles (0.4 s = 176),
  /// with an equal-gain (linear) crossfade: the two sides are the same wave where they overlap,
  /// so the render is the uncut sine, sample for sample.
  @Test func anEqualGainCrossfadeOfTheSameWaveIsSeamless() throws {
    let space = try Workspace()
    let (file, source) = try Self.sine(in: space)
    try space.tape(
      "cut", file, "--from", "1.3s", "--to", "1.7s", "--ripple", "--crossfade", "20ms",
      "--crossfade-curve", "linear")
    let out = space.path("cut.wav")
    try space.tape("render", file, "-o", out, "--bits", "32f")
    let rendered = try ReferenceRender.decode(out)
    let worst = zip(rendered, source.prefix(172_800)).map { abs(Double($0) - $1) }.max() ?? 1
    #expect(worst < 1e-6, "largest difference from the uncut sine: \(worst)")
  }

  /// `tape clip crossfade` joins two clips that touch the same way, says when a side's source
  /// had too little audio, and refuses clips that do not touch, in one line each.
  @Test func clipCrossfadeJoinsAndExplains() throws {
    let space = try Workspace()
    let (file, _) = try Self.sine(in: space)
    try space.tape("clip", "split", file, "c1", "--at", "2s")
    let joined = try space.tape("clip", "crossfade", file, "c1", "c2", "--length", "20ms")
    #expect(joined.stdout == "")
    #expect(joined.stderr == "")
    let listing = try space.tape("ls", file, "--frames").stdout
    #expect(listing.contains("c1     s1      0f         96480f"), "\(listing)")
    #expect(listing.contains("c2     s1      95520f     192000f"), "\(listing)")

    // A clip at the very start of its source has nothing before it: the other side makes up
    // what it can (all of it here), and nothing is said. Both at their source's edges: a note.
    try space.tape("clip", "add", file, "t1", "s1", "--at", "5s", "--from", "5.9s", "--to", "6s")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "5.1s", "--length", "1s")
    let short = try space.tape("clip", "crossfade", file, "c3", "c4", "--length", "40ms")
    #expect(
      short.stderr
        == "note: no crossfade at 5.1s on t1: c3 has 0s of audio after it, c4 0s before it; each side fades over 0.04s instead\n"
    )
    let apart = try space.tape(
      "clip", "crossfade", file, "c2", "c3", "--length", "20ms", status: 65)
    #expect(
      apart.stderr
        == "error: c2 ends at 4s and c3 starts at 5s; a crossfade joins clips that touch: move c3 to 4s first (tape clip move \(file) c3 --to 4s)\n"
    )
    // Clips a crossfade made overlap: they crossfade over the overlap, so another length is
    // refused; moving the second would shift its audio, so the advice is to trim the first (a
    // user was told to move c2). Named the other way round, the old advice stands. A clip
    // named twice is said so.
    let again = try space.tape(
      "clip", "crossfade", file, "c1", "c2", "--length", "100ms", status: 64)
    #expect(
      again.stderr
        == "error: c1 and c2 already overlap by 0.02s, so they crossfade over that, not 0.1s; leave out --length, or trim c1 to end where c2 starts first (tape clip trim \(file) c1 --end 1.99s)\n"
    )
    let reversed = try space.tape(
      "clip", "crossfade", file, "c2", "c1", "--length", "100ms", status: 65)
    #expect(
      reversed.stderr
        == "error: c2 ends at 4s, after c1 starts at 0s; a crossfade joins clips that touch: trim c2 to end there first (tape clip trim \(file) c2 --end 0s), or, if c1 comes first, name it first (tape clip crossfade \(file) c1 c2 …)\n"
    )
    let twice = try space.tape(
      "clip", "crossfade", file, "c1", "c1", "--length", "100ms", status: 65)
    #expect(
      twice.stderr
        == "error: c1 is named twice; a crossfade joins two clips of one track, the first ending where the second starts\n"
    )
  }

  /// A crossfade replaces the fades the clips had at the join: a note names them (it did so
  /// without a word), on stderr, so `--json` stays one object on stdout; none when there
  /// were none.
  @Test func clipCrossfadeNamesTheFadesItReplaces() throws {
    let space = try Workspace()
    let (file, _) = try Self.sine(in: space)
    try space.tape("clip", "split", file, "c1", "--at", "2s")
    try space.tape("clip", "split", file, "c2", "--at", "3s")
    try space.tape("clip", "set", file, "c1", "--fade-out", "200ms", "--fade-in", "100ms")
    try space.tape("clip", "set", file, "c2", "--fade-in", "300ms", "--fade-in-curve", "s-curve")
    let joined = try space.tape(
      "clip", "crossfade", file, "c1", "c2", "--length", "20ms", "--json")
    #expect(
      joined.stderr
        == "note: the crossfade replaces c1's fade-out (0.2s linear) and c2's fade-in (0.3s s-curve)\n"
    )
    let json = try #require(try parseJSON(joined.stdout) as? [String: Any])
    #expect(json["ids"] as? [String] == [])
    // c2's fade-out and c3's fade-in: none, nothing said.
    let plain = try space.tape("clip", "crossfade", file, "c2", "c3", "--length", "20ms")
    #expect(plain.stderr == "")
  }
}
