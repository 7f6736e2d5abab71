import Foundation
import ReferenceRenders
import Testing

/// Buses and sends against independent references (lv2file, a model in the test): a bus's
/// effect runs on the sum of what it receives, a send into a delay is the delay run on the
/// send's signal, pre- and post-fader taps differ exactly as the model says, solo keeps the
/// buses a soloed track feeds, loops are refused, latency lines up over the whole graph, and
/// history restores the sound of each version.
@Suite("Buses and sends")
struct RoutingTests {
  static let rate = 48_000
  static let delay = "http://gareus.org/oss/lv2/nodelay"

  /// `frames` frames of a stereo test signal: two sines and a decaying click train, distinct
  /// per `seed`, well under full scale.
  static func signal(frames: Int, seed: Int) -> [Float] {
    var samples = [Float](repeating: 0, count: frames * 2)
    for frame in 0..<frames {
      let t = Double(frame) / Double(rate)
      let left = 0.3 * sin(2 * .pi * Double(220 + 37 * seed) * t)
      let right = 0.25 * sin(2 * .pi * Double(331 + 53 * seed) * t + 0.4)
      let click = frame % (4_800 + 700 * seed) == 0 ? 0.2 : 0
      samples[frame * 2] = Float(left + click)
      samples[frame * 2 + 1] = Float(right - click)
    }
    return samples
  }

  /// Writes interleaved `samples` (`channels` of them) as a 32-bit float WAV at 48 kHz.
  static func writeWAV(
    _ samples: [Float], channels: Int = 2, to path: String, in space: Workspace
  ) throws {
    let raw = path + ".f32"
    try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
    try ReferenceRender.run(
      "/usr/bin/sox",
      ["-t", "f32", "-r", "48000", "-c", "\(channels)", raw, "-e", "floating-point", path])
  }

  static func decibels(_ value: Double) -> Double { pow(10, value / 20) }

  /// The stereo balance law (``PanLaw``'s `stereoSource`).
  static func balance(_ pan: Double) -> (Double, Double) {
    let theta = (pan + 1) * .pi / 4
    return (min(1, 2.0.squareRoot() * cos(theta)), min(1, 2.0.squareRoot() * sin(theta)))
  }

  static func worstDBFS(_ a: [Float], _ b: [Float]) -> Double {
    let worst = zip(a, b).map { abs(Double($0) - Double($1)) }.max() ?? 0
    return worst == 0 ? -.infinity : 20 * log10(worst)
  }

  /// A project with a track per signal (clips from 0), the tracks named a, b, …
  static func project(_ space: Workspace, signals: [[Float]]) throws -> String {
    let file = space.path("routing.tape")
    try space.tape("new", file)
    for (index, signal) in signals.enumerated() {
      let wav = space.path("signal\(index).wav")
      try writeWAV(signal, to: wav, in: space)
      try space.tape("import", file, wav)
      try space.tape("track", "add", file, String(UnicodeScalar(UInt8(97 + index))))
      try space.tape("clip", "add", file, "t\(index + 1)", "s\(index + 1)", "--at", "0")
    }
    return file
  }

  /// The render up to the last clip's end (`--tail 0`): lv2file and the models here stop with
  /// their input; effects ringing on past it are RenderTailTests' to check.
  func render(_ space: Workspace, _ file: String, _ name: String) throws -> [Float] {
    let path = space.path(name)
    try space.tape("render", file, "-o", path, "--bits", "32f", "--tail", "0")
    return try ReferenceRender.decode(path)
  }

