import Foundation
import GRDB
import Testing
import Timeline

@testable import TimelineStore

@Suite("Readers never block, never wait, never write")
struct ReadAccessTests {
  /// The files SQLite might leave beside a project.
  static func companions(_ path: String) -> [String] {
    ["-wal", "-shm", "-journal"].filter { FileManager.default.fileExists(atPath: path + $0) }
  }

  /// A project made before volume automation (no `envelope` and `master` tables, no v5
  /// migration) is read as it is: no upgrade, not a byte written, whether or not it could be
  /// written; the first edit upgrades it. (Found by a review: every older project had become
  /// unreadable where it was read-only, and any read upgraded it where it was not.)
  @Test func anOlderProjectIsReadWithoutAnUpgrade() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("old.tape")
    let (writer, states) = try StoreFixture.populated(at: path)
    try writer.close()
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      try db.execute(
        sql: """
          DROP TABLE envelope; DROP TABLE master;
          DELETE FROM grdb_migrations WHERE identifier = 'v5'
          """)
    }
    try queue.close()
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    let reader = try TimelineStore.open(at: path, access: .read)
    #expect(reader.snapshot.project == states.last)
    #expect(try reader.project(at: 2) == states[1])
    try reader.close()
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    #expect(Self.companions(path).isEmpty)
    // An edit upgrades it and can use what the upgrade adds.
    let editor = try TimelineStore.open(at: path)
    try editor.commit(label: "Master") { project, _ in
      try project.setMasterGain(Gain(decibels: -3))
    }
    try editor.undo()
    try editor.redo()
    #expect(editor.snapshot.project.masterGain == Gain(decibels: -3))
    try editor.close()
  }

  /// Setting 0 dB on a project that never had a master gain changes nothing (no version).
  @Test func unityMasterGainIsNoChange() throws {
    let directory = try TemporaryDirectory()
    let store = try TimelineStore.create(at: directory.path("m.tape"))
    let result = try store.commit(label: "Master") { project, _ in
      try project.setMasterGain(.unity)
    }
    #expect(result.version == 1 && result.changed.isEmpty)
    #expect(store.snapshot.version == 1)
    try store.commit(label: "Down") { project, _ in try project.setMasterGain(Gain(decibels: -2)) }
    try store.commit(label: "Back") { project, _ in try project.setMasterGain(.unity) }
    #expect(store.snapshot.version == 3)
    try store.undo(steps: 2)
    #expect(store.snapshot.project.masterGain == .unity)
    try store.close()
  }

  /// A project nobody has open has no log; reading it (snapshot, history, every past version)
  /// creates no file and changes no byte.
  @Test func readingWithoutALogWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("song.tape")
    let (writer, states) = try StoreFixture.populated(at: path)
    try writer.close()
    #expect(Self.companions(path).isEmpty)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    let reader = try TimelineStore.open(at: path, access: .read)
    #expect(reader.snapshot.project == states.last)
    #expect(try reader.history().versions.count == states.count)
    for (index, state) in states.enumerated() {
      #expect(try reader.project(at: Int64(index + 1)) == state)
    }
    #expect(!reader.canFollow)
    try reader.close()
    #expect(Self.companions(path).isEmpty)
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
  }

  /// With a writer active (its log present), a reader reads through the log: it sees the
  /// writer's commits, reads any version while the writer holds its lock, and closing it
  /// checkpoints nothing into the main file.
  @Test func readingBesideAWriter() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("song.tape")
    let (writer, states) = try StoreFixture.populated(at: path)
    let main = try Data(contentsOf: URL(fileURLWithPath: path))
    let reader = try TimelineStore.open(at: path, access: .read)
    #expect(reader.canFollow)
    try writer.holdWriteLock(for: 0.5) {
      // Another connection's write lock does not stop a read transaction.
      #expect((try? reader.project(at: 2)) == states[1])
      #expect((try? reader.history().head) == Int64(states.count))
    }
    try reader.close()
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == main)
    #expect(throws: StoreError.readOnly(path: path, reason: "it was opened for reading only")) {
      try reader.commit(label: "No") { _, _ in [] }
    }
  }

  /// A store opened for reading refuses every change, in the same words an edit of a
  /// read-only file gets.
  @Test func aReaderCannotEdit() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("song.tape")
    _ = try StoreFixture.populated(at: path)
    let reader = try TimelineStore.open(at: path, access: .read)
    let refusal = StoreError.readOnly(path: path, reason: "it was opened for reading only")
    #expect(throws: refusal) { try reader.undo() }
    #expect(throws: refusal) { try reader.checkout(1) }
    #expect(throws: refusal) {
      try reader.commit(label: "Track") { project, ids in
        try project.addTrack(Track(id: ids.newTrackID(), name: "X"))
      }
    }
  }

  /// An immutable read notices that a writer changed the file under it (the writer's close
  /// checkpoints into the main file) and says so instead of returning what it may have torn.
  @Test func anImmutableReadNoticesAWriter() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("song.tape")
    let (writer, _) = try StoreFixture.populated(at: path)
    try writer.close()
    let reader = try TimelineStore.open(at: path, access: .read)
    #expect(!reader.canFollow)
    let other = try TimelineStore.open(at: path)
    try other.commit(label: "Rename") { project, _ in
      try project.setTrack(Track.ID(1), name: "Renamed")
    }
    try other.close()
    #expect(throws: StoreError.changedWhileReading(path: path)) { try reader.history() }
  }

  /// A file this user may not write: an edit is refused before SQLite touches it, a read works.
  @Test func aReadOnlyFileIsReadable() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("song.tape")
    let (writer, states) = try StoreFixture.populated(at: path)
    try writer.close()
    try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
    defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path) }
    #expect(try TimelineStore.open(at: path, access: .read).snapshot.project == states.last)
    if geteuid() != 0 {
      #expect(throws: StoreError.self) { try TimelineStore.open(at: path) }
    }
    #expect(Self.companions(path).isEmpty)
  }
}

