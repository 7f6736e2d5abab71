import Foundation
import ReferenceRenders
import Testing

/// The plugins the effect tests use, from Debian packages the setup script installs; a test
/// that needs one fails naming the package when it is missing (it never passes without it).
enum Plugins {
  static let eq = "http://gareus.org/oss/lv2/fil4#stereo"
  static let compressor = "http://gareus.org/oss/lv2/darc#stereo"
  static let limiter = "http://gareus.org/oss/lv2/dpl#stereo"

  /// `lv2ls`'s list of the installed plugins, read once per test process (it loads every
  /// bundle's Turtle, and each of some 40 tests ran it; the plugins installed do not change
  /// while the tests run).
  static let installed = Result { try ReferenceRender.run("/usr/bin/lv2ls", []) }

  /// Whether `lv2ls` lists `uri`.
  static func isInstalled(_ uri: String) throws -> Bool {
    try installed.get().split(separator: "\n").contains(Substring(uri))
  }

  static func require(_ uris: String...) throws {
    for uri in uris {
      try #require(
        try isInstalled(uri),
        "the LV2 plugin \(uri) is not installed: apt-get install x42-plugins (scripts/setup.sh does)"
      )
    }
  }
}

/// Interleaved stereo floats of an audio file, as ffmpeg decodes it.
private func stereo(_ path: String) throws -> [Float] { try ReferenceRender.decode(path) }

/// The largest difference between two signals over their common length, in dBFS.
private func differenceDBFS(_ a: [Float], _ b: [Float]) -> Double {
  let worst = zip(a, b).map { abs($0 - $1) }.max() ?? 0
  return worst == 0 ? -.infinity : 20 * log10(Double(worst))
}

@Suite("Effects on the command line")
struct FxCommandTests {
  /// A project with one track playing `audio` (a TestAudio file) from 0.
  private func oneClip(_ space: Workspace, _ audio: String) throws -> String {
    let file = space.path("fx.tape")
    try space.tape("new", file)
    try space.tape("import", file, try space.copyTestAudio(audio))
    try space.tape("track", "add", file, "A")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0")
    return file
  }

  /// Against an independent host: an EQ, a compressor and a limiter on a one-clip project
  /// render to what `lv2file` (Debian's lv2file) makes of the same audio with the same values,
  /// to below −120 dBFS, the limiter after taking out its reported latency (lv2file does not).
  @Test(arguments: [
    (Plugins.eq, ["sec1=on", "freq1=400", "gain1=-9", "q1=0.5", "LSsec=on", "LSgain=4"], 0),
    (Plugins.compressor, ["threshold=-30", "Ratio=0.6", "attack=0.002", "inputgain=6"], 0),
    (Plugins.limiter, ["threshold=-6", "release=0.05"], 64),
  ])
  func anEffectRendersAsAnIndependentHostRunsIt(
    uri: String, settings: [String], latency: Int
  ) throws {
    try Plugins.require(uri)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape(["fx", "add", file, "t1", uri] + settings.flatMap { ["--set", $0] })
    let ours = space.path("ours.wav")
    // lv2file stops with its input: the render too (an EQ rings 13 ms past it; the tails are
    // RenderTailTests').
    try space.tape("render", file, "-o", ours, "--bits", "32f", "--tail", "0")
    let theirs = space.path("theirs.wav")
    let values = settings.map { setting in
      // lv2file takes numbers: the toggles as 1.
      setting.replacingOccurrences(of: "=on", with: "=1").replacingOccurrences(of: "=", with: ":")
    }
    // Tape runs every plugin in steps of 64 frames of its own count, so that a play (any
    // period) equals a render; lv2file is given the same block (a compressor's envelope is
    // updated per block: other blocks give other, equally right, numbers).
    try ReferenceRender.run(
      "/usr/bin/lv2file",
      [
        "-i", TestAudio.path("strings-stereo-48k-float.wav"), "-o", theirs, "--ignore-clipping",
        "-b", "64",
      ]
        + values.flatMap { ["-p", $0] } + [uri])
    let (a, b) = (try stereo(ours), Array(try stereo(theirs).dropFirst(latency * 2)))
    #expect(a.count == 144_000 * 2)
    #expect(b.count == a.count - latency * 2)
    #expect(differenceDBFS(a, b) < -120, "\(uri): \(differenceDBFS(a, b)) dBFS")
    #expect(a.contains { $0 != 0 })
  }

