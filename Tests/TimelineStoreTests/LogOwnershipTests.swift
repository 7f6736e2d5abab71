import Foundation
import GRDB
import SafeFiles
import Testing
import Timeline

@testable import TimelineStore

@Suite("Whose log is it")
struct LogOwnershipTests {
  /// A plain SQLite file in WAL mode whose `user_version` each of `tokens` sets, one
  /// transaction each with a row of 3,000 bytes beside it; the connection is kept open (so the
  /// log stays) until the returned queue is closed.
  static func logged(_ path: String, tokens: [Int32]) throws -> DatabaseQueue {
    let queue = try DatabaseQueue(path: path)
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA journal_mode = WAL")
      try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
      try db.execute(sql: "CREATE TABLE filler (id INTEGER PRIMARY KEY, text TEXT)")
    }
    for (index, token) in tokens.enumerated() {
      try queue.write { db in
        try db.execute(sql: "PRAGMA user_version = \(token)")
        try db.execute(
          sql: "INSERT INTO filler (text) VALUES (?)",
          arguments: [String(repeating: "\(index)", count: 3_000)])
      }
    }
    return queue
  }

  /// What SQLite itself reads as `user_version` from a copy of `path` and of the log beside it
  /// (copied as a crash would leave them: without the log's index).
  static func sqliteReads(_ path: String, log: Data, in dir: TemporaryDirectory) throws -> Int32 {
    let copy = dir.path("copy-\(UUID().uuidString).db")
    try FileManager.default.copyItem(atPath: path, toPath: copy)
    try log.write(to: URL(fileURLWithPath: copy + "-wal"))
    let queue = try DatabaseQueue(path: copy)
    defer { try? queue.close() }
    return try queue.read { db in try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0 }
  }

  /// The log reader finds the token SQLite reads, in a whole log, in one whose last frame was
  /// torn (a power cut mid-commit: SQLite stops at the last whole commit), and in one with a
  /// byte of an earlier frame damaged (the checksums break there: SQLite reads only the
  /// commits before it).
  @Test func theLogReaderReadsWhatSQLiteReads() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("plain.db")
    let queue = try Self.logged(path, tokens: [11, -22, 33, 44])
    defer { try? queue.close() }
    let log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
    let pageSize = Int(log[8]) << 24 | Int(log[9]) << 16 | Int(log[10]) << 8 | Int(log[11])
    let frame = 24 + pageSize
    let frames = (log.count - 32) / frame
    #expect(frames > 8)

    var cases: [(String, Data)] = [("whole", log), ("torn", log.prefix(log.count - 100))]
    var damaged = log
    // A byte in the middle of the log's frames: every commit from there on is lost.
    damaged[32 + (frames / 2) * frame + 24 + 200] ^= 0xFF
    cases.append(("damaged", damaged))
    var seen: [Int32] = []
    for (name, bytes) in cases {
      let copy = dir.path("\(name).db-wal")
      try bytes.write(to: URL(fileURLWithPath: copy))
      let read = WriteAheadLog.lastCommittedToken(copy).map { Int32(bitPattern: $0) }
      let sqlite = try Self.sqliteReads(path, log: bytes, in: dir)
      #expect(read == sqlite, "\(name): read \(String(describing: read)), SQLite \(sqlite)")
      seen.append(sqlite)
    }
    // The cases differ, so each checks something of its own.
    #expect(seen[0] == 44)
    #expect(seen[1] == 33)
    #expect(![33, 44].contains(seen[2]))
    // Not a log at all, or a header alone: nothing to judge.
    try Data(repeating: 7, count: 5_000).write(to: URL(fileURLWithPath: dir.path("junk-wal")))
    #expect(WriteAheadLog.lastCommittedToken(dir.path("junk-wal")) == nil)
    try log.prefix(32).write(to: URL(fileURLWithPath: dir.path("header-wal")))
    #expect(WriteAheadLog.lastCommittedToken(dir.path("header-wal")) == nil)
  }

  /// The project's token (its `user_version`, on page 1) is random from `create`; the first
  /// commit of a log sets it to the token made from it and the file as it was then; later
  /// commits of the same log leave it; once the log has been copied into the file and
  /// restarted, the next commit stamps again from the new token.
  @Test func theFirstCommitOfALogStampsTheFile() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    try TimelineStore.create(at: path).close()
    let created = try Self.fileToken(path)
    #expect(created != 0)
    let file = try #require(FileIdentity(path: path))

    let store = try TimelineStore.open(at: path)
    defer { try? store.close() }
    try store.commit(label: "A") { _, ids in [.setTrack(Track(id: ids.newTrackID(), name: "A"))] }
    let stamped = try Self.tokenThroughLog(store)
    #expect(stamped == LogOwnership.token(after: created, file: file))
    #expect(try Self.fileToken(path) == created, "the stamp is in the log, not yet the file")
    #expect(WriteAheadLog.lastCommittedToken(path + "-wal") == stamped)
    try store.commit(label: "B") { _, ids in [.setTrack(Track(id: ids.newTrackID(), name: "B"))] }
    try store.undo()
    #expect(try Self.tokenThroughLog(store) == stamped)

    // Copied into the file and restarted: a new log, a new stamp.
    try store.queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
    }
    #expect(try Self.fileToken(path) == stamped)
    let checkpointed = try #require(FileIdentity(path: path))
    try store.redo()
    #expect(
      try Self.tokenThroughLog(store) == LogOwnership.token(after: stamped, file: checkpointed))
    // Different files, different tokens.
    #expect(
      LogOwnership.token(after: stamped, file: checkpointed)
        != LogOwnership.token(after: stamped, file: file))
  }

  /// `user_version` in the file's own bytes, the log ignored.
  static func fileToken(_ path: String) throws -> UInt32 {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(64)
    return bytes[60..<64].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
  }

  /// `user_version` as the store reads it (through the log).
  static func tokenThroughLog(_ store: TimelineStore) throws -> UInt32 {
    try store.queue.read { db in
      UInt32(bitPattern: try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0)
    }
  }
}
