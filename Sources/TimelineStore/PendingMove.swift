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
///   transaction, so an edit reads and writes rows that hold the head, as always; closing the
///   store that made it folds it too, so a file that no process holds open has none (unless
///   one was stopped);
/// - `changes` is what history says between `base` and the head, so a damaged `changes` is
///   made again from history (``VersionGraph/pathChanges(from:to:blocks:_:)``), and
///   ``TimelineStore/verify()`` compares the two. It is stored with a checksum and the
///   versions it goes from and to (``Stored``): damaged bytes that still decode, or a `base`
///   or head changed behind Tape's back, are found as damage, not read as the project.
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
    guard let (column, revision) = try stamp(db) else { return nil }
    if let kept, kept.base == column, kept.revision == revision { return kept }
    let stored = try storedChanges(db)
    // The base stored with the change is checked by its checksum; the column's is not.
    let base = stored?.base ?? column
    if let stored, try stored.head == Head.read(db).version {
      return Kept(base: base, revision: revision, changes: stored.changes)
    }
    let changes = try fromHistory(base: base, blocks: blocks, db)
    if stored == nil {
      // The change is damaged, so nothing checks the column's base: the rows must hold what
      // history says they hold there (a read of the rows the change covers, on this rare path).
      do {
        try RowWriter.check(changes, under: nil, db)
      } catch StoreError.historyDiverged {
        throw StoreError.corrupt(
          detail:
            "the pending history move is damaged, and the rows do not hold version \(base), which it names"
        )
      }
    }
    return Kept(base: base, revision: revision, changes: changes)
  }

  /// Whether a change is pending (without reading it).
  static func exists(_ db: Database) throws -> Bool { try stamp(db) != nil }

  /// Stores `changes` as the pending change from `base` to the head's version `head`, written
  /// with the head's `revision` (none when it is empty); returns it as kept.
  @discardableResult
  static func write(
    _ changes: NetChanges, base: Int64, head: Int64, revision: Int64,
    baseSnapshot: HeldProject? = nil, _ db: Database
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
      arguments: [base, revision, Stored.pack(changes, base: base, head: head)])
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
    guard let (column, _) = try stamp(db) else { return (0, true) }
    let stored = try storedChanges(db)
    let recorded: NetChanges
    do {
      recorded = try fromHistory(base: stored?.base ?? column, blocks: blocks, db)
    } catch StoreError.corrupt {
      return (0, false)
    }
    guard let stored, stored.base == column, try stored.head == Head.read(db).version,
      stored.changes.rows == recorded.rows
    else { return (recorded.count, false) }
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

  /// The stored change, decoded, with the versions it goes from and to; nil when it cannot
  /// be (damaged, or stored by a Tape that kept no checksum).
  private static func storedChanges(
    _ db: Database
  ) throws -> (base: Int64, head: Int64, changes: NetChanges)? {
    let data = try Data.fetchOne(
      db.cachedStatement(sql: "SELECT changes FROM \(Schema.pendingMoveTable) WHERE id = 1"))
    guard let (base, head, encoded) = data.flatMap(Stored.unpack),
      let changes = try? decode(encoded)
    else { return nil }
    return (base, head, changes)
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
    let from: VersionNode
    do {
      from = try VersionGraph.node(base, db)
    } catch StoreError.unknownVersion {
      throw StoreError.corrupt(
        detail: "the pending history move starts from version \(base), which is not in the project")
    }
    return try VersionGraph.pathChanges(
      from: from, to: VersionGraph.node(head.version, db), blocks: blocks, db)
  }

  /// How the row's `changes` are stored: a tag byte, a checksum of what follows it, the
  /// version the change goes from (the rows') and the one it goes to (the head's), 8 bytes each,
  /// little-endian, then the change's compact encoding (``NetChanges/encoded(after:)``).
  ///
  /// Why: the encoding has no redundancy, so bytes damaged (or edited with sqlite3) mostly still
  /// decode, into another change: every reader then showed a project no version holds (a clip
  /// on a source the project lacks, another length), the next edit wrote it to the rows, and a
  /// `base` changed in its column sent a move "back" to that version to the rows' own. A row
  /// that fails the checksum is made again from history; one whose versions are not the
  /// column's `base` and the head is trusted for its base only. The tag differs from the
  /// encoding's version byte: a Tape that stored the bare encoding reads a row stored so as
  /// damaged (and makes it again from history), and this one reads a bare encoding so too.
  /// The checksum of a 2.4 MB change (100,000 clips) took 0.11 ms (`swiftc -O`, best of 20).
  enum Stored {
    static let tag: UInt8 = 0x50
    static let headerBytes = 25

    static func pack(_ changes: NetChanges, base: Int64, head: Int64) -> Data {
      var data = changes.encoded(after: headerBytes)
      data.withUnsafeMutableBytes { bytes in
        bytes[0] = tag
        bytes.storeBytes(
          of: UInt64(bitPattern: base).littleEndian, toByteOffset: 9, as: UInt64.self)
        bytes.storeBytes(
          of: UInt64(bitPattern: head).littleEndian, toByteOffset: 17, as: UInt64.self)
        let sum = checksum(UnsafeRawBufferPointer(rebasing: bytes[9...]))
        bytes.storeBytes(of: sum.littleEndian, toByteOffset: 1, as: UInt64.self)
      }
      return data
    }

    /// The versions and the encoded change `data` holds; nil when its tag or checksum is wrong.
    static func unpack(_ data: Data) -> (base: Int64, head: Int64, encoded: Data)? {
      guard data.count > headerBytes else { return nil }
      let versions = data.withUnsafeBytes { bytes -> (Int64, Int64)? in
        func word(_ offset: Int) -> UInt64 {
          UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        guard bytes[0] == tag, word(1) == checksum(UnsafeRawBufferPointer(rebasing: bytes[9...]))
        else { return nil }
        return (Int64(bitPattern: word(9)), Int64(bitPattern: word(17)))
      }
      guard let (base, head) = versions else { return nil }
      return (base, head, data.dropFirst(headerBytes))
    }

    /// A checksum that finds damaged or cut bytes (any one changed 8-byte word always; not a
    /// forger): four lanes of words, each mixed in by an xor and a multiplication by an odd
    /// constant, so that it runs at memory speed (a 2.4 MB change, 100,000 clips, in well
    /// under a millisecond).
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
      let prime: UInt64 = 0x9E37_79B1_85EB_CA87
      func word(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
      }
      var lanes: (UInt64, UInt64, UInt64, UInt64) = (1, 2, 3, 4)
      var offset = 0
      while offset + 32 <= bytes.count {
        lanes.0 = (lanes.0 ^ word(offset)) &* prime
        lanes.1 = (lanes.1 ^ word(offset + 8)) &* prime
        lanes.2 = (lanes.2 ^ word(offset + 16)) &* prime
        lanes.3 = (lanes.3 ^ word(offset + 24)) &* prime
        offset += 32
      }
      var sum = UInt64(bytes.count)
      for lane in [lanes.0, lanes.1, lanes.2, lanes.3] {
        sum = (sum ^ lane) &* prime
        sum ^= sum >> 29
      }
      while offset < bytes.count {
        sum = (sum ^ UInt64(bytes[offset])) &* prime
        offset += 1
      }
      return sum ^ (sum >> 32)
    }
  }
}