  /// Two tracks into a bus (gain −2 dB, an EQ): the bus's EQ runs on the sum of what it
  /// receives at the bus's gain, as lv2file runs it on that sum made by the test.
  @Test func aBusRunsItsEffectOnTheSumOfItsInputs() throws {
    try Plugins.require(Plugins.eq)
    let space = try Workspace()
    let frames = 48_000
    let (a, b) = (Self.signal(frames: frames, seed: 1), Self.signal(frames: frames, seed: 2))
    let file = try Self.project(space, signals: [a, b])
    try space.tape("track", "add", file, "bus")
    try space.tape("track", "set", file, "a", "--gain", "-3", "--pan", "0.3", "--output", "bus")
    try space.tape("track", "set", file, "t2", "--output", "t3")
    try space.tape("track", "set", file, "bus", "--gain", "-2")
    let eq = ["sec1=on", "freq1=400", "gain1=-9", "q1=0.5", "LSsec=on", "LSgain=4"]
    try space.tape(["fx", "add", file, "t3", Plugins.eq] + eq.flatMap { ["--set", $0] })
    let ours = try render(space, file, "ours.wav")
    // The model: a at −3 dB balanced to 0.3, plus b, all at −2 dB; then the EQ by lv2file.
    let pan = Self.balance(0.3)
    var sum = [Float](repeating: 0, count: frames * 2)
    for frame in 0..<frames {
      let (l, r) = (frame * 2, frame * 2 + 1)
      sum[l] = Float(
        (Double(a[l]) * Self.decibels(-3) * pan.0 + Double(b[l])) * Self.decibels(-2))
      sum[r] = Float(
        (Double(a[r]) * Self.decibels(-3) * pan.1 + Double(b[r])) * Self.decibels(-2))
    }
    let input = space.path("sum.wav")
    try Self.writeWAV(sum, to: input, in: space)
    let theirs = space.path("theirs.wav")
    try ReferenceRender.run(
      "/usr/bin/lv2file",
      ["-i", input, "-o", theirs, "--ignore-clipping", "-b", "64"]
        + eq.map { $0.replacingOccurrences(of: "=on", with: "=1") }
        .flatMap { ["-p", $0.replacingOccurrences(of: "=", with: ":")] } + [Plugins.eq])
    let reference = try ReferenceRender.decode(theirs)
    #expect(ours.count == frames * 2)
    // Tape's sum is made in single precision, the test's in double: the EQ's input differs by
    // a unit in the last place, which its filters carry to about −92 dBFS (the same project
    // without the EQ matches the model to −139 dBFS).
    #expect(Self.worstDBFS(ours, reference) < -85, "\(Self.worstDBFS(ours, reference)) dBFS")
    // Not the sum without the bus's gain or EQ.
    #expect(Self.worstDBFS(ours, sum) > -40)
  }

  /// A post-fader send (−6 dB) from a track (−4 dB) into a track holding a delay line: the
  /// mix is the dry track plus what lv2file makes of the send's signal through the same delay.
  @Test func aSendIntoADelayIsTheDelayOnTheSendSignal() throws {
    try Plugins.require(Self.delay)
    let space = try Workspace()
    let frames = 48_000
    let a = Self.signal(frames: frames, seed: 3)
    let file = try Self.project(space, signals: [a])
    try space.tape("track", "add", file, "echo")
    try space.tape("track", "set", file, "a", "--gain", "-4")
    #expect(try space.tape("send", "add", file, "a", "echo", "--gain", "-6").stdout == "n1\n")
    try space.tape(
      "fx", "add", file, "echo", Self.delay, "--set", "delay=2400", "--set", "report_latency=0")
    let ours = try render(space, file, "ours.wav")
    let sent = a.map { Float(Double($0) * Self.decibels(-4) * Self.decibels(-6)) }
    let input = space.path("sent.wav")
    try Self.writeWAV(sent, to: input, in: space)
    // lv2file runs a mono plugin on one channel only: each channel on its own.
    var channels: [[Float]] = []
    for channel in 1...2 {
      let part = space.path("sent\(channel).wav")
      try ReferenceRender.run(
        "/usr/bin/sox", [input, "-e", "floating-point", part, "remix", "\(channel)"])
      let delayed = space.path("delayed\(channel).wav")
      try ReferenceRender.run(
        "/usr/bin/lv2file",
        [
          "-i", part, "-o", delayed, "--ignore-clipping", "-b", "64", "-p", "delay:2400", "-p",
          "report_latency:0", Self.delay,
        ])
      channels.append(try ReferenceRender.decode(delayed))
    }
    let echo = zip(channels[0], channels[1]).flatMap { [$0, $1] }
    let model = zip(a, echo).map { Float(Double($0) * Self.decibels(-4) + Double($1)) }
    // x42's delay line glides to its setting from where its instance starts, and Tape's
    // instance ran a block of silence to learn its latency before the render (a fresh
    // lv2file instance did not): the two agree from frame 96 on. Compared from 0.1 s.
    let (settled, expected) = (Array(ours.dropFirst(9_600)), Array(model.dropFirst(9_600)))
    #expect(ours.count == model.count)
    #expect(Self.worstDBFS(settled, expected) < -110, "\(Self.worstDBFS(settled, expected)) dBFS")
    // The echo is there: 2,400 frames after the source's first click.
    #expect(abs(echo[2_400 * 2]) > 0.05, "\(echo[2_400 * 2])")
  }

