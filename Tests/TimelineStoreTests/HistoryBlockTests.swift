import Foundation
import GRDB
import ReferenceRenders
import Testing
import Timeline

@testable import TimelineStore

/// History blocks (net changes over aligned runs of versions) and the merging they rely on.
/// Small spans (4 and 16 versions) make a few hundred random steps cross many blocks.
@Suite("History blocks and far checkouts")
struct HistoryBlockTests {
  static let small = HistoryBlocks(spans: [4, 16])
  static let threeSpans = HistoryBlocks(spans: [4, 16, 64])
  /// Three spans that a walk's depth (a few dozen versions) crosses many times.
  static let threeShortSpans = HistoryBlocks(spans: [2, 6, 24])

  /// A random walk over the history tree: edits (some coalesced, some after an undo, so on new
  /// branches), undos, redos and checkouts to any version. After every step the snapshot is the
  /// one that version had when it was made, and so is the file reopened.
  ///
  /// Seed 13 walks with three spans (2, 6 and 24), as the standard blocks have three.
  @Test(
    arguments: [(11, Self.small), (12, Self.small), (13, Self.threeShortSpans)]
      as [(UInt64, HistoryBlocks)])
  func everyVersionIsReachedExactly(seed: UInt64, blocks: HistoryBlocks) throws {
    let dir = try TemporaryDirectory()
    let (store, path) = try Self.newStore(in: dir, "walk.tape", blocks: blocks)
    var rng = SeededGenerator(seed: seed)
    var states: [Int64: Project] = [store.snapshot.version: store.snapshot.project]
    for step in 0..<700 {
      let dice = Int.random(in: 0..<100, using: &rng)
      if dice < 60 {
        let key: String? = dice < 12 ? "drag" : nil
        try store.commit(label: "Step \(step)", coalescingKey: key) { project, ids in
          if key != nil, let clip = project.allClips.first {
            return try project.setClipGain(
              clip.id, Gain(decibels: Double(Int.random(in: -40...0, using: &rng)) / 4))
          }
          return try RandomSequenceTests.randomEdit(project, &ids, &rng)
        }
        states[store.snapshot.version] = store.snapshot.project
      } else if dice < 75 {
        let depth = try store.history().versions.count  // an upper bound on the depth
        _ = try? store.undo(steps: Int.random(in: 1...min(6, depth), using: &rng))
      } else if dice < 80 {
        _ = try? store.redo(steps: Int.random(in: 1...3, using: &rng))
      } else {
        // Sorted: a dictionary's order changes from process to process, and the walk must not.
        let target = states.keys.sorted().randomElement(using: &rng)!
        try store.checkout(target)
      }
      #expect(store.snapshot.project == states[store.snapshot.version], "step \(step)")
      if step % 100 == 99 {
        let reopened = try TimelineStore.open(at: path, historyBlocks: blocks)
        #expect(reopened.snapshot == store.snapshot, "reopened at step \(step)")
        try reopened.close()
      }
    }
    // A straight run as long as the largest span, so that a block of it is made whatever
    // depth the walk reached (the walk's shape follows the random edits', which change as
    // edits gain kinds): the checkouts below then cross it.
    var made = 0
    for step in 0..<1_000 where made < blocks.spans.last ?? 0 {
      let result = try store.commit(label: "Run \(step)") { project, ids in
        try RandomSequenceTests.randomEdit(project, &ids, &rng)
      }
      if !result.changed.isEmpty { made += 1 }
      states[store.snapshot.version] = store.snapshot.project
    }
    let history = try store.history()
    #expect(history.versions.count > 300)
    #expect(Set(history.versions.map(\.parent)).count > 100, "the walk made many branches")
    for version in states.keys.sorted().shuffled(using: &rng) {
      #expect(try store.checkout(version).project == states[version], "version \(version)")
      #expect(try store.project(at: 1) == states[1])
    }
    try store.close()

    // Read with spans that match no stored block: every version crossed one by one gives
    // the same projects.
    let unblocked = try TimelineStore.open(at: path, historyBlocks: HistoryBlocks(spans: [5]))
    for version in states.keys.sorted().shuffled(using: &rng).prefix(40) {
      #expect(try unblocked.checkout(version).project == states[version], "version \(version)")
    }
    try unblocked.close()
    try Self.expectEveryBlockMatchesItsVersions(path, blocks)
    let blockCount = try DatabaseQueue(path: path).read { db in
      try Int.fetchOne(db, sql: "SELECT count(*) FROM history_block") ?? 0
    }
    #expect(blockCount > 60)
    if let largest = blocks.spans.last, blocks.spans.count > 2 {
      let largeBlocks = try DatabaseQueue(path: path).read { db in
        try Int.fetchOne(
          db, sql: "SELECT count(*) FROM history_block WHERE span = ?", arguments: [largest])
          ?? 0
      }
      #expect(largeBlocks > 0, "the walk crossed blocks of the largest span")
    }
  }

