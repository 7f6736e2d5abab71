import Foundation
import Mixing
import Testing
import Timeline

/// A source of deterministic noise, every chunk resident.
func noiseSource(frames: Int, channels: Int, seed: UInt64 = 7) -> SourceAudio {
  var state = seed
  let samples = (0..<frames * channels).map { _ -> Float in
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return Float(Int32(truncatingIfNeeded: state >> 32)) / Float(Int32.max) * 0.5
  }
  return SourceAudio(interleaved: samples, channels: channels)
}

/// A two-track stereo project over one mono source (s1) and one stereo source (s2).
func liveProject(
  gain: Double = 0, pan: Double = 0, muted: Bool = false, moveSecond: Int64 = 0
) -> Project {
  Project(
    sampleRate: 48_000, channels: 2,
    sources: [
      Source(
        id: Source.ID(1), path: "/mono", contentHash: "m", sampleRate: 48_000, channels: 1,
        frameCount: 200_000),
      Source(
        id: Source.ID(2), path: "/stereo", contentHash: "s", sampleRate: 48_000, channels: 2,
        frameCount: 200_000),
    ],
    tracks: [
      Track(
        id: Track.ID(1), name: "A", gain: Gain(decibels: gain), pan: pan, isMuted: muted,
        clips: [
          Clip(
            id: Clip.ID(1), source: Source.ID(1), timelineStart: 100,
            sourceRange: FrameRange(start: 500, count: 30_000), fadeIn: Fade(length: 300))
        ]),
      Track(
        id: Track.ID(2), name: "B", gain: Gain(decibels: -3),
        clips: [
          Clip(
            id: Clip.ID(2), source: Source.ID(2),
            timelineStart: FramePosition(2_000 + moveSecond),
            sourceRange: FrameRange(start: 70_000, count: 25_000),
            fadeOut: Fade(length: 1_000, curve: .sCurve))
        ]),
    ])
}

/// Mixes driven by hand, a period at a time: the fake sink of STYLE.md.
struct Harness {
  let audio: [Source.ID: SourceAudio] = [
    Source.ID(1): noiseSource(frames: 200_000, channels: 1),
    Source.ID(2): noiseSource(frames: 200_000, channels: 2, seed: 11),
  ]

  func plan(_ project: Project, version: Int64 = 1) throws -> RenderPlan {
    try RenderPlan(project: project, audio: audio, version: version)
  }

  /// The offline render of `frames` frames of `project` from `from`.
  func offline(_ project: Project, from: Int64 = 0, frames: Int) throws -> [Float] {
    let plan = try plan(project)
    var out = [Float](repeating: 0, count: frames * 2)
    _ = out.withUnsafeMutableBufferPointer {
      RenderKernel.render(plan.view, from: from, frames: frames, into: $0.baseAddress!)
    }
    return out
  }

  /// Pulls `periods` periods of `frames` frames, calling `before(period)` before each.
  func pull(
    _ mixer: LiveMixer, periods: Int, frames: Int, before: (Int) throws -> Void = { _ in }
  ) rethrows -> [Float] {
    var all: [Float] = []
    var buffer = [Float](repeating: .nan, count: frames * 2)
    for period in 0..<periods {
      try before(period)
      buffer.withUnsafeMutableBufferPointer {
        _ = LiveMixer.render(mixer.engine, frames: frames, into: $0.baseAddress!)
      }
      all += buffer
    }
    return all
  }
}

func maxDifference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Float {
  zip(a, b).map { abs($0 - $1) }.max() ?? 0
}

@Suite("The live mixer: swaps, ramps, crossfades, transport")
struct LiveMixerTests {
  let harness = Harness()

  /// With no swap, a play in any period size is the offline render, bit for bit.
  @Test(arguments: [64, 256, 1_000])
  func aPlayWithoutSwapsIsTheRender(period: Int) throws {
    let project = liveProject()
    let mixer = LiveMixer(channels: 2, maximumFrames: period, range: 0..<Int64.max)
    mixer.publish(try harness.plan(project))
    let frames = Int(project.timelineEnd.frames)
    let played = try harness.pull(mixer, periods: frames / period + 2, frames: period)
    #expect(Array(played.prefix(frames * 2)) == (try harness.offline(project, frames: frames)))
    #expect(played.dropFirst(frames * 2).allSatisfy { $0 == 0 })
    #expect(mixer.status.finished)
    #expect(mixer.swaps == [SwapEvent(version: 1, kind: .first, frame: 0, position: 0, length: 0)])
  }

