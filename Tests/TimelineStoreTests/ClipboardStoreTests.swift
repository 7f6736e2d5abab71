import Foundation
import GRDB
import Testing
import Timeline

@testable import TimelineStore

@Suite("Clipboards in the project file")
struct ClipboardStoreTests {
  /// A clipboard comes back as the whole value saved, survives undo, redo, checkout and
  /// reopening, makes no version, and is replaced by name or removed.
  @Test func clipboardsAreKeptOutsideHistory() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("song.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.commit(label: "Envelope") { project, _ in
      try project.setEnvelope(
        Track.ID(1),
        Envelope(points: [
          Envelope.Point(time: 0, decibels: 0, shape: .linear),
          Envelope.Point(time: 60_000, decibels: -.infinity),
        ]))
    }
    // A pan lane and two sends, one with an envelope: the clipboard keeps them.
    try store.commit(label: "Lanes") { project, ids in
      let lane = ParameterEnvelope(
        curve: Envelope(points: [
          Envelope.Point(time: 10_000, decibels: -1), Envelope.Point(time: 50_000, decibels: 0.5),
        ]))
      let send = Send(
        id: ids.newSendID(), from: Track.ID(1), to: Track.ID(2),
        envelope: Envelope(points: [
          Envelope.Point(time: 30_000, decibels: -.infinity),
          Envelope.Point(time: 40_000, decibels: -6, shape: .hold),
        ]))
      let plain = Send(id: ids.newSendID(), from: Track.ID(1), to: Track.ID(2))
      return try project.setPanEnvelope(Track.ID(1), lane) + project.settingSend(send)
        + project.applying(project.settingSend(send)).settingSend(plain)
    }
    let version = store.snapshot.version
    let board = try store.snapshot.project.copyRange(
      FrameRange(start: 20_000, end: 70_000), name: "hook")
    #expect(board.pieces.count == 3 && board.tracks[0].envelope != nil)
    #expect(board.tracks[0].panEnvelope != nil && board.tracks[1].panEnvelope == nil)
    #expect(
      board.tracks[0].sends.map { "\($0.id) \($0.to) \($0.envelope != nil)" } == [
        "n1 t2 true", "n2 t2 false",
      ])
    #expect(try store.saveClipboard(board) == false)
    #expect(store.snapshot.version == version)
    #expect(try store.history().versions.count == Int(version))
    try store.undo(steps: 2)
    try store.redo()
    try store.checkout(version)
    #expect(try store.clipboard(named: "hook")?.clipboard == board)
    #expect(try store.clipboard(named: "hook")?.version == version)
    try store.close()

    let reader = try TimelineStore.open(at: path, access: .read)
    #expect(try reader.clipboards().map(\.clipboard) == [board])
    #expect(throws: StoreError.self) { try reader.saveClipboard(board) }
    try reader.close()

    let editor = try TimelineStore.open(at: path)
    var other = board
    other.name = "a"
    other.pieces.removeLast()
    try editor.saveClipboard(other)
    #expect(try editor.saveClipboard(other) == true)
    #expect(try editor.clipboards().map(\.clipboard) == [other, board])
    #expect(try editor.removeClipboard(named: "hook"))
    #expect(try !editor.removeClipboard(named: "hook"))
    #expect(try editor.clipboards().map(\.clipboard) == [other])
    try editor.close()
  }

  /// A project made before clipboards (no v9, no tables, nor v11's clip details and the
  /// clipboard columns it adds, nor v20's lanes) reads as having none, without an upgrade; the first writer
  /// adds the tables. v9 needs nothing of v8 (markers, registered by another branch): the
  /// migration runs after whatever came before it.
  @Test func aProjectWithoutClipboardTablesReadsAsNone() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("old.tape")
    let (writer, _) = try StoreFixture.populated(at: path)
    try writer.close()
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      try db.execute(
        sql: """
          DROP TABLE clipboard_lane; DROP TABLE clipboard_clip; DROP TABLE clipboard_track;
          DROP TABLE clipboard; DROP TABLE clip_detail;
          DELETE FROM grdb_migrations WHERE identifier IN ('v9', 'v11', 'v20')
          """)
    }
    try queue.close()
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    let reader = try TimelineStore.open(at: path, access: .read)
    #expect(try reader.clipboards().isEmpty)
    #expect(try reader.clipboard(named: "x") == nil)
    try reader.close()
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    let editor = try TimelineStore.open(at: path)
    let board = try editor.snapshot.project.copyRange(
      FrameRange(start: 0, count: 10), name: "x")
    try editor.saveClipboard(board)
    #expect(try editor.clipboard(named: "x")?.clipboard == board)
    try editor.close()
  }
}
