import Foundation
import Mixing
import Testing
import Timeline

/// Where a track's sound goes, or what keys a side chain, switched while playing: each switch
/// crossfades over one ramp (20 ms), and a switch that comes while another is under way (two
/// plans within one ramp) waits for it instead of cutting it short. Judged as the lane tests
/// judge a click (``LiveLaneGlideTests``): the largest second difference of either channel at
/// most 0.003 (a 100 Hz sine at half scale has 1e-4), and, settled, the play is the render.
@Suite("Switches while playing")
struct LiveSwitchTests {
  static let period = 256
  static let audio = [Source.ID(1): sineSource(hertz: 100, channels: 2, frames: 200_000)]

  static var clip: Clip {
    Clip(
      id: Clip.ID(1), source: Source.ID(1), timelineStart: 0,
      sourceRange: FrameRange(start: 0, count: 150_000))
  }

  /// t1 plays the sine into `output`; t2, t3 and t4 are buses to the master at 0, −20 and
  /// −6 dB, so that what each receives is heard at its own level.
  static func routed(to output: Int64) -> Project {
    Project(
      sampleRate: 48_000, channels: 2,
      tracks: [
        Track(id: Track.ID(1), name: "Tone", clips: [clip], output: Track.ID(output)),
        Track(id: Track.ID(2), name: "A"),
        Track(id: Track.ID(3), name: "B", gain: Gain(decibels: -20)),
        Track(id: Track.ID(4), name: "C", gain: Gain(decibels: -6)),
      ])
  }

  /// The play against the render of `project` over the 40 periods before period `end`.
  static func settled(
    _ played: [Float], on project: Project, before end: Int,
    audio: [Source.ID: SourceAudio] = audio
  ) throws -> Float {
    try EffectsHarness.settledDifference(
      played, on: project, audio: audio, period: period, before: end)
  }

  /// t1 goes to t2, then to t3 at period 100 and, one period later (within the first
  /// switch's 20 ms), to t4. Before, the second switch started at once from t3: what the
  /// first still gave t2 (three quarters of the sine, at 0 dB) dropped out in one sample.
  @Test func aSecondRouteSwitchWithinTheRampWaitsForTheFirst() throws {
    let harness = EffectsHarness(audio: Self.audio, period: Self.period)
    try harness.play(Self.routed(to: 2))
    let played = try harness.pull(periods: 300) { index in
      if index == 100 { try harness.play(Self.routed(to: 3)) }
      if index == 101 { try harness.play(Self.routed(to: 4)) }
    }
    let largest = LiveLaneGlideTests.largestSecondDifference(
      Array(played[(50 * Self.period * 2)...]))
    let worst = try Self.settled(played, on: Self.routed(to: 4), before: 300)
    let peak = { (from: Int) in (from..<(from + 4_800)).map { abs(played[$0 * 2]) }.max() ?? 0 }
    print(
      "route switched twice within a ramp: largest second difference \(largest), settled vs render \(worst), peak at t2 \(peak(60 * Self.period)), at t4 \(peak(200 * Self.period))"
    )
    #expect(largest <= 0.003, "a click: a second difference of \(largest)")
    #expect(worst < 1e-6, "settled, the play differs from the render by \(worst)")
    // Heard through t2 (0 dB), then t4 (−6 dB): the sine at half scale.
    #expect(abs(peak(60 * Self.period) - 0.5) < 0.002)
    #expect(abs(peak(200 * Self.period) - 0.5 * 0.501) < 0.002)
  }

