import Foundation
import Synchronization
import Testing

/// `tape record --play` and `--calibrate` through a paced JACK loopback: the player's output
/// comes back as the recorder's input (``PacedDevice/startLoopback()``), so that the take is
/// what was played, delayed by the whole round trip. The project holds clicks at frames the
/// test chose; the take, rendered, must have them at the same frames.
extension ProcessHeavyTests.RecordTests {
  /// The clicks' frames: irregular, from 1 s on.
  static let clickFrames = (0..<8).map { 48_000 + $0 * 7_001 + ($0 * $0 * 131) % 997 }

  /// A JACK server on the dummy driver in cycles of `period` frames, and `loop` on it, ALSA's
  /// jack PCM for both directions, its playback coming back as its capture.
  ///
  /// At cycles of 256 frames a loaded machine makes jackd skip the capture client's cycle now
  /// and then (``PacedDevice/judgingPeriod``): the take then lacks 256 frames that ALSA never
  /// says were lost, and all it captured after lands a cycle early. Under two CPU burners, 4
  /// of 60 loop tests at 256 failed so (a click or a punch's samples a cycle off, a calibration
  /// hearing 9 clicks of 12), and 1 of 8 on a quiet machine; 28 of 28 punch tests at 1,024
  /// passed under the same burners. The loop tests judge where
  /// samples land, not the period: they run at 1,024.
  static func pacedLoop(period: Int = PacedDevice.judgingPeriod) throws -> PacedDevice {
    let device = try PacedDevice(period: period)
    try device.startLoopback()
    return device
  }

  /// A 48 kHz stereo project: t1 "Clicks" with a 4 s source of one-frame clicks (16000/32768)
  /// at ``clickFrames``, and t2 "Voice", empty.
  static func clickProject(_ space: Workspace) throws -> String {
    let song = space.path("song.tape")
    try space.tape("new", song, "--rate", "48000", "--channels", "2")
    try space.tape("track", "add", song, "Clicks")
    try space.tape("track", "add", song, "Voice")
    var samples = [Int16](repeating: 0, count: 48_000 * 4 * 2)
    for frame in clickFrames {
      samples[frame * 2] = 16_000
      samples[frame * 2 + 1] = 16_000
    }
    let raw = space.path("clicks.s16")
    try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
    try tool(
      "/usr/bin/sox",
      ["-t", "s16", "-r", "48000", "-c", "2", raw, space.path("clicks.wav")])
    try space.tape("import", song, space.path("clicks.wav"))
    try space.tape("clip", "add", song, "t1", "s1", "--at", "0")
    return song
  }

  /// Runs `tape record` with `arguments` on the loop.
  static func recordThroughLoop(
    _ arguments: [String], device: PacedDevice, environment extra: [String: String]
  ) throws -> TapeBinary.Result {
    var environment = device.environment
    environment.merge(extra) { $1 }
    return try TapeBinary.run(arguments, environment: environment, killAfter: 60)
  }

  final class Flag: Sendable {
    let value = Atomic(false)
  }

  /// t2 rendered as raw interleaved stereo 32-bit float, in a new file of `space`: its path.
  static func renderedVoiceFile(_ space: Workspace, _ song: String) throws -> String {
    let wav = space.path("voice-\(UInt32.random(in: 0...UInt32.max)).wav")
    try space.tape("render", song, "-o", wav, "--tracks", "t2", "--bits", "32f")
    let raw = wav + ".f32"
    try tool("/usr/bin/sox", [wav, "-t", "f32", raw])
    return raw
  }

  /// The Voice track rendered alone, channel 0, as floats.
  static func renderedVoice(_ space: Workspace, _ song: String) throws -> [Float] {
    try leftChannel(try renderedVoiceFile(space, song))
  }

  /// Channel 0 of a raw interleaved stereo 32-bit float file.
  static func leftChannel(_ raw: String) throws -> [Float] {
    let data = try Data(contentsOf: URL(fileURLWithPath: raw))
    let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    return stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
  }

  /// Where the rendered take's clicks are relative to the project's: the lag that best lines
  /// the click train up with the render (a cross-correlation of the render with the train of
  /// ``clickFrames``, over ±0.1 s), and each click's own loudest frame less where it belongs.
  static func misalignment(_ rendered: [Float]) -> (lag: Int, each: [Int], peak: Float) {
    var best = (lag: 0, score: -Float.infinity)
    for lag in -4_800...4_800 {
      var score: Float = 0
      for frame in clickFrames where frame + lag >= 0 && frame + lag < rendered.count {
        score += rendered[frame + lag]
      }
      if score > best.score { best = (lag, score) }
    }
    let each = clickFrames.map { frame in
      let window = max(0, frame - 2_000)..<min(rendered.count, frame + 2_000)
      let loudest = window.max { abs(rendered[$0]) < abs(rendered[$1]) } ?? frame
      return loudest - frame
    }
    return (best.lag, each, rendered.map(abs).max() ?? 0)
  }

