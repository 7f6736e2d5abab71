import Foundation
import GRDB
import Testing
import Timeline

@testable import TimelineStore

/// What a version costs in the file: a ripple edit moves every later clip, and each moved clip
/// is a row change in history.
@Suite("History size")
struct HistorySizeTests {
  /// One track of `count` back-to-back 1 s clips of a one-hour source.
  static func longTrack(_ store: TimelineStore, count: Int) throws {
    try store.commit(label: "Build") { _, ids in
      let source = StoreFixture.source(&ids, seconds: 3_600)
      let clips = (0..<Int64(count)).map { i in
        Clip(
          id: ids.newClipID(), source: source.id, timelineStart: FramePosition(i * 48_000),
          sourceRange: FrameRange(start: FramePosition(i * 48_000), count: 48_000))
      }
      return [.setSource(source), .setTrack(Track(id: ids.newTrackID(), name: "A", clips: clips))]
    }
  }

  static func storedBytes(_ path: String, version: Int64) throws -> Int {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { db in
      try Int.fetchOne(
        db, sql: "SELECT length(changeset) FROM version WHERE id = ?", arguments: [version]) ?? 0
    }
  }

  /// A ripple cut of 0.3 s over 2,000 later clips stores at most 20 bytes per moved clip (a
  /// session changeset, what versions stored before, took 48), and undoes and redoes exactly.
  @Test func aRippleCutStoresAtMost20BytesPerMovedClip() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("ripple.tape")
    let store = try TimelineStore.create(at: path)
    try Self.longTrack(store, count: 2_000)
    let before = store.snapshot.project
    let cut = try store.commit(label: "Cut") { project, ids in
      try project.cutRange(FrameRange(start: 12_000, count: 14_400), ripple: true) {
        ids.newClipID()
      }
    }
    let after = store.snapshot.project
    #expect(cut.changed.clips.count == 2_001)
    #expect(try store.undo().project == before)
    #expect(try store.redo().project == after)
    try store.close()
    let bytes = try Self.storedBytes(path, version: cut.version)
    #expect(bytes <= 20 * 2_000, "\(bytes) bytes for 2,000 moved clips")
    let reopened = try TimelineStore.open(at: path)
    defer { try? reopened.close() }
    #expect(reopened.snapshot.project == after)
    #expect(try reopened.undo().project == before)
  }

  /// A project written before the packed encoding keeps session changesets in its versions:
  /// they still undo, redo and check out, beside versions in the packed encoding.
  @Test func versionsStoredAsSessionChangesetsStillUndo() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("old.tape")
    let (store, states) = try StoreFixture.populated(at: path)
    try store.close()
    // Rewrite every version as a session changeset, as an older Tape stored it.
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      let rows = try Row.fetchAll(db, sql: "SELECT id, changeset FROM version")
      for row in rows {
        let data: Data = row["changeset"]
        #expect(data.first == NetChanges.packedFormat || data.first == UInt8(ascii: "T"))
        var changes = NetChanges()
        try changes.append(changeset: Changeset(data: data))
        try db.execute(
          sql: "UPDATE version SET changeset = ? WHERE id = ?",
          arguments: [changes.changeset().data, row["id"] as Int64])
      }
    }
    try queue.close()
    let reopened = try TimelineStore.open(at: path)
    defer { try? reopened.close() }
    #expect(reopened.snapshot.project == states[3])
    try reopened.commit(label: "Gain") { project, _ in
      try project.setClipGain(Clip.ID(1), Gain(decibels: -2))
    }
    let edited = reopened.snapshot.project
    #expect(try reopened.undo().project == states[3])
    #expect(try reopened.undo().project == states[2])
    #expect(try reopened.checkout(1).project == states[0])
    #expect(try reopened.checkout(5).project == edited)
  }
}
