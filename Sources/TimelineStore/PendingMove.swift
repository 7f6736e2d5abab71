import Foundation
internal import GRDB

/// A large history move's net change, kept in one row instead of written to each row it
/// changes, and written there ("folded") later.
///
/// Why: a checkout of 2,300 clips wrote 2,300 rows spread over about 1,200 of the clip table's
/// pages (4–7 ms of writes, then a 5 MB log write and its sync); a checkout of every clip wrote
/// 100,000 rows one statement each (deletes and inserts 0.3–0.8 s). Kept as one row (the
/// compact encoding of ``NetChanges``, about 24 bytes a changed row), the move writes a few
/// pages, and a move back toward what the rows hold composes with it and writes less still
/// (there and back again writes nothing but the head).
///
/// The rule: while the row exists, the tracked tables hold the project at version `base`, and
/// `changes` is the net change from it to the head. So:
/// - a whole read of the project (``SnapshotReader/load(_:clips:)``) applies it after the rows;
/// - a history move composes its own change with it (``TimelineStore``'s `move`);
/// - every other write (an edit, a scoped edit, a prune) folds it first, in the write's own
///   transaction, so an edit reads and writes rows that hold the head, as always; closing a
///   store folds it too, so a file that no process holds open has none (unless one was
///   stopped);
/// - `changes` is what history says between `base` and the head, so a damaged `changes` is
///   made again from history (``VersionGraph/pathChanges(from:to:blocks:_:)``), and
///   ``TimelineStore/verify()`` compares the two.
///
/// A move made while a change is pending composes its own change with it. Writing the whole
/// composed change again cost a small move after a far one 20–50 ms (a 100,000-row change
/// encoded and written, megabytes to the log); so the moves made since the row was written are
/// kept composed in a second row (`pending_move_tail`), written alone while they stay small
/// beside the first (``tailShare``): the pending change is the row's change followed by the
/// tail's. A larger step writes the whole change again and removes the tail.
///
/// A move still refuses rows edited behind Tape's back (``StoreError/historyDiverged``) before
/// it returns: it reads each row its change covers (``RowWriter/check(_:under:_:)``) where it
/// used to write it. A row edited behind Tape's back after the move is found when the change is
/// folded, which then fails and changes nothing, as an undo over such a row does.
enum PendingMove {
  /// A pending change as read or written, with its row's stamp: the version the rows hold and
  /// the head's revision when the row was written. A store keeps the one its last move wrote,
  /// so that the next move or edit does not decode it again; the stamp tells whether the row
  /// is still that one (every write of the row comes with a new head revision).
  struct Kept: Sendable {
    let base: Int64
    var revision: Int64
    /// The whole pending change: the row's, then the tail's.
    var changes: NetChanges
    /// The project at `base`, as the store that made the change pending held it before its
    /// move: a move back there takes it instead of applying the change turned around (100,000
    /// clips built again in memory). Nil when the change was read from the file.
    var baseSnapshot: HeldProject? = nil
    /// How many rows the change stored in the pending row holds (0 when it was made again
    /// from history: the next move writes it whole), and the moves' change stored after it.
    var stored = 0
    var tail = NetChanges()

    /// Adds a move's change `step` (made from the head, which is now at `revision`) and
    /// stores the result: in the tail alone while the tail stays under ``tailShare`` of the
    /// row's change, else whole. An empty result removes the pending change (the head is back
    /// at `base`), and the store keeps none.
    mutating func write(adding step: NetChanges, revision: Int64, _ db: Database) throws {
      // In place: the caller took the only reference.
      try changes.append(step)
      self.revision = revision
      if changes.isEmpty {
        try PendingMove.remove(db)
        (stored, tail) = (0, NetChanges())
        return
      }
      var longer = tail
      try longer.append(step)
      guard stored > 0, longer.count * PendingMove.tailShare <= stored else {
        try PendingMove.writeRow(changes, base: base, revision: revision, db)
        (stored, tail) = (changes.count, NetChanges())
        return
      }
      // Written also when the moves since cancel out: its revision is the stamp's.
      try db.execute(
        sql:
          "INSERT OR REPLACE INTO \(Schema.pendingTailTable) (id, revision, changes) VALUES (1, ?, ?)",
        arguments: [revision, longer.encoded()])
      tail = longer
    }
  }

