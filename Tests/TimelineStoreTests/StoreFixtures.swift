import Foundation
import Timeline
import TimelineStore

/// A fresh temporary directory per test, removed when the value is released.
final class TemporaryDirectory {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "tape-store-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  deinit { try? FileManager.default.removeItem(at: url) }
}

enum StoreFixture {
  static func source(_ ids: inout IDAllocator, seconds: Int64 = 60, channels: Int = 2) -> Source {
    let id = ids.newSourceID()
    return Source(
      id: id, path: "/audio/\(id).wav", contentHash: "hash-\(id)", sampleRate: 48_000,
      channels: channels, frameCount: FrameCount(seconds * 48_000))
  }

  /// A project with one 60 s source, two tracks and three clips, committed in four versions.
  /// Returns the store and the project after each version (index 0 is version 1, empty).
  static func populated(at path: String) throws -> (TimelineStore, [Project]) {
    let store = try TimelineStore.create(at: path)
    var states = [store.snapshot.project]
    try store.commit(label: "Import") { project, ids in [.setSource(source(&ids))] }
    states.append(store.snapshot.project)
    try store.commit(label: "Tracks") { project, ids in
      try project.addTrack(Track(id: ids.newTrackID(), name: "Voice"))
        + project.addTrack(
          Track(id: ids.newTrackID(), name: "Music", gain: Gain(decibels: -3), pan: 0.5))
    }
    states.append(store.snapshot.project)
    try store.commit(label: "Clips") { project, ids in
      let s = Source.ID(1)
      let c1 = Clip(
        id: ids.newClipID(), source: s, timelineStart: 0,
        sourceRange: FrameRange(start: 0, count: 96_000), fadeIn: Fade(length: 480))
      let c2 = Clip(
        id: ids.newClipID(), source: s, timelineStart: 48_000,
        sourceRange: FrameRange(start: 96_000, count: 48_000), gain: Gain(decibels: -6))
      let c3 = Clip(
        id: ids.newClipID(), source: s, timelineStart: 10_000,
        sourceRange: FrameRange(start: 0, count: 200_000),
        fadeOut: Fade(length: 4_800, curve: .sCurve))
      return [
        .setClip(c1, track: Track.ID(1)), .setClip(c2, track: Track.ID(1)),
        .setClip(c3, track: Track.ID(2)),
      ]
    }
    states.append(store.snapshot.project)
    return (store, states)
  }
}

/// A task executor on a serial dispatch queue: a test that measures how soon an update arrives
/// waits on it, not on the cooperative pool, which tests that block for processes can hold
/// for seconds on a 2-core machine (what the test would then measure is its own wait for a
/// thread, not the store).
final class QueueTaskExecutor: TaskExecutor {
  private let queue = DispatchQueue(label: "tape.tests.executor")

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    queue.async { job.runSynchronously(on: executor) }
  }
}
