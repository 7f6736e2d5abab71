import Foundation

/// A fast 64-bit fingerprint of a file's bytes, to notice that a source changed or that a relink
/// points at different audio. Not cryptographic: it guards against accidents, not attackers.
///
/// Format: `xh64:<16 hex digits>:<byte count>`.
public enum ContentHash {
  public static func ofFile(at path: String) throws(AudioFileError) -> String {
    guard let handle = FileHandle(forReadingAtPath: path) else { throw .unreadable(path: path) }
    defer { try? handle.close() }
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    var total: UInt64 = 0
    while true {
      let data: Data
      do {
        data = try handle.read(upToCount: 1 << 20) ?? Data()
      } catch {
        throw .io(path: path, detail: "\(error)")
      }
      if data.isEmpty { break }
      total += UInt64(data.count)
      data.withUnsafeBytes { raw in
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
