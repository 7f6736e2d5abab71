import Foundation
import ReferenceRenders
import Testing

/// `tape render` past the last clip and before `--from`: the effects ring out (`--tail`) and
/// warm up (`--preroll`). Against `lv2file` (Debian's reference LV2 host) and against the
/// whole render itself.
@Suite("tape render --tail and --preroll")
struct RenderTailTests {
  static let delay = "http://plugin.org.uk/swh-plugins/delay_n"

  /// A mono 48 kHz project playing one second of a 440 Hz sine at half scale (which ends
  /// mid-swing, loud) from 0, through swh's `delay_n` (a pure delay, 0.5 s) on its track; and
  /// the sine's file.
  static func delayedSine(in space: Workspace) throws -> (project: String, sine: String) {
    let sine = space.path("sine.wav")
    try ReferenceRender.run(
      "/usr/bin/sox",
      ["-n", "-r", "48000", "-c", "1", "-b", "24", sine, "synth", "1", "sine", "440", "vol", "0.5"])
    let file = space.path("tail.tape")
    try space.tape("new", file, "--rate", "48000", "--channels", "1")
    try space.tape("import", file, sine)
    try space.tape("track", "add", file, "Sine")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0")
    try space.tape(
      "fx", "add", file, "t1", delay, "--set", "delay_time=0.5", "--set", "max_delay=1")
    return (file, sine)
  }

  static func summary(_ result: TapeBinary.Result) throws -> [String: Any] {
    try #require(try parseJSON(result.stdout) as? [String: Any])
  }

