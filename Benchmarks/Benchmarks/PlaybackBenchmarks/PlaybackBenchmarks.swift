import Benchmark
import Mixing
import Timeline

/// Ten seconds of synthetic stereo audio, every chunk resident.
func stereoSource() -> SourceAudio {
  var seed: UInt32 = 7
  let samples = (0..<48_000 * 10 * 2).map { _ -> Float in
    seed = seed &* 1_664_525 &+ 1_013_904_223
    return Float(Int32(bitPattern: seed)) / Float(Int32.max) * 0.1
  }
  return SourceAudio(interleaved: samples, channels: 2)
}

/// `tracks` stereo tracks, each playing one 8 s clip with 10 ms fades over 0…8 s (frame 96,000,
/// where periods are rendered, is in every clip's body), panned across the field;
/// `gainOffset` changes every track's gain (a ramp), `shift` moves every clip (a crossfade).
func liveProject(tracks: Int, gainOffset: Double = 0, shift: Int64 = 0) -> Project {
  let source = Source(
    id: Source.ID(1), path: "/bench", contentHash: "b", sampleRate: 48_000, channels: 2,
    frameCount: 480_000)
  var built: [Track] = []
  for index in 0..<tracks {
    let start = FramePosition(Int64(index % 7) * 11 + shift)
    let crop = FrameRange(start: FramePosition(Int64(index) * 97), count: 384_000)
    let clip = Clip(
      id: Clip.ID(Int64(index + 1)), source: Source.ID(1), timelineStart: start,
      sourceRange: crop, fadeIn: Fade(length: 480), fadeOut: Fade(length: 480, curve: .sCurve))
    let pan = Double(index % 9 - 4) / 4
    built.append(
      Track(
        id: Track.ID(Int64(index + 1)), name: "T\(index)", gain: Gain(decibels: -12 + gainOffset),
        pan: pan, clips: [clip]))
  }
  return Project(sampleRate: 48_000, channels: 2, sources: [source], tracks: built)
}

/// `count` clips over 16 tracks (what a long edited project holds).
func largeProject(clips count: Int) -> Project {
  var tracks: [Track] = (0..<16).map { Track(id: Track.ID(Int64($0 + 1)), name: "T\($0)") }
  for index in 0..<count {
    tracks[index % 16].clips.append(
      Clip(
        id: Clip.ID(Int64(index + 1)), source: Source.ID(1),
        timelineStart: FramePosition(Int64(index / 16) * 24_000),
        sourceRange: FrameRange(start: FramePosition(Int64(index % 100) * 1_000), count: 36_000),
        fadeIn: Fade(length: 240), fadeOut: Fade(length: 240)))
  }
  return Project(
    sampleRate: 48_000, channels: 2,
    sources: [
      Source(
        id: Source.ID(1), path: "/bench", contentHash: "b", sampleRate: 48_000, channels: 2,
        frameCount: 480_000)
    ], tracks: tracks)
}

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = .init(
    metrics: [.wallClock, .mallocCountTotal], maxDuration: .seconds(3))
  let source = stereoSource()
  let audio = [Source.ID(1): source]

  // The kernel's cost per 256-frame period (5.33 ms at 48 kHz): the realtime budget. The goal
  // is 64 tracks under 5 % of a period on one core.
  for tracks in [16, 64, 256] {
    Benchmark("Kernel: one 256-frame period, \(tracks) stereo tracks") { benchmark in
      let plan = try RenderPlan(project: liveProject(tracks: tracks), audio: audio)
      let output = UnsafeMutablePointer<Float>.allocate(capacity: 512)
      defer { output.deallocate() }
      benchmark.startMeasurement()
      for _ in benchmark.scaledIterations {
        RenderKernel.render(plan.view, from: 96_000, frames: 256, into: output, clock: 0)
      }
      benchmark.stopMeasurement()
      blackHole(output[0])
    }
  }

  // What a swap costs the audio thread: a period that picks up a plan (64 tracks) and starts a
  // ramp (then renders the period with every track's gain ramping: the per-frame gain path) or
  // a crossfade (two mixes), against one that does not. Plans are published outside the
  // measurement.
  for kind in ["none", "ramp", "crossfade"] {
    Benchmark("Swap: a 64-track period with \(kind == "none" ? "no swap" : "a \(kind) swap")") {
      benchmark in
      let plans = try (0..<2).map { variant in
        try RenderPlan(
          project: liveProject(
            tracks: 64, gainOffset: kind == "ramp" ? Double(variant) : 0,
            shift: kind == "crossfade" ? Int64(variant) : 0), audio: audio)
      }
      let output = UnsafeMutablePointer<Float>.allocate(capacity: 512)
      defer { output.deallocate() }
      for _ in benchmark.scaledIterations {
        // A fresh mixer per iteration: the first plan, one period, then the measured one.
        let mixer = LiveMixer(channels: 2, maximumFrames: 256, range: 96_000..<Int64.max)
        mixer.publish(plans[0])
        LiveMixer.render(mixer.engine, frames: 256, into: output)
        if kind != "none" { mixer.publish(plans[1]) }
        benchmark.startMeasurement()
        LiveMixer.render(mixer.engine, frames: 256, into: output)
        benchmark.stopMeasurement()
        mixer.collectRetired()
      }
      blackHole(output[0])
    }
  }

  // Compiling a plan bounds how soon an edit is heard (off the audio thread).
  Benchmark("Compile a 10,000-clip plan") { benchmark in
    let project = largeProject(clips: 10_000)
    for _ in benchmark.scaledIterations {
      blackHole(try RenderPlan(project: project, audio: audio))
    }
  }
}
