import Foundation
import ReferenceRenders
import Testing

/// Pan automation (`tape track envelope --pan`) and sends' envelopes (`tape send envelope`)
/// against independent models: the pan laws written here from their definitions (θ = (pan +
/// 1)·π/4; constant power `cos θ, sin θ` for a mono clip, a balance `min(1, √2·cos θ), min(1,
/// √2·sin θ)` for a stereo one), evaluated at every frame of a lane computed from the points as
/// typed; a send's gain as `10^(dB/20)` of a line in dB.
@Suite("Pan and send automation")
struct PanSendAutomationTests {
  static let rate = 48_000

  func render(_ space: Workspace, _ file: String, _ name: String) throws -> [Float] {
    let path = space.path(name)
    try space.tape("render", file, "-o", path, "--bits", "32f", "--tail", "0")
    return try ReferenceRender.decode(path)
  }

  /// A value running linearly from `a` at frame `from` to `b` at frame `to`, held outside.
  static func line(_ a: Double, _ b: Double, from: Int, to: Int, at t: Int) -> Double {
    if t <= from { return a }
    if t >= to { return b }
    return a + Double(t - from) / Double(to - from) * (b - a)
  }

  /// A sine of `frequency` Hz at amplitude 0.5, `frames` long.
  static func sine(frames: Int, frequency: Double) -> [Float] {
    (0..<frames).map { Float(0.5 * sin(2 * .pi * frequency * Double($0) / Double(rate))) }
  }

  /// A project with one track playing the mono `signal` from 0.
  static func monoProject(_ space: Workspace, _ signal: [Float]) throws -> String {
    let file = space.path("mono.tape")
    try space.tape("new", file)
    let wav = space.path("mono.wav")
    try RoutingTests.writeWAV(signal, channels: 1, to: wav, in: space)
    try space.tape("import", file, wav)
    try space.tape("track", "add", file, "a")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0")
    return file
  }

  /// A mono sine panned from hard left to hard right over 2 s follows the constant-power law
  /// at every frame; undo gives the static pan's render back and redo the lane's.
  @Test func aPanLaneSweepsAMonoClipAtConstantPowerFrameByFrame() throws {
    let space = try Workspace()
    let signal = Self.sine(frames: 3 * Self.rate, frequency: 440)
    let file = try Self.monoProject(space, signal)
    try space.tape("track", "set", file, "t1", "--pan", "0.5")
    let still = try render(space, file, "still.wav")
    try space.tape("track", "envelope", file, "t1", "--pan", "--set", "0s:-1,2s:1")
    let ours = try render(space, file, "ours.wav")
    var model = [Float](repeating: 0, count: signal.count * 2)
    for t in signal.indices {
      let theta = (Self.line(-1, 1, from: 0, to: 2 * Self.rate, at: t) + 1) * .pi / 4
      model[2 * t] = Float(Double(signal[t]) * cos(theta))
      model[2 * t + 1] = Float(Double(signal[t]) * sin(theta))
    }
    #expect(ours.count == model.count)
    let worst = RoutingTests.worstDBFS(ours, model)
    #expect(worst < -120, "\(worst) dBFS from the model")
    // At the start all left, at 1 s both sides at -3 dB, from 2 s all right.
    #expect(ours[1] == 0 && ours[2 * 2 * Self.rate] == 0)
    #expect(abs(ours[2 * Self.rate] - ours[2 * Self.rate + 1]) < 1e-6)
    // The static pan no longer applies while the lane has points.
    #expect(RoutingTests.worstDBFS(ours, still) > -20)
    try space.tape("undo", file)
    #expect(try render(space, file, "undone.wav") == still)
    try space.tape("redo", file)
    #expect(try render(space, file, "redone.wav") == ours)
    try space.tape("track", "envelope", file, "t1", "--pan", "--clear")
    #expect(try render(space, file, "cleared.wav") == still)
  }

