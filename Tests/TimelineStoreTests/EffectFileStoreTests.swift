import Foundation
import GRDB
import ReferenceRenders
import Testing
import Timeline

@testable import TimelineStore

/// Effects' files (a convolver's impulse response) in the store: setting, changing and
/// removing one, and removing its effect or track, are versions that undo, redo, checkout, a
/// reopen and a reader restore exactly, bytes of a path that is not UTF-8 included; a project
/// made before them opens with none.
@Suite("Effects' files in the store")
struct EffectFileStoreTests {
  static let convolver = "http://gareus.org/oss/lv2/zeroconvolv#CfgStereo"
  static let hash = "sha256:" + String(repeating: "ab", count: 32) + ":1234"

  @Test func everyFileChangeUndoesRedoesAndReopensExactly() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("files.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    var states = [store.snapshot]
    func edit(_ label: String, _ body: (Project, inout IDAllocator) throws -> [Command]) throws {
      let result = try store.commit(label: label) { project, ids in try body(project, &ids) }
      #expect(result.changed.effects, "\(label)")
      states.append(store.snapshot)
    }
    func file(_ path: RawPath, _ hash: String = Self.hash) -> EffectFile {
      EffectFile(path: path, contentHash: hash)
    }
    func setFiles(
      _ id: Int64, _ files: [String: EffectFile]
    ) throws -> (Project) throws -> [Command] {
      { p in
        var effect = try #require(p.effect(Effect.ID(id))).effect
        effect.files = files
        return try p.replaceEffect(effect)
      }
    }
    try edit("Convolver on t1, no file") { p, ids in
      try p.addEffect(
        Effect(id: ids.newEffectID(), plugin: Self.convolver), to: .track(Track.ID(1)))
    }
    try edit("Its file") { p, _ in try setFiles(1, ["ir": file("irs/hall.wav")])(p) }
    try edit("Convolver on master with two files") { p, ids in
      try p.addEffect(
        Effect(
          id: ids.newEffectID(), plugin: Self.convolver,
          files: ["ir": file("/abs/room.wav"), "b": file(RawPath(bytes: [0x61, 0xFF, 0x2E]))]),
        to: .master)
    }
    try edit("Another file, other content") { p, _ in
      try setFiles(
        1, ["ir": file("irs/plate.wav", "sha256:" + String(repeating: "cd", count: 32) + ":99")])(p)
    }
    try edit("One of two files gone") { p, _ in try setFiles(2, ["ir": file("/abs/room.wav")])(p) }
    try edit("Remove the master's convolver") { p, _ in try p.removeEffects([Effect.ID(2)]) }
    try edit("Remove the track") { p, _ in try p.removeTracks([Track.ID(1)]) }
    #expect(states[2].project.effect(Effect.ID(1))?.effect.files == ["ir": file("irs/hall.wav")])
    #expect(
      states[3].project.effect(Effect.ID(2))?.effect.files["b"]?.path.bytes == [0x61, 0xFF, 0x2E])
    #expect(states[1].project.effect(Effect.ID(1))?.effect.files == [:])
    // The rows as stored: the path relative as given, the hash, one row per file.
    let rows = try DatabaseQueue(path: path).read { db in
      try Row.fetchAll(db, sql: "SELECT effectID, key, path FROM effect_file ORDER BY id")
    }
    #expect(rows.isEmpty)

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
    #expect(try store.checkout(states[3].version).project == states[3].project)
    let stored = try DatabaseQueue(path: path).read { db in
      try Row.fetchAll(
        db, sql: "SELECT effectID, key, path, contentHash FROM effect_file ORDER BY id"
      )
      .map { "\($0[0] as Int64) \($0[1] as String) \($0[3] as String)" }
    }
    #expect(
      stored == [
        "1 ir \(Self.hash)", "2 b \(Self.hash)", "2 ir \(Self.hash)",
      ])
    #expect(try store.project(at: states[5].version) == states[5].project)
  }
}