  /// A gain change ramps each clip linearly from its old gain to its new one over the ramp
  /// length, landing exactly on it: checked against the analytic mix, sample by sample.
  @Test func aGainChangeRamps() throws {
    let before = liveProject()
    let after = liveProject(gain: -12, pan: 0.5)
    let mixer = LiveMixer(channels: 2, maximumFrames: 256, range: 0..<Int64.max)
    mixer.publish(try harness.plan(before))
    let played = try harness.pull(mixer, periods: 60, frames: 256) { period in
      if period == 20 { mixer.publish(try harness.plan(after, version: 2)) }
    }
    let swap = try #require(mixer.swaps.last)
    #expect(swap == SwapEvent(version: 2, kind: .ramp, frame: 5_120, position: 5_120, length: 960))
    let frames = 60 * 256
    let old = try harness.offline(before, frames: frames)
    let new = try harness.offline(after, frames: frames)
    // Track A's clip ramps; track B's clip did not change and is the same in both renders.
    // A linear gain ramp of one clip is the linear mix of the two renders, frame by frame.
    for frame in 0..<frames {
      let remaining = max(0, Double(swap.frame + swap.length - Int64(frame))) / Double(swap.length)
      let w = frame < Int(swap.frame) ? 0 : 1 - min(1, remaining)
      for channel in 0..<2 {
        let i = frame * 2 + channel
        let expected = Double(old[i]) * (1 - w) + Double(new[i]) * w
        #expect(abs(Double(played[i]) - expected) < 2e-6, "frame \(frame)")
        if abs(Double(played[i]) - expected) >= 2e-6 { return }
      }
    }
    // From the ramp's end on it is exactly the new plan.
    let end = Int(swap.frame + swap.length) * 2
    #expect(Array(played[end...]) == Array(new[end...]))
  }

  /// Moving a clip crossfades the two mixes over 256 frames with equal-gain curves; before
  /// and after, each plan exactly.
  @Test func aMoveCrossfades() throws {
    let before = liveProject()
    let after = liveProject(moveSecond: 3_000)
    let mixer = LiveMixer(channels: 2, maximumFrames: 128, range: 0..<Int64.max)
    mixer.publish(try harness.plan(before))
    let played = try harness.pull(mixer, periods: 100, frames: 128) { period in
      if period == 30 { mixer.publish(try harness.plan(after, version: 2)) }
    }
    let swap = try #require(mixer.swaps.last)
    #expect(swap.kind == .crossfade && swap.frame == 3_840 && swap.length == 256)
    let old = try harness.offline(before, frames: 12_800)
    let new = try harness.offline(after, frames: 12_800)
    let start = Int(swap.frame)
    #expect(Array(played[..<(start * 2)]) == Array(old[..<(start * 2)]))
    for frame in start..<start + 256 {
      let w = Float(frame - start) / 256
      for channel in 0..<2 {
        let i = frame * 2 + channel
        #expect(abs(played[i] - (old[i] * (1 - w) + new[i] * w)) < 1e-6)
      }
    }
    #expect(Array(played[((start + 256) * 2)...]) == Array(new[((start + 256) * 2)...]))
  }

  /// A plan published during a crossfade waits for it to end, then crossfades from the plan
  /// sounding; plans published in between are dropped (released, never heard).
  @Test func plansDuringACrossfadeWait() throws {
    let mixer = LiveMixer(channels: 2, maximumFrames: 64, range: 0..<Int64.max)
    mixer.publish(try harness.plan(liveProject(), version: 1))
    weak var dropped: RenderPlan?
    _ = try harness.pull(mixer, periods: 20, frames: 64) { period in
      switch period {
      case 2: mixer.publish(try harness.plan(liveProject(moveSecond: 100), version: 2))
      case 3:
        let skipped = try harness.plan(liveProject(moveSecond: 200), version: 3)
        dropped = skipped
        mixer.publish(skipped)
      case 4: mixer.publish(try harness.plan(liveProject(moveSecond: 300), version: 4))
      default: break
      }
      mixer.collectRetired()
    }
    #expect(dropped == nil)
    #expect(mixer.swaps.map(\.version) == [1, 2, 4])
    #expect(mixer.swaps.map(\.frame) == [0, 128, 384])
  }

  /// Retired plans are released by the planner, never on the audio thread.
  @Test func retiredPlansAreReleasedByTheCollector() throws {
    let mixer = LiveMixer(channels: 2, maximumFrames: 64, range: 0..<Int64.max)
    weak var first: RenderPlan?
    do {
      let plan = try harness.plan(liveProject())
      first = plan
      mixer.publish(plan)
    }
    _ = try harness.pull(mixer, periods: 2, frames: 64)
    mixer.publish(try harness.plan(liveProject(gain: -6), version: 2))
    _ = try harness.pull(mixer, periods: 2, frames: 64)
    #expect(first != nil, "the audio thread handed it back, but only the collector releases it")
    mixer.collectRetired()
    #expect(first == nil)
  }

