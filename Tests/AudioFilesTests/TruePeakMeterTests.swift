import Foundation
import Testing

@testable import AudioFiles

@Suite("True-peak meter")
struct TruePeakMeterTests {
  /// Five seconds of stereo at 48 kHz: left a sine at a quarter of the rate whose samples all
  /// fall at ±0.5·√2/2 of its ±0.5 crests (so its true peak, 0.5, lies between them), faded in
  /// and out; right seeded noise with a loud burst in the middle.
  static func programme() -> [Float] {
    let frames = 240_000
    var state: UInt64 = 7
    var samples = [Float](repeating: 0, count: 2 * frames)
    for i in 0..<frames {
      // Faded in and out over half a second (sin²): no step to ring at either end.
      let edge = min(i, frames - 1 - i)
      let envelope = edge < 24_000 ? pow(sin(Double.pi / 2 * Double(edge) / 24_000), 2) : 1
      samples[2 * i] = Float(envelope * 0.5 * sin(Double.pi / 2 * Double(i) + Double.pi / 4))
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let noise = Double(Int64(bitPattern: state) >> 11) * 0x1.0p-52
      samples[2 * i + 1] = Float(noise * (100_000..<110_000 ~= i ? 0.7 : 0.2))
    }
    return samples
  }

  /// One meter per channel, each fed its channel out of the interleaved mix (what the
  /// renderer does, on a thread each), reads exactly what one meter of both channels reads,
  /// whatever the pieces it is fed in; and the sine's true peak is its crest, 3 dB over its
  /// samples.
  @Test func oneMeterPerChannelReadsWhatOneStereoMeterReads() throws {
    let samples = Self.programme()
    let frames = samples.count / 2
    let samplePeak = samples.map(abs).max() ?? 0
    let stereo = try TruePeakMeter(sampleRate: 48_000, channels: 2)
    let left = try TruePeakMeter(sampleRate: 48_000, channels: 1)
    let right = try TruePeakMeter(sampleRate: 48_000, channels: 1)
    try samples.withUnsafeBufferPointer { buffer in
      let base = try #require(buffer.baseAddress)
      var done = 0
      while done < frames {
        let count = min(7_001, frames - done)
        try stereo.process(base + 2 * done, frames: count)
        done += count
      }
      done = 0
      while done < frames {
        let count = min(131_072, frames - done)
        try left.process(base + 2 * done, frames: count, channel: 0, of: 2)
        try right.process(base + 2 * done, frames: count, channel: 1, of: 2)
        done += count
      }
    }
    try stereo.finish()
    try left.finish()
    try right.finish()
    #expect(max(samplePeak, left.peak, right.peak) == stereo.peak)
    #expect(abs(Double(left.peak) - 0.5) < 0.003, "\(left.peak)")
    let leftSamples = stride(from: 0, to: samples.count, by: 2).map { abs(samples[$0]) }
    #expect(abs(Double(leftSamples.max() ?? 0) - 0.5 * sqrt(0.5)) < 1e-6)
  }
}
