import Foundation
import ReferenceRenders
import Testing
import Timeline
import TimelineStore

extension ProcessHeavyTests {
  /// Side chains in `tape play` on the paced JACK device (docs/alsa-testing.md).
  @Suite("Side chains heard live", .timeLimit(.minutes(10)))
  struct LiveSidechainTests {
    /// While a 100 Hz bed plays under a 200 Hz "voice" (bursts of 0.5 s every second, faded
    /// over 50 ms) with LSP's side-chain compressor on the bed, another process takes the
    /// compressor's side chain away (the bed comes back up), keys it by the voice again (the
    /// bed ducks), turns the voice down 6 dB (it ducks less) and back. The compressor keeps
    /// running through every change (its side chain ramps in and out: nothing clicks, by the
    /// second difference of the capture), the audio thread allocates and frees nothing, and
    /// once the last change has settled the capture equals the render of the last version.
    @Test func sidechainChangesWhilePlayingSettleOnTheRender() throws {
      try Plugins.require(SidechainTests.compressor)
      for attempt in 1...2 {
        let space = try Workspace()
        let file = try liveEditProject(in: space)
        let rate = 48_000
        let voice = (0..<(10 * rate)).flatMap { frame -> [Float] in
          let inside = frame % rate
          guard inside >= rate / 2 else { return [0, 0] }
          let into = inside - rate / 2
          let ramp = Float(min(1, Double(min(into, rate / 2 - 1 - into)) / Double(rate / 20)))
          let value = ramp * Float(0.3 * sin(2 * .pi * 200 * Double(frame) / Double(rate)))
          return [value, value]
        }
        let wav = space.path("voice.wav")
        try RoutingTests.writeWAV(voice, to: wav, in: space)
        try space.tape("import", file, wav)
        try space.tape("track", "add", file, "Voice")
        try space.tape("clip", "add", file, "t2", "s2", "--at", "0", "--length", "9s")
        try space.tape(
          "fx", "add", file, "t1", SidechainTests.compressor, "--sidechain", "t2", "--set",
          "sct=External", "--set", "cr=8", "--set", "al=-30dB", "--set", "at=10", "--set",
          "rt=80")
        let device = try PacedDevice(period: PacedDevice.judgingPeriod)
        // The changes are timed from the device's opening, not the launch.
        let play = try device.startPlay(file, in: space, recording: 11)
        let store = try TimelineStore.open(at: file)
        let (voiceTrack, f1) = (Track.ID(2), Effect.ID(1))
        let changes: [(String, (Project) throws -> [Command])] = [
          ("unkeyed", { p in try p.setEffect(f1, sidechain: .some(nil)) }),
          ("keyed", { p in try p.setEffect(f1, sidechain: .some(voiceTrack)) }),
          ("voice down", { p in try p.setTrack(voiceTrack, gain: Gain(decibels: -6), pan: 0) }),
          ("voice back", { p in try p.setTrack(voiceTrack, gain: .unity, pan: 0) }),
        ]
        Thread.sleep(forTimeInterval: 1.2)
        for (label, change) in changes {
          try store.commit(label: label) { project, _ in try change(project) }
          Thread.sleep(forTimeInterval: 1.1)
        }
        try store.close()
        let rendered = space.path("last.wav")
        try space.tape("render", file, "-o", rendered, "--bits", "32f")
        let render = try ReferenceRender.decode(rendered)
        let (report, swaps, said) = try play.finish()
        let captured = try device.recorded()
        let judged = try judgeLiveEdits(
          "live side chain", device: device, captured: captured, render: render,
          settled: { ($0 + 24_000, min($0 + 72_000, 9 * 48_000 - 4_800)) }, minimumCompared: 24_000,
          swaps: swaps,
          changes: changes.count, said: said, report: report, attempt: attempt,
          allocations: play.allocations)
        if !judged { continue }
        return
      }
    }
  }
}
