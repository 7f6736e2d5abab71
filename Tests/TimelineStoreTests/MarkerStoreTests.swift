import Foundation
import GRDB
import ReferenceRenders
import Testing
import Timeline

@testable import TimelineStore

/// Markers in the store: every change is one version that undo, redo, checkout and a reopen
/// see exactly; ids are never reused.
@Suite("Markers in the store")
struct MarkerStoreTests {
  @Test func everyMarkerChangeUndoesRedoesAndReopensExactly() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("markers.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    var states = [store.snapshot]
    func edit(_ label: String, _ body: (Project, inout IDAllocator) throws -> [Command]) throws {
      let result = try store.commit(label: label) { project, ids in try body(project, &ids) }
      #expect(result.changed.markers, "\(label)")
      states.append(store.snapshot)
    }
    try edit("Add chorus") { p, ids in
      try p.addMarker(ids.newMarkerID(), named: "chorus", at: 96_000)
    }
    try edit("Add verse") { p, ids in try p.addMarker(ids.newMarkerID(), named: "verse", at: 10) }
    try edit("Move") { p, _ in try p.moveMarker(Marker.ID(1), to: 120_000) }
    try edit("Rename") { p, _ in try p.renameMarker(Marker.ID(2), to: "verse 1") }
    try edit("Ripple cut") { p, ids in
      try p.cutRange(FrameRange(start: 0, end: 24_000), ripple: true) { ids.newClipID() }
    }
    try edit("Swap names") { p, _ in
      // Through a third name, in one version: the rows change one by one.
      try p.renameMarker(Marker.ID(1), to: "tmp")
        + [.setMarker(Marker(id: Marker.ID(2), name: "chorus", position: 0))]
        + [.setMarker(Marker(id: Marker.ID(1), name: "verse 1", position: 96_000))]
    }
    try edit("Remove") { p, _ in try p.removeMarkers([Marker.ID(1)]) }
    #expect(states[5].project.markers.map(\.position) == [0, 96_000])
    #expect(states[6].project.markers.map(\.name) == ["chorus", "verse 1"])
    #expect(states.last?.project.markers.map(\.id) == [Marker.ID(2)])

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
    #expect(try store.project(at: states[6].version) == states[6].project)
  }

  /// Marker ids are never reused, not even after an undo; and a batch of ids created in one
  /// commit lists markers after everything else.
  @Test func markerIDsAreNeverReused() throws {
    let dir = try TemporaryDirectory()
    let (store, _) = try StoreFixture.populated(at: dir.path("markers.tape"))
    let first = try store.commit(label: "A") { p, ids in
      try p.addMarker(ids.newMarkerID(), named: "a", at: 0)
    }
    try store.undo()
    let second = try store.commit(label: "A again") { p, ids in
      try p.addMarker(ids.newMarkerID(), named: "a", at: 0)
    }
    #expect(first.newIDs == ["m1"])
    #expect(second.newIDs == ["m2"])
  }

  /// A project made before markers (no `marker` tables, no v8 migration) is read as it is,
  /// without a byte written; the first edit upgrades it, and its markers then undo and redo.
  @Test func aProjectMadeBeforeMarkersIsReadAsItIsAndUpgradedByAnEdit() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("old.tape")
    let (writer, states) = try StoreFixture.populated(at: path)
    try writer.close()
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      try db.execute(
        sql: """
          DROP TABLE marker; DROP TABLE marker_sequence;
          DELETE FROM grdb_migrations WHERE identifier = 'v8'
          """)
    }
    try queue.close()
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    let reader = try TimelineStore.open(at: path, access: .read)
    #expect(reader.snapshot.project == states.last)
    #expect(reader.snapshot.project.markers.isEmpty)
    try reader.close()
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    let editor = try TimelineStore.open(at: path)
    let added = try editor.commit(label: "Marker") { p, ids in
      try p.addMarker(ids.newMarkerID(), named: "chorus", at: 48_000)
    }
    #expect(added.newIDs == ["m1"])
    try editor.undo()
    #expect(editor.snapshot.project == states.last)
    try editor.redo()
    #expect(editor.snapshot.project.markers.map(\.name) == ["chorus"])
    try editor.close()
  }

  /// A follower's diff names the marker and its values before and after.
  @Test func aFollowerSeesMarkerChangesInItsDiff() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("markers.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.commit(label: "Add") { p, ids in
      try p.addMarker(ids.newMarkerID(), named: "chorus", at: 96_000)
    }
    let reader = try TimelineStore.open(at: path, access: .read)
    let before = reader.snapshot.project
    try store.commit(label: "Move") { p, _ in try p.moveMarker(Marker.ID(1), to: 48_000) }
    let after = try TimelineStore.open(at: path, access: .read).snapshot.project
    #expect(
      ProjectDiff(from: before, to: after).markers == [
        ProjectDiff.MarkerChange(
          id: Marker.ID(1), before: Marker(id: Marker.ID(1), name: "chorus", position: 96_000),
          after: Marker(id: Marker.ID(1), name: "chorus", position: 48_000))
      ])
  }
}