  /// A mono clip on a track at −6 dB panned −0.5, sent at −3 dB (balance 0.2) into a track
  /// heard alone (its own output goes to a muted bus): post-fader the send carries the
  /// track's gain and constant-power pan, pre-fader only the clip at the centre.
  @Test func preAndPostFaderSendsDifferAsTheModelSays() throws {
    let space = try Workspace()
    let file = space.path("taps.tape")
    try space.tape("new", file)
    try space.tape("import", file, try space.copyTestAudio("front-center-mono-48k-16.wav"))
    for name in ["voice", "aux", "silent"] { try space.tape("track", "add", file, name) }
    try space.tape("clip", "add", file, "voice", "s1", "--at", "0")
    try space.tape("track", "set", file, "voice", "--gain", "-6", "--pan", "-0.5")
    try space.tape("track", "set", file, "voice", "--output", "silent")
    try space.tape("track", "set", file, "silent", "--mute")
    try space.tape("send", "add", file, "voice", "aux", "--gain", "-3", "--pan", "0.2")
    let post = try render(space, file, "post.wav")
    try space.tape("send", "set", file, "n1", "--pre-fader")
    let pre = try render(space, file, "pre.wav")
    let mono = try ReferenceRender.decode(TestAudio.path("front-center-mono-48k-16.wav"))
    let source = mono.map { Double($0) }
    let send = Self.balance(0.2)
    let panned = (cos(0.25 * .pi / 2), sin(0.25 * .pi / 2))
    func model(_ left: Double, _ right: Double) -> [Float] {
      source.flatMap {
        [
          Float($0 * left * Self.decibels(-3) * send.0),
          Float($0 * right * Self.decibels(-3) * send.1),
        ]
      }
    }
    let g = Self.decibels(-6)
    let centre = 0.5.squareRoot()
    #expect(post.count == source.count * 2)
    #expect(Self.worstDBFS(post, model(g * panned.0, g * panned.1)) < -120)
    #expect(Self.worstDBFS(pre, model(centre, centre)) < -120)
    #expect(Self.worstDBFS(pre, post) > -30)
  }

  /// Solo keeps the bus a soloed track feeds (solo-safe), silences the others; a muted bus
  /// silences what it receives.
  @Test func soloKeepsTheBusesASoloedTrackFeeds() throws {
    let space = try Workspace()
    let frames = 24_000
    let (a, b) = (Self.signal(frames: frames, seed: 1), Self.signal(frames: frames, seed: 2))
    let file = try Self.project(space, signals: [a, b])
    try space.tape("track", "add", file, "bus")
    try space.tape("track", "set", file, "a", "--output", "bus", "--solo")
    try space.tape("track", "set", file, "bus", "--gain", "-3")
    let soloed = try render(space, file, "soloed.wav")
    let model = a.map { Float(Double($0) * Self.decibels(-3)) }
    #expect(Self.worstDBFS(soloed, model) < -120)
    try space.tape("track", "set", file, "bus", "--mute")
    let muted = try render(space, file, "muted.wav")
    #expect(muted.allSatisfy { $0 == 0 })
    try space.tape("track", "set", file, "bus", "--unmute")
    try space.tape("track", "set", file, "a", "--unsolo", "--mute")
    let other = try render(space, file, "other.wav")
    #expect(Self.worstDBFS(other, b) < -120)
  }

