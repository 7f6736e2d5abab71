import Foundation
internal import GRDB

/// One version's place in the history tree.
struct VersionNode: Sendable, Hashable {
  let id: Int64
  let parent: Int64?
  /// A skew-binary jump pointer: an ancestor whose depth depends only on this depth.
  let jump: Int64
  let depth: Int64
}

/// Queries over the version tree, in O(log n) steps however long the history.
///
/// Each version stores a parent and a jump pointer chosen as in Myers' skew-binary random
/// access lists: `jump(v) = jump(jump(p))` when the two jumps below `p` have equal length, else
/// `p`. Reaching any ancestor, and the common ancestor of two versions, then takes O(log n)
/// lookups.
enum VersionGraph {
  static func node(_ id: Int64, _ db: Database) throws -> VersionNode {
    let node = try RawStatement.first(
      db.cachedStatement(sql: "SELECT parent, jump, depth FROM version WHERE id = ?")
        .sqliteStatement, on: connection(db), binding: [.integer(id)]
    ) { row in
      VersionNode(
        id: id, parent: row.isNull(0) ? nil : row.int64(0), jump: row.int64(1),
        depth: row.int64(2))
    }
    guard let node else { throw StoreError.unknownVersion(id) }
    return node
  }

  /// The jump pointer a new child of `parent` gets.
  static func jump(forChildOf parent: VersionNode, _ db: Database) throws -> Int64 {
    let jump = try node(parent.jump, db)
    let jumpOfJump = try node(jump.jump, db)
    return parent.depth - jump.depth == jump.depth - jumpOfJump.depth ? jumpOfJump.id : parent.id
  }

  /// The ancestor of `node` at `depth` (`node` itself at its own depth).
  static func ancestor(
    of node: VersionNode, atDepth depth: Int64, _ db: Database
  ) throws
    -> VersionNode
  {
    guard depth >= 0 && depth <= node.depth else {
      throw StoreError.corrupt(
        detail: "version \(node.id) at depth \(node.depth) has no ancestor at depth \(depth)")
    }
    var current = node
    while current.depth > depth {
      let jump = try below(current, current.jump, db)
      if jump.depth >= depth {
        current = jump
      } else if let parent = current.parent {
        current = try below(current, parent, db)
      } else {
        throw StoreError.corrupt(
          detail: "version \(current.id) has no parent at depth \(current.depth)")
      }
    }
    return current
  }

  /// Version `id`, which `child` points to (as parent or jump): refused unless it lies above
  /// `child`, a parent just one level up. Every walk up the tree then ends, even in a file whose
  /// version rows are damaged (a jump to itself, a depth out of step), where it would loop
  /// forever or trap.
  private static func below(
    _ child: VersionNode, _ id: Int64, _ db: Database
  ) throws -> VersionNode {
    let node: VersionNode
    do {
      node = try self.node(id, db)
    } catch StoreError.unknownVersion {
      throw StoreError.corrupt(
        detail: "version \(child.id) points to version \(id), which is missing")
    }
    guard node.depth < child.depth, id != child.parent || node.depth == child.depth - 1 else {
      throw StoreError.corrupt(
        detail:
          "version \(child.id) at depth \(child.depth) points to version \(id) at depth \(node.depth)"
      )
    }
    return node
  }

  /// The deepest version that is an ancestor-or-self of both.
  static func commonAncestor(
    _ a: VersionNode, _ b: VersionNode, _ db: Database
  ) throws
    -> VersionNode
  {
    var a = try ancestor(of: a, atDepth: min(a.depth, b.depth), db)
    var b = try ancestor(of: b, atDepth: min(a.depth, b.depth), db)
    while a.id != b.id {
      if a.jump != b.jump {
        a = try below(a, a.jump, db)
        b = try below(b, b.jump, db)
      } else if let pa = a.parent, let pb = b.parent {
        a = try below(a, pa, db)
        b = try below(b, pb, db)
      } else {
        throw StoreError.corrupt(detail: "versions \(a.id) and \(b.id) share no root")
      }
      guard a.depth == b.depth else {
        throw StoreError.corrupt(
          detail:
            "versions \(a.id) and \(b.id) should be at one depth, are at \(a.depth) and \(b.depth)")
      }
    }
    return a
  }

  /// Whether `ancestor` is `node` or one of its ancestors.
  static func isAncestor(
    _ ancestor: VersionNode, of node: VersionNode, _ db: Database
  ) throws
    -> Bool
  {
    guard ancestor.depth <= node.depth else { return false }
    return try self.ancestor(of: node, atDepth: ancestor.depth, db).id == ancestor.id
  }

