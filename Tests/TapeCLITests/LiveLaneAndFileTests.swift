import Foundation
import ReferenceRenders
import Testing

extension ProcessHeavyTests {
  /// Lanes and effect files changed from another shell while `tape play` runs on the paced JACK
  /// device (docs/alsa-testing.md), judged as the other live tests are
  /// (``judgeLiveEdits(_:device:captured:render:settled:minimumCompared:swaps:changes:said:report:attempt:allocations:)``):
  /// no click, no allocation on the audio thread, and the capture equal to the render of the
  /// last version once it has settled.
  @Suite("Lanes and files heard live", .timeLimit(.minutes(10)))
  struct LiveLaneAndFileTests {
    /// Renders the last version of `file`, ends `play` and judges its capture against that
    /// render from `settledAfter` frames after the last swap (a second at most, and never
    /// into the clip's fade-out); returns whether it was judged (false: try again) and the
    /// render and the capture.
    static func judge(
      _ name: String, _ file: String, in space: Workspace, device: PacedDevice, play: PacedPlay,
      changes: Int, settledAfter: Int, attempt: Int, alignWithin: Int = 0
    ) throws -> (Bool, render: [Float], captured: [Float]) {
      let last = space.path("last.wav")
      try space.tape("render", file, "-o", last, "--bits", "32f", "--tail", "0")
      let render = try ReferenceRender.decode(last)
      let (report, swaps, said) = try play.finish()
      let captured = try device.recorded()
      let judged = try judgeLiveEdits(
        name, device: device, captured: captured, render: render,
        settled: { ($0 + settledAfter, min($0 + settledAfter + 48_000, 9 * 48_000 - 4_800)) },
        minimumCompared: 24_000, swaps: swaps, changes: changes, said: said, report: report,
        attempt: attempt, allocations: play.allocations, alignWithin: alignWithin)
      return (judged, render, captured)
    }

    /// While a 100 Hz sine plays to the master and, through send n1, into the Aux bus, `tape
    /// send envelope` gives the send a lane (−6 dB: the level playing glides to it), moves it,
    /// `tape track envelope --pan` gives the bus a pan lane (hard left: its right channel
    /// goes), moves it, and both lanes are cleared: each comes and goes by a glide.
    @Test func sendAndBusLanesComeAndGoWithoutAClick() throws {
      for attempt in 1...2 {
        let space = try Workspace()
        let file = try liveEditProject(in: space)
        try space.tape("track", "add", file, "Aux")
        try space.tape("send", "add", file, "t1", "t2")
        let device = try PacedDevice(period: PacedDevice.judgingPeriod)
        let play = try device.startPlay(file, in: space, recording: 11)
        let changes: [[String]] = [
          ["send", "envelope", file, "n1", "--set", "0s:-6,9s:-6"],
          ["send", "envelope", file, "n1", "--set", "0s:-6,9s:-12"],
          ["track", "envelope", file, "t2", "--pan", "--set", "0s:-1,9s:-1"],
          ["track", "envelope", file, "t2", "--pan", "--set", "0s:-1,9s:0.5"],
          ["send", "envelope", file, "n1", "--clear"],
          ["track", "envelope", file, "t2", "--pan", "--clear"],
        ]
        Thread.sleep(forTimeInterval: 1.2)
        for change in changes {
          try space.tape(change)
          Thread.sleep(forTimeInterval: 0.5)
        }
        let (judged, _, _) = try Self.judge(
          "live lanes", file, in: space, device: device, play: play, changes: changes.count,
          settledAfter: 4_800, attempt: attempt)
        if !judged { continue }
        return
      }
    }

    /// While the sine plays through x42's convolver (dual mono) with an impulse response of
    /// one tap at 1.0, `tape fx set --file` gives it one of one tap at 0.7: a fresh instance
    /// with the new file takes over from the one playing by a crossfade, without a click
    /// (handed to the running plugin, the file was swapped in from one sample to the next: a
    /// second difference of 0.21).
    @Test func anEffectFileChangedWhilePlayingIsTakenWithoutAClick() throws {
      let convolver = "http://gareus.org/oss/lv2/zeroconvolv#CfgMono"
      try Plugins.require(convolver)
      for attempt in 1...2 {
        let space = try Workspace()
        let file = try liveEditProject(in: space)
        let impulses = try [1.0, 0.7].map { (tap: Float) -> String in
          let raw = space.path("ir-\(tap).f32")
          var samples = [Float](repeating: 0, count: 64)
          samples[0] = tap
          try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
          let wav = space.path("ir-\(tap).wav")
          try ReferenceRender.run(
            "/usr/bin/sox",
            ["-t", "f32", "-r", "48000", "-c", "1", raw, "-e", "floating-point", "-b", "32", wav])
          return wav
        }
        try space.tape("fx", "add", file, "t1", convolver, "--file", "ir=\(impulses[0])")
        let device = try PacedDevice(period: PacedDevice.judgingPeriod)
        let play = try device.startPlay(file, in: space, recording: 11)
        Thread.sleep(forTimeInterval: 1.5)
        try space.tape("fx", "set", file, "f1", "--file", "ir=\(impulses[1])")
        Thread.sleep(forTimeInterval: 1)
        let (judged, render, captured) = try Self.judge(
          "live effect file", file, in: space, device: device, play: play, changes: 1,
          settledAfter: 24_000, attempt: attempt, alignWithin: 2)
        if !judged { continue }
        // The new file is heard, in the render and in what was played: the sine (0.5, −3 dB
        // in each channel at the centre) at 0.7, 5 s in.
        let expected = 0.7 * 0.5 * 0.5.squareRoot()
        let start = onset(captured) ?? 0
        let played = (5 * 48_000..<6 * 48_000).map { abs(captured[(start + $0) * 2]) }.max() ?? 0
        let rendered = (5 * 48_000..<6 * 48_000).map { abs(render[$0 * 2]) }.max() ?? 0
        #expect(abs(Double(played) - expected) < 0.002, "played peak \(played)")
        #expect(abs(Double(rendered) - expected) < 0.002, "rendered peak \(rendered)")
        return
      }
    }
  }
}
