import Foundation
public import Timeline

/// A source's audio decoded to interleaved float32 at the project rate, memory-mapped.
///
/// The mapping is read-only and lives as long as this object; renderers hold the object and
/// read `samples` through raw pointers. Frame `i`, channel `c` is `samples[i * channels + c]`.
public final class DecodedAudio: @unchecked Sendable {
  public let frames: Int
  public let channels: Int
  /// Interleaved samples; empty for a zero-length source.
  public let samples: UnsafeBufferPointer<Float>
  private let mapping: UnsafeMutableRawPointer?
  private let mappedBytes: Int

  init(path: String, frames: Int, channels: Int) throws(AudioFileError) {
    self.frames = frames
    self.channels = channels
    mappedBytes = frames * channels * MemoryLayout<Float>.size
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { throw .cache(path: path, detail: String(cString: strerror(errno))) }
    defer { close(fd) }
    guard let address = mmap(nil, mappedBytes, PROT_READ, MAP_SHARED, fd, 0), address != MAP_FAILED
    else { throw .cache(path: path, detail: "mmap: \(String(cString: strerror(errno)))") }
    mapping = address
    samples = UnsafeBufferPointer(
      start: address.assumingMemoryBound(to: Float.self), count: frames * channels)
  }

  deinit {
    if let mapping { munmap(mapping, mappedBytes) }
  }
}

/// The decoded-audio cache beside a project (`song.tape-cache/`): each source decoded once,
/// resampled to the project rate with libsoxr at high quality, and memory-mapped afterwards.
///
/// Files are keyed by the source's content hash and the project rate, so a cache can never
/// serve another file's audio. A source whose file has gone missing or changed is refused with
/// an error naming it.
///
/// ```swift
/// let cache = AudioCache(directory: AudioCache.directory(forProject: "song.tape"))
/// let audio = try cache.load(source, projectRate: 48_000)
/// audio.samples[0]
/// ```
public struct AudioCache: Sendable {
  public let directory: String

  public init(directory: String) {
    self.directory = directory
  }

  /// `song.tape` → `song.tape-cache`.
  public static func directory(forProject path: String) -> String {
    path + "-cache"
  }

  /// The cache file for `source` at `projectRate`.
  public func path(for source: Source, projectRate: Int) -> String {
    let key = source.contentHash.map { $0.isLetter || $0.isNumber ? $0 : "-" }
    return "\(directory)/\(String(key))-\(projectRate)hz-\(source.channels)ch.f32"
  }

  /// The source's audio at the project rate, decoding it into the cache first if needed.
  public func load(_ source: Source, projectRate: Int) throws(AudioFileError) -> DecodedAudio {
    try checkSourceFile(source)
    let frames = Int(source.frameCount(atRate: projectRate).frames)
    let path = path(for: source, projectRate: projectRate)
    let expectedBytes = frames * source.channels * MemoryLayout<Float>.size
    let existing = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
    if existing != expectedBytes {
      try build(source, projectRate: projectRate, frames: frames, at: path)
    }
    return try DecodedAudio(path: path, frames: frames, channels: source.channels)
  }

  /// A cheap check made on every load: the file exists and has the size it was imported with
  /// (the hash records it). Decoding checks the whole hash.
  private func checkSourceFile(_ source: Source) throws(AudioFileError) {
    guard FileManager.default.fileExists(atPath: source.path) else {
      throw .sourceMissing(source: source.id.description, path: source.path)
    }
    let size =
      (try? FileManager.default.attributesOfItem(atPath: source.path)[.size] as? Int) ?? nil
    if let recorded = source.contentHash.split(separator: ":").last.flatMap({ Int($0) }),
      size != recorded
    {
      throw .sourceChanged(source: source.id.description, path: source.path)
    }
  }

  /// Decodes (and resamples) `source` into `path`, through a temporary file renamed when
  /// complete, so a crash never leaves a partial cache file under the real name.
  private func build(
    _ source: Source, projectRate: Int, frames: Int, at path: String
  )
    throws(AudioFileError)
  {
    guard try ContentHash.ofFile(at: source.path) == source.contentHash else {
      throw .sourceChanged(source: source.id.description, path: source.path)
    }
    do {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    } catch {
      throw .cache(path: directory, detail: "\(error)")
    }
    let reader = try SndfileReader(path: source.path)
    guard reader.channels == source.channels, reader.sampleRate == source.sampleRate else {
      throw .sourceChanged(source: source.id.description, path: source.path)
    }
    let temporary = "\(path).partial-\(getpid())"
    guard let output = fopen(temporary, "wb") else {
      throw .cache(path: temporary, detail: String(cString: strerror(errno)))
    }
    var closed = false
    defer {
      if !closed { fclose(output) }
      unlink(temporary)
    }
    var writer = FrameWriter(file: output, channels: source.channels, limit: frames)
    let chunk = 16_384
    let input = UnsafeMutablePointer<Float>.allocate(capacity: chunk * source.channels)
    defer { input.deallocate() }
    if source.sampleRate == projectRate {
      while writer.written < frames {
        let read = reader.readFloats(into: input, frames: chunk)
        if read <= 0 { break }
        try writer.write(input, frames: read, path: temporary)
      }
    } else {
      let resampler = try SoxrResampler(
        from: source.sampleRate, to: projectRate, channels: source.channels)
      let capacity = chunk * (projectRate / max(source.sampleRate, 1) + 2)
      let resampled = UnsafeMutablePointer<Float>.allocate(capacity: capacity * source.channels)
      defer { resampled.deallocate() }
      var finished = false
      while !finished && writer.written < frames {
        let read = reader.readFloats(into: input, frames: chunk)
        var offset = 0
        repeat {
          let (consumed, produced) = try resampler.process(
            read > 0 ? input + offset * source.channels : nil, frames: read - offset,
            into: resampled, capacity: capacity)
          try writer.write(resampled, frames: produced, path: temporary)
          offset += consumed
          if read <= 0 && produced == 0 { finished = true }
        } while read > 0 && offset < read
      }
    }
    // A resampler's length can differ from round(n · rate / sourceRate) by a frame: pad with
    // silence so the cache is exactly as long as the model says.
    try writer.padWithSilence(path: temporary)
    guard fflush(output) == 0, fsync(fileno(output)) == 0, fclose(output) == 0 else {
      throw .cache(path: temporary, detail: String(cString: strerror(errno)))
    }
    closed = true
    guard rename(temporary, path) == 0 else {
      throw .cache(path: path, detail: String(cString: strerror(errno)))
    }
  }
}

/// Writes interleaved frames to a file, never more than `limit`.
private struct FrameWriter {
  let file: UnsafeMutablePointer<FILE>
  let channels: Int
  let limit: Int
  var written = 0

  mutating func write(
    _ samples: UnsafePointer<Float>, frames: Int, path: String
  )
    throws(AudioFileError)
  {
    let count = min(frames, limit - written)
    guard count > 0 else { return }
    guard fwrite(samples, MemoryLayout<Float>.size * channels, count, file) == count else {
      throw .cache(path: path, detail: String(cString: strerror(errno)))
    }
    written += count
  }

  mutating func padWithSilence(path: String) throws(AudioFileError) {
    let silence = [Float](repeating: 0, count: 4_096 * channels)
    while written < limit {
      try silence.withUnsafeBufferPointer { buffer throws(AudioFileError) in
        if let base = buffer.baseAddress {
          try write(base, frames: min(4_096, limit - written), path: path)
        }
      }
    }
  }
}
