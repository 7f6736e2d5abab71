import Foundation
import Timeline

/// The net effect of a run of recorded changes on the tracked tables: for each row the run
/// touched, its values before the run and after it. Rows the run left as they were do not
/// appear, so applying it costs in proportion to the rows that differ, however many versions
/// the run crossed.
///
/// It reads two encodings: SQLite session changesets (what each version stores, see
/// ``Changeset``) and its own compact encoding (``encoded()``), which the history blocks use.
/// Merging is ours rather than `sqlite3changegroup`'s, which costs about 1.6 µs per added
/// one-row changeset and 0.7 µs per entry (measured here). A far checkout merges about 30,000
/// entries, so this is built for that loop: values are trivially copyable slots in fixed-size
/// rows (text and blobs live in a side table), and rows are found through an open-addressing
/// index on (table, id) with a multiplicative hash instead of `Dictionary`'s SipHash.
/// (Counted with callgrind on a 99,000-version checkout: about half the instructions of a
/// `[Key: Row]` of `ChangeValue` arrays.)
struct NetChanges: Sendable {
  enum Kind: UInt8, Sendable {
    case insert = 1
    case update = 2
    case delete = 3
  }

  /// A row of a tracked table: the table's index in ``Schema/trackedTables`` and its integer
  /// primary key.
  struct Key: Hashable, Sendable {
    let table: Int
    let id: Int64
  }

  /// A row's change, in the shape of a changeset entry: an insert has only new values, a
  /// delete only old ones (all columns), an update the primary key and the changed columns'
  /// old values, and the changed columns' new values. `nil` is a column the change leaves
  /// alone. This is the readable form (``rows``); the merge works on ``Values``.
  struct Row: Hashable, Sendable {
    var kind: Kind
    var old: [ChangeValue?]
    var new: [ChangeValue?]
  }

  /// The widest tracked table has 11 columns.
  static let maximumColumns = 11

  /// One row's old or new values, read by column.
  struct Values {
    fileprivate let slots: ArraySlice<Slot>

    subscript(column: Int) -> Slot { slots[slots.startIndex + column] }
  }

  private struct Entry: Sendable {
    let key: Key
    /// `nil` once a later change cancelled this one (an insert then deleted, an update undone).
    var kind: Kind?
  }

  private var entries: [Entry] = []
  /// Each entry's old values then its new values, ``maximumColumns`` slots each, in entry order:
  /// one flat array, so a merge writes in place.
  private var slots: [Slot] = []
  private var index = RowIndex()
  /// Text and blob values, which slots refer to by position.
  private var payloads: [ChangeValue] = []
  /// How many rows differ.
  private(set) var count = 0

  private static let width = maximumColumns
  private static let stride = 2 * maximumColumns

  var isEmpty: Bool { count == 0 }

  init() {}

  /// Changes given in readable form (tests).
  init(rows: [Key: Row]) {
    for (key, row) in rows {
      var scratch = Array(repeating: Slot.absent, count: Self.stride)
      for (column, value) in row.old.enumerated() { scratch[column] = slot(value) }
      for (column, value) in row.new.enumerated() { scratch[Self.width + column] = slot(value) }
      index.insert(key, at: entries.count)
      entries.append(Entry(key: key, kind: row.kind))
      slots.append(contentsOf: scratch)
      count += 1
    }
  }

  /// The changes in readable form.
  var rows: [Key: Row] {
    var rows: [Key: Row] = [:]
    forEach { key, kind, old, new in
      let width = Schema.trackedColumns[key.table].count
      rows[key] = Row(
        kind: kind, old: (0..<width).map { value(old[$0]) },
        new: (0..<width).map { value(new[$0]) })
    }
    return rows
  }

  /// Calls `body` with every row that differs: its key, kind, old and new values.
  func forEach(_ body: (Key, Kind, Values, Values) throws -> Void) rethrows {
    for (position, entry) in entries.enumerated() {
      guard let kind = entry.kind else { continue }
      let base = position * Self.stride
      try body(
        entry.key, kind, Values(slots: slots[base..<base + Self.width]),
        Values(slots: slots[base + Self.width..<base + Self.stride]))
    }
  }

