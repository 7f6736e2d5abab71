import Foundation
public import Timeline

/// A fast 64-bit fingerprint of a file's bytes, to notice that a source changed or that a relink
/// points at different audio. Not cryptographic: it guards against accidents, not attackers.
///
/// Format: `xh64:<16 hex digits>:<byte count>`.
public enum ContentHash {
  public static func ofFile(at path: String) throws(AudioFileError) -> String {
    try ofFile(at: RawPath(path))
  }

  public static func ofFile(at file: RawPath) throws(AudioFileError) -> String {
    let path = file.description
    let fd = file.withCString { open($0, O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { throw .unreadable(path: path) }
    defer { close(fd) }
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    var total: UInt64 = 0
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
    defer { buffer.deallocate() }
    while true {
      let count = read(fd, buffer.baseAddress, buffer.count)
      if count < 0 {
        if errno == EINTR { continue }
        throw .io(path: path, detail: String(cString: strerror(errno)))
      }
      if count == 0 { break }
      total += UInt64(count)
      let raw = UnsafeRawBufferPointer(rebasing: buffer[..<count])
      var index = 0
      while index + 8 <= raw.count {
        hash = mix(hash ^ raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
        index += 8
      }
      while index < raw.count {
        hash = mix(hash ^ UInt64(raw[index]))
        index += 1
      }
    }
    hash = mix(hash ^ total)
    let hex = String(hash, radix: 16)
    return "xh64:\(String(repeating: "0", count: 16 - hex.count))\(hex):\(total)"
  }

  @inline(__always)
  private static func mix(_ value: UInt64) -> UInt64 {
    var z = value &* 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 32)) &* 0xD6E8_FEB8_6659_FD93
    return z ^ (z >> 32)
  }
}
