import Foundation
import GRDB
import Testing
import Timeline

@testable import TimelineStore

/// Routing in the store: outputs and sends are versions that undo, redo, checkout and a reopen
/// see exactly; a loop is refused with nothing written; removing a track reroutes what it
/// received and drops its sends, and undo brings them back.
@Suite("Routing in the store")
struct RoutingStoreTests {
  @Test func everyRoutingChangeUndoesRedoesAndReopensExactly() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("routing.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.commit(label: "Bus") { p, ids in
      try p.addTrack(Track(id: ids.newTrackID(), name: "Bus"))
    }
    var states = [store.snapshot]
    func edit(_ label: String, _ body: (Project, inout IDAllocator) throws -> [Command]) throws {
      try store.commit(label: label) { project, ids in try body(project, &ids) }
      states.append(store.snapshot)
    }
    let (t1, t2, t3) = (Track.ID(1), Track.ID(2), Track.ID(3))
    try edit("Output") { p, _ in try p.routeOutput(of: t1, to: t3) }
    try edit("Send") { p, ids in
      try p.settingSend(Send(id: ids.newSendID(), from: t2, to: t3, gain: Gain(decibels: -6)))
    }
    try edit("Pre send") { p, ids in
      try p.settingSend(
        Send(id: ids.newSendID(), from: t2, to: t1, pan: -0.5, isPreFader: true))
    }
    try edit("Set send") { p, _ in
      var send = try #require(p.send(Send.ID(1)))
      send.gain = Gain(decibels: -12)
      return try p.settingSend(send)
    }
    try edit("Remove send") { p, _ in [.removeSends([Send.ID(2)])] }
    try edit("Remove bus") { p, _ in [.removeTracks([t3])] }
    #expect(states[1].project.track(t1)?.output == t3)
    #expect(states[4].project.sends.map(\.gain.decibels) == [-12, 0])
    #expect(states[6].project.sends.isEmpty)
    #expect(states[6].project.track(t1)?.output == nil)

    for index in stride(from: states.count - 2, through: 0, by: -1) {
      let undone = try store.undo()
      #expect(undone.project == states[index].project, "undo to \(index)")
    }
    for index in 1..<states.count {
      let redone = try store.redo()
      #expect(redone.project == states[index].project, "redo to \(index)")
      #expect(try TimelineStore.open(at: path, access: .read).snapshot.project == redone.project)
    }
    #expect(try store.checkout(states[3].version).project == states[3].project)
    #expect(try TimelineStore.open(at: path, access: .read).snapshot.project == states[3].project)
    #expect(try store.project(at: states[5].version) == states[5].project)
    #expect(try store.verify().isOK)
  }

  /// A route that closes a loop is refused naming it, and the file keeps its head.
  @Test func aLoopIsRefusedNamingItAndNothingIsWritten() throws {
    let dir = try TemporaryDirectory()
    let (store, _) = try StoreFixture.populated(at: dir.path("loop.tape"))
    try store.commit(label: "Out") { p, _ in try p.routeOutput(of: Track.ID(1), to: Track.ID(2)) }
    let head = store.snapshot
    let versions = try store.history().versions.count
    #expect {
      try store.commit(label: "Back") { p, ids in
        try p.settingSend(Send(id: ids.newSendID(), from: Track.ID(2), to: Track.ID(1)))
      }
    } throws: { error in
      "\(error)".hasPrefix("t2 → t1 → t2 is a loop")
    }
    #expect(store.snapshot == head)
    #expect(try store.history().versions.count == versions)
  }

  /// A project made before routing (no v15) is read as it is, without a byte written; the
  /// first edit upgrades it.
  @Test func aProjectMadeBeforeRoutingIsReadAsItIsAndUpgradedByAnEdit() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("old.tape")
    let (writer, states) = try StoreFixture.populated(at: path)
    try writer.close()
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      try db.execute(
        sql: """
          DROP TABLE send; DROP TABLE track_output; DROP TABLE send_sequence;
          DELETE FROM grdb_migrations WHERE identifier = 'v15'
          """)
    }
    try queue.close()
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    let reader = try TimelineStore.open(at: path, access: .read)
    #expect(reader.snapshot.project == states.last)
    try reader.close()
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    let store = try TimelineStore.open(at: path)
    let result = try store.commit(label: "Send") { p, ids in
      try p.settingSend(Send(id: ids.newSendID(), from: Track.ID(1), to: Track.ID(2)))
    }
    #expect(result.newIDs == ["n1"])
    try store.undo()
    #expect(store.snapshot.project == states.last)
  }
}
