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
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(sql: "SELECT parent, jump, depth FROM version WHERE id = ?"),
        arguments: [id])
    else { throw StoreError.unknownVersion(id) }
    return VersionNode(id: id, parent: row["parent"], jump: row["jump"], depth: row["depth"])
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
    precondition(depth >= 0 && depth <= node.depth, "ancestor depth out of range")
    var current = node
    while current.depth > depth {
      let jump = try self.node(current.jump, db)
      if jump.depth >= depth {
        current = jump
      } else if let parent = current.parent {
        current = try self.node(parent, db)
      }
    }
    return current
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
        a = try node(a.jump, db)
        b = try node(b.jump, db)
      } else if let pa = a.parent, let pb = b.parent {
        a = try node(pa, db)
        b = try node(pb, db)
      } else {
        throw StoreError.corrupt(detail: "versions \(a.id) and \(b.id) share no root")
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

  /// The stored changeset from `id`'s parent to `id`.
  static func changeset(of id: Int64, _ db: Database) throws -> Changeset {
    guard
      let data = try Data.fetchOne(
        db.cachedStatement(sql: "SELECT changeset FROM version WHERE id = ?"), arguments: [id])
    else { throw StoreError.unknownVersion(id) }
    return Changeset(data: data)
  }

  /// One changeset that takes the tracked tables from version `from` to version `to`: the
  /// changes from their common ancestor down to `from`, reversed, then those down to `to`,
  /// concatenated so each differing row appears once.
  static func pathChangeset(from: VersionNode, to: VersionNode, _ db: Database) throws -> Changeset
  {
    if from.id == to.id { return Changeset() }
    let common = try commonAncestor(from, to, db)
    let up = try changeset(from: common, downTo: from, db)
    let down = try changeset(from: common, downTo: to, db)
    return try SessionCalls.concatenate([up.inverted(), down])
  }

  /// The changes from `ancestor` down to `descendant`, as one changeset.
  ///
  /// A version's id is larger than its parent's, so every version on the way lies in
  /// `(ancestor.id, descendant.id]`: one scan of that range, newest first, follows the parent
  /// links (skipping other branches' versions) instead of one lookup per version.
  private static func changeset(
    from ancestor: VersionNode, downTo descendant: VersionNode, _ db: Database
  ) throws -> Changeset {
    if ancestor.id == descendant.id { return Changeset() }
    if descendant.parent == ancestor.id { return try changeset(of: descendant.id, db) }
    var path: [Data] = []
    path.reserveCapacity(Int(descendant.depth - ancestor.depth))
    var next = descendant.id
    let rows = try Row.fetchCursor(
      db.cachedStatement(
        sql: "SELECT id, parent, changeset FROM version WHERE id > ? AND id <= ? ORDER BY id DESC"),
      arguments: [ancestor.id, descendant.id])
    while next != ancestor.id, let row = try rows.next() {
      guard row["id"] as Int64 == next else { continue }
      path.append(row["changeset"])
      guard let parent = row["parent"] as Int64? else { break }
      next = parent
    }
    guard next == ancestor.id else {
      throw StoreError.corrupt(
        detail: "version \(descendant.id) does not descend from \(ancestor.id)")
    }
    let group = try SessionCalls.ChangeGroup()
    for data in path.reversed() { try group.add(data) }
    return try group.output()
  }
}
