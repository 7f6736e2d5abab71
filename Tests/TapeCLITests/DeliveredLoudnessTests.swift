import Foundation
import ReferenceRenders
import Testing

/// MP3 and Opus measured as delivered: `--loudness` is met within 0.1 LU of the file and
/// `--true-peak` is a ceiling on it, as ffmpeg's `ebur128=peak=true` measures the file; a
/// refusal's fixes, run as printed, make the same render pass. The tests need ffmpeg, LAME and
/// libopus (through libsndfile) and x42's dpl, and fail without them.
@Suite("tape render --loudness of MP3 and Opus")
struct DeliveredLoudnessTests {
  /// libebur128's integrated loudness of the file at `path` as ffmpeg decodes it
  /// (Tests/Support/ebur128.py, run by the reference virtualenv's Python): what the summary's
  /// delivered loudness is checked against. ffmpeg's own `ebur128` filter gates on a
  /// histogram and read the Opus file of ``theDeliveredFileMeetsTheTarget(format:)`` 0.077 LU
  /// quieter than libebur128 and Tape, which agree to 0.001 LU.
  static func libebur128(_ path: String) throws -> Double {
    try #require(
      FileManager.default.isExecutableFile(atPath: ReferenceOTIO.python),
      "the reference Python is missing: run scripts/setup.sh (it installs pyebur128 0.1.1 into .venv), or set TAPE_REFERENCE_PYTHON"
    )
    let script = ReferenceOTIO.root.appendingPathComponent("Tests/Support/ebur128.py").path
    let result = try TapeBinary.run(URL(fileURLWithPath: ReferenceOTIO.python), [script, path])
    try #require(result.status == 0, "ebur128.py \(path): \(result.stderr)")
    let report = try #require(try parseJSON(result.stdout) as? [String: Any])
    return try #require(report["integrated"] as? Double, "\(result.stdout)")
  }

  /// Piano and speech at 48 kHz (stereo, or mono with `channels` 1), 6.4 s.
  static func project(channels: Int, in space: Workspace) throws -> String {
    let file = space.path("ep.tape")
    try space.tape("new", file, "--rate", "48000", "--channels", "\(channels)")
    try space.tape(
      "import", file, TestAudio.path("piano-stereo-44k-24.wav"),
      TestAudio.path("speech-mono-48k-16.wav"))
    try space.tape("track", "add", file, "Piano")
    try space.tape("track", "add", file, "Voice")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0")
    try space.tape("clip", "add", file, "t2", "s2", "--at", "0")
    return file
  }

  /// With a true-peak limiter on the master the mix fits -16 LUFS under -1 dBTP: the MP3 and
  /// the Opus file measure, in ffmpeg, within 0.1 LU of -16 LUFS and under -1 dBTP, and the
  /// summary's delivered numbers are libebur128's loudness within 0.01 LU and ffmpeg's true
  /// peak within 0.05 dB; the mix before encoding is said beside them.
  @Test(arguments: ["mp3", "opus"])
  func theDeliveredFileMeetsTheTarget(format: String) throws {
    try Plugins.require(Plugins.limiter)
    let space = try Workspace()
    let file = try Self.project(channels: 2, in: space)
    try space.tape(
      "fx", "add", file, "master", Plugins.limiter, "--set", "threshold=-3", "--set",
      "truepeak=on")
    let out = space.path("ep.\(format)")
    let summary = try LoudnessTests.summary(
      space.tape(
        "render", file, "-o", out, "--loudness", "-16LUFS", "--true-peak", "-1dBTP", "--json"))
    let measured = try ReferenceRender.ebur128(out)
    #expect(abs(measured.integrated + 16) <= 0.1, "\(format): \(measured)")
    #expect(measured.truePeak <= -1, "\(format): \(measured)")
    let loudness = try #require(summary["deliveredLoudnessLUFS"] as? Double)
    let truePeak = try #require(summary["deliveredTruePeakDBTP"] as? Double)
    let exact = try Self.libebur128(out)
    #expect(abs(loudness - exact) <= 0.01, "\(format): \(loudness) against libebur128's \(exact)")
    #expect(abs(truePeak - measured.truePeak) <= 0.05, "\(truePeak) against \(measured)")
    #expect(try #require(summary["deliveredPasses"] as? Int) >= 1)
    let text = try space.tape(
      "render", file, "-o", out, "--loudness", "-16LUFS", "--true-peak", "-1dBTP"
    ).stdout
    #expect(text.contains("LUFS as delivered ("), "\(text)")
  }

  /// Before: an MP3 at 128 kbit/s normalised on the mix alone came out about 0.45 LU quiet.
  /// Now the summary measures the file, and without a target still says what was delivered.
  @Test func aPlainMP3SaysWhatWasDelivered() throws {
    let space = try Workspace()
    let file = try Self.project(channels: 2, in: space)
    let out = space.path("plain.mp3")
    let summary = try LoudnessTests.summary(space.tape("render", file, "-o", out, "--json"))
    let loudness = try #require(summary["deliveredLoudnessLUFS"] as? Double)
    let exact = try Self.libebur128(out)
    #expect(abs(loudness - exact) <= 0.01, "\(loudness) against libebur128's \(exact)")
    #expect(try #require(summary["deliveredPasses"] as? NSNull) == NSNull())
  }

  /// The commands in a refusal, each as `tape` arguments: every "(tape …; tape …)" group, and
  /// "aim lower, at --loudness X" as the render again at X.
  static func fixes(in message: String, render: [String]) -> [[[String]]] {
    var found = message.matches(of: /\((tape [^)]*)\)/).map { match in
      String(match.1).split(separator: "; ").map {
        Array($0.split(separator: " ").dropFirst().map(String.init))
      }
    }
    if let aim = message.firstMatch(of: /--loudness (-[0-9.]+)LUFS/) {
      var again = render
      if let index = again.firstIndex(of: "--loudness") { again[index + 1] = String(aim.1) }
      found.append([again])
    }
    return found
  }

  /// Refusals whose every fix is run as printed (then undone), then the render
  /// asked for again, and the file measured by ffmpeg: a stereo MP3 at -16 LUFS (a limiter
  /// added, or a lower target), a mono Opus file (dpl's mono form), a bypassed limiter on the
  /// master (turned on and set, not a second added: x42's dpl, LSP's limiter whose threshold
  /// is a linear gain, swh's look-ahead limiter whose ports have other names), and a ceiling
  /// above 0 dB.
  @Test(arguments: [
    ("stereo", "mp3", "-16", "-1", nil),
    ("mono", "opus", "-14", "-1", nil),
    ("bypassed", "mp3", "-16", "-1", Plugins.limiter),
    ("LSP's, bypassed", "mp3", "-16", "-1", "http://lsp-plug.in/plugins/lv2/limiter_stereo"),
    (
      "swh's, bypassed", "mp3", "-16", "-1", "http://plugin.org.uk/swh-plugins/fastLookaheadLimiter"
    ),
    ("above 0 dB", "mp3", "-9", "0.5", nil),
  ])
  func everyFixARefusalNamesWorks(
    name: String, format: String, loudness: String, ceiling: String, bypassed: String?
  ) throws {
    try Plugins.require(Plugins.limiter)
    let space = try Workspace()
    let file = try Self.project(channels: name == "mono" ? 1 : 2, in: space)
    if let bypassed {
      try Plugins.require(bypassed)
      try space.tape("fx", "add", file, "master", bypassed, "--bypass")
    }
    let out = space.path("ep.\(format)")
    let render = [
      "render", file, "-o", out, "--loudness", loudness + "LUFS", "--true-peak", ceiling + "dBTP",
    ]
    let refused = try space.tape(render, status: 65, environment: ["NO_COLOR": "1"])
    #expect(!FileManager.default.fileExists(atPath: out), "\(name): a refusal writes nothing")
    #expect(refused.stderr.split(separator: "\n").count == 1, "\(name): \(refused.stderr)")
    let fixes = Self.fixes(in: refused.stderr, render: render)
    #expect(fixes.count >= 2, "\(name): \(refused.stderr)")
    if bypassed != nil {
      #expect(!refused.stderr.contains("fx add"), "\(name): \(refused.stderr)")
      #expect(refused.stderr.contains("fx bypass \(file) f1 --on"), "\(name): \(refused.stderr)")
    }
    if name == "mono" {
      #expect(refused.stderr.contains("dpl#mono"), "\(name): \(refused.stderr)")
    }
    for fix in fixes {
      var again = render
      var edits = 0
      for command in fix {
        if command.first == "render" {
          again = command
        } else {
          try space.tape(command)
          edits += 1
        }
      }
      try space.tape(again)
      let measured = try ReferenceRender.ebur128(out)
      let index = try #require(again.firstIndex(of: "--loudness"))
      let target = try #require(
        Double(again[index + 1].replacingOccurrences(of: "LUFS", with: "")))
      #expect(abs(measured.integrated - target) <= 0.1, "\(name), \(fix): \(measured)")
      #expect(measured.truePeak <= (Double(ceiling) ?? 0), "\(name), \(fix): \(measured)")
      try FileManager.default.removeItem(atPath: out)
      for _ in 0..<edits { try space.tape("undo", file) }
    }
  }
}
