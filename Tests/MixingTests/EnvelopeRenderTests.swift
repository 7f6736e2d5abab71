import Foundation
import Mixing
import ReferenceRenders
import Testing
import Timeline

/// The render kernel against a float64 model of the same definition: every clip's sample ×
/// clip gain × track gain × master gain × fade × the track envelope's gain at that timeline
/// frame (see ``Timeline/Envelope``), summed. (sox's `vol` is a constant and cannot model these
/// ramps.) Agreement below −120 dBFS.
@Suite("Envelopes in the render kernel")
struct EnvelopeRenderTests {
  nonisolated(unsafe) static let signal = TestSignal(channels: 1, frames: 50_000) { frame, _ in
    Float(0.5 * sin(Double(frame) * 0.031) + 0.25 * sin(Double(frame) * 0.0071 + 1))
  }

  /// Source s1: ``signal``, mono, 50,000 frames at the project rate.
  static let source = Source(
    id: Source.ID(1), path: "/synthetic", contentHash: "none", sampleRate: 48_000, channels: 1,
    frameCount: 50_000)

  /// The whole mono mix of `project`, in float64.
  static func model(_ project: Project, frames: Int) -> [Double] {
    var out = [Double](repeating: 0, count: frames)
    let master = project.masterGain.linear
    for track in project.audibleTracks {
      for clip in track.clips {
        for i in 0..<clip.length.frames {
          let t = clip.timelineStart.frames + i
          guard t < frames else { break }
          let sample = Double(signal.buffer[Int(clip.sourceRange.start.frames + i)])
          let envelope =
            track.envelope.map {
              EnvelopeModel.gain(
                shaped: $0.points.map { ($0.time.frames, $0.decibels, $0.shape.rawValue) }, at: t)
            } ?? 1
          out[Int(t)] +=
            sample * clip.gain.linear * track.gain.linear * master * clip.fadeGain(at: i)
            * envelope
        }
      }
    }
    return out
  }

  /// Renders `[0, frames)` in blocks of `block` frames.
  static func rendered(_ project: Project, frames: Int, block: Int) throws -> [Float] {
    let plan = try RenderPlan(project: project, audio: [Source.ID(1): signal.audio])
    var out = [Float](repeating: .nan, count: frames)
    out.withUnsafeMutableBufferPointer { buffer in
      var start = 0
      while start < frames {
        let count = min(block, frames - start)
        RenderKernel.render(
          plan.view, from: Int64(start), frames: count, into: buffer.baseAddress! + start)
        start += count
      }
    }
    return out
  }

  static func worstDifference(_ a: [Float], _ b: [Double]) -> Double {
    let worst = zip(a, b).map { abs(Double($0) - $1) }.max() ?? 0
    return worst == 0 ? -.infinity : 20 * log10(worst)
  }

  /// Seeded random projects with random envelopes (some with -inf points) and master gains,
  /// rendered in blocks of several sizes.
  @Test(arguments: [UInt64(1), 2, 3, 4, 5])
  func randomEnvelopesMatchTheModel(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    for round in 0..<8 {
      var nextClip: Int64 = 1
      var tracks: [Track] = []
      for index in 0..<Int.random(in: 1...3, using: &rng) {
        let clips = (0..<Int.random(in: 1...4, using: &rng)).map { _ -> Clip in
          defer { nextClip += 1 }
          let length = Int64.random(in: 100...6_000, using: &rng)
          return Clip(
            id: Clip.ID(nextClip), source: Source.ID(1),
            timelineStart: FramePosition(Int64.random(in: 0...30_000, using: &rng)),
            sourceRange: FrameRange(
              start: FramePosition(Int64.random(in: 0...40_000, using: &rng)),
              count: FrameCount(length)),
            gain: Gain(decibels: Double(Int.random(in: -12...6, using: &rng))),
            fadeIn: Fade(
              length: FrameCount(Int64.random(in: 0...length / 2, using: &rng)), curve: .sCurve),
            fadeOut: Fade(
              length: FrameCount(Int64.random(in: 0...length / 2, using: &rng)),
              curve: .exponential))
        }
        var time = Int64.random(in: 0...20_000, using: &rng)
        var points: [Envelope.Point] = []
        for _ in 0..<Int.random(in: 1...6, using: &rng) {
          let decibels =
            Int.random(in: 0..<4, using: &rng) == 0
            ? -.infinity : Double(Int.random(in: -400...60, using: &rng)) / 10
          points.append(
            Envelope.Point(
              time: FramePosition(time), decibels: decibels,
              shape: EnvelopeShape.allCases.randomElement(using: &rng)!))
          time += Int64.random(in: 1...8_000, using: &rng)
        }
        tracks.append(
          Track(
            id: Track.ID(Int64(index + 1)), name: "T\(index)",
            gain: Gain(decibels: Double(Int.random(in: -6...3, using: &rng))),
            envelope: Int.random(in: 0..<5, using: &rng) == 0 ? nil : Envelope(points: points),
            clips: clips))
      }
      let project = Project(
        sampleRate: 48_000, channels: 1,
        sources: [Self.source],
        tracks: tracks,
        masterGain: Gain(decibels: Double(Int.random(in: -60...30, using: &rng)) / 10))
      try project.validate()
      let frames = Int(project.timelineEnd.frames)
      let model = Self.model(project, frames: frames)
      for block in [frames, 256, 999] {
        let difference = Self.worstDifference(
          try Self.rendered(project, frames: frames, block: block), model)
        #expect(difference < -120, "seed \(seed) round \(round) block \(block): \(difference) dBFS")
      }
    }
  }

  /// A breakpoint on a block edge and one inside a fade; silence (-inf) at both ends of
  /// segments, where the gain runs linearly in amplitude.
  @Test func breakpointsOnBlockEdgesInFadesAndAtSilence() throws {
    let clip = Clip(
      id: Clip.ID(1), source: Source.ID(1), timelineStart: 100,
      sourceRange: FrameRange(start: 0, count: 4_000),
      fadeIn: Fade(length: 1_000, curve: .equalPower), fadeOut: Fade(length: 500, curve: .linear))
    let points = [
      Envelope.Point(time: 512, decibels: 0),  // a block edge (blocks of 256), in the fade-in
      Envelope.Point(time: 768, decibels: -.infinity),
      Envelope.Point(time: 1_024, decibels: -6),
      Envelope.Point(time: 3_900, decibels: -20),  // inside the fade-out
      Envelope.Point(time: 4_000, decibels: -.infinity),
    ]
    let project = Project(
      sampleRate: 48_000, channels: 1,
      sources: [Self.source],
      tracks: [
        Track(id: Track.ID(1), name: "T", envelope: Envelope(points: points), clips: [clip])
      ],
      masterGain: Gain(decibels: -1.5))
    let frames = 4_200
    let model = Self.model(project, frames: frames)
    for block in [1, 256, 4_200] {
      let out = try Self.rendered(project, frames: frames, block: block)
      #expect(Self.worstDifference(out, model) < -120)
      // Exactly silent at the -inf point, and at the point in the fade-in the fade alone.
      #expect(out[768] == 0)
      let atPoint =
        Double(Self.signal.buffer[512 - 100]) * clip.fadeGain(at: 412)
        * Gain(decibels: -1.5).linear
      #expect(abs(Double(out[512]) - atPoint) < 1e-6)
    }
  }
}
