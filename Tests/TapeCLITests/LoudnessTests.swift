import Foundation
import ReferenceRenders
import Testing

/// `tape render --loudness/--true-peak`: a measuring pass, one gain, a ceiling that is never
/// passed silently; and the summary's loudness, loudness range and true peak against ffmpeg's
/// `ebur128=peak=true` (0.1 LU, 0.2 dB). The tests need ffmpeg and fail without it.
@Suite("tape render --loudness")
struct LoudnessTests {
  /// A project at the file's rate and channels playing the whole file from 0.
  static func project(
    _ name: String, rate: Int, channels: Int, in space: Workspace
  ) throws
    -> String
  {
    let file = space.path("one.tape")
    try space.tape("new", file, "--rate", "\(rate)", "--channels", "\(channels)")
    try space.tape("import", file, TestAudio.path(name))
    try space.tape("track", "add", file, "Only")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0")
    return file
  }

  static func summary(_ result: TapeBinary.Result) throws -> [String: Any] {
    try #require(try parseJSON(result.stdout) as? [String: Any])
  }

  /// Speech, music, a sine, noise; mono and stereo; 44.1 and 48 kHz: the summary of a plain
  /// render measures what ffmpeg measures in the file, and a render normalised to `target`
  /// measures `target` in ffmpeg, with the true peak moved by exactly the gain.
  @Test(arguments: [
    ("speech-mono-48k-16.wav", 48_000, 1, -20.0),
    ("piano-stereo-44k-24.wav", 44_100, 2, -16.0),
    ("strings-stereo-48k-float.wav", 48_000, 2, -16.0),
    ("noise-stereo-48k-16.flac", 48_000, 2, -16.0),
    ("tone-mono-44k-24.aiff", 44_100, 1, -16.0),
    ("front-center-mono-48k-16.wav", 48_000, 1, -18.0),
  ])
  func measuresAsFFmpegDoes(name: String, rate: Int, channels: Int, target: Double) throws {
    let space = try Workspace()
    let file = try Self.project(name, rate: rate, channels: channels, in: space)
    let plainPath = space.path("plain.wav")
    let plain = try Self.summary(
      space.tape("render", file, "-o", plainPath, "--bits", "32f", "--json"))
    let reference = try ReferenceRender.ebur128(plainPath)
    let loudness = try #require(plain["loudnessLUFS"] as? Double)
    let truePeak = try #require(plain["truePeakDBTP"] as? Double)
    let range = try #require(plain["loudnessRangeLU"] as? Double)
    #expect(abs(loudness - reference.integrated) < 0.1, "\(name): I \(loudness) vs \(reference)")
    #expect(abs(truePeak - reference.truePeak) < 0.2, "\(name): TP \(truePeak) vs \(reference)")
    // Under 3.4 s ffmpeg's LRA is its relative gate (see LoudnessMeterTests).
    let seconds = try #require(plain["duration"] as? Double)
    if seconds >= 3.4 {
      #expect(abs(range - reference.range) < 0.1, "\(name): LRA \(range) vs \(reference)")
    }

    let outPath = space.path("out.wav")
    let normalised = try Self.summary(
      space.tape("render", file, "-o", outPath, "--loudness", "\(target)LUFS", "--json"))
    let measured = try ReferenceRender.ebur128(outPath)
    #expect(abs(measured.integrated - target) < 0.1, "\(name): ffmpeg measures \(measured)")
    let gain = try #require(normalised["gainDB"] as? Double)
    #expect(abs(gain - (target - loudness)) < 0.01)
    #expect(normalised["loudnessTargetLUFS"] as? Double == target)
    #expect(normalised["truePeakCeilingDBTP"] as? Double == -1)
    #expect(abs((normalised["loudnessLUFS"] as? Double ?? 0) - target) < 0.01)
    let peakAfter = try #require(normalised["truePeakDBTP"] as? Double)
    #expect(abs(peakAfter - (truePeak + gain)) < 0.02)
    #expect(abs(peakAfter - measured.truePeak) < 0.2, "\(name): TP \(peakAfter) vs \(measured)")
    #expect(peakAfter <= -1)
    if seconds >= 3.4 {
      #expect(abs((normalised["loudnessRangeLU"] as? Double ?? 0) - measured.range) < 0.1)
    }
  }

