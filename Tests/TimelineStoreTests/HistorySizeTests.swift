import Foundation
import GRDB
import ReferenceRenders
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

  /// A ripple cut of 0.3 s over 2,000 later clips stores at most 8 bytes per moved clip (the
  /// goal was 20; a session changeset, what versions stored before, took 48), and undoes and
  /// redoes exactly.
  @Test func aRippleCutStoresAtMost8BytesPerMovedClip() throws {
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
    #expect(bytes <= 8 * 2_000, "\(bytes) bytes for 2,000 moved clips")
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

  /// An envelope is stored as point rows, each relative to the one before: a ripple cut through
  /// a 200-point envelope writes the few points it changes (a session of the old text row held
  /// every point twice), and undoes and redoes exactly.
  @Test func aRippleCutWritesOnlyTheEnvelopePointsItChanges() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("envelope.tape")
    let store = try TimelineStore.create(at: path)
    let envelope = Envelope(
      points: (0..<200).map {
        Envelope.Point(time: FramePosition($0 * 4_800), decibels: $0 % 2 == 0 ? -6 : -3)
      })
    try Self.longTrack(store, count: 30)
    try store.commit(label: "Envelope") { p, _ in try p.setEnvelope(Track.ID(1), envelope) }
    let before = store.snapshot.project
    let cut = try store.commit(label: "Cut") { p, ids in
      try p.cutRange(FrameRange(start: 100_000, count: 1_000), ripple: true) { ids.newClipID() }
    }
    let after = store.snapshot.project
    #expect(after.tracks[0].envelope == envelope.removing(FrameRange(start: 100_000, count: 1_000)))
    #expect(try store.undo().project == before)
    #expect(try store.redo().project == after)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    let stored = try queue.read { db in
      try Data.fetchOne(
        db, sql: "SELECT changeset FROM version WHERE id = ?", arguments: [cut.version])
    }
    try queue.close()
    var changes = NetChanges()
    try changes.append(changeset: Changeset(data: try #require(stored)))
    let points = changes.rows.keys.filter { $0.table == EnvelopePointRow.index }
    #expect(points.count <= 4, "\(points.count) point rows changed")
    let reopened = try TimelineStore.open(at: path)
    defer { try? reopened.close() }
    #expect(reopened.snapshot.project == after)
    #expect(try reopened.checkout(2).project.tracks[0].envelope == nil)
    #expect(try reopened.checkout(cut.version).project == after)
  }

  /// A project from before envelope points keeps its envelope as one text row, and versions
  /// that recorded that row as session changesets. It opens (the migration adds the point table
  /// and changes nothing else), the next envelope edit replaces the row with point rows in its
  /// version, and undo goes back through it and the old versions exactly.
  @Test func envelopeTextRowsOfOlderProjectsStayUndoable() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("old.tape")
    let (store, states) = try StoreFixture.populated(at: path)
    try store.close()
    let old = Envelope(points: [
      Envelope.Point(time: 0, decibels: -6), Envelope.Point(time: 48_000, decibels: 0),
    ])
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      // Version 5 as a Tape before envelope points wrote it: no point table, the envelope as
      // one text row, the version a session changeset.
      try db.execute(sql: "DROP TABLE envelope_point")
      try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v6'")
      let changeset = try SessionCalls.capture(
        on: connection(db), tables: Schema.trackedTables.filter { $0 != Schema.envelopePointTable }
      ) {
        try db.execute(
          sql: "INSERT INTO envelope (trackID, points) VALUES (1, ?)", arguments: [old.storageText])
      }
      let jump = try VersionGraph.jump(forChildOf: VersionGraph.node(4, db), db)
      try db.execute(
        sql: """
          INSERT INTO version (id, parent, jump, depth, label, createdAt, changeset, revision)
          VALUES (5, 4, ?, 4, 'Envelope', 0, ?, 10)
          """, arguments: [jump, changeset.data])
      try db.execute(sql: "UPDATE head SET version = 5, tip = 5, revision = 10")
    }
    var withEnvelope = states[3]
    withEnvelope.tracks[0].envelope = old
    let reopened = try TimelineStore.open(at: path)
    defer { try? reopened.close() }
    #expect(reopened.snapshot.project == withEnvelope)
    let rows = {
      try queue.read { db in
        [
          try Int.fetchOne(db, sql: "SELECT count(*) FROM envelope"),
          try Int.fetchOne(db, sql: "SELECT count(*) FROM envelope_point"),
        ]
      }
    }
    #expect(try rows() == [1, 0])
    try reopened.commit(label: "Cut") { p, ids in
      try p.cutRange(FrameRange(start: 12_000, count: 12_000), ripple: true) { ids.newClipID() }
    }
    let cut = reopened.snapshot.project
    #expect(cut.tracks[0].envelope == old.removing(FrameRange(start: 12_000, count: 12_000)))
    #expect(try rows() == [0, cut.tracks[0].envelope?.points.count])
    #expect(try reopened.undo().project == withEnvelope)
    #expect(try rows() == [1, 0])
    #expect(try reopened.undo().project == states[3])
    #expect(try rows() == [0, 0])
    #expect(try reopened.checkout(6).project == cut)
    try queue.close()
    let again = try TimelineStore.open(at: path)
    defer { try? again.close() }
    #expect(again.snapshot.project == cut)
    #expect(try again.checkout(5).project == withEnvelope)
  }

  /// The workload, shortened: 4 tracks of 75 clips of 8 s with 20-point envelopes
  /// (plateaus joined by ramps), 150 ripple cuts of 0.3 s at seeded places. The versions
  /// average under 4 KB (before, tens of KB: every envelope as text, twice, growing by two
  /// points a cut, and 48 bytes per moved clip) and the envelopes stay near their 20 points plus
  /// two per cut inside a ramp; undoing every cut gives the project back.
  @Test func rippleCutsKeepHistorySmall() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("ripple.tape")
    let store = try TimelineStore.create(at: path)
    let rate: Int64 = 48_000
    var points = [Envelope.Point(time: 0, decibels: -20)]
    for (i, gain) in [-2.0, -6, -3, -9, -4, -1, -7, -5, -8, -3].enumerated() {
      points.append(Envelope.Point(time: FramePosition((60 * Int64(i) + 4) * rate), decibels: gain))
      points.append(
        Envelope.Point(time: FramePosition((60 * Int64(i) + 56) * rate), decibels: gain))
    }
    let envelope = Envelope(points: Array(points.prefix(20)))
    try store.commit(label: "Build") { _, ids in
      let source = StoreFixture.source(&ids, seconds: 10)
      var commands: [Command] = [.setSource(source)]
      for _ in 0..<4 {
        let clips = (0..<Int64(75)).map { i in
          Clip(
            id: ids.newClipID(), source: source.id, timelineStart: FramePosition(i * 8 * rate),
            sourceRange: FrameRange(start: 0, count: FrameCount(8 * rate)))
        }
        commands.append(
          .setTrack(Track(id: ids.newTrackID(), name: "T", envelope: envelope, clips: clips)))
      }
      return commands
    }
    let built = store.snapshot.project
    var rng = SeededGenerator(seed: 23)
    var length = 600 * rate
    let cuts = 150
    for _ in 0..<cuts {
      let start = Int64.random(in: 0..<(length - 14_400), using: &rng)
      try store.commit(label: "Cut") { project, ids in
        try project.cutRange(FrameRange(start: FramePosition(start), count: 14_400), ripple: true) {
          ids.newClipID()
        }
      }
      length -= 14_400
    }
    let envelopePoints = store.snapshot.project.tracks.map { $0.envelope?.points.count ?? 0 }
    #expect(envelopePoints.allSatisfy { $0 <= 20 + 2 * 40 }, "\(envelopePoints)")
    #expect(try store.undo(steps: cuts).project == built)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    let bytes = try queue.read { db in
      try Int.fetchOne(db, sql: "SELECT sum(length(changeset)) FROM version WHERE depth > 1") ?? 0
    }
    #expect(bytes / cuts < 4_000, "\(bytes / cuts) bytes per cut")
  }
}
