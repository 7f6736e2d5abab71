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
  /// tracks, side chains, automation, effects' files): 1,200 steps, as effect edits are about
  /// one step in sixty (seed 6's walk never keyed an effect, where 5's and 7's do).
  @Test(arguments: [5, 7]) func anEditsRowsAreWhatTheSessionRecordsAndReadBackAsTheEdit(
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
      for step in 0..<1_200 {
        let commands =
          (try? RandomSequenceTests.randomEdit(held.project, &ids, &rng)) ?? []
        let (new, changed) = try held.project.applyingWithChanges(commands)
        let (rows, positions, points, placements) = RowWriter.changes(
          from: held, to: new, changed: changed)
        var written = NetChanges()
        let changeset = try SessionCalls.capture(
          on: connection(db), tables: Schema.trackedTables
        ) { written = try RowWriter.applyRecording(rows, sessionAbove: .max, db) }
        var recorded = NetChanges()
        try recorded.append(changeset: changeset)
        #expect(recorded.rows == rows.rows, "step \(step)")
        #expect(written.rows == recorded.rows, "step \(step)")
        tablesSeen.formUnion(rows.rows.keys.map(\.table))

        held = HeldProject(
          project: new, positions: positions, points: points,
          clips: held.clips.updating(placements))
        let loaded = try SnapshotReader.load(db)
        #expect(loaded.project == new, "step \(step)")
        #expect(loaded.positions == positions, "step \(step)")
        #expect(loaded.points == points, "step \(step)")
        #expect(loaded.clips == held.clips, "step \(step)")
      }
    }
    // Every table but the project row, which no edit changes, and the envelope text rows of
    // older projects, which edits only remove (``anEditFindsItsRowsByKeyAnd…``).
    #expect(tablesSeen == Set(1..<Schema.trackedTables.count).subtracting([EnvelopeRow.index]))
  }

  /// An edit finds its rows by key, so rows the snapshot reads normalized, or that were edited
  /// behind the store's back, do not stop it; the session records what the file held, and undo
  /// restores exactly that. (A 0 dB master row, as files made before "0 dB is no row" have;
  /// an envelope text row as files made before envelope points have, its text not in its
  /// canonical form, which the edit replaces with point rows; a clip gain changed by hand.)
  @Test func anEditFindsItsRowsByKeyAndUndoRestoresWhatTheFileHeld() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (first, _) = try StoreFixture.populated(at: path)
    try first.close()
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      try db.execute(sql: "INSERT INTO master (id, gainDB) VALUES (1, 0)")
      try db.execute(sql: "INSERT INTO envelope (trackID, points) VALUES (1, '0:-6')")
      try db.execute(sql: "UPDATE clip SET gainDB = -1 WHERE id = 1")
    }
    let store = try TimelineStore.open(at: path)
    try store.commit(label: "Mix") { p, _ in
      try p.setMasterGain(Gain(decibels: -3))
        + p.setEnvelope(Track.ID(1), Envelope(points: [Envelope.Point(time: 0, decibels: -9)]))
        + p.setClipGain(Clip.ID(1), Gain(decibels: -9))
    }
    let stored = {
      try queue.read { db in
        [
          try String.fetchOne(db, sql: "SELECT gainDB FROM master"),
          try String.fetchOne(db, sql: "SELECT points FROM envelope"),
          try String.fetchOne(db, sql: "SELECT gainDB FROM clip WHERE id = 1"),
          try String.fetchOne(
            db, sql: "SELECT group_concat(gap || ':' || gainDB) FROM envelope_point"),
        ]
      }
    }
    #expect(try stored() == ["-3.0", nil, "-9.0", "0:-9.0"])
    try store.undo()
    #expect(try stored() == ["0.0", "0:-6", "-1.0", nil])
    #expect(store.snapshot.project.tracks[0].envelope?.storageText == "0:-6.0")
    try store.redo()
    #expect(try stored() == ["-3.0", nil, "-9.0", "0:-9.0"])
    #expect(try TimelineStore.open(at: path).snapshot == store.snapshot)
  }

  /// Where the file holds a row otherwise than the snapshot reads it (a 0 dB master row, an
  /// envelope text row not in canonical form, a clip gain changed and a clip removed behind
  /// the store's back), an edit records what the file held, exactly as SQLite's session
  /// records the same writes.
  @Test func anEditRecordsWhatTheFileHeldAsTheSessionDoes() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (first, _) = try StoreFixture.populated(at: path)
    try first.close()
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      let held = try SnapshotReader.load(db)
      try db.execute(sql: "INSERT INTO master (id, gainDB) VALUES (1, 0)")
      try db.execute(sql: "INSERT INTO envelope (trackID, points) VALUES (1, '0:-6')")
      try db.execute(sql: "UPDATE clip SET gainDB = -1 WHERE id = 1")
      try db.execute(sql: "DELETE FROM clip WHERE id = 2")
      let commands =
        try held.project.setMasterGain(Gain(decibels: -3))
        + held.project.setEnvelope(
          Track.ID(1), Envelope(points: [Envelope.Point(time: 0, decibels: -9)]))
        + held.project.setClipGain(Clip.ID(1), Gain(decibels: -9))
        + held.project.removeClip(Clip.ID(2), ripple: false)
      let (new, changed) = try held.project.applyingWithChanges(commands)
      let rows = RowWriter.changes(from: held, to: new, changed: changed).rows
      var written = NetChanges()
      let changeset = try SessionCalls.capture(
        on: connection(db), tables: Schema.trackedTables
      ) { written = try RowWriter.applyRecording(rows, sessionAbove: .max, db) }
      var recorded = NetChanges()
      try recorded.append(changeset: changeset)
      #expect(written.rows == recorded.rows)
      // The file's values, not the snapshot's: the session's old values differ from the edit's.
      #expect(recorded.rows != rows.rows)
      let master = NetChanges.Key(table: MasterRow.index, id: 1)
      #expect(written.rows[master]?.kind == .update)
      let removed = NetChanges.Key(table: ClipRow.index, id: 2)
      #expect(written.rows[removed] == nil)
    }
  }

  /// Text is compared by its bytes: a name or path written the other Unicode way (`é` as one
  /// code point or as `e` + U+0301, equal to Swift's `==`) is a change, written and recorded,
  /// and the snapshot stays what the file holds.
  @Test func textThatDiffersOnlyInNormalizationIsAChange() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
    #expect(composed == decomposed)
    try store.commit(label: "Name") { p, _ in try p.setTrack(Track.ID(1), name: composed) }
    let renamed = try store.commit(label: "Rename") { p, _ in
      try p.setTrack(Track.ID(1), name: decomposed, gain: Gain(decibels: -2))
    }
    #expect(renamed.changed.tracks == [Track.ID(1)])
    var source = try #require(store.snapshot.project.source(Source.ID(1)))
    source.path = RawPath("/audio/\(decomposed).wav")
    try store.commit(label: "Relink") { _, _ in [.setSource(source)] }
    source.path = RawPath("/audio/\(composed).wav")
    let relinked = try store.commit(label: "Relink back") { _, _ in [.setSource(source)] }
    #expect(relinked.changed.sources == [Source.ID(1)])
    let bytes = try DatabaseQueue(path: path).read { db in
      (
        try Data.fetchOne(db, sql: "SELECT CAST(name AS BLOB) FROM track WHERE id = 1"),
        try Data.fetchOne(db, sql: "SELECT CAST(path AS BLOB) FROM source WHERE id = 1")
      )
    }
    #expect(bytes.0 == Data(decomposed.utf8))
    #expect(bytes.1 == Data("/audio/\(composed).wav".utf8))
    // The next rename in the same process finds the row as the snapshot has it.
    try store.commit(label: "Rename again") { p, _ in try p.setTrack(Track.ID(1), name: composed) }
    #expect(try TimelineStore.open(at: path).snapshot == store.snapshot)
    try store.undo(steps: 5)
    #expect(try TimelineStore.open(at: path).snapshot == store.snapshot)
  }

  /// If the data no longer matches what history recorded (edited behind the store's back), an
  /// undo refuses instead of silently corrupting the project, and changes nothing.
  @Test func aDivergedRowStopsUndoAndChangesNothing() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.commit(label: "Gain") { p, _ in try p.setClipGain(Clip.ID(1), Gain(decibels: -9)) }
    try store.close()
    try Self.expectUndoStopsAfterTampering(path, "UPDATE clip SET gainDB = -1 WHERE id = 1")
  }

  /// Runs `tampering` on the closed project at `path` (an edit behind Tape's back), then
  /// expects an undo to stop with ``StoreError/historyDiverged`` and leave the project, in
  /// memory and in the file, as it was.
  static func expectUndoStopsAfterTampering(
    _ path: String, _ tampering: String, arguments: StatementArguments = []
  ) throws {
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in try db.execute(sql: tampering, arguments: arguments) }
    try queue.close()
    let reopened = try TimelineStore.open(at: path)
    let before = reopened.snapshot
    #expect(throws: StoreError.historyDiverged) { try reopened.undo() }
    #expect(reopened.snapshot == before)
    try reopened.close()
    let again = try TimelineStore.open(at: path)
    #expect(again.snapshot == before)
    try again.close()
  }

  /// A history move of hundreds of rows (clips moved between tracks, renamed, refaded), more
  /// than ``TimelineStore/concurrentMoveRows``, so its snapshot is built on another thread while
  /// its rows are written: the snapshot after undo, redo and checkout equals the one a fresh
  /// open reads from the file, and equals the project recorded at that version; a diverged row
  /// still stops such a move and changes nothing.
  @Test func aLargeMoveBuildsTheSameSnapshotAsTheFile() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("large.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    let clips = 612
    #expect(clips > TimelineStore.concurrentMoveRows)
    try store.commit(label: "Many clips") { _, ids in
      var commands: [Command] = []
      for index in 0..<clips {
        let clip = Clip(
          id: ids.newClipID(), source: Source.ID(1),
          timelineStart: FramePosition(Int64(index) * 1_000),
          sourceRange: FrameRange(start: FramePosition(Int64(index)), count: 900),
          fadeIn: index % 3 == 0 ? Fade(length: 10) : .none,
          name: index % 50 == 0 ? "clip-\(index)" : nil)
        commands.append(.setClip(clip, track: Track.ID(Int64(1 + index % 2))))
      }
      return commands
    }
    let placed = store.snapshot
    // Every clip changes: half of them to the other track and later, all of them in gain, some
    // lose their fade or name.
    try store.commit(label: "Change all") { project, _ in
      project.allClips.map { clip in
        var changed = clip
        changed.gain = Gain(decibels: -Double(clip.id.rawValue % 7))
        if clip.id.rawValue % 2 == 0 {
          changed.timelineStart = FramePosition(changed.timelineStart.frames + 123)
        }
        if clip.id.rawValue % 5 == 0 { changed.fadeIn = .none }
        if clip.id.rawValue % 100 == 4 { changed.name = nil }
        let track = project.clip(clip.id)?.track.id ?? Track.ID(1)
        let other = track == Track.ID(1) ? Track.ID(2) : Track.ID(1)
        return .setClip(changed, track: clip.id.rawValue % 2 == 0 ? other : track)
      }
    }
    let changedAll = store.snapshot
    func expectTheFileHolds(_ expected: StoreSnapshot) throws {
      #expect(store.snapshot == expected)
      let fresh = try TimelineStore.open(at: path, access: .read)
      #expect(fresh.snapshot.project == expected.project)
      try fresh.close()
    }
    try store.undo()
    try expectTheFileHolds(StoreSnapshot(version: placed.version, project: placed.project))
    try store.redo()
    try expectTheFileHolds(changedAll)
    try store.checkout(placed.version - 1)
    #expect(store.snapshot.project.clipCount == 3)
    try store.checkout(changedAll.version)
    try expectTheFileHolds(changedAll)
    try store.close()

    try Self.expectUndoStopsAfterTampering(
      path, "UPDATE clip SET gainDB = 5 WHERE id = ?", arguments: [clips / 2])
  }
}
