internal import CMemoryHints
import Foundation
internal import GRDB
import Synchronization
import Timeline

/// Writes the tracked tables: the one place their rows change, for an edit and for a history
/// move alike.
///
/// Both come here as row changes (``NetChanges``): a history move as the net change recorded
/// between two versions, an edit as the change ``changes(from:to:changed:)`` encodes from the
/// snapshot before it and the project after it (through ``TrackedRow``, the one layout of each
/// table).
///
/// Why not `sqlite3changeset_apply`: it runs `PRAGMA defer_foreign_keys`, and SQLite expires
/// every prepared statement after a flag pragma, so each undo recompiled every statement of
/// the connection; it also compiles its own statements on every call. Measured on a 10,000-clip
/// project, that was most of an undo's cost. Here each shape of change (table, kind, columns)
/// gets one cached statement, bound and stepped directly: a few µs per row.
///
/// How a change finds its row is ``Match``: a history move's exactly as recorded, an edit's by
/// its key.
enum RowWriter {
  /// How each change must find its row.
  enum Match {
    /// Exactly as recorded, the rule of applying with `SQLITE_CHANGESET_ABORT` (history moves):
    /// a DELETE or UPDATE matches the old values it carries, an INSERT finds no row; otherwise
    /// history and data have diverged and the whole transaction is abandoned with
    /// ``StoreError/historyDiverged``.
    case recorded
    /// By primary key (edits): an INSERT replaces a row with its key, an UPDATE sets the row
    /// with its key (which must be there), a DELETE removes it if it is there. Why not
    /// `recorded`: an edit's old values come from the snapshot, which reads a few stored forms
    /// normalized (a 0 dB master row as no row, as files made before that rule have it; an
    /// envelope's text in its canonical form), and an edit must not fail on them. The session
    /// still records the rows' real old values, so undo restores them as they were.
    case key
  }

