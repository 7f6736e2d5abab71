import Foundation
import Logging
import Mixing
public import Pictures
import SafeFiles
public import Timeline

/// The layout of a peak file: a source's waveform overview (``Pictures/Peaks``), kept in the
/// decoded-audio cache beside the source's decoded audio, as Audacity and Ardour keep theirs,
/// so that a picture of any width reads it instead of the audio.
///
/// ```
/// offset  size  field (little-endian)
///      0     8  magic "TAPE-PKS"
///      8     4  layout version (1)
///     12     4  channels
///     16     8  frames summarised (at the project rate)
///     24     4  sample rate (the project rate)
///     28     4  frames per block (256)
///     32     8  block count
///     40    64  the source's content hash, UTF-8, zero-padded
///    104     8  XXH64 of the data
///    112     8  XXH64 of bytes 0..<112
///    120  8·c·n  float32: block after block, channel after channel, minimum then maximum
/// ```
///
/// A file is used only when all of it verifies: its header matches the source it is read for
/// (hash, rate, channels, frames, block size), its length is exactly what the header says, and
/// both checksums hold. Anything else is computed again.
struct PeakFileLayout: Equatable {
  static let magic = Array("TAPE-PKS".utf8)
  static let version: UInt32 = 1
  static let headerBytes = 120

  let channels: Int
  let frames: Int
  let sampleRate: Int
  let framesPerBlock: Int
  let contentHash: String

  /// The content hash as the header holds it: its first 64 bytes (as ``CacheFileLayout``).
  var storedContentHash: String {
    String(decoding: contentHash.utf8.prefix(64), as: UTF8.self)
  }

  var blockCount: Int { (frames + framesPerBlock - 1) / framesPerBlock }
  var fileBytes: Int { Self.headerBytes + blockCount * channels * 2 * 4 }

  /// The whole file for `peaks`, which must match this layout.
  func encoded(_ peaks: Peaks) -> [UInt8] {
    precondition(peaks.values.count == blockCount * channels * 2)
    var bytes = [UInt8](repeating: 0, count: Self.headerBytes)
    func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
      bytes.putLittleEndian(value, at: offset)
    }
    bytes.replaceSubrange(0..<8, with: Self.magic)
    put(Self.version, at: 8)
    put(UInt32(channels), at: 12)
    put(UInt64(frames), at: 16)
    put(UInt32(sampleRate), at: 24)
    put(UInt32(framesPerBlock), at: 28)
    put(UInt64(blockCount), at: 32)
    let hash = Array(storedContentHash.utf8)
    bytes.replaceSubrange(40..<40 + hash.count, with: hash)
    // Little-endian float32, as the decoded audio beside it (`Float.bitPattern.littleEndian`).
    let data = peaks.values.map { $0.bitPattern.littleEndian }.withUnsafeBytes { Array($0) }
    put(data.withUnsafeBytes { XXH64.digest($0) }, at: 104)
    put(bytes[0..<112].withUnsafeBytes { XXH64.digest($0) }, at: 112)
    return bytes + data
  }

  /// The peaks in `bytes` (a whole file), or nil when it is not exactly a file of this layout.
  func decoded(_ bytes: [UInt8]) -> Peaks? {
    guard bytes.count == fileBytes, Array(bytes[0..<8]) == Self.magic else { return nil }
    func get<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
      bytes.littleEndian(type, at: offset)
    }
    let hash = bytes[40..<104].prefix { $0 != 0 }
    guard get(UInt64.self, at: 112) == bytes[0..<112].withUnsafeBytes({ XXH64.digest($0) }),
      get(UInt32.self, at: 8) == Self.version, get(UInt32.self, at: 12) == UInt32(channels),
      get(UInt64.self, at: 16) == UInt64(frames), get(UInt32.self, at: 24) == UInt32(sampleRate),
      get(UInt32.self, at: 28) == UInt32(framesPerBlock),
      get(UInt64.self, at: 32) == UInt64(blockCount),
      String(decoding: hash, as: UTF8.self) == storedContentHash,
      get(UInt64.self, at: 104)
        == bytes[Self.headerBytes...].withUnsafeBytes({ XXH64.digest($0) })
    else { return nil }
    let values = bytes[Self.headerBytes...].withUnsafeBytes { raw in
      (0..<blockCount * channels * 2).map {
        Float(
          bitPattern: UInt32(
            littleEndian: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)))
      }
    }
    return Peaks(framesPerBlock: framesPerBlock, channels: channels, frames: frames, values: values)
  }

  /// The peaks in the file at `path`, read without following a symlink or waiting on a FIFO,
  /// and only from a regular file that `owners` own and nobody else may write; nil for
  /// anything else (no file, another user's, damaged, for other audio).
  func read(_ path: String, owners: [UInt32]) -> Peaks? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    guard isOwnedSafely(descriptor: fd, owners: owners),
      let identity = FileIdentity(descriptor: fd), identity.isRegularFile,
      identity.size == Int64(fileBytes)
    else { return nil }
    var bytes = [UInt8](repeating: 0, count: fileBytes)
    var done = 0
    while done < bytes.count {
      let count = bytes.withUnsafeMutableBytes {
        pread(fd, $0.baseAddress.map { $0 + done }, $0.count - done, off_t(done))
      }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { return nil }
      done += count
    }
    return decoded(bytes)
  }
}

