import Foundation
import Mixing
import Testing
import Timeline

/// The transport's fades over a constant source, so that every output sample shows the fade
/// gain itself: requests that overlap a fade, in chosen periods.
@Suite("The live mixer: overlapping transport requests")
struct TransportFadeTests {
  static let frames = 200_000
  let audio = [
    Source.ID(1): SourceAudio(interleaved: Array(repeating: 0.5, count: frames), channels: 1)
  ]

  /// One mono clip of constant samples over the whole timeline.
  var project: Project {
    Project(
      sampleRate: 48_000, channels: 2,
      sources: [
        Source(
          id: Source.ID(1), path: "/dc", contentHash: "dc", sampleRate: 48_000, channels: 1,
          frameCount: FrameCount(Int64(Self.frames)))
      ],
      tracks: [
        Track(
          id: Track.ID(1), name: "A",
          clips: [
            Clip(
              id: Clip.ID(1), source: Source.ID(1), timelineStart: 0,
              sourceRange: FrameRange(start: 0, count: FrameCount(Int64(Self.frames))))
          ])
      ])
  }

  /// Pulls `periods` periods of 64 frames, calling `before(period)` before each; returns the
  /// gain of every frame (the left channel over its value at full gain).
  func gains(
    _ mixer: LiveMixer, periods: Int, before: (Int) -> Void
  ) throws -> [Float] {
    mixer.publish(try RenderPlan(project: project, audio: audio))
    var buffer = [Float](repeating: .nan, count: 128)
    var left: [Float] = []
    for period in 0..<periods {
      before(period)
      buffer.withUnsafeMutableBufferPointer {
        _ = LiveMixer.render(mixer.engine, frames: 64, into: $0.baseAddress!)
      }
      left += stride(from: 0, to: 128, by: 2).map { buffer[$0] }
    }
    let full = left[0]
    return left.map { $0 / full }
  }

  /// The first frame that steps from the one before by more than a declick's step (1/256):
  /// a click. Nil when there is none.
  func firstJump(_ gains: [Float]) -> Int? {
    gains.indices.dropFirst().first { abs(gains[$0] - gains[$0 - 1]) > 1 / 256 + 1e-5 }
  }

  /// Resuming halfway through a pause's fade-out fades back in from where it got to.
  @Test func aResumeDuringThePauseFadeTurnsBack() throws {
    let mixer = LiveMixer(channels: 2, maximumFrames: 64, range: 0..<Int64.max)
    let gains = try gains(mixer, periods: 20) { period in
      if period == 4 { mixer.setPaused(true) }
      if period == 6 { mixer.setPaused(false) }
    }
    #expect(firstJump(gains) == nil)
    #expect(abs(gains[383] - 0.5) < 1e-5)
    #expect(gains.min()! >= 0.5 - 1e-5)
    #expect(gains.last == 1)
    #expect(!mixer.status.paused && mixer.status.position == 20 * 64)
  }

  /// A pause or a seek halfway through the fade-in after a seek fades out from where it got
  /// to; the later seek lands.
  @Test(arguments: [false, true])
  func aRequestDuringAFadeInStartsFromItsGain(seekAgain: Bool) throws {
    let mixer = LiveMixer(channels: 2, maximumFrames: 64, range: 0..<Int64.max)
    let gains = try gains(mixer, periods: 30) { period in
      if period == 4 { mixer.seek(to: 50_000) }
      // The fade-out ends at frame 512; halfway through the fade-in at 640.
      if period == 10 {
        if seekAgain { mixer.seek(to: 90_000) } else { mixer.setPaused(true) }
      }
    }
    #expect(firstJump(gains) == nil)
    #expect(gains[512] == 0 && abs(gains[639] - 127 / 256) < 1e-5)
    #expect(gains[640..<768].max()! <= 0.5 + 1e-5)
    if seekAgain {
      #expect(mixer.status.position == 90_000 + (30 * 64 - 768))
      #expect(gains.last == 1)
    } else {
      #expect(mixer.status.paused && mixer.status.position == 50_000 + 128 + 128)
      #expect(gains[768...].allSatisfy { $0 == 0 })
    }
  }

