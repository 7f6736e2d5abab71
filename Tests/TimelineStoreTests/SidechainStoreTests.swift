import Foundation
import Testing
import Timeline

@testable import TimelineStore

/// Side chains in the store: setting, changing and removing one, changing its effect's other
/// values, and removing its source track are versions that undo, redo, checkout and a reopen
/// see exactly (the incremental snapshot after each move equals the project read whole); a loop
/// is refused with nothing written.
@Suite("Side chains in the store")
struct SidechainStoreTests {
  static let plugin = "http://lsp-plug.in/plugins/lv2/sc_compressor_stereo"

  @Test func everySidechainChangeUndoesRedoesAndReopensExactly() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("sidechain.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.commit(label: "Voice") { p, ids in
      try p.addTrack(Track(id: ids.newTrackID(), name: "Voice"))
    }
    var states = [store.snapshot]
    func edit(_ label: String, _ body: (Project, inout IDAllocator) throws -> [Command]) throws {
      try store.commit(label: label) { project, ids in try body(project, &ids) }
      states.append(store.snapshot)
    }
    let (t1, t2, t3) = (Track.ID(1), Track.ID(2), Track.ID(3))
    let f1 = Effect.ID(1)
    try edit("Add keyed") { p, ids in
      try p.addEffect(
        Effect(id: ids.newEffectID(), plugin: Self.plugin, parameters: ["cr": 4], sidechain: t3),
        to: .track(t1))
    }
    // t1 is keyed by t3: t1 going into t3 closes a loop, refused with nothing written.
    let head = store.snapshot
    let versions = try store.history().versions.count
    #expect {
      try store.commit(label: "Loop") { p, _ in try p.routeOutput(of: t1, to: t3) }
    } throws: { error in
      "\(error)".hasPrefix("t1 → t3 → t1 is a loop")
    }
    #expect(store.snapshot == head)
    #expect(try store.history().versions.count == versions)
    try edit("Ratio") { p, _ in try p.setEffect(f1, parameters: ["cr": 10]) }
    try edit("Bypass") { p, _ in try p.setEffect(f1, bypassed: true) }
    try edit("Key t2") { p, _ in try p.setEffect(f1, sidechain: .some(t2)) }
    try edit("Unkeyed") { p, _ in try p.setEffect(f1, sidechain: .some(nil)) }
    try edit("Key t3") { p, _ in try p.setEffect(f1, bypassed: false, sidechain: .some(t3)) }
    try edit("Remove voice") { p, _ in [.removeTracks([t3])] }
    try edit("Key t2 again") { p, _ in try p.setEffect(f1, sidechain: .some(t2)) }
    try edit("Remove effect") { p, _ in try p.removeEffects([f1]) }
    let keyed = states.map { $0.project.effect(f1)?.effect.sidechain }
    #expect(keyed == [nil, t3, t3, t3, t2, nil, t3, nil, t2, nil])
    #expect(states[3].project.effect(f1)?.effect.parameters["cr"] == 10)

    for index in stride(from: states.count - 2, through: 0, by: -1) {
      let undone = try store.undo()
      #expect(undone.project == states[index].project, "undo to \(index)")
      #expect(try TimelineStore.open(at: path, access: .read).snapshot.project == undone.project)
    }
    for index in 1..<states.count {
      let redone = try store.redo()
      #expect(redone.project == states[index].project, "redo to \(index)")
      #expect(try TimelineStore.open(at: path, access: .read).snapshot.project == redone.project)
    }
    #expect(try store.checkout(states[4].version).project == states[4].project)
    #expect(try TimelineStore.open(at: path, access: .read).snapshot.project == states[4].project)
    #expect(try store.project(at: states[6].version) == states[6].project)
    #expect(try store.verify().isOK)
  }
}
