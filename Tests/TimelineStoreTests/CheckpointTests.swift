import Foundation
import Testing
import Timeline

@testable import TimelineStore

@Suite("Background checkpoints")
struct CheckpointTests {
  /// The populated fixture at `path`, opened again without syncs (commits in a storm).
  static func fixture(at path: String) throws -> TimelineStore {
    try StoreFixture.populated(at: path).0.close()
    return try TimelineStore.open(at: path, durability: .normal)
  }

  /// Without checkpoints the log grows by every commit (about 16 KB each here: 64 MB after
  /// 4,000); the background checkpointer keeps its high-water mark near the restart threshold
  /// (8 MB) plus what arrives while a checkpoint runs, even under a storm of commits.
  @Test func theLogStaysBoundedAcrossManyCommits() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.fixture(at: path)
    var largest = 0
    var versions = 0
    for step in 0..<4_000 {
      let result = try store.commit(label: "Gain") { project, _ in
        try project.setClipGain(
          Clip.ID(Int64(step % 3 + 1)), Gain(decibels: -Double(step % 50) / 4))
      }
      versions += result.changed.isEmpty ? 0 : 1
      let size =
        (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
      largest = max(largest, size)
    }
    #expect(largest < 16 << 20)
    #expect(try store.verify().isOK)
    try store.close()
    #expect(versions > 3_990)
    #expect(try TimelineStore.open(at: path).snapshot.version == Int64(4 + versions))
  }

  /// A passive pass that copies the whole log does not restart it while commits come back to
  /// back (each begins before the pass ends), so the log stays past the threshold. Passes are
  /// then started once per ``Checkpointer/stride`` new frames, not after every commit (which
  /// had one pass for every two or three commits, each syncing both files twice).
  @Test func backToBackCommitsStartAPassPerStrideOfFrames() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let store = try Self.fixture(at: path)
    let commits = 2_000
    for step in 0..<commits {
      try store.commit(label: "Gain") { project, _ in
        try project.setClipGain(
          Clip.ID(Int64(step % 3 + 1)), Gain(decibels: -Double(step % 50) / 4 - 0.125))
      }
    }
    // About 4 frames a commit: 8,000 frames, so 8,000 / 250 passes and one or two for each
    // restart of the log, against hundreds when every commit past the threshold started one.
    let frames = commits * 4
    let bound = frames / Int(Checkpointer.stride) + 2 * (frames / Int(Checkpointer.threshold))
    #expect(store.checkpointer.passCount > 0)
    #expect(store.checkpointer.passCount <= bound, "\(store.checkpointer.passCount) passes")
    #expect(try store.verify().isOK)
    try store.close()
  }
}
