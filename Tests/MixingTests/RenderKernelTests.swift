import Foundation
import Mixing
import Testing
import Timeline

/// Synthetic audio for analytic tests: owned buffers with known contents.
final class TestSignal {
  let buffer: UnsafeMutableBufferPointer<Float>
  let channels: Int

  init(channels: Int, frames: Int, _ value: (Int, Int) -> Float) {
    self.channels = channels
    buffer = .allocate(capacity: frames * channels)
    for frame in 0..<frames {
      for channel in 0..<channels { buffer[frame * channels + channel] = value(frame, channel) }
    }
  }

  deinit { buffer.deallocate() }

  var audio: SourceAudio {
    SourceAudio(interleaved: Array(buffer), channels: channels)
  }
}

/// A one-track project playing `clips` from source s1 (of `frames` frames).
func project(
  channels: Int = 2, sourceChannels: Int = 1, frames: Int64 = 1_000, trackGain: Double = 0,
  pan: Double = 0, _ clips: [Clip]
) -> Project {
  Project(
    sampleRate: 48_000, channels: channels,
    sources: [
      Source(
        id: Source.ID(1), path: "/synthetic", contentHash: "none", sampleRate: 48_000,
        channels: sourceChannels, frameCount: FrameCount(frames))
    ],
    tracks: [
      Track(id: Track.ID(1), name: "T", gain: Gain(decibels: trackGain), pan: pan, clips: clips)
    ])
}

func clip(
  _ id: Int64 = 1, at start: Int64 = 0, from cropStart: Int64 = 0, length: Int64, gain: Double = 0,
  fadeIn: Fade = .none, fadeOut: Fade = .none
) -> Clip {
  Clip(
    id: Clip.ID(id), source: Source.ID(1), timelineStart: FramePosition(start),
    sourceRange: FrameRange(start: FramePosition(cropStart), count: FrameCount(length)),
    gain: Gain(decibels: gain), fadeIn: fadeIn, fadeOut: fadeOut)
}

/// Renders `[from, from + frames)` of `project` with `signal` as source s1, in one block.
func render(
  _ project: Project, _ signal: TestSignal, from: Int64 = 0, frames: Int
) throws
  -> [Float]
{
  let plan = try RenderPlan(project: project, audio: [Source.ID(1): signal.audio])
  var out = [Float](repeating: .nan, count: frames * project.channels)
  out.withUnsafeMutableBufferPointer { buffer in
    if let base = buffer.baseAddress {
      RenderKernel.render(plan.view, from: from, frames: frames, into: base)
    }
  }
  return out
}

@Suite("Render kernel: analytic facts")
struct RenderKernelTests {
  let ones = TestSignal(channels: 1, frames: 1_000) { _, _ in 1 }

  /// −6.02 dB halves the amplitude; clip gain and track gain multiply.
  @Test func gainsMultiply() throws {
    let half = -20 * log10(2.0)
    let out = try render(
      project(channels: 1, trackGain: half, [clip(length: 10, gain: half)]), ones, frames: 10)
    #expect(out.allSatisfy { abs($0 - 0.25) < 1e-7 })
  }

  /// A linear fade-in starts at 0 and rises by 1/n per frame; a linear fade-out ends at 1/n.
  @Test func linearFadesHitTheirExactValues() throws {
    let out = try render(
      project(
        channels: 1,
        [clip(length: 10, fadeIn: Fade(length: 4), fadeOut: Fade(length: 5))]), ones, frames: 12)
    let expected: [Float] = [0, 0.25, 0.5, 0.75, 1, 1, 0.8, 0.6, 0.4, 0.2, 0, 0]
    #expect(out == expected)
  }

