import Foundation
import Mixing
import Testing
import Timeline

/// Lanes that come or go while playing glide from the value playing: a send's envelope added
/// (its level −inf dB where the play is) or removed, a bus's pan lane added (hard left) or
/// removed. Before, each switched at once: the send's half of a 100 Hz sine at half scale
/// dropped out in one sample (a second difference near 0.1), the bus's right channel too.
/// Judged as the paced tests judge a click (docs/alsa-testing.md): the largest second
/// difference of either channel at most 0.003 (a 100 Hz sine at full scale has 1.7e-4); and
/// once settled, the play is the offline render of the version playing, sample for sample.
@Suite("Lanes that come and go while playing")
struct LiveLaneGlideTests {
  static let period = 256

  /// t1 plays a stereo 100 Hz sine at half scale from 0 to the master and, through send n1
  /// (0 dB), into t2, a bus going to the master.
  static func project() -> Project {
    let clip = Clip(
      id: Clip.ID(1), source: Source.ID(1), timelineStart: 0,
      sourceRange: FrameRange(start: 0, count: 150_000))
    return Project(
      sampleRate: 48_000, channels: 2,
      tracks: [
        Track(id: Track.ID(1), name: "Tone", clips: [clip]), Track(id: Track.ID(2), name: "Bus"),
      ],
      sends: [Send(id: Send.ID(1), from: Track.ID(1), to: Track.ID(2))])
  }

  static func flat(_ value: Double) -> Envelope {
    Envelope(points: [Envelope.Point(time: .zero, decibels: value)])
  }

  /// The largest second difference of either channel of `samples` (interleaved stereo).
  static func largestSecondDifference(_ samples: [Float]) -> Float {
    var largest: Float = 0
    for channel in 0..<2 {
      for frame in 2..<(samples.count / 2) {
        let (a, b, c) = (
          samples[(frame - 2) * 2 + channel], samples[(frame - 1) * 2 + channel],
          samples[frame * 2 + channel]
        )
        largest = max(largest, abs(a - 2 * b + c))
      }
    }
    return largest
  }

  @Test(arguments: ["send envelope", "bus pan lane"])
  func aLaneComingOrGoingGlides(lane: String) throws {
    let audio = [Source.ID(1): sineSource(hertz: 100, channels: 2, frames: 200_000)]
    let harness = EffectsHarness(audio: audio, period: Self.period)
    let plain = Self.project()
    var laned = plain
    if lane == "send envelope" {
      laned.sends[0].envelope = Self.flat(-.infinity)
    } else {
      laned.tracks[1].panEnvelope = ParameterEnvelope(curve: Self.flat(-1))
    }
    try harness.play(plain)
    // The lane comes at period 100 and goes at period 200; 100 periods each to settle.
    let played = try harness.pull(periods: 300) { index in
      if index == 100 { try harness.play(laned) }
      if index == 200 { try harness.play(plain) }
    }
    let largest = Self.largestSecondDifference(played)
    // Settled on each version: the periods before each change against the offline render.
    var worst: Float = 0
    for (project, end) in [(laned, 200), (plain, 300)] {
      worst = max(
        worst,
        try EffectsHarness.settledDifference(
          played, on: project, audio: audio, period: Self.period, before: end))
    }
    // The change is heard: the lane takes the send (or the bus's right) away.
    let loudest = { (from: Int, channel: Int) in
      (from..<(from + 4_800)).map { abs(played[$0 * 2 + channel]) }.max() ?? 0
    }
    let channel = lane == "send envelope" ? 0 : 1
    print(
      "\(lane): largest second difference \(largest), settled vs render \(worst), peak before \(loudest(90 * Self.period, channel)) with the lane \(loudest(180 * Self.period, channel))"
    )
    #expect(largest <= 0.003, "a click: a second difference of \(largest)")
    #expect(worst < 1e-6, "settled, the play differs from the render by \(worst)")
    #expect(loudest(90 * Self.period, channel) > 0.9)
    #expect(loudest(180 * Self.period, channel) < 0.6)
  }

