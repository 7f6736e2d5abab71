internal import CSQLiteSession
public import Foundation
internal import GRDB
import Logging
import SafeFiles
import Synchronization
public import Timeline

/// One project's current version and its timeline.
public struct StoreSnapshot: Sendable, Hashable {
  public let version: Int64
  public let project: Project

  public init(version: Int64, project: Project) {
    self.version = version
    self.project = project
  }
}

/// One move of a project's head, as the store journals it in the move's own transaction.
public struct HeadMove: Sendable, Hashable {
  /// What moved the head.
  public enum Cause: String, Sendable, Hashable, CaseIterable {
    case new, edit, undo, redo, checkout
  }

  /// Increases by one with every move of this project, in any process.
  public let sequence: Int64
  /// The head before (nil for the project's creation). Equal to `to` for an edit folded into
  /// the head version (a fader drag).
  public let from: Int64?
  public let to: Int64
  public let cause: Cause
  public let date: Date
}

/// What subscribers receive for every new snapshot: on open, after every edit, undo, redo and
/// checkout, and after a commit by another process.
public struct StoreUpdate: Sendable, Hashable {
  public let version: Int64
  public let project: Project
  /// The ids that may have changed since the previous update.
  public let changed: ChangedIDs
  /// Each change with its values before and after.
  public let diff: ProjectDiff
  /// The head moves since the previous update, oldest first: one for an edit, undo, redo or
  /// checkout of this store; several when another process moved the head more than once
  /// between two looks (the snapshot is then the last one's). Empty for the first update.
  public let moves: [HeadMove]

  /// What caused this snapshot: the last move's cause (nil for the first update).
  public var cause: HeadMove.Cause? { moves.last?.cause }
}

/// Hands out ids for new sources, tracks and clips inside a commit. Ids are never reused, not
/// even after an undo, so an id printed once always means the same thing.
public struct IDAllocator: Sendable {
  var nextSource: Int64
  var nextTrack: Int64
  var nextClip: Int64
  var nextEffect: Int64 = 1
  var nextMarker: Int64 = 1
  var nextSend: Int64 = 1

  public mutating func newSourceID() -> Source.ID {
    defer { nextSource += 1 }
    return Source.ID(nextSource)
  }

  public mutating func newTrackID() -> Track.ID {
    defer { nextTrack += 1 }
    return Track.ID(nextTrack)
  }

  public mutating func newClipID() -> Clip.ID {
    defer { nextClip += 1 }
    return Clip.ID(nextClip)
  }

  public mutating func newEffectID() -> Effect.ID {
    defer { nextEffect += 1 }
    return Effect.ID(nextEffect)
  }

  public mutating func newMarkerID() -> Marker.ID {
    defer { nextMarker += 1 }
    return Marker.ID(nextMarker)
  }

  public mutating func newSendID() -> Send.ID {
    defer { nextSend += 1 }
    return Send.ID(nextSend)
  }

  /// The ids allocated since `earlier` (this allocator at an earlier moment): sources, then
  /// tracks, then clips, then effects, then markers, each in order.
  public func created(since earlier: IDAllocator) -> [String] {
    (earlier.nextSource..<nextSource).map { Source.ID($0).description }
      + (earlier.nextTrack..<nextTrack).map { Track.ID($0).description }
      + (earlier.nextClip..<nextClip).map { Clip.ID($0).description }
      + (earlier.nextEffect..<nextEffect).map { Effect.ID($0).description }
      + (earlier.nextMarker..<nextMarker).map { Marker.ID($0).description }
      + (earlier.nextSend..<nextSend).map { Send.ID($0).description }
  }
}

/// A Tape project file: the timeline, its sources and its whole undo history, in one SQLite file.
///
/// There is one way to change a project, ``commit(label:coalescingKey:_:)``, and one way to see
/// changes, ``updates()``. Every commit runs in one transaction that also stores how to reverse
/// it: SQLite's session extension records the changed rows as a changeset, written to the
/// `version` table in the same transaction. Undo, redo and checkout apply recorded changesets
/// through the same path and move the head; subscribers receive them exactly like edits.
///
/// ```swift
/// let store = try TimelineStore.create(at: "song.tape", sampleRate: 48_000, channels: 2)
/// let result = try store.commit(label: "Add track") { project, ids in
///   try project.addTrack(Track(id: ids.newTrackID(), name: "Drums"))
/// }
/// try store.undo()
/// ```
///
/// Thread-safe: operations are serialised on the file's connection. Another process may edit the
/// same file; writers wait up to a busy timeout (``defaultBusyTimeout``) for each other, then fail with
/// ``StoreError/busy``. Readers (``Access/read``, ``Access/follow``) never wait for a writer and
/// never make one wait: every read is one read transaction, ended as soon as its data is loaded.
public final class TimelineStore: Sendable {
  /// What a store may do with its file.
  public enum Access: Sendable, Hashable {
    /// Commits, undo, redo and checkout. Builds history blocks and checkpoints the log.
    case write
    /// Reading only, for one-shot commands (`ls`, `history`, `render`): a read-only connection
    /// that writes nothing, not even when it closes. With the project's `-wal` and `-shm`
    /// present it reads through them; with no `-wal` (no writer active) it opens the file as
    /// immutable, creating no file at all, and checks afterwards that nothing wrote meanwhile.
    case read
    /// Reading while following commits from other processes (a player, a watcher): like
    /// ``read``, but without `-wal` in a folder it may write, SQLite creates `-wal` and `-shm`
    /// so that commits can be seen. Where it cannot, it reads immutably and ``canFollow`` is
    /// false.
    case follow
  }

  /// How long a write waits, by default, for another process's write to finish.
  public static let defaultBusyTimeout: TimeInterval = 5

  /// What an acknowledged commit survives.
  public enum Durability: Sendable {
    /// A crash, a `kill -9` and a power loss (`synchronous=FULL`). The default.
    case full
    /// A crash and a `kill -9`, but the last commits may be lost on power loss
    /// (`synchronous=NORMAL`). For bulk work such as building benchmark fixtures.
    case normal
  }

  public let path: String
  public let access: Access
  /// What opening the project did that its user should know, a line each: a log beside the
  /// file that was another file's, set aside (`LogOwnership`).
  public let notes: [String]
  /// Whether commits made after opening can be seen: false for an immutable read.
  public var canFollow: Bool { immutableIdentity == nil }
  /// For a file opened immutably: what it (and a log holding no frame, if there was one) was
  /// when opened; every read checks it still is.
  let immutableIdentity: ImmutableRead?

