import Foundation
import ReferenceRenders
import Testing
import Timeline
import TimelineStore

/// Automation of effect parameters (`tape fx envelope`) against an independent model: swh's
/// Simple amplifier, whose output is its input times `10^(gain/20)` (its `DB_CO`), a constant
/// over each `run`; Tape runs it on 64-frame steps, each taking the lane's value at the step's
/// first frame. The model here computes those values from the points as typed, the plain way.
@Suite("Automation of effect parameters")
struct AutomationTests {
  static let amp = "http://plugin.org.uk/swh-plugins/amp"
  static let rate = 48_000

  /// A project with one track playing `signal` (stereo, from 0) through the amplifier, f1.
  static func ampProject(_ space: Workspace, _ signal: [Float]) throws -> String {
    let file = try RoutingTests.project(space, signals: [signal])
    try space.tape("fx", "add", file, "t1", amp)
    return file
  }

  func render(_ space: Workspace, _ file: String, _ name: String) throws -> [Float] {
    let path = space.path(name)
    try space.tape("render", file, "-o", path, "--bits", "32f", "--tail", "0")
    return try ReferenceRender.decode(path)
  }

  /// The lane's value at frame `t`: points `(seconds, value, hold)`, held before the first
  /// and after the last, linear between two unless the first of them holds.
  static func lane(_ points: [(seconds: Double, value: Double, hold: Bool)], at t: Int) -> Double {
    let frames = points.map { Int(($0.seconds * Double(rate)).rounded()) }
    guard let first = points.first, let last = points.last else { return 0 }
    if t <= frames[0] { return first.value }
    guard let next = frames.firstIndex(where: { $0 > t }) else { return last.value }
    let (a, b) = (points[next - 1], points[next])
    if a.hold { return a.value }
    let x = Double(t - frames[next - 1]) / Double(frames[next] - frames[next - 1])
    return a.value + x * (b.value - a.value)
  }

  /// The amplifier following the lane: each 64-frame step of the input times the gain of the
  /// lane's value at the step's first frame (a Float, as the port is).
  static func model(
    _ input: [Float], _ points: [(seconds: Double, value: Double, hold: Bool)], perSample: Bool
  ) -> [Float] {
    var output = input
    for frame in 0..<input.count / 2 {
      let at = perSample ? frame : frame - frame % 64
      let gain = pow(10, Double(Float(lane(points, at: at))) / 20)
      output[frame * 2] = Float(Double(input[frame * 2]) * gain)
      output[frame * 2 + 1] = Float(Double(input[frame * 2 + 1]) * gain)
    }
    return output
  }

  static let points: [(seconds: Double, value: Double, hold: Bool)] = [
    (0.2, 0, false), (0.5, -18, true), (0.7, 6, false), (0.9, -30, false),
  ]
  static let typed = "0.2s:0,0.5s:-18,0.7s:6,0.9s:-30"

  @Test func anAutomatedGainFollowsItsLaneIn64FrameStepsAsTheModelSays() throws {
    try Plugins.require(Self.amp)
    let space = try Workspace()
    let signal = RoutingTests.signal(frames: 48_000, seed: 1)
    let file = try Self.ampProject(space, signal)
    try space.tape(
      "fx", "envelope", file, "f1", "gain", "--set", Self.typed, "--shape", "linear,hold,linear")
    let ours = try render(space, file, "ours.wav")
    let model = Self.model(signal, Self.points, perSample: false)
    #expect(ours.count == signal.count)
    // The gain is a Float power in the plugin and a Double one here: a few units in the last
    // place of the output at most.
    let worst = RoutingTests.worstDBFS(ours, model)
    #expect(worst < -120, "\(worst) dBFS from the model")
    // Not the same lane read at every sample, nor the hold read as a line, nor no automation.
    #expect(RoutingTests.worstDBFS(ours, Self.model(signal, Self.points, perSample: true)) > -90)
    let linear = Self.points.map { ($0.seconds, $0.value, false) }
    #expect(RoutingTests.worstDBFS(ours, Self.model(signal, linear, perSample: false)) > -40)
    #expect(RoutingTests.worstDBFS(ours, signal) > -40)
  }

