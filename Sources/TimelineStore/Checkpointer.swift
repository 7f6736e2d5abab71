internal import CSQLiteSession
import Foundation
internal import GRDB
import Logging
import Synchronization

/// Copies the write-ahead log into the main file in the background, off the commit path.
///
/// Rule: no commit ever runs a checkpoint. Why: with automatic checkpoints, the commit that
/// crosses the threshold copies the whole log and syncs the file (17–22 ms measured here,
/// against < 1 ms for a commit). What if you don't checkpoint at all: the log grows without
/// bound (768 MB after 100,000 commits).
///
/// SQLite's WAL hook reports the log's size after every commit on the store's connection; past
/// ``threshold`` frames, a PASSIVE checkpoint runs on this object's own connection on a
/// background queue. PASSIVE never waits for (or blocks) writers or readers; once it has copied
/// every frame, the next commit starts the log from the beginning again, and
/// `journal_size_limit` trims the file. Under a sustained storm of commits from this store a
/// passive checkpoint never reaches the end of the log (new frames keep arriving), and a
/// RESTART checkpoint would starve between commits; so past ``restartThreshold`` frames the
/// store's next write waits (``waitWhileRestarting()``) while the background job copies the few
/// frames the passive pass left and restarts the log. That wait happens once every few hundred
/// back-to-back commits and never during ordinary editing, which leaves idle time between edits.
///
/// Rule: past ``threshold``, a new PASSIVE pass starts only once ``stride`` more frames have
/// come in since the last one started. Why: a passive pass that copies every frame does not
/// restart the log by itself; the next commit restarts it only if it began its transaction
/// after the pass ended. Back-to-back commits begin the next one at once, so the log stays
/// past the threshold and, rescheduled after every commit, passes ran after one commit in
/// three, each syncing both files twice beside the commits' own syncs (measured at 100k
/// clips: a one-clip commit 418–432 µs, an undo 396 µs; with the stride 289–301 and 298 µs).
final class Checkpointer: @unchecked Sendable {
  /// About 4 MB of 4 KiB pages.
  static let threshold: Int32 = 1_000
  /// About 8 MB.
  static let restartThreshold: Int32 = 2_000
  /// About 1 MB: the frames a further passive pass waits for.
  static let stride: Int32 = 250
  /// How long a RESTART waits for the write lock and for readers.
  static let restartWaitMilliseconds = 250
  /// The background connection's busy timeout for its PASSIVE checkpoints.
  static let busyMilliseconds = Int(TimelineStore.defaultBusyTimeout * 1_000)

  private let path: String
  private let queue = DispatchQueue(label: "tape.checkpoint", qos: .utility)
  /// Only touched on `queue`.
  private var connection: DatabaseQueue?
  private let scheduled = Mutex(false)
  /// The log's size when the last passive pass was scheduled; 0 once the log has restarted.
  /// Only touched by the WAL hook, which runs on the store's connection.
  private var lastScheduled: Int32 = 0
  /// How many passive passes have been scheduled (tests bound it).
  private let passes = Atomic<Int>(0)
  var passCount: Int { passes.load(ordering: .relaxed) }
  /// Set by the WAL hook past `restartThreshold`; cleared when the restart is done.
  private let restart = RestartGate()
  private let logger = Logger(label: "tape.store.checkpoint")

  init(path: String) {
    self.path = path
  }

  /// Installs the WAL hook on the store's connection. `self` must outlive the connection.
  func install(on db: Database) throws {
    guard let handle = db.sqliteConnection else { return }
    sqlite3_wal_hook(
      handle,
      { context, _, _, frames in
        guard let context else { return SQLITE_OK }
        Unmanaged<Checkpointer>.fromOpaque(context).takeUnretainedValue().logged(frames)
        return SQLITE_OK
      }, Unmanaged.passUnretained(self).toOpaque())
  }

  /// Called by the WAL hook after each commit of the store's connection, with the log's size
  /// in frames.
  private func logged(_ frames: Int32) {
    guard frames >= Self.threshold else {
      lastScheduled = 0
      return
    }
    if frames >= Self.restartThreshold { restart.request() }
    // The log restarted (a smaller log than at the last pass), grew by a stride, or waits for
    // its restart.
    guard
      frames < lastScheduled || frames - lastScheduled >= Self.stride
        || frames >= Self.restartThreshold
    else { return }
    lastScheduled = frames
    schedule()
  }

  private func schedule() {
    let first = scheduled.withLock { scheduled in
      defer { scheduled = true }
      return !scheduled
    }
    guard first else { return }
    passes.add(1, ordering: .relaxed)
    queue.async { [self] in
      defer { scheduled.withLock { $0 = false } }
      do {
        if connection == nil {
          var configuration = Configuration()
          configuration.label = "tape.checkpoint"
          configuration.busyMode = .timeout(TimelineStore.defaultBusyTimeout)
          connection = try DatabaseQueue(path: path, configuration: configuration)
        }
        try connection?.writeWithoutTransaction { db in
          _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
        }
        if restart.isRequested {
          // Our store's writer now waits in waitWhileRestarting(), so RESTART cannot starve.
          restart.close()
          defer { restart.open() }
          // Waiting briefly: long enough for a commit of our store that passed the gate just
          // before it closed (with no wait at all, a busy machine lost that race pass after
          // pass and the log grew to 55 MB), never long: a RESTART that waits for readers
          // holds the write lock meanwhile, which blocks other processes' writers. If a reader
          // stays, the log restarts at a later pass.
          try connection?.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA busy_timeout = \(Self.restartWaitMilliseconds)")
            defer { try? db.execute(sql: "PRAGMA busy_timeout = \(Self.busyMilliseconds)") }
            _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(RESTART)")
          }
        }
      } catch {
        logger.warning("background checkpoint of \(path) failed: \(error)")
      }
    }
  }

  /// Called by the store before each write: returns at once unless a restart of the log is
  /// under way, which it waits for.
  func waitWhileRestarting() {
    restart.wait()
  }

  /// Waits for a running checkpoint and closes the background connection.
  func close() {
    queue.sync {
      try? connection?.close()
      connection = nil
    }
  }
}

/// A gate the store's writer passes before each write; the checkpointer closes it while it
/// restarts the log.
final class RestartGate: @unchecked Sendable {
  private let condition = NSCondition()
  private var requested = false
  private var closed = false

  var isRequested: Bool {
    condition.lock()
    defer { condition.unlock() }
    return requested
  }

  func request() {
    condition.lock()
    requested = true
    condition.unlock()
  }

  func close() {
    condition.lock()
    closed = true
    condition.unlock()
  }

  func open() {
    condition.lock()
    closed = false
    requested = false
    condition.broadcast()
    condition.unlock()
  }

  func wait() {
    condition.lock()
    while closed { condition.wait() }
    condition.unlock()
  }
}