  /// Pause fades out over 256 frames and holds silence; resume fades in; the position stops.
  @Test func pauseAndResumeFade() throws {
    let project = liveProject()
    let mixer = LiveMixer(channels: 2, maximumFrames: 256, range: 0..<Int64.max)
    mixer.publish(try harness.plan(project))
    let played = harness.pull(mixer, periods: 12, frames: 256) { period in
      if period == 4 { mixer.setPaused(true) }
      if period == 8 { mixer.setPaused(false) }
    }
    let reference = try harness.offline(project, frames: 4_096)
    // Fade-out: frames 1024…1279 at gains 255/256 … 0/256.
    for k in 0..<256 {
      let i = (1_024 + k) * 2
      #expect(abs(played[i] - reference[i] * Float(255 - k) / 256) < 1e-7)
    }
    #expect(played[(1_280 * 2)..<(2_048 * 2)].allSatisfy { $0 == 0 })
    // Resumed where it paused (timeline frame 1280), fading in.
    for k in 0..<256 {
      let i = (2_048 + k) * 2
      #expect(abs(played[i] - reference[(1_280 + k) * 2] * Float(k) / 256) < 1e-7)
    }
    #expect(mixer.status.position == 1_280 + 1_024)
  }

  /// A seek fades out, jumps, and fades in at the new place.
  @Test func aSeekFadesOutAndIn() throws {
    let project = liveProject()
    let mixer = LiveMixer(channels: 2, maximumFrames: 256, range: 0..<Int64.max)
    mixer.publish(try harness.plan(project))
    let played = harness.pull(mixer, periods: 6, frames: 256) { period in
      if period == 2 { mixer.seek(to: 10_000) }
    }
    let reference = try harness.offline(project, frames: 12_000)
    for k in 0..<256 {
      #expect(abs(played[(512 + k) * 2] - reference[(512 + k) * 2] * Float(255 - k) / 256) < 1e-7)
      #expect(abs(played[(768 + k) * 2] - reference[(10_000 + k) * 2] * Float(k) / 256) < 1e-7)
    }
    #expect(Array(played[(1_024 * 2)...]) == Array(reference[(10_256 * 2)..<(10_768 * 2)]))
  }

  /// Looping wraps at the range's end with a fade-out before and a fade-in after it.
  @Test func loopsWrapWithFades() throws {
    let project = liveProject()
    let mixer = LiveMixer(channels: 2, maximumFrames: 500, range: 1_000..<4_000, loop: true)
    mixer.publish(try harness.plan(project))
    let played = try harness.pull(mixer, periods: 14, frames: 500)
    let reference = try harness.offline(project, frames: 5_000)
    // First pass: 1000…3743 unchanged, 3744…3999 fading out; then 1000… fading in.
    #expect(Array(played[..<(2_744 * 2)]) == Array(reference[(1_000 * 2)..<(3_744 * 2)]))
    for k in 0..<256 {
      let out = played[(2_744 + k) * 2]
      #expect(abs(out - reference[(3_744 + k) * 2] * Float(255 - k) / 256) < 1e-7)
      let back = played[(3_000 + k) * 2]
      #expect(abs(back - reference[(1_000 + k) * 2] * Float(k) / 256) < 1e-7)
    }
    #expect(!mixer.status.finished)
  }

  /// When an edit ends the project before the playhead, the play ends there (or wraps with
  /// --loop), never reading outside a clip.
  @Test func aShrinkingProjectEndsThePlay() throws {
    let long = liveProject(moveSecond: 40_000)
    let short = liveProject()
    let mixer = LiveMixer(channels: 2, maximumFrames: 1_024, range: 0..<Int64.max)
    mixer.publish(try harness.plan(long))
    _ = try harness.pull(mixer, periods: 35, frames: 1_024) { period in
      if period == 34 { mixer.publish(try harness.plan(short, version: 2)) }
    }
    #expect(short.timelineEnd.frames < 34 * 1_024)
    #expect(mixer.status.finished)
  }

