import Foundation
import ReferenceRenders
import Testing

/// Side chains against references the test makes itself: LSP's side-chain compressor ducks a
/// music bed under a voice exactly where the voice speaks (measured as the bed's own energy,
/// a single-frequency projection the voice has none of) and not without its side chain; an
/// impulse through look-ahead plugins on the source's path reaches the effect on the frame
/// the effect's own input does; loops are refused; `none` restores the sound without a side
/// chain bit for bit; history restores each version; a project of the schema before side
/// chains opens and renders as it did.
@Suite("Side chains")
struct SidechainTests {
  static let rate = 48_000
  static let compressor = "http://lsp-plug.in/plugins/lv2/sc_compressor_stereo"
  /// The bed's frequency and the voice's: far apart, so that a projection on the bed's
  /// frequency over a whole number of its periods holds none of the voice.
  static let bedHertz = 300.0
  static let voiceHertz = 1_000.0

  /// `seconds` of the bed: a steady stereo sine at −14 dBFS peak.
  static func bed(seconds: Int) -> [Float] {
    (0..<(seconds * rate)).flatMap { frame -> [Float] in
      let value = Float(0.2 * sin(2 * .pi * bedHertz * Double(frame) / Double(rate)))
      return [value, value]
    }
  }

  /// `seconds` of the voice: half a second of a 1 kHz tone at −6 dBFS (faded in and out over
  /// 10 ms) every other half second, from 0.5 s: it speaks in [0.5, 1), [1.5, 2), …
  static func voice(seconds: Int) -> [Float] {
    let half = rate / 2
    let fade = rate / 100
    return (0..<(seconds * rate)).flatMap { frame -> [Float] in
      let inside = frame % (2 * half)
      guard inside >= half else { return [0, 0] }
      let into = inside - half
      let ramp = Float(min(1, Double(min(into, half - 1 - into)) / Double(fade)))
      let value =
        ramp * Float(0.5 * sin(2 * .pi * voiceHertz * Double(frame) / Double(rate)))
      return [value, value]
    }
  }

  /// A project of the bed (t1 "music") and the voice (t2 "voice"), both from 0.
  static func podcast(_ space: Workspace, seconds: Int) throws -> String {
    let file = space.path("podcast.tape")
    try space.tape("new", file)
    for (index, (name, signal)) in [
      ("music", bed(seconds: seconds)), ("voice", voice(seconds: seconds)),
    ].enumerated() {
      let wav = space.path("\(name).wav")
      try RoutingTests.writeWAV(signal, to: wav, in: space)
      try space.tape("import", file, wav)
      try space.tape("track", "add", file, name)
      try space.tape("clip", "add", file, "t\(index + 1)", "s\(index + 1)", "--at", "0")
    }
    return file
  }

  func render(_ space: Workspace, _ file: String, _ name: String) throws -> [Float] {
    let path = space.path(name)
    try space.tape("render", file, "-o", path, "--bits", "32f", "--tail", "0")
    return try ReferenceRender.decode(path)
  }

  /// The bed's level (dBFS, of its peak) in the left channel of `mix` over
  /// `[start, start + 0.2 s)`: the projection of the signal on the bed's frequency over a
  /// whole number of its periods (60 at 300 Hz), which the 1 kHz voice adds nothing to.
  static func bedLevel(_ mix: [Float], from start: Double) -> Double {
    let first = Int(start * Double(rate))
    let count = rate / 5
    var (c, s) = (0.0, 0.0)
    for frame in first..<(first + count) {
      let phase = 2 * .pi * bedHertz * Double(frame) / Double(rate)
      c += Double(mix[frame * 2]) * cos(phase)
      s += Double(mix[frame * 2]) * sin(phase)
    }
    let amplitude = 2 * (c * c + s * s).squareRoot() / Double(count)
    return 20 * log10(max(amplitude, 1e-12))
  }

