import Foundation
import Mixing
import SafeFiles
import Synchronization
import Testing
import Timeline

@testable import AudioFiles

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
    #expect(try decoded.samples() == (try Self.soxDecode(source.path.description)))
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
    let sox = try Self.soxDecode(source.path.description, rate: 48_000)
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
      id: Source.ID(3), path: RawPath(copy), contentHash: probed.contentHash, sampleRate: 48_000,
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

  /// A source deleted while a player has its decoded audio open plays on, in later versions
  /// too (said once); one never opened is still an error.
  @Test func aSourceDeletedWhileOpenPlaysOn() throws {
    let dir = TemporaryCacheDirectory()
    let copy = dir.path + "-speech.wav"
    try FileManager.default.copyItem(atPath: TestAudio.path("speech-mono-48k-16.wav"), toPath: copy)
    defer { try? FileManager.default.removeItem(atPath: copy) }
    let probed = try AudioProbe.probe(copy)
    let source = Source(
      id: Source.ID(3), path: RawPath(copy), contentHash: probed.contentHash, sampleRate: 48_000,
      channels: 1, frameCount: FrameCount(probed.frameCount))
    let other = try Self.source("tone-mono-44k-24.aiff", id: 4)
    func project(_ sources: [Source]) -> Project {
      Project(
        sampleRate: 48_000, channels: 2, sources: sources,
        tracks: sources.enumerated().map { index, source in
          Track(
            id: Track.ID(Int64(index + 1)), name: "T\(index + 1)",
            clips: [
              Clip(
                id: Clip.ID(Int64(index + 1)), source: source.id, timelineStart: 0,
                sourceRange: FrameRange(start: 0, count: 1_000))
            ])
        })
    }
    let library = AudioLibrary(cache: AudioCache(directory: dir.path))
    let opened = try #require(try library.audio(for: project([source]))[Source.ID(3)])
    try FileManager.default.removeItem(atPath: copy)
    // A later version (another track added) still plays it, from the same decoded audio.
    for _ in 0..<3 {
      let audio = try library.audio(for: project([source, other]))
      #expect(audio[Source.ID(3)] === opened)
    }
    let notices = library.takeNotices()
    #expect(notices.count == 1)
    #expect(notices.first?.hasPrefix("source s3's file \(copy) is gone") == true)
    #expect(library.takeNotices() == [])
    // A library that never opened it refuses it.
    #expect(throws: AudioFileError.sourceMissing(source: "s3", path: copy)) {
      try AudioLibrary(cache: AudioCache(directory: dir.path)).audio(for: project([source]))
    }
  }

  /// Decoded audio that cannot be locked into RAM (RLIMIT_MEMLOCK) is said once; it is read
  /// all the same.
  @Test func aLockFailureIsSaidOnce() throws {
    let dir = TemporaryCacheDirectory()
    let pool = ChunkPool(locksMemory: true) { _, _ in ENOMEM }
    let library = AudioLibrary(cache: AudioCache(directory: dir.path, memory: pool))
    let source = try Self.source("speech-mono-48k-16.wav")
    let project = Project(
      sampleRate: 48_000, channels: 2, sources: [source],
      tracks: [
        Track(
          id: Track.ID(1), name: "T1",
          clips: [
            Clip(
              id: Clip.ID(1), source: source.id, timelineStart: 0,
              sourceRange: FrameRange(start: 0, count: 1_000))
          ])
      ])
    #expect(library.takeNotices() == [])
    let audio = try #require(try library.audio(for: project)[source.id])
    try library.makeResident(audio, 0)
    #expect(audio.isResident(0))
    let notices = library.takeNotices()
    #expect(notices.count == 1)
    #expect(notices.first?.hasPrefix("could not lock the decoded audio into RAM") == true)
    #expect(library.takeNotices() == [])
  }
}

/// A temporary directory path (not created) for a cache, removed afterwards.
final class TemporaryCacheDirectory {
  let path = FileManager.default.temporaryDirectory.appendingPathComponent(
    "tape-cache-\(UUID().uuidString)"
  ).path

  deinit { try? FileManager.default.removeItem(atPath: path) }
}