  @Test func valuesAreCheckedAgainstThePortAndStepPortsOnlyHold() throws {
    try Plugins.require(Self.amp, Plugins.eq)
    let space = try Workspace()
    let file = try Self.ampProject(space, RoutingTests.signal(frames: 4_800, seed: 2))
    let high = try space.tape(
      "fx", "envelope", file, "f1", "gain", "--set", "0s:0,1s:99", status: 65)
    #expect(high.stderr.contains("f1 gain: gain 99 is out of range; use -70 to 70"), "\(high)")
    let shape = try space.tape(
      "fx", "envelope", file, "f1", "gain", "--set", "0s:0,1s:-6", "--shape", "db", status: 65)
    #expect(shape.stderr.contains("'db' is not an automation shape; use linear or hold"))
    let port = try space.tape("fx", "envelope", file, "f1", "nope", "--set", "0s:0", status: 64)
    #expect(port.stderr.contains("has no parameter 'nope'"), "\(port)")
    // fil4's section switch is a toggle: it holds, and a line is refused.
    try space.tape("fx", "add", file, "t1", Plugins.eq)
    let line = try space.tape(
      "fx", "envelope", file, "f2", "sec1", "--set", "0s:off,1s:on", "--shape", "linear",
      status: 65)
    #expect(line.stderr.contains("f2 sec1 is a toggle port"), "\(line)")
    try space.tape("fx", "envelope", file, "f2", "sec1", "--set", "0s:off,1s:on")
    let listed = try #require(
      try parseJSON(space.tape("fx", "ls", file, "--json").stdout) as? [[String: Any]])
    let lanes = try #require(listed.last?["automation"] as? [String: [[String: Any]]])
    #expect(lanes["sec1"]?.map { $0["shape"] as? String } == ["hold", "linear"])
    #expect(lanes["sec1"]?.map { $0["value"] as? Double } == [0, 1])
  }

  /// Points are added, moved and removed as a volume envelope's; a ripple cut before them
  /// moves them with the clips; undo and redo restore each version's sound exactly.
  @Test func editsRipplesAndHistoryKeepTheLane() throws {
    try Plugins.require(Self.amp)
    let space = try Workspace()
    let file = try Self.ampProject(space, RoutingTests.signal(frames: 48_000, seed: 3))
    func frames() throws -> [Int] {
      let listed = try #require(
        try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
      let tracks = try #require(listed["tracks"] as? [[String: Any]])
      let effects = try #require(tracks.first?["effects"] as? [[String: Any]])
      let lanes = try #require(effects.first?["automation"] as? [String: [[String: Any]]])
      return lanes["gain"]?.compactMap { $0["frame"] as? Int } ?? []
    }
    let plain = try render(space, file, "plain.wav")
    try space.tape("fx", "envelope", file, "f1", "gain", "--set", "0.5s:0,0.8s:-12")
    let automated = try render(space, file, "automated.wav")
    try space.tape("fx", "envelope", file, "f1", "gain", "--add", "0.6s:-20", "--shape", "hold")
    try space.tape("fx", "envelope", file, "f1", "gain", "--move", "0.6s", "--to", "0.65s")
    #expect(try frames() == [24_000, 31_200, 38_400])
    try space.tape("fx", "envelope", file, "f1", "gain", "--remove", "0.65s")
    #expect(try frames() == [24_000, 38_400])
    try space.tape("cut", file, "--from", "0.1s", "--to", "0.2s", "--ripple")
    #expect(try frames() == [19_200, 33_600])
    try space.tape("undo", file)
    #expect(try frames() == [24_000, 38_400])
    #expect(try render(space, file, "undone.wav") == automated)
    try space.tape("fx", "envelope", file, "f1", "gain", "--clear")
    #expect(try render(space, file, "cleared.wav") == plain)
    try space.tape("undo", file)
    #expect(try render(space, file, "back.wav") == automated)
    try space.tape("redo", file)
    #expect(try render(space, file, "redone.wav") == plain)
    #expect(automated != plain)
    let log = try space.tape("log", file, "f1").stdout
    #expect(log.contains("automation \"gain=24000:0.0;38400:-12.0\" → none"), "\(log)")
    let diff = try space.tape("diff", file, "5", "6").stdout
    #expect(diff.contains("f1 gain automation 0:00.500 0 → 0:00.800 -12"), "\(diff)")
  }
}