/// The descriptors kept open to read project headers (so that no close drops this process's
/// SQLite locks) last only as long as a store of that file is open: a process that opens and
/// closes many projects does not run out of descriptors.
@Suite("Header descriptors")
struct HeaderDescriptorTests {
  @Test func closingStoresGivesTheirDescriptorsBack() throws {
    let dir = try TemporaryDirectory()
    var paths: [String] = []
    for index in 0..<10 {
      let path = dir.path("song\(index).tape")
      let (store, _) = try StoreFixture.populated(at: path)
      #expect(HeaderReaders.shared.leases(forFileAt: path) == 1)
      try store.close()
      #expect(HeaderReaders.shared.leases(forFileAt: path) == 0)
      paths.append(path)
    }
    // Stores dropped without close() give theirs back too.
    for path in paths { _ = try TimelineStore.open(at: path, access: .read) }
    #expect(paths.allSatisfy { HeaderReaders.shared.leases(forFileAt: $0) == 0 })
    // Two stores of one file share one descriptor, kept until the second closes.
    let first = try TimelineStore.open(at: paths[0])
    let second = try TimelineStore.open(at: paths[0], access: .follow)
    #expect(HeaderReaders.shared.leases(forFileAt: paths[0]) == 2)
    try first.close()
    #expect(HeaderReaders.shared.leases(forFileAt: paths[0]) == 1)
    try second.close()
    #expect(HeaderReaders.shared.leases(forFileAt: paths[0]) == 0)
    // A file that is not a project keeps nothing open.
    let other = dir.path("notes.tape")
    try Data(repeating: 7, count: 4_096).write(to: URL(fileURLWithPath: other))
    #expect(throws: StoreError.self) { try TimelineStore.open(at: other, access: .read) }
    #expect(HeaderReaders.shared.leases(forFileAt: other) == 0)
  }
}
