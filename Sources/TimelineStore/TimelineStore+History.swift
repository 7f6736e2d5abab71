public import Foundation
internal import GRDB
import Logging
import Synchronization
public import Timeline

/// One version in a project's history.
public struct HistoryEntry: Sendable, Hashable {
  public let version: Int64
  public let parent: Int64?
  public let label: String
  public let date: Date

  init(version: Int64, parent: Int64?, label: String, date: Date) {
    self.version = version
    self.parent = parent
    self.label = label
    self.date = date
  }

  /// A row of `SELECT id, parent, label, createdAt FROM version`.
  init(_ row: Row) throws(StoreError) {
    version = try row.value("id", of: "version")
    parent = try row.value("parent", of: "version")
    label = try row.value("label", of: "version")
    date = Date(
      timeIntervalSince1970: Double(try row.value("createdAt", of: "version") as Int64) / 1000)
  }

  /// Version `id`'s entry; nil when there is no such version. Every undo, redo and checkout
  /// reads its target's (through the C API: by GRDB, with its statement prepared anew, this
  /// read was a tenth of an undo's CPU time).
  static func read(_ id: Int64, _ db: Database) throws -> HistoryEntry? {
    try RawStatement.first(
      db.cachedStatement(sql: "SELECT parent, label, createdAt FROM version WHERE id = ?")
        .sqliteStatement, on: connection(db), binding: [.integer(id)]
    ) { row in
      HistoryEntry(
        version: id, parent: try row.optionalInteger(0, "parent", of: "version"),
        label: try row.text(1, "label", of: "version"),
        date: Date(
          timeIntervalSince1970: Double(try row.integer(2, "createdAt", of: "version")) / 1000))
    }
  }
}

/// The last versions of the head's line (``TimelineStore/headLine(last:throughTip:)``).
public struct HeadLineWindow: Sendable, Hashable {
  public let head: Int64
  public let tip: Int64
  /// Oldest first.
  public let entries: [HistoryEntry]
  /// The versions of the line before the window, and after it.
  public let earlier: Int
  public let later: Int
  /// Every version of the history, on every branch.
  public let total: Int
}

/// A project's whole history: a tree of versions, the head, and where redo leads.
public struct History: Sendable, Hashable {
  public let head: Int64
  /// The most recently visited descendant of head (head itself when there is nothing to redo).
  public let tip: Int64
  /// Sorted by version.
  public let versions: [HistoryEntry]
}

/// Where a history move goes: from the head (and the node it is at) to a version and the tip
/// redo leads to after it.
typealias MoveTarget = (Head, VersionNode, Database) throws -> (VersionNode, tip: Int64)

extension TimelineStore {
  /// Moves the head `steps` versions up toward the root, applying the recorded changes in reverse.
  @discardableResult
  public func undo(steps: Int = 1) throws(StoreError) -> StoreSnapshot {
    try move(.undo, Self.undoTarget(steps: steps))
  }

  /// Moves the head `steps` versions toward the most recently visited descendant (the tip).
  @discardableResult
  public func redo(steps: Int = 1) throws(StoreError) -> StoreSnapshot {
    try move(.redo, Self.redoTarget(steps: steps))
  }

  /// Makes `version` the head, on any branch: the changes from the head up to the common
  /// ancestor are reversed and those down to `version` applied, merged first so that each
  /// differing row is written once (see `HistoryBlocks`).
  @discardableResult
  public func checkout(_ version: Int64) throws(StoreError) -> StoreSnapshot {
    try move(.checkout, Self.checkoutTarget(version))
  }

  /// Undo's target: the ancestor `steps` up.
  static func undoTarget(steps: Int) -> MoveTarget {
    { head, from, db in
      guard from.depth > 0 else { throw StoreError.nothingToUndo }
      guard steps <= from.depth else {
        throw StoreError.notEnoughSteps(
          requested: steps, available: Int(from.depth), direction: "undo")
      }
      return (
        try VersionGraph.ancestor(of: from, atDepth: from.depth - Int64(max(steps, 1)), db),
        head.tip
      )
    }
  }