  /// The podcast's case: LSP's compressor on the music, keyed by the voice in one command.
  /// Where the voice speaks (the last 0.2 s of each burst) the bed is at least 12 dB below
  /// where it is silent (the last 0.2 s of each gap, the compressor released); where it is
  /// silent the bed is within 1.5 dB of its own level (−13.98 dBFS); the voice itself is
  /// untouched. The same compressor without `--sidechain` hears silence on its side chain
  /// and ducks nothing (every window within 0.2 dB of the bed's level).
  @Test func aSidechainCompressorDucksTheMusicUnderTheVoice() throws {
    try Plugins.require(Self.compressor)
    let space = try Workspace()
    let file = try Self.podcast(space, seconds: 4)
    let settings = ["sct=External", "cr=20", "al=-30dB", "at=5", "rt=50"]
    try space.tape(
      ["fx", "add", file, "music", Self.compressor, "--sidechain", "voice"]
        + settings.flatMap { ["--set", $0] })
    let ducked = try render(space, file, "ducked.wav")
    let bed = 20 * log10(0.2)
    var speaking: [Double] = []
    var silent: [Double] = []
    for second in 1..<4 {
      speaking.append(Self.bedLevel(ducked, from: Double(second) - 0.3))
      silent.append(Self.bedLevel(ducked, from: Double(second) + 0.2))
    }
    print("side chain: bed \(bed) dBFS, speaking \(speaking), silent \(silent)")
    for (loud, quiet) in zip(silent, speaking) {
      #expect(loud - quiet >= 12, "ducked by \(loud - quiet) dB only")
      #expect(abs(loud - bed) < 1.5, "between the words the bed is at \(loud) dBFS")
    }
    // The voice goes to the master untouched: in [1.75, 1.8 s) the mix is the voice and the
    // ducked bed.
    let voice = Self.voice(seconds: 4)
    var worst: Float = 0
    for frame in (Self.rate * 7 / 4)..<(Self.rate * 7 / 4 + 2_400) {
      worst = max(worst, abs(ducked[frame * 2] - voice[frame * 2]))
    }
    // What is left beside the voice is the ducked bed: at most its level.
    #expect(Double(worst) < 0.2 * pow(10, -10.0 / 20), "beside the voice: \(worst)")

    // Without the side chain: nothing ducks.
    try space.tape("fx", "set", file, "f1", "--sidechain", "none")
    let plain = try render(space, file, "plain.wav")
    for second in 1..<4 {
      for start in [Double(second) - 0.3, Double(second) + 0.2] {
        let level = Self.bedLevel(plain, from: start)
        #expect(abs(level - bed) < 0.2, "without a side chain the bed is at \(level) dBFS")
      }
    }
    // `none` is the compressor added without one, bit for bit.
    try space.tape("undo", file)
    try space.tape("undo", file)
    try space.tape(
      ["fx", "add", file, "music", Self.compressor] + settings.flatMap { ["--set", $0] })
    #expect(try render(space, file, "never.wav") == plain)
  }