  /// Two seconds of stereo silence but for a 0.25 impulse at frame 48,000, on two tracks from
  /// 0: t1 "Limited" through a look-ahead limiter (threshold 0 dB: it lets the impulse through,
  /// 64 frames late), t2 "Dry".
  static func impulseProject(in space: Workspace) throws -> String {
    var impulse = [Float](repeating: 0, count: 96_000 * 2)
    impulse[48_000 * 2] = 0.25
    impulse[48_000 * 2 + 1] = 0.25
    let raw = space.path("impulse.f32")
    try impulse.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
    let wav = space.path("impulse.wav")
    try ReferenceRender.run(
      "/usr/bin/sox", ["-t", "f32", "-r", "48000", "-c", "2", raw, "-e", "floating-point", wav])
    let file = space.path("latency.tape")
    try space.tape("new", file)
    try space.tape("import", file, wav)
    try space.tape("track", "add", file, "Limited")
    try space.tape("track", "add", file, "Dry")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0")
    try space.tape("clip", "add", file, "t2", "s1", "--at", "0")
    try space.tape("fx", "add", file, "t1", Plugins.limiter, "--set", "threshold=0")
    return file
  }

  /// Latency compensation: an impulse at 1 s on two tracks, one through a look-ahead limiter
  /// (64 frames of latency) and one dry, lands at exactly frame 48,000 on both: in each
  /// track's stem and in the mix, where the two add up to one impulse.
  @Test func latencyIsCompensatedSampleExactly() throws {
    try Plugins.require(Plugins.limiter)
    let space = try Workspace()
    let file = try Self.impulseProject(in: space)
    try space.tape("render", file, "--stems", space.path("stems"), "--bits", "32f")
    try space.tape("render", file, "-o", space.path("mix.wav"), "--bits", "32f")
    for name in ["stems/t1-Limited.wav", "stems/t2-Dry.wav", "mix.wav"] {
      let samples = try stereo(space.path(name))
      #expect(samples.count == 96_000 * 2, "\(name)")
      let loudest = samples.indices.max { abs(samples[$0]) < abs(samples[$1]) } ?? 0
      #expect(loudest / 2 == 48_000, "\(name): the impulse is at frame \(loudest / 2)")
      let expected: Float = name == "mix.wav" ? 0.5 : 0.25
      #expect(abs(samples[loudest] - expected) < 1e-6, "\(name): \(samples[loudest])")
    }
  }

  /// Each fx command is one version; `ls --json` shows the chains; undo and redo restore
  /// exactly the render of each version they return to.
  @Test func fxEditsAreVersionsAndUndoRestoresTheRender() throws {
    try Plugins.require(Plugins.eq, Plugins.limiter)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    var count = 0
    let render = { () throws -> Data in
      count += 1
      let path = space.path("render-\(count).wav")
      try space.tape("render", file, "-o", path)
      return try Data(contentsOf: URL(fileURLWithPath: path))
    }
    var renders = [try render()]
    let edits: [[String]] = [
      ["fx", "add", file, "t1", Plugins.eq, "--set", "gain=6"],
      ["fx", "add", file, "master", Plugins.limiter, "--set", "threshold=-8"],
      ["fx", "set", file, "f1", "--set", "gain=3"],
      ["fx", "bypass", file, "f2"],
      ["fx", "add", file, "t1", Plugins.eq, "--set", "sec1=on", "--set", "gain1=-12"],
      ["fx", "move", file, "f3", "--to", "0"],
      ["fx", "rm", file, "f1"],
    ]
    for edit in edits {
      try space.tape(edit)
      renders.append(try render())
      #expect(renders.last != renders[renders.count - 2], "\(edit)")
    }
    let json = try #require(
      try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
    let master = try #require(json["masterEffects"] as? [[String: Any]])
    #expect(master.map { $0["id"] as? String } == ["f2"])
    #expect(master.first?["bypassed"] as? Bool == true)
    let tracks = try #require(json["tracks"] as? [[String: Any]])
    let chain = try #require(tracks.first?["effects"] as? [[String: Any]])
    #expect(chain.map { $0["id"] as? String } == ["f3"])
    #expect((chain.first?["parameters"] as? [String: Double])?["gain1"] == -12)
    for index in stride(from: edits.count - 1, through: 0, by: -1) {
      try space.tape("undo", file)
      #expect(try render() == renders[index], "undo to \(index)")
    }
    for index in 1...edits.count {
      try space.tape("redo", file)
      #expect(try render() == renders[index], "redo to \(index)")
    }
    let text = try space.tape("ls", file).stdout
    #expect(text.contains("effects f3 fil4#stereo"), "\(text)")
    #expect(text.contains("master effects f2 dpl#stereo (bypassed)"), "\(text)")
  }

