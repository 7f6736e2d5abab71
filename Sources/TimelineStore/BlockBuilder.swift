import Foundation
internal import GRDB
import Logging
import Synchronization

/// Builds the large history blocks (every span after the first) in the background, off the
/// commit path.
///
/// Rule: a commit writes only the small block it completes (256 versions, about 1 ms) and, when
/// it also completes a large one, a row in `history_block_pending`, in its own transaction. Why:
/// building an 8,192-version block in the commit took 11–16 ms, a spike once per 8,192 edits.
/// What if the process stops before the build: the pending row stays and the next store to open
/// the file builds it; until then checkouts cross that stretch with the small blocks (slower,
/// the same result).
///
/// A build reads without the write lock (merging is the slow part) and writes in a short
/// transaction that first checks the version's `revision`: when coalescing rewrote the version
/// in between, the result is stale and is dropped (the rewrite queued the version again).
final class BlockBuilder: @unchecked Sendable {
  private let path: String
  private let blocks: HistoryBlocks
  private let queue = DispatchQueue(label: "tape.history-blocks", qos: .utility)
  /// Only touched on `queue`.
  private var connection: DatabaseQueue?
  private let scheduled = Mutex(false)
  private let logger = Logger(label: "tape.store.history-blocks")

  init(path: String, blocks: HistoryBlocks) {
    self.path = path
    self.blocks = blocks
  }

  /// Builds every pending block, soon, on the background queue.
  func schedule() {
    guard blocks.spans.count > 1 else { return }
    let first = scheduled.withLock { scheduled in
      defer { scheduled = true }
      return !scheduled
    }
    guard first else { return }
    queue.async { [self] in
      scheduled.withLock { $0 = false }
      do {
        try buildPending()
      } catch {
        logger.warning("building history blocks of \(path) failed: \(error)")
      }
    }
  }

  /// Waits until the scheduled builds are done.
  func waitUntilIdle() {
    queue.sync {}
  }

  /// Waits for the scheduled builds and closes the background connection.
  func close() {
    queue.sync {
      try? connection?.close()
      connection = nil
    }
  }

  private func buildPending() throws {
    if connection == nil {
      var configuration = TimelineStore.configuration(durability: .normal)
      configuration.label = "tape.history-blocks"
      connection = try DatabaseQueue(path: path, configuration: configuration)
    }
    guard let connection else { return }
    let pending = try connection.read { db in
      try Int64.fetchAll(db, sql: "SELECT version FROM history_block_pending ORDER BY version")
    }
    for version in pending {
      let built = try connection.read { db in
        let node = try VersionGraph.node(version, db)
        let revision = try Self.revision(of: version, db)
        let blocks = try blocks.spans.dropFirst().compactMap { span -> (Int64, Int64, Data)? in
          guard node.depth > 0, node.depth % span == 0 else { return nil }
          let (changes, start) = try VersionGraph.changes(
            downTo: node, fromDepth: node.depth - span, blocks: self.blocks, maxSpan: span - 1,
            db)
          return (span, start, changes.encoded())
        }
        return (revision, blocks)
      }
      // IMMEDIATE: take the write lock before reading the revision, so a commit from the store
      // in between makes us wait (busy timeout) rather than fail on a stale snapshot.
      try connection.writeWithoutTransaction { db in
        try TimelineStore.immediateTransaction(db, stamping: path) {
          guard try Self.revision(of: version, db) == built.0 else { return .rollback }
          for (span, start, changes) in built.1 {
            try VersionGraph.insertBlock(
              version: version, span: span, start: start, changes: changes, db)
          }
          try db.execute(
            sql: "DELETE FROM history_block_pending WHERE version = ?", arguments: [version])
          return .commit
        }
      }
    }
  }

  private static func revision(of version: Int64, _ db: Database) throws -> Int64? {
    try Int64.fetchOne(db, sql: "SELECT revision FROM version WHERE id = ?", arguments: [version])
  }
}
