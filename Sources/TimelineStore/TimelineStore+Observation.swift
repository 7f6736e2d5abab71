import Dispatch
import Foundation
internal import GRDB
import Logging
import Synchronization
import Timeline

extension TimelineStore {
  /// How often the store looks for commits made by other processes while anyone subscribes.
  public static let pollInterval: Duration = .milliseconds(20)

  /// Every snapshot from now on: first the current one (its diff adds everything to an empty
  /// project), then one per edit, undo, redo, checkout and commit by another process. A store
  /// that is closed gives a stream that ends at once.
  ///
  /// ```swift
  /// for await update in store.updates() {
  ///   for change in update.diff.clips { view.animate(change) }
  /// }
  /// ```
  public func updates() -> AsyncStream<StoreUpdate> {
    let (stream, continuation) = AsyncStream.makeStream(of: StoreUpdate.self)
    state.withLock { state in
      // A closed store has nothing to follow (and no connection a check could read).
      guard !state.closed else { return continuation.finish() }
      let id = state.nextSubscriber
      state.nextSubscriber += 1
      let project = state.held.project
      let empty = Project(sampleRate: project.sampleRate, channels: project.channels)
      continuation.yield(
        StoreUpdate(
          version: state.version, project: project, changed: ChangedIDs(everythingIn: project),
          diff: ProjectDiff(from: empty, to: project), moves: []))
      state.subscribers[id] = continuation
      continuation.onTermination = { [weak self] _ in
        self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
      }
      if state.poller == nil {
        // A timer on a queue of its own, not a task: Swift's cooperative pool has one thread per
        // core and may be busy (or blocked) for seconds; a subscriber must hear commits anyway.
        // inotify on the project's folder wakes it at once when another process commits; the
        // timer is the fallback where inotify is not available (and for an immutable read,
        // which sees no commit anyway).
        let queue = DispatchQueue(label: "tape.store.poll", qos: .userInitiated)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = Self.pollInterval.components
        let nanoseconds =
          Int(interval.seconds) * 1_000_000_000 + Int(interval.attoseconds / 1_000_000_000)
        timer.schedule(
          deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        let lastDataVersion = Mutex<Int64?>(nil)
        let gate = PollGate()
        let poll: @Sendable () -> Void = { [weak self] in
          // Closed: the store's connection may be gone (``Poller/cancel()``).
          guard gate.isOpen, let self else { return }
          let last = lastDataVersion.withLock { $0 }
          let now = self.pollForExternalChanges(since: last)
          lastDataVersion.withLock { $0 = now }
        }
        timer.setEventHandler(handler: poll)
        timer.resume()
        let name = (path as NSString).lastPathComponent
        let folder = RawPath(path).folder.description
        // After a write to the log, a commit is visible only once its writer has synced the log
        // and updated the shared index, which is memory (inotify sees no write to it): a check
        // woken by the write may come too early and find nothing. It looks again soon after
        // (these many microseconds after the first check), so the commit is heard as it lands,
        // not when its writer closes the file (a `tape` process exiting) or the timer fires.
        // A later write starts its own checks and ends these.
        let followUps = [250, 500, 1_000, 2_000, 4_000, 8_000]
        let writes = Mutex(0)
        let changed: @Sendable () -> Bool = {
          let before = lastDataVersion.withLock { $0 }
          poll()
          return lastDataVersion.withLock { $0 } != before
        }
        @Sendable func followUp(_ index: Int, after previous: Int, write: Int) {
          guard index < followUps.count else { return }
          queue.asyncAfter(deadline: .now() + .microseconds(followUps[index] - previous)) {
            guard writes.withLock({ $0 }) == write, !changed() else { return }
            followUp(index + 1, after: followUps[index], write: write)
          }
        }
        // TAPE_NO_INOTIFY=1 leaves only the timer (to measure what inotify gains).
        let watcher =
          ProcessInfo.processInfo.environment["TAPE_NO_INOTIFY"] != nil
          ? nil
          : FolderWatcher(folder: folder.isEmpty ? "." : folder, names: [name, name + "-wal"]) {
            let write = writes.withLock {
              $0 += 1
              return $0
            }
            queue.async {
              if !changed() { followUp(0, after: 0, write: write) }
            }
          }
        state.poller = Poller(timer, watcher: watcher, queue: queue, gate: gate)
      }
    }
    return stream
  }

  /// Catches up with commits other processes made, publishing them; returns after one check.
  ///
  /// Subscribers get this automatically; call it to check at a moment of your choosing.
  public func refresh() throws(StoreError) {
    do {
      try queue.read { db in _ = try catchUp(db) }
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// `PRAGMA data_version` changes only when another connection commits, so polling it is cheap.
  private func pollForExternalChanges(since last: Int64?) -> Int64? {
    do {
      return try queue.read { db in
        let dataVersion = try Int64.fetchOne(db, sql: "PRAGMA data_version")
        // The first check has no baseline: a commit may have landed since the subscription.
        if last == nil || dataVersion != last { _ = try catchUp(db) }
        return dataVersion
      }
    } catch {
      // A check that was already on its way when the store closed has nothing to report.
      if state.withLock({ $0.poller != nil }) {
        logger.warning("could not check \(path) for changes: \(Self.translate(error))")
      }
      return last
    }
  }

  /// Brings the in-memory snapshot up to the head on disk, publishing an update when another
  /// process moved it. Called at the start of every write, inside its transaction.
  func catchUp(_ db: Database) throws -> Head {
    let head = try Head.read(db)
    let (version, revision, old) = state.withLock { ($0.version, $0.revision, $0.held) }
    if head.version == version && head.revision == revision { return head }

    let held: HeldProject
    let changed: ChangedIDs
    let ourVersionRevision = try Int64.fetchOne(
      db.cachedStatement(sql: "SELECT revision FROM version WHERE id = ?"), arguments: [version])
    if head.version == version || (ourVersionRevision ?? Int64.max) > revision {
      // Our version was rewritten by a coalescing commit: its changeset no longer describes
      // the step from what we hold, so read everything and diff in memory.
      held = try SnapshotReader.load(db)
      var all = ChangedIDs(everythingIn: old.project)
      let now = ChangedIDs(everythingIn: held.project)
      all.sources.formUnion(now.sources)
      all.tracks.formUnion(now.tracks)
      all.clips.formUnion(now.clips)
      changed = all
    } else {
      let changes = try VersionGraph.pathChanges(
        from: VersionGraph.node(version, db), to: VersionGraph.node(head.version, db),
        blocks: historyBlocks, db)
      changed = changes.changedIDs
      held = try SnapshotReader.applying(changes, changed: changed, to: old)
    }
    adopt(
      version: head.version, revision: head.revision, held: held, changed: changed, from: old,
      moves: try HeadJournal.moves(after: state.withLock { $0.journalSequence }, db))
    return head
  }

  /// Makes `project` at `version` the current snapshot and sends it, with its diff from `old`,
  /// to every subscriber: the last step of every commit, undo, redo, checkout and catch-up, run
  /// on the database queue so updates reach subscribers in commit order. The diff is computed
  /// only when someone subscribes, and outside the lock.
  func adopt(
    version: Int64, revision: Int64, held: HeldProject, changed: ChangedIDs,
    from old: HeldProject, moves: [HeadMove]
  ) {
    let subscribers = state.withLock {
      $0.version = version
      $0.revision = revision
      $0.held = held
      if let last = moves.last { $0.journalSequence = last.sequence }
      return Array($0.subscribers.values)
    }
    guard !subscribers.isEmpty else { return }
    let update = StoreUpdate(
      version: version, project: held.project, changed: changed,
      diff: ProjectDiff(
        from: old.project, to: held.project, changed: changed, indexes: (old.clips, held.clips)),
      moves: moves)
    for continuation in subscribers { continuation.yield(update) }
  }
}