  /// A sine at a quarter of the sample rate, sampled 45° off its crests (samples at ±0.354,
  /// the wave at ±0.5): the true peak is 3.01 dB over the sample peak, −6.02 dBTP, as ffmpeg
  /// measures it too. A meter that did not oversample would read −9.03.
  @Test(arguments: [(48_000, 1), (44_100, 2)])
  func theTruePeakIsBetweenTheSamples(rate: Int, channels: Int) throws {
    let space = try Workspace()
    let source = space.path("quarter.wav")
    try tool(
      "/usr/bin/sox",
      [
        "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "24", source, "synth", "2", "sine",
        "\(rate / 4)", "0", "12.5", "vol", "0.5", "fade", "h", "0.2", "2", "0.2",
      ])
    let file = space.path("quarter.tape")
    try space.tape("new", file, "--rate", "\(rate)", "--channels", "\(channels)")
    try space.tape("import", file, source)
    try space.tape("track", "add", file, "Sine")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0")
    let out = space.path("out.wav")
    let summary = try Self.summary(
      space.tape("render", file, "-o", out, "--bits", "32f", "--json"))
    let samplePeak = try #require(summary["peakDBFS"] as? Double)
    let truePeak = try #require(summary["truePeakDBTP"] as? Double)
    #expect(abs(samplePeak - 20 * log10(0.5 * 0.5.squareRoot())) < 0.01, "\(samplePeak)")
    #expect(abs(truePeak - 20 * log10(0.5)) < 0.05, "\(truePeak)")
    let reference = try ReferenceRender.ebur128(out)
    #expect(abs(truePeak - reference.truePeak) < 0.2, "\(truePeak) vs \(reference)")
  }

  /// Speech brought to −16 LUFS would peak at +2.6 dBTP: refused before anything is written
  /// (exit 65, one line naming a limiter on the master and the loudest target that fits), and
  /// that target then renders under the ceiling.
  @Test func overTheCeilingIsRefusedAndNothingIsWritten() throws {
    let space = try Workspace()
    let file = try Self.project("speech-mono-48k-16.wav", rate: 48_000, channels: 1, in: space)
    let out = space.path("loud.wav")
    let refused = try space.tape(
      "render", file, "-o", out, "--loudness", "-16LUFS", status: 65,
      environment: ["NO_COLOR": "1"])
    #expect(refused.stdout.isEmpty)
    #expect(refused.stderr.hasPrefix("error: at -16 LUFS (a gain of +5.59 dB) the true peak"))
    #expect(refused.stderr.contains("over the -1 dBTP ceiling; put a limiter on the master"))
    #expect(refused.stderr.contains("tape fx add \(file) master http://gareus.org/oss/lv2/dpl"))
    #expect(refused.stderr.split(separator: "\n").count == 1)
    #expect(!FileManager.default.fileExists(atPath: out))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: space.url.path)
        .allSatisfy { !$0.contains("partial") && !$0.hasPrefix("loud") })