  /// The row changes that take `held` to `new`, for the ids `changed` names (a superset is
  /// fine: a row that ends as it was is left out); with the tracks' stored positions after it
  /// and where each changed clip now is (or that it is gone), for the clip index.
  static func changes(
    from held: HeldProject, to new: Project, changed: ChangedIDs
  ) -> (
    rows: NetChanges, positions: [Track.ID: Int64], points: [Track.ID: [Int64]],
    placements: [(Clip.ID, ClipIndex.Change)]
  ) {
    let old = held.project
    var rows = NetChanges()
    func key(_ table: Int, _ id: Int64) -> NetChanges.Key { NetChanges.Key(table: table, id: id) }
    if changed.format {
      rows.record(
        key(ProjectRow.index, 1), from: ProjectRow.values(old), to: ProjectRow.values(new))
      rows.record(
        key(MasterRow.index, 1), from: MasterRow.values(old.masterGain),
        to: MasterRow.values(new.masterGain))
    }
    for id in changed.sources {
      rows.record(
        key(SourceRow.index, id.rawValue), from: old.source(id).map(SourceRow.values),
        to: new.source(id).map(SourceRow.values))
    }

    var positions = held.positions
    var points = held.points
    var tracks = changed.tracks
    if changed.trackOrder {
      for (index, track) in new.tracks.enumerated() where positions[track.id] != Int64(index) {
        positions[track.id] = Int64(index)
        tracks.insert(track.id)
      }
    }
    // In display order, so tracks added together get increasing positions.
    for track in new.tracks where tracks.contains(track.id) {
      let position = positions[track.id] ?? ((positions.values.max() ?? -1) + 1)
      positions[track.id] = position
    }
    let oldTracks =
      tracks.isEmpty ? [:] : Dictionary(uniqueKeysWithValues: old.tracks.map { ($0.id, $0) })
    let newTracks =
      tracks.isEmpty ? [:] : Dictionary(uniqueKeysWithValues: new.tracks.map { ($0.id, $0) })
    for id in tracks {
      let before = oldTracks[id]
      let after = newTracks[id]
      if after == nil { positions[id] = nil }
      rows.record(
        key(TrackRow.index, id.rawValue),
        from: before.map { TrackRow.values($0, position: held.positions[id] ?? 0) },
        to: after.map { TrackRow.values($0, position: positions[id] ?? 0) })
      rows.record(
        key(TrackOutputRow.index, id.rawValue), from: before.flatMap(TrackOutputRow.values),
        to: after.flatMap(TrackOutputRow.values))
      rows.record(
        key(LaneRow.index, LaneRow.id(id)), from: before.flatMap(LaneRow.values),
        to: after.flatMap(LaneRow.values))
      recordEnvelope(
        of: id, from: before?.envelope, to: after?.envelope, oldIDs: held.points[id],
        into: &rows, points: &points)
    }

    if changed.effects {
      let before = Dictionary(uniqueKeysWithValues: old.allEffects.map { ($0.effect.id, $0) })
      let after = Dictionary(uniqueKeysWithValues: new.allEffects.map { ($0.effect.id, $0) })
      for id in Set(before.keys).union(after.keys).sorted() {
        rows.record(
          key(EffectRow.index, id.rawValue),
          from: before[id].map { EffectRow.values($0.effect, owner: $0.owner, position: $0.index) },
          to: after[id].map { EffectRow.values($0.effect, owner: $0.owner, position: $0.index) })
        rows.record(
          key(EffectSidechainRow.index, id.rawValue),
          from: before[id].flatMap { EffectSidechainRow.values($0.effect) },
          to: after[id].flatMap { EffectSidechainRow.values($0.effect) })
        rows.record(
          key(EffectAutomationRow.index, id.rawValue),
          from: before[id].flatMap { EffectAutomationRow.values($0.effect) },
          to: after[id].flatMap { EffectAutomationRow.values($0.effect) })
        let (was, now) = (
          before[id].map { EffectFileRow.values($0.effect) } ?? [:],
          after[id].map { EffectFileRow.values($0.effect) } ?? [:]
        )
        for file in Set(was.keys).union(now.keys).sorted() {
          rows.record(key(EffectFileRow.index, file), from: was[file], to: now[file])
        }
      }
    }

    if changed.sends {
      let before = Dictionary(uniqueKeysWithValues: old.sends.map { ($0.id, $0) })
      let after = Dictionary(uniqueKeysWithValues: new.sends.map { ($0.id, $0) })
      for id in Set(before.keys).union(after.keys).sorted() {
        rows.record(
          key(SendRow.index, id.rawValue), from: before[id].map(SendRow.values),
          to: after[id].map(SendRow.values))
        rows.record(
          key(LaneRow.index, LaneRow.id(id)), from: before[id].flatMap(LaneRow.values),
          to: after[id].flatMap(LaneRow.values))
      }
    }

    if changed.markers {
      let before = Dictionary(uniqueKeysWithValues: old.markers.map { ($0.id, $0) })
      let after = Dictionary(uniqueKeysWithValues: new.markers.map { ($0.id, $0) })
      for id in Set(before.keys).union(after.keys).sorted() {
        rows.record(
          key(MarkerRow.index, id.rawValue), from: before[id].map(MarkerRow.values),
          to: after[id].map(MarkerRow.values))
      }
    }

    if changed.takes {
      let before = Dictionary(uniqueKeysWithValues: old.takes.map { ($0.id, $0) })
      let after = Dictionary(uniqueKeysWithValues: new.takes.map { ($0.id, $0) })
      for id in Set(before.keys).union(after.keys).sorted() {
        rows.record(
          key(TakeRow.index, id.rawValue), from: before[id].map(TakeRow.values),
          to: after[id].map(TakeRow.values))
      }
    }

    var placements: [(Clip.ID, ClipIndex.Change)] = []
    let (was, placed) = (old.locate(changed.clips), new.locate(changed.clips))
    for id in changed.clips {
      rows.record(
        key(ClipRow.index, id.rawValue),
        from: was[id].map { ClipRow.values($0.clip, on: $0.track) },
        to: placed[id].map { ClipRow.values($0.clip, on: $0.track) })
      rows.record(
        key(ClipDetailRow.index, id.rawValue),
        from: was[id].flatMap { ClipDetailRow.values($0.clip) },
        to: placed[id].flatMap { ClipDetailRow.values($0.clip) })
      placements.append((id, placed[id].map { .placed($0.clip, on: $0.track) } ?? .removed))
    }
    return (rows, positions, points, placements)
  }