  /// An output or a send that closes a loop is refused in one line naming it (exit 65), and
  /// the project is untouched.
  @Test func aLoopIsRefusedNamingItAndNothingChanges() throws {
    let space = try Workspace()
    let file = try Self.project(
      space, signals: [Self.signal(frames: 4_800, seed: 1), Self.signal(frames: 4_800, seed: 2)])
    try space.tape("track", "add", file, "bus")
    try space.tape("track", "set", file, "t1", "--output", "t2")
    try space.tape("track", "set", file, "t2", "--output", "bus")
    let before = try space.fingerprint("routing.tape")
    let output = try space.tape("track", "set", file, "bus", "--output", "t1", status: 65)
    #expect(
      output.stderr
        == "error: t3 → t1 → t2 → t3 is a loop: t3 would feed itself; route to a track that does not lead back to t3 (or to the master, --output master), or remove the send that closes the loop\n"
    )
    let sent = try space.tape("send", "add", file, "bus", "t2", status: 65)
    #expect(sent.stderr.hasPrefix("error: t3 → t2 → t3 is a loop"))
    #expect(try space.fingerprint("routing.tape") == before)
  }

  /// Impulses at 1 s on three tracks reach the output at exactly frame 48,000 through every
  /// path: t1 through a look-ahead limiter (64 frames of latency) into a bus with another,
  /// t2 dry and by a post-fader send into the bus, t3 dry and by a pre-fader send into it.
  /// Every path adds up in one frame; nothing anywhere else.
  @Test func latencyIsAlignedThroughBusesAndSends() throws {
    try Plugins.require(Plugins.limiter)
    let space = try Workspace()
    var impulse = [Float](repeating: 0, count: 96_000 * 2)
    impulse[48_000 * 2] = 0.25
    impulse[48_000 * 2 + 1] = 0.25
    let file = try Self.project(space, signals: [impulse, impulse, impulse])
    try space.tape("track", "add", file, "bus")
    try space.tape("fx", "add", file, "t1", Plugins.limiter, "--set", "threshold=0")
    try space.tape("fx", "add", file, "bus", Plugins.limiter, "--set", "threshold=0")
    try space.tape("track", "set", file, "t1", "--output", "bus")
    try space.tape("send", "add", file, "t2", "bus")
    try space.tape("send", "add", file, "t3", "bus", "--pre-fader")
    let mix = try render(space, file, "mix.wav")
    #expect(mix.count == 96_000 * 2)
    let loudest = mix.indices.max { abs(mix[$0]) < abs(mix[$1]) } ?? 0
    #expect(loudest / 2 == 48_000, "the impulses meet at frame \(loudest / 2)")
    #expect(abs(mix[48_000 * 2] - 1.25) < 1e-5, "\(mix[48_000 * 2])")
    let rest = mix.enumerated().filter { $0.offset / 2 != 48_000 }.map { abs($0.element) }
    #expect((rest.max() ?? 0) < 1e-5)
  }

  /// A track without effects is mixed straight into where its output and its sends go (an
  /// offline render folds its chain away), its clips moved by the delay that aligns them:
  /// its volume envelope, its pan automation and its fades must move with them. t1 (all
  /// three, and the master at −2 dB) goes to the master and, by a post-fader send at −6 dB,
  /// into a bus without effects, while a muted track behind a look-ahead limiter feeding the
  /// bus delays every path. The mix is t1 as the same project without effects, sends or
  /// routing renders it (no chains at all), times 1 + the send's gain.
  @Test func aTrackFoldedIntoItsDestinationsKeepsItsAutomationAligned() throws {
    try Plugins.require(Plugins.limiter)
    let space = try Workspace()
    let frames = 96_000
    let file = try Self.project(
      space,
      signals: [Self.signal(frames: frames, seed: 3), Self.signal(frames: frames, seed: 4)])
    try space.tape("track", "envelope", file, "a", "--set", "0.2s:0,0.9s:-12,1.5s:-3")
    try space.tape("track", "envelope", file, "a", "--pan", "--set", "0.1s:-0.8,1.7s:0.6")
    try space.tape("clip", "set", file, "c1", "--fade-in", "0.3s", "--fade-out", "0.25s")
    try space.tape("master", file, "--gain", "-2")
    let plain = try render(space, file, "plain.wav")
    try space.tape("track", "set", file, "b", "--mute")
    let before = try render(space, file, "muted.wav")
    try space.tape("track", "add", file, "bus")
    try space.tape("fx", "add", file, "b", Plugins.limiter, "--set", "threshold=0")
    try space.tape("track", "set", file, "b", "--output", "bus")
    try space.tape("send", "add", file, "a", "bus", "--gain", "-6")
    let ours = try render(space, file, "ours.wav")
    #expect(ours.count == frames * 2)
    let scale = 1 + Self.decibels(-6)
    let model = before.map { Float(Double($0) * scale) }
    let worst = Self.worstDBFS(ours, model)
    #expect(worst < -120, "\(worst) dBFS from the model")
    // The model is not silent nor the plain mix: the envelope and the mute are in it.
    #expect(Self.worstDBFS(before, plain) > -20)
    #expect((model.map(abs).max() ?? 0) > 0.1)
  }

  /// A project made by Tape before routing existed (TestAudio/project-before-routing.tape:
  /// migrations v1–v14, effects, an envelope, fades, a muted track, master gain) renders to
  /// the very bytes that Tape rendered of it then (its SHA-256 noted when it was made, by the
  /// build of the commit before routing), in 32-bit float and in dithered 16-bit; reading it
  /// writes nothing, `ls --json` shows every track going to the master and no sends; its first
  /// edit upgrades it (v15), and the upgraded project still renders the same bytes.
  @Test func aProjectMadeBeforeRoutingRendersAsItDidThen() throws {
    try Plugins.require(Plugins.eq, Plugins.limiter)
    let space = try Workspace()
    for name in [
      "project-before-routing.tape", "speech-mono-48k-16.wav", "strings-stereo-48k-float.wav",
      "noise-stereo-48k-16.flac",
    ] {
      _ = try space.copyTestAudio(name)
    }
    let file = space.path("project-before-routing.tape")
    let before = try space.fingerprint("project-before-routing.tape")
    let expected = [
      "32f": "a8f1bbf82c012a48d928bbd34a30aa5844659e072d5f72a39684b34e0921b84e",
      "16": "f5314d92d3de8a939e612bdbc9813b4cd28bf0f638a2009cc5e7958bb05e92ea",
    ]
    func sha(_ bits: String) throws -> String {
      let path = space.path("render-\(bits).wav")
      try space.tape("render", file, "-o", path, "--bits", bits)
      return try ReferenceRender.run("/usr/bin/sha256sum", [path]).split(separator: " ")
        .first.map(String.init) ?? ""
    }
    for bits in ["32f", "16"] { #expect(try sha(bits) == expected[bits], "\(bits)") }
    let listed = try #require(
      try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
    let tracks = try #require(listed["tracks"] as? [[String: Any]])
    #expect(tracks.map { $0["output"] as? String } == ["master", "master", "master", "master"])
    #expect((listed["sends"] as? [Any])?.isEmpty == true)
    #expect(try space.fingerprint("project-before-routing.tape") == before)
    try space.tape("marker", "add", file, "1s", "upgraded")
    for bits in ["32f", "16"] { #expect(try sha(bits) == expected[bits], "\(bits) upgraded") }
  }

  /// Undo, redo and checkout of routing edits render each version exactly as before.
  @Test func historyOfRoutingRestoresTheSoundExactly() throws {
    let space = try Workspace()
    let file = try Self.project(
      space,
      signals: [Self.signal(frames: 24_000, seed: 1), Self.signal(frames: 24_000, seed: 2)])
    try space.tape("track", "add", file, "bus")
    var renders = [try render(space, file, "r0.wav")]
    let edits: [[String]] = [
      ["track", "set", file, "bus", "--gain", "-5", "--pan", "0.4"],
      ["track", "set", file, "t1", "--output", "bus"],
      ["send", "add", file, "t2", "bus", "--gain", "-2", "--pre-fader"],
      ["send", "set", file, "n1", "--post-fader", "--gain", "-8"],
      ["track", "set", file, "t1", "--output", "master"],
      ["send", "rm", file, "n1"],
    ]
    for (index, edit) in edits.enumerated() {
      try space.tape(edit)
      renders.append(try render(space, file, "r\(index + 1).wav"))
      // The bus alone is silent: its gain changes nothing heard yet.
      #expect((renders[index + 1] != renders[index]) == (index > 0), "\(edit)")
    }
    // The log follows a track's output and a send through history.
    let trackLog = try space.tape("log", file, "t1").stdout
    #expect(trackLog.contains("output master → t3") && trackLog.contains("output t3 → master"))
    let sendLog = try space.tape("log", file, "n1").stdout
    #expect(sendLog.contains("n1 added: from t2, to t3") && sendLog.contains("n1 removed"))
    for index in stride(from: edits.count - 1, through: 0, by: -1) {
      try space.tape("undo", file)
      let undone = try render(space, file, "u\(index).wav")
      #expect(undone == renders[index], "undo to \(index)")
    }
    for index in 1...edits.count {
      try space.tape("redo", file)
      let redone = try render(space, file, "d\(index).wav")
      #expect(redone == renders[index], "redo to \(index)")
    }
    try space.tape("checkout", file, "HEAD~3")
    let checkedOut = try render(space, file, "c.wav")
    #expect(checkedOut == renders[3])
  }
}
