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
/// The rule: while the row exists, the tracked tables hold the project at some earlier
/// version, and `changes` is the net change from it to the head. So:
/// - a whole read of the project (``SnapshotReader/load(_:clips:)``) applies it after the rows;
/// - a history move composes its own change with it (``TimelineStore``'s `move`);
/// - every other write (an edit, a scoped edit) folds it first, in its own transaction, so an
///   edit reads and writes rows that hold the head, as always; closing a store folds it too,
///   so a file that no process holds open has none (unless one was stopped);
/// - history (versions, blocks) never depends on it: it is the tables' state, not history.
///
/// A move still refuses rows edited behind Tape's back (``StoreError/historyDiverged``) before
/// it returns: it reads each row its change covers (``RowWriter/check(_:under:_:)``) where it
/// used to write it. A row edited behind Tape's back after the move is found when the change is
/// folded, which then fails and changes nothing, as an undo over such a row does.
enum PendingMove {
  /// The pending change: the net change from what the tracked tables hold to the head; nil
  /// when they hold the head (always, in a file made before the table existed).
  static func read(_ db: Database) throws -> NetChanges? {
    guard try db.tableExists(Schema.pendingMoveTable),
      let data = try Data.fetchOne(
        db.cachedStatement(sql: "SELECT changes FROM \(Schema.pendingMoveTable) WHERE id = 1"))
    else { return nil }
    var changes = NetChanges()
    // Room for its rows at once, as a far merge makes (see ``NetChanges/reserveCapacity(rows:)``).
    changes.reserveCapacity(rows: data.count / VersionGraph.encodedRowGuess)
    do {
      try changes.append(encoded: data)
    } catch {
      throw StoreError.corrupt(detail: "the pending history move cannot be read")
    }
    return changes
  }

  /// Stores `changes` as the pending change (none when it is empty).
  static func write(_ changes: NetChanges, _ db: Database) throws {
    if changes.isEmpty {
      try db.execute(sql: "DELETE FROM \(Schema.pendingMoveTable)")
    } else {
      try db.execute(
        sql: "INSERT OR REPLACE INTO \(Schema.pendingMoveTable) (id, changes) VALUES (1, ?)",
        arguments: [changes.encoded()])
    }
  }

  /// Writes the pending change to the tracked tables, each row as a history move writes it
  /// (``RowWriter/Match/recorded``), and removes it: afterwards the tables hold the head.
  /// Returns whether there was one.
  @discardableResult
  static func fold(_ db: Database) throws -> Bool {
    guard let pending = try read(db) else { return false }
    try RowWriter.apply(pending, match: .recorded, db)
    try db.execute(sql: "DELETE FROM \(Schema.pendingMoveTable)")
    return true
  }
}
