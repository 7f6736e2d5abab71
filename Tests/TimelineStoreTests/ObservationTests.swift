import Foundation
import Testing
import Timeline
import TimelineStore

@Suite("One read path", .timeLimit(.minutes(1)))
struct ObservationTests {
  /// Open, edit, undo, redo and checkout all arrive the same way: a snapshot and its diff.
  @Test func everyKindOfChangeArrivesAsASnapshotAndADiff() async throws {
    let dir = try TemporaryDirectory()
    let (store, states) = try StoreFixture.populated(at: dir.path("song.tape"))
    var updates = store.updates().makeAsyncIterator()

    let opened = try #require(await updates.next())
    #expect(opened.version == 4)
    #expect(opened.project == states[3])
    #expect(opened.diff.clips.map(\.id) == [Clip.ID(1), Clip.ID(2), Clip.ID(3)])
    #expect(opened.diff.clips.allSatisfy { $0.before == nil })

    try store.commit(label: "Move") { project, _ in
      try project.moveClip(Clip.ID(2), to: 300_000, track: Track.ID(2))
    }
    let moved = try #require(await updates.next())
    let before = ProjectDiff.PlacedClip(clip: states[3].clip(Clip.ID(2))!.clip, track: Track.ID(1))
    let after = ProjectDiff.PlacedClip(clip: before.clip.moved(to: 300_000), track: Track.ID(2))
    #expect(moved.version == 5)
    #expect(
      moved.diff
        == ProjectDiff(from: states[3], to: moved.project, changed: ChangedIDs(clips: [Clip.ID(2)]))
    )
    #expect(
      moved.diff.clips == [ProjectDiff.ClipChange(id: Clip.ID(2), before: before, after: after)])
    #expect(moved.diff.clips[0].isMove)

    try store.undo()
    let undone = try #require(await updates.next())
    #expect(undone.version == 4)
    #expect(undone.project == states[3])
    #expect(
      undone.diff.clips == [ProjectDiff.ClipChange(id: Clip.ID(2), before: after, after: before)])

    try store.redo()
    #expect(try #require(await updates.next()).diff == moved.diff)

    try store.checkout(3)
    let checkedOut = try #require(await updates.next())
    #expect(checkedOut.project == states[2])
    #expect(checkedOut.diff.clips.map(\.id) == [Clip.ID(1), Clip.ID(2), Clip.ID(3)])
    #expect(checkedOut.diff.clips.allSatisfy { $0.after == nil })
  }

  /// A store closed while its checks for other connections' commits are on their way (a commit
  /// by another connection has just woken them: at once, then 0.25 to 8 ms later) closes
  /// cleanly: no check reads its closed connection. One did, and `tape watch` crashed as it
  /// ended (SIGSEGV in SQLite, 2 runs in 60 of its test's scenario; 1 in a CI run).
  @Test func closingWhileChecksAreOnTheirWayIsSafe() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (writer, _) = try StoreFixture.populated(at: path)
    defer { try? writer.close() }
    for round in 0..<300 {
      let follower = try TimelineStore.open(at: path, access: .follow)
      let updates = follower.updates()
      try writer.commit(label: "Gain \(round)") { project, _ in
        try project.setTrack(Track.ID(1), gain: Gain(decibels: -Double(round % 20 + 1)))
      }
      // From at once to 2.7 ms after the commit: among the checks it woke.
      usleep(UInt32(round % 10) * 300)
      try follower.close()
      withExtendedLifetime(updates) {}
    }
  }

  /// A commit through another connection to the same file (what another process does) reaches
  /// subscribers through the same sequence, found by polling PRAGMA data_version.
  @Test func anotherConnectionsCommitIsObserved() async throws {
    try await withTaskExecutorPreference(QueueTaskExecutor()) {
      try await observeAnotherConnection()
    }
  }

  private func observeAnotherConnection() async throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, states) = try StoreFixture.populated(at: path)
    var updates = store.updates().makeAsyncIterator()
    _ = await updates.next()

    let other = try TimelineStore.open(at: path)
    try other.commit(label: "Rename") { project, _ in
      try project.setTrack(Track.ID(1), name: "Lead")
    }
    let started = ContinuousClock.now
    let update = try #require(await updates.next())
    #expect(ContinuousClock.now - started < .seconds(2))
    #expect(update.version == 5)
    #expect(update.project == other.snapshot.project)
    #expect(update.diff.tracks.map(\.id) == [Track.ID(1)])
    #expect(update.diff.tracks[0].after?.name == "Lead")

    // Our next edit builds on the other connection's commit, not on a stale snapshot.
    try store.commit(label: "Gain") { project, _ in
      #expect(project.track(Track.ID(1))?.name == "Lead")
      return try project.setTrack(Track.ID(1), gain: Gain(decibels: -2))
    }
    _ = await updates.next()
    try other.refresh()
    #expect(other.snapshot == store.snapshot)
    try other.undo(steps: 2)
    let back = try #require(await updates.next())
    #expect(back.project == states[3])
  }

  /// A coalesced commit by another connection keeps the version number; the observer still
  /// sees the new state.
  @Test func anotherConnectionsCoalescedCommitIsObserved() async throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    let other = try TimelineStore.open(at: path)
    try other.commit(label: "Gain", coalescingKey: "g") { p, _ in
      try p.setTrack(Track.ID(2), gain: Gain(decibels: -1))
    }
    try store.refresh()
    #expect(store.snapshot == other.snapshot)
    try other.commit(label: "Gain", coalescingKey: "g") { p, _ in
      try p.setTrack(Track.ID(2), gain: Gain(decibels: -7))
    }
    try store.refresh()
    #expect(store.snapshot == other.snapshot)
    #expect(store.snapshot.version == 5)
  }
}