  /// The net changes that take the tracked tables from version `from` to version `to`: those
  /// from their common ancestor down to `from`, reversed, then those down to `to`.
  static func pathChanges(
    from: VersionNode, to: VersionNode, blocks: HistoryBlocks, _ db: Database
  ) throws -> NetChanges {
    if from.id == to.id { return NetChanges() }
    let common = try commonAncestor(from, to, db)
    let up = try changes(downTo: from, fromDepth: common.depth, blocks: blocks, db)
    let down = try changes(downTo: to, fromDepth: common.depth, blocks: blocks, db)
    guard up.ancestor == common.id, down.ancestor == common.id else {
      throw StoreError.corrupt(
        detail: "versions \(from.id) and \(to.id) do not meet at \(common.id)")
    }
    var path = up.changes
    path.invert()
    try path.append(down.changes)
    return path
  }

  /// The net changes from the ancestor of `descendant` at `depth` down to `descendant`, and
  /// that ancestor's id.
  ///
  /// Walks up from `descendant`, taking at each version the largest history block (of at most
  /// `maxSpan` versions) that ends there and stays below `depth`, else the version's own
  /// changeset: O(span ratio × levels) pieces however far `depth` is, then merges them oldest
  /// first. Versions whose blocks are missing are crossed one by one, which is slower but
  /// gives the same changes.
  static func changes(
    downTo descendant: VersionNode, fromDepth depth: Int64, blocks: HistoryBlocks,
    maxSpan: Int64 = .max, concurrentFrom: Int = concurrentMergeBytes, _ db: Database
  ) throws -> (changes: NetChanges, ancestor: Int64) {
    var pieces: [(data: Data, isBlock: Bool)] = []
    let connection = try connection(db)
    let blockQuery = try db.cachedStatement(
      sql: "SELECT start, changes FROM history_block WHERE version = ? AND span = ?")
    let versionQuery = try db.cachedStatement(
      sql: "SELECT parent, changeset FROM version WHERE id = ?")
    var (id, current) = (descendant.id, descendant.depth)
    walk: while current > depth {
      for span in blocks.spans.reversed()
      where span <= maxSpan && current % span == 0 && current - span >= depth {
        var start: Int64?
        try RawStatement.query(
          blockQuery.sqliteStatement, on: connection, binding: [.integer(id), .integer(span)]
        ) { row in
          start = row.int64(0)
          pieces.append((row.blob(1), true))
        }
        guard let start else { continue }
        (id, current) = (start, current - span)
        continue walk
      }
      var parent: Int64?
      try RawStatement.query(versionQuery.sqliteStatement, on: connection, binding: [.integer(id)])
      { row in
        guard !row.isNull(0) else { return }
        parent = row.int64(0)
        pieces.append((row.blob(1), false))
      }
      guard let parent else {
        throw StoreError.corrupt(detail: "version \(id) has no parent at depth \(current)")
      }
      (id, current) = (parent, current - 1)
    }
    let ordered = Array(pieces.reversed())
    let bytes = ordered.reduce(0) { $0 + $1.data.count }
    guard bytes >= concurrentFrom, ordered.count >= 2 else {
      return (try merge(ordered[...]), id)
    }
    // Two runs of pieces of about equal size, the later merged on another thread, then
    // appended to the earlier (merging is associative): a far checkout's merge is most of its
    // time, and the other core idles meanwhile.
    var split = 1
    var earlierBytes = ordered[0].data.count
    // The split nearest the middle: a piece that crosses it goes to the earlier run when
    // that leaves the runs closer in size.
    while split < ordered.count - 1,
      abs(2 * (earlierBytes + ordered[split].data.count) - bytes) < abs(2 * earlierBytes - bytes)
    {
      earlierBytes += ordered[split].data.count
      split += 1
    }
    let laterPieces = ordered[split...]
    let later = ConcurrentResult { try merge(laterPieces) }
    var changes: NetChanges
    do {
      changes = try merge(ordered[..<split])
    } catch {
      later.abandon()
      throw error
    }
    try changes.append(later.value())
    return (changes, id)
  }

  /// From how many bytes of pieces a path's merge is split between two threads (about
  /// 40,000 one-field row changes; tests pass their own `concurrentFrom`).
  static let concurrentMergeBytes = 1 << 20

  /// `pieces` (history blocks, or a version's own changeset), oldest first, merged into one.
  private static func merge(
    _ pieces: ArraySlice<(data: Data, isBlock: Bool)>
  ) throws -> NetChanges {
    var changes = NetChanges()
    // The merge holds at least the rows of its largest piece.
    if let largest = pieces.lazy.map(\.data.count).max(), largest >= 64 * Self.encodedRowGuess {
      changes.reserveCapacity(rows: largest / Self.encodedRowGuess)
    }
    for piece in pieces {
      if piece.isBlock {
        try changes.append(encoded: piece.data)
      } else {
        try changes.append(changeset: Changeset(data: piece.data))
      }
    }
    return changes
  }