  /// A side chain keys whatever solo does (as Ardour's and Reaper's side-chain feeds do), and
  /// a stem keeps its side chain. The voice reaches the master untouched, so the full render
  /// less the voice (written by the test) is the ducked music alone: soloing the music
  /// renders exactly that, and so does the music's stem; the voice's stem is the voice. With
  /// `bus`, the voice goes through a bus that keys the compressor: the bus, silenced by the
  /// solo, still carries the voice to the side chain. A muted key keys nothing: soloed, the
  /// bed is then within 0.2 dB of its own level everywhere.
  @Test(arguments: [false, true])
  func aSoloedTrackAndItsStemKeepTheirSidechain(bus: Bool) throws {
    try Plugins.require(Self.compressor)
    let space = try Workspace()
    let file = try Self.podcast(space, seconds: 3)
    var key = "voice"
    if bus {
      try space.tape("track", "add", file, "voices")
      try space.tape("track", "set", file, "voice", "--output", "voices")
      key = "voices"
    }
    try space.tape(
      ["fx", "add", file, "music", Self.compressor, "--sidechain", key]
        + ["sct=External", "cr=20", "al=-30dB", "at=5", "rt=50"].flatMap { ["--set", $0] })
    let full = try render(space, file, "full.wav")
    let voice = Self.voice(seconds: 3)
    let music = zip(full, voice).map { $0 - $1 }
    // Not a comparison of an undocked bed: the music alone ducks by 12 dB or more.
    let bed = 20 * log10(0.2)
    for second in 1..<3 {
      #expect(Self.bedLevel(music, from: Double(second) - 0.3) < bed - 12)
    }
    let worst = { (a: [Float], b: [Float]) -> Double in
      guard a.count == b.count else { return .infinity }
      return Double(zip(a, b).map { abs($0 - $1) }.max() ?? 0)
    }
    try space.tape("track", "set", file, "music", "--solo")
    let soloed = try render(space, file, "soloed.wav")
    print(
      "side chain under solo (bus \(bus)): soloed vs full less the voice \(worst(soloed, music))")
    #expect(worst(soloed, music) < 1e-6)
    try space.tape("track", "set", file, "music", "--unsolo")
    try space.tape("render", file, "--stems", space.path("stems"), "--bits", "32f", "--tail", "0")
    let stem = try ReferenceRender.decode(space.path("stems/t1-music.wav"))
    let voiceStem = try ReferenceRender.decode(space.path("stems/t2-voice.wav"))
    print(
      "side chain in a stem (bus \(bus)): music stem vs full less the voice \(worst(stem, music)), voice stem vs the voice \(worst(voiceStem, voice))"
    )
    #expect(worst(stem, music) < 1e-6)
    #expect(worst(voiceStem, voice) < 1e-6)
    // A muted key keys nothing, soloed or not.
    try space.tape("track", "set", file, "voice", "--mute")
    try space.tape("track", "set", file, "music", "--solo")
    let muted = try render(space, file, "muted.wav")
    for second in 1..<3 {
      for start in [Double(second) - 0.3, Double(second) + 0.2] {
        let level = Self.bedLevel(muted, from: start)
        #expect(abs(level - bed) < 0.2, "with the key muted the bed is at \(level) dBFS")
      }
    }
  }

  /// Impulses at 1 s on both tracks. The voice runs through look-ahead limiters; the music
  /// through others, then LSP's compressor listening to its side chain (`scl`: its output is
  /// the side-chain signal) keyed by the voice. The side chain reaches the compressor on the
  /// frame its own input does, so the listened copy of the voice's impulse and the voice
  /// itself meet at the output on frame 48,000: one impulse of twice the height, nothing
  /// else. With more latency on the voice (two limiters, one before the compressor) the music
  /// waits for the side chain; with less (one, and two before the compressor) the side chain
  /// is delayed to meet the music.
  @Test(arguments: [(2, 1), (1, 2)])
  func theSidechainIsAlignedThroughLookAheadPlugins(voice: Int, music: Int) throws {
    try Plugins.require(Self.compressor, Plugins.limiter)
    let space = try Workspace()
    var impulse = [Float](repeating: 0, count: 2 * Self.rate * 2)
    impulse[Self.rate * 2] = 0.25
    impulse[Self.rate * 2 + 1] = 0.25
    let file = try RoutingTests.project(space, signals: [impulse, impulse])
    for (track, count) in [("b", voice), ("a", music)] {
      for _ in 0..<count {
        try space.tape("fx", "add", file, track, Plugins.limiter, "--set", "threshold=0")
      }
    }
    // The music's impulse is not heard: the compressor gives out what it listens to.
    try space.tape(
      "fx", "add", file, "a", Self.compressor, "--sidechain", "b", "--set", "sct=External",
      "--set", "scl=on", "--set", "scm=Peak")
    let mix = try render(space, file, "mix.wav")
    #expect(mix.count == 2 * Self.rate * 2)
    let loudest = mix.indices.max { abs(mix[$0]) < abs(mix[$1]) } ?? 0
    #expect(loudest / 2 == Self.rate, "the impulses meet at frame \(loudest / 2)")
    #expect(abs(mix[Self.rate * 2] - 0.5) < 1e-5, "\(mix[Self.rate * 2])")
    let rest = mix.enumerated().filter { $0.offset / 2 != Self.rate }.map { abs($0.element) }
    #expect((rest.max() ?? 0) < 1e-5, "elsewhere: \(rest.max() ?? 0)")
    // Muted, the voice feeds the side chain nothing (its post-fader output is silent).
    try space.tape("track", "set", file, "b", "--mute")
    let muted = try render(space, file, "muted.wav")
    #expect((muted.map { abs($0) }.max() ?? 1) < 1e-6)
  }