  /// The value a slot stands for (`nil` when absent).
  func value(_ slot: Slot) -> ChangeValue? {
    switch slot.tag {
    case Slot.integer: return .integer(Int64(bitPattern: slot.bits))
    case Slot.real: return .real(Double(bitPattern: slot.bits))
    case Slot.text, Slot.blob: return payloads[Int(slot.bits)]
    case Slot.null: return .null
    default: return nil
    }
  }

  /// Makes this the change that undoes itself.
  mutating func invert() {
    for position in entries.indices {
      guard let kind = entries[position].kind else { continue }
      let base = position * Self.stride
      for column in 0..<Self.width {
        slots.swapAt(base + column, base + Self.width + column)
      }
      switch kind {
      case .insert: entries[position].kind = .delete
      case .delete: entries[position].kind = .insert
      case .update:
        // An update's old values carry the primary key; its new values do not.
        slots.swapAt(base, base + Self.width)
      }
    }
  }

  /// Adds `later`'s changes as happening after these.
  mutating func append(_ later: NetChanges) throws {
    var scratch = Array(repeating: Slot.absent, count: Self.stride)
    for (position, entry) in later.entries.enumerated() {
      guard let kind = entry.kind else { continue }
      for column in 0..<Self.stride {
        let slot = later.slots[position * Self.stride + column]
        scratch[column] = slot.refersToPayload ? self.slot(later.value(slot)) : slot
      }
      try scratch.withUnsafeBufferPointer { try merge(entry.key, kind, $0) }
    }
  }

  /// Adds a SQLite session changeset's changes as happening after these.
  mutating func append(changeset: Changeset) throws {
    try changeset.data.withUnsafeBytes { bytes in
      try withUnsafeTemporaryAllocation(of: Slot.self, capacity: Self.stride) { scratch in
        var reader = ByteReader(bytes)
        var table = -1
        var width = 0
        while !reader.isAtEnd {
          let marker = try reader.byte()
          if marker == UInt8(ascii: "T") {
            table = try reader.changesetTableHeader()
            width = Schema.trackedColumns[table].count
            continue
          }
          guard table >= 0, let kind = Kind(sqliteOperation: marker) else {
            throw ByteReader.malformed("a changeset entry has operation \(marker)")
          }
          _ = try reader.byte()  // the "indirect" flag
          for column in 0..<Self.stride { scratch[column] = .absent }
          if kind != .insert { try changesetRecord(&reader, width, into: scratch, at: 0) }
          if kind != .delete { try changesetRecord(&reader, width, into: scratch, at: Self.width) }
          let key = scratch[kind == .insert ? Self.width : 0]
          guard key.tag == Slot.integer else {
            throw ByteReader.malformed("a changeset entry has no integer primary key")
          }
          try merge(
            Key(table: table, id: Int64(bitPattern: key.bits)), kind, UnsafeBufferPointer(scratch))
        }
      }
    }
  }

  /// Adds changes in the compact encoding (``encoded()``) as happening after these.
  mutating func append(encoded data: Data) throws {
    try data.withUnsafeBytes { bytes in
      try withUnsafeTemporaryAllocation(of: Slot.self, capacity: Self.stride) { scratch in
        var reader = ByteReader(bytes)
        if reader.isAtEnd { return }
        guard try reader.byte() == Self.encodingVersion else {
          throw ByteReader.malformed("a history block has an unknown encoding")
        }
        while !reader.isAtEnd {
          let table = Int(try reader.byte())
          guard table < Schema.trackedColumns.count, let kind = Kind(rawValue: try reader.byte())
          else { throw ByteReader.malformed("a history block names an unknown table or change") }
          let width = Schema.trackedColumns[table].count
          let id = Int64(bitPattern: try reader.leb128())
          for column in 0..<Self.stride { scratch[column] = .absent }
          if kind != .insert {
            try compactRecord(&reader, width, into: scratch, at: 0)
            scratch[0] = Slot(integer: id)
          }
          if kind != .delete {
            try compactRecord(&reader, width, into: scratch, at: Self.width)
            if kind == .insert { scratch[Self.width] = Slot(integer: id) }
          }
          try merge(Key(table: table, id: id), kind, UnsafeBufferPointer(scratch))
        }
      }
    }
  }

