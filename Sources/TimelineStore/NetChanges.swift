internal import CMemoryHints
import Foundation
import Timeline

/// The net effect of a run of recorded changes on the tracked tables: for each row the run
/// touched, its values before the run and after it. Rows the run left as they were do not
/// appear, so applying it costs in proportion to the rows that differ, however many versions
/// the run crossed.
///
/// It reads three encodings: SQLite session changesets (what versions stored before issue 23,
/// see ``Changeset``), its packed encoding (``packed()``, what versions store now) and its
/// compact encoding (``encoded()``), which the history blocks use.
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
    /// The entry's slots (old and new values interleaved), and 0 for its old values, 1 for
    /// its new ones.
    fileprivate let slots: ArraySlice<Slot>
    fileprivate let offset: Int

    subscript(column: Int) -> Slot { slots[slots.startIndex + 2 * column + offset] }

    /// A bit for each column these values carry (bit 0 for the key column).
    var presentColumns: UInt64 {
      slots.withUnsafeBufferPointer { slots in
        var mask: UInt64 = 0
        for column in 0..<NetChanges.maximumColumns
        where slots[2 * column + offset].isPresent {
          mask |= 1 << column
        }
        return mask
      }
    }
  }

  private struct Entry: Sendable {
    let key: Key
    /// `nil` once a later change cancelled this one (an insert then deleted, an update undone).
    var kind: Kind?
  }

  private var entries: [Entry] = []
  /// Each entry's values, ``stride`` slots in entry order, a column's old value then its new
  /// one (``oldSlot(_:)``, ``newSlot(_:)``): one flat array, so a merge writes in place, and a
  /// column's two values share a cache line (a far checkout's merge is bound by memory).
  /// Scratch rows elsewhere (``merge(_:_:_:)``'s `later`) hold the old values then the new.
  private var slots: [Slot] = []
  private var index = RowIndex()
  /// Text and blob values, which slots refer to by position.
  private(set) var payloads: [ChangeValue] = []
  /// How many rows differ.
  private(set) var count = 0

  static let width = maximumColumns
  /// How many rows ahead a loop over rows asks for the memory it will read.
  static let prefetchDistance = 8
  static let stride = 2 * maximumColumns

  /// Where column `column`'s old value is in an entry's slots.
  @inline(__always) private static func oldSlot(_ column: Int) -> Int { 2 * column }
  /// Where column `column`'s new value is in an entry's slots.
  @inline(__always) private static func newSlot(_ column: Int) -> Int { 2 * column + 1 }

  /// Adds an entry's slots from a scratch row (old values, then new ones).
  private mutating func appendSlots(_ scratch: some Collection<Slot>) {
    let start = scratch.startIndex
    for column in 0..<Self.width {
      slots.append(scratch[scratch.index(start, offsetBy: column)])
      slots.append(scratch[scratch.index(start, offsetBy: Self.width + column)])
    }
  }

  var isEmpty: Bool { count == 0 }

  /// Makes room for `rows` rows in all. Why: a merge of large history blocks grew its arrays
  /// by doubling, each doubling a fresh allocation the kernel zero-fills page by page (a third
  /// of an every-clip checkout's merge, by perf); the entries and values asked for once are
  /// touched only as far as they are used (the row index is written whole).
  mutating func reserveCapacity(rows: Int) {
    entries.reserveCapacity(rows)
    slots.reserveCapacity(rows * Self.stride)
    index.reserveCapacity(rows)
  }

  init() {}

  /// Changes given in readable form (tests).
  init(rows: [Key: Row]) {
    for (key, row) in rows {
      var scratch = Array(repeating: Slot.absent, count: Self.stride)
      for (column, value) in row.old.enumerated() { scratch[column] = slot(value) }
      for (column, value) in row.new.enumerated() { scratch[Self.width + column] = slot(value) }
      index.insert(key, at: entries.count)
      entries.append(Entry(key: key, kind: row.kind))
      appendSlots(scratch)
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
      let values = slots[base..<base + Self.stride]
      try body(
        entry.key, kind, Values(slots: values, offset: 0), Values(slots: values, offset: 1))
    }
  }

  /// One row's values inside ``forEachRow(in:_:)``: a pointer to its slots and the change's
  /// texts and blobs, valid only while the body runs. Unlike ``Values``, it counts no
  /// reference: a snapshot built from an every-clip change took and dropped references to the
  /// slots and the payloads several times per row, a fifth of its time by perf, and more while
  /// another thread encoded the same change.
  struct RowSlots {
    fileprivate let base: UnsafePointer<Slot>
    let payloads: UnsafeBufferPointer<ChangeValue>

    /// Column `column`'s new value.
    func new(_ column: Int) -> Slot { base[NetChanges.newSlot(column)] }

    /// The new value of `column` (`nil` when the change leaves it alone).
    func newValue(_ column: Int) -> ChangeValue? {
      NetChanges.value(new(column), payloads: payloads)
    }
  }

  /// Calls `body` with every row of `tables` (indices in ``Schema/trackedTables``) that
  /// differs, its values as ``RowSlots``; the other rows are passed over unread. `ahead`, if
  /// given, is told the key of the row of those tables ``prefetchDistance`` rows on, before
  /// `body` has each row: a body that looks each row up elsewhere fetches that row's place
  /// into the cache meanwhile.
  func forEachRow(
    in tables: [Int], ahead: ((Key) -> Void)? = nil,
    _ body: (Key, Kind, RowSlots) throws -> Void
  ) rethrows {
    let wanted = tables.reduce(UInt64(0)) { $0 | 1 << UInt64($1) }
    try slots.withUnsafeBufferPointer { slots in
      guard let first = slots.baseAddress else { return }
      try payloads.withUnsafeBufferPointer { payloads in
        for (position, entry) in entries.enumerated()
        where wanted & 1 << UInt64(entry.key.table) != 0 {
          if let ahead, position + Self.prefetchDistance < entries.count {
            let key = entries[position + Self.prefetchDistance].key
            if wanted & 1 << UInt64(key.table) != 0 { ahead(key) }
          }
          guard let kind = entry.kind else { continue }
          try body(
            entry.key, kind, RowSlots(base: first + position * Self.stride, payloads: payloads))
        }
      }
    }
  }

  /// Calls `body` with every row that differs and that `rank` gives a place, in the order of
  /// their places, then of their ids: what a writer that must visit tables in a set order, each
  /// in key order, asks for. The rows are ordered by their positions, not copied, so a row's
  /// values are counted as referenced once, while `body` has them.
  func forEach(
    orderedBy rank: (Key, Kind) -> Int?, _ body: (Key, Kind, Values, Values) throws -> Void
  ) rethrows {
    var order: [(rank: Int, id: Int64, position: Int)] = []
    order.reserveCapacity(count)
    for (position, entry) in entries.enumerated() {
      guard let kind = entry.kind, let place = rank(entry.key, kind) else { continue }
      order.append((place, entry.key.id, position))
    }
    order.sort { ($0.rank, $0.id) < ($1.rank, $1.id) }
    for (_, _, position) in order {
      let entry = entries[position]
      guard let kind = entry.kind else { continue }
      let base = position * Self.stride
      let values = slots[base..<base + Self.stride]
      try body(
        entry.key, kind, Values(slots: values, offset: 0), Values(slots: values, offset: 1))
    }
  }

  /// The change recorded for the row `key` names: its kind and old values (whose text and
  /// blobs are in these changes' ``payloads``); nil when these changes leave the row alone.
  func change(of key: Key) -> (kind: Kind, old: Values)? {
    guard let position = index.position(of: key), let kind = entries[position].kind else {
      return nil
    }
    let base = position * Self.stride
    return (kind, Values(slots: slots[base..<base + Self.stride], offset: 0))
  }

  /// Where `key`'s change keeps its old values: its kind and the position of its first slot
  /// in ``withOldSlots(_:)``'s buffer (column `c`'s old value at `base + 2 × c`); nil when no
  /// change of the row is left. For readers of many rows, which a ``Values`` each (a counted
  /// reference to the slots) made a third slower.
  func oldSlots(of key: Key) -> (kind: Kind, base: Int)? {
    guard let position = index.position(of: key), let kind = entries[position].kind else {
      return nil
    }
    return (kind, position * Self.stride + Self.oldSlot(0))
  }

  /// The rows of `table` that differ, in key order, each with its kind and the position of its
  /// first slot as ``oldSlots(of:)`` gives it: for a reader that meets the table's rows in key
  /// order and matches them in one walk, without a hashed lookup (and its cache miss) per row.
  func rowsInKeyOrder(of table: Int) -> [(id: Int64, kind: Kind, base: Int)] {
    var rows: [(id: Int64, kind: Kind, base: Int)] = []
    entries.withUnsafeBufferPointer { entries in
      for (position, entry) in entries.enumerated() where entry.key.table == table {
        guard let kind = entry.kind else { continue }
        rows.append((entry.key.id, kind, position * Self.stride + Self.oldSlot(0)))
      }
    }
    rows.sort { $0.id < $1.id }
    return rows
  }

  /// Calls `body` with every row that differs: its key and kind.
  func forEachKey(_ body: (Key, Kind) throws -> Void) rethrows {
    for entry in entries {
      if let kind = entry.kind { try body(entry.key, kind) }
    }
  }

  /// Calls `body` with the slots ``oldSlots(of:)`` points into.
  func withOldSlots<Result>(
    _ body: (UnsafeBufferPointer<Slot>) throws -> Result
  ) rethrows -> Result {
    try slots.withUnsafeBufferPointer(body)
  }

  /// The value a slot stands for (`nil` when absent).
  func value(_ slot: Slot) -> ChangeValue? { Self.value(slot, payloads: payloads) }

  /// The value a slot stands for, its text or blob found in `payloads` (a change's
  /// ``payloads``, or a buffer of them inside ``forEachRow(in:ahead:_:)``): what a reader of
  /// many rows keeps instead of a copy of the whole change, whose every array a copy counts a
  /// reference to.
  static func value<Payloads: RandomAccessCollection<ChangeValue>>(
    _ slot: Slot, payloads: Payloads
  ) -> ChangeValue? where Payloads.Index == Int {
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
        slots.swapAt(base + Self.oldSlot(column), base + Self.newSlot(column))
      }
      switch kind {
      case .insert: entries[position].kind = .delete
      case .delete: entries[position].kind = .insert
      case .update:
        // An update's old values carry the primary key; its new values do not.
        slots.swapAt(base + Self.oldSlot(0), base + Self.newSlot(0))
      }
    }
  }

  /// Adds the change of one row from `old` to `new` (all its columns, ``Schema/columns``
  /// order; `nil`, no row) in the shape a session records it: an update carries the primary
  /// key and the changed columns' old and new values. Nothing when the two are identical. The
  /// row must have no change here yet.
  mutating func record(_ key: Key, from old: [ChangeValue]?, to new: [ChangeValue]?) {
    var scratch = Array(repeating: Slot.absent, count: Self.stride)
    let kind: Kind
    switch (old, new) {
    case (nil, nil):
      return
    case (nil, let new?):
      kind = .insert
      for (column, value) in new.enumerated() { scratch[Self.width + column] = slot(value) }
    case (let old?, nil):
      kind = .delete
      for (column, value) in old.enumerated() { scratch[column] = slot(value) }
    case (let old?, let new?):
      let differing = (1..<old.count).filter { !old[$0].isIdentical(to: new[$0]) }
      guard !differing.isEmpty else { return }
      kind = .update
      scratch[0] = slot(old[0])
      for column in differing {
        scratch[column] = slot(old[column])
        scratch[Self.width + column] = slot(new[column])
      }
    }
    index.insert(key, at: entries.count)
    entries.append(Entry(key: key, kind: kind))
    appendSlots(scratch)
    count += 1
  }

  /// Adds `later`'s changes as happening after these.
  mutating func append(_ later: NetChanges) throws {
    // Its texts and blobs join ours at once, each of its slots' references moved past ours
    // (copied value by value, they cost a third of appending a checkout's half merge).
    let offset = UInt64(payloads.count)
    payloads.append(contentsOf: later.payloads)
    func moved(_ slot: Slot) -> Slot {
      slot.refersToPayload ? Slot(tag: slot.tag, bits: slot.bits + offset) : slot
    }
    try later.slots.withUnsafeBufferPointer { slots in
      try withUnsafeTemporaryAllocation(of: Slot.self, capacity: Self.stride) { scratch in
        for (position, entry) in later.entries.enumerated() {
          guard let kind = entry.kind else { continue }
          let base = position * Self.stride
          for column in 0..<Self.width {
            scratch[column] = moved(slots[base + Self.oldSlot(column)])
            scratch[Self.width + column] = moved(slots[base + Self.newSlot(column)])
          }
          try merge(entry.key, kind, UnsafeBufferPointer(scratch))
        }
      }
    }
  }

  var changedIDs: ChangedIDs {
    var changed = ChangedIDs()
    forEach { key, _, _, _ in
      switch key.table {
      case ClipRow.index, ClipDetailRow.index: changed.clips.insert(Clip.ID(key.id))
      case TrackRow.index:
        changed.tracks.insert(Track.ID(key.id))
        changed.trackOrder = true
      case SourceRow.index: changed.sources.insert(Source.ID(key.id))
      case EnvelopeRow.index: changed.tracks.insert(Track.ID(key.id))
      case EnvelopePointRow.index: changed.tracks.insert(EnvelopePointRow.track(ofPoint: key.id))
      case EffectRow.index, EffectAutomationRow.index, EffectFileRow.index: changed.effects = true
      case MarkerRow.index: changed.markers = true
      case TakeRow.index: changed.takes = true
      case TrackOutputRow.index: changed.tracks.insert(Track.ID(key.id))
      case SendRow.index: changed.sends = true
      case LaneRow.index:
        if let track = LaneRow.track(ofLane: key.id) {
          changed.tracks.insert(track)
        } else {
          changed.sends = true
        }
      case EffectSidechainRow.index: changed.effects = true
      default: changed.format = true
      }
    }
    return changed
  }

  /// Folds a later change of one row (`later`: its old values, then its new values) into what
  /// is recorded for it, keeping the oldest old values and the newest new ones, as
  /// `sqlite3changegroup` does. An update whose columns end where they started, and an insert
  /// later deleted, leave nothing.
  mutating func merge(_ key: Key, _ kind: Kind, _ later: UnsafeBufferPointer<Slot>) throws {
    try merge(key, kind, later, at: index.position(of: key))
  }

  /// Rows a decoder has read from one piece and not yet merged: each one's key, kind, and
  /// values in a scratch row of ``stride`` slots (old values, then new ones).
  struct Batch {
    static let capacity = 16
    let keys: UnsafeMutableBufferPointer<Key>
    let kinds: UnsafeMutableBufferPointer<Kind>
    let slots: UnsafeMutableBufferPointer<Slot>
    var count = 0

    /// The scratch row of the next row to read, cleared.
    func nextRow() -> UnsafeMutableBufferPointer<Slot> {
      let row = UnsafeMutableBufferPointer(
        rebasing: slots[count * NetChanges.stride..<(count + 1) * NetChanges.stride])
      row.update(repeating: .absent)
      return row
    }

    /// Counts in the row read into ``nextRow()``.
    mutating func append(_ key: Key, _ kind: Kind) {
      keys[count] = key
      kinds[count] = kind
      count += 1
    }

    var isFull: Bool { count == Self.capacity }
  }

  /// Calls `body` with an empty ``Batch`` on the stack.
  static func withBatch<Result>(_ body: (inout Batch) throws -> Result) rethrows -> Result {
    try withUnsafeTemporaryAllocation(of: Key.self, capacity: Batch.capacity) { keys in
      try withUnsafeTemporaryAllocation(of: Kind.self, capacity: Batch.capacity) { kinds in
        try withUnsafeTemporaryAllocation(of: Slot.self, capacity: Batch.capacity * stride) {
          var batch = Batch(keys: keys, kinds: kinds, slots: $0)
          return try body(&batch)
        }
      }
    }
  }

  /// Merges a batch's rows, as ``merge(_:_:_:)`` one after another, and empties it. First it
  /// asks for every row's index bucket, then for the entry and values of every row found,
  /// then merges: the rows' cache misses overlap instead of each stalling the merge in turn
  /// (a far checkout's merge waited on memory most of its time, by perf).
  mutating func merge(_ batch: inout Batch) throws {
    let count = batch.count
    batch.count = 0
    let keys = UnsafeBufferPointer(rebasing: batch.keys[0..<count])
    try withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { found in
      index.prefetch(keys)
      index.positions(of: keys, into: found)
      entries.withUnsafeBufferPointer { entries in
        slots.withUnsafeBufferPointer { slots in
          guard let entries = entries.baseAddress, let slots = slots.baseAddress else { return }
          for position in found where position >= 0 {
            tape_prefetch(entries + position)
            let row = UnsafeRawPointer(slots + position * Self.stride)
            for line in Swift.stride(from: 0, to: Self.stride * MemoryLayout<Slot>.stride, by: 64) {
              tape_prefetch(row + line)
            }
          }
        }
      }
      for row in 0..<count {
        let values = UnsafeBufferPointer(
          rebasing: batch.slots[row * Self.stride..<(row + 1) * Self.stride])
        // A row not found may have been added by one before it in this batch.
        let position = found[row] >= 0 ? found[row] : index.position(of: keys[row])
        try merge(keys[row], batch.kinds[row], values, at: position)
      }
    }
  }

  private mutating func merge(
    _ key: Key, _ kind: Kind, _ later: UnsafeBufferPointer<Slot>, at found: Int?
  ) throws {
    guard let position = found else {
      index.insert(key, at: entries.count)
      entries.append(Entry(key: key, kind: kind))
      appendSlots(later)
      count += 1
      return
    }
    let (width, base) = (Self.width, position * Self.stride)
    let payloads = payloads
    // Column c's old value is at old + 2c, its new value at new + 2c.
    let (old, new) = (base + Self.oldSlot(0), base + Self.newSlot(0))
    func isIdentical(_ a: Slot, _ b: Slot) -> Bool {
      // Equal as stored: reals by bit pattern (−0.0 is not 0.0), as SQLite's sessions compare.
      guard a.isPresent, a.tag == b.tag else { return false }
      return a.refersToPayload
        ? payloads[Int(a.bits)].isIdentical(to: payloads[Int(b.bits)]) : a.bits == b.bits
    }
    guard let earlier = entries[position].kind else {
      // The row's earlier changes cancelled out: this one stands alone.
      entries[position].kind = kind
      for column in 0..<width {
        slots[base + Self.oldSlot(column)] = later[column]
        slots[base + Self.newSlot(column)] = later[width + column]
      }
      count += 1
      return
    }
    let result: Kind? = try slots.withUnsafeMutableBufferPointer { slots in
      func changesAnyColumn() -> Bool {
        (1..<width).contains { slots[new + 2 * $0].isPresent }
      }
      var result: Kind? = earlier
      switch (earlier, kind) {
      case (.insert, .update):
        for column in 1..<width where later[width + column].isPresent {
          slots[new + 2 * column] = later[width + column]
        }
      case (.insert, .delete):
        result = nil
      case (.update, .update):
        var dropped = false
        for column in 1..<width where later[width + column].isPresent {
          if !slots[old + 2 * column].isPresent { slots[old + 2 * column] = later[column] }
          if isIdentical(slots[old + 2 * column], later[width + column]) {
            slots[old + 2 * column] = .absent
            slots[new + 2 * column] = .absent
            dropped = true
          } else {
            slots[new + 2 * column] = later[width + column]
          }
        }
        if dropped && !changesAnyColumn() { result = nil }
      case (.update, .delete):
        result = .delete
        for column in 0..<width {
          if !slots[old + 2 * column].isPresent { slots[old + 2 * column] = later[column] }
          slots[new + 2 * column] = .absent
        }
      case (.delete, .insert):
        result = .update
        for column in 1..<width {
          if isIdentical(slots[old + 2 * column], later[width + column]) {
            slots[old + 2 * column] = .absent
            slots[new + 2 * column] = .absent
          } else {
            slots[new + 2 * column] = later[width + column]
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
  mutating func slot(_ value: ChangeValue?) -> Slot {
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
  /// Equal as stored, as SQLite's sessions compare: reals by bit pattern (−0.0 is not 0.0), text
  /// by its bytes (Swift's `==` takes `é` and `e` + U+0301 for the same string; a file system
  /// and SQLite do not).
  func isIdentical(to other: ChangeValue) -> Bool {
    switch (self, other) {
    case (.real(let a), .real(let b)): return a.bitPattern == b.bitPattern
    case (.text(let a), .text(let b)): return a.utf8.elementsEqual(b.utf8)
    default: return self == other
    }
  }
}
