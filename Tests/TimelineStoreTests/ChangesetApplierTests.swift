import Foundation
import GRDB
import Testing
import Timeline

@testable import TimelineStore

@Suite("Applying recorded changes")
struct ChangesetApplierTests {
  /// The applier writes columns by position: its column lists must match the real tables.
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
