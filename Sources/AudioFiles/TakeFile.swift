import Foundation

/// A recording's take written as it comes: a WAV file whose header is kept true as it grows.
///
/// Rule: the sizes in the header are rewritten, and the file synced to the disk, at least once
/// a second (``refresh(force:)``), never only at the end. Why: a recorder killed (`kill -9`, a
/// power cut) leaves a file that every reader opens as the audio written up to the last
/// refresh; ``repair(_:)`` then takes it up to the last whole frame written.
///
/// The samples are kept as the device gave them (16-bit stays 16-bit, float stays float):
/// WAVE_FORMAT_PCM for integers, WAVE_FORMAT_IEEE_FLOAT for float, a 44-byte header.
///
/// ```swift
/// let take = try TakeFile(creating: path, sampleRate: 48_000, channels: 1, bits: 16, float: false)
/// try take.append(bytes)
/// try take.refresh()
/// try take.finish()
/// ```
public final class TakeFile: @unchecked Sendable {
  public let path: String
  public let frameBytes: Int
  private let descriptor: Int32
  private var dataBytes: Int64 = 0
  private var lastRefresh = ContinuousClock.now
  private var closed = false

  /// The header's length: the data starts there.
  public static let headerBytes = 44
  /// The most a WAV file's 32-bit sizes can say.
  static let maximumDataBytes = Int64(UInt32.max) - Int64(headerBytes)

  /// Creates `path` (which must not exist) with a header saying no frames yet, synced.
  public init(
    creating path: String, sampleRate: Int, channels: Int, bits: Int, float: Bool
  ) throws(AudioFileError) {
    self.path = path
    frameBytes = channels * bits / 8
    let opened = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard opened >= 0 else { throw .takeWrite(path: path, reason: Self.errorText()) }
    descriptor = opened
    var header = [UInt8]()
    func append<T: FixedWidthInteger>(_ value: T) {
      withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) }
    }
    header += Array("RIFF".utf8)
    append(UInt32(36))
    header += Array("WAVEfmt ".utf8)
    append(UInt32(16))
    append(UInt16(float ? 3 : 1))
    append(UInt16(channels))
    append(UInt32(sampleRate))
    append(UInt32(sampleRate * frameBytes))
    append(UInt16(frameBytes))
    append(UInt16(bits))
    header += Array("data".utf8)
    append(UInt32(0))
    try write(header, at: 0)
    try sync()
  }

  deinit {
    if !closed { close(descriptor) }
  }

  /// Frames written so far.
  public var frames: Int64 { dataBytes / Int64(frameBytes) }

  /// Appends `bytes` (whole frames, as the device gave them).
  public func append(_ bytes: UnsafeRawBufferPointer) throws(AudioFileError) {
    guard bytes.count > 0, let base = bytes.baseAddress else { return }
    guard dataBytes + Int64(bytes.count) <= Self.maximumDataBytes else {
      throw .takeWrite(path: path, reason: "a WAV take holds at most 4 GiB")
    }
    var done = 0
    while done < bytes.count {
      let wrote = pwrite(
        descriptor, base + done, bytes.count - done, off_t(Int64(Self.headerBytes) + dataBytes))
      if wrote < 0 && errno == EINTR { continue }
      guard wrote > 0 else {
        // A disk that filled part-way keeps the take's whole frames (``finish()`` cuts the
        // rest).
        dataBytes -= dataBytes % Int64(frameBytes)
        if wrote == 0 || errno == ENOSPC || errno == EDQUOT { throw .diskFull(path: path) }
        throw .takeWrite(path: path, reason: Self.errorText())
      }
      done += wrote
      dataBytes += Int64(wrote)
    }
  }

  /// Rewrites the header's sizes for what is written and syncs the file: when `force`, or
  /// when half a second has passed since the last time.
  public func refresh(force: Bool = false) throws(AudioFileError) {
    guard force || ContinuousClock.now - lastRefresh >= .milliseconds(500) else { return }
    lastRefresh = .now
    try sync()
    try Self.writeSizes(descriptor, dataBytes: dataBytes, path: path)
    try sync()
  }

  /// The last refresh, then closes the file.
  public func finish() throws(AudioFileError) {
    // What a write the disk refused part-way left past the last whole frame.
    _ = ftruncate(descriptor, off_t(Int64(Self.headerBytes) + dataBytes))
    try refresh(force: true)
    closed = true
    close(descriptor)
  }

  /// What a take left by a recorder that died holds: the header set to the whole frames its
  /// file holds (the last partial frame cut), synced. Returns the frames, and those the header
  /// said before (the audio written after its last refresh is the difference).
  public static func repair(
    _ path: String
  ) throws(AudioFileError) -> (
    frames: Int64, headerFrames: Int64
  ) {
    let descriptor = open(path, O_RDWR | O_CLOEXEC)
    guard descriptor >= 0 else { throw .takeWrite(path: path, reason: errorText()) }
    defer { close(descriptor) }
    var header = [UInt8](repeating: 0, count: headerBytes)
    guard pread(descriptor, &header, headerBytes, 0) == headerBytes,
      header[0..<4].elementsEqual("RIFF".utf8), header[36..<40].elementsEqual("data".utf8)
    else { throw .takeWrite(path: path, reason: "it is not a take Tape wrote (no WAV header)") }
    func little(_ offset: Int, _ count: Int) -> Int64 {
      header[offset..<offset + count].reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }
    let blockAlign = max(1, little(32, 2))
    let declared = little(40, 4)
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw .takeWrite(path: path, reason: errorText()) }
    let held = max(0, Int64(info.st_size) - Int64(headerBytes))
    let whole = min(held / blockAlign * blockAlign, maximumDataBytes / blockAlign * blockAlign)
    if ftruncate(descriptor, off_t(Int64(headerBytes) + whole)) != 0 {
      throw .takeWrite(path: path, reason: errorText())
    }
    try writeSizes(descriptor, dataBytes: whole, path: path)
    guard fsync(descriptor) == 0 else { throw .takeWrite(path: path, reason: errorText()) }
    return (whole / blockAlign, declared / blockAlign)
  }

  private static func writeSizes(
    _ descriptor: Int32, dataBytes: Int64, path: String
  ) throws(AudioFileError) {
    for (offset, value) in [(4, UInt32(36 + dataBytes)), (40, UInt32(dataBytes))] {
      var bytes = value.littleEndian
      guard pwrite(descriptor, &bytes, 4, off_t(offset)) == 4 else {
        throw .takeWrite(path: path, reason: errorText())
      }
    }
  }

  private func write(_ bytes: [UInt8], at offset: Int) throws(AudioFileError) {
    guard pwrite(descriptor, bytes, bytes.count, off_t(offset)) == bytes.count else {
      throw .takeWrite(path: path, reason: Self.errorText())
    }
  }

  private func sync() throws(AudioFileError) {
    guard fdatasync(descriptor) == 0 else {
      throw .takeWrite(path: path, reason: Self.errorText())
    }
  }

  static func errorText() -> String { String(cString: strerror(errno)) }
}
