import Benchmark
import Timeline

/// A project of `clipCount` clips spread over 16 tracks, each clip 1 s long with 10 ms fades,
/// cut from one 10-minute source.
func makeProject(clipCount: Int) -> Project {
  let rate = 48_000
  let source = Source(
    id: Source.ID(1), path: "/bench/source.wav", contentHash: "bench", sampleRate: rate,
    channels: 2, frameCount: FrameCount(Int64(rate) * 600))
  let trackCount = 16
  var tracks: [Track] = []
  var nextClip: Int64 = 1
  for t in 0..<trackCount {
    var clips: [Clip] = []
    for i in 0..<(clipCount / trackCount) {
      clips.append(
        Clip(
          id: Clip.ID(nextClip), source: source.id,
          timelineStart: FramePosition(Int64(i) * 60_000),
          sourceRange: FrameRange(start: FramePosition(Int64(i % 500) * 48_000), count: 48_000),
          gain: Gain(decibels: -3), fadeIn: Fade(length: 480), fadeOut: Fade(length: 480)))
      nextClip += 1
    }
    tracks.append(Track(id: Track.ID(Int64(t + 1)), name: "Track \(t + 1)", clips: clips))
  }
  return Project(sampleRate: rate, channels: 2, sources: [source], tracks: tracks)
}

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = .init(
    metrics: [.wallClock, .throughput, .mallocCountTotal],
    maxDuration: .seconds(3)
  )

  let project = makeProject(clipCount: 10_000)
  let middleClip = project.tracks[8].clips[300]
  let splitPoint = middleClip.timelineStart + FrameCount(24_000)

  Benchmark("Validate a 10,000-clip project") { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try project.validate())
    }
  }

  Benchmark("Split one clip of a 10,000-clip project") { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try project.splitClip(middleClip.id, at: splitPoint, newID: Clip.ID(20_000)))
    }
  }

  Benchmark("Split and apply to a 10,000-clip project") { benchmark in
    for _ in benchmark.scaledIterations {
      let commands = try project.splitClip(middleClip.id, at: splitPoint, newID: Clip.ID(20_000))
      blackHole(try project.applying(commands))
    }
  }

  // A diff of k changed clips through the snapshots' clip indexes: O(k log n), whatever n.
  for changed in [1, 100, 10_000] {
    var after = project
    var changes: [(Clip.ID, ClipIndex.Change)] = []
    for index in 0..<changed {
      let track = index % 16
      let position = (index / 16) % after.tracks[track].clips.count
      after.tracks[track].clips[position].gain = Gain(decibels: -6)
      changes.append(
        (
          after.tracks[track].clips[position].id,
          .placed(after.tracks[track].clips[position], on: after.tracks[track].id)
        ))
    }
    let ids = ChangedIDs(clips: Set(changes.map(\.0)))
    let before = ClipIndex(project)
    let indexes = (before, before.updating(changes))
    Benchmark("Diff of \(changed) changed clips, 10,000-clip project (indexed)") { benchmark in
      for _ in benchmark.scaledIterations {
        blackHole(ProjectDiff(from: project, to: after, changed: ids, indexes: indexes))
      }
    }
  }
}