  /// Values are checked against the plugin: an unknown URI or symbol names the nearest, a value
  /// out of range names the range, an enumeration takes its label; nothing is written.
  @Test func valuesAreCheckedAgainstThePlugin() throws {
    try Plugins.require(Plugins.eq, Plugins.limiter)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    let before = try space.fingerprint("fx.tape")
    let unknown = try space.tape(
      "fx", "add", file, "t1", "http://gareus.org/oss/lv2/fil4#sterio", status: 66)
    #expect(unknown.stderr.contains("did you mean http://gareus.org/oss/lv2/fil4#stereo"))
    let symbol = try space.tape("fx", "add", file, "t1", Plugins.eq, "--set", "gian=-3", status: 64)
    #expect(symbol.stderr.contains("did you mean 'gain'"), "\(symbol.stderr)")
    let range = try space.tape(
      "fx", "add", file, "t1", Plugins.limiter, "--set", "threshold=-30", status: 64)
    #expect(range.stderr.contains("-10"), "\(range.stderr)")
    let chain = try space.tape("fx", "add", file, "t9", Plugins.eq, status: 65)
    #expect(chain.stderr.contains("no track t9"), "\(chain.stderr)")
    // A place past the chain's end: the places said, no effect or option named that the user
    // did not give (it named the new effect's id and `--to`).
    let place = try space.tape(
      "fx", "add", file, "t1", Plugins.eq, "--at", "5", status: 65, environment: ["NO_COLOR": "1"])
    #expect(
      place.stderr
        == "error: position 5 is outside the chain: its places run from 0 (first) to 0; give one of those\n"
    )
    #expect(try space.fingerprint("fx.tape") == before)
    try space.tape("fx", "add", file, "t1", Plugins.limiter, "--set", "truepeak=on")
    let shown = try #require(
      try parseJSON(space.tape("fx", "ls", file, "--json").stdout) as? [[String: Any]])
    #expect((shown.first?["parameters"] as? [String: Double])?["truepeak"] == 1)
    try space.tape("fx", "rm", file, "f9", status: 65)
  }

  /// A project whose plugin is not installed (LV2_PATH pointing at an empty folder) still
  /// lists, edits and undoes; render refuses in one line naming the URI and the effect, and
  /// with --bypass-missing renders the dry mix and says what it skipped.
  @Test func aMissingPluginRefusesToRenderButEdits() throws {
    try Plugins.require(Plugins.eq)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape("render", file, "-o", space.path("dry.wav"))
    try space.tape("fx", "add", file, "t1", Plugins.eq, "--set", "gain=-6")
    let empty = space.path("no-plugins")
    try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
    let elsewhere = ["LV2_PATH": empty]
    try space.tape("ls", file, environment: elsewhere)
    try space.tape("clip", "move", file, "c1", "--to", "1s", environment: elsewhere)
    try space.tape("undo", file, environment: elsewhere)
    try space.tape("fx", "bypass", file, "f1", environment: elsewhere)
    try space.tape("undo", file, environment: elsewhere)
    let set = try space.tape(
      "fx", "set", file, "f1", "--set", "gain=-3", status: 66, environment: elsewhere)
    #expect(set.stderr.contains("is not installed"), "\(set.stderr)")
    let refused = try space.tape(
      "render", file, "-o", space.path("mix.wav"), status: 65, environment: elsewhere)
    #expect(
      refused.stderr
        == "error: the LV2 plugin is not installed here: \(Plugins.eq) (f1); install it, or add --bypass-missing to play without that effect\n"
    )
    #expect(!FileManager.default.fileExists(atPath: space.path("mix.wav")))
    let skipped = try space.tape(
      "render", file, "-o", space.path("mix.wav"), "--bypass-missing", environment: elsewhere)
    #expect(skipped.stderr.contains("effect f1 skipped"), "\(skipped.stderr)")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: space.path("mix.wav")))
        == Data(contentsOf: URL(fileURLWithPath: space.path("dry.wav"))))
  }

  /// Values are a plugin's Float ports: listed as the shortest decimal that reads back as the
  /// same Float (-0.3), not the Double it widens to (-0.30000001192092896), in `fx ls`,
  /// `fx ls --json` and `ls --json`, the plugin installed or not.
  @Test func valuesAreListedWithoutFloatNoise() throws {
    try Plugins.require(Plugins.eq)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape("fx", "add", file, "t1", Plugins.eq, "--set", "gain=-0.3")
    let listed = try #require(
      try parseJSON(space.tape("fx", "ls", file, "--json").stdout) as? [Any])
    let effect = try #require(listed.first as? [String: Any])
    #expect((effect["parameters"] as? [String: Any])?["gain"] as? Double == -0.3)
    let whole = try #require(
      try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
    let track = try #require((whole["tracks"] as? [[String: Any]])?.first)
    let stored = try #require((track["effects"] as? [[String: Any]])?.first)
    #expect((stored["parameters"] as? [String: Any])?["gain"] as? Double == -0.3)
    let empty = space.path("no-plugins")
    try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
    let text = try space.tape("fx", "ls", file, environment: ["LV2_PATH": empty]).stdout
    #expect(text.contains(" gain=-0.3 "), "\(text)")
    #expect(!text.contains(/[0-9]\.[0-9]{6}/), "\(text)")
  }

  /// A batch takes fx lines; a duplicated track gets copies of its effects under new ids.
  @Test func batchesAndDuplicatesCarryEffects() throws {
    try Plugins.require(Plugins.eq)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    let script = space.path("fx.txt")
    try """
    fx add t1 \(Plugins.eq) --set gain=-3 --as eq
    fx set @eq --set gain=-4
    fx bypass @eq
    """.write(toFile: script, atomically: true, encoding: .utf8)
    #expect(try space.tape("batch", file, script).stdout == "f1\n")
    #expect(try space.tape("track", "duplicate", file, "t1").stdout == "t2\nc2\nf2\n")
    let json = try #require(
      try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
    let tracks = try #require(json["tracks"] as? [[String: Any]])
    let chains = tracks.map {
      ($0["effects"] as? [[String: Any]] ?? []).map { $0["id"] as? String }
    }
    #expect(chains == [["f1"], ["f2"]])
    let copy = try #require((tracks[1]["effects"] as? [[String: Any]])?.first)
    #expect(copy["bypassed"] as? Bool == true)
    #expect((copy["parameters"] as? [String: Double])?["gain"] == -4)
  }

  /// undo, redo and diff say what changed in the effects, in words and in --json.
  @Test func undoAndDiffNameEffectChanges() throws {
    try Plugins.require(Plugins.eq, Plugins.limiter)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    let before = try space.head(of: file)
    try space.tape("fx", "add", file, "t1", Plugins.eq, "--set", "gain=-6")
    try space.tape("fx", "add", file, "master", Plugins.limiter)
    try space.tape("fx", "set", file, "f1", "--set", "gain=-12")
    #expect(
      try space.tape("undo", file).stdout.contains("f1 gain -12 → -6"),
      "the undo names the parameter")
    #expect(try space.tape("redo", file).stdout.contains("f1 gain -6 → -12"))
    try space.tape("fx", "bypass", file, "f2")
    #expect(try space.tape("undo", file).stdout.contains("f2 turned on"))
    let words = try space.tape("diff", file, "\(before)", "\(try space.head(of: file))").stdout
    #expect(words.contains("f1 added to t1 at 0 (fil4#stereo)"), "\(words)")
    #expect(words.contains("f2 added to master at 0 (dpl#stereo)"), "\(words)")
    let json = try #require(
      try parseJSON(
        space.tape("diff", file, "\(before)", "\(try space.head(of: file))", "--json").stdout)
        as? [String: Any])
    let changes = try #require(json["changes"] as? [[String: Any]])
    let effects = changes.filter { $0["kind"] as? String == "effect" }
    #expect(effects.map { $0["id"] as? String } == ["f1", "f2"])
    let after = try #require(effects.first?["after"] as? [String: Any])
    #expect(after["chain"] as? String == "t1")
    #expect(after["plugin"] as? String == Plugins.eq)
    #expect(effects.first?["before"] is NSNull)
  }

  /// A plugin with state of its own (lsp's compressor, LV2 State) has it saved with the effect
  /// when it is added; the project renders with it, the same bytes every time.
  @Test func aPluginsStateIsSavedWithItsEffect() throws {
    let lsp = "http://lsp-plug.in/plugins/lv2/compressor_stereo"
    try #require(
      try Plugins.isInstalled(lsp),
      "\(lsp) is not installed: apt-get install lsp-plugins-lv2 (scripts/setup.sh does)")
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape("fx", "add", file, "t1", lsp)
    let json = try #require(
      try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
    let tracks = try #require(json["tracks"] as? [[String: Any]])
    let effect = try #require((tracks.first?["effects"] as? [[String: Any]])?.first)
    #expect(effect["hasState"] as? Bool == true)
    try space.tape("render", file, "-o", space.path("a.wav"))
    try space.tape("render", file, "-o", space.path("b.wav"))
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: space.path("a.wav")))
        == Data(contentsOf: URL(fileURLWithPath: space.path("b.wav"))))
  }
}