  /// The compact encoding: a version byte, then per row its table, kind and id, and a bit mask
  /// of the columns present with their values, for the old values and then the new ones.
  /// Integers are zigzag LEB128, reals 8 bytes. A one-field clip update takes about 24 bytes,
  /// half of a session changeset's entry.
  func encoded() -> Data {
    // Bytes first, one Data at the end: appending byte by byte to Data costs several times more.
    var out: [UInt8] = [Self.encodingVersion]
    out.reserveCapacity(1 + count * 24)
    forEach { key, kind, old, new in
      out.append(UInt8(key.table))
      out.append(kind.rawValue)
      out.appendLEB128(UInt64(bitPattern: key.id))
      let width = Schema.trackedColumns[key.table].count
      if kind != .insert { appendCompactRecord(old, width, to: &out) }
      if kind != .delete { appendCompactRecord(new, width, to: &out) }
    }
    return Data(out)
  }

  /// These changes as a SQLite session changeset (what a version stores): per table its header
  /// (`T`, the column count, the primary-key flags, the name), then each row's operation, the
  /// "indirect" flag and its records, values typed as in ``Slot``. Coalescing commits merge
  /// with ``append(changeset:)`` and write the result back with this: one merger for
  /// everything, where `sqlite3changegroup` used to do this one.
  func changeset() -> Changeset {
    var out: [UInt8] = []
    for table in Schema.trackedTables.indices {
      var wroteHeader = false
      let width = Schema.trackedColumns[table].count
      forEach { key, kind, old, new in
        guard key.table == table else { return }
        if !wroteHeader {
          wroteHeader = true
          out.append(UInt8(ascii: "T"))
          out.appendSQLiteVarint(UInt64(width))
          out.append(1)
          out.append(contentsOf: repeatElement(0, count: width - 1))
          out.append(contentsOf: Schema.trackedTables[table].utf8)
          out.append(0)
        }
        out.append(kind.sqliteOperation)
        out.append(0)
        if kind != .insert { appendChangesetRecord(old, width, to: &out) }
        if kind != .delete { appendChangesetRecord(new, width, to: &out) }
      }
    }
    return Changeset(data: Data(out))
  }

  private func appendChangesetRecord(_ values: Values, _ width: Int, to out: inout [UInt8]) {
    for column in 0..<width {
      let slot = values[column]
      out.append(slot.tag)
      switch slot.tag {
      case Slot.integer, Slot.real:
        withUnsafeBytes(of: slot.bits.bigEndian) { out.append(contentsOf: $0) }
      case Slot.text, Slot.blob:
        let bytes: [UInt8]
        switch value(slot) {
        case .text(let text)?: bytes = Array(text.utf8)
        case .blob(let blob)?: bytes = blob
        default: bytes = []
        }
        out.appendSQLiteVarint(UInt64(bytes.count))
        out.append(contentsOf: bytes)
      default: break
      }
    }
  }

  /// The ids these changes touch, by kind: what a snapshot must re-read.
  var changedIDs: ChangedIDs {
    var changed = ChangedIDs()
    forEach { key, _, _, _ in
      switch Schema.trackedTables[key.table] {
      case Schema.clipTable: changed.clips.insert(Clip.ID(key.id))
      case Schema.trackTable:
        changed.tracks.insert(Track.ID(key.id))
        changed.trackOrder = true
      case Schema.sourceTable: changed.sources.insert(Source.ID(key.id))
      default: changed.format = true
      }
    }
    return changed
  }

  private static let encodingVersion: UInt8 = 1

