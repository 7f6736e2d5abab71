internal import GRDB
import Logging
import Synchronization
public import Timeline

extension TimelineStore {
  /// What a commit did.
  public struct CommitResult: Sendable, Hashable {
    /// The head version after the commit (unchanged when nothing changed).
    public let version: Int64
    /// The ids the commit changed; empty when the commands changed nothing.
    public let changed: ChangedIDs
    /// The ids allocated during the commit, in order (what `tape` prints).
    public let newIDs: [String]
  }

  /// The one write API: runs `edit` against the current project, checks the commands it
  /// returns, writes them and records how to undo them, all in one transaction.
  ///
  /// `edit` may throw a `TimelineError` (reported as ``StoreError/invalidEdit(_:)``) or a
  /// ``StoreError``. It receives the project as it is on disk at this moment (including commits another
  /// process made) and an allocator for new ids, and returns commands carrying final state.
  /// When the commands change nothing, no version is created. With a `coalescingKey`, a run of
  /// commits with the same key on the head (a fader drag) becomes one undo step: the head
  /// version absorbs the change instead of gaining a child.
  ///
  /// ```swift
  /// try store.commit(label: "Split") { project, ids in
  ///   try project.splitClip(clipID, at: 96_000, newID: ids.newClipID())
  /// }
  /// ```
  ///
  /// `label` is read after `edit` has run, so it can say what the edit found (a time a snap
  /// moved, say).
  @discardableResult
  public func commit(
    label: @autoclosure () -> String, coalescingKey: String? = nil,
    _ edit: (Project, inout IDAllocator) throws -> [Command]
  ) throws(StoreError) -> CommitResult {
    try commit(label: label(), coalescingKey: coalescingKey, part: nil, edit)
  }

  /// ``commit(label:coalescingKey:_:)``, run on the store's snapshot (`part` nil) or on the
  /// part of the project `part` names, read in the transaction (``ScopedEditor``).
  func commit(
    label: @autoclosure () -> String, coalescingKey: String?, part: EditScope?,
    _ edit: (Project, inout IDAllocator) throws -> [Command]
  ) throws(StoreError) -> CommitResult {
    try write(.edit, part: part) { head, held, db in
      var ids = try IDSequence.read(db)
      let firstIDs = ids
      let commands = try edit(held.project, &ids)
      let (newProject, changed) = try held.project.applyingWithChanges(commands)
      let (rows, newPositions, newPoints, placements) = RowWriter.changes(
        from: held, to: newProject, changed: changed)
      let recorded: NetChanges
      do {
        recorded = try RowWriter.applyRecording(rows, db)
      } catch StoreError.historyDiverged {
        // A row the snapshot has (caught up above) is not in the file: a bug, and the
        // transaction is abandoned.
        throw StoreError.internalFailure(
          "an edit's rows disagree with the project file, which is left unchanged")
      }
      guard !recorded.isEmpty else {
        return (nil, CommitResult(version: head.version, changed: ChangedIDs(), newIDs: []))
      }
      try IDSequence.write(ids, since: firstIDs, db)
      let (newHead, pending) = try record(
        recorded, label: label(), coalescingKey: coalescingKey, head: head, db)
      let step = WriteStep(
        head: newHead,
        held: HeldProject(
          project: newProject, positions: newPositions, points: newPoints,
          clips: held.clips.updating(placements)),
        changed: changed, blocksPending: pending)
      return (
        step,
        CommitResult(
          version: newHead.version, changed: changed,
          newIDs: ids.created(since: firstIDs))
      )
    }
  }

  /// ``commit(label:coalescingKey:_:)`` for an edit that works out its commands with code that
  /// throws errors of its own (a time that does not parse, a file that is not audio): such an
  /// error comes out as itself, for the caller to report as it reports it, rather than as
  /// ``StoreError/internalFailure(_:)``. A `TimelineError` is the store's, as in `commit`.
  @discardableResult
  public func edit(
    label: @autoclosure () -> String, _ edit: (Project, inout IDAllocator) throws -> [Command]
  ) throws -> CommitResult {
    try passingEditErrors(edit) { try commit(label: label(), $0) }
  }

  /// Commits `commands` as they are.
  @discardableResult
  public func commit(
    _ commands: [Command], label: String, coalescingKey: String? = nil
  )
    throws(StoreError) -> CommitResult
  {
    try commit(label: label, coalescingKey: coalescingKey) { _, _ in commands }
  }

