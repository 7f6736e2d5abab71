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

  /// EBU Tech 3342's loudness range of a programme that is 10 s at −20 LUFS and 10 s at
  /// −30 LUFS (1 kHz stereo sines): 10 LU, the transitions between them falling between the
  /// 10th and 95th percentiles.
  @Test func loudnessRangeOfTwoLevels() {
    let levels = [-20.0, -30.0]
    let sine = levels.flatMap { level in
      let amplitude = pow(10, level / 20)
      return (0..<(48_000 * 10)).flatMap { i -> [Float] in
        let value = Float(amplitude * sin(2 * Double.pi * 1_000 * Double(i) / 48_000))
        return [value, value]
      }
    }
    var meter = LoudnessMeter(sampleRate: 48_000, channels: 2)
    sine.withUnsafeBufferPointer { buffer in
      guard let base = buffer.baseAddress else { return }
      meter.process(base, frames: buffer.count / 2)
    }
    #expect(abs(meter.loudnessRange - 10) < 0.05, "\(meter.loudnessRange) LU")
  }

  /// The loudness range is ffmpeg's to within 0.1 LU on real material of 4 s and more (below
  /// 3.4 s ffmpeg's nearest rank rounds the 10th percentile to nothing and it reports 20 LU,
  /// the relative gate, for a single short-term block; Tape reports the spread of the blocks).
  @Test(arguments: [
    ("speech-mono-48k-16.wav", 48_000, 1),
    ("piano-stereo-44k-24.wav", 44_100, 2),
    ("noise-stereo-48k-16.flac", 48_000, 2),
  ])
  func loudnessRangeAgreesWithFFmpeg(name: String, rate: Int, channels: Int) throws {
    let path = "\(testAudio)/\(name)"
    let samples = try ReferenceRender.decode(path)
    let reference = try ReferenceRender.ebur128(path)
    var meter = LoudnessMeter(sampleRate: rate, channels: channels)
    samples.withUnsafeBufferPointer { buffer in
      guard let base = buffer.baseAddress else { return }
      meter.process(base, frames: buffer.count / channels)
    }
    #expect(
      abs(meter.loudnessRange - reference.range) < 0.1,
      "\(name): \(meter.loudnessRange) LU vs ffmpeg \(reference.range)")
    #expect(abs(meter.integratedLoudness - reference.integrated) < 0.1)
  }
}