    let suggestion = try #require(
      refused.stderr.firstMatch(of: /--loudness (-[0-9.]+)LUFS/).map { String($0.1) })
    let fits = try Self.summary(
      space.tape("render", file, "-o", out, "--loudness", suggestion + "LUFS", "--json"))
    #expect(try #require(fits["truePeakDBTP"] as? Double) <= -1)
    #expect(try ReferenceRender.ebur128(out).truePeak <= -0.9)

    // A ceiling of its own: the same, against it.
    try space.tape(
      "render", file, "-o", out, "--loudness", suggestion, "--true-peak", "-3dBTP", status: 65)

    // The limiter it suggests, run as written, lets -16 LUFS render under the ceiling (the
    // loudness gain comes after the master: the limiter must be driven, not only set at -1).
    try space.tape(try Self.suggested("tape fx add", in: refused.stderr))
    let limited = try Self.summary(
      space.tape("render", file, "-o", out, "--loudness", "-16LUFS", "--json"))
    #expect(try #require(limited["truePeakDBTP"] as? Double) <= -1)
    #expect(abs(try #require(limited["loudnessLUFS"] as? Double) + 16) < 0.01)
  }

  /// The command in parentheses of a refusal that starts with `prefix`, as arguments of `tape`.
  static func suggested(_ prefix: String, in message: String) throws -> [String] {
    let commands = message.matches(of: /\((tape [^)]*)\)/).map { String($0.1) }
    let command = try #require(commands.first { $0.hasPrefix(prefix + " ") }, "\(message)")
    return Array(command.split(separator: " ").dropFirst().map(String.init))
  }

  /// A limiter on the master that drives the mix (x42's dpl, gain 20, threshold -3), as a user
  /// set it: every command a refused ceiling suggests is accepted as written, and run, the same
  /// render passes. Out of the threshold's reach (-20 dBTP, it goes down to -10) no threshold
  /// and no second limiter is suggested, and the master gain suggested counts the limiter's
  /// drive (lowered by the true peak's excess, 17.1 dB, the limiter would still hold -3); in
  /// reach (-6 dBTP) that limiter is set (`tape fx set`), not another added; with --loudness,
  /// driven where that helps, and not suggested where the mix is held at its threshold already.
  @Test func everySuggestedFixIsAcceptedAndPasses() throws {
    try Plugins.require(Plugins.limiter)
    let space = try Workspace()
    let file = try Self.project("piano-stereo-44k-24.wav", rate: 44_100, channels: 2, in: space)
    try space.tape(
      "fx", "add", file, "master", Plugins.limiter, "--set", "gain=20", "--set", "threshold=-3")
    // Its first 1.5 s (each fix checked is a measuring pass of the range).
    let out = ["-o", space.path("l.wav"), "--to", "1.5s"]
    let environment = ["NO_COLOR": "1"]

    let far = try space.tape(
      ["render", file, "--true-peak", "-20"] + out, status: 65, environment: environment)
    #expect(
      far.stderr.contains(
        "over the -20 dBTP ceiling, out of the reach of the master's limiter f1 (its threshold goes down to -10 dB); turn the mix down (tape master"
      ))
    #expect(!far.stderr.contains("threshold=-20"), "\(far.stderr)")
    #expect(!far.stderr.contains("tape fx add"), "\(far.stderr)")
    try space.tape(try Self.suggested("tape master", in: far.stderr))
    let fits = try Self.summary(
      space.tape(["render", file, "--true-peak", "-20", "--json"] + out))
    #expect(try #require(fits["truePeakDBTP"] as? Double) <= -20)
    try space.tape("undo", file)

    let near = try space.tape(
      ["render", file, "--true-peak", "-6"] + out, status: 65, environment: environment)
    #expect(!near.stderr.contains("tape fx add"), "\(near.stderr)")
    for prefix in ["tape fx set \(file) f1", "tape master"] {
      try space.tape(try Self.suggested(prefix, in: near.stderr))
      let passed = try Self.summary(
        space.tape(["render", file, "--true-peak", "-6", "--json"] + out))
      #expect(try #require(passed["truePeakDBTP"] as? Double) <= -6, "\(prefix)")
      try space.tape("undo", file)
    }

    // A mix held at the limiter's threshold cannot be made louder by driving it: with
    // --loudness no limiter command is suggested, only the loudness that fits, which passes.
    let crushed = try space.tape(
      ["render", file, "--loudness", "-8", "--true-peak", "-4.5"] + out, status: 65,
      environment: environment)
    #expect(!crushed.stderr.contains("tape fx"), "\(crushed.stderr)")
    let lower = try #require(
      crushed.stderr.firstMatch(of: /--loudness (-[0-9.]+)LUFS/).map { String($0.1) })
    try space.tape(["render", file, "--loudness", lower, "--true-peak", "-4.5"] + out)

    // Speech under a limiter that does not reach it (threshold -1, its peaks at -3 dBTP):
    // brought to -16 LUFS it would peak at +2.6 dBTP; the limiter is set, driven, and passes.
    let other = try Workspace()
    let speech = try Self.project("speech-mono-48k-16.wav", rate: 48_000, channels: 1, in: other)
    try space.tape("fx", "add", speech, "master", Plugins.limiter, "--set", "threshold=-1")
    let whole = ["-o", space.path("l.wav")]
    let loud = try space.tape(
      ["render", speech, "--loudness", "-16"] + whole, status: 65, environment: environment)
    #expect(!loud.stderr.contains("tape fx add"), "\(loud.stderr)")
    try space.tape(try Self.suggested("tape fx set \(speech) f1", in: loud.stderr))
    let passed = try Self.summary(
      space.tape(["render", speech, "--loudness", "-16", "--json"] + whole))
    #expect(try #require(passed["truePeakDBTP"] as? Double) <= -1)
    #expect(abs(try #require(passed["loudnessLUFS"] as? Double) + 16) < 0.01)
  }

  /// A gain that takes the samples past full scale is refused for integer output (never
  /// clamped silently), and written as it is in 32-bit float.
  @Test func integerOutputNeverClipsSilently() throws {
    let space = try Workspace()
    let file = try Self.project("piano-stereo-44k-24.wav", rate: 44_100, channels: 2, in: space)
    for bits in ["16", "24"] {
      let refused = try space.tape(
        "render", file, "-o", space.path("x.wav"), "--bits", bits, "--loudness", "-9",
        "--true-peak", "+3", status: 65, environment: ["NO_COLOR": "1"])
      #expect(refused.stderr.contains("\(bits)-bit samples cannot hold"))
      #expect(refused.stderr.contains("--bits 32f"))
      #expect(!FileManager.default.fileExists(atPath: space.path("x.wav")))
    }
    let float = try Self.summary(
      space.tape(
        "render", file, "-o", space.path("x.wav"), "--bits", "32f", "--loudness", "-9",
        "--true-peak", "+3", "--json"))
    #expect(try #require(float["peakDBFS"] as? Double) > 0)
    #expect(float["clippedSamples"] as? Int == 0)
    let samples = try ReferenceRender.decode(space.path("x.wav"))
    #expect((samples.map(abs).max() ?? 0) > 1)
  }

  /// --true-peak alone checks the mix as it is: refused over the ceiling (naming the master
  /// gain that fits), and under it the very bytes of a render without the option.
  @Test func aCeilingAloneChangesNothing() throws {
    let space = try Workspace()
    let file = try Self.project("piano-stereo-44k-24.wav", rate: 44_100, channels: 2, in: space)
    let refused = try space.tape(
      "render", file, "-o", space.path("x.wav"), "--true-peak", "-1.2dBTP", status: 65,
      environment: ["NO_COLOR": "1"])
    #expect(refused.stderr.contains("the true peak is -0.99 dBTP, over the -1.2 dBTP ceiling"))
    #expect(refused.stderr.contains("tape master \(file) --gain -0.3dB"))
    try space.tape("master", file, "--gain", "-0.3dB")
    try space.tape("render", file, "-o", space.path("checked.wav"), "--true-peak", "-1.2dBTP")
    try space.tape("render", file, "-o", space.path("plain.wav"))
    let checked = try Data(contentsOf: URL(fileURLWithPath: space.path("checked.wav")))
    #expect(checked == (try Data(contentsOf: URL(fileURLWithPath: space.path("plain.wav")))))
  }

  /// A normalised render is the same bytes every time (16-bit, dithered, and FLAC).
  @Test func normalisedRendersAreReproducible() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    for name in ["a.wav", "b.wav", "a.flac", "b.flac"] {
      try space.tape("render", file, "-o", space.path(name), "--bits", "16", "--loudness", "-20")
    }
    for pair in [("a.wav", "b.wav"), ("a.flac", "b.flac")] {
      let first = try Data(contentsOf: URL(fileURLWithPath: space.path(pair.0)))
      #expect(first == (try Data(contentsOf: URL(fileURLWithPath: space.path(pair.1)))))
    }
  }

  /// With --stems (and --tracks) the gain is the mix's: every stem gets the same one, and the
  /// normalised stems add up to the normalised mix.
  @Test func stemsTakeTheMixGain() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let mix = try Self.summary(
      space.tape(
        "render", file, "-o", space.path("mix.wav"), "--bits", "32f", "--loudness", "-20",
        "--json"))
    let gain = try #require(mix["gainDB"] as? Double)
    let stems = try space.tape(
      "render", file, "--stems", space.path("stems"), "--bits", "32f", "--loudness", "-20",
      "--json")
    let lines = stems.stdout.split(separator: "\n")
    #expect(lines.count == 2)
    for line in lines {
      let stem = try #require(try parseJSON(String(line)) as? [String: Any])
      #expect(stem["gainDB"] as? Double == gain)
    }
    let voice = try #require(
      try parseJSON(
        space.tape(
          "render", file, "--tracks", "t1", "-o", space.path("voice.wav"), "--bits", "32f",
          "--loudness", "-20", "--json"
        ).stdout) as? [String: Any])
    #expect(voice["gainDB"] as? Double == gain)
    let sum = try ReferenceRender.decode(space.path("mix.wav"))
    let one = try ReferenceRender.decode(space.path("stems/t1-Voice.wav"))
    let two = try ReferenceRender.decode(space.path("stems/t2-Piano.wav"))
    #expect(try ReferenceRender.decode(space.path("voice.wav")) == one)
    let worst = zip(sum, zip(one, two)).map { abs($0 - ($1.0 + $1.1)) }.max() ?? 1
    #expect(worst < 1e-6, "the normalised stems add up to the normalised mix within \(worst)")
  }

  /// The ceiling is the mix's: a stem that peaks over it on its own (here 6 dB louder than in
  /// the mix, the master gain left out) is written and named in a warning, one line each.
  @Test func aStemOverTheCeilingIsNamed() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    try space.tape("master", file, "--gain", "-6dB")
    let mix = try Self.summary(
      space.tape("render", file, "-o", space.path("mix.wav"), "--loudness", "-16", "--json"))
    #expect(try #require(mix["truePeakDBTP"] as? Double) <= -1)
    let stems = try space.tape(
      "render", file, "--stems", space.path("stems"), "--no-master-gain", "--loudness", "-16",
      "--bits", "32f")
    let warnings = stems.stderr.split(separator: "\n")
    #expect(warnings.count == 2, "\(stems.stderr)")
    for (line, name) in zip(warnings, ["t1-Voice.wav", "t2-Piano.wav"]) {
      #expect(line.hasPrefix("warning: the stem \(space.path("stems"))/\(name) peaks at"))
      #expect(line.hasSuffix("over the -1 dBTP ceiling (the mix does not)"))
    }
  }

  /// A silent mix has no loudness to normalise; levels that are not levels are usage errors.
  @Test func silenceAndBadLevels() throws {
    let space = try Workspace()
    let file = try Self.project("tone-mono-44k-24.aiff", rate: 44_100, channels: 1, in: space)
    try space.tape("track", "set", file, "t1", "--mute")
    let silent = try space.tape(
      "render", file, "-o", space.path("x.wav"), "--loudness", "-16", status: 65,
      environment: ["NO_COLOR": "1"])
    #expect(silent.stderr.hasPrefix("error: the mix is silent"))
    for (option, value) in [
      ("--loudness", "loud"), ("--loudness", "-80LUFS"), ("--true-peak", "-1dBFX"),
      ("--true-peak", "+9dBTP"),
    ] {
      try space.tape("render", file, "-o", space.path("x.wav"), option, value, status: 64)
    }
  }
}