  /// Stores `recorded` as a new child of the head, or folds it into the head when coalescing,
  /// and writes the new head. Returns it, and whether a large history block awaits the
  /// background builder. The version keeps the changes in the packed encoding
  /// (``NetChanges/packed()``), a fifth of a session changeset's size for a ripple edit.
  private func record(
    _ recorded: NetChanges, label: String, coalescingKey: String?, head: Head, _ db: Database
  ) throws -> (head: Head, blocksPending: Bool) {
    let revision = head.revision + 1
    let headNode = try VersionGraph.node(head.version, db)
    if let coalescingKey, headNode.depth > 0,
      let row = try Row.fetchOne(
        db.cachedStatement(
          sql: """
            SELECT coalescingKey, changeset,
              EXISTS (SELECT 1 FROM version AS child WHERE child.parent = version.id) AS hasChildren
            FROM version WHERE id = ?
            """),
        arguments: [head.version]),
      try row.value("coalescingKey", of: "version") as String? == coalescingKey,
      !(try row.value("hasChildren", of: "version") as Bool)
    {
      var net = NetChanges()
      try net.append(changeset: Changeset(data: try row.value("changeset", of: "version")))
      try net.append(recorded)
      try db.cachedStatement(
        sql: "UPDATE version SET changeset = ?, createdAt = ?, revision = ? WHERE id = ?"
      ).execute(arguments: [net.packed(), now(), revision, head.version])
      let pending = try VersionGraph.recordBlocks(at: headNode, blocks: historyBlocks, db)
      let newHead = Head(version: head.version, tip: head.version, revision: revision)
      try newHead.write(db)
      return (newHead, pending)
    }
    let jump = try VersionGraph.jump(forChildOf: headNode, db)
    try db.cachedStatement(
      sql: """
        INSERT INTO version
          (parent, jump, depth, label, createdAt, coalescingKey, changeset, revision)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      head.version, jump, headNode.depth + 1, label, now(), coalescingKey, recorded.packed(),
      revision,
    ])
    let version = db.lastInsertedRowID
    let pending = try VersionGraph.recordBlocks(
      at: VersionNode(id: version, parent: head.version, jump: jump, depth: headNode.depth + 1),
      blocks: historyBlocks, db)
    let newHead = Head(version: version, tip: version, revision: revision)
    try newHead.write(db)
    return (newHead, pending)
  }
}

/// The never-rolled-back id counters (the `id_sequence` row).
enum IDSequence {
  static func read(_ db: Database) throws -> IDAllocator {
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(
          sql: "SELECT nextSource, nextTrack, nextClip FROM id_sequence WHERE id = 1"))
    else { throw StoreError.corrupt(detail: "the id sequence row is missing") }
    var ids = IDAllocator(
      nextSource: try row.value("nextSource", of: "id_sequence"),
      nextTrack: try row.value("nextTrack", of: "id_sequence"),
      nextClip: try row.value("nextClip", of: "id_sequence"))
    ids.nextEffect = try counter("nextEffect", in: "effect_sequence", named: "effect", db)
    ids.nextMarker = try counter("nextMarker", in: "marker_sequence", named: "marker", db)
    ids.nextSend = try counter("nextSend", in: "send_sequence", named: "send", db)
    return ids
  }

  /// Writes the counters that moved since `earlier` (what ``read(_:)`` gave): an edit that
  /// made no effect or marker writes neither of their rows.
  static func write(_ ids: IDAllocator, since earlier: IDAllocator, _ db: Database) throws {
    if (ids.nextSource, ids.nextTrack, ids.nextClip)
      != (earlier.nextSource, earlier.nextTrack, earlier.nextClip)
    {
      try db.cachedStatement(
        sql: "UPDATE id_sequence SET nextSource = ?, nextTrack = ?, nextClip = ? WHERE id = 1"
      ).execute(arguments: [ids.nextSource, ids.nextTrack, ids.nextClip])
    }
    if ids.nextEffect != earlier.nextEffect {
      try db.cachedStatement(sql: "UPDATE effect_sequence SET nextEffect = ? WHERE id = 1")
        .execute(arguments: [ids.nextEffect])
    }
    if ids.nextMarker != earlier.nextMarker {
      try db.cachedStatement(sql: "UPDATE marker_sequence SET nextMarker = ? WHERE id = 1")
        .execute(arguments: [ids.nextMarker])
    }
    if ids.nextSend != earlier.nextSend {
      try db.cachedStatement(sql: "UPDATE send_sequence SET nextSend = ? WHERE id = 1")
        .execute(arguments: [ids.nextSend])
    }
  }

  /// The one counter of a one-row sequence table (`effect_sequence`, `marker_sequence`).
  private static func counter(
    _ column: String, in table: String, named kind: String, _ db: Database
  ) throws -> Int64 {
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(sql: "SELECT \(column) FROM \(table) WHERE id = 1"))
    else { throw StoreError.corrupt(detail: "the \(kind) id sequence row is missing") }
    return try row.value(column, of: table)
  }
}

/// Runs `commit` with `edit`, so that an error of the edit's own (anything but a
/// `TimelineError`, which is the store's to report) comes out of it as itself rather than as
/// ``StoreError/internalFailure(_:)``: what ``TimelineStore/edit(label:_:)`` and
/// ``ScopedEditor/edit(scope:label:_:)`` share.
func passingEditErrors<Input, Output, Result>(
  _ edit: (Input, inout IDAllocator) throws -> Output,
  through commit: ((Input, inout IDAllocator) throws -> Output) throws -> Result
) throws -> Result {
  var own: (any Error)?
  // `commit` calls the edit once, and never keeps it: not an escape.
  return try withoutActuallyEscaping(edit) { edit in
    do {
      return try commit { input, ids in
        do {
          return try edit(input, &ids)
        } catch let error as TimelineError {
          throw error
        } catch {
          own = error
          throw error
        }
      }
    } catch {
      if let own { throw own }
      throw error
    }
  }
}