  /// Redo's target: `steps` down the line to the tip.
  static func redoTarget(steps: Int) -> MoveTarget {
    { head, from, db in
      let tip = try VersionGraph.node(head.tip, db)
      let available = tip.depth - from.depth
      guard available > 0 else { throw StoreError.nothingToRedo }
      guard steps <= available else {
        throw StoreError.notEnoughSteps(
          requested: steps, available: Int(available), direction: "redo")
      }
      return (
        try VersionGraph.ancestor(of: tip, atDepth: from.depth + Int64(max(steps, 1)), db), head.tip
      )
    }
  }

  /// Checkout's target: `version`; redo keeps leading to the old tip when the target is on
  /// the way to it.
  static func checkoutTarget(_ version: Int64) -> MoveTarget {
    { head, _, db in
      let target = try VersionGraph.node(version, db)
      let tip = try VersionGraph.node(head.tip, db)
      let newTip = try VersionGraph.isAncestor(target, of: tip, db) ? tip.id : target.id
      return (target, newTip)
    }
  }

  /// One version's entry (label, parent, date); nil when there is no such version.
  public func entry(_ version: Int64) throws(StoreError) -> HistoryEntry? {
    do {
      return try queue.read { db in try HistoryEntry.read(version, db) }
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// The whole history tree.
  public func history() throws(StoreError) -> History {
    do {
      let history = try queue.read { db in
        let head = try Head.read(db)
        let versions = try Row.fetchAll(
          db, sql: "SELECT id, parent, label, createdAt FROM version ORDER BY id"
        ).map { row in
          try HistoryEntry(row)
        }
        return History(head: head.version, tip: head.tip, versions: versions)
      }
      try checkUnchanged()
      return history
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// The last `count` versions of the head's line, oldest first, read without the rest of
  /// the history: the line runs from the first version through the head and, with
  /// `throughTip`, on to the tip redo leads to (when the head is on its way there); the window
  /// is moved back as far as needed to hold the head. O(`count` + log n) reads, so `tape
  /// history` stays instant on 100,000 versions.
  public func headLine(
    last count: Int, throughTip: Bool = true
  ) throws(StoreError) -> HeadLineWindow {
    do {
      let window = try queue.read { db -> HeadLineWindow in
        let head = try Head.read(db)
        let headNode = try VersionGraph.node(head.version, db)
        let tipNode = try VersionGraph.node(head.tip, db)
        let end =
          try throughTip && VersionGraph.isAncestor(headNode, of: tipNode, db) ? tipNode : headNode
        let length = end.depth + 1
        let first = max(0, min(headNode.depth, length - Int64(count)))
        let last = min(length, first + Int64(count)) - 1
        var node = try VersionGraph.ancestor(of: end, atDepth: last, db)
        var entries: [HistoryEntry] = []
        while true {
          guard let entry = try HistoryEntry.read(node.id, db) else {
            throw StoreError.unknownVersion(node.id)
          }
          entries.append(entry)
          guard node.depth > first, let parent = node.parent else { break }
          node = try VersionGraph.node(parent, db)
        }
        let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM version") ?? 0
        return HeadLineWindow(
          head: head.version, tip: head.tip, entries: entries.reversed(), earlier: Int(first),
          later: Int(length - 1 - last), total: total)
      }
      try checkUnchanged()
      return window
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// The project as it was at `version`, without moving the head.
  ///
  /// A read transaction only: the net change of the path from the head to `version` (see
  /// `HistoryBlocks`) applied in memory to the head's snapshot. Never blocked by a writer,
  /// never blocking one, never writing.
  public func project(at version: Int64) throws(StoreError) -> Project {
    do {
      let project = try queue.read { db in
        let head = try catchUp(db)
        let held = state.withLock { $0.held }
        let changes = try VersionGraph.pathChanges(
          from: VersionGraph.node(head.version, db), to: VersionGraph.node(version, db),
          blocks: historyBlocks, db)
        return try SnapshotReader.applying(changes, changed: changes.changedIDs, to: held).project
      }
      try checkUnchanged()
      return project
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// From how many row changes (of any table) a history move builds its snapshot while its
  /// rows are written (see ``ConcurrentResult``). Below it (the undo of an ordinary edit) the
  /// move stays on one thread. The value is a judgement, not a measured crossing point:
  /// checkouts of 1,000 clips and more were measured faster this way, smaller moves were not
  /// measured.
  static let concurrentMoveRows = 512

  /// From how many row changes a history move keeps its change in one row instead of writing
  /// each row (``PendingMove``). Below it (the undo of an ordinary edit, when nothing is
  /// pending) writing the rows costs less than the check, the pending row and the fold later.
  static let standardDeferredMoveRows = 512

  /// Moves the head to the version `target` picks (with the tip it returns), given the head and
  /// its node, applying the path's changes and journaling the move with its `cause` in one
  /// transaction, then publishes the new snapshot like any commit.
  private func move(
    _ cause: HeadMove.Cause, _ target: MoveTarget
  ) throws(StoreError) -> StoreSnapshot {
    // The pending move this move leaves, kept once it is committed.
    var kept: PendingMove.Kept?
    let snapshot = try write(cause) { head, old, db in
      let from = try VersionGraph.node(head.version, db)
      let (to, tip) = try target(head, from, db)
      // A damaged row of the target (its label, its date) fails the move before anything is
      // written, not the command's output after the head has moved.
      _ = try HistoryEntry.read(to.id, db)
      var pending = try PendingMove.read(db, blocks: historyBlocks, kept: takeKeptPendingMove())
      let newHead = Head(version: to.id, tip: tip, revision: head.revision + 1)
      /// The snapshot `changes` make of `old`, built on another thread while `writeRows`
      /// writes or checks the rows when the change is large. It is taken before the commit, so
      /// a change that cannot be applied still changes nothing, and a row's error comes first,
      /// as when one follows the other.
      func snapshot(
        _ changes: NetChanges, _ changed: ChangedIDs, writing writeRows: () throws -> Void
      ) throws -> HeldProject {
        guard changes.count >= Self.concurrentMoveRows else {
          try writeRows()
          return try SnapshotReader.applying(changes, changed: changed, to: old)
        }
        let building = ConcurrentResult {
          try SnapshotReader.applying(changes, changed: changed, to: old)
        }
        do {
          try writeRows()
        } catch {
          building.abandon()
          throw error
        }
        return try building.value()
      }
      // Back to the version the rows hold (a look at another version, then back): the way
      // there is the pending change turned around, which is what history says between the two
      // (``PendingMove``). No history is merged, nothing is left pending, and the snapshot
      // there is the one the store held when the change became pending, while it has it.
      if let back = pending, back.base == to.id {
        let changed = back.changes.changedIDs
        func checkRows() throws {
          // The rows must hold what the change starts from (what a move under it expects).
          try RowWriter.check(back.changes, under: nil, db)
          try PendingMove.write(
            NetChanges(), base: to.id, head: to.id, revision: newHead.revision, db)
          try newHead.write(db)
        }
        let held: HeldProject
        if let kept = back.baseSnapshot {
          try checkRows()
          held = kept
        } else {
          var changes = back.changes
          changes.invert()
          held = try snapshot(changes, changed, writing: checkRows)
        }
        return (
          WriteStep(head: newHead, held: held, changed: changed),
          StoreSnapshot(version: to.id, project: held.project)
        )
      }
      let changes = try VersionGraph.pathChanges(from: from, to: to, blocks: historyBlocks, db)
      let changed = changes.changedIDs
      // Written to the rows, or (a large move, or any move while one is pending) checked
      // against them and composed into the pending change (see ``PendingMove``).
      func writeRows() throws {
        if pending != nil || changes.count >= deferredMoveRows {
          try RowWriter.check(changes, under: pending?.changes, db)
          if var earlier = pending.take() {
            // Appended to in place: `earlier` holds the only reference.
            try earlier.write(
              adding: changes, head: newHead.version, revision: newHead.revision, db)
            kept = earlier.changes.isEmpty ? nil : earlier
          } else {
            // The snapshot at the base: the one held before this first pending move.
            kept = try PendingMove.write(
              changes, base: head.version, head: newHead.version, revision: newHead.revision,
              baseSnapshot: old, db)
          }
        } else {
          try RowWriter.apply(changes, match: .recorded, db)
        }
        try newHead.write(db)
      }
      let held = try snapshot(changes, changed, writing: writeRows)
      return (
        WriteStep(head: newHead, held: held, changed: changed),
        StoreSnapshot(version: to.id, project: held.project)
      )
    }
    state.withLock { state in
      state.pendingMove = kept
      if kept != nil { state.madePendingMove = true }
    }
    return snapshot
  }
}

/// A history move made by a store that holds no project (``ScopedEditor/undo(steps:)``,
/// ``ScopedEditor/redo(steps:)``, ``ScopedEditor/checkout(_:)``): where the head was and went,
/// the label of where it went, and what differs between the two, as
/// ``TimelineStore/diff(from:to:)`` says it.
public struct ScopedMove: Sendable {
  /// The head before the move, as the move's transaction found it (another process may have
  /// moved it since the command started).
  public let from: Int64
  public let to: Int64
  public let label: String
  public let diff: ProjectDiff
  /// The project's sample rate (to say the diff's times).
  public let sampleRate: Int
}

extension TimelineStore {
  /// A history move that reads what it changes: in the write transaction, the changes between
  /// the head and the target (``VersionGraph/pathChanges(from:to:blocks:_:)``), the part of the
  /// project they touch (every table whole but the clips, and the clips they change: as a
  /// scoped edit reads), the rows written, the part after applied in memory, and the diff of
  /// the two. Nothing is adopted or sent (``write(_:part:_:)``): the store holds no project.
  /// A pending move is written to the rows first, so the rows hold the head.
  ///
  /// Why: an undo in its own process read every row to build the project it then dropped:
  /// at 50,000 clips 0.2–0.3 s where the edit undone took 30 ms (issue 47).
  func movePart(_ cause: HeadMove.Cause, _ target: MoveTarget) throws(StoreError) -> ScopedMove {
    try write(cause, part: EditScope()) { head, part, db in
      let from = try VersionGraph.node(head.version, db)
      let (to, tip) = try target(head, from, db)
      // A damaged row of the target (its label, its date) fails the move before anything is
      // written.
      guard let entry = try HistoryEntry.read(to.id, db) else {
        throw StoreError.unknownVersion(to.id)
      }
      let newHead = Head(version: to.id, tip: tip, revision: head.revision + 1)
      let changes = try VersionGraph.pathChanges(from: from, to: to, blocks: historyBlocks, db)
      let changed = changes.changedIDs
      let before =
        changed.clips.isEmpty
        ? part : try SnapshotReader.load(db, clips: changed.clips, pagesChecked: true)
      try RowWriter.apply(changes, match: .recorded, db)
      try newHead.write(db)
      let after = try SnapshotReader.applying(changes, changed: changed, to: before)
      let diff = ProjectDiff(
        from: before.project, to: after.project, changed: changed,
        indexes: (before.clips, after.clips))
      return (
        WriteStep(head: newHead, held: after, changed: changed),
        ScopedMove(
          from: head.version, to: to.id, label: entry.label, diff: diff,
          sampleRate: before.project.sampleRate)
      )
    }
  }
}

/// The result of ``TimelineStore/verify()``: the checks a crash or a bug could fail.
public struct VerificationReport: Sendable, Hashable, Codable {
  /// `PRAGMA integrity_check`: "ok" when the file is sound.
  public let integrity: String
  /// Rows that break a foreign key.
  public let foreignKeyViolations: Int
  public let head: Int64
  public let versions: Int
  /// Reversing the whole history from the head gives the project its root stores: the empty
  /// project of version 1, or the whole project at the oldest version a prune kept.
  public let undoToFirstVersionWorks: Bool
  /// How many history blocks are stored, and whether each equals the merge of the versions it
  /// stands for.
  public let historyBlocks: Int
  public let historyBlocksMatch: Bool
  /// The row changes a large history move left to write (`PendingMove`; 0 when none), and
  /// whether the stored change can be read, equals what history says between the version the
  /// rows hold and the head, and finds the rows it covers as it expects (true when there is
  /// none).
  public let pendingMoveRows: Int
  public let pendingMoveMatches: Bool

  public var isOK: Bool {
    integrity == "ok" && foreignKeyViolations == 0 && undoToFirstVersionWorks
      && historyBlocksMatch && pendingMoveMatches
  }
}

extension TimelineStore {
  /// Checks the file and its history without changing anything: SQLite's integrity check, the
  /// foreign keys, that undoing everything from the head (in a read) reaches what the root
  /// version stores (the empty project for version 1), that every history block equals the
  /// versions it stands for, merged one by one, and that a pending move (`PendingMove`)
  /// finds the rows it covers as it expects.
  public func verify() throws(StoreError) -> VerificationReport {
    do {
      let (integrity, violations, head, versions) = try queue.read { db in
        (
          try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; "),
          try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count,
          try Head.read(db).version,
          try Int.fetchOne(db, sql: "SELECT count(*) FROM version") ?? 0
        )
      }
      let format = snapshot.project
      // The root: version 1, or the oldest version a prune kept. Its stored changes build the
      // whole project at it from nothing (for version 1, the empty project).
      let (root, rootChanges) = try queue.read { db -> (Int64?, Data?) in
        let row = try Row.fetchOne(
          db, sql: "SELECT id, changeset FROM version WHERE parent IS NULL")
        return (
          try row.map { try $0.value("id", of: "version") },
          try row.map { try $0.value("changeset", of: "version") }
        )
      }
      // Damaged history is a finding, not a failure to verify.
      var first: Project?
      var stored: Project?
      do {
        if let root, let rootChanges {
          first = try project(at: root)
          var changes = NetChanges()
          try changes.append(changeset: Changeset(data: rootChanges))
          let empty = Project(sampleRate: format.sampleRate, channels: format.channels)
          stored =
            try SnapshotReader.applying(
              changes, changed: changes.changedIDs,
              to: HeldProject(project: empty, positions: [:], clips: ClipIndex(empty))
            ).project
        }
      } catch StoreError.corrupt, StoreError.historyDiverged {
        first = nil
      }
      let (blocks, blocksMatch) = try queue.read { db in try checkHistoryBlocks(db) }
      let (pendingRows, pendingMatches) = try queue.read { db in
        try PendingMove.verify(db, blocks: historyBlocks)
      }
      return VerificationReport(
        integrity: integrity, foreignKeyViolations: violations, head: head, versions: versions,
        undoToFirstVersionWorks: first != nil && first == stored,
        historyBlocks: blocks, historyBlocksMatch: blocksMatch, pendingMoveRows: pendingRows,
        pendingMoveMatches: pendingMatches)
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// Recomputes every stored history block from single changesets; returns how many there are
  /// and whether all match (a block that cannot be decoded does not).
  private func checkHistoryBlocks(_ db: Database) throws -> (Int, Bool) {
    let rows = try Row.fetchAll(db, sql: "SELECT version, span, start, changes FROM history_block")
    for row in rows {
      let node = try VersionGraph.node(try row.value("version", of: "history_block"), db)
      let span: Int64 = try row.value("span", of: "history_block")
      guard node.depth >= span else { return (rows.count, false) }
      let (singles, start) = try VersionGraph.changes(
        downTo: node, fromDepth: node.depth - span, blocks: historyBlocks, maxSpan: 1, db)
      var stored = NetChanges()
      do {
        try stored.append(encoded: try row.value("changes", of: "history_block"))
      } catch {
        return (rows.count, false)
      }
      guard start == (try row.value("start", of: "history_block") as Int64),
        stored.rows == singles.rows
      else { return (rows.count, false) }
    }
    return (rows.count, true)
  }
}

extension TimelineStore {
  /// Every path a source of the project has had, in any version on any branch: what a render
  /// must never write over.
  ///
  /// Only the versions whose changeset touches the `source` table are read (a changeset names
  /// each table it touches, so SQLite finds them by that name without decoding the others).
  public func sourcePathsInHistory() throws(StoreError) -> Set<RawPath> {
    var paths = Set(snapshot.project.sources.map(\.path))
    let table = Schema.trackedTables.firstIndex(of: Schema.sourceTable)
    do {
      let changesets = try queue.read { db in
        try Data.fetchAll(
          db, sql: "SELECT changeset FROM version WHERE instr(changeset, ?) > 0",
          arguments: [Data((Schema.sourceTable + "\0").utf8)])
      }
      try checkUnchanged()
      for data in changesets {
        var changes = NetChanges()
        try changes.append(changeset: Changeset(data: data))
        changes.forEach { key, _, old, new in
          guard key.table == table else { return }
          for values in [old, new] {
            switch changes.value(values[1]) {
            case .text(let path)?: paths.insert(RawPath(path))
            case .blob(let bytes)?: paths.insert(RawPath(bytes: bytes))
            default: break
            }
          }
        }
      }
    } catch {
      throw Self.translate(error, at: path)
    }
    return paths
  }
}

extension TimelineStore {
  /// Every source any version has had (each distinct value: a relinked source appears with
  /// each path), with the oldest version that has it: what the decoded-audio cache may hold
  /// for this project (`tape cache`).
  ///
  /// Reads the root and each version whose changeset touches the `source` table: every other
  /// version has the sources of its nearest such ancestor, so nothing is missed.
  public func sourcesInHistory() throws(StoreError) -> [(source: Source, firstVersion: Int64)] {
    let versions: [Int64]
    do {
      versions = try queue.read { db in
        try Int64.fetchAll(
          db,
          sql:
            "SELECT id FROM version WHERE parent IS NULL OR instr(changeset, ?) > 0 ORDER BY id",
          arguments: [Data((Schema.sourceTable + "\0").utf8)])
      }
    } catch {
      throw Self.translate(error, at: path)
    }
    var first: [Source: Int64] = [:]
    var previous: StoreVersion?
    for version in versions {
      let read = try self.read(version, from: previous)
      for source in read.project.sources where first[source] == nil { first[source] = version }
      previous = read
    }
    for source in snapshot.project.sources where first[source] == nil {
      first[source] = snapshot.version
    }
    return first.map { ($0.key, $0.value) }.sorted {
      ($0.source.id.rawValue, $0.firstVersion) < ($1.source.id.rawValue, $1.firstVersion)
    }
  }
}

/// One version of a project as read from the store, kept to read the next version from it:
/// stepping to an adjacent version then costs one changeset, not a path from the head.
public struct StoreVersion: Sendable {
  public let version: Int64
  public var project: Project { held.project }
  let held: HeldProject
}

extension TimelineStore {
  /// The project at `version` (a read transaction: the net change of the path from `base`,
  /// or from the head when `base` is nil, applied in memory).
  ///
  /// ```swift
  /// var shown = try store.read(12)
  /// let (next, diff) = try store.step(from: shown, to: 13)   // one changeset
  /// ```
  public func read(
    _ version: Int64, from base: StoreVersion? = nil
  ) throws(StoreError)
    -> StoreVersion
  {
    try step(from: base, to: version).version
  }

  /// The project at `version`, read from `base` (the head when nil), and what differs between
  /// the two: each changed clip, track and source before and after, found through the clip
  /// indexes (O(k log n) for k changed clips).
  public func step(
    from base: StoreVersion?, to version: Int64
  ) throws(StoreError) -> (version: StoreVersion, diff: ProjectDiff) {
    do {
      let result = try queue.read { db -> (StoreVersion, ProjectDiff) in
        let start: StoreVersion
        if let base {
          start = base
        } else {
          let head = try catchUp(db)
          start = StoreVersion(version: head.version, held: state.withLock { $0.held })
        }
        let changes = try VersionGraph.pathChanges(
          from: VersionGraph.node(start.version, db), to: VersionGraph.node(version, db),
          blocks: historyBlocks, db)
        let changed = changes.changedIDs
        let held = try SnapshotReader.applying(changes, changed: changed, to: start.held)
        let diff = ProjectDiff(
          from: start.held.project, to: held.project, changed: changed,
          indexes: (start.held.clips, held.clips))
        return (StoreVersion(version: version, held: held), diff)
      }
      try checkUnchanged()
      return result
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// What differs between versions `a` and `b`, on any branches (read transactions only).
  public func diff(
    from a: Int64, to b: Int64
  ) throws(StoreError) -> (
    from: StoreVersion, to: StoreVersion, diff: ProjectDiff
  ) {
    let first = try read(a)
    let (second, diff) = try step(from: first, to: b)
    return (first, second, diff)
  }

  /// The newest head move (nil before any): what an undo, redo or checkout just did, read
  /// after it.
  public func lastMove() throws(StoreError) -> HeadMove? {
    do {
      return try queue.read { db in
        try HeadJournal.moves(after: HeadJournal.lastSequence(db) - 1, db).last
      }
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// The head moves after `sequence` (0: all of them), oldest first: the journal a watcher
  /// reads incrementally so that no move is merged or lost.
  public func moves(after sequence: Int64) throws(StoreError) -> [HeadMove] {
    do {
      return try queue.read { db in try HeadJournal.moves(after: sequence, db) }
    } catch {
      throw Self.translate(error, at: path)
    }
  }
}
