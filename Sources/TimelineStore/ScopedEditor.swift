public import Foundation
internal import GRDB
public import Timeline

/// What a scoped edit reads of a project: every table whole but the clips, and of the clips
/// those it names by id and those called by the names it gives (so that a name resolves, and a
/// name the edit gives a clip is checked against every clip that has it).
public struct EditScope: Sendable, Hashable {
  public var clips: Set<Clip.ID>
  public var clipNames: Set<String>

  public init(clips: Set<Clip.ID> = [], clipNames: Set<String> = []) {
    self.clips = clips
    self.clipNames = clipNames
  }

  /// The ids of the clips to read: `clips`, and those whose name is one of `clipNames`.
  func clipIDs(_ db: Database) throws -> Set<Clip.ID> {
    var ids = clips
    if !clipNames.isEmpty, try db.tableExists(Schema.clipDetailTable) {
      let marks = Array(repeating: "?", count: clipNames.count).joined(separator: ", ")
      let named = try Int64.fetchAll(
        db, sql: "SELECT clipID FROM \(Schema.clipDetailTable) WHERE name IN (\(marks))",
        arguments: StatementArguments(clipNames.sorted()))
      ids.formUnion(named.map(Clip.ID.init))
    }
    return ids
  }
}

/// Edits a project without reading all of it: each edit reads, in its own write transaction,
/// the part of the project its ``EditScope`` names, runs on that part, and writes only the rows
/// that changed, as ``TimelineStore/commit(label:coalescingKey:_:)`` would have on the whole
/// project. What a one-clip edit from the shell costs then follows the clips it touches, not
/// the clips the project holds.
///
/// A part is not the project, so it never leaves an edit: a scoped editor has no snapshot, no
/// subscribers and nothing to render; it commits, and moves the head through history
/// (``undo(steps:)``, ``redo(steps:)``, ``checkout(_:)``), reading what each move changes. An edit whose
/// commands reach beyond its part (a clip it did not read, a source or a track, which other
/// clips depend on) is not made: ``commit(scope:label:_:)`` answers
/// ``ScopedCommit/needsWholeProject``, having changed nothing, and the caller makes the edit
/// on a whole ``TimelineStore``. The rule of what a part may change:
/// - a clip it read, or a new clip (an id allocated by this edit), through
///   ``/Timeline/Command/setClip(_:track:)``, on a track of the project; a name given to a clip
///   (new, or other than its own) must be one of the scope's names, so that every clip that
///   has it was read and the model's check that names are unique sees them;
/// - clips it read, through ``/Timeline/Command/removeClips(_:)``.
/// Every other command (sources, tracks, effects, markers, master gain) needs the whole
/// project.
public final class ScopedEditor: Sendable {
  private let store: TimelineStore

  /// Opens `path` for writing (an older file is upgraded in place, as by
  /// ``TimelineStore/open(at:access:busyTimeout:durability:keepingLargeMovesPending:)``), reading
  /// no project yet.
  public init(
    at path: String, busyTimeout: TimeInterval = TimelineStore.defaultBusyTimeout,
    durability: TimelineStore.Durability = .full
  ) throws(StoreError) {
    store = try TimelineStore.open(
      at: path, access: .write, busyTimeout: busyTimeout, durability: durability,
      historyBlocks: .standard, loadingSnapshot: false)
  }

  /// Tests open with small history blocks.
  init(at path: String, historyBlocks: HistoryBlocks) throws(StoreError) {
    store = try TimelineStore.open(
      at: path, access: .write, historyBlocks: historyBlocks, loadingSnapshot: false)
  }

  /// What opening the project did that its user should know (``TimelineStore/notes``).
  public var notes: [String] { store.notes }

  /// The project file.
  public var path: String { store.path }

  /// What a scoped commit did.
  public enum ScopedCommit: Sendable, Hashable {
    /// Committed (or nothing changed) as the whole project's commit would have.
    case committed(TimelineStore.CommitResult)
    /// The edit reaches beyond its scope; nothing was written: make it on the whole project.
    case needsWholeProject
  }