  /// What an immutable read saw when it opened the file.
  struct ImmutableRead {
    let file: FileIdentity
    /// A `-wal` holding no frame (a writer stopped right after creating it), read past.
    let log: FileIdentity?
  }
  let queue: DatabaseQueue
  let state: Mutex<State>
  let checkpointer: Checkpointer
  /// The spans of the history blocks this store writes and reads.
  let historyBlocks: HistoryBlocks
  /// From how many row changes a history move is kept pending (``standardDeferredMoveRows``; tests
  /// lower it).
  let deferredMoveRows: Int
  let blockBuilder: BlockBuilder
  /// Calls of ``write(_:_:)``: see ``writeCount``.
  let writes = Atomic<Int>(0)
  let logger = Logger(label: "tape.store")

  struct State {
    var version: Int64
    var revision: Int64
    /// The last head move this store has seen (0 before any).
    var journalSequence: Int64 = 0
    var held: HeldProject
    var subscribers: [Int: AsyncStream<StoreUpdate>.Continuation] = [:]
    var nextSubscriber = 0
    /// Polls for other processes' commits while anyone subscribes.
    var poller: Poller?
    /// ``close()`` has run (a second close has nothing to fold).
    var closed = false
    /// The pending move this store's last move wrote (``PendingMove/Kept``).
    var pendingMove: PendingMove.Kept?
    /// A move of this store has left a move pending: its close folds what is pending.
    var madePendingMove = false
  }

  private init(
    path: String, access: Access, immutableIdentity: ImmutableRead?, queue: DatabaseQueue,
    state: State, checkpointer: Checkpointer, historyBlocks: HistoryBlocks, deferredMoveRows: Int,
    notes: [String]
  ) {
    self.notes = notes
    self.path = path
    self.access = access
    self.immutableIdentity = immutableIdentity
    self.queue = queue
    self.state = Mutex(state)
    self.checkpointer = checkpointer
    self.historyBlocks = historyBlocks
    self.deferredMoveRows = deferredMoveRows
    blockBuilder = BlockBuilder(path: path, blocks: historyBlocks)
  }

  deinit {
    // Outside the lock (``Poller/cancel()``); no check is on its way here (one holds the store).
    let poller = state.withLock { state in
      defer { state.poller = nil }
      return state.poller
    }
    poller?.cancel()
    blockBuilder.close()
    // The connection's WAL hook points at the checkpointer: close the connection first.
    try? queue.close()
    checkpointer.close()
    if access != .write { Self.closeLogIfLast(path) }
    releaseHeader()
  }

  /// The header descriptor this store keeps open (see ``checkHeader(_:)``), given back once
  /// every connection of the store is closed.
  let headerLease = Mutex<HeaderReaders.Key?>(nil)

  /// Where the file this store opened is now, as its path names it or not.
  public enum Whereabouts: Sendable, Hashable {
    /// Its path still names it.
    case inPlace
    /// It was renamed within its folder: `to` is its path now.
    case renamed(to: String)
    /// Its path names another file or none, and it is not in its folder: moved elsewhere
    /// (or given another name that this folder does not show).
    case moved
    /// No name is left to it.
    case deleted
  }

