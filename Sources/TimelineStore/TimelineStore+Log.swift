import Foundation
internal import GRDB
public import Timeline

/// What `tape log` follows through the history: one clip, track, source, marker, effect or
/// send.
public enum LogSubject: Sendable, Hashable, CustomStringConvertible {
  case clip(Clip.ID)
  /// A track's settings and its volume automation.
  case track(Track.ID)
  case source(Source.ID)
  case marker(Marker.ID)
  case effect(Effect.ID)
  case send(Send.ID)

  public var description: String {
    switch self {
    case .clip(let id): id.description
    case .track(let id): id.description
    case .source(let id): id.description
    case .marker(let id): id.description
    case .effect(let id): id.description
    case .send(let id): id.description
    }
  }

  /// The subject an id names by its prefix: `c3` a clip, `t2` a track, `s1` a source, `m1` a
  /// marker, `f1` an effect, `n1` a send; nil for anything else.
  ///
  /// ```swift
  /// LogSubject(parsing: "c3")  // .clip(c3)
  /// ```
  public init?(parsing text: String) {
    let kinds: [(String, (String) -> LogSubject?)] = [
      ("c", { Clip.ID(parsing: $0).map(LogSubject.clip) }),
      ("t", { Track.ID(parsing: $0).map(LogSubject.track) }),
      ("s", { Source.ID(parsing: $0).map(LogSubject.source) }),
      ("m", { Marker.ID(parsing: $0).map(LogSubject.marker) }),
      ("f", { Effect.ID(parsing: $0).map(LogSubject.effect) }),
      ("n", { Send.ID(parsing: $0).map(LogSubject.send) }),
    ]
    for (prefix, parse) in kinds where text.hasPrefix(prefix) {
      if let subject = parse(text) {
        self = subject
        return
      }
    }
    return nil
  }

  /// The table the subject's own row lives in.
  var table: Int {
    switch self {
    case .clip: ClipRow.index
    case .track: TrackRow.index
    case .source: SourceRow.index
    case .marker: MarkerRow.index
    case .effect: EffectRow.index
    case .send: SendRow.index
    }
  }

  var id: Int64 {
    switch self {
    case .clip(let id): id.rawValue
    case .track(let id): id.rawValue
    case .source(let id): id.rawValue
    case .marker(let id): id.rawValue
    case .effect(let id): id.rawValue
    case .send(let id): id.rawValue
    }
  }

  /// Whether a recorded row belongs to the subject: its own row, and for a track its
  /// envelope (the old one-row form and its point rows, whose ids carry the track).
  func owns(_ key: NetChanges.Key) -> Bool {
    if key.table == table { return key.id == id }
    if case .effect(let effect) = self, key.table == EffectFileRow.index {
      return EffectFileRow.effect(ofFile: key.id) == effect
    }
    if case .effect(let effect) = self,
      key.table == EffectSidechainRow.index || key.table == EffectAutomationRow.index
    {
      return key.id == effect.rawValue
    }
    if case .send(let send) = self, key.table == LaneRow.index {
      return key.id == LaneRow.id(send)
    }
    guard case .track(let track) = self else { return false }
    switch key.table {
    case EnvelopeRow.index: return key.id == track.rawValue
    case EnvelopePointRow.index: return EnvelopePointRow.track(ofPoint: key.id) == track
    case TrackOutputRow.index: return key.id == track.rawValue
    case LaneRow.index: return key.id == LaneRow.id(track)
    default: return false
    }
  }

  /// The tables whose names a version's stored changes must hold to touch the subject.
  var tables: [String] {
    switch self {
    case .track:
      [
        TrackRow.table, EnvelopeRow.table, EnvelopePointRow.table, TrackOutputRow.table,
        LaneRow.table,
      ]
    case .send: [SendRow.table, LaneRow.table]
    case .effect:
      [EffectRow.table, EffectSidechainRow.table, EffectAutomationRow.table, EffectFileRow.table]
    default: [Schema.trackedTables[table]]
    }
  }
}

/// A stored value of a field, as a version recorded it.
public enum LogValue: Sendable, Hashable {
  case null
  case integer(Int64)
  case real(Double)
  case text(String)
  case bytes([UInt8])

  init(_ value: ChangeValue) {
    switch value {
    case .null: self = .null
    case .integer(let value): self = .integer(value)
    case .real(let value): self = .real(value)
    case .text(let text): self = .text(text)
    case .blob(let bytes): self = .bytes(bytes)
    }
  }
}

