import Mixing
import Testing
import Timeline

@Suite("Clip gain")
struct ClipGainTests {
  /// Clip gain multiplies the fade envelope: −6.02 dB halves every frame's gain.
  @Test func clipGainScalesTheFadeEnvelope() {
    let clip = Clip(
      id: Clip.ID(1), source: Source.ID(1), timelineStart: 0,
      sourceRange: FrameRange(start: 0, count: 8), gain: Gain(decibels: -6.020_599_913_279_624),
      fadeIn: Fade(length: 4))
    let gains = (0..<8).map { Mixing.clipGain(clip, at: Int64($0)) }
    let expected = [0, 0.125, 0.25, 0.375, 0.5, 0.5, 0.5, 0.5]
    for (got, want) in zip(gains, expected) {
      #expect(abs(got - want) < 1e-12)
    }
  }
}