  @Test func anOverdubThroughAJACKLoopbackLandsWhereItWasHeard() throws {
    let device = try Self.pacedLoop()
    let space = try Workspace()
    let song = try Self.clickProject(space)
    let counter = try allocationCounter(in: space)
    let result = try Self.recordThroughLoop(
      ["record", song, "Voice", "--play", "--device", "loop", "--to", "3s"], device: device,
      environment: [
        "XDG_CONFIG_HOME": space.path("config"), "LD_PRELOAD": counter,
        "TAPE_ALLOC_REPORT": space.path("allocations"),
      ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.hasPrefix("c2"), "\(result.stdout)")
    #expect(result.stderr.contains("reported by the devices"), "\(result.stderr)")
    #expect(result.stderr.contains("not calibrated"), "\(result.stderr)")
    let (lag, each, peak) = Self.misalignment(try Self.renderedVoice(space, song))
    print("overdub uncalibrated: lag \(lag), each click \(each), peak \(peak); \(result.stderr)")
    #expect(peak > 0.4, "the loop carried the clicks")
    #expect(abs(lag) <= 1 && each.allSatisfy { abs($0) <= 1 }, "lag \(lag), clicks \(each)")
    let counts = try String(contentsOfFile: space.path("allocations"), encoding: .utf8)
      .split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    #expect(counts == [0, 0], "mallocs, frees on the device threads")
    #expect(!FileManager.default.fileExists(atPath: song + "-wal"), "no log left behind")
    // One version: one undo takes the take away.
    try space.tape("undo", song)
    #expect(!(try space.tape("ls", song).stdout.contains("c2 ")))
  }

  @Test func aCalibrationIsMeasuredKeptAndUsedByTheOverdub() throws {
    let device = try Self.pacedLoop()
    let space = try Workspace()
    let song = try Self.clickProject(space)
    let config = ["XDG_CONFIG_HOME": space.path("config")]
    let calibrated = try Self.recordThroughLoop(
      ["record", "--calibrate", "--device", "loop", "--json"], device: device, environment: config)
    #expect(calibrated.status == 0, "\(calibrated.stderr)")
    let measured = try #require(try parseJSON(calibrated.stdout) as? [String: Any])
    let extra = try #require(measured["extraFrames"] as? Int)
    // The loop is whole before the first click: every one comes back, but for one in a cycle
    // that jackd drops under load (``pacedLoop(period:)``).
    #expect((measured["clicksHeard"] as? Int ?? 0) >= 11, "\(calibrated.stderr)")
    // Both of JACK's clients run in the same cycle, the player first: nothing beyond what the
    // plugin reports.
    #expect(abs(extra) <= 1, "\(calibrated.stderr)")
    let stored = space.path("config/tape/latency.json")
    #expect(FileManager.default.fileExists(atPath: stored))

    let played = try Self.recordThroughLoop(
      ["record", song, "Voice", "--play", "--device", "loop", "--to", "3s"], device: device,
      environment: config)
    #expect(played.status == 0, "\(played.stderr)")
    #expect(played.stderr.contains("calibrated ("), "\(played.stderr)")
    let (lag, each, _) = Self.misalignment(try Self.renderedVoice(space, song))
    print("overdub calibrated (\(extra)): lag \(lag), each click \(each)")
    #expect(abs(lag) <= 1 && each.allSatisfy { abs($0) <= 1 }, "lag \(lag), clicks \(each)")

    // A calibration that says 100 frames more puts the take 100 frames earlier.
    try space.tape("undo", song)
    let text = try String(contentsOfFile: stored, encoding: .utf8)
    try text.replacingOccurrences(
      of: "\"extraFrames\" : \(extra)", with: "\"extraFrames\" : \(extra + 100)"
    ).write(toFile: stored, atomically: true, encoding: .utf8)
    let moved = try Self.recordThroughLoop(
      ["record", song, "Voice", "--play", "--device", "loop", "--to", "3s"], device: device,
      environment: config)
    #expect(moved.status == 0, "\(moved.stderr)")
    let shifted = Self.misalignment(try Self.renderedVoice(space, song))
    #expect(shifted.lag == lag - 100, "\(shifted)")
  }
}

extension ProcessHeavyTests.RecordTests {
  /// Hashed noise on the 16-bit grid at about −20 dBFS: 4 s, the same on both channels.
  static func noise(frame: Int) -> Float {
    var value = UInt64(frame) &* 0x9E37_79B9_7F4A_7C15
    value ^= value >> 29
    value = value &* 0xBF58_476D_1CE4_E5B9
    value ^= value >> 32
    return Float(Int(value % 6_553) - 3_276) / 32_768
  }

