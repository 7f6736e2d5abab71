import Foundation
import GRDB
import ReferenceRenders
import Testing
import Timeline

@testable import TimelineStore

/// `tape history prune` and `tape tag` in the store: random histories (the random walk of
/// ``HistoryBlockTests``, with small history blocks so that many are rebuilt), pruned, then every
/// kept version read back equal to what it was.
@Suite("Pruning history and naming versions")
struct PruneAndTagTests {
  /// A random walk of `steps` edits, undos, redos and checkouts (so many branches); returns each
  /// version's project.
  static func walk(
    _ store: TimelineStore, steps: Int, seed: UInt64
  ) throws -> [Int64: Project] {
    var rng = SeededGenerator(seed: seed)
    var states: [Int64: Project] = [store.snapshot.version: store.snapshot.project]
    for step in 0..<steps {
      let dice = Int.random(in: 0..<100, using: &rng)
      if dice < 65 {
        let key: String? = dice < 10 ? "drag" : nil
        try store.commit(label: "Step \(step)", coalescingKey: key) { project, ids in
          if key != nil, let clip = project.allClips.first {
            return try project.setClipGain(
              clip.id, Gain(decibels: Double(Int.random(in: -40...0, using: &rng)) / 4))
          }
          return try RandomSequenceTests.randomEdit(project, &ids, &rng)
        }
        states[store.snapshot.version] = store.snapshot.project
      } else if dice < 78 {
        _ = try? store.undo(steps: Int.random(in: 1...5, using: &rng))
      } else if dice < 83 {
        _ = try? store.redo(steps: Int.random(in: 1...3, using: &rng))
      } else {
        // Sorted: a dictionary's order changes from process to process, and the walk must not.
        try store.checkout(states.keys.sorted().randomElement(using: &rng)!)
      }
    }
    return states
  }

  /// The versions a prune should keep, worked out from the history alone (parents and dates):
  /// the subtree of the new root, intersected with the tip's line for `--branches`.
  static func expectedKept(_ history: History, _ request: PruneRequest) -> (Set<Int64>, Int64) {
    let parents = Dictionary(uniqueKeysWithValues: history.versions.map { ($0.version, $0.parent) })
    let dates = Dictionary(uniqueKeysWithValues: history.versions.map { ($0.version, $0.date) })
    func line(_ id: Int64) -> [Int64] {
      var path: [Int64] = []
      var current: Int64? = id
      while let id = current {
        path.insert(id, at: 0)
        current = parents[id] ?? nil
      }
      return path
    }
    let headLine = line(history.head)
    var rootIndex = 0
    if let keep = request.keepLast { rootIndex = max(0, headLine.count - keep) }
    if let before = request.before {
      let first = headLine.firstIndex { dates[$0]! >= before } ?? headLine.count - 1
      rootIndex = max(rootIndex, first)
    }
    let root = headLine[rootIndex]
    var kept = Set(
      history.versions.map(\.version).filter { line($0).contains(root) })
    if request.branches { kept.formIntersection(line(history.tip)) }
    return (kept, root)
  }

  /// Every version row: depth one more than its parent's, the root at 0 with no parent, and the
  /// jump pointer the skew-binary rule gives (worked out again here from the depths alone).
  static func expectConsistentGraph(_ path: String) throws {
    let rows = try DatabaseQueue(path: path).read { db in
      try Row.fetchAll(db, sql: "SELECT id, parent, jump, depth FROM version ORDER BY id")
    }
    var nodes: [Int64: (parent: Int64?, jump: Int64, depth: Int64)] = [:]
    for row in rows {
      nodes[row["id"]] = (row["parent"], row["jump"], row["depth"])
    }
    #expect(nodes.values.filter { $0.parent == nil }.count == 1, "one root")
    // The depth a skew-binary jump from depth d reaches (Myers), as a new child at d works it
    // out from its parent at d - 1: jumpDepth[d].
    let deepest = nodes.values.map(\.depth).max() ?? 0
    var jumpDepth: [Int64] = [0, 0]
    while Int64(jumpDepth.count) <= deepest {
      let p = Int64(jumpDepth.count - 1)
      let j = jumpDepth[Int(p)]
      let jj = jumpDepth[Int(j)]
      jumpDepth.append(p - j == j - jj ? jj : p)
    }
    for (id, node) in nodes {
      guard let parent = node.parent else {
        #expect(node.depth == 0 && node.jump == id, "the root \(id)")
        continue
      }
      #expect(nodes[parent]?.depth == node.depth - 1, "depth of \(id)")
      var ancestor: Int64? = parent
      while let a = ancestor, let n = nodes[a], n.depth > jumpDepth[Int(node.depth)] {
        ancestor = n.parent
      }
      #expect(ancestor == node.jump, "jump of \(id) (depth \(node.depth))")
    }
  }