  /// A stereo clip is balanced by the lane (held segments too), with effects on the track (the
  /// chains' path) as without.
  @Test func aPanLaneBalancesAStereoClipWithAndWithoutEffects() throws {
    let space = try Workspace()
    let signal = RoutingTests.signal(frames: Self.rate, seed: 4)
    let file = try RoutingTests.project(space, signals: [signal])
    try space.tape(
      "track", "envelope", file, "t1", "--pan", "--set", "0.1s:0,0.4s:-0.5,0.7s:1",
      "--shape", "hold,linear")
    var model = signal
    for t in 0..<Self.rate {
      let pan =
        t < Int(0.4 * Double(Self.rate))
        ? 0 : Self.line(-0.5, 1, from: 19_200, to: 33_600, at: t)
      let (left, right) = RoutingTests.balance(pan)
      model[2 * t] = Float(Double(signal[2 * t]) * left)
      model[2 * t + 1] = Float(Double(signal[2 * t + 1]) * right)
    }
    let plain = try render(space, file, "plain.wav")
    let worst = RoutingTests.worstDBFS(plain, model)
    #expect(worst < -120, "\(worst) dBFS from the model")
    try Plugins.require(AutomationTests.amp)
    try space.tape("fx", "add", file, "t1", AutomationTests.amp)
    let chained = try render(space, file, "chained.wav")
    #expect(RoutingTests.worstDBFS(chained, model) < -120)
  }

  /// A bus's pan lane balances what the bus receives (another track's output), frame by frame.
  @Test func aBusPanLaneBalancesWhatItReceives() throws {
    let space = try Workspace()
    let signal = RoutingTests.signal(frames: Self.rate, seed: 7)
    let file = try RoutingTests.project(space, signals: [signal, [Float](repeating: 0, count: 2)])
    try space.tape("track", "set", file, "t1", "--output", "t2")
    try space.tape("track", "envelope", file, "t2", "--pan", "--set", "0.25s:1,0.75s:-1")
    let ours = try render(space, file, "bus.wav")
    var model = signal
    for t in 0..<Self.rate {
      let (left, right) = RoutingTests.balance(Self.line(1, -1, from: 12_000, to: 36_000, at: t))
      model[2 * t] = Float(Double(signal[2 * t]) * left)
      model[2 * t + 1] = Float(Double(signal[2 * t + 1]) * right)
    }
    #expect(ours.count == model.count)
    let worst = RoutingTests.worstDBFS(ours, model)
    #expect(worst < -120, "\(worst) dBFS from the model")
  }

  /// A send's envelope shapes what it delivers (in dB, a line between points), beside the
  /// track's own sound at the master; undo and redo give each version's sound back.
  @Test func aSendEnvelopeShapesWhatTheSendDelivers() throws {
    let space = try Workspace()
    let signal = RoutingTests.signal(frames: Self.rate, seed: 5)
    let file = try RoutingTests.project(space, signals: [signal, [Float](repeating: 0, count: 2)])
    let added = try space.tape("send", "add", file, "t1", "t2", "--gain", "-6")
    #expect(added.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "n1")
    let plain = try render(space, file, "plain.wav")
    try space.tape("send", "envelope", file, "n1", "--set", "0.2s:-20dB,0.8s:0dB")
    let ours = try render(space, file, "ours.wav")
    var model = [Float](repeating: 0, count: ours.count)
    for t in 0..<Self.rate {
      let decibels = -6 + Self.line(-20, 0, from: 9_600, to: 38_400, at: t)
      let send = pow(10, decibels / 20)
      for channel in 0..<2 {
        model[2 * t + channel] = Float(Double(signal[2 * t + channel]) * (1 + send))
      }
    }
    #expect(ours.count >= 2 * Self.rate)
    let worst = RoutingTests.worstDBFS(ours, model)
    #expect(worst < -120, "\(worst) dBFS from the model")
    #expect(RoutingTests.worstDBFS(ours, plain) > -40)
    try space.tape("undo", file)
    #expect(try render(space, file, "undone.wav") == plain)
    try space.tape("redo", file)
    #expect(try render(space, file, "redone.wav") == ours)
  }

