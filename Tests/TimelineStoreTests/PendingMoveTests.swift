import Foundation
import GRDB
import Synchronization
import Testing
import Timeline

@testable import TimelineStore

/// History moves kept pending (``PendingMove``): the tables keep an earlier version's rows, and
/// one row holds the net change to the head. Each store here keeps every move pending
/// (`deferredMoveRows: 1`) so that a move of one row shows it; `RowWriterTests` covers a move
/// past the standard threshold.
@Suite("Pending history moves")
struct PendingMoveTests {
  /// The project at `path` (StoreFixture's three clips), reopened to keep every move pending
  /// (or, with `deferredMoveRows` `.max`, none).
  static func store(at path: String, deferredMoveRows: Int = 1) throws -> TimelineStore {
    let (store, _) = try StoreFixture.populated(at: path)
    try store.close()
    return try TimelineStore.open(
      at: path, historyBlocks: .standard, deferredMoveRows: deferredMoveRows)
  }

  /// Commits `count` new clips on track 1, after the fixture's (900 frames each, 1,000 apart),
  /// clip `index` at `gain(index)`, in one version labelled "Many clips".
  static func addClips(
    _ count: Int, to store: TimelineStore, gain: @escaping (Int) -> Gain = { _ in .unity }
  ) throws {
    try store.commit(label: "Many clips") { _, ids in
      (0..<count).map { index in
        .setClip(
          Clip(
            id: ids.newClipID(), source: Source.ID(1),
            timelineStart: FramePosition(200_000 + Int64(index) * 1_000),
            sourceRange: FrameRange(start: FramePosition(Int64(index)), count: 900),
            gain: gain(index)),
          track: Track.ID(1))
      }
    }
  }

  /// Sets clip `clip`'s gain to `decibels` in one commit (an edit of one row).
  static func setGain(of clip: Int64, to decibels: Double, in store: TimelineStore) throws {
    try store.commit(label: "Gain \(clip)") { project, _ in
      try project.setClipGain(Clip.ID(clip), Gain(decibels: decibels))
    }
  }

  /// The project at `path` with clip 1 at -9 dB, then clip 2 at -1 dB, then that undone: a
  /// pending move of one row, on a store that keeps every move pending.
  static func twoGainsAndAnUndo(at path: String) throws -> TimelineStore {
    let store = try Self.store(at: path)
    try setGain(of: 1, to: -9, in: store)
    try setGain(of: 2, to: -1, in: store)
    try store.undo()
    return store
  }

  /// What the file holds, read by its own connection: clip 1's gain row, whether a move is
  /// pending, and the project a fresh read-only store reads.
  static func file(_ path: String) throws -> (gain: Double?, pending: Bool, project: Project) {
    let queue = try DatabaseQueue(path: path)
    let (gain, pending) = try queue.read { db in
      (
        try Double.fetchOne(db, sql: "SELECT gainDB FROM clip WHERE id = 1"),
        try Int.fetchOne(db, sql: "SELECT count(*) FROM pending_move") == 1
      )
    }
    try queue.close()
    let reader = try TimelineStore.open(at: path, access: .read)
    defer { try? reader.close() }
    return (gain, pending, reader.snapshot.project)
  }