  /// A side chain that closes a loop of the routing (a track keyed by itself, or by a bus it
  /// feeds, by any path of outputs, sends and side chains) is refused in one line naming the
  /// loop, and nothing changes; so is a plugin without a side-chain input; and once a side
  /// chain is there, an output that would close a loop through it is refused as well.
  @Test func aSidechainLoopIsRefusedNamingIt() throws {
    try Plugins.require(Self.compressor, Plugins.eq)
    let space = try Workspace()
    let file = try Self.podcast(space, seconds: 1)
    try space.tape("track", "add", file, "bus")
    try space.tape("track", "set", file, "music", "--output", "bus")
    try space.tape("fx", "add", file, "voice", Self.compressor)
    try space.tape("fx", "add", file, "music", Plugins.eq)
    let before = try space.fingerprint("podcast.tape")
    let own = try space.tape("fx", "set", file, "f1", "--sidechain", "voice", status: 65)
    #expect(own.stderr.hasPrefix("error: t2 → t2 is a loop: t2 would feed itself"), "\(own.stderr)")
    let added = try space.tape(
      "fx", "add", file, "music", Self.compressor, "--sidechain", "bus", status: 65)
    #expect(added.stderr.hasPrefix("error: t1 → t3 → t1 is a loop"), "\(added.stderr)")
    let eq = try space.tape("fx", "set", file, "f2", "--sidechain", "voice", status: 64)
    #expect(eq.stderr.contains("has no side-chain input"), "\(eq.stderr)")
    for refused in [own, added, eq] {
      #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
    }
    #expect(try space.fingerprint("podcast.tape") == before)
    // The voice keyed by the bus is no loop; routing the voice into the music then is.
    try space.tape("fx", "set", file, "f1", "--sidechain", "bus")
    let back = try space.tape("track", "set", file, "voice", "--output", "music", status: 65)
    #expect(back.stderr.hasPrefix("error: t2 → t1 → t3 → t2 is a loop"), "\(back.stderr)")
  }