  /// Removing the clip under the playhead ends the play only after the crossfade has taken
  /// the old mix to silence: no click. With --loop, the wrap comes after it too.
  @Test(arguments: [false, true])
  func removingTheLastClipFadesOutBeforeTheEnd(loop: Bool) throws {
    let project = liveProject()
    var empty = project
    empty.tracks = empty.tracks.map {
      var track = $0; track.clips = []; return track
    }
    let mixer = LiveMixer(channels: 2, maximumFrames: 128, range: 0..<Int64.max, loop: loop)
    mixer.publish(try harness.plan(project))
    var played: [Float] = []
    var buffer = [Float](repeating: .nan, count: 256)
    var counts: [Int] = []
    for period in 0..<40 {
      if period == 30 { mixer.publish(try harness.plan(empty, version: 2)) }
      let count = buffer.withUnsafeMutableBufferPointer {
        LiveMixer.render(mixer.engine, frames: 128, into: $0.baseAddress!)
      }
      counts.append(count)
      played += buffer
    }
    let reference = try harness.offline(project, frames: 5_120)
    let start = 30 * 128
    #expect(Array(played[..<(start * 2)]) == Array(reference[..<(start * 2)]))
    for frame in start..<start + 256 {
      let w = Float(frame - start) / 256
      for channel in 0..<2 {
        let i = frame * 2 + channel
        #expect(abs(played[i] - reference[i] * (1 - w)) < 1e-6, "frame \(frame)")
      }
    }
    #expect(played[((start + 256) * 2)...].allSatisfy { $0 == 0 })
    if loop {
      // An empty project loops in silence, waiting for clips; when they come back (an undo),
      // they crossfade in from that silence.
      #expect(counts.allSatisfy { $0 == 128 } && !mixer.status.finished)
      mixer.publish(try harness.plan(project, version: 3))
      let back = try harness.pull(mixer, periods: 4, frames: 128)
      #expect(abs(back[0]) < 1e-3 && abs(back[1]) < 1e-3)
      #expect(back[(256 * 2)...].contains { abs($0) > 0.05 })
      #expect(mixer.swaps.last?.kind == .crossfade)
    } else {
      #expect(counts[..<32] == Array(repeating: 128, count: 32)[...])
      #expect(counts[32...].allSatisfy { $0 == 0 })
      #expect(mixer.status.finished)
    }
  }

  /// A crossfade near the end of a `--to` range (or near an end that did not move) plays
  /// nothing past it: exactly the range's frames are played.
  @Test(arguments: [true, false])
  func aCrossfadeNearTheEndPlaysNothingPastIt(explicitRange: Bool) throws {
    let before = liveProject()
    let after = liveProject(moveSecond: 10)
    let end: Int64 = explicitRange ? 5_000 : before.timelineEnd.frames
    let mixer = LiveMixer(
      channels: 2, maximumFrames: 100, range: 0..<(explicitRange ? end : Int64.max))
    mixer.publish(try harness.plan(before))
    var played = 0
    var buffer = [Float](repeating: 0, count: 200)
    var period = 0
    while !mixer.status.finished && period < 1_000 {
      // The move lands 150 frames before the end: its crossfade would run 106 frames past it.
      if Int64(period * 100) == (end / 100 - 1) * 100 - 100 {
        mixer.publish(try harness.plan(after, version: 2))
      }
      played += buffer.withUnsafeMutableBufferPointer {
        LiveMixer.render(mixer.engine, frames: 100, into: $0.baseAddress!)
      }
      period += 1
    }
    #expect(mixer.swaps.last?.kind == .crossfade)
    #expect(Int64(played) == (explicitRange ? end : after.timelineEnd.frames))
  }

  /// Audio not in memory plays as silence and is counted; it never blocks.
  @Test func missingAudioIsSilentAndCounted() throws {
    let cold = SourceAudio(frames: 200_000, channels: 1)
    let project = liveProject(muted: false)
    var audio = harness.audio
    audio[Source.ID(1)] = cold
    let mixer = LiveMixer(channels: 2, maximumFrames: 1_024, range: 0..<Int64.max)
    mixer.publish(try RenderPlan(project: project, audio: audio))
    _ = try harness.pull(mixer, periods: 4, frames: 1_024)
    #expect(mixer.status.missingFrames == 4 * 1_024 - 100)
  }

  /// A plan waiting in the inbox is the one the next period plays, so it is the one whose
  /// audio readiness is checked: not ready while its chunks are not resident.
  @Test func readinessChecksThePlanInTheInbox() throws {
    let mixer = LiveMixer(channels: 2, maximumFrames: 256, range: 0..<Int64.max)
    mixer.publish(try harness.plan(liveProject()))
    _ = try harness.pull(mixer, periods: 2, frames: 256)
    #expect(LiveMixer.isReady(mixer.engine, frames: 256))
    var audio = harness.audio
    audio[Source.ID(1)] = SourceAudio(frames: 200_000, channels: 1)
    mixer.publish(try RenderPlan(project: liveProject(gain: -3), audio: audio, version: 2))
    #expect(!LiveMixer.isReady(mixer.engine, frames: 256))
  }
}
