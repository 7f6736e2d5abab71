import Foundation
import Mixing
import Testing
import Timeline

/// A play to the project's end rings its effects out, as a render's tail does
/// (``LiveMixer/ringOut(quiet:limit:threshold:)``).
@Suite("The live mixer rings effects out past the end")
struct LiveTailTests {
  /// swh's pure delay (Debian's swh-lv2), 0.1 s, on the first track of the two-track project
  /// of `LiveMixerTests` (noise, to 30,100).
  static func delayed() -> Project {
    var project = liveProject()
    project.tracks[0].effects = [
      Effect(
        id: Effect.ID(1), plugin: "http://plugin.org.uk/swh-plugins/delay_n",
        parameters: ["delay_time": 0.1, "max_delay": 1])
    ]
    return project
  }

  /// Pulls periods until the play ends; returns what it played (the frames that belong to it).
  static func playToEnd(_ harness: EffectsHarness) -> [Float] {
    var played: [Float] = []
    var buffer = [Float](repeating: .nan, count: harness.period * 2)
    for _ in 0..<1_000 {
      let count = buffer.withUnsafeMutableBufferPointer {
        LiveMixer.render(harness.mixer.engine, frames: harness.period, into: $0.baseAddress!)
      }
      played += buffer.prefix(count * 2)
      if count < harness.period { break }
    }
    return played
  }

  /// With ringing out, the delay's echo of the last 0.1 s plays after the last clip, sample for
  /// sample the render's (which ends with the echo, at 34,900), then the play ends after the
  /// quiet window (4,800 frames here), within a period. Without, it ends at 30,100 as before.
  @Test func thePlayLetsTheEchoRingOut() throws {
    let project = Self.delayed()
    let ringing = EffectsHarness()
    ringing.mixer.ringOut(quiet: 4_800, limit: 48_000, threshold: Float(pow(10, -90.0 / 20)))
    try ringing.play(project)
    let played = Self.playToEnd(ringing)
    let render = try EffectsHarness.offline(project, audio: ringing.audio, frames: 34_900)
    #expect(played.count / 2 >= 34_900 + 4_800)
    #expect(played.count / 2 < 34_900 + 4_800 + ringing.period)
    #expect(Array(played.prefix(render.count)) == render, "the play differs from the render")
    #expect(render[(30_100 * 2)...].contains { abs($0) > 0.1 }, "no echo after the last clip")
    #expect(played[(30_100 * 2)..<(30_200 * 2)].contains { abs($0) > 0.01 })
    #expect(played[(34_900 * 2)...].allSatisfy { abs($0) < 3.2e-5 })

    let plain = EffectsHarness()
    try plain.play(project)
    #expect(Self.playToEnd(plain).count / 2 == 30_100)
  }

  /// A loop does not wait for tails: it wraps at the end, as before. The delay's echo of the
  /// pass's end carries into the next pass (its instance keeps running, as in a DAW); once it
  /// has gone through (0.1 s), the second pass is the first, sample for sample, 30,100 frames
  /// later (a loop that waited for the tail would be 9,600 frames later and differ).
  @Test func aLoopWrapsAtTheEnd() throws {
    let harness = EffectsHarness(range: 0..<Int64.max, loop: true)
    harness.mixer.ringOut(quiet: 4_800, limit: 48_000, threshold: Float(pow(10, -90.0 / 20)))
    try harness.play(Self.delayed())
    let played = try harness.pull(periods: 240)
    #expect(played.count == 240 * 256 * 2, "the loop ended")
    let first = Array(played[(5_000 * 2)..<(29_000 * 2)])
    let second = Array(played[((30_100 + 5_000) * 2)..<((30_100 + 29_000) * 2)])
    #expect(first == second, "the second pass is not the first, 30,100 frames later")
    #expect(first.contains { abs($0) > 0.1 }, "the passes are silent: the test proves nothing")
  }
}
