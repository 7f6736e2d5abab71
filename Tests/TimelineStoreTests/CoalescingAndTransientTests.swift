import Foundation
import Testing
import Timeline
import TimelineStore

@Suite("Coalescing and transient state")
struct CoalescingAndTransientTests {
  /// A fader drag: 100 gain commits with one key are one undo step.
  @Test func aRunWithOneKeyIsOneUndoStep() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, states) = try StoreFixture.populated(at: path)
    for step in 1...100 {
      let result = try store.commit(label: "Track gain", coalescingKey: "gain t2") { project, _ in
        try project.setTrack(Track.ID(2), gain: Gain(decibels: -Double(step) / 10))
      }
      #expect(result.version == 5)
    }
    #expect(store.snapshot.project.track(Track.ID(2))?.gain == Gain(decibels: -10))
    #expect(try store.history().versions.count == 5)
    #expect(try store.undo() == StoreSnapshot(version: 4, project: states[3]))
    #expect(try store.redo().project.track(Track.ID(2))?.gain == Gain(decibels: -10))
    try store.close()
    let reopened = try TimelineStore.open(at: path)
    #expect(try reopened.undo().project == states[3])
  }

  @Test func aDifferentKeyOrAnUndoStartsANewStep() throws {
    let dir = try TemporaryDirectory()
    let (store, _) = try StoreFixture.populated(at: dir.path("song.tape"))
    try store.commit(label: "Gain", coalescingKey: "gain t2") { p, _ in
      try p.setTrack(Track.ID(2), gain: Gain(decibels: -1))
    }
    try store.commit(label: "Gain", coalescingKey: "gain t2") { p, _ in
      try p.setTrack(Track.ID(2), gain: Gain(decibels: -2))
    }
    try store.commit(label: "Pan", coalescingKey: "pan t2") { p, _ in
      try p.setTrack(Track.ID(2), pan: -1)
    }
    #expect(store.snapshot.version == 6)
    try store.undo()  // back to 5: the gain step
    // 5 has a child now (6), so a new gain drag cannot fold into it: it branches.
    let result = try store.commit(label: "Gain", coalescingKey: "gain t2") { p, _ in
      try p.setTrack(Track.ID(2), gain: Gain(decibels: -4))
    }
    #expect(result.version == 7)
    #expect(try store.history().versions.map(\.parent) == [nil, 1, 2, 3, 4, 5, 5])
  }

  @Test func undoNeverTouchesTransientState() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.setTransientValue("c1,c2", forKey: "selection")
    try store.setTransientValue("96000", forKey: "playhead")
    try store.undo(steps: 3)
    try store.redo()
    try store.checkout(4)
    #expect(try store.transientValue(forKey: "selection") == "c1,c2")
    #expect(try store.transientValue(forKey: "playhead") == "96000")
    #expect(try store.history().versions.count == 4)
    try store.setTransientValue(nil, forKey: "selection")
    try store.close()
    let reopened = try TimelineStore.open(at: path)
    #expect(try reopened.transientValue(forKey: "selection") == nil)
    #expect(try reopened.transientValue(forKey: "playhead") == "96000")
  }
}