  /// Points are edited as a volume envelope's; a ripple cut moves both lanes with the clips;
  /// ls, ls --json, diff and log show them; bad input is one line and changes nothing.
  @Test func editsRipplesListingsAndRefusals() throws {
    let space = try Workspace()
    let signal = RoutingTests.signal(frames: Self.rate, seed: 6)
    let file = try RoutingTests.project(space, signals: [signal, [Float](repeating: 0, count: 2)])
    try space.tape("send", "add", file, "t1", "t2")
    try space.tape("track", "envelope", file, "t1", "--pan", "--set", "0.5s:-1,0.8s:0.5")
    try space.tape("track", "envelope", file, "t1", "--pan", "--add", "0.6s:0", "--shape", "hold")
    try space.tape("track", "envelope", file, "t1", "--pan", "--move", "0.6s", "--to", "0.65s")
    try space.tape("track", "envelope", file, "t1", "--pan", "--remove", "0.65s")
    try space.tape("send", "envelope", file, "n1", "--set", "0.5s:0dB,0.8s:-12dB")
    func lanes() throws -> (pan: [Int], send: [Int]) {
      let listed = try #require(
        try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
      let tracks = try #require(listed["tracks"] as? [[String: Any]])
      let pan = try #require(tracks.first?["panAutomation"] as? [[String: Any]])
      let sends = try #require(listed["sends"] as? [[String: Any]])
      let send = try #require(sends.first?["envelope"] as? [[String: Any]])
      return (pan.compactMap { $0["frame"] as? Int }, send.compactMap { $0["frame"] as? Int })
    }
    #expect(try lanes() == ([24_000, 38_400], [24_000, 38_400]))
    let before = try space.tape("ls", file, "--json").stdout
    let range = try space.tape(
      "track", "envelope", file, "t1", "--pan", "--set", "0s:0,1s:1.5", status: 65)
    #expect(range.stderr.split(separator: "\n").count == 1, "\(range)")
    #expect(range.stderr.contains("pan 1.5 is outside -1…1"), "\(range)")
    let unknown = try space.tape("send", "envelope", file, "n9", "--set", "0s:0dB", status: 65)
    #expect(unknown.stderr.split(separator: "\n").count == 1, "\(unknown)")
    #expect(unknown.stderr.contains("n9"), "\(unknown)")
    let shape = try space.tape(
      "track", "envelope", file, "t1", "--pan", "--set", "0s:0,1s:1", "--shape", "db", status: 65)
    #expect(shape.stderr.contains("'db' is not an automation shape"), "\(shape)")
    #expect(try space.tape("ls", file, "--json").stdout == before)
    try space.tape("cut", file, "--from", "0.1s", "--to", "0.2s", "--ripple")
    #expect(try lanes() == ([19_200, 33_600], [19_200, 33_600]))
    try space.tape("undo", file)
    #expect(try lanes() == ([24_000, 38_400], [24_000, 38_400]))
    let listing = try space.tape("ls", file).stdout
    #expect(listing.contains("  pan automation 0:00.500 -1 → 0:00.800 0.5"), "\(listing)")
    #expect(listing.contains("    envelope 0:00.500 0 dB → 0:00.800 -12 dB"), "\(listing)")
    let diff = try space.tape("diff", file, "HEAD~5", "HEAD~4").stdout
    #expect(diff.contains("t1 pan automation 0:00.500 -1 → 0:00.800 0.5"), "\(diff)")
    let sendDiff = try space.tape("diff", file, "HEAD~1", "HEAD").stdout
    #expect(
      sendDiff.contains("n1 (t1 → t2) envelope 0:00.500 0 dB → 0:00.800 -12 dB"), "\(sendDiff)")
    let log = try space.tape("log", file, "t1").stdout
    #expect(log.contains("pan automation"), "\(log)")
    let sendLog = try space.tape("log", file, "n1").stdout
    #expect(sendLog.contains("envelope"), "\(sendLog)")
    // A send that comes back (by undo) comes back with its envelope, and the words say so,
    // as the JSON does.
    try space.tape("send", "rm", file, "n1")
    let removal = try #require(
      try space.tape("log", file).stdout.firstMatch(of: /^v(\d+)/).flatMap { Int($0.1) })
    let undone = try space.tape("undo", file)
    let said = undone.stdout + undone.stderr
    let envelope = "envelope 0:00.500 0 dB → 0:00.800 -12 dB"
    #expect(said.contains("n1 added: t1 → t2") && said.contains(envelope), "\(said)")
    let returned = try space.tape("diff", file, "\(removal)", "HEAD").stdout
    #expect(returned.contains("n1 added: t1 → t2") && returned.contains(envelope), "\(returned)")
  }
}