  /// The rows that take a track's envelope from `old` to `new`: point rows
  /// (``EnvelopePointRow``) keeping the ids of the points that stay (`oldIDs`, nil when the
  /// track has no point rows), so that only the points that changed are written. A track whose
  /// envelope is still one text row (``EnvelopeRow``, from before point rows) keeps it until the
  /// envelope changes; then the row goes and points replace it.
  private static func recordEnvelope(
    of track: Track.ID, from old: Envelope?, to new: Envelope?, oldIDs: [Int64]?,
    into rows: inout NetChanges, points: inout [Track.ID: [Int64]]
  ) {
    guard old != new || (old.map { $0.storageText } != new.map { $0.storageText }) else { return }
    if oldIDs == nil, let old {
      rows.record(
        NetChanges.Key(table: EnvelopeRow.index, id: track.rawValue),
        from: EnvelopeRow.values(old, of: track), to: nil)
    }
    let oldPoints = oldIDs == nil ? [] : old?.points ?? []
    let newIDs = EnvelopePointRow.ids(
      for: new?.points ?? [], replacing: oldPoints, oldIDs: oldIDs ?? [], of: track)
    let before = EnvelopePointRow.values(
      Envelope(points: oldPoints), ids: oldIDs ?? [], of: track)
    let after = EnvelopePointRow.values(
      Envelope(points: new?.points ?? []), ids: newIDs, of: track)
    for id in Set(before.keys).union(after.keys).sorted() {
      rows.record(
        NetChanges.Key(table: EnvelopePointRow.index, id: id), from: before[id], to: after[id])
    }
    points[track] = newIDs.isEmpty ? nil : newIDs
  }

  /// Writes `netChanges`, each change finding its row as `match` says. A change the schema
  /// refuses is ``StoreError/historyDiverged`` for a history move, an internal failure (with
  /// SQLite's message) for an edit, which `Project`'s validation should have refused first.
  static func apply(_ netChanges: NetChanges, match: Match, _ db: Database) throws {
    _ = try write(netChanges, match: match, recording: false, db)
  }