/// One version's change of a ``LogSubject``: the version, what happened to the subject and
/// each field that changed, before → after, as the version recorded them.
public struct LogEntry: Sendable, Hashable {
  public enum Change: String, Sendable, Hashable {
    case added, changed, removed
  }

  /// A field of the subject's row (named as its column: `timelineStart`, `trackID`, `gainDB`),
  /// or `envelope` for any change of a track's volume automation (its values are then nil:
  /// points are stored relative to each other, and reading them whole would mean replaying).
  public struct Field: Sendable, Hashable {
    public let name: String
    /// Nil when the field did not exist before (an added subject) or is not said.
    public let before: LogValue?
    public let after: LogValue?
  }

  public let entry: HistoryEntry
  public let change: Change
  public let fields: [Field]
  /// Whether the version is the head or one of its ancestors (what made the head as it is).
  public let isOnHeadLine: Bool
}

/// What ``TimelineStore/log(of:allBranches:)`` found.
public struct SubjectLog: Sendable, Hashable {
  public let head: Int64
  /// Newest first (by version number, which grows down every branch).
  public let entries: [LogEntry]
  /// How many versions were looked at: the head's line, or every version with `allBranches`.
  public let versionsSearched: Int

  /// The same log with only its newest `count` entries.
  public func newest(_ count: Int) -> SubjectLog {
    SubjectLog(
      head: head, entries: Array(entries.prefix(count)), versionsSearched: versionsSearched)
  }
}