  /// Folds a later change of one row (`later`: its old values, then its new values) into what
  /// is recorded for it, keeping the oldest old values and the newest new ones, as
  /// `sqlite3changegroup` does. An update whose columns end where they started, and an insert
  /// later deleted, leave nothing.
  private mutating func merge(_ key: Key, _ kind: Kind, _ later: UnsafeBufferPointer<Slot>) throws {
    guard let position = index.position(of: key) else {
      index.insert(key, at: entries.count)
      entries.append(Entry(key: key, kind: kind))
      slots.append(contentsOf: later)
      count += 1
      return
    }
    let (width, base) = (Self.width, position * Self.stride)
    let payloads = payloads
    let (old, new) = (base, base + width)
    func isIdentical(_ a: Slot, _ b: Slot) -> Bool {
      // Equal as stored: reals by bit pattern (−0.0 is not 0.0), as SQLite's sessions compare.
      guard a.isPresent, a.tag == b.tag else { return false }
      return a.refersToPayload ? payloads[Int(a.bits)] == payloads[Int(b.bits)] : a.bits == b.bits
    }
    guard let earlier = entries[position].kind else {
      // The row's earlier changes cancelled out: this one stands alone.
      entries[position].kind = kind
      for column in 0..<Self.stride { slots[base + column] = later[column] }
      count += 1
      return
    }
    let result: Kind? = try slots.withUnsafeMutableBufferPointer { slots in
      func changesAnyColumn() -> Bool {
        (1..<width).contains { slots[new + $0].isPresent }
      }
      var result: Kind? = earlier
      switch (earlier, kind) {
      case (.insert, .update):
        for column in 1..<width where later[width + column].isPresent {
          slots[new + column] = later[width + column]
        }
      case (.insert, .delete):
        result = nil
      case (.update, .update):
        var dropped = false
        for column in 1..<width where later[width + column].isPresent {
          if !slots[old + column].isPresent { slots[old + column] = later[column] }
          if isIdentical(slots[old + column], later[width + column]) {
            slots[old + column] = .absent
            slots[new + column] = .absent
            dropped = true
          } else {
            slots[new + column] = later[width + column]
          }
        }
        if dropped && !changesAnyColumn() { result = nil }
      case (.update, .delete):
        result = .delete
        for column in 0..<width {
          if !slots[old + column].isPresent { slots[old + column] = later[column] }
          slots[new + column] = .absent
        }
      case (.delete, .insert):
        result = .update
        for column in 1..<width {
          if isIdentical(slots[old + column], later[width + column]) {
            slots[old + column] = .absent
            slots[new + column] = .absent
          } else {
            slots[new + column] = later[width + column]
          }
        }
        if !changesAnyColumn() { result = nil }
      default:
        throw StoreError.corrupt(
          detail:
            "history records \(kind) after \(earlier) of \(Schema.trackedTables[key.table]) \(key.id)"
        )
      }
      return result
    }
    entries[position].kind = result
    if result == nil { count -= 1 }
  }

  /// The slot for `value`, keeping text and blobs in the side table.
  private mutating func slot(_ value: ChangeValue?) -> Slot {
    switch value {
    case nil: return .absent
    case .null?: return Slot(tag: Slot.null, bits: 0)
    case .integer(let value)?: return Slot(integer: value)
    case .real(let value)?: return Slot(tag: Slot.real, bits: value.bitPattern)
    case .text(let text)?:
      payloads.append(.text(text))
      return Slot(tag: Slot.text, bits: UInt64(payloads.count - 1))
    case .blob(let bytes)?:
      payloads.append(.blob(bytes))
      return Slot(tag: Slot.blob, bits: UInt64(payloads.count - 1))
    }
  }

