import Foundation
import Timeline
import TimelineStore

/// Benchmark projects, built once and cached in $TMPDIR/tape-bench-fixtures (building 100,000
/// versions takes a minute or two); each benchmark works on its own copy.
enum StoreFixtures {
  static let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("tape-bench-fixtures")

  /// A project with `clips` clips on 16 tracks (one 10-minute source), then one-field edits
  /// (clip gain) until it has `versions` versions. Edits touch only the first `hotClips` clips,
  /// so versions far apart differ in at most that many rows.
  static func path(clips: Int, versions: Int, hotClips: Int = 2_000) throws -> String {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let name = "c\(clips)-v\(versions)-h\(hotClips)-blocks.tape"
    let path = directory.appendingPathComponent(name).path
    let done = path + ".done"
    if FileManager.default.fileExists(atPath: done) { return path }
    for suffix in ["", "-wal", "-shm"] {
      try? FileManager.default.removeItem(atPath: path + suffix)
    }
    FileHandle.standardError.write(Data("building fixture \(name)…\n".utf8))
    let created = try TimelineStore.create(at: path)
    try created.close()
    let store = try TimelineStore.open(at: path, durability: .normal)
    try store.commit(label: "Setup") { _, ids in
      var commands: [Command] = []
      let source = Source(
        id: ids.newSourceID(), path: "/bench/source.wav", contentHash: "bench", sampleRate: 48_000,
        channels: 2, frameCount: FrameCount(48_000 * 600))
      commands.append(.setSource(source))
      let tracks = (0..<16).map { Track(id: ids.newTrackID(), name: "Track \($0 + 1)") }
      commands += tracks.map(Command.setTrack)
      for index in 0..<clips {
        let clip = Clip(
          id: ids.newClipID(), source: source.id,
          timelineStart: FramePosition(Int64(index / 16) * 60_000),
          sourceRange: FrameRange(start: FramePosition(Int64(index % 500) * 48_000), count: 48_000),
          fadeIn: Fade(length: 480), fadeOut: Fade(length: 480))
        commands.append(.setClip(clip, track: tracks[index % 16].id))
      }
      return commands
    }
    var rng = SplitMix(state: 42)
    let hot = Int64(min(hotClips, clips))
    while store.snapshot.version < versions {
      let version = store.snapshot.version
      try store.commit(label: "Clip gain") { project, _ in
        let id = Clip.ID(Int64.random(in: 1...hot, using: &rng))
        return try project.setClipGain(id, Gain(decibels: -Double(version % 97) / 4))
      }
    }
    try store.close()
    _ = FileManager.default.createFile(atPath: done, contents: nil)
    return path
  }

  /// A private copy of a fixture, opened with full durability.
  static func copy(clips: Int, versions: Int) throws -> (TimelineStore, String) {
    let source = try path(clips: clips, versions: versions)
    let copy = FileManager.default.temporaryDirectory
      .appendingPathComponent("tape-bench-\(UUID().uuidString).tape").path
    try FileManager.default.copyItem(atPath: source, toPath: copy)
    return (try TimelineStore.open(at: copy), copy)
  }

  static func remove(_ path: String) {
    for suffix in ["", "-wal", "-shm"] {
      try? FileManager.default.removeItem(atPath: path + suffix)
    }
  }
}

struct SplitMix: RandomNumberGenerator {
  var state: UInt64

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