extension ProcessHeavyTests {
  /// Automation in `tape play` on the paced JACK device (docs/alsa-testing.md).
  @Suite("Automation heard live", .timeLimit(.minutes(10)))
  struct LiveAutomationTests {
    /// A lane given by `TIME:VALUE` points (plain seconds and numbers).
    static func lane(_ text: String) throws -> ParameterEnvelope {
      try ParameterEnvelope(parsing: text, shapes: nil, sampleRate: 48_000) {
        (value: String) throws(TimelineError) -> Double in
        guard let number = Double(value) else { throw .invalidAutomation(value) }
        return number
      }
    }

    /// While a 100 Hz sine plays through swh's amplifier (which applies a constant gain per
    /// 64-frame step, no smoothing of its own), another process automates its gain (a slow
    /// line that starts 0.4 dB off where the gain is), changes the lane under the playhead
    /// (0.5 dB) and moves a point ahead of it. Each new lane glides in from the value the port
    /// had (a 0.4 dB step at half scale would show as a second difference of 0.02; the limit is
    /// 0.003), the audio thread allocates and frees nothing, and once the last change has
    /// settled the capture equals the render of the last version.
    @Test func automationEditsWhilePlayingGlideAndSettleOnTheRender() throws {
      try Plugins.require(AutomationTests.amp)
      for attempt in 1...2 {
        let space = try Workspace()
        let file = try liveEditProject(in: space)
        try space.tape("fx", "add", file, "t1", AutomationTests.amp)
        let device = try PacedDevice(period: PacedDevice.judgingPeriod)
        // The changes are timed from the device's opening, not the launch.
        let play = try device.startPlay(file, in: space, recording: 11)
        let store = try TimelineStore.open(at: file)
        let f1 = Effect.ID(1)
        let changes: [(String, (Project) throws -> [Command])] = [
          ("line", { p in try p.setAutomation(f1, "gain", Self.lane("0s:0,8s:-2")) }),
          (
            "under the playhead",
            { p in try p.setAutomation(f1, "gain", Self.lane("0s:-0.5,8s:-2.5")) }
          ),
          ("ahead", { p in try p.setAutomation(f1, "gain", Self.lane("0s:-0.5,7s:-2.5")) }),
        ]
        Thread.sleep(forTimeInterval: 1.5)
        for (label, change) in changes {
          try store.commit(label: label) { project, _ in try change(project) }
          Thread.sleep(forTimeInterval: 0.8)
        }
        try store.close()
        let final = space.path("final.wav")
        try space.tape("render", file, "-o", final, "--bits", "32f")
        let render = try ReferenceRender.decode(final)
        let (report, swaps, said) = try play.finish()
        let captured = try device.recorded()
        let judged = try judgeLiveEdits(
          "live automation", device: device, captured: captured, render: render,
          settled: { ($0 + 4_800, (8 * 48_000 + 24_000)) }, minimumCompared: 24_000, swaps: swaps,
          changes: changes.count, said: said, report: report, attempt: attempt,
          allocations: play.allocations)
        if !judged { continue }
        // The lane was heard (the capture is the render): past 7 s the mono sine (0.5, -3 dB
        // in each channel at the centre) plays at -2.5 dB.
        let peak = (7 * 48_000 + 4_800..<8 * 48_000).map { abs(render[$0 * 2]) }.max() ?? 0
        let expected = 0.5 * 0.5.squareRoot() * pow(10, -2.5 / 20)
        #expect(abs(Double(peak) - expected) < 0.002, "peak \(peak)")
        return
      }
    }
  }
}
