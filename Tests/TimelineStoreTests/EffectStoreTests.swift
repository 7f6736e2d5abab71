import Foundation
import GRDB
import ReferenceRenders
import Testing
import Timeline

@testable import TimelineStore

/// Effect chains in the store: every change is one version; undo, redo, checkout, a reopen
/// and another process's reader all see exactly the chains as they were.
@Suite("Effect chains in the store")
struct EffectStoreTests {
  static let eq = "http://gareus.org/oss/lv2/fil4#stereo"
  static let limiter = "http://gareus.org/oss/lv2/dpl#stereo"

  /// Each kind of chain change, then undo all the way down and redo all the way up, checking
  /// every snapshot against the one recorded on the way; a reopen and a checkout agree.
  @Test func everyChainChangeUndoesRedoesAndReopensExactly() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("fx.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    var states = [store.snapshot]
    func edit(_ label: String, _ body: (Project, inout IDAllocator) throws -> [Command]) throws {
      let result = try store.commit(label: label) { project, ids in try body(project, &ids) }
      #expect(!result.changed.isEmpty, "\(label)")
      #expect(result.changed.effects, "\(label)")
      states.append(store.snapshot)
    }
    try edit("EQ on t1") { p, ids in
      try p.addEffect(
        Effect(id: ids.newEffectID(), plugin: Self.eq, parameters: ["g_1": -3, "f_1": 120]),
        to: .track(Track.ID(1)))
    }
    try edit("Limiter on master, with state") { p, ids in
      try p.addEffect(
        Effect(
          id: ids.newEffectID(), plugin: Self.limiter, parameters: ["threshold": -1],
          state: [0, 1, 2, 0xFF]), to: .master)
    }
    try edit("Second EQ first on t1") { p, ids in
      try p.addEffect(
        Effect(id: ids.newEffectID(), plugin: Self.eq, isBypassed: true),
        to: .track(Track.ID(1)), at: 0)
    }
    try edit("Set") { p, _ in try p.setEffect(Effect.ID(1), parameters: ["g_1": -6.25]) }
    try edit("Bypass") { p, _ in try p.setEffect(Effect.ID(1), bypassed: true) }
    try edit("Move") { p, _ in try p.moveEffect(Effect.ID(1), to: 0) }
    try edit("Remove") { p, _ in try p.removeEffects([Effect.ID(3)]) }
    try edit("Remove the track") { p, _ in try p.removeTracks([Track.ID(1)]) }
    #expect(states.last?.project.effect(Effect.ID(1)) == nil)
    #expect(states.last?.project.masterEffects.map(\.id) == [Effect.ID(2)])
    #expect(states[2].project.masterEffects.first?.state == [0, 1, 2, 0xFF])
    #expect(states[6].project.tracks[0].effects.map(\.id) == [Effect.ID(1), Effect.ID(3)])

    for index in stride(from: states.count - 2, through: 0, by: -1) {
      let undone = try store.undo()
      #expect(undone.project == states[index].project, "undo to \(index)")
    }
    for index in 1..<states.count {
      let redone = try store.redo()
      #expect(redone.project == states[index].project, "redo to \(index)")
      #expect(try TimelineStore.open(at: path, access: .read).snapshot.project == redone.project)
    }
    #expect(try store.checkout(states[4].version).project == states[4].project)
    #expect(try store.project(at: states[6].version) == states[6].project)
  }

  /// A reader (another process) following the file sees each change as a snapshot whose diff
  /// names the effect, where it was and where it is.
  @Test func aFollowerSeesEffectChangesInItsDiffs() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("fx.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.commit(label: "EQ") { p, ids in
      try p.addEffect(Effect(id: ids.newEffectID(), plugin: Self.eq), to: .track(Track.ID(2)))
    }
    let before = store.snapshot.project
    try store.commit(label: "Move to master") { p, _ in
      let effect = try #require(p.effect(Effect.ID(1))).effect
      return [.setEffects([effect], on: .master)]
    }
    let after = store.snapshot.project
    let diff = ProjectDiff(from: before, to: after, changed: ChangedIDs(effects: true))
    let effect = try #require(after.effect(Effect.ID(1))).effect
    #expect(
      diff.effects == [
        ProjectDiff.EffectChange(
          id: Effect.ID(1),
          before: ProjectDiff.PlacedEffect(effect: effect, owner: .track(Track.ID(2)), index: 0),
          after: ProjectDiff.PlacedEffect(effect: effect, owner: .master, index: 0))
      ])
    #expect(before.tracks[1].effects.map(\.id) == [Effect.ID(1)])
    #expect(after.tracks[1].effects.isEmpty)
  }

  /// Effect ids are never reused, not even after an undo.
  @Test func effectIDsAreNeverReused() throws {
    let dir = try TemporaryDirectory()
    let (store, _) = try StoreFixture.populated(at: dir.path("fx.tape"))
    let first = try store.commit(label: "EQ") { p, ids in
      try p.addEffect(Effect(id: ids.newEffectID(), plugin: Self.eq), to: .master)
    }
    try store.undo()
    let second = try store.commit(label: "EQ again") { p, ids in
      try p.addEffect(Effect(id: ids.newEffectID(), plugin: Self.eq), to: .master)
    }
    #expect(first.newIDs == ["f1"])
    #expect(second.newIDs == ["f2"])
  }
}
