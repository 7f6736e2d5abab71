internal import CMemoryHints

/// A column value inside ``NetChanges``: its type (SQLite's changeset codes) and 8 bytes, the
/// integer or real itself, or for text and blobs their position in the side table.
struct Slot: Sendable, BitwiseCopyable {
  static let integer: UInt8 = 1
  static let real: UInt8 = 2
  static let text: UInt8 = 3
  static let blob: UInt8 = 4
  static let null: UInt8 = 5

  var tag: UInt8
  var bits: UInt64

  static let absent = Slot(tag: 0, bits: 0)

  init(tag: UInt8, bits: UInt64) {
    self.tag = tag
    self.bits = bits
  }

  init(integer: Int64) {
    self.init(tag: Self.integer, bits: UInt64(bitPattern: integer))
  }

  var isPresent: Bool { tag != 0 }
  var refersToPayload: Bool { tag == Self.text || tag == Self.blob }
}

/// Where each row's entry is: open addressing with linear probing, hashed by one
/// multiplication (Fibonacci hashing) of the id mixed with the table.
struct RowIndex: Sendable {
  /// One bucket: a key and its entry's position, side by side so that a probe reads one cache
  /// line (three arrays cost three misses a lookup, most of a far checkout's merge).
  private struct Bucket: BitwiseCopyable {
    var id: Int64
    var table: Int32
    /// -1 marks an empty bucket.
    var position: Int32

    static let empty = Bucket(id: 0, table: 0, position: -1)
  }

  private var buckets: [Bucket] = Array(repeating: .empty, count: 64)
  private var used = 0
  private var shift: UInt64 = 64 - 6

  private func bucket(_ key: NetChanges.Key) -> Int {
    let mixed = UInt64(bitPattern: key.id) &+ UInt64(key.table) &* 0xD6E8_FEB8_6659_FD93
    return Int(truncatingIfNeeded: (mixed &* 0x9E37_79B9_7F4A_7C15) >> shift)
  }

  func position(of key: NetChanges.Key) -> Int? {
    buckets.withUnsafeBufferPointer { buckets in
      let mask = buckets.count - 1
      var bucket = bucket(key)
      while buckets[bucket].position >= 0 {
        if buckets[bucket].id == key.id && Int(buckets[bucket].table) == key.table {
          return Int(buckets[bucket].position)
        }
        bucket = (bucket + 1) & mask
      }
      return nil
    }
  }

  /// Asks for the buckets where lookups of `keys` start to be loaded into the cache.
  func prefetch(_ keys: UnsafeBufferPointer<NetChanges.Key>) {
    buckets.withUnsafeBufferPointer { buckets in
      guard let first = buckets.baseAddress else { return }
      for key in keys { tape_prefetch(first + bucket(key)) }
    }
  }

  /// The position of each of `keys`' entries, -1 for a key not there.
  func positions(
    of keys: UnsafeBufferPointer<NetChanges.Key>, into found: UnsafeMutableBufferPointer<Int>
  ) {
    buckets.withUnsafeBufferPointer { buckets in
      let mask = buckets.count - 1
      for (row, key) in keys.enumerated() {
        var bucket = bucket(key)
        found[row] = -1
        while buckets[bucket].position >= 0 {
          if buckets[bucket].id == key.id && Int(buckets[bucket].table) == key.table {
            found[row] = Int(buckets[bucket].position)
            break
          }
          bucket = (bucket + 1) & mask
        }
      }
    }
  }

  mutating func insert(_ key: NetChanges.Key, at position: Int) {
    if (used + 1) * 2 > buckets.count { grow() }
    let mask = buckets.count - 1
    var bucket = bucket(key)
    while buckets[bucket].position >= 0 { bucket = (bucket + 1) & mask }
    buckets[bucket] = Bucket(id: key.id, table: Int32(key.table), position: Int32(position))
    used += 1
  }

  /// Makes room for `count` keys in all, so that filling it rehashes nothing.
  mutating func reserveCapacity(_ count: Int) {
    while count * 2 > buckets.count { grow() }
  }

  private mutating func grow() {
    let old = buckets
    buckets = Array(repeating: .empty, count: old.count * 2)
    shift -= 1
    used = 0
    for bucket in old where bucket.position >= 0 {
      insert(NetChanges.Key(table: Int(bucket.table), id: bucket.id), at: Int(bucket.position))
    }
  }
}
