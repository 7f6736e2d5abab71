internal import CCrypto
import Foundation
public import Timeline

/// The identity of a source file's bytes: a SHA-256 digest (OpenSSL's libcrypto), so that a
/// changed source is noticed and a relink to different audio refused even when someone made
/// the difference on purpose.
///
/// Format: `sha256:<64 hex digits>:<byte count>`. Projects made before carry
/// `xh64:<16 hex digits>:<byte count>`, a fast 64-bit fingerprint that guards against accidents
/// only (a same-size file with one 8-byte word adjusted collided): it is still checked, and an
/// edit records the SHA-256 in its place (``upgrade(_:at:)``).
public enum ContentHash {
  /// The SHA-256 identity of the file at `path`.
  public static func ofFile(at path: String) throws(AudioFileError) -> String {
    try ofFile(at: RawPath(path))
  }

  public static func ofFile(at file: RawPath) throws(AudioFileError) -> String {
    try digests(of: file, legacy: false).sha256
  }

  /// Whether the file at `file` has the identity `expected`, in `expected`'s own kind.
  public static func matches(
    _ file: RawPath, _ expected: String,
    isCancelled: () throws(AudioFileError) -> Void = {}
  ) throws(AudioFileError) -> Bool {
    let legacy = expected.hasPrefix("xh64:")
    let found = try digests(of: file, legacy: legacy, isCancelled: isCancelled)
    return (legacy ? found.legacy : found.sha256) == expected
  }

  /// The SHA-256 identity of `file` when it still has the old identity `legacy` (read once for
  /// both); nil when it does not (a changed file is not given a new identity here).
  public static func upgrade(_ legacy: String, at file: RawPath) throws(AudioFileError) -> String? {
    let found = try digests(of: file, legacy: true)
    return found.legacy == legacy ? found.sha256 : nil
  }

  /// Reads the file once, taking its SHA-256 and, when asked, its old 64-bit fingerprint.
  private static func digests(
    of file: RawPath, legacy: Bool, isCancelled: () throws(AudioFileError) -> Void = {}
  ) throws(AudioFileError) -> (sha256: String, legacy: String?) {
    let path = file.description
    let fd = file.withCString { open($0, O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { throw .unreadable(path: path) }
    defer { close(fd) }
    guard let context = EVP_MD_CTX_new() else {
      throw .io(path: path, detail: "libcrypto could not make a SHA-256 context")
    }
    defer { EVP_MD_CTX_free(context) }
    guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
      throw .io(path: path, detail: "libcrypto has no SHA-256")
    }
    var old = LegacyHash()
    var total: UInt64 = 0
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
    defer { buffer.deallocate() }
    while true {
      try isCancelled()
      let count = read(fd, buffer.baseAddress, buffer.count)
      if count < 0 {
        if errno == EINTR { continue }
        throw .io(path: path, detail: String(cString: strerror(errno)))
      }
      if count == 0 { break }
      total += UInt64(count)
      let raw = UnsafeRawBufferPointer(rebasing: buffer[..<count])
      EVP_DigestUpdate(context, raw.baseAddress, count)
      if legacy { old.add(raw) }
    }
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    guard EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else {
      throw .io(path: path, detail: "libcrypto could not finish a SHA-256")
    }
    let hex = digest.map { String(format: "%02x", $0) }.joined()
    return ("sha256:\(hex):\(total)", legacy ? old.finished(total: total) : nil)
  }
}

/// The fingerprint projects made before SHA-256 carry (`xh64:`), kept to check them.
private struct LegacyHash {
  var hash: UInt64 = 0xCBF2_9CE4_8422_2325

  /// Mixes in one buffer as read: words, then its tail byte by byte, as the old code did
  /// (reads are whole 1 MiB buffers but the last, so the result is the same).
  mutating func add(_ raw: UnsafeRawBufferPointer) {
    var index = 0
    while index + 8 <= raw.count {
      hash = Self.mix(hash ^ raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
      index += 8
    }
    while index < raw.count {
      hash = Self.mix(hash ^ UInt64(raw[index]))
      index += 1
    }
  }

  func finished(total: UInt64) -> String {
    let final = Self.mix(hash ^ total)
    let hex = String(final, radix: 16)
    return "xh64:\(String(repeating: "0", count: 16 - hex.count))\(hex):\(total)"
  }

  @inline(__always)
  static func mix(_ value: UInt64) -> UInt64 {
    var z = value &* 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 32)) &* 0xD6E8_FEB8_6659_FD93
    return z ^ (z >> 32)
  }
}