  /// About the bytes a one-field clip update takes in a history block: what the merge divides
  /// its largest piece's size by to guess how many rows it will hold. A guess, not a bound:
  /// measured, a bound of 8 bytes a row made the merge slower (a row index four times larger
  /// to fill and probe) and this one faster; a piece of smaller rows only grows the arrays
  /// once more.
  static let encodedRowGuess = 24

  /// Writes the history blocks of `spans` that end at `version` (those whose span divides its
  /// depth), each built from the smaller spans' blocks.
  static func writeBlocks(
    at version: VersionNode, spans: some Sequence<Int64>, blocks: HistoryBlocks, _ db: Database
  ) throws {
    for span in spans where version.depth > 0 && version.depth % span == 0 {
      let (changes, start) = try changes(
        downTo: version, fromDepth: version.depth - span, blocks: blocks, maxSpan: span - 1, db)
      try insertBlock(
        version: version.id, span: span, start: start, changes: changes.encoded(), db)
    }
  }

  static func insertBlock(
    version: Int64, span: Int64, start: Int64, changes: Data, _ db: Database
  ) throws {
    try db.cachedStatement(
      sql: """
        INSERT OR REPLACE INTO history_block (version, span, start, changes)
        VALUES (?, ?, ?, ?)
        """
    ).execute(arguments: [version, span, start, changes])
  }

  /// Records the blocks a commit completes at `version`: the smallest span's now, in the
  /// commit's transaction; the larger ones as pending, for ``BlockBuilder`` (replacing any
  /// stale one when coalescing rewrote the version). Returns whether any is pending.
  static func recordBlocks(
    at version: VersionNode, blocks: HistoryBlocks, _ db: Database
  ) throws -> Bool {
    // Every span is a multiple of the smallest: most commits complete no block at all.
    guard let smallest = blocks.spans.first, version.depth > 0, version.depth % smallest == 0
    else { return false }
    try writeBlocks(at: version, spans: [smallest], blocks: blocks, db)
    let large = blocks.spans.dropFirst().filter { version.depth % $0 == 0 }
    guard !large.isEmpty else { return false }
    for span in large {
      try db.execute(
        sql: "DELETE FROM history_block WHERE version = ? AND span = ?",
        arguments: [version.id, span])
    }
    try db.execute(
      sql: "INSERT OR IGNORE INTO history_block_pending (version) VALUES (?)",
      arguments: [version.id])
    return true
  }
}

/// Precomputed net changes over aligned runs of versions, so that reaching a far version reads
/// a bounded number of pieces instead of one changeset per version crossed.
///
/// A version at depth d gets, for each span dividing d, a block: the net changes from its
/// ancestor at depth d − span down to itself. Blocks are keyed by version and span, so they
/// serve every branch. With spans 256 and 8,192, the jump from version 100,000 to 1,000 reads
/// 11 large blocks, 34 small ones and 184 single changesets (at most 255 + 31 at each end).
/// The third span, 262,144, halves what a jump across a million versions merges, as a
/// block's net change holds each row once however many of its versions touch it: on 100,000
/// clips edited one at a time, the jump from version 1,000,004 to the first version merges 3
/// such blocks of at most 100,000 rows and 26 of at most 8,192 (about 513,000 row changes)
/// instead of 122 blocks of 8,192 (about 1,000,000).
///
/// Cost: each level stores at most one entry per edit (fewer when edits repeat rows) in a
/// compact encoding of ~24 bytes per one-field edit. A commit that completes a 256-version
/// block merges its 256 changesets (about 1 ms); the larger blocks (32 blocks of the span below
/// merged: 11–16 ms for 8,192 versions) are built by ``BlockBuilder`` in the background.
struct HistoryBlocks: Sendable, Hashable {
  /// Ascending, each a multiple of the one before.
  let spans: [Int64]

  static let standard = HistoryBlocks(spans: [256, 8_192, 262_144])

  /// Queues for ``BlockBuilder`` every version that ends a run of one of the larger spans and
  /// has no block of it: what a project made when the spans were fewer lacks. One scan of the
  /// versions; the builder then merges the blocks in the background.
  func queueMissingBlocks(_ db: Database) throws {
    for span in spans.dropFirst() {
      try db.execute(
        sql: """
          INSERT OR IGNORE INTO history_block_pending (version)
          SELECT id FROM version
          WHERE depth > 0 AND depth % ? = 0 AND NOT EXISTS (
            SELECT 1 FROM history_block WHERE history_block.version = version.id AND span = ?)
          """,
        arguments: [span, span])
    }
  }
}