  /// A long path's merge split between two threads (each merging a run of pieces, the later
  /// run appended to the earlier, its texts moved past the earlier's) gives the merge made in
  /// one run, wherever the path starts.
  @Test func aMergeSplitBetweenTwoThreadsEqualsOneRun() throws {
    let dir = try TemporaryDirectory()
    let (store, path) = try Self.newStore(in: dir, "split.tape")
    _ = try Self.commitRandomEdits(to: store, until: 400, seed: 21)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    try queue.read { db in
      let head = try VersionGraph.node(Head.read(db).version, db)
      for depth in [0, 1, 37, head.depth / 2, head.depth - 3] {
        let whole = try VersionGraph.changes(
          downTo: head, fromDepth: depth, blocks: Self.small, concurrentFrom: .max, db)
        #expect(!whole.changes.isEmpty)
        for from in [0, 2_000, 20_000] {
          let split = try VersionGraph.changes(
            downTo: head, fromDepth: depth, blocks: Self.small, concurrentFrom: from, db)
          #expect(split.ancestor == whole.ancestor, "from depth \(depth), split from \(from)")
          #expect(
            split.changes.rows == whole.changes.rows, "from depth \(depth), split from \(from)")
        }
      }
    }
  }

  /// A new, empty project opened with the small spans.
  static func newStore(
    in dir: TemporaryDirectory, _ name: String, blocks: HistoryBlocks = small
  ) throws -> (TimelineStore, String) {
    let path = dir.path(name)
    try TimelineStore.create(at: path).close()
    return (try TimelineStore.open(at: path, historyBlocks: blocks), path)
  }

  /// Commits random edits until the head is version `last`; returns the project of each version.
  static func commitRandomEdits(
    to store: TimelineStore, until last: Int64, seed: UInt64
  ) throws -> [Int64: Project] {
    var rng = SeededGenerator(seed: seed)
    var states = [store.snapshot.version: store.snapshot.project]
    while store.snapshot.version < last {
      try store.commit(label: "Random edit") { project, ids in
        try RandomSequenceTests.randomEdit(project, &ids, &rng)
      }
      states[store.snapshot.version] = store.snapshot.project
    }
    return states
  }

  /// Every stored block equals the merge of the single changesets it stands for, whatever
  /// coalescing did to its last version (checked by ``TimelineStore/verify()``).
  static func expectEveryBlockMatchesItsVersions(_ path: String, _ blocks: HistoryBlocks) throws {
    let store = try TimelineStore.open(at: path, historyBlocks: blocks)
    defer { try? store.close() }
    let report = try store.verify()
    #expect(report.historyBlocks > 0)
    #expect(report.historyBlocksMatch)
    #expect(report.isOK)
  }

  /// Our merge gives what `sqlite3changegroup` gives for the same changesets (compared by the
  /// columns that end up different), over random runs of a random history.
  @Test func mergingMatchesSQLiteChangegroup() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("merge.tape")
    let store = try TimelineStore.create(at: path)
    _ = try Self.commitRandomEdits(to: store, until: 400, seed: 5)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    // Versions store the packed encoding, which SQLite's changegroup cannot read: each is
    // written out as the session changeset of the same changes (the packed encoding's own
    // round trip is checked below).
    let changesets = try queue.read { db in
      try Data.fetchAll(db, sql: "SELECT changeset FROM version ORDER BY id").map { data in
        var changes = NetChanges()
        try changes.append(changeset: Changeset(data: data))
        return changes.changeset()
      }
    }
    var rng = SeededGenerator(seed: 6)
    for _ in 0..<60 {
      let first = Int.random(in: 0..<changesets.count, using: &rng)
      let last = Int.random(in: first..<min(changesets.count, first + 200), using: &rng)
      var ours = NetChanges()
      for changeset in changesets[first...last] { try ours.append(changeset: changeset) }
      var sqlite = NetChanges()
      try sqlite.append(changeset: SessionCalls.concatenate(Array(changesets[first...last])))
      #expect(Self.effect(ours) == Self.effect(sqlite), "versions \(first + 1)...\(last + 1)")
      // Written back as a session changeset (what a coalesced version stores), it reads back
      // the same, and SQLite's own changegroup takes it: merged with the next version's
      // changeset it gives what our merge of both gives.
      let written = ours.changeset()
      var reread = NetChanges()
      try reread.append(changeset: written)
      #expect(reread.rows == ours.rows)
      // And in the packed encoding (what a version stores), the same.
      var unpacked = NetChanges()
      try unpacked.append(changeset: Changeset(data: ours.packed()))
      #expect(unpacked.rows == ours.rows)
      if last + 1 < changesets.count, !written.isEmpty {
        var viaSQLite = NetChanges()
        try viaSQLite.append(
          changeset: SessionCalls.concatenate([written, changesets[last + 1]]))
        var both = ours
        try both.append(changeset: changesets[last + 1])
        #expect(Self.effect(viaSQLite) == Self.effect(both))
      }
      var twice = ours
      twice.invert()
      #expect(twice.count == ours.count)
      twice.invert()
      #expect(twice.rows == ours.rows)
    }
  }

  /// The compact decoder merges its rows a batch at a time (``NetChanges/merge(_:)`` looks up
  /// all of a batch's rows before merging any): the same as merging them one by one, and for
  /// a damaged piece that names a row twice in one batch, the same as its two halves merged
  /// one after the other.
  @Test func blocksMergedByTheBatchEqualRowByRow() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("batches.tape")
    let store = try TimelineStore.create(at: path)
    _ = try Self.commitRandomEdits(to: store, until: 300, seed: 8)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    let versions = try queue.read { db in
      try Data.fetchAll(db, sql: "SELECT changeset FROM version ORDER BY id").map(Changeset.init)
    }
    func merged(_ range: ClosedRange<Int>) throws -> NetChanges {
      var changes = NetChanges()
      for version in versions[range] { try changes.append(changeset: version) }
      return changes
    }
    var rng = SeededGenerator(seed: 9)
    var keysTwiceInABatch = 0
    for _ in 0..<80 {
      let first = Int.random(in: 0..<versions.count - 12, using: &rng)
      let middle = first + Int.random(in: 0..<6, using: &rng)
      let last = middle + 1 + Int.random(in: 0..<6, using: &rng)
      let (earlier, later) = (try merged(first...middle), try merged(middle + 1...last))
      var rowByRow = try merged(first...last)
      var byBlocks = NetChanges()
      try byBlocks.append(encoded: earlier.encoded())
      try byBlocks.append(encoded: later.encoded())
      #expect(Self.effect(byBlocks) == Self.effect(rowByRow), "versions \(first + 1)...\(last + 1)")
      // One piece holding both halves' rows (the second's without its version byte).
      var joined = NetChanges()
      try joined.append(encoded: earlier.encoded() + later.encoded().dropFirst())
      #expect(joined.count == byBlocks.count)
      #expect(joined.rows == byBlocks.rows)
      if earlier.count + later.count <= NetChanges.Batch.capacity,
        !Set(earlier.rows.keys).isDisjoint(with: later.rows.keys)
      {
        keysTwiceInABatch += 1
      }
      rowByRow.invert()
      #expect(rowByRow.count == byBlocks.count)
    }
    #expect(keysTwiceInABatch >= 10, "pieces that name a row twice in one batch")
  }

  /// What a change does, regardless of how it is spelled: per row, its kind and the columns
  /// whose value it changes (an update that changes nothing is no change).
  static func effect(_ changes: NetChanges) -> [NetChanges.Key: String] {
    var effect: [NetChanges.Key: String] = [:]
    for (key, row) in changes.rows {
      switch row.kind {
      case .insert, .delete: effect[key] = "\(row.kind) \(row.kind == .insert ? row.new : row.old)"
      case .update:
        let changed = (1..<row.new.count).compactMap { column -> String? in
          guard let new = row.new[column], let old = row.old[column], !old.isIdentical(to: new)
          else { return nil }
          return "\(column): \(old) -> \(new)"
        }
        if !changed.isEmpty { effect[key] = changed.joined(separator: ", ") }
      }
    }
    return effect
  }

  /// The compact encoding gives back exactly what it was given, every kind of value included.
  @Test func theCompactEncodingRoundTrips() throws {
    let width = Schema.trackedColumns.map(\.count)
    func values(_ table: Int, _ pairs: [Int: ChangeValue]) -> [ChangeValue?] {
      (0..<width[table]).map { pairs[$0] }
    }
    let clip = Schema.trackedTables.firstIndex(of: Schema.clipTable)!
    let source = Schema.trackedTables.firstIndex(of: Schema.sourceTable)!
    let original = NetChanges(rows: [
      NetChanges.Key(table: clip, id: 7): NetChanges.Row(
        kind: .update,
        old: values(clip, [0: .integer(7), 3: .integer(-1), 6: .real(-0.0), 8: .text("linear")]),
        new: values(clip, [3: .integer(Int64.max), 6: .real(0.0), 8: .text("équal-power ♪")])),
      NetChanges.Key(table: clip, id: Int64.max): NetChanges.Row(
        kind: .delete,
        old: values(
          clip,
          Dictionary(
            uniqueKeysWithValues: (0..<11).map {
              ($0, .integer($0 == 0 ? Int64.max : Int64.min + Int64($0)))
            })),
        new: values(clip, [:])),
      NetChanges.Key(table: source, id: 1): NetChanges.Row(
        kind: .insert, old: values(source, [:]),
        new: values(
          source,
          [
            0: .integer(1), 1: .text(""), 2: .blob([0, 255, 7]), 3: .null, 4: .real(.pi),
            5: .blob([]),
          ])),
    ])
    var decoded = NetChanges()
    try decoded.append(encoded: original.encoded())
    #expect(decoded.rows == original.rows)
    let gain = decoded.rows[NetChanges.Key(table: clip, id: 7)]?.old[6]
    #expect(gain.map { $0.isIdentical(to: .real(-0.0)) } == true, "−0.0 keeps its sign")
  }

  /// Damaged history is refused with a clear error, never half applied.
  @Test func malformedChangesAreRefused() throws {
    var changes = NetChanges()
    let encoded = NetChanges(rows: [
      NetChanges.Key(table: 3, id: 2): NetChanges.Row(
        kind: .update,
        old: [.integer(2)] + Array(repeating: nil, count: 5) + [.real(-3)]
          + Array(repeating: nil, count: 4),
        new: Array(repeating: nil, count: 6) + [.real(-6)] + Array(repeating: nil, count: 4))
    ]).encoded()
    // The version byte alone is a valid empty encoding; any longer prefix ends inside an entry.
    for length in 2..<encoded.count {
      #expect(throws: StoreError.self) { try changes.append(encoded: encoded.prefix(length)) }
    }
    #expect(throws: StoreError.self) { try changes.append(encoded: Data([9, 3, 2, 0])) }
    #expect(throws: StoreError.self) {
      try changes.append(changeset: Changeset(data: Data("T\u{3}".utf8)))
    }
  }

  /// A project from before history blocks gets them when it is first opened, and its far
  /// checkouts use them.
  @Test func olderProjectsGainBlocksOnOpen() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("old.tape")
    let store = try TimelineStore.create(at: path)
    let states = try Self.commitRandomEdits(to: store, until: 301, seed: 9)
    try store.close()
    // What a project written before the v2 migration looks like.
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM history_block") == 1)
      try db.execute(sql: "DROP TABLE history_block")
      try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v2'")
    }
    try queue.close()

    let upgraded = try TimelineStore.open(at: path)
    try upgraded.checkout(2)
    #expect(upgraded.snapshot.project == states[2])
    try upgraded.checkout(301)
    #expect(upgraded.snapshot.project == states[301])
    try upgraded.close()
    let check = try DatabaseQueue(path: path)
    let spans = try check.read { db in
      try Int64.fetchAll(db, sql: "SELECT span FROM history_block ORDER BY version")
    }
    try check.close()
    #expect(spans == [256])
    try Self.expectEveryBlockMatchesItsVersions(path, .standard)
  }

  /// A damaged block stops the checkout that reads it, and the project stays as it was.
  @Test func aDamagedBlockStopsTheCheckoutAndChangesNothing() throws {
    let dir = try TemporaryDirectory()
    let (store, path) = try Self.newStore(in: dir, "damaged.tape")
    _ = try Self.commitRandomEdits(to: store, until: 40, seed: 3)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      try db.execute(
        sql: "UPDATE history_block SET changes = substr(changes, 1, length(changes) - 3)")
    }
    try queue.close()
    let reopened = try TimelineStore.open(at: path, historyBlocks: Self.small)
    let before = reopened.snapshot
    #expect(throws: StoreError.self) { try reopened.checkout(1) }
    #expect(reopened.snapshot == before)
    #expect(try reopened.verify().historyBlocksMatch == false, "verify finds the damage")
    try reopened.close()
    #expect(try TimelineStore.open(at: path).snapshot == before)
  }

  /// A commit that completes a large block leaves it to the background builder; the block
  /// appears soon after, equal to the versions it stands for, also when coalescing keeps
  /// rewriting its last version; and a block a stopped process left pending is built by the
  /// next store that opens the file.
  @Test func largeBlocksAreBuiltInTheBackground() throws {
    let dir = try TemporaryDirectory()
    let (store, path) = try Self.newStore(in: dir, "background.tape")
    _ = try Self.commitRandomEdits(to: store, until: 16, seed: 21)
    let clip = try #require(store.snapshot.project.allClips.first)
    // Version 17 is at depth 16: it completes a block of 4 and one of 16.
    for step in 0..<20 {
      try store.commit(label: "Drag", coalescingKey: "drag") { project, _ in
        try project.setClipGain(clip.id, Gain(decibels: -Double(step) / 2))
      }
      #expect(store.snapshot.version == 17)
    }
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    func blocks() throws -> (spans: [Int64], pending: [Int64]) {
      try queue.read { db in
        (
          try Int64.fetchAll(
            db, sql: "SELECT span FROM history_block WHERE version = 17 ORDER BY span"),
          try Int64.fetchAll(db, sql: "SELECT version FROM history_block_pending")
        )
      }
    }
    store.blockBuilder.waitUntilIdle()
    #expect(try blocks() == ([4, 16], []))
    try Self.expectEveryBlockMatchesItsVersions(path, Self.small)

    // What a process stopped before building leaves behind.
    try store.close()
    try queue.write { db in
      try db.execute(sql: "DELETE FROM history_block WHERE span = 16")
      try db.execute(sql: "INSERT INTO history_block_pending (version) VALUES (17)")
    }
    let reopened = try TimelineStore.open(at: path, historyBlocks: Self.small)
    reopened.blockBuilder.waitUntilIdle()
    #expect(try blocks() == ([4, 16], []))
    try reopened.close()
    try Self.expectEveryBlockMatchesItsVersions(path, Self.small)
  }

  /// A history made with fewer spans gains the blocks of a larger one, as migration v12 gives
  /// older projects the 262,144-version blocks: the versions that end one are queued, the
  /// next store to open the file builds them, and far checkouts reading them reach the same
  /// projects.
  @Test func aLargerSpanIsAddedToAnOlderHistory() throws {
    let dir = try TemporaryDirectory()
    let (store, path) = try Self.newStore(in: dir, "spans.tape")
    let states = try Self.commitRandomEdits(to: store, until: 140, seed: 17)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    func versions(_ sql: String) throws -> [Int64] {
      try queue.read { db in try Int64.fetchAll(db, sql: sql) }
    }
    // One line of 140 versions: version v is at depth v − 1, so 65 and 129 end runs of 64.
    #expect(try versions("SELECT id FROM version WHERE parent IS NOT id - 1") == [1])
    try queue.write { db in try Self.threeSpans.queueMissingBlocks(db) }
    let pending = "SELECT version FROM history_block_pending ORDER BY version"
    #expect(try versions(pending) == [65, 129])

    let reopened = try TimelineStore.open(at: path, historyBlocks: Self.threeSpans)
    reopened.blockBuilder.waitUntilIdle()
    #expect(
      try versions("SELECT version FROM history_block WHERE span = 64 ORDER BY version")
        == [65, 129])
    #expect(try versions(pending) == [])
    for version in [Int64(1), 140, 2, 129, 66, 140] {
      #expect(try reopened.checkout(version).project == states[version], "version \(version)")
    }
    try reopened.close()
    try Self.expectEveryBlockMatchesItsVersions(path, Self.threeSpans)
    // Nothing is missing now: queueing again queues nothing.
    try queue.write { db in try Self.threeSpans.queueMissingBlocks(db) }
    #expect(try versions(pending) == [])
  }
}