  /// Adding a side chain, removing it, setting it again and removing its source track are
  /// versions: undo, redo and checkout render each exactly as before, and `fx ls`, `log` and
  /// `diff` show it.
  @Test func historyOfSidechainsRestoresTheSoundExactly() throws {
    try Plugins.require(Self.compressor)
    let space = try Workspace()
    let file = try Self.podcast(space, seconds: 2)
    try space.tape("track", "add", file, "other")
    try space.tape(
      "fx", "add", file, "music", Self.compressor, "--set", "sct=External", "--set", "cr=20",
      "--set", "al=-30dB")
    var renders = [try render(space, file, "r0.wav")]
    let edits: [[String]] = [
      ["fx", "set", file, "f1", "--sidechain", "voice"],
      ["fx", "set", file, "f1", "--sidechain", "none"],
      ["fx", "set", file, "f1", "--sidechain", "t2", "--set", "cr=10"],
      ["track", "set", file, "voice", "--gain", "-12"],
    ]
    for (index, edit) in edits.enumerated() {
      try space.tape(edit)
      renders.append(try render(space, file, "r\(index + 1).wav"))
    }
    #expect(renders[1] != renders[0])
    #expect(renders[2] == renders[0])
    #expect(renders[3] != renders[1])
    let listed = try space.tape("fx", "ls", file).stdout
    #expect(listed.contains("sidechain t2 (voice)"), "\(listed)")
    let json = try #require(
      try parseJSON(space.tape("fx", "ls", file, "--json").stdout) as? [[String: Any]])
    #expect(json.first?["sidechain"] as? String == "t2")
    // `ls` shows it under the effects, `ls --json` on the effect.
    let table = try space.tape("ls", file).stdout
    #expect(table.contains("\n  sidechain f1 ← t2 (voice)\n"), "\(table)")
    let whole = try #require(
      try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
    let tracks = try #require(whole["tracks"] as? [[String: Any]])
    let effects = try #require(tracks.first?["effects"] as? [[String: Any]])
    #expect(effects.first?["sidechain"] as? String == "t2")
    let log = try space.tape("log", file, "f1").stdout
    #expect(log.contains("sidechain none → t2") && log.contains("sidechain t2 → none"), "\(log)")
    let diff = try space.tape("diff", file, "HEAD~4", "HEAD~3").stdout
    #expect(diff.contains("f1 sidechain none → t2"), "\(diff)")
    for index in stride(from: edits.count - 1, through: 0, by: -1) {
      try space.tape("undo", file)
      #expect(try render(space, file, "u\(index).wav") == renders[index], "undo to \(index)")
    }
    for index in 1...edits.count {
      try space.tape("redo", file)
      #expect(try render(space, file, "d\(index).wav") == renders[index], "redo to \(index)")
    }
    try space.tape("checkout", file, "HEAD~1")
    #expect(try render(space, file, "c.wav") == renders[3])
    // At that version, removing the source drops the side chain (the compressor hears
    // silence); undo brings both back.
    try space.tape("track", "rm", file, "voice")
    #expect(try space.tape("fx", "ls", file).stdout.contains("sidechain") == false)
    try space.tape("undo", file)
    #expect(try render(space, file, "back.wav") == renders[3])
  }

  /// A project of the schema before side chains (v15: made now, then its v16 table and
  /// migration record taken out, as a v15 Tape wrote it) opens read-only without being
  /// written, renders the same bytes, and its first edit upgrades it and still renders them.
  @Test func aProjectMadeBeforeSidechainsOpensAndSoundsTheSame() throws {
    try Plugins.require(Self.compressor)
    let space = try Workspace()
    let file = try Self.podcast(space, seconds: 1)
    try space.tape("fx", "add", file, "music", Self.compressor, "--set", "sct=External")
    try space.tape("send", "add", file, "voice", "music", "--gain", "-20")
    let expected = try render(space, file, "now.wav")
    try ReferenceRender.run(
      "/usr/bin/sqlite3",
      [
        file,
        "DROP TABLE effect_sidechain; DELETE FROM grdb_migrations WHERE identifier = 'v16';",
      ])
    let tables = try ReferenceRender.run("/usr/bin/sqlite3", [file, ".tables"])
    #expect(!tables.contains("effect_sidechain"))
    let before = try space.fingerprint("podcast.tape")
    #expect(try render(space, file, "old.wav") == expected)
    #expect(try space.tape("fx", "ls", file).stdout.contains("sidechain") == false)
    #expect(try space.fingerprint("podcast.tape") == before)
    try space.tape("marker", "add", file, "0.5s", "upgraded")
    #expect(
      try ReferenceRender.run("/usr/bin/sqlite3", [file, ".tables"]).contains("effect_sidechain"))
    #expect(try render(space, file, "upgraded.wav") == expected)
  }
}