  /// One record of a changeset entry: a type byte per column and its value, written to
  /// `values[start + column]`.
  private mutating func changesetRecord(
    _ reader: inout ByteReader, _ width: Int, into values: UnsafeMutableBufferPointer<Slot>,
    at start: Int
  ) throws {
    for column in 0..<width {
      let type = try reader.byte()
      switch type {
      case 0: continue
      case Slot.integer, Slot.real:
        values[start + column] = Slot(tag: type, bits: try reader.bigEndian64())
      case Slot.text:
        let bytes = try reader.take(Int(try reader.sqliteVarint()))
        values[start + column] = slot(.text(String(decoding: bytes, as: UTF8.self)))
      case Slot.blob:
        values[start + column] = slot(.blob(Array(try reader.take(Int(try reader.sqliteVarint())))))
      case Slot.null: values[start + column] = Slot(tag: Slot.null, bits: 0)
      default: throw ByteReader.malformed("a changeset value has type \(type)")
      }
    }
  }

  /// One record of the compact encoding: a mask of the columns present (never the primary
  /// key, which the entry's id gives), then their values, written to `values[start + column]`.
  private mutating func compactRecord(
    _ reader: inout ByteReader, _ width: Int, into values: UnsafeMutableBufferPointer<Slot>,
    at start: Int
  ) throws {
    var mask = try reader.leb128()
    guard mask >> width == 0, mask & 1 == 0 else {
      throw ByteReader.malformed("a history block has unknown columns")
    }
    while mask != 0 {
      let column = start + mask.trailingZeroBitCount
      mask &= mask - 1
      let type = try reader.byte()
      switch type {
      case Slot.integer:
        let zigzag = try reader.leb128()
        values[column] = Slot(
          integer: Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
      case Slot.real:
        let bits = UInt64(littleEndian: try reader.take(8).loadUnaligned(as: UInt64.self))
        values[column] = Slot(tag: Slot.real, bits: bits)
      case Slot.text:
        let bytes = try reader.take(Int(try reader.leb128()))
        values[column] = slot(.text(String(decoding: bytes, as: UTF8.self)))
      case Slot.blob: values[column] = slot(.blob(Array(try reader.take(Int(try reader.leb128())))))
      case Slot.null: values[column] = Slot(tag: Slot.null, bits: 0)
      default: throw ByteReader.malformed("a history block value has type \(type)")
      }
    }
  }

  /// Column 0, the primary key, is never written: the entry's id stands for it.
  private func appendCompactRecord(_ values: Values, _ width: Int, to out: inout [UInt8]) {
    var mask: UInt64 = 0
    for column in 1..<width where values[column].isPresent { mask |= 1 << column }
    out.appendLEB128(mask)
    for column in 1..<width where values[column].isPresent {
      let slot = values[column]
      out.append(slot.tag)
      switch slot.tag {
      case Slot.integer:
        let value = Int64(bitPattern: slot.bits)
        out.appendLEB128(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
      case Slot.real:
        Swift.withUnsafeBytes(of: slot.bits.littleEndian) { out.append(contentsOf: $0) }
      case Slot.text:
        guard case .text(let text) = payloads[Int(slot.bits)] else { continue }
        out.appendLEB128(UInt64(text.utf8.count))
        out.append(contentsOf: text.utf8)
      case Slot.blob:
        guard case .blob(let bytes) = payloads[Int(slot.bits)] else { continue }
        out.appendLEB128(UInt64(bytes.count))
        out.append(contentsOf: bytes)
      default:
        break
      }
    }
  }
}

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
private struct RowIndex: Sendable {
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

extension NetChanges.Kind: CustomStringConvertible {
  /// SQLite's code for the operation.
  var sqliteOperation: UInt8 {
    switch self {
    case .insert: 18
    case .update: 23
    case .delete: 9
    }
  }

  init?(sqliteOperation: UInt8) {
    switch sqliteOperation {
    case 18: self = .insert  // SQLITE_INSERT
    case 23: self = .update  // SQLITE_UPDATE
    case 9: self = .delete  // SQLITE_DELETE
    default: return nil
    }
  }

  var description: String {
    switch self {
    case .insert: return "an insert"
    case .update: return "an update"
    case .delete: return "a delete"
    }
  }
}

/// A column value of a recorded change.
enum ChangeValue: Hashable, Sendable {
  case null
  case integer(Int64)
  case real(Double)
  case text(String)
  case blob([UInt8])
}

extension ChangeValue {
  /// Equal as stored: reals compare by bit pattern (−0.0 is not 0.0), as SQLite's sessions do.
  func isIdentical(to other: ChangeValue) -> Bool {
    if case .real(let a) = self, case .real(let b) = other { return a.bitPattern == b.bitPattern }
    return self == other
  }
}

/// Reads the two encodings, refusing anything malformed with a ``StoreError/corrupt(detail:)``.
private struct ByteReader {
  private let bytes: UnsafeRawBufferPointer
  private var offset = 0

  init(_ bytes: UnsafeRawBufferPointer) {
    self.bytes = bytes
  }

  var isAtEnd: Bool { offset >= bytes.count }

  static func malformed(_ detail: String) -> StoreError {
    .corrupt(detail: "\(detail) in the recorded history")
  }

  @inline(__always)
  mutating func byte() throws -> UInt8 {
    guard offset < bytes.count else { throw Self.malformed("a change ends early") }
    defer { offset += 1 }
    return bytes[offset]
  }

  @inline(__always)
  mutating func take(_ count: Int) throws -> UnsafeRawBufferPointer {
    guard count >= 0, count <= bytes.count - offset else {
      throw Self.malformed("a change ends early")
    }
    defer { offset += count }
    return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
  }

  /// SQLite's varint: big-endian groups of 7 bits, a ninth byte of 8.
  mutating func sqliteVarint() throws -> UInt64 {
    var value: UInt64 = 0
    for _ in 0..<8 {
      let byte = try byte()
      value = (value << 7) | UInt64(byte & 0x7F)
      if byte & 0x80 == 0 { return value }
    }
    return (value << 8) | UInt64(try byte())
  }

  @inline(__always)
  mutating func leb128() throws -> UInt64 {
    // Most numbers here (masks, small ids, kinds) fit in one byte.
    if offset < bytes.count, bytes[offset] < 0x80 {
      defer { offset += 1 }
      return UInt64(bytes[offset])
    }
    var value: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let byte = try byte()
      guard shift < 64 else { throw Self.malformed("a number is too long") }
      value |= UInt64(byte & 0x7F) << shift
      if byte & 0x80 == 0 { return value }
      shift += 7
    }
  }

  mutating func bigEndian64() throws -> UInt64 {
    UInt64(bigEndian: try take(8).loadUnaligned(as: UInt64.self))
  }

  /// A changeset's table header (after its "T"): column count, primary-key flags, name. Returns
  /// the table's index in ``Schema/trackedTables``.
  mutating func changesetTableHeader() throws -> Int {
    let columns = Int(try sqliteVarint())
    _ = try take(columns)
    let start = offset
    while try byte() != 0 {}
    let name = String(
      decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset - 1]), as: UTF8.self)
    guard let table = Schema.trackedTables.firstIndex(of: name),
      Schema.trackedColumns[table].count == columns
    else { throw Self.malformed("a changeset names unknown table \(name)") }
    return table
  }
}

extension [UInt8] {
  /// SQLite's varint (see ``ByteReader/sqliteVarint()``).
  fileprivate mutating func appendSQLiteVarint(_ value: UInt64) {
    if value > 0x00FF_FFFF_FFFF_FFFF {
      for shift in stride(from: 57, through: 8, by: -7) {
        append(UInt8((value >> UInt64(shift)) & 0x7F) | 0x80)
      }
      append(UInt8(value & 0xFF))
      return
    }
    var groups: [UInt8] = [UInt8(value & 0x7F)]
    var rest = value >> 7
    while rest > 0 {
      groups.append(UInt8(rest & 0x7F) | 0x80)
      rest >>= 7
    }
    append(contentsOf: groups.reversed())
  }

  fileprivate mutating func appendLEB128(_ value: UInt64) {
    var value = value
    while value >= 0x80 {
      append(UInt8(value & 0x7F) | 0x80)
      value >>= 7
    }
    append(UInt8(value))
  }
}
