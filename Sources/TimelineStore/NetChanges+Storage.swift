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
  private var ids: [Int64] = Array(repeating: 0, count: 64)
  private var tables: [Int] = Array(repeating: 0, count: 64)
  /// The entry's position; -1 marks an empty bucket.
  private var positions: [Int32] = Array(repeating: -1, count: 64)
  private var used = 0
  private var shift: UInt64 = 64 - 6

  private func bucket(_ key: NetChanges.Key) -> Int {
    let mixed = UInt64(bitPattern: key.id) &+ UInt64(key.table) &* 0xD6E8_FEB8_6659_FD93
    return Int(truncatingIfNeeded: (mixed &* 0x9E37_79B9_7F4A_7C15) >> shift)
  }

  func position(of key: NetChanges.Key) -> Int? {
    let mask = positions.count - 1
    var bucket = bucket(key)
    while positions[bucket] >= 0 {
      if ids[bucket] == key.id && tables[bucket] == key.table { return Int(positions[bucket]) }
      bucket = (bucket + 1) & mask
    }
    return nil
  }

  mutating func insert(_ key: NetChanges.Key, at position: Int) {
    if (used + 1) * 2 > positions.count { grow() }
    let mask = positions.count - 1
    var bucket = bucket(key)
    while positions[bucket] >= 0 { bucket = (bucket + 1) & mask }
    ids[bucket] = key.id
    tables[bucket] = key.table
    positions[bucket] = Int32(position)
    used += 1
  }

  private mutating func grow() {
    let old = (ids: ids, tables: tables, positions: positions)
    ids = Array(repeating: 0, count: old.ids.count * 2)
    tables = Array(repeating: 0, count: old.ids.count * 2)
    positions = Array(repeating: -1, count: old.ids.count * 2)
    shift -= 1
    used = 0
    for bucket in old.positions.indices where old.positions[bucket] >= 0 {
      insert(
        NetChanges.Key(table: old.tables[bucket], id: old.ids[bucket]),
        at: Int(old.positions[bucket]))
    }
  }
}
