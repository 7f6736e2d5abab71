public import Foundation
internal import GRDB

/// A name given to a version (`tape tag`), kept in the project file beside its history but not
/// in it: like the clipboards, tagging makes no version, and undo, redo and checkout never
/// touch tags.
public struct VersionTag: Sendable, Hashable {
  public let name: String
  public let version: Int64
  public let date: Date

  /// The longest name, in characters.
  public static let maximumLength = 100

  /// Refuses a name that could be mistaken for something else: empty, too long, all digits or
  /// `v` and digits (it would read as a version number, which always wins), starting with `-`
  /// (it would read as an option), or holding whitespace or control characters (it would not
  /// survive a shell or a listing).
  public static func check(name: String) throws(StoreError) {
    func refuse(_ reason: String) -> StoreError { .invalidTagName(name: name, reason: reason) }
    guard !name.isEmpty else { throw refuse("a name cannot be empty") }
    guard name.count <= maximumLength else {
      throw refuse("a name has at most \(maximumLength) characters")
    }
    guard parseVersionNumber(name) == nil else {
      throw refuse("it reads as a version number; use a name with a letter, such as 'take-\(name)'")
    }
    guard parseHeadReference(name) == nil else {
      throw refuse("it names the head (HEAD, HEAD~N) as git does; use another name")
    }
    guard !name.hasPrefix("-") else { throw refuse("a name cannot start with '-'") }
    guard
      !name.unicodeScalars.contains(where: {
        $0.properties.isWhitespace || $0.properties.generalCategory == .control
          || $0.properties.generalCategory == .format
      })
    else { throw refuse("a name cannot hold spaces, tabs, newlines or control characters") }
  }
}

/// `12` or `v12` as a version number; nil for anything else (a tag's name).
func parseVersionNumber(_ text: String) -> Int64? {
  let digits = text.hasPrefix("v") ? text.dropFirst() : Substring(text)
  guard !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
  // Digits too many for Int64 are still a number (one no project has), never a name.
  return Int64(digits) ?? .max
}

/// `HEAD` (or `head`) as 0, `HEAD~N` as N, `HEAD^`, `HEAD^^`… as the carets' count: the
/// steps back from the head, as git names them; nil for anything else.
func parseHeadReference(_ text: String) -> Int64? {
  guard text.hasPrefix("HEAD") || text.hasPrefix("head") else { return nil }
  let rest = text.dropFirst(4)
  if rest.isEmpty { return 0 }
  if rest.allSatisfy({ $0 == "^" }) { return Int64(rest.count) }
  guard rest.first == "~" else { return nil }
  let digits = rest.dropFirst()
  if digits.isEmpty { return 1 }
  guard digits.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
  return Int64(digits) ?? .max
}

extension TimelineStore {
  /// The version a reference names: a version number (`12`, or `v12` as Tape prints them), a
  /// tag's name, or the head as git names it: `HEAD` (`head`), `HEAD~N` (N steps back along
  /// the head's line of parents, where N undos would go), `HEAD^` (one). The one resolver every
  /// command that takes a version uses.
  ///
  /// ```swift
  /// let version = try store.resolveVersion("mix-1")   // the version tagged mix-1
  /// let same = try store.resolveVersion("v12")        // 12
  /// ```
  ///
  /// A number is returned as it is, checked only when `mustExist` (then a number no version
  /// has throws ``StoreError/unknownVersion(_:)``); a name no tag has throws
  /// ``StoreError/unknownReference(_:)``.
  public func resolveVersion(
    _ reference: String, mustExist: Bool = true
  ) throws(StoreError) -> Int64 {
    if let number = parseVersionNumber(reference) {
      if mustExist, try entry(number) == nil { throw .unknownVersion(number) }
      return number
    }
    if let steps = parseHeadReference(reference) {
      let head = snapshot.version
      guard steps > 0 else { return head }
      do {
        return try queue.read { db in
          let node = try VersionGraph.node(head, db)
          guard steps <= node.depth else {
            throw StoreError.beforeFirstVersion(
              reference: reference, head: head, available: node.depth)
          }
          return try VersionGraph.ancestor(of: node, atDepth: node.depth - steps, db).id
        }
      } catch {
        throw Self.translate(error, at: path)
      }
    }
    guard let tag = try tags().first(where: { $0.name == reference }) else {
      throw .unknownReference(reference)
    }
    return tag.version
  }

  /// Every tag of the project, by name. A project made before tags existed, read without
  /// upgrading it, has none.
  public func tags() throws(StoreError) -> [VersionTag] {
    let found: [VersionTag]
    do {
      found = try queue.read { db in try Self.readTags(db) }
    } catch {
      throw Self.translate(error, at: path)
    }
    try checkUnchanged()
    return found
  }

  static func readTags(_ db: Database) throws -> [VersionTag] {
    guard try db.tableExists("tag") else { return [] }
    return try Row.fetchAll(db, sql: "SELECT name, version, createdAt FROM tag ORDER BY name")
      .map { row in
        VersionTag(
          name: try row.value("name", of: "tag"), version: try row.value("version", of: "tag"),
          date: Date(
            timeIntervalSince1970: Double(try row.value("createdAt", of: "tag") as Int64) / 1000))
      }
  }

  /// Names `version` (the head when nil) `name`. Makes no version: the history, the head and
  /// every version's content stay as they are. A name another version has is refused
  /// (``StoreError/tagExists(name:version:)``); tagging the version it names already is a
  /// no-op.
  @discardableResult
  public func tag(_ version: Int64? = nil, as name: String) throws(StoreError) -> VersionTag {
    try checkWriteAccess()
    try VersionTag.check(name: name)
    do {
      return try writeTransaction { db in
        let target = try version ?? Head.read(db).version
        guard try HistoryEntry.read(target, db) != nil else {
          throw StoreError.unknownVersion(target)
        }
        if let existing = try Self.readTags(db).first(where: { $0.name == name }) {
          guard existing.version == target else {
            throw StoreError.tagExists(name: name, version: existing.version)
          }
          return existing
        }
        let created = now()
        try db.execute(
          sql: "INSERT INTO tag (name, version, createdAt) VALUES (?, ?, ?)",
          arguments: [name, target, created])
        return VersionTag(
          name: name, version: target, date: Date(timeIntervalSince1970: Double(created) / 1000))
      }
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// Removes the tag `name` (the version it named stays as it is); returns it.
  @discardableResult
  public func deleteTag(named name: String) throws(StoreError) -> VersionTag {
    try checkWriteAccess()
    do {
      return try writeTransaction { db in
        guard let existing = try Self.readTags(db).first(where: { $0.name == name }) else {
          throw StoreError.unknownTag(name)
        }
        try db.execute(sql: "DELETE FROM tag WHERE name = ?", arguments: [name])
        return existing
      }
    } catch {
      throw Self.translate(error, at: path)
    }
  }
}