@Suite("A cache that cannot lie")
struct CacheIntegrityTests {
  /// A project source in a folder of its own, with its cache beside it.
  final class Fixture {
    let folder = TemporaryCacheDirectory()
    let sourcePath: String
    let source: Source
    var cache: AudioCache { AudioCache(directory: folder.path + "/cache") }

    init(_ name: String = "speech-mono-48k-16.wav") throws {
      try FileManager.default.createDirectory(
        atPath: folder.path, withIntermediateDirectories: true)
      sourcePath = folder.path + "/" + name
      try FileManager.default.copyItem(atPath: TestAudio.path(name), toPath: sourcePath)
      let info = try AudioProbe.probe(sourcePath)
      source = Source(
        id: Source.ID(1), path: RawPath(sourcePath), contentHash: info.contentHash,
        sampleRate: info.sampleRate, channels: info.channels,
        frameCount: FrameCount(info.frameCount))
    }

    var entry: String { cache.path(for: source, projectRate: 48_000) }
  }

  /// The checksum is XXH64, equal to the reference implementation (`xxhsum -H64`) on the cache
  /// file's own bytes.
  @Test func theChecksumIsXXH64() throws {
    let fixture = try Fixture()
    _ = try fixture.cache.load(fixture.source, projectRate: 48_000)
    let data = try Data(contentsOf: URL(fileURLWithPath: fixture.entry))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/xxhsum")
    process.arguments = ["-H64", fixture.entry]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let line = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let reference = try #require(UInt64(line.prefix(16), radix: 16))
    #expect(data.withUnsafeBytes { XXH64.digest($0) } == reference)
  }

  /// A cache file with flipped bytes in its audio is decoded again, never played: the samples
  /// read equal those of a clean cache, and the entry on disk is whole again.
  @Test func flippedBytesAreDecodedAgain() throws {
    let fixture = try Fixture()
    let clean = try fixture.cache.load(fixture.source, projectRate: 48_000).samples()
    var bytes = try Data(contentsOf: URL(fileURLWithPath: fixture.entry))
    for offset in stride(from: bytes.count / 2, to: bytes.count / 2 + 64, by: 1) {
      bytes[offset] ^= 0xA5
    }
    try bytes.write(to: URL(fileURLWithPath: fixture.entry))
    #expect(try fixture.cache.load(fixture.source, projectRate: 48_000).samples() == clean)
    #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.entry)) != bytes)
    // A damaged header is not trusted either.
    var header = try Data(contentsOf: URL(fileURLWithPath: fixture.entry))
    header[20] ^= 1
    try header.write(to: URL(fileURLWithPath: fixture.entry))
    #expect(try fixture.cache.load(fixture.source, projectRate: 48_000).samples() == clean)
  }

  /// A cache file cut to half its length while a reader holds it open: the next chunk read is
  /// short, the source is decoded again, and what is read is still the right audio. No signal.
  @Test func aFileTruncatedWhileReadIsDecodedAgain() throws {
    let fixture = try Fixture()
    let clean = try fixture.cache.load(fixture.source, projectRate: 48_000).samples()
    let decoded = try fixture.cache.load(fixture.source, projectRate: 48_000)
    try decoded.makeResident(0)
    let size = try #require(FileIdentity(path: fixture.entry)?.size)
    #expect(truncate(fixture.entry, off_t(size / 2)) == 0)
    #expect(try decoded.samples() == clean)
  }

