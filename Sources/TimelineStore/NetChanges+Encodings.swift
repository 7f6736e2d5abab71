import Foundation

// NetChanges' two encodings: SQLite session changesets (what each version stores) and the
// compact encoding of the history blocks, read and written.

extension NetChanges {
  static let encodingVersion: UInt8 = 1

  /// Adds a version's stored changes as happening after these: a SQLite session changeset (what
  /// versions stored before the packed encoding, read as they are) or the packed encoding
  /// (``packed()``), told apart by their first byte.
  mutating func append(changeset: Changeset) throws {
    if changeset.data.first == Self.packedFormat {
      try append(packed: changeset.data)
      return
    }
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
      try Self.withBatch { batch in
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
          let scratch = batch.nextRow()
          if kind != .insert {
            try compactRecord(&reader, width, into: scratch, at: 0)
            scratch[0] = Slot(integer: id)
          }
          if kind != .delete {
            try compactRecord(&reader, width, into: scratch, at: Self.width)
            if kind == .insert { scratch[Self.width] = Slot(integer: id) }
          }
          batch.append(Key(table: table, id: id), kind)
          if batch.isFull { try merge(&batch) }
        }
        try merge(&batch)
      }
    }
  }

  /// The compact encoding: a version byte, then per row its table, kind and id, and a bit mask
  /// of the columns present with their values, for the old values and then the new ones.
  /// Integers are zigzag LEB128, reals 8 bytes. A one-field clip update takes about 24 bytes,
  /// half of a session changeset's entry. With `header`, that many zero bytes come first, for
  /// the caller to fill (a pending move's checksum: see ``PendingMove/Stored``), without a copy.
  func encoded(after header: Int = 0) -> Data {
    // Bytes first, one Data at the end: appending byte by byte to Data costs several times more.
    var out = [UInt8](repeating: 0, count: header)
    out.reserveCapacity(header + 1 + count * 24)
    out.append(Self.encodingVersion)
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

  /// These changes as a SQLite session changeset (what a version stored before the packed
  /// encoding, ``packed()``): per table its header (`T`, the column count, the primary-key
  /// flags, the name), then each row's operation, the "indirect" flag and its records, values
  /// typed as in ``Slot``. What SQLite's own changeset functions take (the tests compare our
  /// merge with `sqlite3changegroup` through it).
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

  /// The bytes of a text or blob slot, as both encodings store them after their length.
  private func bytes(of slot: Slot) -> [UInt8] {
    switch value(slot) {
    case .text(let text)?: Array(text.utf8)
    case .blob(let blob)?: blob
    default: []
    }
  }

  private func appendChangesetRecord(_ values: Values, _ width: Int, to out: inout [UInt8]) {
    for column in 0..<width {
      let slot = values[column]
      out.append(slot.tag)
      switch slot.tag {
      case Slot.integer, Slot.real:
        withUnsafeBytes(of: slot.bits.bigEndian) { out.append(contentsOf: $0) }
      case Slot.text, Slot.blob:
        let bytes = self.bytes(of: slot)
        out.appendSQLiteVarint(UInt64(bytes.count))
        out.append(contentsOf: bytes)
      default: break
      }
    }
  }

  /// The ids these changes touch, by kind: what a snapshot must re-read.
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
        let bytes = try reader.take(try ByteReader.length(reader.sqliteVarint()))
        values[start + column] = slot(.text(String(decoding: bytes, as: UTF8.self)))
      case Slot.blob:
        values[start + column] = slot(
          .blob(Array(try reader.take(try ByteReader.length(reader.sqliteVarint())))))
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
        let bytes = try reader.take(try ByteReader.length(reader.leb128()))
        values[column] = slot(.text(String(decoding: bytes, as: UTF8.self)))
      case Slot.blob:
        values[column] = slot(.blob(Array(try reader.take(try ByteReader.length(reader.leb128())))))
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

// The packed encoding: what each version stores.

extension NetChanges {
  /// The first byte of the packed encoding. A session changeset starts with `T` (0x54).
  static let packedFormat: UInt8 = 2

  /// A new integer of an update stored as its difference from the old value of its column.
  private static let deltaType: UInt8 = 6
  /// A new integer of an update that differs from the old value by what the previous row's
  /// did in that column (nothing stored): a ripple edit's moves, after the first.
  private static let repeatedDeltaType: UInt8 = 7

  /// What the packed encoding's writer and reader both remember of the previous row: each row
  /// is written relative to it.
  private struct PackState {
    var id: Int64 = 0
    var table = -1
    var kind = Kind.insert
    var masks: (UInt64, UInt64) = (0, 0)
    /// The type of each value of the previous row of this table (old values, then new ones),
    /// as written.
    var types: [UInt8] = []
    /// The previous row's values (its integers are the bases of the next row's, when it has
    /// the same shape).
    var values = [Slot](repeating: .absent, count: NetChanges.stride)
    /// Per column, the difference between new and old of the last update of this table that
    /// changed that integer column.
    var deltas = [Int64?](repeating: nil, count: NetChanges.width)

    /// Forgets the previous row's shape when a row of another table follows it.
    mutating func enter(table: Int) {
      guard table != self.table else { return }
      self.table = table
      types = []
      deltas = Array(repeating: nil, count: NetChanges.width)
    }

    /// Remembers `row` (slots, old then new) as the previous row.
    mutating func remember(
      id: Int64, kind: Kind, masks: (UInt64, UInt64), types: [UInt8],
      row: UnsafeBufferPointer<Slot>
    ) {
      self.id = id
      self.kind = kind
      self.masks = masks
      self.types = types
      for position in 0..<NetChanges.stride { values[position] = row[position] }
      guard kind == .update else { return }
      for column in 1..<NetChanges.width
      where row[column].tag == Slot.integer && row[NetChanges.width + column].tag == Slot.integer {
        deltas[column] = Int64(bitPattern: row[NetChanges.width + column].bits &- row[column].bits)
      }
    }
  }

  /// These changes in the packed encoding, what a version stores (``Changeset``).
  ///
  /// A session changeset spends 9 bytes on every integer and a byte on every column an update
  /// leaves alone: a clip moved by a ripple edit cost 48 bytes (the primary key and the old
  /// start, 8 bytes each with their types, 10 bytes of "undefined" columns, the new start).
  /// Here rows come in (table, id) order, each written relative to the one before: a header
  /// byte (table, kind, "the id after the previous one", "the same shape as the previous
  /// row", that is the same columns with values of the same types); the id as a difference
  /// when it is not the next; the column masks and value types when the shape is new; then
  /// the values: integers as zigzag LEB128 (as differences from the previous row's, when the
  /// shape is the same), an update's new integer as its difference from the old one, or as
  /// nothing when that difference is the previous update's in that column. So a clip moved by
  /// a ripple edit, after the first, costs its header and the difference between its old start
  /// and the previous clip's: 3 to 5 bytes.
  ///
  /// It starts with ``packedFormat`` and the names of the tables it touches (each followed by
  /// a NUL, then an empty name), as a session changeset names them, so that a query finds the
  /// versions that touch a table by its name.
  func packed() -> Data {
    var rows: [(key: Key, kind: Kind, old: Values, new: Values)] = []
    rows.reserveCapacity(count)
    forEach { key, kind, old, new in rows.append((key, kind, old, new)) }
    rows.sort { ($0.key.table, $0.key.id) < ($1.key.table, $1.key.id) }
    var out: [UInt8] = [Self.packedFormat]
    out.reserveCapacity(32 + count * 8)
    var tables = Set<Int>()
    for row in rows where tables.insert(row.key.table).inserted {
      out.append(contentsOf: Schema.trackedTables[row.key.table].utf8)
      out.append(0)
    }
    out.append(0)
    var state = PackState()
    var slots = [Slot](repeating: .absent, count: Self.stride)
    var types: [UInt8] = []
    for (key, kind, old, new) in rows {
      let width = Schema.trackedColumns[key.table].count
      for column in 0..<Self.width {
        slots[column] = kind == .insert ? .absent : old[column]
        slots[Self.width + column] = kind == .delete ? .absent : new[column]
      }
      let masks = (
        kind == .insert ? 0 : Self.mask(old, width), kind == .delete ? 0 : Self.mask(new, width)
      )
      let isNext = state.table == key.table && state.id &+ 1 == key.id
      state.enter(table: key.table)
      types.removeAll(keepingCapacity: true)
      for (start, mask) in [(0, masks.0), (Self.width, masks.1)] {
        var mask = mask
        while mask != 0 {
          let column = mask.trailingZeroBitCount
          mask &= mask - 1
          let slot = slots[start + column]
          if start > 0, kind == .update, slot.tag == Slot.integer, slots[column].tag == Slot.integer
          {
            let delta = Int64(bitPattern: slot.bits &- slots[column].bits)
            types.append(state.deltas[column] == delta ? Self.repeatedDeltaType : Self.deltaType)
          } else {
            types.append(slot.tag)
          }
        }
      }
      let sameShape =
        !state.types.isEmpty && state.kind == kind && state.masks == masks
        && state.types == types
      out.append(contentsOf: Self.header(table: key.table, kind: kind, isNext, sameShape))
      if !isNext { out.appendLEB128(zigzag(key.id &- state.id)) }
      if !sameShape {
        if kind != .insert { out.appendLEB128(masks.0) }
        if kind != .delete { out.appendLEB128(masks.1) }
        out.append(contentsOf: types)
      }
      var typeIndex = 0
      for (start, mask) in [(0, masks.0), (Self.width, masks.1)] {
        var mask = mask
        while mask != 0 {
          let column = mask.trailingZeroBitCount
          mask &= mask - 1
          let slot = slots[start + column]
          let type = types[typeIndex]
          typeIndex += 1
          switch type {
          case Slot.integer:
            let base = sameShape ? state.values[start + column].bits : 0
            out.appendLEB128(zigzag(Int64(bitPattern: slot.bits &- base)))
          case Self.deltaType:
            out.appendLEB128(zigzag(Int64(bitPattern: slot.bits &- slots[column].bits)))
          case Slot.real:
            Swift.withUnsafeBytes(of: slot.bits.littleEndian) { out.append(contentsOf: $0) }
          case Slot.text, Slot.blob:
            let bytes = self.bytes(of: slot)
            out.appendLEB128(UInt64(bytes.count))
            out.append(contentsOf: bytes)
          default:
            break
          }
        }
      }
      slots.withUnsafeBufferPointer {
        state.remember(id: key.id, kind: kind, masks: masks, types: types, row: $0)
      }
    }
    return Data(out)
  }

  /// A row's header: the table's number in its low 4 bits, the kind in bits 4–5, then the
  /// flags "the id after the previous one" (0x40) and "the same shape" (0x80). A table from 16
  /// on does not fit in 4 bits: its header has kind 0 (no kind has it, so no history written
  /// before had it), the kind in the low bits in place of the table, and the table's number in
  /// the byte after. Tables 0–15 are written as they always were, so old history and new agree.
  static func header(table: Int, kind: Kind, _ isNext: Bool, _ sameShape: Bool) -> [UInt8] {
    let flags: UInt8 = (isNext ? 0x40 : 0) | (sameShape ? 0x80 : 0)
    if table < 16 { return [UInt8(table) | kind.rawValue << 4 | flags] }
    precondition(table < 256, "a tracked table's number fits in one byte")
    return [kind.rawValue | flags, UInt8(table)]
  }

  /// The table and kind a header (``header(table:kind:_:_:)``) names, reading the escape's
  /// byte when it has one.
  private static func tableAndKind(
    _ header: UInt8, _ reader: inout ByteReader
  ) throws -> (Int, Kind) {
    let table: Int
    let kind: Kind?
    if (header >> 4) & 3 == 0 {
      kind = Kind(rawValue: header & 0x0F)
      table = Int(try reader.byte())
    } else {
      kind = Kind(rawValue: (header >> 4) & 3)
      table = Int(header & 0x0F)
    }
    guard table < Schema.trackedColumns.count, let kind else {
      throw ByteReader.malformed("a version names an unknown table or change")
    }
    return (table, kind)
  }

  /// The columns present in `values`, but the primary key (the entry's id stands for it).
  private static func mask(_ values: Values, _ width: Int) -> UInt64 {
    var mask: UInt64 = 0
    for column in 1..<width where values[column].isPresent { mask |= 1 << column }
    return mask
  }

  private func zigzag(_ value: Int64) -> UInt64 {
    UInt64(bitPattern: (value << 1) ^ (value >> 63))
  }

  /// Adds changes in the packed encoding (``packed()``) as happening after these.
  mutating func append(packed data: Data) throws {
    try data.withUnsafeBytes { bytes in
      try withUnsafeTemporaryAllocation(of: Slot.self, capacity: Self.stride) { scratch in
        var reader = ByteReader(bytes)
        guard try reader.byte() == Self.packedFormat else {
          throw ByteReader.malformed("a version has an unknown encoding")
        }
        // The table names, for queries; the rows name their tables by number.
        var ended = false
        while !ended {
          var empty = true
          while try reader.byte() != 0 { empty = false }
          ended = empty
        }
        var state = PackState()
        var types: [UInt8] = []
        while !reader.isAtEnd {
          let header = try reader.byte()
          let (table, kind) = try Self.tableAndKind(header, &reader)
          let width = Schema.trackedColumns[table].count
          let isNext = header & 0x40 != 0
          let sameShape = header & 0x80 != 0
          guard !isNext || state.table == table else {
            throw ByteReader.malformed("a version's row follows no row of its table")
          }
          let id: Int64
          if isNext {
            id = state.id &+ 1
          } else {
            let zigzag = try reader.leb128()
            id = state.id &+ (Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
          }
          state.enter(table: table)
          var masks: (UInt64, UInt64) = (0, 0)
          if sameShape {
            guard !state.types.isEmpty, state.kind == kind else {
              throw ByteReader.malformed("a version's row repeats a shape it has not named")
            }
            masks = state.masks
            types = state.types
          } else {
            if kind != .insert { masks.0 = try reader.leb128() }
            if kind != .delete { masks.1 = try reader.leb128() }
            guard masks.0 >> width == 0, masks.1 >> width == 0, (masks.0 | masks.1) & 1 == 0
            else { throw ByteReader.malformed("a version has unknown columns") }
            types.removeAll(keepingCapacity: true)
            for _ in 0..<(masks.0.nonzeroBitCount + masks.1.nonzeroBitCount) {
              types.append(try reader.byte())
            }
          }
          for position in 0..<Self.stride { scratch[position] = .absent }
          var typeIndex = 0
          for (start, mask) in [(0, masks.0), (Self.width, masks.1)] {
            var mask = mask
            while mask != 0 {
              let column = mask.trailingZeroBitCount
              mask &= mask - 1
              let type = types[typeIndex]
              typeIndex += 1
              scratch[start + column] = try packedValue(
                &reader, type: type, base: sameShape ? state.values[start + column] : .absent,
                old: start > 0 ? scratch[column] : .absent, delta: state.deltas[column])
            }
          }
          if kind != .insert { scratch[0] = Slot(integer: id) }
          if kind == .insert { scratch[Self.width] = Slot(integer: id) }
          state.remember(
            id: id, kind: kind, masks: masks, types: types, row: UnsafeBufferPointer(scratch))
          try merge(Key(table: table, id: id), kind, UnsafeBufferPointer(scratch))
        }
      }
    }
  }

  /// Whether a version's stored changes (either encoding) touch a row that `matches`: what
  /// `tape log` asks of every version, so it reads only each row's header, id and value
  /// lengths, never a value (a packed changeset's rows are skipped without decoding; a session
  /// changeset, what older versions stored, is decoded).
  static func touches(
    _ bytes: UnsafeRawBufferPointer, where matches: (Key) -> Bool
  ) throws -> Bool {
    guard let first = bytes.first else { return false }
    guard first == packedFormat else {
      var changes = NetChanges()
      try changes.append(changeset: Changeset(data: Data(bytes)))
      var found = false
      changes.forEach { key, _, _, _ in if !found && matches(key) { found = true } }
      return found
    }
    var reader = ByteReader(bytes)
    _ = try reader.byte()
    var ended = false
    while !ended {
      var empty = true
      while try reader.byte() != 0 { empty = false }
      ended = empty
    }
    var (table, id, kind) = (-1, Int64(0), Kind.insert)
    var types: [UInt8] = []
    while !reader.isAtEnd {
      let header = try reader.byte()
      let (rowTable, rowKind) = try tableAndKind(header, &reader)
      if header & 0x40 != 0 {
        guard table == rowTable else {
          throw ByteReader.malformed("a version's row follows no row of its table")
        }
        id &+= 1
      } else {
        let zigzag = try reader.leb128()
        id &+= Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
      }
      if rowTable != table { types = [] }
      table = rowTable
      if matches(Key(table: table, id: id)) { return true }
      if header & 0x80 != 0 {
        guard !types.isEmpty, kind == rowKind else {
          throw ByteReader.malformed("a version's row repeats a shape it has not named")
        }
      } else {
        var count = 0
        if rowKind != .insert { count += (try reader.leb128()).nonzeroBitCount }
        if rowKind != .delete { count += (try reader.leb128()).nonzeroBitCount }
        types.removeAll(keepingCapacity: true)
        for _ in 0..<count { types.append(try reader.byte()) }
      }
      kind = rowKind
      for type in types {
        switch type {
        case Slot.integer, deltaType: _ = try reader.leb128()
        case Slot.real: _ = try reader.take(8)
        case Slot.text, Slot.blob: _ = try reader.take(Int(truncatingIfNeeded: try reader.leb128()))
        case repeatedDeltaType, Slot.null: break
        default: throw ByteReader.malformed("a version value has type \(type)")
        }
      }
    }
    return false
  }

  /// One value of the packed encoding of `type`: an integer relative to `base` (the previous
  /// row's, when the shape is the same), or a new integer relative to `old`.
  private mutating func packedValue(
    _ reader: inout ByteReader, type: UInt8, base: Slot, old: Slot, delta: Int64?
  ) throws -> Slot {
    func signed(_ zigzag: UInt64) -> UInt64 {
      UInt64(bitPattern: Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
    }
    switch type {
    case Slot.integer:
      return Slot(tag: Slot.integer, bits: base.bits &+ signed(try reader.leb128()))
    case Self.deltaType, Self.repeatedDeltaType:
      guard old.tag == Slot.integer else {
        throw ByteReader.malformed("a version's difference has no old value")
      }
      if type == Self.deltaType {
        return Slot(tag: Slot.integer, bits: old.bits &+ signed(try reader.leb128()))
      }
      guard let delta else {
        throw ByteReader.malformed("a version repeats a difference it has not given")
      }
      return Slot(tag: Slot.integer, bits: old.bits &+ UInt64(bitPattern: delta))
    case Slot.real:
      return Slot(
        tag: Slot.real,
        bits: UInt64(littleEndian: try reader.take(8).loadUnaligned(as: UInt64.self)))
    case Slot.text:
      let bytes = try reader.take(try ByteReader.length(reader.leb128()))
      return slot(.text(String(decoding: bytes, as: UTF8.self)))
    case Slot.blob:
      return slot(.blob(Array(try reader.take(try ByteReader.length(reader.leb128())))))
    case Slot.null:
      return Slot(tag: Slot.null, bits: 0)
    default:
      throw ByteReader.malformed("a version value has type \(type)")
    }
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

  /// A byte count read as `number`: one too large for an `Int` is malformed (a damaged
  /// length), not a trap.
  static func length(_ number: UInt64) throws -> Int {
    guard let count = Int(exactly: number) else { throw malformed("a length is too large") }
    return count
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