  /// Checks, writing nothing, that every row `netChanges` changes holds what a history move
  /// must find there (``Match/recorded``): an update's or a delete's old values, no row for an
  /// insert. Where `pending` (changes not yet written to the rows, ``PendingMove``) also
  /// changes the row, the row holds what `pending` found: no row if `pending` inserts it;
  /// otherwise each column `pending` recorded as `pending` found it, and each other column
  /// that `netChanges` recorded as `netChanges` found it (`pending` left it alone). A row that
  /// does not is ``StoreError/historyDiverged``. What a deferred move reads instead of writing
  /// each row.
  ///
  /// Each row is looked up by key, with the statement a write would match it with; a table
  /// most of whose rows the change covers (a checkout of every clip) is read once in key order
  /// instead, each row compared in memory (about a third of a lookup's cost) and looked up only
  /// where the comparison cannot tell.
  static func check(_ netChanges: NetChanges, under pending: NetChanges?, _ db: Database) throws {
    if netChanges.isEmpty { return }
    let checker = try RowChecker(db, connection(db))
    // Text and blobs by position, read without copying either change per row.
    let own = netChanges.payloads
    let earlier = pending?.payloads ?? []
    func expectation(
      _ key: NetChanges.Key, _ kind: NetChanges.Kind, _ old: NetChanges.Values
    ) -> Expectation {
      guard let pending, let change = pending.change(of: key) else {
        return Expectation(absent: kind == .insert, first: old, firstIsPending: false, then: nil)
      }
      return Expectation(
        absent: change.kind == .insert, first: change.old, firstIsPending: true,
        then: kind == .insert ? nil : old)
    }
    let tables = Schema.trackedTables.count
    var (changes, present) = (
      [Int](repeating: 0, count: tables), [Int](repeating: 0, count: tables)
    )
    netChanges.forEachKey { key, kind in
      changes[key.table] += 1
      let absent = pending?.change(of: key).map { $0.kind == .insert } ?? (kind == .insert)
      if !absent { present[key.table] += 1 }
    }
    var scanned = [Bool](repeating: false, count: tables)
    for table in 0..<tables where changes[table] >= scanFrom {
      let rows =
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(Schema.trackedTables[table])") ?? 0
      guard changes[table] * 4 >= rows else { continue }
      scanned[table] = true
      var matched = 0
      let columns = Schema.trackedColumns[table].count
      // Each row's expectation read from the two changes' slots in place: no values made per
      // row (as ``Expectation`` does for a row looked up by key). The scan meets the rows in
      // key order and the changes' rows of the table are walked in the same order beside it:
      // a hashed lookup per row missed the cache, most of the scan's time.
      var (ownRows, next) = (netChanges.rowsInKeyOrder(of: table), 0)
      var (pendingRows, nextPending) = (pending?.rowsInKeyOrder(of: table) ?? [], 0)
      try netChanges.withOldSlots { ownSlots in
        try (pending ?? NetChanges()).withOldSlots { pendingSlots in
          try checker.scan(table) { key, row in
            while next < ownRows.count && ownRows[next].id < key.id { next += 1 }
            guard next < ownRows.count, ownRows[next].id == key.id else { return }
            let (kind, base) = (ownRows[next].kind, ownRows[next].base)
            // The values of a row a few on, which are anywhere in the change.
            let ahead = next + NetChanges.prefetchDistance
            if ahead < ownRows.count, let first = ownSlots.baseAddress {
              let values = UnsafeRawPointer(first + ownRows[ahead].base)
              for line in stride(from: 0, to: 2 * columns * MemoryLayout<Slot>.stride, by: 64) {
                tape_prefetch(values + line)
              }
            }
            while nextPending < pendingRows.count && pendingRows[nextPending].id < key.id {
              nextPending += 1
            }
            let under =
              nextPending < pendingRows.count && pendingRows[nextPending].id == key.id
              ? (kind: pendingRows[nextPending].kind, base: pendingRows[nextPending].base) : nil
            if let under {
              guard under.kind != .insert else { throw StoreError.historyDiverged }
            } else {
              guard kind != .insert else { throw StoreError.historyDiverged }
            }
            for column in 1..<columns {
              let slot: Slot
              let fromPending: Bool
              if let under, pendingSlots[under.base + 2 * column].isPresent {
                (slot, fromPending) = (pendingSlots[under.base + 2 * column], true)
              } else if under == nil || kind != .insert, ownSlots[base + 2 * column].isPresent {
                (slot, fromPending) = (ownSlots[base + 2 * column], false)
              } else {
                continue
              }
              // A number is compared without the payloads: passing either array makes a copy
              // (a reference count taken and dropped per column), which the thread building
              // the snapshot from the same change fought over.
              let holds =
                slot.refersToPayload
                ? row.holds(Int32(column), slot: slot, payloads: fromPending ? earlier : own)
                : row.holds(Int32(column), slot: slot, payloads: [])
              guard holds else {
                // SQLite, by key, has the last word (it converts by the column's affinity).
                if let change = netChanges.change(of: key) {
                  try checker.check(
                    key, expectation(key, change.kind, change.old), own: own, pending: earlier)
                }
                break
              }
            }
            matched += 1
          }
        }
      }
      // A row the change expects and the table lacks.
      guard matched == present[table] else { throw StoreError.historyDiverged }
    }
    try netChanges.forEach(orderedBy: { key, _ in scanned[key.table] ? nil : key.table }) {
      key, kind, old, _ in
      try checker.check(key, expectation(key, kind, old), own: own, pending: earlier)
    }
  }

  /// What ``check(_:under:_:)`` expects of a row: none, or a value for each column that
  /// `first` (the pending change's old values, or the checked change's own) or else `then`
  /// (the checked change's, under a pending one) recorded.
  private struct Expectation {
    let absent: Bool
    let first: NetChanges.Values
    let firstIsPending: Bool
    let then: NetChanges.Values?

    /// The columns compared (bit 0, the key, always).
    var mask: UInt64 {
      absent ? 1 : first.presentColumns | (then?.presentColumns ?? 0) | 1
    }

    /// The slot expected in `column`, and whether it is the pending change's; nil when
    /// neither change recorded it.
    func slot(_ column: Int) -> (Slot, fromPending: Bool)? {
      if first[column].isPresent { return (first[column], firstIsPending) }
      guard let then, then[column].isPresent else { return nil }
      return (then[column], false)
    }

    /// The value expected in `column`, its text or blob found in `own` (the checked change's
    /// payloads) or `pending`'s; nil when neither change recorded it.
    func value(_ column: Int, own: [ChangeValue], pending: [ChangeValue]) -> ChangeValue? {
      slot(column).flatMap { NetChanges.value($0.0, payloads: $0.fromPending ? pending : own) }
    }
  }

  /// From how many changes of one table ``check(_:under:_:)`` counts its rows, to read it
  /// whole when the changes cover a quarter of them or more.
  static let scanFrom = 4_096

