import Foundation
public import Timeline

/// How the decode of a source into the cache goes, for a progress line.
public struct DecodeProgress: Sendable {
  public enum Phase: Sendable, Equatable {
    /// Its file is checked against what was imported (hashed, when its identity changed).
    case checking
    /// `frames` of its `of` frames (at the project rate) decoded.
    case decoding(frames: Int, of: Int)
  }

  public let source: Source
  public let phase: Phase
}

/// A cache entry being decoded, read from while it is written: each chunk can be read once the
/// decode has written it, and is checked against the checksum taken as it was written, as an
/// entry's chunks are. Thread-safe: the decoding thread reports, readers wait.
final class EntryBuild: @unchecked Sendable {
  let layout: CacheFileLayout
  /// Where the entry is put when complete.
  let path: String
  private let condition = NSCondition()
  /// A descriptor of the entry's (unnamed) file, to read chunks from; -1 before the decode
  /// has made it.
  private var descriptor: Int32 = -1
  private var checksums: [UInt64] = []
  private var outcome: Result<CacheEntry, AudioFileError>?
  /// The file was checked, and its chunks can be decoded on their own (its rate is the
  /// project's, and it seeks exactly): one the decode has not reached yet need not wait.
  private var decodesDirectly = false

  init(layout: CacheFileLayout, path: String) {
    self.layout = layout
    self.path = path
  }

  deinit {
    if descriptor >= 0 { close(descriptor) }
  }

  /// The decode writes into `output` (kept readable through a descriptor of its own), the
  /// source's file checked; `directly`: its chunks can also be decoded on their own.
  func started(reading output: Int32, directly: Bool) {
    condition.lock()
    descriptor = fcntl(output, F_DUPFD_CLOEXEC, 3)
    decodesDirectly = directly
    condition.broadcast()
    condition.unlock()
  }

  /// The next chunk is written, with this checksum.
  func wrote(_ checksum: UInt64) {
    condition.lock()
    checksums.append(checksum)
    condition.broadcast()
    condition.unlock()
  }

  /// The decode ended: its entry in place, or why not.
  func finish(_ result: Result<CacheEntry, AudioFileError>) {
    condition.lock()
    outcome = result
    condition.broadcast()
    condition.unlock()
  }

  enum Read {
    /// The chunk was read (from the build).
    case read
    /// The decode has ended: read from its entry.
    case finished(CacheEntry)
    /// The decode has not reached the chunk, which can be decoded on its own.
    case decodeDirectly
  }

  /// Reads chunk `index` into `buffer` once the decode has written it (waiting until then),
  /// checked against its checksum; or says that the decode has ended (read from the entry),
  /// or that the chunk may be decoded on its own now; or throws the decode's error. While it
  /// waits, `stopped` is asked every 20 ms (on the waiting thread: a player's main thread
  /// reads its keys there) and ends the wait with its error.
  func read(
    _ index: Int, into buffer: UnsafeMutablePointer<Float>,
    stopped: () throws(AudioFileError) -> Void
  ) throws(AudioFileError) -> Read {
    condition.lock()
    while checksums.count <= index && outcome == nil && !decodesDirectly {
      _ = condition.wait(until: Date().addingTimeInterval(0.02))
      do throws(AudioFileError) {
        try stopped()
      } catch {
        condition.unlock()
        throw error
      }
    }
    let outcome = outcome
    let checksum = index < checksums.count ? checksums[index] : nil
    let descriptor = descriptor
    let decodesDirectly = decodesDirectly
    condition.unlock()
    switch outcome {
    case .success(let entry): return .finished(entry)
    case .failure(let error):
      // A decode that failed after its file was checked (the cache's disk full): the chunks
      // it wrote are still read, and a file that can be read chunk by chunk still is.
      guard (checksum != nil && descriptor >= 0) || decodesDirectly else { throw error }
    case nil: break
    }
    guard let checksum, descriptor >= 0 else { return .decodeDirectly }
    let (offset, count) = layout.chunkBytes(index)
    var done = 0
    while done < count {
      let read = pread(
        descriptor, UnsafeMutableRawPointer(buffer) + done, count - done, off_t(offset + done))
      if read < 0 && errno == EINTR { continue }
      guard read > 0 else {
        throw .cache(path: path, detail: "chunk \(index) cannot be read back; check the disk")
      }
      done += read
    }
    guard XXH64.digest(UnsafeRawBufferPointer(start: buffer, count: count)) == checksum else {
      throw .cache(
        path: path, detail: "chunk \(index) does not read back as written; check the disk (dmesg)")
    }
    return .read
  }

  /// Waits for the decode to end; its entry, or its error.
  func waitUntilFinished() throws(AudioFileError) -> CacheEntry {
    condition.lock()
    while outcome == nil { condition.wait() }
    let outcome = outcome
    condition.unlock()
    switch outcome {
    case .success(let entry): return entry
    case .failure(let error): throw error
    case nil: throw .cache(path: path, detail: "its decode ended without an entry")
    }
  }
}
