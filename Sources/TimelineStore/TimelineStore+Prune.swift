public import Foundation
internal import GRDB

/// Which versions a prune drops (``TimelineStore/prune(_:dryRun:)``). Always explicit: the
/// store never prunes by itself.
public struct PruneRequest: Sendable, Hashable {
  /// Keep the head and the `keepLast - 1` versions above it on its line (and everything that
  /// descends from the oldest of them); drop every other version.
  public var keepLast: Int?
  /// Drop the versions of the head's line made before this date, and everything that branches
  /// off above the first one kept (the head is always kept).
  public var before: Date?
  /// Drop every version that is not on the line from the root to the tip (the head and what
  /// redo leads to): the abandoned branches.
  public var branches: Bool
  /// Drop the tags of the versions dropped, instead of refusing.
  public var dropTags: Bool

  public init(
    keepLast: Int? = nil, before: Date? = nil, branches: Bool = false, dropTags: Bool = false
  ) {
    self.keepLast = keepLast
    self.before = before
    self.branches = branches
    self.dropTags = dropTags
  }
}

/// What a prune dropped (or, dry, would drop), and the file's size before and after.
public struct PruneReport: Sendable, Hashable {
  public let versionsBefore: Int
  /// The versions dropped, ascending.
  public let dropped: [Int64]
  /// The root of the history after the prune (depth 0: undo stops there).
  public let root: Int64
  /// The tags dropped with their versions (only with ``PruneRequest/dropTags``).
  public let tagsDropped: [String]
  /// The database's size (pages × page size) before the prune, and after it and `VACUUM`
  /// (measured on a copy for a dry run).
  public let bytesBefore: Int64
  public let bytesAfter: Int64
  /// The files on disk (the project and its `-wal`) before and after: what `ls -l` shows. For a
  /// dry run, after is the pruned copy's.
  public let fileBytesBefore: Int64
  public let fileBytesAfter: Int64
  public let dryRun: Bool

  public var versionsAfter: Int { versionsBefore - dropped.count }
}