  /// Reads rows for ``check(_:under:_:)``: by key, one cached statement per shape of
  /// comparison, or a table whole.
  private final class RowChecker {
    let db: Database
    let connection: SQLiteHandle
    var statements: [CheckShape: Statement] = [:]
    var arguments: [ChangeValue] = []

    init(_ db: Database, _ connection: SQLiteHandle) {
      self.db = db
      self.connection = connection
    }

    /// Throws ``StoreError/historyDiverged`` unless the row `key` names holds what `expected`
    /// says.
    func check(
      _ key: NetChanges.Key, _ expected: Expectation, own: [ChangeValue], pending: [ChangeValue]
    ) throws {
      let shape = CheckShape(table: key.table, mask: expected.mask, absent: expected.absent)
      let statement = try RowWriter.statement(
        for: shape, in: &statements, texts: RowWriter.checkTexts, db
      ) { $0.sql }
      arguments.removeAll(keepingCapacity: true)
      if shape.absent {
        arguments.append(.integer(key.id))
      } else {
        for column in 0..<Schema.trackedColumns[key.table].count
        where shape.mask & (1 << column) != 0 {
          arguments.append(
            column == 0
              ? .integer(key.id) : expected.value(column, own: own, pending: pending) ?? .null)
        }
      }
      var found = 0
      try RawStatement.query(statement.sqliteStatement, on: connection, binding: arguments) {
        _ in found += 1
      }
      guard found == (shape.absent ? 0 : 1) else { throw StoreError.historyDiverged }
    }

    /// Calls `body` with every row of `table`, in key order.
    func scan(
      _ table: Int, _ body: (NetChanges.Key, RawStatement.ResultRow) throws -> Void
    ) throws {
      // In key order (the integer primary key is the row id: no sort).
      let columns = Schema.trackedColumns[table]
      let statement = try db.cachedStatement(
        sql:
          "SELECT \(columns.joined(separator: ", ")) FROM \(Schema.trackedTables[table]) ORDER BY \(columns[0])"
      )
      try RawStatement.query(statement.sqliteStatement, on: connection) { row in
        try body(NetChanges.Key(table: table, id: row.int64(0)), row)
      }
    }
  }

  /// What a check's statement depends on: its table, the columns it compares, and whether it
  /// expects no row.
  private struct CheckShape: Hashable {
    let table: Int
    let mask: UInt64
    let absent: Bool

    var sql: String {
      "SELECT 1 FROM \(Schema.trackedTables[table]) WHERE \(RowWriter.condition(table, mask))"
    }
  }

  /// Writes an edit's `netChanges` by key (``Match/key``) and returns what the file's rows
  /// did: each written row's stored values before and after, in the shape SQLite's session
  /// extension records them (an update carries the key and the columns that changed; a row
  /// that ends as it was, or a delete that found nothing, is not there). So undo restores
  /// what the file held, also where the snapshot reads a stored form normalized.
  ///
  /// Why not always a session (`sqlite3session_create`, `_attach` and `_changeset` around the
  /// writes, as every commit did until now): a new session looks up each table it records
  /// anew, about 110 µs of a one-clip edit's 240 µs of CPU at 100,000 clips (measured here),
  /// while reading each written row by key before and after costs a few µs. Past
  /// ``sessionAbove`` rows the session costs less (a ripple cut of 5,000 clips took 2 ms more
  /// with the reads), so large edits still record through one. `RowWriterTests` checks the
  /// reads against a session's record.
  static func applyRecording(
    _ netChanges: NetChanges, sessionAbove: Int = sessionAbove, _ db: Database
  ) throws -> NetChanges {
    guard netChanges.count > sessionAbove else {
      return try write(netChanges, match: .key, recording: true, db)
    }
    let changeset = try SessionCalls.capture(on: connection(db), tables: Schema.trackedTables) {
      _ = try write(netChanges, match: .key, recording: false, db)
    }
    var recorded = NetChanges()
    try recorded.append(changeset: changeset)
    return recorded
  }

  /// How many rows an edit writes before a session records them for less than reading each.
  static let sessionAbove = 256

