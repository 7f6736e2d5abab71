/// XXH64 (Yann Collet's xxHash, 64-bit), the checksum of the decoded-audio cache: every chunk
/// of decoded audio and the cache file's header carry one, verified as they are read.
///
/// Not cryptographic: it finds flipped bits, torn writes and truncation, not an attacker. It
/// runs at several GB/s (four independent lanes), so verifying a chunk as it is read costs a
/// fraction of reading it. The digest equals the reference implementation's
/// (`xxhsum -H64`, Python's `xxhash.xxh64`), which a test checks.
///
/// ```swift
/// let digest = XXH64.digest(bytes)  // UnsafeRawBufferPointer
/// ```
enum XXH64 {
  private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
  private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
  private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
  private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
  private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

  static func digest(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
    let count = bytes.count
    var offset = 0
    var hash: UInt64
    if count >= 32, let base = bytes.baseAddress {
      var v1 = seed &+ prime1 &+ prime2
      var v2 = seed &+ prime2
      var v3 = seed
      var v4 = seed &- prime1
      while offset + 32 <= count {
        v1 = round(v1, base.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian)
        v2 = round(v2, base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self).littleEndian)
        v3 = round(
          v3, base.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self).littleEndian)
        v4 = round(
          v4, base.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self).littleEndian)
        offset += 32
      }
      hash = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
      hash = merge(hash, v1)
      hash = merge(hash, v2)
      hash = merge(hash, v3)
      hash = merge(hash, v4)
    } else {
      hash = seed &+ prime5
    }
    hash &+= UInt64(count)
    while offset + 8 <= count {
      let lane = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
      hash ^= round(0, lane)
      hash = rotate(hash, 27) &* prime1 &+ prime4
      offset += 8
    }
    if offset + 4 <= count {
      let lane = UInt64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
      hash ^= lane &* prime1
      hash = rotate(hash, 23) &* prime2 &+ prime3
      offset += 4
    }
    while offset < count {
      hash ^= UInt64(bytes[offset]) &* prime5
      hash = rotate(hash, 11) &* prime1
      offset += 1
    }
    hash ^= hash >> 33
    hash &*= prime2
    hash ^= hash >> 29
    hash &*= prime3
    hash ^= hash >> 32
    return hash
  }

  @inline(__always)
  private static func round(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
    rotate(accumulator &+ lane &* prime2, 31) &* prime1
  }

  @inline(__always)
  private static func merge(_ hash: UInt64, _ value: UInt64) -> UInt64 {
    (hash ^ round(0, value)) &* prime1 &+ prime4
  }

  @inline(__always)
  private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
    (value << bits) | (value >> (64 - bits))
  }
}