  /// The most a tail may hold, as a share of the row's change: 1 / 8. A step past it writes
  /// the whole change again (which a tail of that size costs an eighth of to encode).
  static let tailShare = 8

  /// The pending change: the version the tracked tables hold and the net change from it to
  /// the head; nil when they hold the head (always, in a file made before the table existed).
  /// `kept` when the row is still the one it was read from. A `changes` that cannot be read is
  /// made again from history (with `blocks`, the spans of the file's history blocks when the
  /// caller knows them).
  static func read(
    _ db: Database, blocks: HistoryBlocks = HistoryBlocks(spans: []), kept: Kept? = nil
  ) throws -> Kept? {
    guard let (base, revision) = try stamp(db) else { return nil }
    if let kept, kept.base == base, kept.revision == revision { return kept }
    if let (stored, tail) = try storedChanges(db) {
      var changes = stored
      do {
        try changes.append(tail)
        return Kept(
          base: base, revision: revision, changes: changes, stored: stored.count, tail: tail)
      } catch StoreError.corrupt {
        // A tail that does not follow the row: made again from history, as a damaged row.
      }
    }
    return Kept(
      base: base, revision: revision, changes: try fromHistory(base: base, blocks: blocks, db))
  }

  /// Whether a change is pending (without reading it).
  static func exists(_ db: Database) throws -> Bool { try stamp(db) != nil }

  /// Stores `changes` as the pending change from `base`, written with the head's `revision`
  /// (none when it is empty); returns it as kept.
  @discardableResult
  static func write(
    _ changes: NetChanges, base: Int64, revision: Int64, baseSnapshot: HeldProject? = nil,
    _ db: Database
  ) throws -> Kept? {
    if changes.isEmpty {
      try remove(db)
      return nil
    }
    try writeRow(changes, base: base, revision: revision, db)
    return Kept(
      base: base, revision: revision, changes: changes, baseSnapshot: baseSnapshot,
      stored: changes.count)
  }

  /// Stores `changes` whole in the pending row, without a tail.
  private static func writeRow(
    _ changes: NetChanges, base: Int64, revision: Int64, _ db: Database
  ) throws {
    try db.execute(
      sql: """
        INSERT OR REPLACE INTO \(Schema.pendingMoveTable) (id, base, revision, changes)
        VALUES (1, ?, ?, ?)
        """,
      arguments: [base, revision, changes.encoded()])
    try removeTail(db)
  }

  /// Removes the pending change: its row and its tail.
  private static func remove(_ db: Database) throws {
    try db.execute(sql: "DELETE FROM \(Schema.pendingMoveTable)")
    try removeTail(db)
  }

  private static func removeTail(_ db: Database) throws {
    // A file opened for reading and never upgraded has no tail table; one opened for writing
    // has been upgraded before any write.
    try db.execute(sql: "DELETE FROM \(Schema.pendingTailTable)")
  }

  /// Writes the pending change to the tracked tables, each row as a history move writes it
  /// (``RowWriter/Match/recorded``), and removes it: afterwards the tables hold the head.
  /// Returns whether there was one.
  @discardableResult
  static func fold(_ db: Database, blocks: HistoryBlocks, kept: Kept? = nil) throws -> Bool {
    guard let pending = try read(db, blocks: blocks, kept: kept) else { return false }
    try RowWriter.apply(pending.changes, match: .recorded, db)
    try remove(db)
    return true
  }