  /// Two tracks swap which feeds which while playing: t1 (the sine) goes to the bus t2, then
  /// t2 goes to t1 and t1 to the master. t2, being left by t1, now runs before it: it cannot
  /// gather t1's share of the crossfade without a loop, so that share stops at once (a step,
  /// documented) instead of coming back around through t1 a period later; the play settles on
  /// the render exactly and nothing grows.
  @Test func tracksThatSwapWhichFeedsWhichSettleWithoutALoop() throws {
    let harness = EffectsHarness(audio: Self.audio, period: Self.period)
    let first = Self.routed(to: 2)
    var swapped = first
    swapped.tracks[0].output = nil
    swapped.tracks[1].output = Track.ID(1)
    try harness.play(first)
    let played = try harness.pull(periods: 300) { index in
      if index == 100 { try harness.play(swapped) }
    }
    let worst = try Self.settled(played, on: swapped, before: 300)
    let loudest = played.map(abs).max() ?? 0
    print("tracks swapped: settled vs render \(worst), loudest \(loudest)")
    #expect(worst < 1e-6, "settled, the play differs from the render by \(worst)")
    #expect(loudest <= 0.5 + 1e-6, "louder than the sine: \(loudest)")
  }

  /// LSP's side-chain compressor on t1 listening to its side chain (`scl`) with a peak
  /// detector (`scm` 0: its output is the rectified key), keyed by t2 (a 10 Hz sine at half
  /// scale: a rectified kink of 0.0013 at each zero crossing), switched to t3 (the same sine a
  /// quarter period later) at period 100, and at period 150 back to t2 and, one period later,
  /// to t3 again (within the ramp). Before, one bus per effect carried whichever source it
  /// had: the key jumped from one source to the other at once (a second difference of 0.5).
  @Test func aSidechainSwitchedToAnotherSourceCrossfades() throws {
    try LivePlugins.requireCompressor()
    let compressor = LivePlugins.compressor
    // A 10 Hz sine, and the same a quarter of its period later.
    let audio = [Source.ID(1): sineSource(hertz: 10, channels: 2, frames: 202_000)]
    let later = Clip(
      id: Clip.ID(2), source: Source.ID(1), timelineStart: 0,
      sourceRange: FrameRange(start: 1_200, count: 150_000))
    let harness = EffectsHarness(audio: audio, period: Self.period)
    // sct 2: External; scl 1: listen; scm 0: peak.
    let project = { (source: Int64) in
      Project(
        sampleRate: 48_000, channels: 2,
        tracks: [
          Track(
            id: Track.ID(1), name: "Ducked",
            effects: [
              Effect(
                id: Effect.ID(1), plugin: compressor,
                parameters: ["sct": 2, "scl": 1, "scm": 0], sidechain: Track.ID(source))
            ]),
          // The keys are heard only as keys: through a bus at −120 dB.
          Track(id: Track.ID(2), name: "Key", clips: [Self.clip], output: Track.ID(4)),
          Track(id: Track.ID(3), name: "Later key", clips: [later], output: Track.ID(4)),
          Track(id: Track.ID(4), name: "Quiet", gain: Gain(decibels: -120)),
        ])
    }
    try harness.play(project(2))
    let played = try harness.pull(periods: 300) { index in
      if index == 100 { try harness.play(project(3)) }
      if index == 150 { try harness.play(project(2)) }
      if index == 151 { try harness.play(project(3)) }
    }
    let largest = LiveLaneGlideTests.largestSecondDifference(
      Array(played[(50 * Self.period * 2)...]))
    // Settled on t3's key: the play is the render.
    let worst = try Self.settled(played, on: project(3), before: 300, audio: audio)
    // The key heard is t2's, then t3's: against the rectified sine at each phase.
    func error(_ from: Int, _ shift: Int) -> Float {
      var largest: Float = 0
      for frame in from..<(from + 2_400) {
        let phase = 2 * Double.pi * 10 * Double(frame + shift) / 48_000
        largest = max(largest, abs(played[frame * 2] - Float(abs(0.5 * sin(phase)))))
      }
      return largest
    }
    print(
      "side chain switched: largest second difference \(largest), settled vs render \(worst), keyed by t2 \(error(80 * Self.period, 0)), by t3 \(error(250 * Self.period, 1_200))"
    )
    #expect(largest <= 0.003, "a click: a second difference of \(largest)")
    #expect(worst < 1e-6, "settled, the play differs from the render by \(worst)")
    #expect(error(80 * Self.period, 0) < 0.01)
    #expect(error(250 * Self.period, 1_200) < 0.01)
  }
}