  /// The punch tests' project: ``clickProject(_:)`` with 4 s of ``noise(frame:)`` on t2, the
  /// track punched, and a 1 kHz tone on a third track, so that what the loop carries back differs
  /// from what t2 held at every frame, through the crossfades too. Returns the project and two
  /// raw stereo 16-bit files: what t2 held, and what the loop carries (clicks, noise and tone).
  static func punchProject(
    _ space: Workspace
  ) throws -> (
    song: String, held: String, carried: String
  ) {
    let song = try clickProject(space)
    let frames = 48_000 * 4
    var held = [Int16](repeating: 0, count: frames * 2)
    var tone = held
    for frame in 0..<frames {
      held[frame * 2] = Int16(noise(frame: frame) * 32_768)
      held[frame * 2 + 1] = held[frame * 2]
      tone[frame * 2] = Int16((8_000 * sin(2 * Double.pi * Double(frame) / 48)).rounded())
      tone[frame * 2 + 1] = tone[frame * 2]
    }
    var carried = held
    for index in carried.indices { carried[index] += tone[index] }
    for frame in clickFrames {
      carried[frame * 2] += 16_000
      carried[frame * 2 + 1] += 16_000
    }
    for (name, samples, track) in [("noise", held, "t2"), ("tone", tone, "t3")] {
      let raw = space.path("\(name).s16")
      try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
      let wav = space.path("\(name).wav")
      try tool("/usr/bin/sox", ["-t", "s16", "-r", "48000", "-c", "2", raw, wav])
      let source = try space.tape("import", song, wav).stdout.trimmingCharacters(
        in: .whitespacesAndNewlines)
      if track == "t3" { try space.tape("track", "add", song, "Tone") }
      try space.tape("clip", "add", song, track, source, "--at", "0")
    }
    let carriedRaw = space.path("carried.s16")
    try carried.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: carriedRaw)) }
    return (song, space.path("noise.s16"), carriedRaw)
  }

  @Test func aPunchKeepsOnlyItsRangeCrossfadedIntoWhatWasThere() throws {
    let device = try Self.pacedLoop()
    let space = try Workspace()
    let (song, held, carried) = try Self.punchProject(space)
    let before = try Self.renderedVoice(space, song)
    let punched = try Self.recordThroughLoop(
      [
        "record", song, "Voice", "--play", "--device", "loop", "--punch-in", "1.5s",
        "--punch-out", "2.5s",
      ], device: device, environment: ["XDG_CONFIG_HOME": space.path("config")])
    #expect(punched.status == 0, "\(punched.stderr)")
    let worst = try Self.punchErrors(held: held, carried: carried, space, song)
    print("punch: worst error \(worst); \(punched.stderr)")
    #expect(worst.inside <= 1e-6 && worst.outside <= 1e-6, "\(worst)")
    #expect(worst.fades <= 1e-6, "\(worst)")
    #expect(before.count == 48_000 * 4)
    // One version: undone, the track is as it was.
    try space.tape("undo", song)
    #expect(try Self.renderedVoice(space, song) == before)
  }

  /// The worst differences of t2 as rendered now from the punch of 1.5–2.5 s (frames 72,000 to
  /// 120,000) with linear crossfades of 480 frames centred on its ends, inside the punch, in its
  /// crossfades and outside: the splice of `held` and `carried` (raw stereo 16-bit) computed by
  /// numpy (Tests/Support/punch-splice.py, run by the reference virtualenv's Python).
  static func punchErrors(
    held: String, carried: String, _ space: Workspace, _ song: String
  )
    throws -> (inside: Double, fades: Double, outside: Double, wrong: String)
  {
    try #require(
      FileManager.default.isExecutableFile(atPath: ReferenceOTIO.python),
      "the reference Python is missing: run scripts/setup.sh (it installs numpy 2.4.6 into .venv), or set TAPE_REFERENCE_PYTHON"
    )
    let script = ReferenceOTIO.root.appendingPathComponent("Tests/Support/punch-splice.py").path
    let rendered = try renderedVoiceFile(space, song)
    let result = try TapeBinary.run(
      URL(fileURLWithPath: ReferenceOTIO.python),
      [script, held, carried, rendered, "72000", "120000", "480"])
    try #require(result.status == 0, "punch-splice.py: \(result.stderr)")
    struct Report: Decodable {
      let inside, fades, outside: Double
      let frames, renderedFrames, wrongFrames, worstFrame: Int
      let firstWrong, lastWrong: Int?
    }
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    let report = try decoder.decode(Report.self, from: Data(result.stdout.utf8))
    try #require(
      report.renderedFrames == report.frames,
      "t2 renders \(report.renderedFrames) frames of \(report.frames)")
    let wrong =
      report.wrongFrames == 0
      ? "no frame wrong"
      : "\(report.wrongFrames) frames wrong from \(report.firstWrong ?? 0) to \(report.lastWrong ?? 0), the worst at \(report.worstFrame)"
    return (report.inside, report.fades, report.outside, wrong)
  }

}
