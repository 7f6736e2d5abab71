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
    let revision: Int64
    var changes: NetChanges
    /// The project at `base`, as the store that made the change pending held it before its
    /// move: a move back there takes it instead of applying the change turned around (100,000
    /// clips built again in memory). Nil when the change was read from the file.
    var baseSnapshot: HeldProject? = nil
  }

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
    if let changes = try storedChanges(db) {
      return Kept(base: base, revision: revision, changes: changes)
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
      try db.execute(sql: "DELETE FROM \(Schema.pendingMoveTable)")
      return nil
    }
    try db.execute(
      sql: """
        INSERT OR REPLACE INTO \(Schema.pendingMoveTable) (id, base, revision, changes)
        VALUES (1, ?, ?, ?)
        """,
      arguments: [base, revision, changes.encoded()])
    return Kept(base: base, revision: revision, changes: changes, baseSnapshot: baseSnapshot)
  }

  /// Writes the pending change to the tracked tables, each row as a history move writes it
  /// (``RowWriter/Match/recorded``), and removes it: afterwards the tables hold the head.
  /// Returns whether there was one.
  @discardableResult
  static func fold(_ db: Database, blocks: HistoryBlocks, kept: Kept? = nil) throws -> Bool {
    guard let pending = try read(db, blocks: blocks, kept: kept) else { return false }
    try RowWriter.apply(pending.changes, match: .recorded, db)
    try db.execute(sql: "DELETE FROM \(Schema.pendingMoveTable)")
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
    guard let changes = try storedChanges(db), changes.rows == recorded.rows else {
      return (recorded.count, false)
    }
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
      // One upgraded past it has lost the table (dropped or renamed behind Tape's back): the
      // rows may hold an earlier version than the head, and nothing says which.
      if try Bool.fetchOne(
        db, sql: "SELECT EXISTS (SELECT 1 FROM grdb_migrations WHERE identifier = ?)",
        arguments: [Schema.pendingMoveMigration]) == true
      {
        throw StoreError.corrupt(detail: "the \(Schema.pendingMoveTable) table is missing")
      }
      return nil
    }
    return try RawStatement.first(statement.sqliteStatement, on: connection(db)) { row in
      (
        try row.integer(0, "base", of: Schema.pendingMoveTable),
        try row.integer(1, "revision", of: Schema.pendingMoveTable)
      )
    }
  }

  /// The stored change, decoded; nil when it cannot be (damaged).
  private static func storedChanges(_ db: Database) throws -> NetChanges? {
    let data = try Data.fetchOne(
      db.cachedStatement(sql: "SELECT changes FROM \(Schema.pendingMoveTable) WHERE id = 1"))
    return data.flatMap { try? decode($0) }
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