  /// The echo after the last clip is in the render, and it is what lv2file makes of the same
  /// sine padded with two seconds of silence: to the sample (below −120 dBFS), up to where the
  /// render ends, 0.5 s after the clip (the delay's last echo), with the summary saying so;
  /// after it lv2file's output is silent too.
  @Test func aDelaysEchoRingsOutAsAnIndependentHostMakesIt() throws {
    try Plugins.require(Self.delay)
    let space = try Workspace()
    let (file, sine) = try Self.delayedSine(in: space)
    let ours = space.path("ours.wav")
    let summary = try Self.summary(
      space.tape("render", file, "-o", ours, "--bits", "32f", "--json"))
    let padded = space.path("padded.wav")
    try ReferenceRender.run(
      "/usr/bin/sox", [sine, "-e", "floating-point", padded, "pad", "0", "2"])
    let theirs = space.path("theirs.wav")
    try ReferenceRender.run(
      "/usr/bin/lv2file",
      [
        "-i", padded, "-o", theirs, "--ignore-clipping", "-b", "64", "-p", "delay_time:0.5", "-p",
        "max_delay:1", Self.delay,
      ])
    let (a, b) = (try ReferenceRender.decode(ours), try ReferenceRender.decode(theirs))
    #expect(a.count == 72_000, "the render ends where the echo does: \(a.count) frames")
    #expect(try #require(summary["tailFrames"] as? Int) == 24_000)
    #expect(try #require(summary["tailSeconds"] as? Double) == 0.5)
    #expect(try #require(summary["tailReachedLimit"] as? Bool) == false)
    #expect(try #require(summary["frames"] as? Int) == 72_000)
    let worst = zip(a, b).map { abs($0 - $1) }.max() ?? 1
    #expect(worst < 1e-6, "largest difference from lv2file: \(worst)")
    // The echo is there: the last half second is the sine's last half second.
    let echo = a[48_000...].map { abs($0) }.max() ?? 0
    #expect(echo > 0.49, "the echo's peak: \(echo)")
    #expect(b[72_000...].allSatisfy { abs($0) < 3.2e-5 }, "lv2file rings no longer")
    let text = try space.tape("render", file, "-o", space.path("text.wav")).stdout
    #expect(
      text.contains(
        "tail       0:00.500 after the last clip (the effects rang out: under -90 dBFS for 1 s after it)"
      ), "\(text)")
  }

  /// `--tail 0` ends at the last clip as renders did before tails (the first second of the
  /// ringing render, sample for sample); `--tail 1.5s` is exactly that much longer, the echo
  /// then silence; an explicit `--to` ends where asked, and refuses `--tail`.
  @Test func aFixedTailIsExact() throws {
    try Plugins.require(Self.delay)
    let space = try Workspace()
    let (file, _) = try Self.delayedSine(in: space)
    try space.tape("render", file, "-o", space.path("ring.wav"), "--bits", "32f")
    try space.tape("render", file, "-o", space.path("none.wav"), "--bits", "32f", "--tail", "0")
    let fixed = try Self.summary(
      space.tape(
        "render", file, "-o", space.path("fixed.wav"), "--bits", "32f", "--tail", "1.5s",
        "--json"))
    let ring = try ReferenceRender.decode(space.path("ring.wav"))
    let none = try ReferenceRender.decode(space.path("none.wav"))
    let long = try ReferenceRender.decode(space.path("fixed.wav"))
    #expect(none.count == 48_000)
    #expect(none == Array(ring[..<48_000]))
    #expect(long.count == 48_000 + 72_000)
    #expect(try #require(fixed["tailSeconds"] as? Double) == 1.5)
    #expect(Array(long[..<72_000]) == ring)
    #expect(long[72_000...].allSatisfy { $0 == 0 })
    let to = try Self.summary(
      space.tape("render", file, "-o", space.path("to.wav"), "--to", "1.2s", "--json"))
    #expect(try #require(to["frames"] as? Int) == 57_600)
    #expect(try #require(to["tailFrames"] as? Int) == 0)
    let refused = try space.tape(
      "render", file, "-o", space.path("x.wav"), "--to", "1s", "--tail", "1s", status: 64)
    #expect(refused.stderr.contains("drop --tail, or drop --to"), "\(refused.stderr)")
    #expect(!FileManager.default.fileExists(atPath: space.path("x.wav")))
  }

  /// A project without effects renders exactly as before tails: nothing can ring, so the
  /// render without --tail is the same bytes as with --tail 0, and says no tail.
  @Test func withoutEffectsNothingRings() throws {
    let space = try Workspace()
    let file = try LoudnessTests.project(
      "piano-stereo-44k-24.wav", rate: 44_100, channels: 2, in: space)
    let plain = try space.tape("render", file, "-o", space.path("a.wav"))
    try space.tape("render", file, "-o", space.path("b.wav"), "--tail", "0")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: space.path("a.wav")))
        == Data(contentsOf: URL(fileURLWithPath: space.path("b.wav"))))
    #expect(!plain.stdout.contains("tail"), "\(plain.stdout)")
  }

  /// A range through a limiter or a compressor equals that stretch of the whole render, bit
  /// for bit, once the effect is warmed up by the preroll (the default 2 s; the plugins'
  /// memory, a release of 50 ms or an envelope, is long past). Without preroll it does not:
  /// the effect starts from rest and the first milliseconds are off by more than −60 dBFS.
  @Test(arguments: [
    (Plugins.limiter, ["threshold=-6", "gain=6", "release=0.05"]),
    (Plugins.compressor, ["threshold=-30", "Ratio=0.6", "attack=0.002", "inputgain=6"]),
  ])
  func aRangeEqualsTheWholeRenderAfterThePreroll(uri: String, settings: [String]) throws {
    try Plugins.require(uri)
    let space = try Workspace()
    let file = try LoudnessTests.project(
      "noise-stereo-48k-16.flac", rate: 48_000, channels: 2, in: space)
    try space.tape(["fx", "add", file, "master", uri] + settings.flatMap { ["--set", $0] })
    try space.tape("render", file, "-o", space.path("whole.wav"), "--bits", "32f")
    let range = ["--from", "2.5s", "--to", "4s", "--bits", "32f", "--json"]
    let warmed = try Self.summary(
      space.tape(["render", file, "-o", space.path("warm.wav")] + range))
    let cold = try Self.summary(
      space.tape(["render", file, "-o", space.path("cold.wav"), "--preroll", "0"] + range))
    #expect(try #require(warmed["prerollSeconds"] as? Double) == 2)
    #expect(try #require(cold["prerollSeconds"] as? Double) == 0)
    let whole = try ReferenceRender.decode(space.path("whole.wav"))
    let stretch = Array(whole[(120_000 * 2)..<(192_000 * 2)])
    let warm = try ReferenceRender.decode(space.path("warm.wav"))
    let coldSamples = try ReferenceRender.decode(space.path("cold.wav"))
    #expect(warm.count == stretch.count)
    #expect(warm == stretch, "\(uri): the warmed range differs from the whole render")
    let first = zip(coldSamples, stretch).prefix(960 * 2).map { abs($0 - $1) }.max() ?? 0
    #expect(20 * log10(Double(first)) > -60, "\(uri): cold start only \(first) off")
  }

  /// --preroll without --from is refused, and the preroll never reaches before 0 (a range from
  /// 1 s has 1 s of it).
  @Test func thePrerollStopsAtTheStart() throws {
    try Plugins.require(Plugins.limiter)
    let space = try Workspace()
    let file = try LoudnessTests.project(
      "noise-stereo-48k-16.flac", rate: 48_000, channels: 2, in: space)
    try space.tape("fx", "add", file, "master", Plugins.limiter)
    let from1 = try Self.summary(
      space.tape("render", file, "-o", space.path("a.wav"), "--from", "1s", "--json"))
    #expect(try #require(from1["prerollSeconds"] as? Double) == 1)
    let refused = try space.tape(
      "render", file, "-o", space.path("b.wav"), "--preroll", "1s", status: 64)
    #expect(refused.stderr.contains("give --from with it"), "\(refused.stderr)")
  }
}
