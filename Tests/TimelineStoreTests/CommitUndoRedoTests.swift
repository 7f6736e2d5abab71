import Foundation
import Testing
import Timeline
import TimelineStore

@Suite("Commit, undo, redo, checkout")
struct CommitUndoRedoTests {
  @Test func aNewProjectIsVersionOneAndEmpty() throws {
    let dir = try TemporaryDirectory()
    let store = try TimelineStore.create(at: dir.path("new.tape"), sampleRate: 44_100, channels: 1)
    #expect(
      store.snapshot == StoreSnapshot(version: 1, project: Project(sampleRate: 44_100, channels: 1))
    )
    let history = try store.history()
    #expect(history.head == 1)
    #expect(history.versions.map(\.label) == ["New project"])
  }

  /// Every operation that changes a project takes the store's one write path, once; reads
  /// never do. (`writeCount` counts its calls.)
  @Test func everyWriteTakesTheOneWritePath() async throws {
    let dir = try TemporaryDirectory()
    let (store, _) = try StoreFixture.populated(at: dir.path("song.tape"))
    let updates = store.updates()
    var iterator = updates.makeAsyncIterator()
    func expectOneWrite(_ what: String, _ body: () throws -> Void) throws {
      let before = store.writeCount
      try body()
      #expect(store.writeCount == before + 1, "\(what)")
    }
    try expectOneWrite("commit") {
      try store.commit(label: "Gain") { project, _ in
        try project.setClipGain(Clip.ID(1), Gain(decibels: -3))
      }
    }
    for gain in [-4.0, -5.0] {
      try expectOneWrite("coalesced commit") {
        try store.commit(label: "Drag", coalescingKey: "drag") { project, _ in
          try project.setClipGain(Clip.ID(1), Gain(decibels: gain))
        }
      }
    }
    try expectOneWrite("undo") { try store.undo() }
    try expectOneWrite("redo") { try store.redo() }
    try expectOneWrite("checkout") { try store.checkout(2) }
    try expectOneWrite("a commit that changes nothing") {
      try store.commit(label: "Nothing") { _, _ in [] }
    }
    try expectOneWrite("a failing commit") {
      #expect(throws: StoreError.self) {
        try store.commit(label: "Bad") { project, _ in
          try project.setClipGain(Clip.ID(99), .unity)
        }
      }
    }
    let reads = store.writeCount
    _ = try store.history()
    _ = try store.project(at: 3)
    _ = try store.entry(3)
    #expect(store.writeCount == reads)
    // The head moves were published in order, each with the version it reached.
    var seen: [Int64] = []
    while seen.last != 2, let update = await iterator.next() { seen.append(update.version) }
    #expect(seen.last == 2)
  }

  /// No path holds a NUL byte: a source with one is refused (text with a NUL would be cut
  /// there on its way into SQLite, and the history would then disagree with the data). Found
  /// by a review.
  @Test func aSourcePathWithANulByteIsRefused() throws {
    let dir = try TemporaryDirectory()
    let store = try TimelineStore.create(at: dir.path("nul.tape"))
    let source = Source(
      id: Source.ID(1), path: "/audio/a\u{0}b.wav", contentHash: "h1", sampleRate: 48_000,
      channels: 1, frameCount: 48_000)
    #expect(throws: StoreError.self) {
      try store.commit(label: "Source") { _, ids in
        _ = ids.newSourceID()
        return [.setSource(source)]
      }
    }
    #expect(store.snapshot.version == 1)
    try store.close()
  }

  @Test func commitsMatchThePureResultAndSurviveReopening() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, states) = try StoreFixture.populated(at: path)
    #expect(store.snapshot.version == 4)
    // The store's snapshot equals the reference semantics of the commands...
    let expectedClip = Clip(
      id: Clip.ID(2), source: Source.ID(1), timelineStart: 48_000,
      sourceRange: FrameRange(start: 96_000, count: 48_000), gain: Gain(decibels: -6))
    #expect(states[3].clip(Clip.ID(2))?.clip == expectedClip)
    #expect(states[3].tracks.map(\.name) == ["Voice", "Music"])
    // ...and what a fresh process reads from the file.
    try store.close()
    let reopened = try TimelineStore.open(at: path)
    #expect(reopened.snapshot == StoreSnapshot(version: 4, project: states[3]))
  }

  @Test func undoRedoAndCheckoutRestoreWholeSnapshots() throws {
    let dir = try TemporaryDirectory()
    let (store, states) = try StoreFixture.populated(at: dir.path("song.tape"))
    #expect(try store.undo() == StoreSnapshot(version: 3, project: states[2]))
    #expect(try store.undo(steps: 2) == StoreSnapshot(version: 1, project: states[0]))
    #expect(throws: StoreError.nothingToUndo) { try store.undo() }
    #expect(try store.redo() == StoreSnapshot(version: 2, project: states[1]))
    #expect(try store.redo(steps: 2) == StoreSnapshot(version: 4, project: states[3]))
    #expect(throws: StoreError.nothingToRedo) { try store.redo() }
    #expect(try store.checkout(2) == StoreSnapshot(version: 2, project: states[1]))
    #expect(try store.checkout(4) == StoreSnapshot(version: 4, project: states[3]))
    #expect(throws: StoreError.unknownVersion(99)) { try store.checkout(99) }
    #expect(throws: StoreError.notEnoughSteps(requested: 9, available: 3, direction: "undo")) {
      try store.undo(steps: 9)
    }
  }

  @Test func anEditAfterUndoStartsABranchAndLosesNothing() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, states) = try StoreFixture.populated(at: path)
    try store.undo()  // back to version 3: tracks, no clips
    let branch = try store.commit(label: "Rename") { project, _ in
      try project.setTrack(Track.ID(1), name: "Lead")
    }
    #expect(branch.version == 5)
    let branchState = store.snapshot.project
    #expect(branchState.tracks.map(\.name) == ["Lead", "Music"])
    #expect(branchState.allClips == [])
    // Redo now leads along the new branch: there is nothing beyond it.
    #expect(throws: StoreError.nothingToRedo) { try store.redo() }
    // The old branch is still reachable by its number, through the common ancestor.
    #expect(try store.checkout(4) == StoreSnapshot(version: 4, project: states[3]))
    #expect(try store.checkout(5) == StoreSnapshot(version: 5, project: branchState))
    let history = try store.history()
    #expect(history.versions.map(\.parent) == [nil, 1, 2, 3, 3])
    #expect(history.head == 5)
    try store.close()
    #expect(
      try TimelineStore.open(at: path).snapshot == StoreSnapshot(version: 5, project: branchState))
  }

  @Test func redoFollowsTheMostRecentlyVisitedBranch() throws {
    let dir = try TemporaryDirectory()
    let (store, states) = try StoreFixture.populated(at: dir.path("song.tape"))
    try store.undo()  // 3
    try store.commit(label: "Rename") { project, _ in
      try project.setTrack(Track.ID(1), name: "Lead")
    }  // 5
    try store.checkout(4)
    try store.undo(steps: 2)  // 2: redo should retrace toward 4, the version visited last
    #expect(try store.redo(steps: 2) == StoreSnapshot(version: 4, project: states[3]))
    try store.checkout(5)
    try store.undo(steps: 2)  // 2
    #expect(try store.redo(steps: 2).version == 5)
  }

  @Test func aCommitThatChangesNothingCreatesNoVersion() throws {
    let dir = try TemporaryDirectory()
    let (store, _) = try StoreFixture.populated(at: dir.path("song.tape"))
    let result = try store.commit(label: "Same gain") { project, _ in
      try project.setTrack(Track.ID(2), gain: Gain(decibels: -3))
    }
    #expect(result.version == 4)
    #expect(result.changed.isEmpty)
    #expect(try store.history().versions.count == 4)
  }

  @Test func anInvalidEditChangesNothing() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, states) = try StoreFixture.populated(at: path)
    #expect(throws: StoreError.invalidEdit(.unknownClip(Clip.ID(42)))) {
      try store.commit(label: "Gain") { project, _ in try project.setClipGain(Clip.ID(42), .unity) }
    }
    #expect(throws: StoreError.self) {
      try store.commit(label: "Split") { project, ids in
        // Past its end.
        try project.splitClip(Clip.ID(1), at: 1_000_000_000_000, newID: ids.newClipID())
      }
    }
    #expect(store.snapshot == StoreSnapshot(version: 4, project: states[3]))
    // The failed split allocated no id: the next clip is still c4.
    let added = try store.commit(label: "Split") { project, ids in
      try project.splitClip(Clip.ID(1), at: 48_000, newID: ids.newClipID())
    }
    #expect(added.newIDs == ["c4"])
  }

  @Test func idsAreNeverReusedAfterUndo() throws {
    let dir = try TemporaryDirectory()
    let (store, _) = try StoreFixture.populated(at: dir.path("song.tape"))
    try store.undo()
    let result = try store.commit(label: "Track") { project, ids in
      try project.addTrack(Track(id: ids.newTrackID(), name: "Drums"))
    }
    #expect(result.newIDs == ["t3"])
  }

  @Test func removingATrackRemovesItsClipsAndUndoBringsThemBack() throws {
    let dir = try TemporaryDirectory()
    let (store, states) = try StoreFixture.populated(at: dir.path("song.tape"))
    try store.commit(label: "Remove") { project, _ in try project.removeTracks([Track.ID(1)]) }
    #expect(store.snapshot.project.tracks.map(\.id) == [Track.ID(2)])
    #expect(store.snapshot.project.clip(Clip.ID(1)) == nil)
    #expect(try store.undo().project == states[3])
    #expect(try store.redo().project.tracks.map(\.id) == [Track.ID(2)])
  }

  @Test func reorderingTracksIsUndoable() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, states) = try StoreFixture.populated(at: path)
    try store.commit(label: "Reorder") { project, _ in try project.moveTrack(Track.ID(2), to: 0) }
    let reordered = store.snapshot.project
    #expect(reordered.tracks.map(\.id) == [Track.ID(2), Track.ID(1)])
    try store.close()
    let reopened = try TimelineStore.open(at: path)
    #expect(reopened.snapshot.project == reordered)
    #expect(try reopened.undo().project == states[3])
  }
}
