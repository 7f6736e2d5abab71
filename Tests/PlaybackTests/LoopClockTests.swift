import Foundation
import Mixing
import Testing
import Timeline

@testable import Playback

/// ``LivePlayer/clock`` on a looping play lays the passes out end to end on the device thread,
/// so that the clock's latest looks (all it keeps) still read as one run of frames: a loop far
/// longer than the clock's reach, played through ALSA's `null` device (unpaced, so thousands
/// of periods pass in a moment).
@Suite struct LoopClockTests {
  @Test func aLoopsPassesAreLaidOutEndToEndBeyondTheClocksReach() throws {
    let period = 64
    // One pass is 20 periods; the play runs for over 6,000 periods (300 passes), past the
    // 4,096 looks the clock keeps.
    let length: Int64 = 1_280
    let range: Range<Int64> = 48_000..<(48_000 + length)
    let samples = [Float](repeating: 0.25, count: 96_000)
    let audio = [Source.ID(1): SourceAudio(interleaved: samples, channels: 1)]
    let project = Project(
      sampleRate: 48_000, channels: 2,
      sources: [
        Source(
          id: Source.ID(1), path: "/dc", contentHash: "d", sampleRate: 48_000, channels: 1,
          frameCount: FrameCount(Int64(samples.count)))
      ],
      tracks: [
        Track(
          id: Track.ID(1), name: "A",
          clips: [
            Clip(
              id: Clip.ID(1), source: Source.ID(1), timelineStart: 0,
              sourceRange: FrameRange(start: 0, count: FrameCount(Int64(samples.count))))
          ])
      ])
    let player = try LivePlayer(
      LivePlayer.Configuration(
        device: DeviceRequest(name: "null", period: period, periods: 4), sampleRate: 48_000,
        channels: 2, range: range, loop: true),
      compile: { project, version, sequence in
        try RenderPlan(project: project, audio: audio, version: version, sequence: sequence)
      },
      load: { _, _ in })
    let clock = StreamClock()
    player.clock = clock
    try player.start(project, version: 1)
    let started = ContinuousClock.now
    while ContinuousClock.now - started < .seconds(30) {
      let entries = clock.entries
      if let last = entries.last, last.position - range.lowerBound > 300 * length { break }
      Thread.sleep(forTimeInterval: 0.01)
    }
    player.stop()
    _ = player.wait()
    let entries = clock.entries
    try #require(entries.count == StreamClock.capacity, "the clock filled: \(entries.count)")
    let first = try #require(entries.first).position
    let last = try #require(entries.last).position
    #expect(last - range.lowerBound > 300 * length, "300 passes played (to \(last))")
    // One run of frames: each look a period after the one before, across every wrap (the
    // raw positions fall back by a pass 20 looks apart), the last looks of the stop aside.
    let steps = zip(entries, entries.dropFirst()).map { $1.position - $0.position }
    let settled = steps.dropLast(8)
    #expect(
      settled.allSatisfy { $0 == Int64(period) },
      "steps \(Set(settled)) from \(first) to \(last)")
    // Raw, they would wrap: every position modulo the loop is in the range.
    #expect(
      entries.allSatisfy {
        range.contains(range.lowerBound + ($0.position - range.lowerBound) % length)
      })
  }
}
