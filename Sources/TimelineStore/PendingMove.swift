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
  /// the head's revision when the row (or its tail) was written. A store keeps the one its last
  /// move wrote, so that the next move or edit does not decode it again; the stamp tells
  /// whether the row is still that one (every write of the row comes with a new head revision).
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
    /// from history: the next move writes it whole), the version it goes to, and the moves'
    /// change stored after it.
    var stored = 0
    var storedHead: Int64 = 0
    var tail = NetChanges()

    /// Adds a move's change `step` (made from the head, which is now version `head` at
    /// `revision`) and stores the result: in the tail alone while the tail stays under
    /// ``tailShare`` of the row's change, else whole. An empty result removes the pending
    /// change (the head is back at `base`), and the store keeps none.
    mutating func write(
      adding step: NetChanges, head: Int64, revision: Int64, _ db: Database
    ) throws {
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
        try PendingMove.writeRow(changes, base: base, head: head, revision: revision, db)
        (stored, storedHead, tail) = (changes.count, head, NetChanges())
        return
      }
      // Written also when the moves since cancel out: its revision is the stamp's.
      try db.execute(
        sql:
          "INSERT OR REPLACE INTO \(Schema.pendingTailTable) (id, revision, changes) VALUES (1, ?, ?)",
        arguments: [revision, Stored.pack(longer, base: storedHead, head: head)])
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
    guard let (column, revision) = try stamp(db) else { return nil }
    if let kept, kept.base == column, kept.revision == revision { return kept }
    let stored = try storedChanges(db)
    // The base stored with the change is checked by its checksum; the column's is not.
    let base = stored?.base ?? column
    if let stored, let changes = try whole(stored, db) {
      return Kept(
        base: base, revision: revision, changes: changes, stored: stored.changes.count,
        storedHead: stored.head, tail: stored.tail ?? NetChanges())
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

  /// The row's change followed by its tail's, when together they go from the row's base to the
  /// head; nil when they do not (a tail damaged, or either left from another head).
  private static func whole(_ stored: StoredChange, _ db: Database) throws -> NetChanges? {
    let head = try Head.read(db).version
    guard let tail = stored.tail else { return stored.head == head ? stored.changes : nil }
    guard stored.tailSpan == (stored.head, head) else { return nil }
    var changes = stored.changes
    do {
      try changes.append(tail)
    } catch StoreError.corrupt {
      return nil
    }
    return changes
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
      try remove(db)
      return nil
    }
    try writeRow(changes, base: base, head: head, revision: revision, db)
    return Kept(
      base: base, revision: revision, changes: changes, baseSnapshot: baseSnapshot,
      stored: changes.count, storedHead: head)
  }

  /// Stores `changes` whole in the pending row, without a tail.
  private static func writeRow(
    _ changes: NetChanges, base: Int64, head: Int64, revision: Int64, _ db: Database
  ) throws {
    try db.execute(
      sql: """
        INSERT OR REPLACE INTO \(Schema.pendingMoveTable) (id, base, revision, changes)
        VALUES (1, ?, ?, ?)
        """,
      arguments: [base, revision, Stored.pack(changes, base: base, head: head)])
    try db.execute(sql: "DELETE FROM \(Schema.pendingTailTable)")
  }

  /// Removes the pending change: its row and its tail. (A file opened for writing has been
  /// upgraded to have both tables.)
  private static func remove(_ db: Database) throws {
    try db.execute(sql: "DELETE FROM \(Schema.pendingMoveTable)")
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
  /// is none), and whether its stored change (and tail) can be read, equals what history says
  /// between its base and the head, and finds the rows it covers as it expects.
  static func verify(_ db: Database, blocks: HistoryBlocks) throws -> (rows: Int, matches: Bool) {
    guard let (column, _) = try stamp(db) else { return (0, true) }
    let stored = try storedChanges(db)
    let recorded: NetChanges
    do {
      recorded = try fromHistory(base: stored?.base ?? column, blocks: blocks, db)
    } catch StoreError.corrupt {
      return (0, false)
    }
    guard let stored, stored.base == column, let changes = try whole(stored, db),
      changes.rows == recorded.rows
    else { return (recorded.count, false) }
    do {
      try RowWriter.check(recorded, under: nil, db)
      return (recorded.count, true)
    } catch StoreError.historyDiverged {
      return (recorded.count, false)
    }
  }

  /// The row's stamp: its base version and the head's revision when it (or its tail, when
  /// there is one) was written.
  private static func stamp(_ db: Database) throws -> (base: Int64, revision: Int64)? {
    // Every move and edit asks: the statements are prepared once per connection, and a table
    // looked for only when one cannot be (asking GRDB first costs a read of the schema in every
    // transaction, about 40 µs of an undo's 400).
    guard
      let statement = try cachedStatement(
        "SELECT base, revision FROM \(Schema.pendingMoveTable) WHERE id = 1",
        table: Schema.pendingMoveTable, migration: Schema.pendingMoveMigration, db)
    else { return nil }
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
    guard
      let tailStatement = try cachedStatement(
        "SELECT revision FROM \(Schema.pendingTailTable) WHERE id = 1",
        table: Schema.pendingTailTable, migration: Schema.pendingTailMigration, db)
    else { return (base, revision) }
    let tailRevision = try RawStatement.first(tailStatement.sqliteStatement, on: connection(db)) {
      try $0.integer(0, "revision", of: Schema.pendingTailTable)
    }
    return (base, tailRevision ?? revision)
  }

  /// The statement `sql` on `table`, prepared once per connection; nil when the file was made
  /// before `migration` made the table (read as it is, not upgraded). One that records the
  /// migration and lacks the table has lost it behind Tape's back: the rows may hold an earlier
  /// version than the head, and nothing says which.
  private static func cachedStatement(
    _ sql: String, table: String, migration: String, _ db: Database
  ) throws -> Statement? {
    do {
      return try db.cachedStatement(sql: sql)
    } catch {
      guard try !db.tableExists(table) else { throw error }
      if try migrated(migration, db) {
        throw StoreError.corrupt(detail: "the \(table) table is missing")
      }
      return nil
    }
  }

  private static func migrated(_ migration: String, _ db: Database) throws -> Bool {
    try Bool.fetchOne(
      db, sql: "SELECT EXISTS (SELECT 1 FROM grdb_migrations WHERE identifier = ?)",
      arguments: [migration]) == true
  }

  /// The stored change as read: the row's versions and change, and its tail (nil for none)
  /// with the versions it goes from and to.
  private struct StoredChange {
    let base: Int64
    let head: Int64
    let changes: NetChanges
    let tail: NetChanges?
    let tailSpan: (from: Int64, to: Int64)
  }

  /// The stored change, decoded; nil when it cannot be (damaged). A tail that cannot be is
  /// read as one from no version (``whole(_:_:)`` refuses it).
  private static func storedChanges(_ db: Database) throws -> StoredChange? {
    guard
      let data = try Data.fetchOne(
        db.cachedStatement(sql: "SELECT changes FROM \(Schema.pendingMoveTable) WHERE id = 1"))
    else { return nil }
    let row: (base: Int64, head: Int64, changes: NetChanges)
    if let (base, head, encoded) = Stored.unpack(data), let changes = try? decode(encoded) {
      row = (base, head, changes)
    } else if data.first == NetChanges.encodingVersion,
      try !migrated(Schema.pendingTailMigration, db),
      let changes = try? decode(data),
      let base = try Int64.fetchOne(
        db, sql: "SELECT base FROM \(Schema.pendingMoveTable) WHERE id = 1")
    {
      // Stored bare by a Tape before the checksum, in a file not upgraded since (the upgrade
      // stores it with one): read as that Tape read it.
      row = (base, try Head.read(db).version, changes)
    } else {
      return nil
    }
    guard try db.tableExists(Schema.pendingTailTable),
      let tailData = try Data.fetchOne(
        db.cachedStatement(sql: "SELECT changes FROM \(Schema.pendingTailTable) WHERE id = 1"))
    else {
      return StoredChange(
        base: row.base, head: row.head, changes: row.changes, tail: nil, tailSpan: (0, 0))
    }
    guard let (from, to, encoded) = Stored.unpack(tailData), let tail = try? decode(encoded) else {
      return StoredChange(
        base: row.base, head: row.head, changes: row.changes, tail: NetChanges(), tailSpan: (-1, -1)
      )
    }
    return StoredChange(
      base: row.base, head: row.head, changes: row.changes, tail: tail, tailSpan: (from, to))
  }

  private static func decode(_ data: Data) throws -> NetChanges {
    var changes = NetChanges()
    // Room for its rows at once, as a far merge makes (see ``NetChanges/reserveCapacity(rows:)``).
    changes.reserveCapacity(rows: data.count / VersionGraph.encodedRowGuess)
    try changes.append(encoded: data)
    return changes
  }

  /// Stores a pending row written bare (by a Tape before the checksum) with its checksum and
  /// versions: what the upgrade that adds the tail does, so that the row reads as sound. One
  /// that cannot be decoded is left as it is (damaged: made again from history when read).
  static func upgradeBareRow(_ db: Database) throws {
    guard
      let row = try Row.fetchOne(
        db, sql: "SELECT base, changes FROM \(Schema.pendingMoveTable) WHERE id = 1"),
      let data: Data = row["changes"], data.first == NetChanges.encodingVersion,
      let changes = try? decode(data)
    else { return }
    let base: Int64 = try row.value("base", of: Schema.pendingMoveTable)
    try db.execute(
      sql: "UPDATE \(Schema.pendingMoveTable) SET changes = ? WHERE id = 1",
      arguments: [Stored.pack(changes, base: base, head: try Head.read(db).version)])
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
