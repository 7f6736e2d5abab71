import Foundation
import Testing
import Timeline

@testable import TimelineStore

/// `TimelineStore.recentChanges(last:)` against each version's states as committed: the diff
/// of every version of the window is the diff Timeline takes of the projects before and after.
@Suite("Recent changes of the head's line")
struct RecentChangesTests {
  @Test func eachVersionWithTheDiffFromItsParent() throws {
    let dir = try TemporaryDirectory()
    let store = try TimelineStore.create(at: dir.path("recent.tape"))
    let states = try HistoryBlockTests.commitRandomEdits(to: store, until: 40, seed: 5)
    // Two undos: the window ends at the head, not at the tip redo leads to.
    _ = try store.undo(steps: 2)
    let head = store.snapshot.version
    let recent = try store.recentChanges(last: 10)
    #expect(recent.head == head)
    #expect(recent.versions.map(\.entry.version) == Array((head - 9...head).reversed()))
    #expect(recent.earlier == Int(head - 10))
    for version in recent.versions {
      let parent = try #require(version.entry.parent)
      let (before, after) = (
        try #require(states[parent]), try #require(states[version.entry.version])
      )
      let diff = try #require(version.diff)
      #expect(diff.clips == ProjectDiff(from: before, to: after).clips)
      #expect(diff == ProjectDiff(from: before, to: after))
    }
  }

  @Test func theFirstVersionHasNoDiff() throws {
    let dir = try TemporaryDirectory()
    let store = try TimelineStore.create(at: dir.path("first.tape"))
    _ = try HistoryBlockTests.commitRandomEdits(to: store, until: 3, seed: 6)
    let recent = try store.recentChanges(last: 30)
    #expect(recent.earlier == 0)
    let oldest = try #require(recent.versions.last)
    #expect(oldest.entry.parent == nil && oldest.diff == nil)
    #expect(recent.versions.dropLast().allSatisfy { $0.diff != nil })
  }
}