  /// What ``TimelineStore/verify()`` reports of it: how many rows it changes (0 when there
  /// is none), and whether its stored change can be read, equals what history says between
  /// its base and the head, and finds the rows it covers as it expects.
  static func verify(_ db: Database, blocks: HistoryBlocks) throws -> (rows: Int, matches: Bool) {
    guard let (base, _) = try stamp(db) else { return (0, true) }
    let recorded: NetChanges
    do {
      recorded = try fromHistory(base: base, blocks: blocks, db)
    } catch StoreError.corrupt {
      return (0, false)
    }
    guard let (row, tail) = try storedChanges(db) else { return (recorded.count, false) }
    var changes = row
    do {
      try changes.append(tail)
    } catch StoreError.corrupt {
      return (recorded.count, false)
    }
    guard changes.rows == recorded.rows else { return (recorded.count, false) }
    do {
      try RowWriter.check(recorded, under: nil, db)
      return (recorded.count, true)
    } catch StoreError.historyDiverged {
      return (recorded.count, false)
    }
  }

  /// The row's stamp: its base version and the head's revision when it was written.
  private static func stamp(_ db: Database) throws -> (base: Int64, revision: Int64)? {
    // Every move and edit asks: the statement is prepared once per connection, and the table
    // looked for only when it cannot be (asking GRDB first costs a read of the schema in every
    // transaction, about 40 µs of an undo's 400).
    let statement: Statement
    do {
      statement = try db.cachedStatement(
        sql: "SELECT base, revision FROM \(Schema.pendingMoveTable) WHERE id = 1")
    } catch {
      // A file made before the table (read as it is, not upgraded) has no pending move.
      guard try !db.tableExists(Schema.pendingMoveTable) else { throw error }
      return nil
    }
    guard
      let (base, revision) = try RawStatement.first(
        statement.sqliteStatement, on: connection(db),
        { row in
          (
            try row.integer(0, "base", of: Schema.pendingMoveTable),
            try row.integer(1, "revision", of: Schema.pendingMoveTable)
          )
        })
    else { return nil }
    // The tail's revision is the head's when the last move wrote the tail alone.
    let tailStatement: Statement
    do {
      tailStatement = try db.cachedStatement(
        sql: "SELECT revision FROM \(Schema.pendingTailTable) WHERE id = 1")
    } catch {
      guard try !db.tableExists(Schema.pendingTailTable) else { throw error }
      return (base, revision)
    }
    let tailRevision = try RawStatement.first(tailStatement.sqliteStatement, on: connection(db)) {
      try $0.integer(0, "revision", of: Schema.pendingTailTable)
    }
    return (base, tailRevision ?? revision)
  }

  /// The stored change, decoded: the row's and its tail's (empty when there is none); nil
  /// when either cannot be (damaged).
  private static func storedChanges(_ db: Database) throws -> (row: NetChanges, tail: NetChanges)? {
    let data = try Data.fetchOne(
      db.cachedStatement(sql: "SELECT changes FROM \(Schema.pendingMoveTable) WHERE id = 1"))
    guard let row = data.flatMap({ try? decode($0) }) else { return nil }
    guard try db.tableExists(Schema.pendingTailTable) else { return (row, NetChanges()) }
    guard
      let tailData = try Data.fetchOne(
        db.cachedStatement(sql: "SELECT changes FROM \(Schema.pendingTailTable) WHERE id = 1"))
    else { return (row, NetChanges()) }
    guard let tail = try? decode(tailData) else { return nil }
    return (row, tail)
  }

  private static func decode(_ data: Data) throws -> NetChanges {
    var changes = NetChanges()
    // Room for its rows at once, as a far merge makes (see ``NetChanges/reserveCapacity(rows:)``).
    changes.reserveCapacity(rows: data.count / VersionGraph.encodedRowGuess)
    try changes.append(encoded: data)
    return changes
  }

  /// The net change history records from `base` to the head. Without `blocks` (a reader
  /// that does not know the file's spans) each version's change is read: slower, and only
  /// for a damaged pending row.
  private static func fromHistory(
    base: Int64, blocks: HistoryBlocks, _ db: Database
  ) throws -> NetChanges {
    let head = try Head.read(db)
    return try VersionGraph.pathChanges(
      from: VersionGraph.node(base, db), to: VersionGraph.node(head.version, db),
      blocks: blocks, db)
  }
}
