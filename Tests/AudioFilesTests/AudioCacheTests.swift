import AudioFiles
import Foundation
import Mixing
import Testing
import Timeline

@Suite("Decoded-audio cache")
struct AudioCacheTests {
  static func source(_ name: String, id: Int64 = 1) throws -> Source {
    let info = try AudioProbe.probe(TestAudio.path(name))
    return Source(
      id: Source.ID(id), path: info.path, contentHash: info.contentHash,
      sampleRate: info.sampleRate,
      channels: info.channels, frameCount: FrameCount(info.frameCount))
  }

  /// sox's own decoding of `path` to interleaved float32, optionally resampled with `rate -v`.
  static func soxDecode(_ path: String, rate: Int? = nil) throws -> [Float] {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent(
      "sox-\(UUID().uuidString).f32")
    defer { try? FileManager.default.removeItem(at: output) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
    process.arguments =
      ["-D", path, "-t", "raw", "-e", "floating-point", "-b", "32", output.path]
      + (rate.map { ["rate", "-v", "\($0)"] } ?? [])
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    let data = try Data(contentsOf: output)
    return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
  }

  /// At the file's own rate the cache holds exactly what sox decodes, sample for sample.
  @Test(arguments: [
    "speech-mono-48k-16.wav", "piano-stereo-44k-24.wav", "strings-stereo-48k-float.wav",
    "noise-stereo-48k-16.flac", "tone-mono-44k-24.aiff",
  ])
  func decodesExactlyLikeSox(name: String) throws {
    let dir = TemporaryCacheDirectory()
    let source = try Self.source(name)
    let decoded = try AudioCache(directory: dir.path).load(source, projectRate: source.sampleRate)
    #expect(decoded.audio.frames == Int(source.frameCount.frames))
    #expect(decoded.audio.channels == source.channels)
    #expect(try decoded.samples() == (try Self.soxDecode(source.path)))
  }

  /// A 44.1 kHz tone in a 48 kHz project: the length the model predicts, the same level and
  /// pitch, and within a small tolerance of sox's resampler (libsoxr comes from it).
  @Test func resamplesToTheProjectRate() throws {
    let dir = TemporaryCacheDirectory()
    let source = try Self.source("tone-mono-44k-24.aiff")
    let decoded = try AudioCache(directory: dir.path).load(source, projectRate: 48_000)
    #expect(decoded.audio.frames == 96_000)  // round(88 200 · 48 000 / 44 100)
    let middle = Array(try decoded.samples()[12_000..<84_000])
    let rms = (middle.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(middle.count))
      .squareRoot()
    #expect(abs(20 * log10(rms) - (-6 - 3.0103)) < 0.01)  // a −6 dBFS sine: RMS −9.03 dBFS
    // Pitch from the first and last rising zero crossings, located by linear interpolation.
    var rising: [Double] = []
    for index in 1..<middle.count where middle[index - 1] < 0 && middle[index] >= 0 {
      let fraction = Double(-middle[index - 1]) / Double(middle[index] - middle[index - 1])
      rising.append(Double(index - 1) + fraction)
    }
    let frequency = Double(rising.count - 1) / ((rising.last! - rising.first!) / 48_000)
    #expect(abs(frequency - 440) < 0.01)
    let sox = try Self.soxDecode(source.path, rate: 48_000)
    let difference = zip(middle, sox[12_000..<84_000]).map { abs($0 - $1) }.max() ?? 1
    #expect(difference < 1e-3)
  }

  @Test func aSecondLoadReusesTheCacheFile() throws {
    let dir = TemporaryCacheDirectory()
    let cache = AudioCache(directory: dir.path)
    let source = try Self.source("speech-mono-48k-16.wav")
    _ = try cache.load(source, projectRate: 48_000)
    let file = cache.path(for: source, projectRate: 48_000)
    let written = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date
    Thread.sleep(forTimeInterval: 0.05)
    let again = try cache.load(source, projectRate: 48_000)
    #expect(
      try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date == written)
    #expect(again.audio.frames == 307_233)
    // The entry and the source file's identity beside it.
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).count == 2)
  }

  @Test func aMissingOrChangedSourceIsNamed() throws {
    let dir = TemporaryCacheDirectory()
    let copy = dir.path + "-speech.wav"
    try FileManager.default.copyItem(atPath: TestAudio.path("speech-mono-48k-16.wav"), toPath: copy)
    defer { try? FileManager.default.removeItem(atPath: copy) }
    let probed = try AudioProbe.probe(copy)
    let source = Source(
      id: Source.ID(3), path: copy, contentHash: probed.contentHash, sampleRate: 48_000,
      channels: 1,
      frameCount: FrameCount(probed.frameCount))
    let cache = AudioCache(directory: dir.path)

    var bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
    bytes[bytes.count / 2] ^= 0x40  // same size, different audio
    try bytes.write(to: URL(fileURLWithPath: copy))
    #expect(throws: AudioFileError.sourceChanged(source: "s3", path: copy)) {
      try cache.load(source, projectRate: 48_000)
    }
    #expect(
      AudioFileError.sourceChanged(source: "s3", path: copy).description
        == "source s3 has changed: \(copy) is not the audio that was imported; restore the original or relink with 'tape relink FILE s3 PATH --force'"
    )
    try FileManager.default.removeItem(atPath: copy)
    #expect(throws: AudioFileError.sourceMissing(source: "s3", path: copy)) {
      try cache.load(source, projectRate: 48_000)
    }
    // Nothing was cached for a file that failed its checks.
    #expect(((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).isEmpty)
  }
}

/// A temporary directory path (not created) for a cache, removed afterwards.
final class TemporaryCacheDirectory {
  let path = FileManager.default.temporaryDirectory.appendingPathComponent(
    "tape-cache-\(UUID().uuidString)"
  ).path

  deinit { try? FileManager.default.removeItem(atPath: path) }
}