  private static func write(
    _ netChanges: NetChanges, match: Match, recording: Bool, _ db: Database
  ) throws -> NetChanges {
    var recorded = NetChanges()
    if netChanges.isEmpty { return recorded }
    let connection = try connection(db)
    var statements: [Shape: Statement] = [:]
    var readers: [Int: Statement] = [:]
    var arguments: [ChangeValue] = []
    // Step by step, each step by key: the same rows in the same order on every run, and each
    // table's b-tree walked forward.
    try netChanges.forEach(orderedBy: { key, kind in steps[key.table][Int(kind.rawValue)] }) {
      key, kind, old, new in
      let change = Change(key: key, kind: kind, old: old, new: new)
      let shape = Shape(change, match: match)
      let statement = try Self.statement(
        for: shape, in: &statements, texts: writeTexts, db
      ) { $0.sql }
      let before =
        recording ? try storedRow(change.key, readers: &readers, connection, db) : nil
      shape.arguments(change, from: netChanges, into: &arguments)
      let changed: Int
      do {
        changed = try RawStatement.execute(
          statement.sqliteStatement, on: connection, binding: arguments)
      } catch let failure as RawStatement.ConstraintFailure {
        guard match == .key else { throw StoreError.historyDiverged }
        throw StoreError.internalFailure(
          "the project file refused an edit of \(Schema.trackedTables[change.key.table]): "
            + failure.message)
      }
      guard changed == 1 || (match == .key && change.kind == .delete) else {
        throw StoreError.historyDiverged
      }
      if recording {
        recorded.record(
          change.key, from: before,
          to: try storedRow(change.key, readers: &readers, connection, db))
      }
    }
    return recorded
  }

  /// The `WHERE` condition that finds a row by the columns `mask` names of `table` (bit 0 the
  /// key), one `?` each: `IS`, so that a recorded NULL matches a NULL. A history move's write
  /// and the check that stands in for it match rows by the same condition.
  private static func condition(_ table: Int, _ mask: UInt64) -> String {
    let columns = Schema.trackedColumns[table]
    return columns.indices.filter { mask & (1 << $0) != 0 }.map { "\(columns[$0]) IS ?" }
      .joined(separator: " AND ")
  }

  /// The statement for `shape`, from `cache` when a change of that shape came before: its SQL
  /// is built once per write or check, not once per row, and its text once per process
  /// (`texts`; an undo writes one row, and building its text was a fortieth of its CPU time).
  private static func statement<Key: Hashable & Sendable>(
    for shape: Key, in cache: inout [Key: Statement], texts: borrowing Mutex<[Key: String]>,
    _ db: Database, sql: (Key) -> String
  ) throws -> Statement {
    if let cached = cache[shape] { return cached }
    let text =
      texts.withLock { $0[shape] }
      ?? {
        let text = sql(shape)
        texts.withLock { $0[shape] = text }
        return text
      }()
    let statement = try db.cachedStatement(sql: text)
    cache[shape] = statement
    return statement
  }

  private static let writeTexts = Mutex<[Shape: String]>([:])
  private static let checkTexts = Mutex<[CheckShape: String]>([:])

  /// Every column of the row `key` names as the file stores it (after the column's
  /// affinity), in ``Schema/columns`` order; nil when there is no such row.
  private static func storedRow(
    _ key: NetChanges.Key, readers: inout [Int: Statement], _ connection: SQLiteHandle,
    _ db: Database
  ) throws -> [ChangeValue]? {
    let statement: Statement
    if let cached = readers[key.table] {
      statement = cached
    } else {
      let columns = Schema.trackedColumns[key.table]
      statement = try db.cachedStatement(
        sql:
          "SELECT \(columns.joined(separator: ", ")) FROM \(Schema.trackedTables[key.table]) WHERE \(columns[0]) = ?"
      )
      readers[key.table] = statement
    }
    return try RawStatement.first(
      statement.sqliteStatement, on: connection, binding: [.integer(key.id)]
    ) { row in
      (0..<Schema.trackedColumns[key.table].count).map { row.value($0) ?? .null }
    }
  }

