import Benchmark
import Mixing
import Timeline

/// Synthetic decoded audio: one stereo and one mono 60-second source of low noise, every chunk
/// resident.
final class SyntheticAudio {
  static let frames = 48_000 * 60
  let map: [Source.ID: SourceAudio]

  init() {
    var seed: UInt32 = 1
    func next() -> Float {
      seed = seed &* 1_664_525 &+ 1_013_904_223
      return Float(Int32(bitPattern: seed)) / Float(Int32.max) * 0.1
    }
    let stereo = (0..<Self.frames * 2).map { _ in next() }
    let mono = (0..<Self.frames).map { _ in next() }
    map = [
      Source.ID(1): SourceAudio(interleaved: stereo, channels: 2),
      Source.ID(2): SourceAudio(interleaved: mono, channels: 1),
    ]
  }
}

/// 16 tracks × 20 clips of 1.5 s (320 clips), every clip with 10 ms fades of a non-linear curve,
/// tracks alternating stereo and mono sources, panned; clips overlap their neighbours.
func makeProject() -> Project {
  let sources = [
    Source(
      id: Source.ID(1), path: "/bench/stereo", contentHash: "s", sampleRate: 48_000, channels: 2,
      frameCount: FrameCount(Int64(SyntheticAudio.frames))),
    Source(
      id: Source.ID(2), path: "/bench/mono", contentHash: "m", sampleRate: 48_000, channels: 1,
      frameCount: FrameCount(Int64(SyntheticAudio.frames))),
  ]
  var tracks: [Track] = []
  var nextClip: Int64 = 1
  for t in 0..<16 {
    var clips: [Clip] = []
    for i in 0..<20 {
      clips.append(
        Clip(
          id: Clip.ID(nextClip), source: Source.ID(Int64(1 + t % 2)),
          timelineStart: FramePosition(Int64(i) * 60_000 + Int64(t) * 1_000),
          sourceRange: FrameRange(start: FramePosition(Int64(i) * 72_000), count: 72_000),
          gain: Gain(decibels: -3), fadeIn: Fade(length: 480, curve: .equalPower),
          fadeOut: Fade(length: 480, curve: .sCurve)))
      nextClip += 1
    }
    tracks.append(
      Track(
        id: Track.ID(Int64(t + 1)), name: "Track \(t + 1)", gain: Gain(decibels: -12),
        pan: Double(t % 5) / 2 - 1, clips: clips))
  }
  return Project(sampleRate: 48_000, channels: 2, sources: sources, tracks: tracks)
}

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = .init(
    metrics: [.wallClock, .throughput, .mallocCountTotal],
    maxDuration: .seconds(3)
  )

  let audio = SyntheticAudio()
  let project = makeProject()

  // The realtime contract: rendering a block allocates nothing. The static threshold in
  // Benchmarks/Thresholds holds it at 0 (`swift package benchmark thresholds check`).
  Benchmark(
    "Render one 256-frame block of 320 clips",
    configuration: .init(
      metrics: [.wallClock, .mallocCountTotal],
      thresholds: [.mallocCountTotal: .init(absolute: [.p0: 0, .p50: 0, .p90: 0, .p100: 0])])
  ) { benchmark in
    let plan = try RenderPlan(project: project, audio: audio.map)
    let view = plan.view
    let output = UnsafeMutablePointer<Float>.allocate(capacity: 256 * 2)
    defer { output.deallocate() }
    var position: Int64 = 0
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
      RenderKernel.render(view, from: position, frames: 256, into: output)
      position = (position + 256 * 37) % 1_200_000
    }
    benchmark.stopMeasurement()
    blackHole(output[0])
    withExtendedLifetime(plan) {}
  }

  Benchmark("Compile a 320-clip render plan") { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try RenderPlan(project: project, audio: audio.map))
    }
  }

  // Mixing throughput: 25 s of the 16-track project in 16,384-frame blocks on one thread.
  Benchmark("Render 25 s of 16 tracks (one thread)", configuration: .init(maxDuration: .seconds(5)))
  { benchmark in
    let plan = try RenderPlan(project: project, audio: audio.map)
    let block = 16_384
    let output = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
    defer { output.deallocate() }
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
      var position: Int64 = 0
      while position < 1_200_000 {
        RenderKernel.render(plan.view, from: position, frames: block, into: output)
        position += Int64(block)
      }
    }
    benchmark.stopMeasurement()
    blackHole(output[0])
  }
}