  /// Every curve rises monotonically from 0 to 1 over a fade-in and mirrors on a fade-out, and
  /// matches its documented formula.
  @Test(arguments: FadeCurve.allCases)
  func curvesFollowTheirFormulas(curve: FadeCurve) throws {
    let n: Int64 = 300
    let faded = clip(
      length: 1_000, fadeIn: Fade(length: FrameCount(n), curve: curve),
      fadeOut: Fade(length: FrameCount(n), curve: curve))
    let out = try render(project(channels: 1, [faded]), ones, frames: 1_000)
    let formula: (Double) -> Double =
      switch curve {
      case .linear: { $0 }
      case .equalPower: { sin($0 * Double.pi / 2) }
      case .sCurve: { (1 - cos(Double.pi * $0)) / 2 }
      case .exponential: { (pow(2, 10 * $0) - 1) / 1023 }
      }
    for i in 0..<Int(n) {
      #expect(abs(Double(out[i]) - formula(Double(i) / Double(n))) < 1e-7)
      #expect(abs(Double(out[999 - i]) - formula(Double(i + 1) / Double(n))) < 1e-7)
      if i > 0 { #expect(out[i] > out[i - 1]) }
    }
    #expect(out[0] == 0)
    #expect(out[Int(n)...(999 - Int(n))].allSatisfy { $0 == 1 })
  }

  /// A mono source panned anywhere keeps constant power (L² + R² = 1) and is −3.01 dB per side
  /// at the centre; hard left leaves the right silent.
  @Test(arguments: [-1.0, -0.5, 0, 0.3, 1])
  func monoPanKeepsConstantPower(pan: Double) throws {
    let out = try render(project(pan: pan, [clip(length: 4)]), ones, frames: 4)
    let (left, right) = (Double(out[0]), Double(out[1]))
    #expect(abs(left * left + right * right - 1) < 1e-6)
    if pan == 0 { #expect(abs(20 * log10(left) + 3.0103) < 1e-3) }
    if pan == -1 { #expect(right == 0 && left == 1) }
  }

  /// A stereo source is balanced: unity on both sides at the centre, and turning right only
  /// lowers the left.
  @Test func stereoBalance() throws {
    let stereo = TestSignal(channels: 2, frames: 8) { _, channel in channel == 0 ? 0.5 : -0.25 }
    let centre = try render(project(sourceChannels: 2, [clip(length: 8)]), stereo, frames: 1)
    #expect(centre == [0.5, -0.25])
    let right = try render(
      project(sourceChannels: 2, pan: 0.5, [clip(length: 8)]), stereo, frames: 1)
    let theta = 1.5 * Double.pi / 4
    #expect(abs(Double(right[0]) - 0.5 * 2.0.squareRoot() * cos(theta)) < 1e-7)
    #expect(right[1] == -0.25)
  }

  /// Mono output: a stereo source becomes (L + R)/2 and pan is ignored.
  @Test func monoOutputDownmixes() throws {
    let stereo = TestSignal(channels: 2, frames: 8) { _, channel in channel == 0 ? 0.5 : -0.25 }
    let out = try render(
      project(channels: 1, sourceChannels: 2, pan: 0.9, [clip(length: 8)]), stereo, frames: 2)
    #expect(out == [0.125, 0.125])
  }

  /// Overlapping clips sum with no normalisation; nothing plays outside a clip.
  @Test func overlappingClipsSum() throws {
    let out = try render(
      project(channels: 1, [clip(1, at: 2, length: 4), clip(2, at: 4, length: 4, gain: 6.0206)]),
      ones, frames: 10)
    #expect(out.map { ($0 * 1_000).rounded() / 1_000 } == [0, 0, 1, 1, 3, 3, 2, 2, 0, 0])
  }

  /// Muted tracks are silent; when any track is soloed only soloed tracks sound, and mute beats
  /// solo.
  @Test func muteAndSolo() throws {
    var p = project(channels: 1, [clip(1, length: 4)])
    p.tracks.append(
      Track(id: Track.ID(2), name: "B", gain: Gain(decibels: 6.0206), clips: [clip(2, length: 4)]))
    let level = { (p: Project) in try render(p, self.ones, frames: 1)[0] }
    #expect(abs(try level(p) - 3) < 1e-3)
    p.tracks[1].isMuted = true
    #expect(try level(p) == 1)
    p.tracks[1].isMuted = false
    p.tracks[1].isSolo = true
    #expect(abs(try level(p) - 2) < 1e-3)
    p.tracks[1].isMuted = true
    #expect(try level(p) == 0)
  }

  /// Rendering in blocks of any size gives exactly the samples of one long render: what the
  /// realtime player plays equals the offline file.
  @Test(arguments: [1, 7, 64, 256, 999])
  func blocksJoinSeamlessly(block: Int) throws {
    let ramp = TestSignal(channels: 1, frames: 1_000) { frame, _ in Float(frame) / 1_000 }
    let p = project([
      clip(
        1, at: 3, from: 10, length: 500, gain: -2, fadeIn: Fade(length: 77, curve: .sCurve),
        fadeOut: Fade(length: 100, curve: .exponential)),
      clip(2, at: 250, from: 0, length: 700, fadeIn: Fade(length: 300, curve: .equalPower)),
    ])
    let whole = try render(p, ramp, frames: 1_000)
    var pieces: [Float] = []
    var from: Int64 = 0
    while from < 1_000 {
      let n = min(block, 1_000 - Int(from))
      pieces += try render(p, ramp, from: from, frames: n)
      from += Int64(n)
    }
    #expect(pieces == whole)
    #expect(whole.contains { $0 != 0 })
  }

  /// A crop past the end of the decoded audio is refused when the plan is compiled, never read.
  @Test func cropBeyondTheAudioIsRefused() {
    let p = project(channels: 1, [clip(7, from: 900, length: 200)])
    #expect(
      throws: MixingError.cropBeyondAudio(clip: Clip.ID(7), cropEnd: 1_100, audioFrames: 1_000)
    ) {
      try RenderPlan(project: p, audio: [Source.ID(1): ones.audio])
    }
  }
}