  /// ``TimelineStore/commit(label:coalescingKey:_:)`` on the part of the project `scope`
  /// names, read in the write transaction (so another process's commits are in it). `edit`
  /// gets that part as a ``/Timeline/Project`` holding only those clips: it must look up no
  /// other clip, and may return `nil` to say it needs the whole project.
  public func commit(
    scope: EditScope, label: String,
    _ edit: (Project, inout IDAllocator) throws -> [Command]?
  ) throws(StoreError) -> ScopedCommit {
    var beyond = false
    do {
      return .committed(
        try store.commit(label: label, coalescingKey: nil, part: scope) { part, ids in
          let firstClip = ids.nextClip
          guard let commands = try edit(part, &ids),
            Self.stayWithin(commands, part: part, scope: scope, newFrom: firstClip)
          else {
            beyond = true
            throw NeedsWholeProject()
          }
          return commands
        })
    } catch {
      if beyond { return .needsWholeProject }
      throw error
    }
  }

  /// ``commit(scope:label:_:)`` for an edit that works out its commands with code that throws
  /// errors of its own: such an error comes out as itself, as from
  /// ``TimelineStore/edit(label:_:)``.
  public func edit(
    scope: EditScope, label: String, _ edit: (Project, inout IDAllocator) throws -> [Command]?
  ) throws -> ScopedCommit {
    try passingEditErrors(edit) { try commit(scope: scope, label: label, $0) }
  }

  /// The version `reference` names (``TimelineStore/resolveVersion(_:mustExist:)``; `HEAD~N`
  /// counts from the head at open).
  public func resolveVersion(_ reference: String) throws(StoreError) -> Int64 {
    try store.resolveVersion(reference)
  }

  /// ``TimelineStore/undo(steps:)``, reading what it changes rather than the whole project
  /// (``ScopedMove``): the same rows written, the same errors.
  @discardableResult
  public func undo(steps: Int = 1) throws(StoreError) -> ScopedMove {
    try store.movePart(.undo, TimelineStore.undoTarget(steps: steps))
  }

  /// ``TimelineStore/redo(steps:)``, reading what it changes.
  @discardableResult
  public func redo(steps: Int = 1) throws(StoreError) -> ScopedMove {
    try store.movePart(.redo, TimelineStore.redoTarget(steps: steps))
  }

  /// ``TimelineStore/checkout(_:)``, reading what it changes.
  @discardableResult
  public func checkout(_ version: Int64) throws(StoreError) -> ScopedMove {
    try store.movePart(.checkout, TimelineStore.checkoutTarget(version))
  }

  /// Closes the file (see ``TimelineStore/close()``).
  public func close() throws(StoreError) { try store.close() }

  /// Whether `commands` change only what `part` holds (see the rule above): clips read, or
  /// new ones (ids from `newFrom` on).
  static func stayWithin(
    _ commands: [Command], part: Project, scope: EditScope, newFrom: Int64
  ) -> Bool {
    let read = Dictionary(uniqueKeysWithValues: part.allClips.map { ($0.id, $0) })
    for command in commands {
      switch command {
      case .setClip(let clip, let track):
        guard part.track(track) != nil else { return false }
        let before = read[clip.id]
        guard before != nil || clip.id.rawValue >= newFrom else { return false }
        if let name = clip.name, name != before?.name, !scope.clipNames.contains(name) {
          return false
        }
      case .removeClips(let ids):
        guard ids.allSatisfy({ read[$0] != nil }) else { return false }
      case .setSource, .removeSources, .setTrack, .setTrackOrder, .removeTracks, .setMasterGain,
        .setEffects, .setMarker, .removeMarkers, .setSend, .removeSends, .setTake, .removeTakes:
        return false
      }
    }
    return true
  }
}

/// An edit's commands reach beyond its part: thrown through the commit, which rolls back.
private struct NeedsWholeProject: Error {}
