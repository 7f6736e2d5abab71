import Foundation
import Mixing
import Playback
import Testing
import Timeline

/// The player's planner, on ALSA's `null` device (no sound card needed).
@Suite("Live player")
struct LivePlayerTests {
  /// A project of one clip over a second of noise, its gain `gain` dB.
  func project(gain: Double) -> Project {
    Project(
      sampleRate: 48_000, channels: 2,
      sources: [
        Source(
          id: Source.ID(1), path: "/noise", contentHash: "n", sampleRate: 48_000, channels: 1,
          frameCount: 48_000)
      ],
      tracks: [
        Track(
          id: Track.ID(1), name: "A",
          clips: [
            Clip(
              id: Clip.ID(1), source: Source.ID(1), timelineStart: 0,
              sourceRange: FrameRange(start: 0, count: 48_000), gain: Gain(decibels: gain))
          ])
      ])
  }

  /// Offering the snapshot already playing (a checkout of it, an edit and its undo seen in one
  /// look) makes no swap, so none is reported; another version does, and so does new content
  /// under the same version number (a coalesced commit).
  @Test func theVersionPlayingIsNotSwappedIn() throws {
    var state: UInt64 = 1
    let samples = (0..<48_000).map { _ -> Float in
      state = state &* 6_364_136_223_846_793_005 &+ 1
      return Float(Int32(truncatingIfNeeded: state >> 32)) / Float(Int32.max) * 0.5
    }
    let audio = [Source.ID(1): SourceAudio(interleaved: samples, channels: 1)]
    let player = try LivePlayer(
      LivePlayer.Configuration(
        device: DeviceRequest(name: "null"), sampleRate: 48_000, channels: 2,
        range: 0..<Int64.max, loop: true),
      compile: { project, version, sequence in
        try RenderPlan(project: project, audio: audio, version: version, sequence: sequence)
      },
      load: { _, _ in })
    try player.start(project(gain: 0), version: 1)
    // Each offer that must swap is waited for: only the newest offer is compiled, so an edit
    // still waiting when the next offer came was replaced by it, and one not swapped in before
    // the stop was never heard (a fixed 0.3 s, which a loaded machine can overrun, was all the
    // test gave them). The other offers get the 0.3 s, in which a wrong swap would show.
    try Self.waitForSwaps(player, after: 0, version: 1)
    player.offer(project(gain: 0), version: 1, cause: "checkout")
    Thread.sleep(forTimeInterval: 0.3)
    var swaps = player.status.swaps
    player.offer(project(gain: -6), version: 2, cause: "edit")
    try Self.waitForSwaps(player, after: swaps, version: 2)
    player.offer(project(gain: -6), version: 2, cause: "checkout")
    Thread.sleep(forTimeInterval: 0.3)
    // A coalesced commit rewrites version 2 in place (a fader drag): it is heard.
    swaps = player.status.swaps
    player.offer(project(gain: -9), version: 2, cause: "edit")
    try Self.waitForSwaps(player, after: swaps, version: 2)
    player.stop()
    let report = player.wait()
    #expect(report.swaps.map(\.event.version) == [1, 2, 2])
    #expect(report.swaps.map(\.cause) == [nil, "edit", "edit"])
  }

  /// Waits until the player has made more than `count` swaps and plays `version`; throws after
  /// a minute.
  static func waitForSwaps(_ player: LivePlayer, after count: Int, version: Int64) throws {
    let deadline = Date().addingTimeInterval(60)
    while player.status.swaps <= count || player.status.version != version {
      try #require(Date() < deadline, "no swap to version \(version) in a minute")
      Thread.sleep(forTimeInterval: 0.01)
    }
  }
}
