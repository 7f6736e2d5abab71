import Foundation
import Mixing
import ReferenceRenders
import Testing

let testAudio = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .appendingPathComponent("../../TestAudio").standardizedFileURL.path

func measure(_ samples: [Float], rate: Int, channels: Int, chunk: Int = 4_800) -> Double {
  var meter = LoudnessMeter(sampleRate: rate, channels: channels)
  samples.withUnsafeBufferPointer { buffer in
    guard let base = buffer.baseAddress else { return }
    let frames = buffer.count / channels
    var offset = 0
    while offset < frames {
      let n = min(chunk, frames - offset)
      meter.process(base + offset * channels, frames: n)
      offset += n
    }
  }
  return meter.integratedLoudness
}

@Suite("Loudness (EBU R128)")
struct LoudnessMeterTests {
  /// EBU Tech 3341, case 1: a 1 kHz stereo sine at −23 dBFS measures −23.0 LUFS (±0.1); and
  /// 6.02 dB less amplitude is 6.02 LU quieter.
  @Test func ebuReferenceSine() {
    let amplitude = pow(10, -23.0 / 20)
    let sine = (0..<(48_000 * 20)).flatMap { i -> [Float] in
      let value = Float(amplitude * sin(2 * Double.pi * 1_000 * Double(i) / 48_000))
      return [value, value]
    }
    let loudness = measure(sine, rate: 48_000, channels: 2)
    #expect(abs(loudness - -23) < 0.1)
    let halved = measure(sine.map { $0 / 2 }, rate: 48_000, channels: 2)
    #expect(abs(loudness - halved - 20 * log10(2.0)) < 1e-6)
  }

  /// Silence, and anything shorter than one 400 ms block, has no integrated loudness.
  @Test func silenceIsMinusInfinity() {
    #expect(measure([Float](repeating: 0, count: 96_000), rate: 48_000, channels: 2) == -.infinity)
    #expect(
      measure([Float](repeating: 0.5, count: 19_000), rate: 48_000, channels: 1) == -.infinity)
  }

  /// Within 0.1 LU of ffmpeg's ebur128 filter on real material, mono and stereo, 44.1 and
  /// 48 kHz, however the audio is cut into chunks.
  @Test(arguments: [
    ("speech-mono-48k-16.wav", 48_000, 1),
    ("piano-stereo-44k-24.wav", 44_100, 2),
    ("strings-stereo-48k-float.wav", 48_000, 2),
    ("noise-stereo-48k-16.flac", 48_000, 2),
    ("tone-mono-44k-24.aiff", 44_100, 1),
  ])
  func agreesWithFFmpeg(name: String, rate: Int, channels: Int) throws {
    let path = "\(testAudio)/\(name)"
    let samples = try ReferenceRender.decode(path)
    let reference = try ReferenceRender.integratedLoudness(path)
    for chunk in [997, 4_800, 65_536] {
      let loudness = measure(samples, rate: rate, channels: channels, chunk: chunk)
      #expect(abs(loudness - reference) < 0.1, "\(name): \(loudness) vs ffmpeg \(reference)")
    }
  }
}
