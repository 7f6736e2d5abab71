import AudioFiles
import Foundation
import Testing
import Timeline

/// The checked-in test audio, described in TestAudio/README.md.
enum TestAudio {
  static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../TestAudio").standardizedFileURL

  static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
}

@Suite("Probing audio files")
struct AudioProbeTests {
  /// Rates, channels and lengths as sox reports them (soxi), checked independently of libsndfile.
  @Test(arguments: [
    ("speech-mono-48k-16.wav", 48_000, 1, Int64(307_233)),
    ("piano-stereo-44k-24.wav", 44_100, 2, 176_400),
    ("strings-stereo-48k-float.wav", 48_000, 2, 144_000),
    ("noise-stereo-48k-16.flac", 48_000, 2, 192_000),
    ("tone-mono-44k-24.aiff", 44_100, 1, 88_200),
    ("front-center-mono-48k-16.wav", 48_000, 1, 68_545),
  ])
  func probesRealFiles(name: String, rate: Int, channels: Int, frames: Int64) throws {
    let info = try AudioProbe.probe(TestAudio.path(name))
    #expect(info.path == RawPath(TestAudio.path(name)))
    #expect(info.sampleRate == rate)
    #expect(info.channels == channels)
    #expect(info.frameCount == frames)
    // SHA-256 of the bytes, as sha256sum gives it, and the size.
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [TestAudio.path(name)]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let sum = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let size = try FileManager.default.attributesOfItem(atPath: TestAudio.path(name))[.size]
    #expect(info.contentHash == "sha256:\(sum.prefix(64)):\(size as? Int ?? -1)")
  }

  @Test func badFilesGetTheirOwnErrors() {
    let truncated = TestAudio.path("bad-truncated.wav")
    // The header promises 192 000 data bytes (48 000 frames); 99 956 bytes (24 989 frames) exist.
    #expect(
      throws: AudioFileError.truncated(path: truncated, expectedFrames: 48_000, readFrames: 24_989)
    ) {
      try AudioProbe.probe(truncated)
    }
    let six = TestAudio.path("bad-six-channels.wav")
    #expect(throws: AudioFileError.tooManyChannels(path: six, channels: 6)) {
      try AudioProbe.probe(six)
    }
    let empty = TestAudio.path("bad-empty.wav")
    #expect(throws: AudioFileError.empty(path: empty)) { try AudioProbe.probe(empty) }
    let text = TestAudio.path("bad-not-audio.wav")
    #expect(throws: AudioFileError.notAudio(path: text, reason: "Format not recognised.")) {
      try AudioProbe.probe(text)
    }
    let missing = TestAudio.path("no-such-file.wav")
    #expect(throws: AudioFileError.missing(path: missing)) { try AudioProbe.probe(missing) }
  }

  @Test func theContentHashFollowsTheBytes() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
      "tape-hash-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let original = try Data(
      contentsOf: URL(fileURLWithPath: TestAudio.path("speech-mono-48k-16.wav")))
    let copy = dir.appendingPathComponent("copy.wav")
    try original.write(to: copy)
    var changed = original
    changed[changed.count / 2] ^= 1
    let altered = dir.appendingPathComponent("altered.wav")
    try changed.write(to: altered)
    let hash = try ContentHash.ofFile(at: TestAudio.path("speech-mono-48k-16.wav"))
    #expect(try ContentHash.ofFile(at: copy.path) == hash)
    #expect(try ContentHash.ofFile(at: altered.path) != hash)
    #expect(hash.hasSuffix(":\(original.count)"))
  }
}
