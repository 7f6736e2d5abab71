import Foundation
import ReferenceRenders
import Testing
import Timeline
import TimelineStore

extension ProcessHeavyTests {
  /// Routing in `tape play` on the paced JACK device (docs/alsa-testing.md).
  @Suite("Routing heard live", .timeLimit(.minutes(10)))
  struct LiveRoutingTests {
    /// While a 100 Hz sine plays, another process routes its track into a bus (5 dB down, so
    /// that a jump would be heard: it crossfades), adds a send to an aux track, changes the
    /// send's gain, the bus's gain and pan and the track's, gives the track a pan lane holding
    /// its pan (and later takes it away), makes the send pre-fader (its old
    /// tap ramps out as the new ramps in), removes it (it ramps out) and routes the track back
    /// to the master (a crossfade between destinations). Nothing clicks (the second difference
    /// of the capture), the audio thread allocates and frees nothing, and once the last change
    /// has settled the capture equals the render of the last version (which sounds as the
    /// first: the track straight to the master).
    @Test func routingChangesWhilePlayingNeverClickAndSettleOnTheRender() throws {
      for attempt in 1...2 {
        let space = try Workspace()
        let file = try liveEditProject(in: space)
        // The bus 5 dB down: routing into it is heard, and must crossfade, not jump.
        try space.tape("track", "add", file, "Bus", "--gain", "-5")
        try space.tape("track", "add", file, "Aux")
        let first = space.path("first.wav")
        try space.tape("render", file, "-o", first, "--bits", "32f")
        let render = try ReferenceRender.decode(first)
        let device = try PacedDevice(period: PacedDevice.judgingPeriod)
        // The changes are timed from the device's opening, not the launch: each must come
        // after the first plan, and the last settle before the clip ends.
        let play = try device.startPlay(file, in: space, recording: 11)
        let store = try TimelineStore.open(at: file)
        let (t1, bus, aux) = (Track.ID(1), Track.ID(2), Track.ID(3))
        let changes: [(String, (Project, inout IDAllocator) throws -> [Command])] = [
          ("into the bus", { p, _ in try p.routeOutput(of: t1, to: bus) }),
          (
            "send",
            { p, ids in
              try p.settingSend(
                Send(id: ids.newSendID(), from: t1, to: aux, gain: Gain(decibels: -6)))
            }
          ),
          (
            "send gain",
            { p, _ in
              var send = try #require(p.send(Send.ID(1)))
              send.gain = Gain(decibels: -12)
              return try p.settingSend(send)
            }
          ),
          ("bus gain", { p, _ in try p.setTrack(bus, gain: Gain(decibels: -4), pan: 0.3) }),
          // The track's own fader and pan: its pre- and post-fader taps now differ.
          ("track gain", { p, _ in try p.setTrack(t1, gain: Gain(decibels: -6), pan: -0.4) }),
          // A pan lane holding the pan the track has: heard the same, but the mono clip's
          // pan is now evaluated frame by frame on the audio thread (which must not allocate).
          (
            "pan lane",
            { p, _ in
              try p.setPanEnvelope(
                t1, ProcessHeavyTests.LiveAutomationTests.lane("0s:-0.4,9s:-0.4"))
            }
          ),
          (
            "pre-fader",
            { p, _ in
              var send = try #require(p.send(Send.ID(1)))
              send.isPreFader = true
              return try p.settingSend(send)
            }
          ),
          ("send removed", { _, _ in [.removeSends([Send.ID(1)])] }),
          ("back", { p, _ in try p.routeOutput(of: t1, to: nil) }),
          ("pan lane off", { p, _ in try p.setPanEnvelope(t1, nil) }),
          ("bus back", { p, _ in try p.setTrack(bus, gain: Gain(decibels: -5), pan: 0) }),
          ("track back", { p, _ in try p.setTrack(t1, gain: .unity, pan: 0) }),
        ]
        Thread.sleep(forTimeInterval: 1.2)
        for (label, change) in changes {
          try store.commit(label: label) { project, ids in try change(project, &ids) }
          Thread.sleep(forTimeInterval: 0.5)
        }
        try store.close()
        let (report, swaps, said) = try play.finish()
        let captured = try device.recorded()
        let judged = try judgeLiveEdits(
          "live routing", device: device, captured: captured, render: render,
          settled: { ($0 + 4_800, min($0 + 48_000, 9 * 48_000 - 4_800)) }, minimumCompared: 24_000,
          swaps: swaps,
          changes: changes.count, said: said, report: report, attempt: attempt,
          allocations: play.allocations)
        if !judged { continue }
        return
      }
    }
  }
}
