import Foundation
import Synchronization
import Testing

/// `tape record --play` and `--calibrate` through a paced JACK loopback: the player's output
/// comes back as the recorder's input (``PacedDevice/startLoopback()``), so that the take is
/// what was played, delayed by the whole round trip. The project holds clicks at frames the
/// test chose; the take, rendered, must have them at the same frames.
extension RecordTests {
  /// The clicks' frames: irregular, from 1 s on.
  static let clickFrames = (0..<8).map { 48_000 + $0 * 7_001 + ($0 * $0 * 131) % 997 }

  /// A JACK server on the dummy driver in cycles of `period` frames, and `loop` on it, ALSA's
  /// jack PCM for both directions, its playback coming back as its capture.
  static func pacedLoop(period: Int = 256) throws -> PacedDevice {
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

  /// The Voice track rendered alone, channel 0, as floats.
  static func renderedVoice(_ space: Workspace, _ song: String) throws -> [Float] {
    let wav = space.path("voice-\(UInt32.random(in: 0...UInt32.max)).wav")
    try space.tape("render", song, "-o", wav, "--tracks", "t2", "--bits", "32f")
    let raw = wav + ".f32"
    try tool("/usr/bin/sox", [wav, "-t", "f32", raw])
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
    // that jackd drops under load (its xrun at 256 frames; see ``PacedDevice/judgingPeriod``).
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

extension RecordTests {
  /// Hashed noise on the 16-bit grid at about −20 dBFS: 4 s, the same on both channels.
  static func noise(frame: Int) -> Float {
    var value = UInt64(frame) &* 0x9E37_79B9_7F4A_7C15
    value ^= value >> 29
    value = value &* 0xBF58_476D_1CE4_E5B9
    value ^= value >> 32
    return Float(Int(value % 6_553) - 3_276) / 32_768
  }

  @Test func aPunchKeepsOnlyItsRangeCrossfadedIntoWhatWasThere() throws {
    let device = try Self.pacedLoop()
    let space = try Workspace()
    let song = try Self.clickProject(space)
    // t2 holds 4 s of noise; the loop captures the mix (the clicks and the noise).
    var samples = [Int16](repeating: 0, count: 48_000 * 4 * 2)
    for frame in 0..<(48_000 * 4) {
      let value = Int16(Self.noise(frame: frame) * 32_768)
      samples[frame * 2] = value
      samples[frame * 2 + 1] = value
    }
    let raw = space.path("noise.s16")
    try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
    try tool(
      "/usr/bin/sox", ["-t", "s16", "-r", "48000", "-c", "2", raw, space.path("noise.wav")])
    try space.tape("import", song, space.path("noise.wav"))
    try space.tape("clip", "add", song, "t2", "s2", "--at", "0")
    let before = try Self.renderedVoice(space, song)
    let punched = try Self.recordThroughLoop(
      [
        "record", song, "Voice", "--play", "--device", "loop", "--punch-in", "1.5s",
        "--punch-out", "2.5s",
      ], device: device, environment: ["XDG_CONFIG_HOME": space.path("config")])
    #expect(punched.status == 0, "\(punched.stderr)")
    let rendered = try Self.renderedVoice(space, song)
    let worst = Self.punchErrors(rendered)
    print(
      "punch: worst error inside \(worst.inside), in the crossfades \(worst.fades), outside \(worst.outside); \(punched.stderr)"
    )
    #expect(worst.inside <= 1e-6 && worst.outside <= 1e-6, "\(worst)")
    // Fade curves evaluated at a frame's start or its middle differ by half a step of 1/480.
    #expect(worst.fades <= 0.1 / 480 + 1e-6, "\(worst)")
    #expect(before.count == 48_000 * 4)
    // One version: undone, the track is as it was.
    try space.tape("undo", song)
    #expect(try Self.renderedVoice(space, song) == before)
  }

  /// The worst difference of `rendered` from the punch of 1.5–2.5 s of ``aPunchKeepsOnlyItsRangeCrossfadedIntoWhatWasThere()``,
  /// inside the punch, in its crossfades and outside.
  static func punchErrors(_ rendered: [Float]) -> (inside: Float, fades: Float, outside: Float) {
    // The splice, computed here: the old noise outside, noise and clicks (what the loop
    // carried) inside, linear crossfades of 480 frames centred on 1.5 s and 2.5 s.
    let crossfade = 480
    let punchIn = 72_000
    let punchOut = 120_000
    var worst = (inside: Float(0), fades: Float(0), outside: Float(0))
    for frame in 0..<(48_000 * 4) {
      let old = Self.noise(frame: frame)
      let new = old + (Self.clickFrames.contains(frame) ? 16_000 / 32_768 : 0)
      let fadeIn = Float(frame - (punchIn - crossfade / 2)) / Float(crossfade)
      let fadeOut = Float(punchOut + crossfade / 2 - frame) / Float(crossfade)
      let share = max(0, min(1, min(fadeIn, fadeOut)))
      let expected = old * (1 - share) + new * share
      let error = abs((frame < rendered.count ? rendered[frame] : 0) - expected)
      if share == 0 {
        worst.outside = max(worst.outside, error)
      } else if share == 1 {
        worst.inside = max(worst.inside, error)
      } else {
        worst.fades = max(worst.fades, error)
      }
    }
    return worst
  }
}