extension TimelineStore {
  /// Drops old versions or abandoned branches (``PruneRequest``), then `VACUUM`s the file.
  ///
  /// The versions kept read exactly as before: when the oldest ones go, the oldest version
  /// kept becomes the new root, its stored changes become the whole project at it (what the
  /// versions above it built), every kept version's depth and jump pointer are recomputed from
  /// the new root, and the history blocks (aligned to depths) are rebuilt. The head, its
  /// snapshot and the tracked tables are not touched. Tags of dropped versions are refused
  /// (``StoreError/tagsOnPrunedVersions(_:)``) unless ``PruneRequest/dropTags``.
  ///
  /// One IMMEDIATE transaction: another process that holds the write lock longer than the
  /// busy timeout makes it fail with ``StoreError/busy``, having changed nothing. With
  /// `dryRun`, the prune runs on a copy (`VACUUM INTO` a temporary folder) to measure it, and
  /// the project is not touched.
  ///
  /// ```swift
  /// let report = try store.prune(PruneRequest(keepLast: 100), dryRun: true)
  /// print(report.dropped.count, report.bytesBefore - report.bytesAfter)
  /// ```
  public func prune(
    _ request: PruneRequest, dryRun: Bool = false
  ) throws(StoreError)
    -> PruneReport
  {
    if dryRun { return try pruneCopy(request) }
    try checkWriteAccess()
    checkpointer.waitWhileRestarting()
    // This store's own block builder finishes first (another process's is stopped by the
    // revisions the prune bumps).
    blockBuilder.waitUntilIdle()
    do {
      let before = try queue.read { db in try Self.databaseBytes(db) }
      let filesBefore = Self.fileBytes(path)
      let (versions, dropped, root, tags) = try queue.writeWithoutTransaction { db in
        var result: (Int, [Int64], Int64, [String])?
        try Self.immediateTransaction(db, stamping: path) {
          // A pending move's base version may be dropped: its rows are written first.
          try PendingMove.fold(db, blocks: historyBlocks)
          result = try Self.pruneRows(request, blocks: historyBlocks, db)
          return .commit
        }
        guard let result else { throw StoreError.internalFailure("the prune left no result") }
        return result
      }
      // VACUUM outside any transaction, then the log copied back and emptied so the file
      // itself shrinks (a reader still in the log can keep it from emptying: the file then
      // shrinks at the next checkpoint).
      try queue.writeWithoutTransaction { db in
        try db.execute(sql: "VACUUM")
        try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
      }
      let after = try queue.read { db in try Self.databaseBytes(db) }
      return PruneReport(
        versionsBefore: versions, dropped: dropped, root: root, tagsDropped: tags,
        bytesBefore: before, bytesAfter: after, fileBytesBefore: filesBefore,
        fileBytesAfter: Self.fileBytes(path), dryRun: false)
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// A dry run: the prune made on a copy of the file, measured, and the copy removed.
  private func pruneCopy(_ request: PruneRequest) throws(StoreError) -> PruneReport {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "tape-prune-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    do {
      try FileManager.default.createDirectory(
        at: folder, withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
      let copy = folder.appendingPathComponent("copy.tape").path
      let before = try queue.read { db in try Self.databaseBytes(db) }
      try queue.inDatabase { db in try db.execute(sql: "VACUUM INTO ?", arguments: [copy]) }
      let plain = try DatabaseQueue(path: copy)
      try plain.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
      try plain.close()
      let store = try TimelineStore.open(at: copy, historyBlocks: historyBlocks)
      defer { try? store.close() }
      let pruned = try store.prune(request)
      return PruneReport(
        versionsBefore: pruned.versionsBefore, dropped: pruned.dropped, root: pruned.root,
        tagsDropped: pruned.tagsDropped, bytesBefore: before, bytesAfter: pruned.bytesAfter,
        fileBytesBefore: Self.fileBytes(path), fileBytesAfter: pruned.fileBytesAfter,
        dryRun: true)
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// The sizes of the project file and its `-wal` on disk.
  static func fileBytes(_ path: String) -> Int64 {
    func size(_ file: String) -> Int64 {
      var info = stat()
      return stat(file, &info) == 0 ? Int64(info.st_size) : 0
    }
    return size(path) + size(path + "-wal")
  }

  /// `page_count × page_size`: the database's size as this connection sees it (the log's
  /// pages included).
  static func databaseBytes(_ db: Database) throws -> Int64 {
    let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
    let size = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 0
    return pages * size
  }

  /// The prune itself, inside the caller's transaction: returns how many versions there were,
  /// those dropped, the new root and the tags dropped.
  private static func pruneRows(
    _ request: PruneRequest, blocks: HistoryBlocks, _ db: Database
  ) throws -> (Int, [Int64], Int64, [String]) {
    let head = try Head.read(db)
    var nodes: [Int64: VersionNode] = [:]
    var created: [Int64: Int64] = [:]
    var order: [Int64] = []
    var children: [Int64: [Int64]] = [:]
    var oldRoot: Int64?
    for row in try Row.fetchAll(
      db, sql: "SELECT id, parent, jump, depth, createdAt FROM version ORDER BY id")
    {
      let node = VersionNode(
        id: try row.value("id", of: "version"), parent: try row.value("parent", of: "version"),
        jump: try row.value("jump", of: "version"), depth: try row.value("depth", of: "version"))
      nodes[node.id] = node
      created[node.id] = try row.value("createdAt", of: "version")
      order.append(node.id)
      if let parent = node.parent {
        children[parent, default: []].append(node.id)
      } else {
        guard oldRoot == nil else {
          throw StoreError.corrupt(
            detail: "versions \(oldRoot ?? 0) and \(node.id) both have no parent")
        }
        oldRoot = node.id
      }
    }
    guard let oldRoot, nodes[head.version] != nil, nodes[head.tip] != nil else {
      throw StoreError.corrupt(detail: "the head or the root of the history is missing")
    }
    /// `id` and its ancestors, from the root down.
    func line(to id: Int64) throws -> [Int64] {
      var path: [Int64] = []
      var current: Int64? = id
      while let id = current {
        guard let node = nodes[id], path.count <= nodes.count else {
          throw StoreError.corrupt(detail: "version \(id) is missing from its descendant's line")
        }
        path.append(id)
        current = node.parent
      }
      return path.reversed()
    }
    let headLine = try line(to: head.version)
    var root = oldRoot
    if let keep = request.keepLast {
      root = headLine[max(0, headLine.count - max(keep, 1))]
    }
    if let date = request.before {
      let limit = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
      let first = headLine.firstIndex { (created[$0] ?? 0) >= limit } ?? (headLine.count - 1)
      if let current = headLine.firstIndex(of: root), first > current { root = headLine[first] }
    }
    // The kept versions: the new root's subtree, and of it only the tip's line with --branches.
    var kept = Set<Int64>()
    var stack = [root]
    while let id = stack.popLast() {
      kept.insert(id)
      stack.append(contentsOf: children[id] ?? [])
    }
    if request.branches { kept.formIntersection(try line(to: head.tip)) }
    precondition(kept.contains(head.version) && kept.contains(head.tip))
    let dropped = order.filter { !kept.contains($0) }
    let droppedSet = Set(dropped)
    let tags = try readTags(db).filter { droppedSet.contains($0.version) }.map(\.name)
    if !tags.isEmpty && !request.dropTags { throw StoreError.tagsOnPrunedVersions(tags) }
    guard !dropped.isEmpty else { return (order.count, [], root, []) }

    let rerooted = root != oldRoot
    if rerooted {
      // The new root's stored changes: the whole project at it, built from nothing (the old
      // root's changes make the project row; the path adds everything above the new root).
      var whole = NetChanges()
      let rootChangeset = try Data.fetchOne(
        db, sql: "SELECT changeset FROM version WHERE id = ?", arguments: [oldRoot])
      try whole.append(changeset: Changeset(data: rootChangeset ?? Data()))
      guard let rootNode = nodes[root] else { throw StoreError.unknownVersion(root) }
      let path = try VersionGraph.changes(downTo: rootNode, fromDepth: 0, blocks: blocks, db)
      guard path.ancestor == oldRoot else {
        throw StoreError.corrupt(detail: "version \(root) does not descend from \(oldRoot)")
      }
      try whole.append(path.changes)
      try db.execute(sql: "DELETE FROM history_block")
      try db.execute(sql: "DELETE FROM history_block_pending")
      // Depths from the new root, and jump pointers recomputed as commits make them (ids grow
      // down the tree, so a parent is always renumbered before its children).
      let shift = rootNode.depth
      var renumbered: [Int64: VersionNode] = [:]
      let update = try db.makeStatement(
        sql: "UPDATE version SET parent = ?, jump = ?, depth = ? WHERE id = ?")
      for id in order where kept.contains(id) {
        guard let old = nodes[id] else { continue }
        let node: VersionNode
        if id == root {
          node = VersionNode(id: id, parent: nil, jump: id, depth: 0)
          try db.execute(
            sql:
              "UPDATE version SET parent = NULL, jump = ?, depth = 0, changeset = ? WHERE id = ?",
            arguments: [id, whole.packed(), id])
        } else {
          guard let parentID = old.parent, let parent = renumbered[parentID],
            let jump = renumbered[parent.jump], let jumpOfJump = renumbered[jump.jump]
          else { throw StoreError.corrupt(detail: "version \(id) has a parent that was not kept") }
          let newJump =
            parent.depth - jump.depth == jump.depth - jumpOfJump.depth ? jumpOfJump.id : parent.id
          node = VersionNode(id: id, parent: parentID, jump: newJump, depth: old.depth - shift)
          try update.execute(arguments: [parentID, newJump, node.depth, id])
        }
        renumbered[id] = node
      }
    } else {
      for chunk in stride(from: 0, to: dropped.count, by: 500) {
        let ids = dropped[chunk..<min(chunk + 500, dropped.count)].map(String.init)
          .joined(separator: ",")
        try db.execute(sql: "DELETE FROM history_block WHERE version IN (\(ids))")
        try db.execute(sql: "DELETE FROM history_block_pending WHERE version IN (\(ids))")
      }
    }
    // The journal keeps its moves between kept versions (and its newest, which reaches the
    // head, so sequence numbers never go back); a move from a dropped version starts nowhere.
    for chunk in stride(from: 0, to: dropped.count, by: 500) {
      let ids = dropped[chunk..<min(chunk + 500, dropped.count)].map(String.init)
        .joined(separator: ",")
      try db.execute(
        sql: """
          DELETE FROM head_move WHERE toVersion IN (\(ids))
            AND seq < (SELECT max(seq) FROM head_move)
          """)
      try db.execute(sql: "UPDATE head_move SET fromVersion = NULL WHERE fromVersion IN (\(ids))")
      if try db.tableExists("tag") {
        try db.execute(sql: "DELETE FROM tag WHERE version IN (\(ids))")
      }
    }
    // Descendants first, so no row is left pointing at a deleted one.
    for chunk in stride(from: dropped.count, to: 0, by: -500) {
      let ids = dropped[max(0, chunk - 500)..<chunk].map(String.init).joined(separator: ",")
      try db.execute(sql: "DELETE FROM version WHERE id IN (\(ids))")
    }
    // Every kept version's revision moves past the head's, and the head's with it: a block
    // another process built from the old depths is then dropped as stale (BlockBuilder checks
    // the revision), and another process holding a snapshot reads the project again.
    try db.execute(
      sql: "UPDATE version SET revision = ?", arguments: [head.revision + 1])
    try Head(version: head.version, tip: head.tip, revision: head.revision + 1).write(db)
    if rerooted {
      for id in order where kept.contains(id) {
        let node = try VersionGraph.node(id, db)
        try VersionGraph.writeBlocks(at: node, spans: blocks.spans, blocks: blocks, db)
      }
    }
    return (order.count, dropped, root, tags)
  }
}