  /// A lane edited under the playhead (a send's envelope or a bus's volume envelope from −20
  /// to 0 dB, a bus's pan lane from hard left to hard right) glides from the value playing to
  /// the new one over 20 ms. Before, only a pan lane or a send's envelope that came or went
  /// glided: a changed one jumped (the send's part of the sine stepped by 0.45 in one sample),
  /// and so did a bus's volume envelope, whatever the change.
  @Test(arguments: ["send envelope", "bus envelope", "bus pan lane"])
  func aLaneChangedUnderThePlayheadGlides(lane: String) throws {
    let audio = [Source.ID(1): sineSource(hertz: 100, channels: 2, frames: 200_000)]
    let harness = EffectsHarness(audio: audio, period: Self.period)
    let laned = { (value: Double) in
      var project = Self.project()
      switch lane {
      case "send envelope": project.sends[0].envelope = Self.flat(value)
      case "bus envelope": project.tracks[1].envelope = Self.flat(value)
      default: project.tracks[1].panEnvelope = ParameterEnvelope(curve: Self.flat(value))
      }
      return project
    }
    let (before, after) = lane == "bus pan lane" ? (laned(-1), laned(1)) : (laned(-20), laned(0))
    try harness.play(before)
    let played = try harness.pull(periods: 200) { index in
      if index == 100 { try harness.play(after) }
    }
    let largest = Self.largestSecondDifference(Array(played[(50 * Self.period * 2)...]))
    let worst = try EffectsHarness.settledDifference(
      played, on: after, audio: audio, period: Self.period, before: 200)
    let loudest = { (from: Int, channel: Int) in
      (from..<(from + 4_800)).map { abs(played[$0 * 2 + channel]) }.max() ?? 0
    }
    // The send's part (0.5 at 0 dB) comes up in both channels; the bus's half moves from the
    // left channel to the right.
    let channel = lane == "bus pan lane" ? 1 : 0
    print(
      "\(lane) changed: largest second difference \(largest), settled vs render \(worst), peak before \(loudest(80 * Self.period, channel)) after \(loudest(180 * Self.period, channel))"
    )
    #expect(largest <= 0.003, "a click: a second difference of \(largest)")
    #expect(worst < 1e-6, "settled, the play differs from the render by \(worst)")
    #expect(loudest(80 * Self.period, channel) < 0.6)
    #expect(loudest(180 * Self.period, channel) > 0.9)
  }

  /// A side chain removed while playing ramps out (20 ms) instead of stopping in one sample:
  /// LSP's side-chain compressor listening to its side chain (`scl`: its output is the key)
  /// on t1, keyed by t2, a 100 Hz sine at half scale also heard itself; the mix is twice the
  /// key until the side chain goes, then the key alone. Before, the compressor's half dropped
  /// out at once.
  @Test func aSidechainRemovedRampsOut() throws {
    try LivePlugins.requireCompressor()
    let compressor = LivePlugins.compressor
    let audio = [Source.ID(1): sineSource(hertz: 100, channels: 2, frames: 200_000)]
    let harness = EffectsHarness(audio: audio, period: Self.period)
    let clip = Clip(
      id: Clip.ID(1), source: Source.ID(1), timelineStart: 0,
      sourceRange: FrameRange(start: 0, count: 150_000))
    // sct 2: External; scl 1: listen; scm 1: RMS (a smooth level: a peak detector's output,
    // a rectified key, has kinks of its own at every zero crossing).
    let keyed = Effect(
      id: Effect.ID(1), plugin: compressor, parameters: ["sct": 2, "scl": 1, "scm": 1],
      sidechain: Track.ID(2))
    var plain = keyed
    plain.sidechain = nil
    let project = { (effect: Effect) in
      Project(
        sampleRate: 48_000, channels: 2,
        tracks: [
          Track(id: Track.ID(1), name: "Ducked", effects: [effect]),
          Track(id: Track.ID(2), name: "Key", clips: [clip]),
        ])
    }
    try harness.play(project(keyed))
    let played = try harness.pull(periods: 200) { index in
      if index == 100 { try harness.play(project(plain)) }
    }
    // From period 50 on: the play's own start (its fade-in, the side chain ramping in) aside.
    let largest = Self.largestSecondDifference(Array(played[(50 * Self.period * 2)...]))
    let loudest = { (from: Int) in
      (from..<(from + 4_800)).map { abs(played[$0 * 2]) }.max() ?? 0
    }
    print(
      "side chain removed: largest second difference \(largest), peak keyed \(loudest(80 * Self.period)), after \(loudest(180 * Self.period))"
    )
    #expect(largest <= 0.003, "a click: a second difference of \(largest)")
    // The compressor's half (the key's level) is gone once the side chain is.
    #expect(loudest(80 * Self.period) > 0.6)
    #expect(abs(loudest(180 * Self.period) - 0.5) < 0.01)
  }
}
