import Foundation
import Mixing

/// The layout of one decoded-audio cache file: a checksummed header, then the audio.
///
/// ```
/// offset  size  field (little-endian)
///      0     8  magic "TAPE-F32"
///      8     4  layout version (1)
///     12     4  channels
///     16     8  frames (at the project rate)
///     24     4  sample rate (the project rate)
///     28     4  frames per chunk (SourceAudio.chunkFrames)
///     32     4  chunk count
///     36     4  reserved (0)
///     40    64  the source's content hash, UTF-8, zero-padded
///    104     8  XXH64 of the chunk checksum table
///    112     8  XXH64 of bytes 0..<112
///    120  8·n  XXH64 of each chunk's samples
///      …        zeros up to `dataOffset` (a multiple of 4096)
/// dataOffset    interleaved float32 samples, chunk after chunk
/// ```
///
/// A file whose header or table does not verify, or whose length is not exactly
/// `dataOffset + frames · channels · 4`, is not used (it is decoded again). Each chunk is
/// verified against its checksum when it is read.
struct CacheFileLayout: Equatable {
  static let magic = Array("TAPE-F32".utf8)
  static let version: UInt32 = 1
  static let fixedHeaderBytes = 120

  let channels: Int
  let frames: Int
  let sampleRate: Int
  let contentHash: String
  var chunkChecksums: [UInt64]

  init(channels: Int, frames: Int, sampleRate: Int, contentHash: String) {
    self.channels = channels
    self.frames = frames
    self.sampleRate = sampleRate
    self.contentHash = contentHash
    let chunks = (frames + SourceAudio.chunkFrames - 1) / SourceAudio.chunkFrames
    chunkChecksums = Array(repeating: 0, count: chunks)
  }

  /// The content hash as the header holds it: its first 64 bytes (all of an `xh64:` one;
  /// `sha256:` and 228 bits of the digest, with the whole of it in the entry's name).
  var storedContentHash: String {
    String(decoding: contentHash.utf8.prefix(64), as: UTF8.self)
  }

  var chunkCount: Int { chunkChecksums.count }

  /// Where the samples start: after the header and table, page-aligned.
  var dataOffset: Int {
    (Self.fixedHeaderBytes + 8 * chunkCount + 4_095) / 4_096 * 4_096
  }

  var fileBytes: Int { dataOffset + frames * channels * 4 }

  /// Where chunk `index` starts in the file, and its length in bytes.
  func chunkBytes(_ index: Int) -> (offset: Int, count: Int) {
    let first = index * SourceAudio.chunkFrames
    let frames = min(SourceAudio.chunkFrames, self.frames - first)
    return (dataOffset + first * channels * 4, frames * channels * 4)
  }

  /// The header and table, `dataOffset` bytes.
  func encoded() -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: dataOffset)
    func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
      bytes.putLittleEndian(value, at: offset)
    }
    bytes.replaceSubrange(0..<8, with: Self.magic)
    put(Self.version, at: 8)
    put(UInt32(channels), at: 12)
    put(UInt64(frames), at: 16)
    put(UInt32(sampleRate), at: 24)
    put(UInt32(SourceAudio.chunkFrames), at: 28)
    put(UInt32(chunkCount), at: 32)
    let hash = Array(storedContentHash.utf8)
    bytes.replaceSubrange(40..<40 + hash.count, with: hash)
    for (index, checksum) in chunkChecksums.enumerated() {
      put(checksum, at: Self.fixedHeaderBytes + 8 * index)
    }
    let tableEnd = Self.fixedHeaderBytes + 8 * chunkCount
    put(
      bytes[Self.fixedHeaderBytes..<tableEnd].withUnsafeBytes { XXH64.digest($0) }, at: 104)
    put(bytes[0..<112].withUnsafeBytes { XXH64.digest($0) }, at: 112)
    return bytes
  }

  /// Reads a header back; nil when anything about it is wrong.
  init?(decoding bytes: [UInt8]) {
    guard bytes.count >= Self.fixedHeaderBytes, Array(bytes[0..<8]) == Self.magic else {
      return nil
    }
    func get<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
      bytes.littleEndian(type, at: offset)
    }
    guard get(UInt32.self, at: 8) == Self.version,
      get(UInt64.self, at: 112) == bytes[0..<112].withUnsafeBytes({ XXH64.digest($0) }),
      get(UInt32.self, at: 28) == UInt32(SourceAudio.chunkFrames)
    else { return nil }
    let count = Int(get(UInt32.self, at: 32))
    let tableEnd = Self.fixedHeaderBytes + 8 * count
    guard bytes.count >= tableEnd,
      get(UInt64.self, at: 104)
        == bytes[Self.fixedHeaderBytes..<tableEnd].withUnsafeBytes({ XXH64.digest($0) })
    else { return nil }
    let hash = bytes[40..<104].prefix { $0 != 0 }
    self.init(
      channels: Int(get(UInt32.self, at: 12)), frames: Int(get(UInt64.self, at: 16)),
      sampleRate: Int(get(UInt32.self, at: 24)),
      contentHash: String(decoding: hash, as: UTF8.self))
    guard chunkCount == count else { return nil }
    chunkChecksums = (0..<count).map { get(UInt64.self, at: Self.fixedHeaderBytes + 8 * $0) }
  }
}

/// The little-endian integers of the files Tape writes beside the decoded audio (cache files,
/// peak files): one writer and one reader for both headers.
extension [UInt8] {
  /// Writes `value` little-endian at `offset` (the bytes must be there).
  mutating func putLittleEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
    for index in 0..<T.bitWidth / 8 {
      self[offset + index] = UInt8(truncatingIfNeeded: value >> (index * 8))
    }
  }

  /// The little-endian `T` at `offset`.
  func littleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
    (0..<T.bitWidth / 8).reduce(T.zero) { $0 | (T(self[offset + $1]) << ($1 * 8)) }
  }
}