  /// The order changes are written in. Foreign keys are checked per statement: parents are
  /// written before the rows that point at them, and removed after.
  private static let order: [(String, NetChanges.Kind?)] = [
    (Schema.projectTable, nil), (Schema.masterTable, nil), (Schema.markerTable, nil),
    (Schema.sourceTable, .insert), (Schema.sourceTable, .update),
    (Schema.trackTable, .insert), (Schema.trackTable, .update),
    (Schema.envelopeTable, .insert), (Schema.envelopeTable, .update),
    (Schema.envelopePointTable, .insert), (Schema.envelopePointTable, .update),
    (Schema.effectTable, .insert), (Schema.effectTable, .update),
    (Schema.effectFileTable, .insert), (Schema.effectFileTable, .update),
    (Schema.trackOutputTable, .insert), (Schema.trackOutputTable, .update),
    (Schema.sendTable, .insert), (Schema.sendTable, .update),
    (Schema.laneTable, .insert), (Schema.laneTable, .update),
    (Schema.takeTable, .insert), (Schema.takeTable, .update),
    (Schema.effectSidechainTable, .insert), (Schema.effectSidechainTable, .update),
    (Schema.effectAutomationTable, .insert), (Schema.effectAutomationTable, .update),
    (Schema.clipDetailTable, .delete),
    (Schema.clipTable, .delete), (Schema.clipTable, .update), (Schema.clipTable, .insert),
    (Schema.clipDetailTable, .insert), (Schema.clipDetailTable, .update),
    (Schema.envelopeTable, .delete), (Schema.envelopePointTable, .delete),
    (Schema.effectSidechainTable, .delete),
    (Schema.effectAutomationTable, .delete),
    (Schema.laneTable, .delete), (Schema.takeTable, .delete),
    (Schema.effectFileTable, .delete),
    (Schema.effectTable, .delete), (Schema.trackOutputTable, .delete), (Schema.sendTable, .delete),
    (Schema.trackTable, .delete), (Schema.sourceTable, .delete),
  ]

  /// The step of each (table, kind) in ``order``, by table index and the kind's raw value
  /// (made once, not on every write).
  private static let steps: [[Int?]] = {
    var steps = Array(
      repeating: [Int?](repeating: nil, count: 4), count: Schema.trackedTables.count)
    for (step, (table, kind)) in order.enumerated() {
      guard let table = Schema.trackedTables.firstIndex(of: table) else { continue }
      for each in [NetChanges.Kind.insert, .update, .delete] where kind == nil || kind == each {
        steps[table][Int(each.rawValue)] = step
      }
    }
    return steps
  }()

  private struct Change {
    let key: NetChanges.Key
    let kind: NetChanges.Kind
    let old: NetChanges.Values
    let new: NetChanges.Values
  }

  /// What a change's statement depends on: its table, kind, and which columns it carries.
  private struct Shape: Hashable {
    let table: Int
    let kind: NetChanges.Kind
    let match: Match
    let oldMask: UInt64
    let newMask: UInt64

    init(_ change: Change, match: Match) {
      table = change.key.table
      kind = change.kind
      self.match = match
      oldMask = kind == .insert ? 0 : match == .key ? 1 : change.old.presentColumns
      newMask = kind == .delete ? 0 : change.new.presentColumns & ~1
    }

    private var columns: [String] { Schema.trackedColumns[table] }

    private func names(_ mask: UInt64) -> [String] {
      columns.indices.filter { mask & (1 << $0) != 0 }.map { columns[$0] }
    }

    var sql: String {
      let condition = RowWriter.condition(table, oldMask)
      let table = Schema.trackedTables[table]
      switch kind {
      case .insert:
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let insert =
          "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
        guard match == .key, let key = columns.first else { return insert }
        let assignments = columns.dropFirst().map { "\($0) = excluded.\($0)" }
        return insert + " ON CONFLICT(\(key)) DO UPDATE SET " + assignments.joined(separator: ", ")
      case .delete:
        return "DELETE FROM \(table) WHERE \(condition)"
      case .update:
        let assignments = names(newMask).map { "\($0) = ?" }.joined(separator: ", ")
        return "UPDATE \(table) SET \(assignments) WHERE \(condition)"
      }
    }

    /// The values to bind, in the order of ``sql``'s placeholders.
    func arguments(
      _ change: Change, from changes: NetChanges, into arguments: inout [ChangeValue]
    ) {
      func append(_ mask: UInt64, _ values: NetChanges.Values) {
        for column in columns.indices where mask & (1 << column) != 0 {
          if let value = changes.value(values[column]) { arguments.append(value) }
        }
      }
      arguments.removeAll(keepingCapacity: true)
      switch kind {
      case .insert:
        for column in columns.indices {
          arguments.append(changes.value(change.new[column]) ?? .null)
        }
      case .delete:
        append(oldMask, change.old)
      case .update:
        append(newMask, change.new)
        append(oldMask, change.old)
      }
    }
  }
}