  @Test func aPendingMoveLeavesTheRowsAndEveryReaderSeesTheHead() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path)
    defer { try? store.close() }
    try Self.setGain(of: 1, to: -9, in: store)
    let edited = store.snapshot

    try store.undo()
    let undone = store.snapshot
    #expect(undone.project.clip(Clip.ID(1))?.clip.gain == .unity)
    var file = try Self.file(path)
    #expect(file.gain == -9, "the undo wrote no clip row")
    #expect(file.pending)
    #expect(file.project == undone.project)
    #expect(try store.project(at: edited.version) == edited.project)
    let report = try store.verify()
    #expect(report.isOK)
    #expect(report.pendingMoveRows == 1)
    #expect(report.pendingMoveMatches)

    // Redo composes with the pending undo: nothing is left to write.
    try store.redo()
    file = try Self.file(path)
    #expect(!file.pending)
    #expect(file.gain == -9)
    #expect(file.project == edited.project)

    // An edit writes the pending move to the rows first, then its own.
    try store.undo()
    try Self.setGain(of: 2, to: -1, in: store)
    file = try Self.file(path)
    #expect(!file.pending)
    #expect(file.gain == 0)
    #expect(file.project == store.snapshot.project)
    #expect(file.project.clip(Clip.ID(2))?.clip.gain == Gain(decibels: -1))
  }

  /// Checking out a far version and back writes no tracked row: the clip table reads the same
  /// bytes, and nothing stays pending.
  @Test func thereAndBackWritesNoRow() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path)
    defer { try? store.close() }
    let head = store.snapshot
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    func clipRows() throws -> [[DatabaseValue]] {
      try queue.read { db in
        try Row.fetchAll(db, sql: "SELECT * FROM clip ORDER BY id").map { Array($0.databaseValues) }
      }
    }
    let before = try clipRows()
    try store.checkout(1)
    #expect(store.snapshot.project.clipCount == 0)
    #expect(try clipRows() == before)
    try store.checkout(head.version)
    #expect(try clipRows() == before)
    #expect(
      try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM pending_move") } == 0)
    #expect(store.snapshot == head)
  }

  /// A move back to the version the rows hold takes the pending change turned around (no
  /// history merged) and, in the store that made it pending, the snapshot it held there; in
  /// another store (which read the change from the file) it applies the change turned around.
  /// Either way the snapshot is what the file holds, and nothing is left pending.
  @Test func aMoveBackToWhatTheRowsHoldBuildsTheSameSnapshot() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path)
    defer { try? store.close() }
    try Self.setGain(of: 1, to: -9, in: store)
    try Self.setGain(of: 2, to: -1, in: store)
    let head = store.snapshot
    try store.checkout(1)
    try store.checkout(head.version)
    #expect(store.snapshot == head)
    var file = try Self.file(path)
    #expect(!file.pending)
    #expect(file.project == head.project)
    // Two moves and back: the snapshot kept is the one at the base, not the one between.
    try store.checkout(1)
    try store.checkout(2)
    try store.checkout(head.version)
    #expect(store.snapshot == head)

    // Another writer's move in between: the kept change (and snapshot) no longer stand for
    // the row, which is read again.
    try store.checkout(1)
    let other = try TimelineStore.open(at: path, historyBlocks: .standard, deferredMoveRows: 1)
    defer { try? other.close() }
    try other.checkout(2)
    #expect(try Self.file(path).pending)
    try store.checkout(head.version)
    #expect(store.snapshot == head)
    file = try Self.file(path)
    #expect(!file.pending)
    #expect(file.project == head.project)
    #expect(try store.verify().isOK)
    #expect(try other.undo().version == head.version - 1)
    #expect(other.snapshot.project == (try store.project(at: head.version - 1)))
  }

  /// A row edited behind Tape's back stops a pending move as it stops one that writes: before
  /// the move (the move reads the rows it covers), and after it (the edit that folds it finds
  /// the row changed). Either way nothing changes, in memory or in the file.
  @Test func aRowChangedBehindTapesBackStopsThePendingMove() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path)
    try Self.setGain(of: 1, to: -9, in: store)
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    func tamper(_ gain: Double) throws {
      try queue.write { db in
        try db.execute(sql: "UPDATE clip SET gainDB = ? WHERE id = 1", arguments: [gain])
      }
    }

    // Before the move: the undo reads clip 1 and finds what history did not record.
    try tamper(-4)
    let head = store.snapshot
    #expect(throws: StoreError.historyDiverged) { try store.undo() }
    #expect(store.snapshot == head)
    #expect(try Self.file(path).pending == false)
    try tamper(-9)

    // After the move: the pending undo still reads as the head, and the edit that would fold
    // it fails on the changed row, changing nothing.
    try store.undo()
    let undone = store.snapshot
    try tamper(-5)
    #expect(throws: StoreError.historyDiverged) {
      try Self.setGain(of: 2, to: -1, in: store)
    }
    #expect(store.snapshot == undone)
    // `verify` finds it too.
    let report = try store.verify()
    #expect(report.pendingMoveRows == 1)
    #expect(!report.pendingMoveMatches)
    #expect(!report.isOK)
    // A further move checks the row against what the pending move expects there.
    #expect(throws: StoreError.historyDiverged) { try store.redo() }
    #expect(store.snapshot == undone)
    let file = try Self.file(path)
    #expect(file.pending)
    #expect(file.gain == -5)
    try store.close()

    // Put back, the pending move folds at the next edit.
    try tamper(-9)
    let again = try TimelineStore.open(at: path)
    #expect(again.snapshot.project == undone.project)
    try Self.setGain(of: 2, to: -1, in: again)
    try again.close()
    let folded = try Self.file(path)
    #expect(!folded.pending)
    #expect(folded.gain == 0)
  }

  /// Another process reads through a pending move, and its scoped edit from the shell meets it
  /// (no writer's close folded it first) and folds it before editing; the store that made the
  /// move catches up with that edit. (A store that read its own close's fold passed before the
  /// review: the second store was a writer, whose close folded.)
  @Test func anotherProcessReadsAndEditsThroughAPendingMove() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path)
    defer { try? store.close() }
    try Self.setGain(of: 1, to: -9, in: store)
    try store.undo()
    let undone = store.snapshot

    // Read-only: its close folds nothing (a writer's close would, before the scoped edit).
    let other = try TimelineStore.open(at: path, access: .read)
    #expect(other.snapshot == undone)
    try other.close()
    #expect(try Self.file(path).pending)

    let editor = try ScopedEditor(at: path)
    let result = try editor.commit(scope: EditScope(clips: [Clip.ID(3)]), label: "Gain 3") {
      part, _ in try part.setClipGain(Clip.ID(3), Gain(decibels: -2))
    }
    guard case .committed = result else {
      Issue.record("the scoped edit needed the whole project: \(result)")
      return
    }
    // Before the editor's close, which would fold too.
    let file = try Self.file(path)
    #expect(!file.pending)
    #expect(file.gain == 0)
    #expect(file.project.clip(Clip.ID(3))?.clip.gain == Gain(decibels: -2))
    try editor.close()

    // The first store's next write catches up with the scoped edit first.
    try Self.setGain(of: 2, to: -1, in: store)
    #expect(store.snapshot.project.clip(Clip.ID(3))?.clip.gain == Gain(decibels: -2))
    #expect(store.snapshot.project.clip(Clip.ID(1))?.clip.gain == .unity)
    #expect(try Self.file(path).project == store.snapshot.project)
  }

  /// Closing a store writes its pending move to the rows.
  @Test func closingFoldsThePendingMove() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path)
    try Self.setGain(of: 1, to: -9, in: store)
    try store.checkout(2)
    let moved = store.snapshot
    #expect(try Self.file(path).pending)
    try store.close()
    let file = try Self.file(path)
    #expect(!file.pending)
    #expect(file.gain == nil, "version 2 has no clips")
    #expect(file.project == moved.project)
  }

  /// A move covering most of a table's rows (here all 4,200 clips come or go) reads the table
  /// once instead of each row by key (``RowWriter/scanFrom``), and finds what a lookup finds:
  /// a changed value, a missing row and a row where none should be each stop the move.
  @Test func aMoveOfMostOfATableChecksItWhole() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("many.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    let clips = 4_200
    #expect(clips >= RowWriter.scanFrom)
    try Self.addClips(clips, to: store) { Gain(decibels: -Double($0 % 5)) }
    let many = store.snapshot
    try store.checkout(many.version - 1)
    let before = store.snapshot
    #expect(try Self.file(path).pending)
    #expect(try Self.file(path).project == before.project)
    try store.checkout(many.version)
    #expect(try Self.file(path).pending == false)
    try store.close()

    /// A copy of the project with `tampering` run on it behind Tape's back, then moved to
    /// `version`: the move must stop and leave the copy as it was.
    func expectStopped(
      _ name: String, at start: Int64, _ tampering: String, to version: Int64
    )
      throws
    {
      let copy = dir.path(name)
      try FileManager.default.copyItem(atPath: path, toPath: copy)
      let opened = try TimelineStore.open(at: copy)
      if opened.snapshot.version != start { try opened.checkout(start) }
      try opened.close()
      let queue = try DatabaseQueue(path: copy)
      try queue.write { db in try db.execute(sql: tampering) }
      try queue.close()
      let tampered = try TimelineStore.open(at: copy)
      let head = tampered.snapshot
      #expect(throws: StoreError.historyDiverged, "\(name)") { try tampered.checkout(version) }
      #expect(tampered.snapshot == head)
      try tampered.close()
      #expect(try Self.file(copy).pending == false, "\(name)")
    }
    let last = Int64(3 + clips)
    try expectStopped(
      "changed.tape", at: many.version, "UPDATE clip SET gainDB = 3 WHERE id = 2000",
      to: before.version)
    try expectStopped(
      "missing.tape", at: many.version, "DELETE FROM clip WHERE id = \(last)",
      to: before.version)
    try expectStopped(
      "planted.tape", at: before.version,
      "INSERT INTO clip SELECT \(last), trackID, sourceID, timelineStart, sourceStart, length, gainDB, fadeInLength, fadeInCurve, fadeOutLength, fadeOutCurve FROM clip WHERE id = 1",
      to: many.version)
  }

  /// A move over a pending one, both covering most of a table (every clip's gain, twice): the
  /// table is read once, each row compared with what the pending change expects of it (it
  /// holds the head's rows, not the move's old values); one changed behind Tape's back stops
  /// the move.
  @Test func aMoveOverAPendingOneChecksTheTableWhole() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("many.tape")
    let store = try Self.store(at: path)
    defer { try? store.close() }
    let clips = 4_200
    try Self.addClips(clips, to: store)
    let ids = store.snapshot.project.allClips.map(\.id)
    let first = store.snapshot
    for decibels in [-3.0, -6.0] {
      try store.commit(label: "All at \(decibels) dB") { project, _ in
        try ids.flatMap { id in try project.setClipGain(id, Gain(decibels: decibels)) }
      }
    }
    let head = store.snapshot
    try store.checkout(head.version - 1)
    #expect(try Self.file(path).pending)
    let between = store.snapshot
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    let tampered = ids[2_000].rawValue
    try queue.write { db in
      try db.execute(sql: "UPDATE clip SET gainDB = 7 WHERE id = ?", arguments: [tampered])
    }
    #expect(throws: StoreError.historyDiverged) { try store.checkout(first.version) }
    #expect(store.snapshot == between)
    try queue.write { db in
      try db.execute(sql: "UPDATE clip SET gainDB = -6 WHERE id = ?", arguments: [tampered])
    }
    try store.checkout(first.version)
    #expect(store.snapshot.project == first.project)
    #expect(try Self.file(path).project == first.project)
    #expect(try store.verify().isOK)
  }

  /// A large move whose rows check out but whose recorded values cannot make a project (a
  /// damaged version: a fade longer than its clip) fails after its pending row was written
  /// and its snapshot built on another thread: the transaction is rolled back, and nothing
  /// changes, in memory or in the file.
  @Test func aMoveWhoseSnapshotCannotBeBuiltChangesNothing() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("damaged.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    let clips = 600
    try Self.addClips(clips, to: store)
    try store.commit(label: "Gain all") { project, _ in
      project.allClips.map { clip in
        var quieter = clip
        quieter.gain = Gain(decibels: -3)
        return .setClip(quieter, track: project.clip(clip.id)?.track.id ?? Track.ID(1))
      }
    }
    let head = store.snapshot
    try store.close()

    // The head version's change, damaged: each clip's fade-in before it was impossible. Its
    // values after it (what the rows hold) are as recorded, so the rows check out.
    let fadeIn = try #require(Schema.trackedColumns[ClipRow.index].firstIndex(of: "fadeInLength"))
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      let data = try #require(
        try Data.fetchOne(
          db, sql: "SELECT changeset FROM version WHERE id = ?", arguments: [head.version]))
      var recorded = NetChanges()
      try recorded.append(changeset: Changeset(data: data))
      var rows = recorded.rows
      #expect(rows.count >= TimelineStore.standardDeferredMoveRows)
      for (key, row) in rows where key.table == ClipRow.index && row.kind == .update {
        let stored = try #require(
          try Int64.fetchOne(
            db, sql: "SELECT fadeInLength FROM clip WHERE id = ?", arguments: [key.id]))
        rows[key]?.old[fadeIn] = .integer(100_000_000)
        rows[key]?.new[fadeIn] = .integer(stored)
      }
      try db.execute(
        sql: "UPDATE version SET changeset = ? WHERE id = ?",
        arguments: [NetChanges(rows: rows).packed(), head.version])
    }
    try queue.close()

    let reopened = try TimelineStore.open(at: path)
    #expect(reopened.snapshot == head)
    #expect {
      try reopened.undo()
    } throws: { error in
      guard case StoreError.corrupt = error else { return false }
      return true
    }
    #expect(reopened.snapshot == head)
    try reopened.close()
    let file = try Self.file(path)
    #expect(!file.pending)
    #expect(file.project == head.project)
  }

  /// Runs `sql` on the project at `path` behind Tape's back.
  static func tamper(_ path: String, _ sql: String) throws {
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in try db.execute(sql: sql) }
    try queue.close()
  }

  /// A move over a row the pending change covers checks every column either change recorded:
  /// those the pending change recorded as it found them, the others as the new move found
  /// them. Here the pending undo recorded clip 1's start only; its gain, changed behind Tape's
  /// back, must stop the next undo (which changes the gain), as it stops a move that writes
  /// its rows (`deferredMoveRows` `.max`, the control). From the review of this change: the
  /// check took the pending change's columns alone.
  @Test(arguments: [1, Int.max])
  func aColumnOnlyTheNewMoveRecordsIsChecked(deferredMoveRows: Int) throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path, deferredMoveRows: deferredMoveRows)
    defer { try? store.close() }
    try Self.setGain(of: 1, to: -9, in: store)
    try store.commit(label: "Move") { p, _ in try p.moveClip(Clip.ID(1), to: 5_000, track: nil) }
    try store.undo()
    let head = store.snapshot
    try Self.tamper(path, "UPDATE clip SET gainDB = -4 WHERE id = 1")
    #expect(throws: StoreError.historyDiverged) { try store.undo() }
    #expect(store.snapshot == head)
    // Put back, the undo goes through, and the edit after it folds cleanly.
    try Self.tamper(path, "UPDATE clip SET gainDB = -9 WHERE id = 1")
    try store.undo()
    try Self.setGain(of: 2, to: -1, in: store)
    #expect(try Self.file(path).project == store.snapshot.project)
  }

  /// The same with a pending update, then a move that deletes the row: the delete's old
  /// values (every column) must be found, not only the column the pending update recorded.
  @Test(arguments: [1, Int.max])
  func aPendingUpdateThenADeleteChecksEveryColumn(deferredMoveRows: Int) throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path, deferredMoveRows: deferredMoveRows)
    defer { try? store.close() }
    try store.commit(label: "Add") { _, ids in
      [
        .setClip(
          Clip(
            id: ids.newClipID(), source: Source.ID(1), timelineStart: 300_000,
            sourceRange: FrameRange(start: 0, count: 1_000)),
          track: Track.ID(1))
      ]
    }
    try Self.setGain(of: 4, to: -9, in: store)
    try store.undo()
    let head = store.snapshot
    try Self.tamper(path, "UPDATE clip SET timelineStart = 123 WHERE id = 4")
    #expect(throws: StoreError.historyDiverged) { try store.undo() }
    #expect(store.snapshot == head)
  }

  /// A pending row whose change is damaged (bytes that are no change; a length no memory
  /// holds, which used to trap) is made again from history: every reader still reads the
  /// head, `verify` says the row is damaged, and the next edit folds what history says.
  @Test(arguments: ["x'ff00'", "x'01010105020380808080808080808001'"])
  func aDamagedPendingChangeIsMadeAgainFromHistory(blob: String) throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path)
    try Self.setGain(of: 1, to: -9, in: store)
    try store.undo()
    let undone = store.snapshot
    try Self.tamper(path, "UPDATE pending_move SET changes = \(blob)")
    #expect(try Self.file(path).project == undone.project)
    let report = try store.verify()
    #expect(report.pendingMoveRows == 1)
    #expect(!report.pendingMoveMatches)
    #expect(!report.isOK)
    try Self.setGain(of: 2, to: -1, in: store)
    let file = try Self.file(path)
    #expect(!file.pending)
    #expect(file.gain == 0)
    #expect(file.project == store.snapshot.project)
    #expect(try store.verify().isOK)
    try store.close()
  }

  /// A file whose pending row's table was dropped or renamed behind Tape's back is damaged,
  /// not a file made before the table: its rows may hold an earlier version than the head,
  /// and nothing says which. Every store refuses it (reading the rows as the head would show
  /// the wrong project, and an edit on them would record changes from it), and nothing
  /// changes. (Both used to read the rows as the head.)
  @Test(arguments: [
    "DROP TABLE pending_move", "ALTER TABLE pending_move RENAME TO pending_move_old",
  ])
  func aMissingPendingMoveTableIsDamage(tampering: String) throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    // Kept open, as by a process that was stopped: its close would fold.
    let store = try Self.twoGainsAndAnUndo(at: path)
    defer { try? store.close() }
    try Self.tamper(path, tampering)
    let missing = StoreError.corrupt(detail: "the pending_move table is missing")
    #expect(throws: missing) { try TimelineStore.open(at: path, access: .read) }
    #expect(throws: missing) { try TimelineStore.open(at: path) }
    let editor = try ScopedEditor(at: path, historyBlocks: .standard)
    defer { try? editor.close() }
    #expect(throws: missing) {
      try editor.commit(scope: EditScope(clips: [Clip.ID(3)]), label: "Gain 3") { project, _ in
        try project.setClipGain(Clip.ID(3), Gain(decibels: -3))
      }
    }
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    // The rows still hold the version before the undo: clip 2 at -1 dB.
    #expect(
      try queue.read { db in try Double.fetchOne(db, sql: "SELECT gainDB FROM clip WHERE id = 2") }
        == -1)
  }

  /// A pending change's bytes damaged so that they still decode, into another change (a
  /// gain's 8 bytes rewritten: the undo's new value, or the old value it expects of the row),
  /// are found by the row's checksum and made again from history: readers read the head, and
  /// the next edit folds what history says. (Before the checksum, a reader showed the other
  /// gain, and with the old value changed every edit failed as if a row had been edited
  /// behind Tape's back.)
  @Test(arguments: [-1.0, -4.0])
  func aPendingChangeDamagedIntoAnotherChangeIsMadeAgainFromHistory(gain: Double) throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path)
    defer { try? store.close() }
    try Self.setGain(of: 2, to: -1, in: store)
    try Self.setGain(of: 2, to: -4, in: store)
    try store.undo()
    let undone = store.snapshot
    let queue = try DatabaseQueue(path: path)
    let blob = try #require(
      try queue.read { db in try Data.fetchOne(db, sql: "SELECT changes FROM pending_move") })
    func bytes(_ value: Double) -> Data {
      withUnsafeBytes(of: value.bitPattern.littleEndian) { Data($0) }
    }
    let range = try #require(blob.range(of: bytes(gain)))
    var damaged = blob
    damaged.replaceSubrange(range, with: bytes(-3))
    try queue.write { db in
      try db.execute(sql: "UPDATE pending_move SET changes = ?", arguments: [damaged])
    }
    try queue.close()
    #expect(try Self.file(path).project == undone.project)
    #expect(try !store.verify().pendingMoveMatches)
    // Another process's edit (the store that moved keeps the change it wrote).
    let second = try TimelineStore.open(at: path, historyBlocks: .standard)
    defer { try? second.close() }
    try Self.setGain(of: 3, to: -2, in: second)
    let file = try Self.file(path)
    #expect(!file.pending)
    #expect(file.project == second.snapshot.project)
    #expect(try second.verify().isOK)
  }

  /// A pending move's `base` changed in its column to another version is taken from the
  /// stored change, which keeps it under its checksum: readers read the head, and a checkout
  /// of that version goes there (it used to take the way back to what the rows hold, the
  /// change turned around, and put the rows' version under that version's number). With the
  /// change damaged too, nothing says what the rows hold but the column, which they do not:
  /// the file is refused as damaged, and nothing changes.
  @Test(arguments: [false, true])
  func aPendingMovesBaseChangedBehindTapesBackIsFound(changesDamaged: Bool) throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.twoGainsAndAnUndo(at: path)
    defer { try? store.close() }
    let head = store.snapshot
    // Neither the version the rows hold (the head's child) nor the head.
    let other = head.version - 1
    let expected = try store.project(at: other)
    try Self.tamper(
      path,
      "UPDATE pending_move SET base = \(other)"
        + (changesDamaged ? ", changes = x'0102'" : ""))
    guard changesDamaged else {
      #expect(try Self.file(path).project == head.project)
      #expect(try !store.verify().pendingMoveMatches)
      let second = try TimelineStore.open(
        at: path, historyBlocks: .standard, deferredMoveRows: 1)
      defer { try? second.close() }
      try second.checkout(other)
      #expect(second.snapshot.project == expected)
      #expect(try Self.file(path).project == expected)
      return
    }
    let damaged = StoreError.corrupt(
      detail:
        "the pending history move is damaged, and the rows do not hold version \(other), which it names"
    )
    #expect(throws: damaged) { try TimelineStore.open(at: path, access: .read) }
    #expect(throws: damaged) { try TimelineStore.open(at: path) }
    #expect(throws: damaged) { try store.checkout(other) }
    #expect(store.snapshot == head)
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    #expect(
      try queue.read { db in try Double.fetchOne(db, sql: "SELECT gainDB FROM clip WHERE id = 2") }
        == -1)
  }

  /// A prune may drop the version a pending move's rows hold: it writes them first.
  @Test func aPruneFoldsThePendingMove() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.twoGainsAndAnUndo(at: path)
    defer { try? store.close() }
    #expect(try Self.file(path).pending)
    let undone = store.snapshot
    _ = try store.prune(PruneRequest(keepLast: 1))
    let file = try Self.file(path)
    #expect(!file.pending)
    #expect(file.project == undone.project)
    #expect(try store.verify().isOK)
  }

  /// A store keeps the pending change its last move wrote, and reads the row again when
  /// another process has written it since: here a second writer composes a move of its own,
  /// then the first store moves again, and the file still reads as its snapshot says.
  @Test func aKeptPendingChangeIsReadAgainAfterAnotherWritersMove() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let first = try Self.twoGainsAndAnUndo(at: path)
    defer { try? first.close() }
    #expect(first.state.withLock { $0.pendingMove } != nil)

    let second = try TimelineStore.open(at: path, historyBlocks: .standard, deferredMoveRows: 1)
    try second.undo()
    // Its own close would fold: the second writer stays open while the first one moves.
    defer { try? second.close() }
    #expect(try Self.file(path).pending)

    try first.redo()
    #expect(first.snapshot.project.clip(Clip.ID(1))?.clip.gain == Gain(decibels: -9))
    #expect(first.snapshot.project.clip(Clip.ID(2))?.clip.gain == Gain(decibels: -6))
    let file = try Self.file(path)
    #expect(file.project == first.snapshot.project)
    #expect(try first.verify().isOK)
    try Self.setGain(of: 3, to: -2, in: first)
    #expect(try Self.file(path).project == first.snapshot.project)
    #expect(try Self.file(path).pending == false)
  }

  /// The pending row and its tail, as stored: the row's revision and change, and the tail's
  /// (nil for none).
  static func storedRows(
    _ path: String
  ) throws -> (revision: Int64?, changes: Data?, tailRevision: Int64?, tail: Data?) {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { db in
      let row = try Row.fetchOne(db, sql: "SELECT revision, changes FROM pending_move")
      let tail = try Row.fetchOne(db, sql: "SELECT revision, changes FROM pending_move_tail")
      return (row?["revision"], row?["changes"], tail?["revision"], tail?["changes"])
    }
  }

  /// A small move after a large pending one writes the moves since in the tail alone, not the
  /// large change again; every reader, and another writer, reads the row then the tail; a step
  /// that makes the tail large writes the whole change again; an edit folds both.
  @Test func smallMovesAfterALargeOneWriteOnlyTheTail() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path)
    defer { try? store.close() }
    let fixture = store.snapshot.version
    try Self.addClips(200, to: store)
    let many = store.snapshot.version
    for clip in 1...3 { try Self.setGain(of: Int64(clip), to: -Double(clip), in: store) }
    for clip in 10...30 { try Self.setGain(of: Int64(clip), to: -4, in: store) }
    // Far back: 200 clips and 24 gains in one pending change, no tail.
    try store.checkout(fixture)
    let large = try Self.storedRows(path)
    #expect(large.tailRevision == nil)
    let rowChanges = try #require(large.changes)
    func expectSound(_ what: String) throws {
      #expect(try Self.file(path).project == store.snapshot.project, "\(what)")
      #expect(try store.verify().isOK, "\(what)")
    }
    // Another writer reads the row and adds a tail; the first store, which kept the row it
    // wrote, reads both again before its next move. (The second stays open: its close would
    // fold.)
    let second = try TimelineStore.open(at: path, historyBlocks: .standard, deferredMoveRows: 1)
    defer { try? second.close() }
    #expect(second.snapshot == store.snapshot)
    try second.undo()
    let afterSecond = try Self.storedRows(path)
    #expect(afterSecond.changes == rowChanges)
    #expect(afterSecond.tail != nil)
    try store.redo()
    #expect(store.snapshot.version == fixture)
    try expectSound("after another writer's move")
    // Steps of a few rows: undo through the fixture's own versions, redo, and a checkout; the
    // last one brings the tail back to nothing (still written: its revision is the stamp's).
    let steps: [(String, () throws -> Void)] = [
      ("undo", { try store.undo() }), ("undo", { try store.undo() }),
      ("redo", { try store.redo() }), ("checkout", { try store.checkout(fixture - 2) }),
      ("redo", { try store.redo() }), ("redo", { try store.redo() }),
    ]
    for (index, (what, step)) in steps.enumerated() {
      try step()
      let stored = try Self.storedRows(path)
      #expect(
        stored.changes == rowChanges, "\(what) \(index): the large change is not written again")
      #expect(stored.revision == large.revision, "\(what) \(index)")
      #expect(stored.tailRevision == store.state.withLock { $0.pendingMove?.revision })
      try expectSound("\(what) \(index)")
    }
    #expect(store.snapshot.version == fixture)
    // A step as large as the row's change: the whole change is written again, without tail.
    try store.checkout(many)
    let rewritten = try Self.storedRows(path)
    #expect(rewritten.changes != rowChanges)
    #expect(rewritten.tail == nil)
    try expectSound("rewritten")
    // An edit folds the row and its tail: the rows hold the head.
    try Self.setGain(of: 5, to: -7, in: store)
    let folded = try Self.storedRows(path)
    #expect(folded.changes == nil && folded.tail == nil)
    try expectSound("folded")
  }

  /// A damaged tail (bytes that are no change; one byte changed, which still decodes) is made
  /// again from history with the row, as a damaged row is: readers read the head, `verify`
  /// says it is damaged, and the next edit folds what history says.
  @Test(arguments: [
    "x'ff00'", "substr(changes, 1, 30) || x'07' || substr(changes, 32)",
  ])
  func aDamagedTailIsMadeAgainFromHistory(damage: String) throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path)
    let fixture = store.snapshot.version
    try Self.addClips(40, to: store)
    try store.checkout(fixture)
    try store.undo()
    let undone = store.snapshot
    #expect(try Self.storedRows(path).tail != nil)
    try Self.tamper(path, "UPDATE pending_move_tail SET changes = \(damage)")
    #expect(try Self.file(path).project == undone.project)
    #expect(!(try store.verify().pendingMoveMatches))
    try Self.addClips(1, to: store)
    #expect(try Self.file(path).project == store.snapshot.project)
    #expect(try store.verify().isOK)
    try store.close()
  }

  /// A pending change stored bare, without checksum or tail, by the Tape before both (schema
  /// v13), as a stopped editor leaves it: a reader that does not upgrade the file reads it as
  /// that Tape did, and opening the file to write stores it with its checksum, sound.
  @Test func aPendingChangeStoredBareByTheTapeBeforeIsReadAndUpgraded() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.store(at: path)
    let fixture = store.snapshot.version
    try Self.addClips(40, to: store)
    try store.checkout(fixture)
    let there = store.snapshot
    // Stopped, as a killed editor: its close would fold the move.
    store.state.withLock { $0.pendingMove = nil }
    store.state.withLock { $0.madePendingMove = false }
    try store.close()
    try Self.tamper(
      path,
      """
      UPDATE pending_move SET changes = substr(changes, \(PendingMove.Stored.headerBytes + 1));
      DROP TABLE pending_move_tail;
      DELETE FROM grdb_migrations WHERE identifier = '\(Schema.pendingTailMigration)';
      """)
    let reader = try TimelineStore.open(at: path, access: .read)
    #expect(reader.snapshot.project == there.project)
    try reader.close()
    let writer = try TimelineStore.open(at: path, historyBlocks: .standard, deferredMoveRows: 1)
    defer { try? writer.close() }
    #expect(writer.snapshot.project == there.project)
    #expect(try writer.verify().isOK)
    #expect(try Self.storedRows(path).changes?.first == PendingMove.Stored.tag)
  }
}
