import Foundation
import GRDB
import Testing
import Timeline
import TimelineStore

@Suite("Bad files and concurrency")
struct BadFileTests {
  /// Every byte of a file, with its -wal file if any, to prove nothing was written.
  static func bytes(_ path: String) throws -> [Data] {
    [try Data(contentsOf: URL(fileURLWithPath: path))]
      + ((try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))).map { [$0] } ?? [])
  }

  @Test func aMissingFileIsNotCreated() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("missing.tape")
    #expect(throws: StoreError.notFound(path: path)) { try TimelineStore.open(at: path) }
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func createRefusesToOverwrite() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    try Data("precious".utf8).write(to: URL(fileURLWithPath: path))
    #expect(throws: StoreError.alreadyExists(path: path)) { try TimelineStore.create(at: path) }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("precious".utf8))
    #expect(throws: StoreError.invalidEdit(.unsupportedChannelCount(3))) {
      try TimelineStore.create(at: dir.path("other.tape"), channels: 3)
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["song.tape"])
  }

  @Test func filesThatAreNotProjectsAreRefusedUntouched() throws {
    let dir = try TemporaryDirectory()
    let text = dir.path("notes.tape")
    try Data(
      "just some text that is long enough to look like a header, maybe, or not at all; more text to pass 100 bytes."
        .utf8
    )
    .write(to: URL(fileURLWithPath: text))
    let audio = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../TestAudio/speech-mono-48k-16.wav").path
    // A real SQLite database that is not a Tape project, in rollback-journal mode.
    let other = dir.path("other.sqlite")
    try DatabaseQueue(path: other).write { db in
      try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)")
    }
    for path in [text, audio, other] {
      let before = try Self.bytes(path)
      #expect(throws: StoreError.notAProject(path: path)) { try TimelineStore.open(at: path) }
      #expect(try Self.bytes(path) == before)
      #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }
  }

  @Test func aCorruptProjectIsRefusedUntouched() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.close()
    // Keep the 100-byte header, scramble the schema page behind it.
    var data = try Data(contentsOf: URL(fileURLWithPath: path))
    for index in 100..<4_096 { data[index] = UInt8(truncatingIfNeeded: index &* 37) }
    try data.write(to: URL(fileURLWithPath: path))
    let error = #expect(throws: StoreError.self) { try TimelineStore.open(at: path) }
    guard case .corrupt = error else {
      Issue.record("expected .corrupt, got \(String(describing: error))")
      return
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == data)
  }

  /// A table whose damaged pages show one id twice (the byte-flip fuzzer made a source table
  /// and a track table do so: `tape diff`, `tape redo` and `tape track add` then died of a
  /// duplicate dictionary key, the track table's inside the reading of the effect chains) is
  /// a damaged project when it is read, not a crash. Rebuilt here as the table without its
  /// primary key, every row twice.
  @Test(arguments: ["source", "track"]) func aRowSeenTwiceIsDamage(table: String) throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA foreign_keys = OFF")
      try db.inTransaction {
        try db.execute(
          sql: """
            CREATE TABLE copy AS SELECT * FROM \(table);
            INSERT INTO copy SELECT * FROM \(table);
            DROP TABLE \(table);
            ALTER TABLE copy RENAME TO \(table);
            """)
        return .commit
      }
    }
    try queue.close()
    let error = #expect(throws: StoreError.self) { try TimelineStore.open(at: path, access: .read) }
    guard case .corrupt(let detail) = error else {
      Issue.record("expected .corrupt, got \(String(describing: error))")
      return
    }
    #expect(detail == "the \(table) table holds an id twice")
  }

  /// The populated fixture project in `dir`, changed by `sql` past its CHECK constraints and
  /// foreign keys, as damaged pages would show it; its path.
  static func damaged(in dir: TemporaryDirectory, _ sql: String) throws -> String {
    let path = dir.path("song.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
      try db.execute(sql: "PRAGMA foreign_keys = OFF")
      try db.execute(sql: sql)
    }
    try queue.close()
    return path
  }

  /// A format column that damaged pages show as NULL or 0 (the byte-flip fuzzer damaged the
  /// project table's page so that its row read as NULLs: `tape ls` then divided by a 0 Hz
  /// sample rate and died) is a damaged project when it is read, not a crash. Written here
  /// past the tables' CHECK constraints, as damage would.
  @Test(arguments: [
    ("project", "sampleRate = 0", "the project row holds an impossible format (0 Hz, 2 channels)"),
    (
      "project", "channels = 7", "the project row holds an impossible format (48000 Hz, 7 channels)"
    ),
    ("source", "sampleRate = 0", "source s1 holds an impossible format"),
    ("source", "frameCount = -1", "source s1 holds an impossible format"),
  ])
  func anImpossibleFormatIsDamage(table: String, change: String, expected: String) throws {
    let dir = try TemporaryDirectory()
    let path = try Self.damaged(in: dir, "UPDATE \(table) SET \(change) WHERE rowid = 1")
    let before = try Self.bytes(path)
    let error = #expect(throws: StoreError.self) { try TimelineStore.open(at: path, access: .read) }
    guard case .corrupt(let detail) = error else {
      Issue.record("expected .corrupt, got \(String(describing: error))")
      return
    }
    #expect(detail == expected)
    #expect(try Self.bytes(path) == before)
  }

  /// Version rows whose links damaged pages changed (the byte-flip fuzzer made version 3's
  /// depth -4: `tape checkout 2` then trapped on a precondition; a jump to itself or to a deeper
  /// version would walk forever) are a damaged project when a history move walks them, not a
  /// crash or a hang; the file is left as it was.
  @Test(
    .timeLimit(.minutes(1)),
    arguments: [
      ("depth = -4 WHERE id = 3", 2),
      ("jump = 4 WHERE id = 4", 1),
      ("jump = 4 WHERE id = 3", 2),
      ("parent = 99 WHERE id = 4", 2),
      ("parent = 4 WHERE id = 3", 2),
    ])
  func damagedVersionLinksAreDamage(change: String, target: Int64) throws {
    let dir = try TemporaryDirectory()
    let path = try Self.damaged(in: dir, "UPDATE version SET \(change)")
    let before = try Self.bytes(path)
    let damaged = try TimelineStore.open(at: path)
    let error = #expect(throws: StoreError.self) { try damaged.checkout(target) }
    try damaged.close()
    guard case .corrupt = error else {
      Issue.record("expected .corrupt, got \(String(describing: error))")
      return
    }
    #expect(try Self.bytes(path) == before)
  }

  @Test func aNewerSchemaIsRefusedUntouched() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v99-from-the-future')")
    }
    try queue.close()
    let before = try Self.bytes(path)
    #expect(throws: StoreError.newerSchema(path: path)) { try TimelineStore.open(at: path) }
    #expect(try Self.bytes(path) == before)
  }

  /// A writer in another connection holds the lock: our commit waits the busy timeout, then fails
  /// cleanly; nothing is lost and the next try succeeds.
  @Test func aBusyProjectFailsCleanlyAndRecovers() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (first, states) = try StoreFixture.populated(at: path)
    try first.close()
    let store = try TimelineStore.open(at: path, busyTimeout: 0.2)
    let blocker = try DatabaseQueue(path: path)
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let thread = Thread {
      try? blocker.writeWithoutTransaction { db in
        try db.execute(sql: "BEGIN IMMEDIATE")
        started.signal()
        release.wait()
        try db.execute(sql: "ROLLBACK")
      }
    }
    thread.start()
    started.wait()
    #expect(throws: StoreError.busy) {
      try store.commit(label: "Gain") { p, _ in
        try p.setTrack(Track.ID(1), gain: Gain(decibels: -1))
      }
    }
    #expect(throws: StoreError.busy) { try store.undo() }
    release.signal()
    #expect(store.snapshot == StoreSnapshot(version: 4, project: states[3]))
    let result = try store.commit(label: "Gain") { p, _ in
      try p.setTrack(Track.ID(1), gain: Gain(decibels: -1))
    }
    #expect(result.version == 5)
  }

  @Test func theMessagesNameTheFix() {
    #expect(
      StoreError.busy.description
        == "project is busy: another tape process is writing to it; try again when it has finished")
    #expect(
      StoreError.notFound(path: "a.tape").description
        == "no project at a.tape; create one with 'tape new a.tape'")
    #expect(
      StoreError.notEnoughSteps(requested: 5, available: 2, direction: "undo").description
        == "cannot undo 5 steps: only 2 available; use --steps 2")
  }
}