  /// A cache file cut short while many threads read its chunks at once (as a render's loader
  /// does): every chunk read is the right audio, the source is decoded again once (the entry
  /// is whole again), and damage after that is an error naming the file, not another decode.
  @Test func chunksReadInParallelFromATruncatedFileAreDecodedAgainOnce() throws {
    let fixture = try Fixture()
    let clean = try fixture.cache.load(fixture.source, projectRate: 48_000).samples()
    let decoded = try fixture.cache.load(fixture.source, projectRate: 48_000)
    let size = try #require(FileIdentity(path: fixture.entry)?.size)
    #expect(truncate(fixture.entry, off_t(size / 2)) == 0)
    let audio = decoded.audio
    #expect(audio.chunkCount >= 4)
    let reads = Mutex<[(chunk: Int, samples: [Float])]>([])
    let failures = Mutex<[AudioFileError]>([])
    DispatchQueue.concurrentPerform(iterations: 4 * audio.chunkCount) { task in
      let chunk = task % audio.chunkCount
      let count = audio.samplesInChunk(chunk)
      let buffer = UnsafeMutablePointer<Float>.allocate(capacity: count)
      defer { buffer.deallocate() }
      do throws(AudioFileError) {
        try decoded.read(chunk, into: buffer)
        let samples = Array(UnsafeBufferPointer(start: buffer, count: count))
        reads.withLock { $0.append((chunk, samples)) }
      } catch {
        failures.withLock { $0.append(error) }
      }
    }
    #expect(failures.withLock { $0 }.isEmpty)
    let all = reads.withLock { $0 }
    #expect(all.count == 4 * audio.chunkCount)
    for (chunk, samples) in all {
      let first = chunk * SourceAudio.chunkFrames * audio.channels
      #expect(samples == Array(clean[first..<first + samples.count]), "chunk \(chunk)")
    }
    #expect(FileIdentity(path: fixture.entry)?.size == size)
    // Decoded again once already: cut short again, the last chunk is an error naming the file.
    #expect(truncate(fixture.entry, off_t(size / 2)) == 0)
    let last = audio.chunkCount - 1
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: audio.samplesInChunk(last))
    defer { buffer.deallocate() }
    do {
      try decoded.read(last, into: buffer)
      Issue.record("a chunk of a file cut short twice was read")
    } catch {
      guard case .cache(let path, _) = error else {
        Issue.record("unexpected error \(error)")
        return
      }
      #expect(path == fixture.entry)
    }
  }

  /// A render's loader reads a range's new chunks on two threads: every chunk the plan reads
  /// becomes resident with the audio a plain load reads; when chunks of two sources cannot be
  /// read (their cache files cut short, their source files gone), the error is that of the
  /// first chunk in the plan's order that failed, every time.
  @Test func aPlansChunksAreReadInParallelAndTheFirstFailureIsSaid() throws {
    let folder = try RenderFolder()
    var builder = ProjectBuilder()
    var paths: [String] = []
    for name in ["speech-mono-48k-16.wav", "noise-stereo-48k-16.flac"] {
      let path = folder.path + "/" + name
      try FileManager.default.copyItem(atPath: TestAudio.path(name), toPath: path)
      let info = try AudioProbe.probe(path)
      builder.project.sources.append(
        Source(
          id: Source.ID(Int64(paths.count + 1)), path: RawPath(path),
          contentHash: info.contentHash, sampleRate: info.sampleRate, channels: info.channels,
          frameCount: FrameCount(info.frameCount)))
      paths.append(path)
    }
    let speech = builder.project.sources[0].id
    let noise = builder.project.sources[1].id
    builder.track([builder.clip(speech, at: 0, from: 0, length: 307_233)])
    builder.track([builder.clip(noise, at: 1_000, from: 0, length: 190_000)])
    let project = builder.project
    let cache = AudioCache(directory: folder.path + "/cache")
    let range = 0..<project.timelineEnd.frames

    let audio = try cache.sources(for: project)
    let plan = try RenderPlan(project: project, audio: audio.audio)
    try audio.makeResident(plan, range: range)
    for source in project.sources {
      let loaded = try #require(audio.sources[source.id])
      #expect(loaded.audio.residentChunks == Array(0..<loaded.audio.chunkCount))
      var resident: [Float] = []
      for chunk in 0..<loaded.audio.chunkCount {
        let samples = try #require(loaded.audio.chunk(chunk))
        resident += UnsafeBufferPointer(start: samples, count: loaded.audio.samplesInChunk(chunk))
      }
      let plain = try AudioCache(directory: folder.path + "/cache")
        .load(source, projectRate: 48_000).samples()
      #expect(resident == plain)
    }

    // Six loads of the same project, each with its own plan, opened before the damage.
    let attempts = try (0..<6).map { _ in
      let audio = try cache.sources(for: project)
      return (audio, try RenderPlan(project: project, audio: audio.audio))
    }
    for path in paths { try FileManager.default.removeItem(atPath: path) }
    // The speech's chunks read but its last; none of the noise's does. Read in the plan's order
    // on two threads, the noise's first chunk may fail before the speech's last: still the
    // speech's failure is the one said.
    let speechEntry = cache.path(for: project.sources[0], projectRate: 48_000)
    let speechSize = try #require(FileIdentity(path: speechEntry)?.size)
    let lastChunk = speechSize - 307_233 * 4 + Int64(4 * SourceAudio.chunkFrames * 4)
    #expect(truncate(speechEntry, off_t(lastChunk + 100)) == 0)
    #expect(truncate(cache.path(for: project.sources[1], projectRate: 48_000), 8_192) == 0)
    for (audio, plan) in attempts {
      #expect(throws: AudioFileError.sourceMissing(source: "s1", path: paths[0])) {
        try audio.makeResident(plan, range: range)
      }
    }
  }

  /// A source replaced by other audio of the same length, with its old modification time (as
  /// `cp -p` or `rsync -t` leave it), is refused even though its old audio is cached.
  @Test func aReplacedSourceIsRefusedEvenWhenCached() throws {
    let fixture = try Fixture()
    _ = try fixture.cache.load(fixture.source, projectRate: 48_000)
    let before = try #require(FileIdentity(path: fixture.sourcePath))
    var bytes = try Data(contentsOf: URL(fileURLWithPath: fixture.sourcePath))
    bytes[bytes.count - 100] ^= 0x10
    try bytes.write(to: URL(fileURLWithPath: fixture.sourcePath))
    // Its old modification time back, to the nanosecond, as `touch -r` or `cp -p` set it.
    var times = [
      timespec(
        tv_sec: Int(before.modificationTime / 1_000_000_000),
        tv_nsec: Int(before.modificationTime % 1_000_000_000)),
      timespec(
        tv_sec: Int(before.modificationTime / 1_000_000_000),
        tv_nsec: Int(before.modificationTime % 1_000_000_000)),
    ]
    #expect(utimensat(AT_FDCWD, fixture.sourcePath, &times, 0) == 0)
    let after = try #require(FileIdentity(path: fixture.sourcePath))
    #expect(after.size == before.size && after.modificationTime == before.modificationTime)
    #expect(throws: AudioFileError.sourceChanged(source: "s1", path: fixture.sourcePath)) {
      try fixture.cache.load(fixture.source, projectRate: 48_000)
    }
  }

  /// An unchanged source is not hashed again: its identity is kept beside the entry; a
  /// `touch` (new times, same content) makes Tape hash it once more and accept it.
  @Test func anUnchangedSourceIsRecognisedByItsIdentity() throws {
    let fixture = try Fixture()
    _ = try fixture.cache.load(fixture.source, projectRate: 48_000)
    let records = try FileManager.default.contentsOfDirectory(
      atPath: fixture.folder.path + "/cache"
    )
    .filter { $0.hasSuffix(".source") }
    #expect(records.count == 1)
    let record = try String(
      contentsOfFile: fixture.folder.path + "/cache/" + records[0], encoding: .utf8)
    #expect(record.contains(fixture.sourcePath))
    let identity = try #require(FileIdentity(path: fixture.sourcePath))
    #expect(record.contains(identity.description))
    Thread.sleep(forTimeInterval: 0.01)
    #expect(utime(fixture.sourcePath, nil) == 0)
    _ = try fixture.cache.load(fixture.source, projectRate: 48_000)
    let updated = try String(
      contentsOfFile: fixture.folder.path + "/cache/" + records[0], encoding: .utf8)
    #expect(updated != record)
    #expect(updated.contains(try #require(FileIdentity(path: fixture.sourcePath)).description))
  }
}

@Suite("Writing a render")
struct RenderWritebackTests {
  /// The writer starts each file's writeback as it writes (so the commit's `fsync` does not wait
  /// for the whole file at the end): the call is found in the C library.
  @Test func theWritebackCallIsFound() {
    #expect(Writeback.start != nil)
  }
}
