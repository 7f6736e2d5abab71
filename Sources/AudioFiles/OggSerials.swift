#if canImport(Glibc)
  import Glibc
#endif

/// Rewrites the stream serial number of every page of an Ogg file, and each page's checksum,
/// so that the same audio always makes the same bytes.
///
/// Why: libsndfile seeds each Ogg stream's serial from the clock and offers no way to set it,
/// so two renders of one project differed. The serial chosen is a hash of the pages' contents:
/// the same render gets the same one, different renders (almost always) different ones. A file
/// holds one logical stream, so one serial for every page is what the format asks.
enum OggSerials {
  /// Rewrites the pages of the Ogg file open on `descriptor` (read and write) in place.
  static func makeReproducible(_ descriptor: Int32) throws(AudioFileError) {
    var pages: [(offset: Int64, header: [UInt8], body: [UInt8])] = []
    var offset: Int64 = 0
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    /// `count` bytes at `offset`, or nil when fewer are there.
    func bytes(_ count: Int, at offset: Int64) -> [UInt8]? {
      var buffer = [UInt8](repeating: 0, count: count)
      let read = buffer.withUnsafeMutableBytes {
        pread(descriptor, $0.baseAddress, count, off_t(offset))
      }
      return read == count ? buffer : nil
    }
    while true {
      var probe: UInt8 = 0
      if pread(descriptor, &probe, 1, off_t(offset)) == 0 { break }
      guard let header = bytes(27, at: offset), header[0..<4] == [0x4F, 0x67, 0x67, 0x53][...]
      else { throw .io(path: "the Ogg output", detail: "an Ogg page could not be read back") }
      let segments = Int(header[26])
      guard let table = bytes(segments, at: offset + 27) else {
        throw .io(path: "the Ogg output", detail: "an Ogg page is cut short")
      }
      let length = table.reduce(0) { $0 + Int($1) }
      guard let body = bytes(length, at: offset + 27 + Int64(segments)) else {
        throw .io(path: "the Ogg output", detail: "an Ogg page is cut short")
      }
      for byte in body {
        hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
      }
      pages.append((offset, header + table, body))
      offset += 27 + Int64(segments) + Int64(length)
    }
    let serial = UInt32(truncatingIfNeeded: hash ^ (hash >> 32))
    for page in pages {
      var header = page.header
      for index in 0..<4 { header[14 + index] = UInt8(truncatingIfNeeded: serial >> (8 * index)) }
      for index in 22..<26 { header[index] = 0 }
      let crc = checksum(header + page.body)
      for index in 0..<4 { header[22 + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
      let written = header.withUnsafeBytes {
        pwrite(descriptor, $0.baseAddress, $0.count, off_t(page.offset))
      }
      guard written == header.count else {
        throw .io(path: "the Ogg output", detail: "an Ogg page could not be rewritten")
      }
    }
  }

  /// Ogg's page checksum: CRC-32 with polynomial 0x04C11DB7, no reflection, starting at 0.
  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0
    for byte in bytes { crc = (crc << 8) ^ table[Int(((crc >> 24) ^ UInt32(byte)) & 0xFF)] }
    return crc
  }

  private static let table: [UInt32] = (0..<256).map { index in
    var value = UInt32(index) << 24
    for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? (value << 1) ^ 0x04C1_1DB7 : value << 1 }
    return value
  }
}
