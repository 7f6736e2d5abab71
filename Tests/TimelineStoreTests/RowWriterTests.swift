import Foundation
import GRDB
import ReferenceRenders
import Testing
import Timeline

@testable import TimelineStore

@Suite("Writing rows")
struct RowWriterTests {
  /// Rows are written and read by column position: each table's layout must match the real
  /// table, and each table's number must be its place in the tracked list.
  @Test func columnListsMatchTheSchema() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    try TimelineStore.create(at: path).close()
    let queue = try DatabaseQueue(path: path)
    for (table, columns) in Schema.columns {
      let actual = try queue.read { db in
        try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").map { $0["name"] as String }
      }
      #expect(actual == columns, "\(table)")
    }
    for (index, row) in Schema.trackedRows.enumerated() {
      #expect(row.index == index, "\(row.table)")
    }
  }

  /// An edit's rows, encoded from the snapshots before and after it, are exactly what SQLite's
  /// session records when they are written; and reading the tables back gives the project
  /// after the edit, its track positions and its clip index. Over a seeded random walk that
  /// covers every tracked table (non-UTF-8 paths, envelopes, master gain, removed and moved
  /// tracks).
  @Test(arguments: [5, 6]) func anEditsRowsAreWhatTheSessionRecordsAndReadBackAsTheEdit(
    seed: UInt64
  ) throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("walk.tape")
    try TimelineStore.create(at: path).close()
    let queue = try DatabaseQueue(path: path)
    var rng = SeededGenerator(seed: seed)
    var ids = IDAllocator(nextSource: 1, nextTrack: 1, nextClip: 1)
    var tablesSeen = Set<Int>()
    try queue.write { db in
      var held = try SnapshotReader.load(db)
      for step in 0..<400 {
        let commands =
          (try? RandomSequenceTests.randomEdit(held.project, &ids, &rng)) ?? []
        let (new, changed) = try held.project.applyingWithChanges(commands)
        let (rows, positions, placements) = RowWriter.changes(
          from: held, to: new, changed: changed)
        let changeset = try SessionCalls.capture(
          on: connection(db), tables: Schema.trackedTables
        ) { try RowWriter.apply(rows, db) }
        var recorded = NetChanges()
        try recorded.append(changeset: changeset)
        #expect(recorded.rows == rows.rows, "step \(step)")
        tablesSeen.formUnion(rows.rows.keys.map(\.table))

        held = HeldProject(
          project: new, positions: positions, clips: held.clips.updating(placements))
        let loaded = try SnapshotReader.load(db)
        #expect(loaded.project == new, "step \(step)")
        #expect(loaded.positions == positions, "step \(step)")
        #expect(loaded.clips == held.clips, "step \(step)")
      }
    }
    // Every table but the project row, which no edit changes.
    #expect(tablesSeen == Set(1..<Schema.trackedTables.count))
  }

  /// An edit made against a snapshot that is not what the file holds is refused by the writer
  /// rather than written over the file's row.
  @Test func anEditAgainstAStaleSnapshotIsRefused() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    try StoreFixture.populated(at: path).0.close()
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      let held = try SnapshotReader.load(db)
      try db.execute(sql: "UPDATE clip SET gainDB = -1 WHERE id = 1")
      let (new, changed) = try held.project.applyingWithChanges(
        held.project.setClipGain(Clip.ID(1), Gain(decibels: -9)))
      let (rows, _, _) = RowWriter.changes(from: held, to: new, changed: changed)
      #expect(throws: StoreError.historyDiverged) { try RowWriter.apply(rows, db) }
      #expect(try Double.fetchOne(db, sql: "SELECT gainDB FROM clip WHERE id = 1") == -1)
    }
  }

  /// If the data no longer matches what history recorded (edited behind the store's back), an
  /// undo refuses instead of silently corrupting the project, and changes nothing.
  @Test func aDivergedRowStopsUndoAndChangesNothing() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.commit(label: "Gain") { p, _ in try p.setClipGain(Clip.ID(1), Gain(decibels: -9)) }
    try store.close()
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in try db.execute(sql: "UPDATE clip SET gainDB = -1 WHERE id = 1") }
    try queue.close()
    let reopened = try TimelineStore.open(at: path)
    let before = reopened.snapshot
    #expect(throws: StoreError.historyDiverged) { try reopened.undo() }
    #expect(reopened.snapshot == before)
    try reopened.close()
    #expect(try TimelineStore.open(at: path).snapshot == before)
  }
}