  static func fileBytes(_ path: String) -> Int64 {
    func size(_ file: String) -> Int64 {
      var info = stat()
      return stat(file, &info) == 0 ? Int64(info.st_size) : 0
    }
    return size(path) + size(path + "-wal")
  }

  enum Kind: String, CaseIterable, CustomTestStringConvertible {
    case keepLast, keepFew, before, branches, keepLastAndBranches
    var testDescription: String { rawValue }
  }

  /// A random history pruned each way: the versions kept are exactly those expected, each
  /// reads back as it was (checked out, and read without moving the head), the head's
  /// snapshot is untouched, undo and redo walk the kept line, and the file verifies (integrity,
  /// foreign keys, undo to the root, every rebuilt history block).
  @Test(arguments: Kind.allCases, [UInt64(21), 22])
  func prunedHistoriesReadBackExactly(kind: Kind, seed: UInt64) throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("prune.tape")
    try TimelineStore.create(at: path).close()
    let blocks = HistoryBlockTests.small
    var store = try TimelineStore.open(at: path, historyBlocks: blocks)
    let states = try Self.walk(store, steps: 400, seed: seed)
    let history = try store.history()
    var request = PruneRequest()
    let headDepth = try DatabaseQueue(path: path).read { db in
      try Int.fetchOne(
        db, sql: "SELECT depth FROM version WHERE id = ?", arguments: [store.snapshot.version])
    }!
    switch kind {
    case .keepLast: request.keepLast = max(2, headDepth / 2)
    case .keepFew:
      request.keepLast = 3
      try #require(headDepth > 3, "the walk must end deeper than the three versions kept")
    case .before:
      // The date of a version halfway down the head's line.
      let line = history.versions.filter { (try? store.project(at: $0.version)) != nil }
      request.before = line[line.count / 2].date
    case .branches: request.branches = true
    case .keepLastAndBranches:
      request.keepLast = max(2, headDepth * 2 / 3)
      request.branches = true
    }
    let (kept, root) = Self.expectedKept(history, request)
    // What the checks below rely on, worked out from the history alone: a prune of this walk
    // drops something (else the report, the file size and the graph would show nothing).
    try #require(
      kept.count < history.versions.count,
      "the walk must leave versions for a \(kind) prune to drop (head depth \(headDepth))")
    let head = store.snapshot
    let sizeBefore = Self.fileBytes(path)

    let dry = try store.prune(request, dryRun: true)
    #expect(try store.history() == history, "a dry run changes nothing")
    let report = try store.prune(request)
    #expect(report.dropped == dry.dropped && report.bytesAfter == dry.bytesAfter)
    #expect(Set(report.dropped) == Set(history.versions.map(\.version)).subtracting(kept))
    #expect(report.root == root)
    #expect(!report.dropped.isEmpty)
    try store.close()
    let sizeAfter = Self.fileBytes(path)
    print(
      "prune \(kind) seed \(seed): \(history.versions.count) → \(kept.count) versions, file \(sizeBefore) → \(sizeAfter) bytes (reported \(report.bytesBefore) → \(report.bytesAfter))"
    )
    #expect(sizeAfter < sizeBefore)
    #expect(report.fileBytesBefore > 0 && report.fileBytesAfter > 0)
    #expect(report.bytesAfter < report.bytesBefore)
    try Self.expectConsistentGraph(path)

    store = try TimelineStore.open(at: path, historyBlocks: blocks)
    #expect(store.snapshot == head, "the head's snapshot is untouched")
    let after = try store.history()
    #expect(Set(after.versions.map(\.version)) == kept)
    #expect(after.head == history.head && after.tip == history.tip)
    let report2 = try store.verify()
    #expect(report2.isOK, "\(report2)")
    #expect(report2.integrity == "ok")
    for version in kept.sorted() where states[version] != nil {
      #expect(try store.project(at: version) == states[version], "read \(version)")
    }
    var rng = SeededGenerator(seed: seed)
    for version in kept.sorted().shuffled(using: &rng) where states[version] != nil {
      #expect(try store.checkout(version).project == states[version], "checkout \(version)")
    }
    // Undo from the head all the way to the new root, then redo back to the head.
    try store.checkout(head.version)
    let depth = try DatabaseQueue(path: path).read { db in
      try Int.fetchOne(db, sql: "SELECT depth FROM version WHERE id = ?", arguments: [head.version])
    }!
    if depth > 0 {
      #expect(try store.undo(steps: depth).version == root)
      #expect(throws: StoreError.nothingToUndo) { try store.undo() }
      #expect(try store.redo(steps: depth) == head)
    }
    // New edits after the prune extend the history like any other.
    try store.commit(label: "After the prune") { project, ids in
      try project.addTrack(Track(id: ids.newTrackID(), name: "Later"))
    }
    #expect(try store.undo() == head)
    try store.close()
    // Read with spans that match no stored block: the same projects, version by version.
    let unblocked = try TimelineStore.open(at: path, historyBlocks: HistoryBlocks(spans: [5]))
    for version in kept.sorted().prefix(60) where states[version] != nil {
      #expect(try unblocked.project(at: version) == states[version], "unblocked \(version)")
    }
    try unblocked.close()
    try Self.expectConsistentGraph(path)
  }

  /// Pruning twice (a root that is already a pruned root) and with the standard block spans.
  @Test func pruningAgainKeepsTheVersions() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("twice.tape")
    let store = try TimelineStore.create(at: path)
    let states = try HistoryBlockTests.commitRandomEdits(to: store, until: 700, seed: 5)
    let first = try store.prune(PruneRequest(keepLast: 500))
    #expect(first.root == 201)
    let second = try store.prune(PruneRequest(keepLast: 260))
    #expect(second.root == 441 && second.dropped == Array(201...440))
    #expect(try store.verify().isOK)
    for version in Int64(441)...700 {
      #expect(try store.project(at: version) == states[version], "version \(version)")
    }
    let blocks = try DatabaseQueue(path: path).read { db in
      try Int64.fetchAll(db, sql: "SELECT version FROM history_block ORDER BY version")
    }
    #expect(blocks == [441 + 256], "the one 256-version block of the new depths")
    try store.close()
    try Self.expectConsistentGraph(path)
  }

  /// Tags name versions without making one: the history, the head and every version stay as
  /// they are; a reference resolves a number or a name; the name rules are enforced.
  @Test func tagsNameVersionsWithoutEditingHistory() throws {
    let dir = try TemporaryDirectory()
    let (store, projects) = try StoreFixture.populated(at: dir.path("tags.tape"))
    let history = try store.history()
    let writes = store.writeCount
    try store.tag(2, as: "rough-mix")
    try store.tag(as: "final")
    #expect(try store.history() == history, "tagging is not a history edit")
    #expect(store.writeCount == writes, "no commit, no head move")
    #expect(try store.tags().map(\.name) == ["final", "rough-mix"])
    #expect(try store.resolveVersion("rough-mix") == 2)
    #expect(try store.resolveVersion("final") == store.snapshot.version)
    #expect(try store.resolveVersion("3") == 3)
    #expect(try store.resolveVersion("v3") == 3)
    #expect(throws: StoreError.unknownVersion(99)) { try store.resolveVersion("99") }
    #expect(throws: StoreError.unknownReference("nope")) { try store.resolveVersion("nope") }
    #expect(try store.checkout(store.resolveVersion("rough-mix")).project == projects[1])
    #expect(try store.undo() == StoreSnapshot(version: 1, project: projects[0]))
    #expect(try store.tags().map(\.version) == [4, 2], "undo and checkout never touch tags")
    #expect(throws: StoreError.tagExists(name: "final", version: 4)) {
      try store.tag(2, as: "final")
    }
    try store.tag(4, as: "final")  // the same: nothing to do
    for bad in [
      "", "12", "v7", "-x", "two words", "tab\there", "nl\n", String(repeating: "a", count: 101),
    ] {
      #expect(throws: StoreError.self, "'\(bad)'") { try store.tag(as: bad) }
    }
    #expect(throws: StoreError.unknownVersion(50)) { try store.tag(50, as: "ghost") }
    #expect(try store.deleteTag(named: "final").version == 4)
    #expect(throws: StoreError.unknownTag("final")) { try store.deleteTag(named: "final") }
    #expect(try store.tags().map(\.name) == ["rough-mix"])
    // A prune that drops a tagged version refuses, names the tag and changes nothing; with
    // dropTags it drops the tag too.
    try store.checkout(4)
    #expect(throws: StoreError.tagsOnPrunedVersions(["rough-mix"])) {
      try store.prune(PruneRequest(keepLast: 2))
    }
    #expect(try store.history() == history)
    let report = try store.prune(PruneRequest(keepLast: 2, dropTags: true))
    #expect(report.tagsDropped == ["rough-mix"] && report.dropped == [1, 2])
    #expect(try store.tags().isEmpty)
    #expect(try store.verify().isOK)
  }

  /// A store that had the project open across a prune (a player following it, an editor)
  /// carries on: it reads versions kept, it follows later commits, and its own commits extend
  /// the pruned history.
  @Test func storesOpenAcrossAPruneCarryOn() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("open.tape")
    let (writer, projects) = try StoreFixture.populated(at: path)
    let follower = try TimelineStore.open(at: path, access: .follow)
    let other = try TimelineStore.open(at: path)
    #expect(try follower.project(at: 2) == projects[1])
    let pruner = try TimelineStore.open(at: path)
    #expect(try pruner.prune(PruneRequest(keepLast: 2)).dropped == [1, 2])
    try pruner.close()
    #expect(try follower.project(at: 3) == projects[2])
    #expect(throws: StoreError.unknownVersion(2)) { try follower.project(at: 2) }
    try other.commit(label: "After") { project, ids in
      try project.addTrack(Track(id: ids.newTrackID(), name: "Later"))
    }
    let later = other.snapshot
    #expect(try follower.read(later.version).project == later.project)
    try writer.commit(label: "Writer") { project, _ in
      try project.setMasterGain(Gain(decibels: -2))
    }
    #expect(writer.snapshot.project.tracks.count == later.project.tracks.count, "caught up first")
    #expect(try writer.undo().project == later.project)
    #expect(try writer.undo(steps: 2).project == projects[2])
    #expect(throws: StoreError.nothingToUndo) { try writer.undo() }
    #expect(try writer.verify().isOK)
  }

  /// A prune waits for another writer no longer than the busy timeout, then fails with
  /// ``StoreError/busy`` having changed nothing.
  @Test func aPruneIsRefusedWhileAnotherWriterHoldsTheLock() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("busy.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    let history = try store.history()
    let pruner = try TimelineStore.open(at: path, busyTimeout: 0.2)
    let locked = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      try? store.holdWriteLock(for: 1.5) { locked.signal() }
      done.signal()
    }
    locked.wait()
    #expect(throws: StoreError.busy) { try pruner.prune(PruneRequest(keepLast: 1)) }
    done.wait()
    #expect(try pruner.history() == history)
    #expect(try pruner.prune(PruneRequest(keepLast: 1)).dropped == [1, 2, 3])
  }
}
