import Foundation
import Testing
import Timeline
import TimelineStore

@Suite("The history tree: parents, children, the way to the head")
struct HistoryTreeTests {
  /// Versions 1–4 in a line, then undo to 2 and two edits there (5, 6), then undo to 4's
  /// branch: 2 forks into 3 and 5; the head is 4.
  @Test func stepsFollowTheWayToTheHeadAndChosenBranches() throws {
    let directory = try TemporaryDirectory()
    let (store, _) = try StoreFixture.populated(at: directory.path("tree.tape"))
    try store.undo(steps: 2)
    try store.commit(label: "Gain") { _, _ in [.setTrack(Track(id: Track.ID(1), name: "Lead"))] }
    try store.commit(label: "Rename") { _, _ in
      [.setTrack(Track(id: Track.ID(1), name: "Lead 2"))]
    }
    try store.checkout(4)
    let history = try store.history()
    let tree = HistoryTree(history)
    // Each answer against the history's own rows.
    for entry in history.versions {
      #expect(tree.parent(of: entry.version) == entry.parent)
      #expect(tree.label(of: entry.version) == entry.label)
      #expect(
        tree.children(of: entry.version)
          == history.versions.filter { $0.parent == entry.version }.map(\.version))
    }
    #expect(tree.children(of: 2) == [3, 5])
    #expect(tree.next(after: 2) == 3, "toward the head (4), not the newest (5)")
    #expect(tree.next(after: 2, choosing: 1) == 5)
    #expect(tree.next(after: 2, choosing: 9) == 5, "past the end: the last")
    #expect(tree.next(after: 5) == 6, "off the head's way: the newest child")
    #expect(tree.next(after: 4) == nil && tree.next(after: 6) == nil)
    #expect(tree.parent(of: 1) == nil && tree.parent(of: 99) == nil)
    #expect(tree.leadsToHead(2) && tree.leadsToHead(4) && !tree.leadsToHead(5))
    // Walking → from the root reaches the head, as redo would.
    var walked: [Int64] = [1]
    while let next = tree.next(after: walked.last ?? 1) { walked.append(next) }
    #expect(walked == [1, 2, 3, 4])
  }
}