  /// A seek and a pause within one fade: the fade-out goes on, then the seek lands and the
  /// play pauses there; a resume plays from the seek's target.
  @Test(arguments: [false, true])
  func aSeekAndAPauseInOneFade(pauseFirst: Bool) throws {
    let mixer = LiveMixer(channels: 2, maximumFrames: 64, range: 0..<Int64.max)
    let gains = try gains(mixer, periods: 20) { period in
      if period == 4 {
        if pauseFirst { mixer.setPaused(true) } else { mixer.seek(to: 50_000) }
      }
      if period == 6 {
        if pauseFirst { mixer.seek(to: 50_000) } else { mixer.setPaused(true) }
      }
    }
    #expect(firstJump(gains) == nil)
    #expect(mixer.status.paused && mixer.status.position == 50_000)
    mixer.setPaused(false)
    var buffer = [Float](repeating: 0, count: 128)
    for _ in 0..<8 {
      buffer.withUnsafeMutableBufferPointer {
        _ = LiveMixer.render(mixer.engine, frames: 64, into: $0.baseAddress!)
      }
    }
    #expect(!mixer.status.paused && mixer.status.position == 50_000 + 8 * 64)
  }

  /// A loop wrap while a seek fades out lands on the seek's target, not the loop's start.
  @Test func aLoopWrapDuringASeekFadeKeepsTheSeek() throws {
    let mixer = LiveMixer(channels: 2, maximumFrames: 64, range: 0..<3_200, loop: true)
    let gains = try gains(mixer, periods: 60) { period in
      // At 3,072: the wrap's fade-out began at 2,944; the seek's fade would end past the end.
      if period == 48 { mixer.seek(to: 1_000) }
    }
    #expect(firstJump(gains) == nil)
    #expect(mixer.status.position == 1_000 + (60 * 64 - 3_200))
  }

  /// Quitting fades out from the gain reached over 256 frames and ends the play there, the rest
  /// of that period silent: while playing, from full gain; during a seek's fade-in, turned back
  /// from where it got to; paused, at once. Before, the play ended at the next period, on a
  /// sample at full gain.
  @Test(arguments: ["playing", "paused", "fading in"])
  func quittingFadesOut(state: String) throws {
    let mixer = LiveMixer(channels: 2, maximumFrames: 64, range: 0..<Int64.max)
    mixer.publish(try RenderPlan(project: project, audio: audio))
    var buffer = [Float](repeating: .nan, count: 128)
    var left: [Float] = []
    var counts: [Int] = []
    for period in 0..<40 {
      if period == 10 && state == "paused" { mixer.setPaused(true) }
      if period == 10 && state == "fading in" { mixer.seek(to: 50_000) }
      if period == 20 || (period == 16 && state == "fading in") { mixer.stop() }
      let count = buffer.withUnsafeMutableBufferPointer {
        LiveMixer.render(mixer.engine, frames: 64, into: $0.baseAddress!)
      }
      counts.append(count)
      left += stride(from: 0, to: 128, by: 2).map { buffer[$0] }
      if count < 64 { break }
    }
    let full = left[0]
    let gains = left.map { $0 / full }
    #expect(mixer.status.finished)
    #expect(firstJump(gains) == nil, "a step at frame \(firstJump(gains) ?? 0)")
    switch state {
    case "paused":
      // The pause's fade-out ended at 896; the quit at 1,280 ends the play at once.
      #expect(counts == Array(repeating: 64, count: 20) + [0])
      #expect(gains[896...].allSatisfy { $0 == 0 })
    case "playing":
      #expect(counts == Array(repeating: 64, count: 24) + [0])
      #expect(gains[1_279] == 1 && gains[1_535] == 0)
      #expect((0..<256).allSatisfy { abs(gains[1_280 + $0] - Float(255 - $0) / 256) < 1e-6 })
      #expect(gains[1_536...].allSatisfy { $0 == 0 })
    default:
      // The seek's fade-out ended at 896, its fade-in is 128 frames in at 1,024: the quit
      // turns it back from 127/256, to silence at 1,151.
      #expect(counts == Array(repeating: 64, count: 18) + [0])
      #expect(abs(gains[1_023] - 127 / 256) < 1e-6 && abs(gains[1_024] - 127 / 256) < 1e-6)
      #expect(gains[1_151] == 0 && gains[1_152...].allSatisfy { $0 == 0 })
    }
  }
}