  /// Where the file this store opened is now (its descriptor is kept open, so it is known
  /// even when its path names another file or none).
  public var whereabouts: Whereabouts {
    guard let key = headerLease.withLock({ $0 }),
      let held = HeaderReaders.shared.descriptor(key),
      let opened = FileIdentity(descriptor: held.descriptor)
    else { return .inPlace }
    if let now = FileIdentity(path: path), now.isSameFile(as: opened) { return .inPlace }
    var info = stat()
    guard fstat(held.descriptor, &info) == 0, info.st_nlink > 0 else { return .deleted }
    let folder = RawPath(path).folder.description
    guard let directory = opendir(folder.isEmpty ? "." : folder) else { return .moved }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      let candidate = folder.isEmpty ? name : "\(folder)/\(name)"
      if UInt64(entry.pointee.d_ino) == opened.inode,
        let identity = FileIdentity(path: candidate), identity.isSameFile(as: opened)
      {
        return .renamed(to: candidate)
      }
    }
    return .moved
  }

  /// Gives the header descriptor back, having checked the log its connections leave
  /// (``LogOwnership/checkLog(_:descriptor:writable:)``): one that holds nothing (a full disk
  /// left a 3-byte index) goes, when no other connection has the project open.
  private func releaseHeader() {
    if let key = headerLease.withLock({ lease in
      defer { lease = nil }; return lease
    }) {
      do {
        if let note = try Self.checkLog(path, lease: key) { logger.warning("\(note)") }
      } catch {
        logger.debug("the log of \(path) stays as it is: \(error)")
      }
      HeaderReaders.shared.release(key)
    }
  }

  /// ``LogOwnership/checkLog(_:descriptor:writable:)`` through the header descriptor `lease`
  /// when no other store of this process has the file (its connections hold SQLite's locks).
  private static func checkLog(
    _ path: String, lease: HeaderReaders.Key
  ) throws(StoreError)
    -> String?
  {
    guard let held = HeaderReaders.shared.descriptor(lease), held.leases == 1 else { return nil }
    let folder = RawPath(path).folder.description
    let writable = held.writable && Glibc.access(folder.isEmpty ? "." : folder, W_OK | X_OK) == 0
    return try LogOwnership.checkLog(path, descriptor: held.descriptor, writable: writable)
  }

  /// The current version and project.
  public var snapshot: StoreSnapshot {
    state.withLock { StoreSnapshot(version: $0.version, project: $0.held.project) }
  }

  // MARK: Opening

  /// Creates a new, empty project file at `path` (version 1, "New project").
  ///
  /// The file appears complete or not at all: it is built in a private folder beside `path`
  /// (``/SafeFiles/PrivateFolder``) and linked into place, which never replaces a file that
  /// appeared there meanwhile.
  public static func create(
    at path: String, sampleRate: Int = 48_000, channels: Int = 2
  )
    throws(StoreError) -> TimelineStore
  {
    do {
      try Project(sampleRate: sampleRate, channels: channels).validateFormat()
    } catch {
      throw .invalidEdit(error)
    }
    guard FileIdentity(path: path) == nil else { throw .alreadyExists(path: path) }
    let folder: PrivateFolder
    do {
      folder = try PrivateFolder(beside: path)
    } catch {
      throw .io(detail: error.description)
    }
    defer { folder.remove() }
    var published: [Int?] = []
    defer { published.forEach(Termination.forget) }
    let name = (path as NSString).lastPathComponent
    let temporary = folder.file(name)
    for suffix in ["-wal", "-shm", "-journal"] { _ = folder.file(name + suffix) }
    do {
      let queue = try DatabaseQueue(path: temporary, configuration: configuration())
      try queue.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA journal_mode = WAL")
        try db.execute(sql: "PRAGMA application_id = \(Schema.applicationID)")
      }
      try Schema.migrator.migrate(queue)
      try queue.write { db in
        let changeset = try SessionCalls.capture(
          on: try connection(db), tables: Schema.trackedTables
        ) {
          try db.execute(
            sql: "INSERT INTO project (id, sampleRate, channels) VALUES (1, ?, ?)",
            arguments: [sampleRate, channels])
        }
        // The file's own token (LogOwnership), which its logs' stamps go on from.
        try db.execute(sql: "PRAGMA user_version = \(Int32.random(in: .min ... .max) | 1)")
        try db.execute(
          sql: """
            INSERT INTO version
              (id, parent, jump, depth, label, createdAt, coalescingKey, changeset, revision)
            VALUES (1, NULL, 1, 0, 'New project', ?, NULL, ?, 1)
            """,
          arguments: [now(), changeset.data])
        try db.execute(sql: "INSERT INTO head (id, version, tip, revision) VALUES (1, 1, 1, 1)")
        try HeadJournal.record(from: nil, to: 1, cause: .new, db)
        try db.execute(
          sql: "INSERT INTO id_sequence (id, nextSource, nextTrack, nextClip) VALUES (1, 1, 1, 1)")
      }
      try queue.close()
      // The close copied the log into the file and removed it; a log still there (or a file
      // SQLite does not read whole) means that copy failed (a full disk: the file alone was
      // cut short, and published so it read as damaged). Nothing is published then.
      let left = FileIdentity(path: temporary + "-wal")
      guard left == nil || left?.size == 0, try Self.readsWhole(temporary) else {
        throw StoreError.io(detail: "\(path) could not be written whole")
      }
      // Until it is open, a signal removes the new project (and the log opening makes) too:
      // a stopped `tape new` leaves nothing.
      try Termination.withoutInterruption { () throws(SafeFileError) in
        try folder.publish(temporary, as: path)
        published = ["", "-wal", "-shm"].map { Termination.remember(path + $0) }
      }
    } catch SafeFileError.cannotOpen(_, EEXIST) {
      throw .alreadyExists(path: path)
    } catch let error as SafeFileError {
      throw .io(detail: error.description)
    } catch {
      throw translate(error, at: path)
    }
    return try open(at: path)
  }

  /// Opens an existing project. Never modifies a file that is not a valid Tape project.
  ///
  /// With ``Access/write`` (the default) a project this user may not write is refused at once
  /// (``StoreError/readOnly(path:reason:)``); ``Access/read`` and ``Access/follow`` open it
  /// for reading only, whoever owns it and wherever it is.
  ///
  /// With `keepingLargeMovesPending` (the default) a history move of many rows keeps its change
  /// in one row, written to the rows by the next edit or the close (`PendingMove`): the move
  /// returns sooner, and moves back and forth compose. A process that closes the store right
  /// after one move (a command line's undo) passes false: the close would write the rows at
  /// once, and keeping them pending first only adds the check and a commit.
  public static func open(
    at path: String, access: Access = .write, busyTimeout: TimeInterval = defaultBusyTimeout,
    durability: Durability = .full, keepingLargeMovesPending: Bool = true
  ) throws(StoreError) -> TimelineStore {
    try open(
      at: path, access: access, busyTimeout: busyTimeout, durability: durability,
      historyBlocks: .standard,
      deferredMoveRows: keepingLargeMovesPending ? standardDeferredMoveRows : .max)
  }

  /// Opens with other history block spans: tests use small ones to cross many blocks (and a
  /// lower `deferredMoveRows`, to keep small moves pending).
  ///
  /// With `loadingSnapshot` false the store reads no project (its snapshot is an empty
  /// stand-in): only ``ScopedEditor`` opens one so, keeps it to itself, and reads the part each
  /// edit needs in that edit's transaction.
  static func open(
    at path: String, access: Access = .write, busyTimeout: TimeInterval = defaultBusyTimeout,
    durability: Durability = .full, historyBlocks: HistoryBlocks, loadingSnapshot: Bool = true,
    deferredMoveRows: Int = standardDeferredMoveRows
  ) throws(StoreError) -> TimelineStore {
    let lease = try checkHeader(path)
    // Handed to the store; given back here if no store comes of it, the log its failed open
    // leaves checked as a closing store's is (a full disk left an empty one).
    var leased = true
    defer {
      if leased {
        _ = try? checkLog(path, lease: lease)
        HeaderReaders.shared.release(lease)
      }
    }
    // Before any connection of this process reads through a log beside the file: is it the
    // file's?
    let notes = try checkLog(path, lease: lease).map { [$0] } ?? []
    if access == .write {
      try checkWritable(path)
    } else if try needsMigration(path) {
      // An older file gets its new tables from a writer, once; a reader cannot add them.
      if (try? checkWritable(path)) != nil {
        _ = try open(
          at: path, access: .write, busyTimeout: busyTimeout, durability: durability,
          historyBlocks: historyBlocks)
      } else {
        throw .cannotRead(
          path: path,
          reason:
            "it was made by an older Tape and must be upgraded, which writes to it, but it is read-only here; ask its owner to run any tape command that edits it"
        )
      }
    }
    let (location, immutable) = try readLocation(path, access: access)
    let checkpointer = Checkpointer(path: path)
    do {
      var configuration = configuration(busyTimeout: busyTimeout, durability: durability)
      if access == .write {
        configuration.prepareDatabase { db in try checkpointer.install(on: db) }
      } else {
        configuration.readonly = true
        configuration.prepareDatabase { db in
          if let handle = db.sqliteConnection { _ = tape_sqlite_no_checkpoint_on_close(handle) }
        }
      }
      let queue = try DatabaseQueue(path: location, configuration: configuration)
      try queue.read { db in
        let tables = try String.fetchSet(
          db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        guard tables.contains("grdb_migrations") else { throw StoreError.notAProject(path: path) }
        if try Schema.migrator.hasBeenSuperseded(db) { throw StoreError.newerSchema(path: path) }
      }
      if access == .write,
        try queue.read({ db in try !Schema.migrator.hasCompletedMigrations(db) })
      {
        try Schema.migrator.migrate(queue)
      }
      let loaded = try queue.read { db in
        let head = try Head.read(db)
        return State(
          version: head.version, revision: head.revision,
          journalSequence: try HeadJournal.lastSequence(db),
          held: loadingSnapshot ? try SnapshotReader.load(db) : HeldProject.none)
      }
      let store = TimelineStore(
        path: path, access: access, immutableIdentity: immutable, queue: queue, state: loaded,
        checkpointer: checkpointer, historyBlocks: historyBlocks,
        deferredMoveRows: deferredMoveRows, notes: notes)
      store.headerLease.withLock { $0 = lease }
      leased = false
      try store.checkUnchanged()
      // Blocks a stopped process left to build.
      if access == .write,
        try queue.read({ db in
          try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM history_block_pending)") ?? false
        })
      {
        store.blockBuilder.schedule()
      }
      return store
    } catch {
      throw translate(error, at: path)
    }
  }

  /// Whether SQLite reads the file at `path` alone (no log) whole: `PRAGMA quick_check`.
  static func readsWhole(_ path: String) throws -> Bool {
    var configuration = Configuration()
    configuration.readonly = true
    let queue = try DatabaseQueue(path: immutableURI(path), configuration: configuration)
    defer { try? queue.close() }
    return try queue.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check") == "ok" }
  }

  /// Refuses, before SQLite is involved, a project this user cannot write: the file's mode or
  /// owner, a read-only mount, a folder where the log cannot be created, or a log or index that
  /// belongs to someone else.
  private static func checkWritable(_ path: String) throws(StoreError) {
    guard Glibc.access(path, W_OK) == 0 else {
      throw .readOnly(
        path: path,
        reason: errno == EROFS
          ? "it is on a read-only file system"
          : "its permissions do not let you write it (chmod u+w \(path), or ask its owner)")
    }
    // Not NSString's deletingLastPathComponent: this Foundation traps on a one-character name
    // (`tape new a` died with an illegal instruction).
    let folder = RawPath(path).folder.description
    for suffix in ["-wal", "-shm"] where FileIdentity(path: path + suffix) != nil {
      guard Glibc.access(path + suffix, R_OK | W_OK) == 0 else {
        throw .readOnly(
          path: path,
          reason:
            "\(path + suffix) is not writable by you (another user read the project and left it); its owner or root can remove it when no tape process is running"
        )
      }
    }
    if FileIdentity(path: path + "-wal") == nil,
      Glibc.access(folder.isEmpty ? "." : folder, W_OK | X_OK) != 0
    {
      throw .readOnly(
        path: path,
        reason:
          "its folder \(folder.isEmpty ? "." : folder) is not writable, and an edit must create \((path as NSString).lastPathComponent)-wal there"
      )
    }
  }

  /// Where a reader opens `path`, and the file's identity when that is immutably: through the
  /// log (`-wal` and `-shm` present and readable, or creatable by a follower), else immutably
  /// when there is no `-wal`, or one that holds no frame and that this reader could not
  /// recover; a `-wal` without a readable `-shm` is refused.
  private static func readLocation(
    _ path: String, access: Access
  ) throws(StoreError) -> (String, ImmutableRead?) {
    guard access != .write else { return (path, nil) }
    let wal = path + "-wal"
    let shm = path + "-shm"
    let folder = RawPath(path).folder.description
    let folderWritable = invitesWriting(folder.isEmpty ? "." : folder, asFolder: true)
    if let log = FileIdentity(path: wal) {
      // A writer killed right after creating the log leaves its 32-byte header and an index
      // that only a process able to write `-shm` can rebuild: every other reader got SQLite's
      // "locking protocol" (exit 70) until the owner wrote again. A log too short to hold one
      // frame (24 bytes and a page of 512 or more) adds nothing to the file: read the file.
      let canRebuildIndex =
        FileIdentity(path: shm) == nil ? folderWritable : Glibc.access(shm, R_OK | W_OK) == 0
      if log.size < 32 + 24 + 512, !canRebuildIndex, access == .read,
        let identity = FileIdentity(path: path)
      {
        return (immutableURI(path), ImmutableRead(file: identity, log: log))
      }
      guard Glibc.access(wal, R_OK) == 0 else {
        throw .cannotRead(path: path, reason: "its write-ahead log \(wal) is not readable by you")
      }
      guard FileIdentity(path: shm) != nil || folderWritable else {
        throw .cannotRead(
          path: path,
          reason:
            "its write-ahead log \(wal) is there but \(shm) is missing and cannot be created; open it once with tape as its owner"
        )
      }
      guard FileIdentity(path: shm) == nil || Glibc.access(shm, R_OK) == 0 else {
        throw .cannotRead(path: path, reason: "\(shm) is not readable by you")
      }
      return (path, nil)
    }
    // A follower creates the log only where someone meant files to be written.
    if access == .follow && folderWritable && invitesWriting(path) {
      return (path, nil)
    }
    guard let identity = FileIdentity(path: path) else { throw .notFound(path: path) }
    return (immutableURI(path), ImmutableRead(file: identity, log: nil))
  }

  /// `file:PATH?immutable=1`, with the characters a URI path cannot hold escaped.
  static func immutableURI(_ path: String) -> String {
    let absolute =
      path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    var escaped = ""
    for byte in absolute.utf8 {
      switch byte {
      case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x20, 0x7F...:
        escaped += String(format: "%%%02X", byte)
      default:
        escaped.unicodeScalars.append(Unicode.Scalar(byte))
      }
    }
    return "file:\(escaped)?immutable=1"
  }

  /// Whether the file's migrations are incomplete (read without opening it for writing).
  /// Whether a reader must have the file upgraded first: only when a migration readers depend
  /// on is missing (``Schema/readerMigrations``). A project made before volume automation is
  /// read as it is, without writing to it (so a read-only one stays readable).
  private static func needsMigration(_ path: String) throws(StoreError) -> Bool {
    do {
      var configuration = Configuration()
      configuration.readonly = true
      let (location, _) = try readLocation(path, access: .read)
      let queue = try DatabaseQueue(path: location, configuration: configuration)
      defer { try? queue.close() }
      return try queue.read { db in
        guard try db.tableExists("grdb_migrations") else { return false }
        let applied = try Schema.migrator.appliedIdentifiers(db)
        return !Schema.readerMigrations.isSubset(of: applied)
      }
    } catch {
      throw translate(error, at: path)
    }
  }

  /// Refuses a change through a store opened for reading.
  func checkWriteAccess() throws(StoreError) {
    guard access == .write else {
      throw .readOnly(path: path, reason: "it was opened for reading only")
    }
  }

  /// For an immutable read: throws when the file changed (or a log appeared) since it was
  /// opened, so a read that may have seen a half-written checkpoint is never used.
  func checkUnchanged() throws(StoreError) {
    guard let immutableIdentity else { return }
    let logUnchanged =
      switch (FileIdentity(path: path + "-wal"), immutableIdentity.log) {
      case (nil, _): true
      case (let log?, let before?): log.isUnchanged(since: before)
      case (_?, nil): false
      }
    guard let now = FileIdentity(path: path), now.isUnchanged(since: immutableIdentity.file),
      logUnchanged
    else { throw .changedWhileReading(path: path) }
  }

  /// Reads the header without SQLite: anything that is not a Tape project is refused before a
  /// connection could touch it.
  ///
  /// Rule: the descriptor used to read it is never closed while the process lives (one per
  /// file, reused). Why: closing any descriptor of a file releases every POSIX lock this
  /// process holds on it, SQLite's included. A scrub that opened a second store to check out
  /// a version (reading the header, closing it) dropped its follower's shared lock; the next
  /// editing process then thought itself the last user of the project, checkpointed and
  /// deleted the log, and the follower read the deleted log's index from then on: it never
  /// heard another commit (and once read "malformed" pages).
  private static func checkHeader(_ path: String) throws(StoreError) -> HeaderReaders.Key {
    guard let identity = FileIdentity(path: path) else { throw .notFound(path: path) }
    // A FIFO, a device or a folder is not a project, and opening a FIFO to read its header
    // would wait for a writer forever.
    guard identity.isRegularFile else { throw .notAProject(path: path) }
    var header = [UInt8](repeating: 0, count: 100)
    let (count, key) = try HeaderReaders.shared.read(path, into: &header)
    let id = header[68..<72].reduce(Int32(0)) { ($0 << 8) | Int32($1) }
    guard count == 100, header.prefix(16) == Array("SQLite format 3\0".utf8)[...],
      id == Schema.applicationID
    else {
      HeaderReaders.shared.release(key)
      throw .notAProject(path: path)
    }
    // Read and write format versions (1 rollback journal, 2 WAL) and the payload fractions SQLite
    // requires: any other value is a damaged header, which SQLite reads as "open it read-only"
    // (an edit then failed with "attempt to write a readonly database", exit 70) or refuses
    // with "unsupported file format".
    guard (1...2).contains(header[18]), (1...2).contains(header[19]),
      header[21..<24] == [64, 32, 32]
    else {
      HeaderReaders.shared.release(key)
      throw .corrupt(detail: "its header (the first 100 bytes) is damaged")
    }
    return key
  }

  static func configuration(
    busyTimeout: TimeInterval = defaultBusyTimeout, durability: Durability = .full
  ) -> Configuration {
    var configuration = Configuration()
    configuration.busyMode = .timeout(busyTimeout)
    configuration.foreignKeysEnabled = true
    configuration.label = "tape"
    configuration.prepareDatabase { db in
      // FULL: an acknowledged commit survives power loss, not just a crash. Checkpoints never
      // run inside a commit: see Checkpointer (background) and close().
      try db.execute(sql: "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
      try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
      // After a checkpoint lets the log restart, trim the file back to this size.
      try db.execute(sql: "PRAGMA journal_size_limit = \(64 << 20)")
      // Up to 64 MiB of pages (SQLite's default is 2 MiB), taken only as pages are read: a
      // checkout of thousands of clips rewrites rows on as many pages, which then stay cached
      // instead of spilling to the log mid-transaction and being read back from the file.
      try db.execute(sql: "PRAGMA cache_size = -65536")
    }
    return configuration
  }

  /// Copies the write-ahead log into the main file, without waiting for readers.
  public func checkpoint() throws(StoreError) {
    do {
      try queue.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA wal_checkpoint(PASSIVE)")
      }
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// Closes the file; later calls fail. Pending log pages are checkpointed into the main file.
  public func close() throws(StoreError) {
    let (subscribers, wasClosed, poller) = state.withLock { state in
      defer {
        state.poller = nil
        state.subscribers.removeAll()
        state.closed = true
      }
      return (Array(state.subscribers.values), state.closed, state.poller)
    }
    // Outside the lock: a check on its way may be waiting for it, and is let finish before the
    // connection closes.
    poller?.cancel()
    // Outside the lock: finishing runs each stream's onTermination, which takes the lock.
    for continuation in subscribers { continuation.finish() }
    if !wasClosed { foldPendingMove() }
    // The background builder first: it may still be writing a block.
    blockBuilder.close()
    do {
      try queue.close()
    } catch {
      throw Self.translate(error, at: path)
    }
    checkpointer.close()
    if access != .write { Self.closeLogIfLast(path) }
    releaseHeader()
  }

  /// What a reader does as it closes, having closed its own connection: when no other
  /// connection to the project is left, in this process or any other, the log is copied into
  /// the file and removed, so that the file alone holds every committed version (`cp`, a
  /// backup and a sync tool see only the file). A writer's last connection does so as it closes;
  /// a reader's cannot (it may not write), so a connection that may write opens, reads (which
  /// opens the log) and closes: SQLite's close checkpoints and removes the log when it is the
  /// last connection, and does nothing otherwise. It writes only what the log holds: the
  /// project's content stays as it is. A reader that may not write the file, its folder or the
  /// log's files does nothing and says nothing.
  ///
  /// Rule: the last process to close a project leaves it one file, whatever it did (a `tape
  /// play` is usually the last: the edits heard while it played stayed in `-wal`, lost to a
  /// copy of the file and read into a restored backup).
  static func closeLogIfLast(_ path: String) {
    withFoldingConnection(path) { handle in
      _ = sqlite3_exec(handle, "SELECT count(*) FROM sqlite_master", nil, nil, nil)
    }
  }

  /// Copies the log of the project at `path` into the file and empties it, waiting up to
  /// `milliseconds` for other connections' transactions; for a process that is stopping (a
  /// signal) with its own connections still open, so that, if it was the last, the file alone
  /// holds every committed version. Another process's later commits go on as usual. Does
  /// nothing where this user may not write the project (see `closeLogIfLast(_:)`).
  public static func foldLog(at path: String, waitingUpTo milliseconds: Int32 = 1_000) {
    withFoldingConnection(path) { handle in
      _ = tape_sqlite_no_checkpoint_on_close(handle)
      sqlite3_busy_timeout(handle, milliseconds)
      _ = sqlite3_exec(handle, "PRAGMA wal_checkpoint(TRUNCATE)", nil, nil, nil)
    }
  }

  /// Runs `body` on a plain connection that may write the project at `path`, closed after it,
  /// when a log is there and this user may write the file, its folder and the log's two files;
  /// does nothing otherwise.
  private static func withFoldingConnection(_ path: String, _ body: (OpaquePointer) -> Void) {
    guard FileIdentity(path: path + "-wal") != nil else { return }
    let folder = RawPath(path).folder.description
    guard Glibc.access(path, W_OK) == 0,
      Glibc.access(folder.isEmpty ? "." : folder, W_OK | X_OK) == 0,
      Glibc.access(path + "-wal", R_OK | W_OK) == 0,
      FileIdentity(path: path + "-shm") == nil || Glibc.access(path + "-shm", R_OK | W_OK) == 0
    else { return }
    var handle: OpaquePointer?
    defer { sqlite3_close_v2(handle) }
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle
    else { return }
    body(handle)
  }

  /// Writes a pending history move to the rows (``PendingMove``) when a move of this store
  /// left one, so that a file no process holds open has none. A failure (another process holds
  /// the write lock, a row edited behind Tape's back) leaves it pending, which every reader
  /// applies and the next edit folds: the close goes on, and the failure is logged.
  ///
  /// A store that made no such move leaves a pending move (another process's, stopped) to the
  /// next edit: its own write either folded it or failed, busy or over a changed row, and the
  /// close tried again: a command that failed waited for the lock twice and said its error
  /// twice, the second time as a dated warning.
  private func foldPendingMove() {
    guard access == .write, state.withLock({ $0.madePendingMove }) else { return }
    do {
      try queue.writeWithoutTransaction { db in
        guard try PendingMove.exists(db) else { return }
        let kept = takeKeptPendingMove()
        try Self.immediateTransaction(db, stamping: path) {
          try PendingMove.fold(db, blocks: historyBlocks, kept: kept)
          return .commit
        }
      }
    } catch {
      logger.warning("the last history move stays pending in \(path): \(Self.translate(error))")
    }
  }

  /// The pending change this store's last move wrote (``PendingMove/Kept``), taken out of the
  /// state: so that a move composing with it appends to it without a copy, and so that a
  /// fold leaves nothing kept.
  func takeKeptPendingMove() -> PendingMove.Kept? {
    state.withLock { state in
      defer { state.pendingMove = nil }
      return state.pendingMove
    }
  }

  // MARK: Transient state

  /// A value of transient state (selection, playhead, view): never part of history.
  public func transientValue(forKey key: String) throws(StoreError) -> String? {
    do {
      return try queue.read { db in
        try String.fetchOne(db, sql: "SELECT value FROM transient WHERE key = ?", arguments: [key])
      }
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// Sets (or with `nil` removes) a value of transient state. Undo and redo never touch it.
  public func setTransientValue(_ value: String?, forKey key: String) throws(StoreError) {
    do {
      try writeTransaction { db in
        if let value {
          try db.execute(
            sql:
              "INSERT INTO transient (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            arguments: [key, value])
        } else {
          try db.execute(sql: "DELETE FROM transient WHERE key = ?", arguments: [key])
        }
      }
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  // MARK: Errors

  /// ``translate(_:)`` for the project at `path`: SQLite's I/O errors, and the damage it reads
  /// when it cannot grow the log's index on a full disk (a 3-byte `-shm`: "database disk
  /// image is malformed"), are ``StoreError/diskFull(path:free:)`` when the disk holding the
  /// project has less than 1 MiB free. (Damaged, the advice would be to restore a backup.)
  static func translate(_ error: any Error, at path: String) -> StoreError {
    let translated = translate(error)
    switch translated {
    case .corrupt, .io:
      let folder = RawPath(path).folder.description
      var info = statvfs()
      guard statvfs(folder.isEmpty ? "." : folder, &info) == 0 else { return translated }
      let free = Int64(info.f_bavail) * Int64(info.f_frsize)
      return free < 1 << 20 ? .diskFull(path: path, free: free) : translated
    default:
      return translated
    }
  }

  /// The one place that turns GRDB/SQLite errors into ``StoreError``s.
  static func translate(_ error: any Error) -> StoreError {
    if let error = error as? StoreError { return error }
    if let error = error as? TimelineError { return .invalidEdit(error) }
    if let error = error as? DatabaseError {
      switch error.resultCode {
      case .SQLITE_BUSY, .SQLITE_LOCKED: return .busy
      case .SQLITE_CORRUPT, .SQLITE_NOTADB:
        return .corrupt(detail: damage(error.message, sql: error.sql))
      case .SQLITE_ERROR where isSchemaDamage(error.message):
        // Tape's own statements name only what its schema has: the schema text is damaged.
        return .corrupt(detail: damage(error.message, sql: error.sql))
      case .SQLITE_CONSTRAINT
      where error.extendedResultCode == .SQLITE_CONSTRAINT_CHECK
        || error.extendedResultCode == .SQLITE_CONSTRAINT_NOTNULL:
        // Tape writes only values its schema's CHECK and NOT NULL rules accept (the model is
        // validated first): a rule that refuses one is not the rule Tape wrote. The rule's
        // text is left out: it can hold any byte of the damaged file.
        let table = error.sql.flatMap(readTable).map { "table \($0): " } ?? ""
        return .corrupt(detail: table + "a constraint in the file refuses what Tape writes")
      case .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_FULL, .SQLITE_PERM:
        return .io(detail: error.message ?? "\(error.resultCode)")
      default: return .internalFailure("\(error)")
      }
    }
    if error is RowDecodingError {
      // A value GRDB could not convert (NULL where Tape reads text, say) in a query of its own
      // or of the migrator: its description names the column and the statement.
      let text = "\(error)"
      let column = text.firstMatch(of: /column: "([^"]*)"/).map { String($0.1) }
      let sql = text.range(of: "sql: `").map { String(text[$0.upperBound...]) }
      let table = sql.flatMap(readTable).map { "table \($0): " } ?? ""
      return .corrupt(
        detail: table
          + (column.map { "column \($0) holds a value Tape never writes" }
            ?? "a value is unreadable"))
    }
    return .internalFailure("\(error)")
  }
}

/// Where a damaged file failed and how, for ``StoreError/corrupt(detail:)``: the table
/// SQLite's message names (`malformed database schema (clip)`) or else the one the statement
/// read, and SQLite's words with anything after a schema's quoted text dropped (it can hold
/// any byte of the damaged file).
func damage(_ message: String?, sql: String?) -> String {
  var words = message ?? "unreadable"
  var table: String?
  if let open = words.firstIndex(of: "("), let close = words[open...].firstIndex(of: ")") {
    table = String(words[words.index(after: open)..<close])
    words = String(words[..<open]).trimmingCharacters(in: .whitespaces)
  } else if let near = words.range(of: " - near") ?? words.range(of: ": near") {
    words = String(words[..<near.lowerBound])
  }
  if words.hasPrefix("database disk image is malformed") || words.isEmpty {
    words = "its pages are damaged"
  }
  table = table ?? sql.flatMap(readTable)
  return (table.map { "table \($0): " } ?? "") + words
}

/// Whether SQLite's message for one of Tape's own statements means the schema stored in the
/// file is damaged (its text names what Tape's statements name, or it no longer parses).
func isSchemaDamage(_ message: String?) -> Bool {
  guard let message else { return false }
  return [
    "no such column", "no such table", "malformed database schema", "has no column named",
    "unsupported file format", "foreign key mismatch",
  ].contains(where: message.contains)
}

/// The first table a statement reads or writes (`FROM clip`, `INTO version`, `UPDATE head`).
func readTable(_ sql: String) -> String? {
  let words = sql.split(whereSeparator: { $0.isWhitespace || $0 == "(" || $0 == "," })
  for (index, word) in words.enumerated().dropLast()
  where ["FROM", "INTO", "UPDATE"].contains(word.uppercased()) {
    let name = words[index + 1]
    if name.allSatisfy({ $0.isLetter || $0 == "_" }) { return String(name) }
  }
  return nil
}

func connection(_ db: Database) throws -> SQLiteHandle {
  guard let handle = db.sqliteConnection else {
    throw StoreError.internalFailure("the database is closed")
  }
  return handle
}

/// CLOCK_MONOTONIC in nanoseconds: the clock every process shares, for logging when a commit
/// returned (a player stamps the frames it renders with the same clock).
func monotonicNanoseconds() -> UInt64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Milliseconds since 1970, the unit of `version.createdAt`.
func now() -> Int64 {
  Int64((Date().timeIntervalSince1970 * 1000).rounded())
}

/// The `head` row: where the project is.
struct Head {
  var version: Int64
  var tip: Int64
  var revision: Int64

  /// Read at the start of every write (through the C API, as the other reads every move makes).
  static func read(_ db: Database) throws -> Head {
    let head = try RawStatement.first(
      db.cachedStatement(sql: "SELECT version, tip, revision FROM head WHERE id = 1")
        .sqliteStatement, on: connection(db)
    ) { row in
      Head(
        version: try row.integer(0, "version", of: "head"),
        tip: try row.integer(1, "tip", of: "head"),
        revision: try row.integer(2, "revision", of: "head"))
    }
    guard let head else { throw StoreError.corrupt(detail: "the head row is missing") }
    return head
  }

  func write(_ db: Database) throws {
    try RawStatement.executeOwn(
      db.cachedStatement(sql: "UPDATE head SET version = ?, tip = ?, revision = ? WHERE id = 1")
        .sqliteStatement, on: connection(db),
      binding: [.integer(version), .integer(tip), .integer(revision)], table: "head")
  }
}

extension TimelineStore {
  /// Takes the write lock, calls `locked`, and keeps the lock for `seconds` without writing:
  /// what a long commit in another process looks like. For tests of busy handling.
  public func holdWriteLock(for seconds: Double, locked: () -> Void) throws(StoreError) {
    do {
      try queue.writeWithoutTransaction { db in
        try db.inTransaction(.immediate) {
          locked()
          Thread.sleep(forTimeInterval: seconds)
          return .rollback
        }
      }
    } catch {
      throw Self.translate(error, at: path)
    }
  }
}

/// What looks for other processes' commits: a timer, and a folder watcher that wakes it at
/// once (thread-safe: a dispatch source and ``FolderWatcher``).
final class Poller: @unchecked Sendable {
  let timer: any DispatchSourceTimer
  let watcher: FolderWatcher?
  /// The serial queue every check runs on (the timer's, the watcher's and their follow-ups').
  let queue: DispatchQueue
  let gate: PollGate

  init(
    _ timer: any DispatchSourceTimer, watcher: FolderWatcher?, queue: DispatchQueue,
    gate: PollGate
  ) {
    self.timer = timer
    self.watcher = watcher
    self.queue = queue
    self.gate = gate
    queue.setSpecific(key: onQueue, value: true)
  }

  /// Set on this poller's queue only (another store's poll queue is not this one's).
  private let onQueue = DispatchSpecificKey<Bool>()

  /// Stops the checks, and returns once none is on its way: a check already running finishes
  /// first, and none that was scheduled (a follow-up, a timer event) reads after this, so the
  /// store may close its connection. A check that read a closed connection crashed `tape
  /// watch` as it ended (SIGSEGV in SQLite, 2 runs in 60). Not to be called with the store's
  /// state locked: a running check may be waiting for that lock.
  func cancel() {
    watcher?.cancel()
    timer.cancel()
    if DispatchQueue.getSpecific(key: onQueue) == true {
      gate.isOpen = false
    } else {
      queue.sync { gate.isOpen = false }
    }
  }
}

/// Whether a store's checks for other processes' commits may still read (see
/// ``Poller/cancel()``): read and written on the checks' queue only.
final class PollGate: @unchecked Sendable {
  var isOpen = true
}

/// Descriptors that read project headers, one per file (device and inode), kept open while
/// any store of this process has that file open: see ``TimelineStore/checkHeader(_:)``.
/// Each ``read(_:into:)`` leases the file's descriptor; the last ``release(_:)`` closes it,
/// once no connection of this process to the file is left to lose its locks.
final class HeaderReaders: Sendable {
  static let shared = HeaderReaders()
  private let descriptors = Mutex<[Key: (descriptor: Int32, leases: Int)]>([:])

  struct Key: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64
  }

  /// Reads the first `buffer.count` bytes of `path`; how many were read, and the lease to
  /// give back.
  func read(
    _ path: String, into buffer: inout [UInt8]
  ) throws(StoreError) -> (count: Int, lease: Key) {
    guard let identity = FileIdentity(path: path) else { throw .notFound(path: path) }
    let (descriptor, key) = try descriptors.withLock {
      (open: inout [Key: (descriptor: Int32, leases: Int)]) throws(StoreError) -> (Int32, Key) in
      let seen = Key(device: identity.device, inode: identity.inode)
      // A descriptor held open keeps its inode from being reused, so a known key still names
      // the same file.
      if let known = open[seen] {
        open[seen] = (known.descriptor, known.leases + 1)
        return (known.descriptor, seen)
      }
      // For writing where this user may (a read-only open otherwise): the check of a log left
      // beside the file locks through it (LogOwnership).
      var opened = Glibc.open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK)
      if opened < 0 { opened = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
      guard opened >= 0 else {
        throw .io(detail: "cannot read \(path): \(String(cString: strerror(errno)))")
      }
      // Never standard input, output or error, which a process started with them closed
      // (`tape … >&-`) hands out first: what it prints would be written into the project.
      // (SQLite keeps its own files off them too.)
      if opened <= STDERR_FILENO {
        let moved = fcntl(opened, F_DUPFD_CLOEXEC, STDERR_FILENO + 1)
        Glibc.close(opened)
        guard moved >= 0 else {
          throw .io(detail: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        opened = moved
      }
      // Keyed by what was opened (the path may have been replaced since the stat above).
      var info = stat()
      let key =
        fstat(opened, &info) == 0
        ? Key(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) : seen
      if let known = open[key] {
        // Replaced by a file this process already holds: keep the one descriptor. (Closing
        // this one would drop that file's locks: it stays open with the other.)
        open[key] = (known.descriptor, known.leases + 1)
        open[Key(device: 0, inode: UInt64(opened) | 1 << 63)] = (opened, 1)
        return (known.descriptor, key)
      }
      open[key] = (opened, 1)
      return (opened, key)
    }
    let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
    guard count >= 0 else {
      let reason = String(cString: strerror(errno))
      release(key)
      throw .io(detail: "cannot read \(path): \(reason)")
    }
    return (count, key)
  }

  /// The descriptor `key` names, whether it was opened for writing, and how many stores hold
  /// it (a lease of the caller's included).
  func descriptor(_ key: Key) -> (descriptor: Int32, writable: Bool, leases: Int)? {
    descriptors.withLock { open in
      open[key].map {
        ($0.descriptor, fcntl($0.descriptor, F_GETFL) & O_ACCMODE == O_RDWR, $0.leases)
      }
    }
  }

  /// How many stores hold the header descriptor of the file at `path` (0: none is open).
  func leases(forFileAt path: String) -> Int {
    guard let identity = FileIdentity(path: path) else { return 0 }
    let key = Key(device: identity.device, inode: identity.inode)
    return descriptors.withLock { $0[key]?.leases ?? 0 }
  }

  /// Gives back a lease; the last one closes the descriptor.
  func release(_ key: Key) {
    descriptors.withLock { open in
      guard let known = open[key] else { return }
      if known.leases > 1 {
        open[key] = (known.descriptor, known.leases - 1)
      } else {
        open[key] = nil
        Glibc.close(known.descriptor)
      }
    }
  }
}

/// The `head_move` table: every move of the head, written in the move's transaction.
enum HeadJournal {
  static func record(
    from: Int64?, to: Int64, cause: HeadMove.Cause, _ db: Database
  ) throws {
    try RawStatement.executeOwn(
      db.cachedStatement(
        sql: "INSERT INTO head_move (fromVersion, toVersion, cause, createdAt) VALUES (?, ?, ?, ?)"
      ).sqliteStatement, on: connection(db),
      binding: [
        from.map(ChangeValue.integer) ?? .null, .integer(to), .text(cause.rawValue),
        .integer(now()),
      ], table: "head_move")
  }

  static func lastSequence(_ db: Database) throws -> Int64 {
    try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(seq) FROM head_move")) ?? 0
  }

  /// The moves after `sequence`, oldest first. Every write reads its own move back (through
  /// the C API).
  static func moves(after sequence: Int64, _ db: Database) throws -> [HeadMove] {
    var moves: [HeadMove] = []
    try RawStatement.query(
      db.cachedStatement(
        sql:
          "SELECT seq, fromVersion, toVersion, cause, createdAt FROM head_move WHERE seq > ? ORDER BY seq"
      ).sqliteStatement, on: connection(db), binding: [.integer(sequence)]
    ) { row in
      let table = "head_move"
      guard let cause = HeadMove.Cause(rawValue: try row.text(3, "cause", of: table)) else {
        throw StoreError.corrupt(detail: "a head move has an unknown cause")
      }
      moves.append(
        HeadMove(
          sequence: try row.integer(0, "seq", of: table),
          from: try row.optionalInteger(1, "fromVersion", of: table),
          to: try row.integer(2, "toVersion", of: table), cause: cause,
          date: Date(
            timeIntervalSince1970: Double(try row.integer(4, "createdAt", of: table)) / 1000)))
    }
    return moves
  }
}