extension TimelineStore {
  /// Every version that changed `subject`, newest first: the head and its ancestors, or every
  /// version on every branch with `allBranches`.
  ///
  /// It reads the changes each version recorded, never a project: one pass over the version
  /// table (ids and parents, and the changes of the versions that name one of the subject's
  /// tables), each candidate's changes scanned for the subject's rows without decoding their
  /// values, then the few that touch it decoded. No checkout, no replay, one read transaction.
  ///
  /// ```swift
  /// let log = try store.log(of: .clip(Clip.ID(3)))
  /// for entry in log.entries { print(entry.entry.version, entry.fields.map(\.name)) }
  /// ```
  public func log(
    of subject: LogSubject, allBranches: Bool = false
  ) throws(StoreError)
    -> SubjectLog
  {
    do {
      let log = try queue.read { db -> SubjectLog in
        let head = try Head.read(db)
        let handle = try connection(db)
        var parents = VersionParents()
        var touching: [Int64] = []
        // The tables' names are stored at the start of every version's changes (as SQLite's
        // own changesets name them), so SQLite skips the versions that cannot touch them.
        let names = subject.tables.map { Data(($0 + "\0").utf8) }
        let filter = names.map { _ in "instr(changeset, ?) > 0" }.joined(separator: " OR ")
        let statement = try db.makeStatement(
          sql:
            "SELECT id, parent, CASE WHEN \(filter) THEN changeset END FROM version"
        )
        var failure: (any Error)?
        var total = 0
        try RawStatement.query(
          statement.sqliteStatement, on: handle, binding: names.map { .blob(Array($0)) }
        ) { row in
          let id = row.int64(0)
          total += 1
          parents.set(id, parent: row.isNull(1) ? nil : row.int64(1))
          guard !row.isNull(2), failure == nil else { return }
          do {
            if try row.withBlob(2, { try NetChanges.touches($0, where: subject.owns) }) {
              touching.append(id)
            }
          } catch {
            failure = error
          }
        }
        if let failure { throw failure }
        // The head's line: the head and its ancestors, by their parents.
        let line = parents.line(from: head.version)
        var entries: [LogEntry] = []
        let read = try db.cachedStatement(
          sql: "SELECT parent, label, createdAt, changeset FROM version WHERE id = ?")
        for id in touching.sorted(by: >) where allBranches || line.contains(id) {
          let found = try RawStatement.first(
            read.sqliteStatement, on: handle, binding: [.integer(id)]
          ) { row in
            (
              HistoryEntry(
                version: id, parent: row.isNull(0) ? nil : row.int64(0),
                label: row.text(1) ?? "",
                date: Date(timeIntervalSince1970: Double(row.int64(2)) / 1000)),
              row.blob(3)
            )
          }
          guard let (entry, data) = found else { continue }
          var changes = NetChanges()
          try changes.append(changeset: Changeset(data: data))
          entries.append(
            Self.logEntry(subject, changes, entry: entry, onLine: line.contains(id)))
        }
        return SubjectLog(
          head: head.version, entries: entries,
          versionsSearched: allBranches ? total : line.count)
      }
      try checkUnchanged()
      return log
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// The subject's change in one version's `changes`.
  private static func logEntry(
    _ subject: LogSubject, _ changes: NetChanges, entry: HistoryEntry, onLine: Bool
  ) -> LogEntry {
    var change = LogEntry.Change.changed
    var fields: [LogEntry.Field] = []
    var envelope = false
    changes.forEach { key, kind, old, new in
      guard subject.owns(key) else { return }
      // A row of one value beside its key, no row meaning none: where the track goes (none:
      // the master), the effect's side chain, its automation lanes as stored.
      let single: String? =
        switch key.table {
        case TrackOutputRow.index: "output"
        case EffectSidechainRow.index: "sidechain"
        case EffectAutomationRow.index: "automation"
        case LaneRow.index: LaneRow.track(ofLane: key.id) != nil ? "pan automation" : "envelope"
        default: nil
        }
      if let name = single {
        // A lane's points are its last column.
        let column = key.table == LaneRow.index ? LaneRow.columns.count - 1 : 1
        fields.append(
          LogEntry.Field(
            name: name,
            before: kind == .insert
              ? .null : changes.value(old[column]).map(LogValue.init) ?? .null,
            after: kind == .delete
              ? .null : changes.value(new[column]).map(LogValue.init) ?? .null))
        return
      }
      guard key.table == subject.table else {
        envelope = true
        return
      }
      change =
        switch kind {
        case .insert: .added
        case .delete: .removed
        case .update: .changed
        }
      let columns = Schema.trackedColumns[key.table]
      for column in 1..<columns.count {
        let before = kind == .insert ? nil : changes.value(old[column])
        let after = kind == .delete ? nil : changes.value(new[column])
        guard before != nil || after != nil else { continue }
        fields.append(
          LogEntry.Field(
            name: columns[column], before: before.map(LogValue.init),
            after: after.map(LogValue.init)))
      }
    }
    if envelope { fields.append(LogEntry.Field(name: "envelope", before: nil, after: nil)) }
    return LogEntry(entry: entry, change: change, fields: fields, isOnHeadLine: onLine)
  }
}

/// Each version's parent, read in one pass over the version table: an array indexed by id
/// (ids are handed out in order, so they are dense), which a 100,000-version history fills in
/// a fraction of what a dictionary costs; ids far beyond the count go to a dictionary.
private struct VersionParents {
  /// By id: the parent, `root` for a version without one, `missing` for no such version.
  private var byID: [Int64] = []
  private var sparse: [Int64: Int64] = [:]
  private static let root: Int64 = -1
  private static let missing: Int64 = -2
  private static let denseLimit: Int64 = 1 << 24

  mutating func set(_ id: Int64, parent: Int64?) {
    let value = parent ?? Self.root
    guard id >= 0, id < Self.denseLimit else {
      sparse[id] = value
      return
    }
    if id >= byID.count {
      byID.append(contentsOf: repeatElement(Self.missing, count: Int(id) - byID.count + 1))
    }
    byID[Int(id)] = value
  }

  /// The parent of `id`: ``root`` for the first version, ``missing`` for no such version.
  func parent(of id: Int64) -> Int64 {
    id >= 0 && id < byID.count ? byID[Int(id)] : sparse[id] ?? Self.missing
  }

  /// The versions from `head` up to the first (a damaged loop ends where it meets itself).
  func line(from head: Int64) -> VersionSet {
    var line = VersionSet(capacity: byID.count)
    var cursor = head
    while cursor >= 0, line.insert(cursor) {
      let next = parent(of: cursor)
      guard next != Self.missing else { break }
      cursor = next
    }
    return line
  }
}

/// A set of versions as a bitmap over dense ids (and a `Set` beyond it).
private struct VersionSet {
  private var dense: [Bool]
  private var sparse = Set<Int64>()
  private(set) var count = 0

  init(capacity: Int) {
    dense = Array(repeating: false, count: capacity)
  }

  /// Adds `id`; false when it was there already.
  mutating func insert(_ id: Int64) -> Bool {
    if id >= 0 && id < dense.count {
      guard !dense[Int(id)] else { return false }
      dense[Int(id)] = true
    } else {
      guard sparse.insert(id).inserted else { return false }
    }
    count += 1
    return true
  }

  func contains(_ id: Int64) -> Bool {
    id >= 0 && id < dense.count ? dense[Int(id)] : sparse.contains(id)
  }
}
