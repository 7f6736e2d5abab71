internal import CSQLiteSession
internal import GRDB
import Logging
import SafeFiles
import Synchronization
import Timeline

/// What one write did inside its transaction: where the head went and what the project is
/// there. `nil` from a write's body means it changed nothing (the transaction is rolled back).
struct WriteStep {
  /// The head after the write (version, tip and revision), already written to the `head` row.
  var head: Head
  var held: HeldProject
  var changed: ChangedIDs
  /// A history block awaits the background builder.
  var blocksPending = false
}

extension TimelineStore {
  /// The one path every change to a project takes: an edit (``commit(label:coalescingKey:_:)``),
  /// a batch, an undo, a redo, a checkout.
  ///
  /// In one IMMEDIATE transaction: catch up with any other process's commits, run `body` (which
  /// applies the change, records it and writes the new head), journal the head's move with its
  /// `cause`; then, committed, adopt the new snapshot and notify subscribers (in commit order,
  /// on the database queue) and wake the history-block builder. ``writes`` counts the calls.
  ///
  /// With `part` (a ``ScopedEditor``'s edit, on a store that holds no snapshot), `body` gets
  /// that part of the project, read in the transaction, so there is nothing to catch up with;
  /// nothing is adopted or sent, as the part is not the project.
  func write<Value>(
    _ cause: HeadMove.Cause, part: EditScope? = nil,
    _ body: (_ head: Head, _ held: HeldProject, _ db: Database) throws -> (WriteStep?, Value)
  ) throws(StoreError) -> Value {
    try checkWriteAccess()
    checkpointer.waitWhileRestarting()
    writes.add(1, ordering: .relaxed)
    do {
      return try queue.writeWithoutTransaction { db in
        var value: Value?
        var done: (step: WriteStep, old: HeldProject, moves: [HeadMove])?
        try Self.immediateTransaction(db, stamping: path) {
          let head = try part == nil ? catchUp(db) : Head.read(db)
          // An edit reads and writes rows that hold the head: a pending move is written to
          // them first, in this transaction (``PendingMove``); a history move composes with
          // it instead.
          if part != nil || cause == .edit {
            try PendingMove.fold(db, blocks: historyBlocks, kept: takeKeptPendingMove())
          }
          let old =
            try part.map { try SnapshotReader.load(db, clips: $0.clipIDs(db)) }
            ?? state.withLock { $0.held }
          let (step, result) = try body(head, old, db)
          value = result
          guard let step else { return .rollback }
          try HeadJournal.record(from: head.version, to: step.head.version, cause: cause, db)
          // A part is never adopted: it has no moves to send.
          done = (
            step, old,
            part != nil
              ? [] : try HeadJournal.moves(after: state.withLock { $0.journalSequence }, db)
          )
          return .commit
        }
        guard let value else {
          throw StoreError.internalFailure("the write finished without a result")
        }
        if let done {
          if part == nil {
            adopt(
              version: done.step.head.version, revision: done.step.head.revision,
              held: done.step.held, changed: done.step.changed, from: done.old,
              moves: done.moves)
          }
          // After the transaction, so the builder's own connection sees the new version.
          if done.step.blocksPending { blockBuilder.schedule() }
          // Scoped or not, `tape -v` says when the commit returned (the live-edit latency
          // tests read this stamp).
          logger.debug(
            "committed version \(done.step.head.version) (\(cause.rawValue)\(part == nil ? "" : "; scoped, clips read: \(done.old.project.tracks.reduce(0) { $0 + $1.clips.count })")) monotonic=\(monotonicNanoseconds())"
          )
        }
        return value
      }
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// How many writes this store has made through `write(_:_:)` (tests check that every
  /// public operation that changes a project goes through it).
  public var writeCount: Int { writes.load(ordering: .relaxed) }

  /// A write that is no move of the head (a tag, a clipboard, transient state): one
  /// ``immediateTransaction(_:stamping:_:)`` on the store's connection, committed unless `body`
  /// throws.
  func writeTransaction<Value>(_ body: (Database) throws -> Value) throws -> Value {
    try queue.writeWithoutTransaction { db in
      var value: Value?
      try Self.immediateTransaction(db, stamping: path) {
        value = try body(db)
        return .commit
      }
      guard let value else {
        throw StoreError.internalFailure("the write finished without a result")
      }
      return value
    }
  }

  /// GRDB's `inTransaction(.immediate)`, with its BEGIN and COMMIT prepared once per
  /// connection: GRDB parses their text anew in every transaction, which took a tenth of an
  /// undo's CPU time. As there: rolled back when `body` throws or says so (the first error is
  /// thrown), and a transaction SQLite aborted on its own (a full disk) is not committed.
  ///
  /// Every write transaction of Tape's runs through here: one that changes rows stamps the
  /// project at `path` when it starts a log (``LogOwnership/stampIfFresh(_:path:)``; one that
  /// changes none writes nothing, as before).
  static func immediateTransaction(
    _ db: Database, stamping path: String, _ body: () throws -> Database.TransactionCompletion
  ) throws {
    try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
    var firstError: (any Error)?
    do {
      let handle = try connection(db)
      let changes = sqlite3_total_changes64(handle)
      switch try body() {
      case .commit:
        guard db.isInsideTransaction else {
          throw DatabaseError(resultCode: .SQLITE_ABORT, message: "Transaction was aborted")
        }
        // Stopped by a signal meanwhile (``Termination/isStopping``): what the command said it
        // did not do is not committed.
        guard !Termination.isStopping else { throw StoreError.interrupted }
        if sqlite3_total_changes64(handle) != changes {
          try LogOwnership.stampIfFresh(db, path: path)
        }
        try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
        return
      case .rollback:
        break
      }
    } catch {
      firstError = error
    }
    do {
      try db.rollback()
    } catch {
      if firstError == nil { firstError = error }
    }
    if let firstError { throw firstError }
  }
}