extension AudioCache {
  /// The file name of `source`'s peak file at `projectRate`: beside its decoded audio, named
  /// as it is (by content hash, rate and channels).
  static func peakName(for source: Source, projectRate: Int) -> String {
    let key = source.contentHash.map { $0.isLetter || $0.isNumber ? $0 : "-" }
    return
      "\(String(key))-\(projectRate)hz-\(source.channels)ch-\(Peaks.standardFramesPerBlock).peaks"
  }

  /// Where `source`'s peak file at `projectRate` is written (the first cache folder).
  public func peakPath(for source: Source, projectRate: Int) -> String {
    "\(directories[0])/\(Self.peakName(for: source, projectRate: projectRate))"
  }

  /// The waveform overview of `source` at `projectRate`: min and max of every 256 frames.
  ///
  /// Read from its peak file when the cache has a good one; otherwise computed once from the
  /// decoded audio (decoding the source first if needed), chunk by chunk, and kept as a peak
  /// file (written through ``/SafeFiles/SafeOutput``: complete or not at all; a cache that
  /// cannot be written only means computing again next time). Either way the source file is
  /// checked first, as for a render: a missing or changed file is an error here too.
  public func peaks(for source: Source, projectRate: Int) throws(AudioFileError) -> Peaks {
    let layout = PeakFileLayout(
      channels: source.channels, frames: Int(source.frameCount(atRate: projectRate).frames),
      sampleRate: projectRate, framesPerBlock: Peaks.standardFramesPerBlock,
      contentHash: source.contentHash)
    let name = Self.peakName(for: source, projectRate: projectRate)
    for directory in directories where isOwnedSafely(path: directory, owners: owners) {
      let path = "\(directory)/\(name)"
      if let peaks = layout.read(path, owners: owners) {
        remember(try checkSourceFile(source))
        Self.logger.debug(
          "\(Self.named(source, file(of: source))): peaks found in the cache (\(path))")
        return peaks
      }
    }
    let started = DispatchTime.now().uptimeNanoseconds
    let decoded = try load(source, projectRate: projectRate)
    var summary = PeakSummarizer(channels: source.channels)
    let buffer = UnsafeMutablePointer<Float>.allocate(
      capacity: SourceAudio.chunkFrames * source.channels)
    defer { buffer.deallocate() }
    let stopped = stopCheck(source)
    for index in 0..<decoded.audio.chunkCount {
      try stopped()
      try decoded.read(index, into: buffer)
      summary.add(UnsafeBufferPointer(start: buffer, count: decoded.audio.samplesInChunk(index)))
    }
    let peaks = summary.finished()
    let path = peakPath(for: source, projectRate: projectRate)
    do {
      try write(layout.encoded(peaks), to: path)
      Self.logger.debug(
        "\(Self.named(source, file(of: source))): peaks computed into \(path) in \((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000) ms"
      )
    } catch {
      Self.logger.debug(
        "\(Self.named(source, file(of: source))): peaks computed but not kept (\(error))")
    }
    return peaks
  }
}

/// The waveforms a picture of a stretch of a project needs (``AudioCache/peaks(of:in:)``).
public struct ProjectPeaks: Sendable {
  /// The peaks of each source a clip in the stretch plays.
  public var peaks: [Source.ID: Peaks] = [:]
  /// The sources whose audio could not be had (file missing, changed or unreadable), each
  /// with why: drawn without a waveform.
  public var unavailable: [(source: Source.ID, error: AudioFileError)] = []
}

extension AudioCache {
  /// The peaks of every source a clip shown in `range` of `project` plays, in track and clip
  /// order.
  ///
  /// Rule: a source whose audio cannot be had is left out and listed in
  /// ``ProjectPeaks/unavailable`` with its error, and the rest are still read. Why: a picture
  /// of a project with one missing file is still worth drawing (that clip without its
  /// waveform). What if the reading is stopped (Ctrl-C): that is thrown, not listed.
  ///
  /// ```swift
  /// let found = try cache.peaks(of: project, in: FrameRange(start: .zero, end: project.timelineEnd))
  /// let picture = TimelinePicture(
  ///   project: project, range: range, width: 1200, title: "song", peaks: found.peaks,
  ///   unavailable: Set(found.unavailable.map(\.source)))
  /// ```
  public func peaks(
    of project: Project, in range: FrameRange
  ) throws(AudioFileError)
    -> ProjectPeaks
  {
    var found = ProjectPeaks()
    var failed: Set<Source.ID> = []
    for track in project.tracks {
      for clip in track.clips
      where clip.timelineEnd > range.start && clip.timelineStart < range.end
        && found.peaks[clip.source] == nil && !failed.contains(clip.source)
      {
        guard let source = project.source(clip.source) else { continue }
        do {
          found.peaks[source.id] = try peaks(for: source, projectRate: project.sampleRate)
        } catch .decodeStopped(let id) {
          throw .decodeStopped(source: id)
        } catch .cancelled(let path) {
          throw .cancelled(path: path)
        } catch {
          failed.insert(source.id)
          found.unavailable.append((source.id, error))
        }
      }
    }
    return found
  }
}
