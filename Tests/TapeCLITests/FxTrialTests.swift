import Foundation
import ReferenceRenders
import Testing

/// Interleaved floats of an audio file, as ffmpeg decodes it.
private func samples(_ path: String) throws -> [Float] { try ReferenceRender.decode(path) }

/// The largest difference between two signals over their common length, in dBFS.
private func differenceDBFS(_ a: [Float], _ b: [Float]) -> Double {
  let worst = zip(a, b).map { abs($0 - $1) }.max() ?? 0
  return worst == 0 ? -.infinity : 20 * log10(Double(worst))
}

/// A bundle of LV2 plugins described by `turtle` (URIs `urn:tape:trial:NAME`, each a
/// `lv2:Plugin`), in a folder of its own for `LV2_PATH`. No binary: Tape refuses or lists them
/// before it would load one.
private func bundle(
  in space: Workspace, _ folder: String, names: [String], turtle: String
) throws
  -> String
{
  let root = space.path(folder)
  let bundle = root + "/trial.lv2"
  try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
  let manifest = names.map {
    "<urn:tape:trial:\($0)> a <http://lv2plug.in/ns/lv2core#Plugin> ; <http://www.w3.org/2000/01/rdf-schema#seeAlso> <plugins.ttl> ."
  }.joined(separator: "\n")
  try manifest.write(toFile: bundle + "/manifest.ttl", atomically: true, encoding: .utf8)
  try turtle.write(toFile: bundle + "/plugins.ttl", atomically: true, encoding: .utf8)
  return root
}

/// A plugin of `inputs` audio inputs and `outputs` outputs, as Turtle.
private func plugin(_ name: String, inputs: Int, outputs: Int) -> String {
  let ports = (0..<(inputs + outputs)).map { index in
    let direction = index < inputs ? "lv2:InputPort" : "lv2:OutputPort"
    return
      "[ a lv2:AudioPort , \(direction) ; lv2:index \(index) ; lv2:symbol \"p\(index)\" ; lv2:name \"P\(index)\" ]"
  }
  return """
    <urn:tape:trial:\(name)> a lv2:Plugin ; lv2:binary <none.so> ; doap:name "Trial \(name)" ;
      lv2:port \(ports.joined(separator: " , ")) .

    """
}

private let prefixes = """
  @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
  @prefix doap: <http://usefulinc.com/ns/doap#> .

  """

/// The presets a preset file gives `plugin`, read from the Turtle text as written (not
/// through lilv): label, and each `lv2:symbol "s" ; pset:value v` pair.
private func presetsInTurtle(_ path: String, for plugin: String) throws -> [String: [String: Float]]
{
  let text = try String(contentsOfFile: path, encoding: .utf8)
  var presets: [String: [String: Float]] = [:]
  for block in text.components(separatedBy: "a pset:Preset").dropFirst() {
    // Up to the next preset (a blank line may part a preset's own statements).
    let body = block
    guard body.contains("lv2:appliesTo <\(plugin)>"),
      let label = body.firstMatch(of: /rdfs:label "([^"]*)"/)?.1
    else { continue }
    var values: [String: Float] = [:]
    for match in body.matches(of: /lv2:symbol "([^"]+)" ;\s*pset:value ([-0-9.eE]+)/) {
      values[String(match.1)] = Float(String(match.2))
    }
    presets[String(label)] = values
  }
  return presets
}

@Suite("Plugins as a producer meets them")
struct FxTrialTests {
  /// A project (mono with `channels: 1`) with one track playing `audio` from 0.
  private func oneClip(_ space: Workspace, _ audio: String, channels: Int = 2) throws -> String {
    let file = space.path("trial.tape")
    try space.tape("new", file, "--channels", "\(channels)")
    try space.tape("import", file, try space.copyTestAudio(audio))
    try space.tape("track", "add", file, "A")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0")
    return file
  }

  private func parameters(
    _ space: Workspace, _ file: String, _ id: String
  ) throws -> [String: Double] {
    let effects = try #require(
      try parseJSON(space.tape("fx", "ls", file, "--json").stdout) as? [[String: Any]])
    let effect = try #require(effects.first { $0["id"] as? String == id })
    return try #require(effect["parameters"] as? [String: Double])
  }

  // MARK: Found in the trial

  /// `--set gain` (no `=`) printed `usageError(message: …)`, a Swift value: it is the
  /// message now, on `fx set` and `fx add` alike (the only commands whose argument checks
  /// threw such an error; UsageError and its kin now describe themselves as their message),
  /// and nothing changes.
  @Test func aSetWithoutAValueSaysSoInWords() throws {
    try Plugins.require(Plugins.eq)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape("fx", "add", file, "t1", Plugins.eq)
    let before = try space.fingerprint("trial.tape")
    let set = try space.tape("fx", "set", file, "f1", "--set", "gain", status: 64)
    #expect(
      set.stderr
        == "error: --set 'gain' is not symbol=value; write it like --set g_1=-3; see: tape fx set --help\n"
    )
    let add = try space.tape("fx", "add", file, "t1", Plugins.eq, "--set", "=3", status: 64)
    #expect(
      add.stderr
        == "error: --set '=3' is not symbol=value; write it like --set g_1=-3; see: tape fx add --help\n"
    )
    #expect(try space.fingerprint("trial.tape") == before)
  }

  /// `--set gain=0x10` was read as +16 dB (Swift's Float reads hexadecimal); `inf` and `nan`
  /// were no better. Each is refused now, and so is a level such as `--loudness -0x10`.
  @Test(arguments: ["0x10", "-0x1p3", "inf", "nan", "1e", "--3", "3-"])
  func aValueThatIsNotDecimalIsRefused(value: String) throws {
    try Plugins.require(Plugins.eq)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape("fx", "add", file, "t1", Plugins.eq)
    let before = try space.fingerprint("trial.tape")
    let set = try space.tape("fx", "set", file, "f1", "--set", "gain=\(value)", status: 64)
    #expect(
      set.stderr.hasPrefix("error: --set gain=\(value): '\(value)' is not a value of gain; use"),
      "\(set.stderr)")
    #expect(try space.fingerprint("trial.tape") == before)
    #expect(try parameters(space, file, "f1")["gain"] == 0)
  }

  @Test func aLevelThatIsNotDecimalIsRefused() throws {
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    let refused = try space.tape(
      "render", file, "-o", space.path("mix.wav"), "--loudness", "-0x10", status: 64)
    #expect(refused.stderr.hasPrefix("error: --loudness -0x10 is not a level"), "\(refused.stderr)")
    #expect(!FileManager.default.fileExists(atPath: space.path("mix.wav")))
  }

  /// `--set gain=1 --set gain=2` kept the last without a word: refused, naming both.
  @Test func aParameterSetTwiceIsRefused() throws {
    try Plugins.require(Plugins.eq)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape("fx", "add", file, "t1", Plugins.eq)
    let before = try space.fingerprint("trial.tape")
    let set = try space.tape(
      "fx", "set", file, "f1", "--set", "gain=1", "--set", "gain=2", status: 64)
    #expect(
      set.stderr
        == "error: --set gain is given twice (gain=1 and gain=2); set each parameter once; see: tape fx set --help\n"
    )
    try space.tape(
      "fx", "add", file, "t1", Plugins.eq, "--set", "gain=1", "--set", "gain = 2", status: 64)
    #expect(try space.fingerprint("trial.tape") == before)
  }

  /// "FLAC is not compressed" was false: FLAC compresses, without loss and at no bit rate.
  @Test func flacTakesNoBitrateForWhatItIs() throws {
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    let refused = try space.tape(
      "render", file, "-o", space.path("mix.flac"), "--bitrate", "128", status: 64)
    #expect(
      refused.stderr
        == "error: --bitrate is for MP3 and Opus; FLAC is compressed without loss, at no bit rate one chooses, so drop --bitrate\n"
    )
  }

  // MARK: Unusable plugins

  /// `fx add` committed a plugin `fx plugins` lists as unusable (then every render failed):
  /// it is refused in one line saying why, as `fx plugins` does, and what to use; nothing
  /// changes.
  @Test func fxAddRefusesAnUnusablePlugin() throws {
    let surround = "http://gareus.org/oss/lv2/meters#surround3"
    try Plugins.require(surround)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    let before = try space.fingerprint("trial.tape")
    let refused = try space.tape("fx", "add", file, "t1", surround, status: 65)
    let listed = try space.tape("fx", "plugins", "--search", "surround3").stdout
    let reason = try #require(listed.split(separator: "\t").last?.split(separator: ": ").last)
    #expect(reason == "has 3 audio inputs and 3 outputs; Tape runs 1 or 2\n")
    #expect(
      refused.stderr.hasPrefix(
        "error: Tape cannot run \(surround): it has 3 audio inputs and 3 outputs; Tape runs 1 or 2; use http://gareus.org/oss/lv2/meters#"
      ), "\(refused.stderr)")
    #expect(refused.stderr.split(separator: "\n").count == 1)
    #expect(try space.fingerprint("trial.tape") == before)
  }

  /// x42's IR convolver needs its impulse response (a file parameter, labelled in its
  /// manifest), which it rendered silence without, listed as usable and not a word said. It
  /// is usable now that a file can be set (`--file`), and an effect of it with none set is
  /// refused by a render in one line naming the parameter and `--file`; nothing is written.
  @Test func aFileParameterPluginWithNoFileIsRefusedNamingFile() throws {
    let convolver = "http://gareus.org/oss/lv2/zeroconvolv#CfgStereo"
    try Plugins.require(convolver)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    // The label of its file parameter, from the bundle's manifest as written.
    let manifest = try String(
      contentsOfFile: "/usr/lib/lv2/zeroconvo.lv2/manifest.ttl", encoding: .utf8)
    let label = try #require(
      manifest.firstMatch(of: /zeroconvolv#ir>\s*a lv2:Parameter;\s*rdfs:label "([^"]+)"/)?.1)
    let plugins = try space.tape("fx", "plugins", "--search", "zeroconvolv#Cfg").stdout
    #expect(
      plugins.split(separator: "\n").allSatisfy { $0.hasSuffix("\tusable") }
        && plugins.split(separator: "\n").count == 3, "\(plugins)")
    let added = try space.tape("fx", "add", file, "t1", convolver)
    #expect(added.stdout == "f1\n")
    let refused = try space.tape("render", file, "-o", space.path("out.wav"), status: 65)
    #expect(
      refused.stderr
        == "error: effect f1 (\(convolver)) needs a file for ir (\(label)) and has none, so it would render silence; set one with 'tape fx set \(file) f1 --file ir=PATH'\n"
    )
    #expect(!FileManager.default.fileExists(atPath: space.path("out.wav")))
  }

  /// A project whose plugins became unusable (another version installed: here, a bundle whose
  /// plugins had one output, then three) names every one of them in one line, not the first,
  /// bypassed or not; the fix it names works when run, and --bypass-missing renders without
  /// them, saying so.
  @Test func aRenderNamesEveryUnusableEffect() throws {
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape("render", file, "-o", space.path("dry.wav"))
    let before = try bundle(
      in: space, "before", names: ["a", "b"],
      turtle: prefixes + plugin("a", inputs: 1, outputs: 1) + plugin("b", inputs: 2, outputs: 2))
    let after = try bundle(
      in: space, "after", names: ["a", "b"],
      turtle: prefixes + plugin("a", inputs: 1, outputs: 3) + plugin("b", inputs: 4, outputs: 2))
    try space.tape("fx", "add", file, "t1", "urn:tape:trial:a", environment: ["LV2_PATH": before])
    try space.tape(
      "fx", "add", file, "master", "urn:tape:trial:b", "--bypass",
      environment: ["LV2_PATH": before])
    let refused = try space.tape(
      "render", file, "-o", space.path("mix.wav"), status: 65, environment: ["LV2_PATH": after])
    #expect(
      refused.stderr
        == "error: Tape cannot run the plugins of f1 (urn:tape:trial:a: it has 1 audio input and 3 outputs; Tape runs 1 or 2), f2 (urn:tape:trial:b: it has 4 audio inputs and 2 outputs; Tape runs 1 or 2); remove them with 'tape fx rm \(file) f1 f2', or add --bypass-missing to play without those effects\n"
    )
    #expect(!FileManager.default.fileExists(atPath: space.path("mix.wav")))
    let play = try space.tape(
      "play", file, "--device", "null", "--to", "0.2s", status: 65,
      environment: ["LV2_PATH": after])
    #expect(play.stderr.hasSuffix(refused.stderr), "\(play.stderr)")
    let skipped = try space.tape(
      "render", file, "-o", space.path("mix.wav"), "--bypass-missing",
      environment: ["LV2_PATH": after])
    #expect(
      skipped.stderr.contains(
        "note: effect f1 skipped: Tape cannot run its plugin urn:tape:trial:a (it has 1 audio input and 3 outputs; Tape runs 1 or 2)\nnote: effect f2 skipped:"
      ), "\(skipped.stderr)")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: space.path("mix.wav")))
        == Data(contentsOf: URL(fileURLWithPath: space.path("dry.wav"))))
    try space.tape("fx", "rm", file, "f1", "f2", environment: ["LV2_PATH": after])
    try space.tape(
      "render", file, "-o", space.path("fixed.wav"), environment: ["LV2_PATH": after])
  }

  // MARK: Stored values against the installed plugin

  /// A copy of x42's limiter bundle whose gain now reaches +10 dB only and whose `release`
  /// port is called `release_time`: the plugin a project was made with, updated.
  private func updatedLimiter(in space: Workspace) throws -> String {
    let root = space.path("updated")
    let bundle = root + "/dpl.lv2"
    try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
    for name in ["manifest.ttl", "dpl.so", "dplUI_gl.so"] {
      try FileManager.default.createSymbolicLink(
        atPath: bundle + "/" + name, withDestinationPath: "/usr/lib/lv2/dpl.lv2/" + name)
    }
    var turtle = try String(contentsOfFile: "/usr/lib/lv2/dpl.lv2/dpl.ttl", encoding: .utf8)
    #expect(turtle.contains("lv2:maximum 30.0;") && turtle.contains("lv2:symbol \"release\" ;"))
    turtle = turtle.replacingOccurrences(of: "lv2:maximum 30.0;", with: "lv2:maximum 10.0;")
      .replacingOccurrences(of: "lv2:symbol \"release\" ;", with: "lv2:symbol \"release_time\" ;")
    try turtle.write(toFile: bundle + "/dpl.ttl", atomically: true, encoding: .utf8)
    return root
  }

  /// A project's stored values are checked against the plugin installed when a render or a
  /// play starts: a value out of the port's range and a port that is gone are one warning
  /// line naming the effect and what is used, and the render is what the plugin makes of
  /// those values (the same project with them set, rendered with the plugin as it was).
  @Test func storedValuesAreCheckedAgainstTheInstalledPlugin() throws {
    try Plugins.require(Plugins.limiter)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape(
      "fx", "add", file, "t1", Plugins.limiter, "--set", "gain=20", "--set", "release=0.05")
    let updated = ["LV2_PATH": try updatedLimiter(in: space)]
    let warning =
      "warning: effect f1 (\(Plugins.limiter)): gain 20 is out of its range -10 to 10, so 10 is used; it has no parameter 'release' any more (release=0.05 is ignored)\n"
    let rendered = try space.tape(
      "render", file, "-o", space.path("updated.wav"), "--bits", "32f", environment: updated)
    #expect(rendered.stderr.components(separatedBy: warning).count == 2, "\(rendered.stderr)")
    #expect(rendered.stderr.components(separatedBy: "warning:").count == 2)
    let play = try space.tape(
      "play", file, "--device", "null", "--to", "0.2s", environment: updated)
    #expect(play.stderr.components(separatedBy: warning).count == 2, "\(play.stderr)")
    // What is used instead: gain 10, and the renamed port at its default (0.01).
    try space.tape("fx", "set", file, "f1", "--set", "gain=10", "--set", "release=0.01")
    let plain = try space.tape("render", file, "-o", space.path("set.wav"), "--bits", "32f")
    #expect(!plain.stderr.contains("warning"), "\(plain.stderr)")
    let (a, b) = (try samples(space.path("updated.wav")), try samples(space.path("set.wav")))
    #expect(a.count == b.count && a.count == 144_000 * 2)
    #expect(a == b, "\(differenceDBFS(a, b)) dBFS")
  }

  // MARK: Naming plugins and values

  /// LSP's coefficient ports (unit "G", a linear gain) take decibels: -6dB is 10^(-6/20).
  @Test func lspGainsTakeDecibels() throws {
    let lsp = "http://lsp-plug.in/plugins/lv2/compressor_stereo"
    try Plugins.require(lsp)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape("fx", "add", file, "t1", lsp, "--set", "g_in=-6dB", "--set", "g_out=0.25")
    try space.tape("fx", "set", file, "f1", "--set", "g_out=+3 dB")
    let values = try parameters(space, file, "f1")
    // Stored as the port's Float (JSON gives its shortest decimal).
    #expect(values["g_in"].map(Float.init) == Float(pow(10, -6.0 / 20)))
    #expect(values["g_out"].map(Float.init) == Float(pow(10, 3.0 / 20)))
    let refused = try space.tape("fx", "set", file, "f1", "--set", "g_in=-6", status: 64)
    #expect(refused.stderr.contains("out of range; use 0 to 1000"), "\(refused.stderr)")
  }

  /// A plugin is named by the end of its URI that `tape ls` shows, or by its name (as lv2info
  /// says it); a name two plugins share is refused, naming both.
  @Test func pluginsByTheirShortFormOrName() throws {
    try Plugins.require(Plugins.eq, Plugins.limiter)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape("fx", "add", file, "t1", "fil4#stereo", "--set", "gain=-3")
    let info = try ReferenceRender.run("/usr/bin/lv2info", [Plugins.limiter])
    let name = try #require(info.firstMatch(of: /\n\tName:\s+([^\n]+)\n/)?.1)
    try space.tape("fx", "add", file, "master", String(name).uppercased())
    let listed = try #require(
      try parseJSON(space.tape("fx", "ls", file, "--json").stdout) as? [[String: Any]])
    #expect(listed.map { $0["plugin"] as? String } == [Plugins.limiter, Plugins.eq])
    #expect(try space.tape("ls", file).stdout.contains("effects f1 fil4#stereo"))
    #expect(
      try space.tape("fx", "info", "dpl#stereo").stdout
        == (try space.tape("fx", "info", Plugins.limiter).stdout))
    let ambiguous = try space.tape("fx", "info", "xfade", status: 64)
    #expect(
      ambiguous.stderr
        == "error: 'xfade' names 2 plugins: http://gareus.org/oss/lv2/xfade, http://plugin.org.uk/swh-plugins/xfade; give the URI of one\n"
    )
  }

  /// `-24LKFS` is `-24LUFS`: the same file, byte for byte.
  @Test func lkfsIsLufs() throws {
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape("render", file, "-o", space.path("lufs.wav"), "--loudness", "-24LUFS")
    try space.tape("render", file, "-o", space.path("lkfs.wav"), "--loudness", "-24LKFS")
    try space.tape("render", file, "-o", space.path("plain.wav"))
    let (lufs, lkfs) = (
      try Data(contentsOf: URL(fileURLWithPath: space.path("lufs.wav"))),
      try Data(contentsOf: URL(fileURLWithPath: space.path("lkfs.wav")))
    )
    #expect(lufs == lkfs)
    #expect(lufs != (try Data(contentsOf: URL(fileURLWithPath: space.path("plain.wav")))))
  }

  // MARK: Presets

  /// `tape fx presets` lists what lv2info lists, with the values the preset file holds; `fx
  /// add --preset` stores them (--set after it) and renders as the same values set by hand;
  /// `fx set --preset` sets what the preset sets and keeps the rest, in one undoable version.
  @Test func presetsOfAPlugin() throws {
    let autotune = "http://gareus.org/oss/lv2/fat1"
    try Plugins.require(autotune)
    let info = try ReferenceRender.run("/usr/bin/lv2info", [autotune])
    // "\tPresets: " then one indented line per preset.
    let lines = info.split(separator: "\n", omittingEmptySubsequences: false)
    let start = try #require(lines.firstIndex { $0.hasPrefix("\tPresets:") })
    let listed = lines[(start + 1)...].prefix { $0.firstMatch(of: /^\t {5,}\S/) != nil }
      .map { $0.trimmingCharacters(in: .whitespaces) }
    let fromTurtle = try presetsInTurtle("/usr/lib/lv2/fat1.lv2/presets.ttl", for: autotune)
    #expect(Set(fromTurtle.keys) == Set(listed) && listed.count == 2, "\(listed)")
    let space = try Workspace()
    let json = try #require(
      try parseJSON(space.tape("fx", "presets", autotune, "--json").stdout) as? [[String: Any]])
    #expect(json.map { $0["name"] as? String } == listed.sorted())
    for preset in json {
      let name = try #require(preset["name"] as? String)
      let values = try #require(preset["parameters"] as? [String: Double])
      #expect(values.mapValues(Float.init) == fromTurtle[name], "\(name)")
      #expect(preset["hasState"] as? Bool == false)
    }
    let text = try space.tape("fx", "presets", "fat1").stdout
    #expect(text.hasPrefix("Live\thttp://gareus.org/oss/lv2/fat1/pset#live\n"), "\(text)")

    let file = try oneClip(space, "speech-mono-48k-16.wav", channels: 1)
    let live = try #require(fromTurtle["Live"])
    try space.tape("fx", "add", file, "t1", autotune, "--preset", "live", "--set", "offset=1")
    var stored = try parameters(space, file, "f1")
    for (symbol, value) in live where symbol != "offset" {
      #expect(stored[symbol].map(Float.init) == value, "\(symbol)")
    }
    #expect(stored["offset"] == 1)
    try space.tape("render", file, "-o", space.path("preset.wav"), "--bits", "32f")
    try space.tape("fx", "rm", file, "f1")
    try space.tape(
      ["fx", "add", file, "t1", autotune]
        + live.filter { $0.key != "offset" }.flatMap { ["--set", "\($0.key)=\($0.value)"] }
        + ["--set", "offset=1"])
    try space.tape("render", file, "-o", space.path("by-hand.wav"), "--bits", "32f")
    let (a, b) = (try samples(space.path("preset.wav")), try samples(space.path("by-hand.wav")))
    #expect(a.count == b.count && a.contains { $0 != 0 })
    #expect(a == b, "\(differenceDBFS(a, b)) dBFS")

    let head = try space.head(of: file)
    try space.tape("fx", "set", file, "f2", "--preset", "Slightly Corrected")
    #expect(try space.head(of: file) == head + 1)
    stored = try parameters(space, file, "f2")
    for (symbol, value) in try #require(fromTurtle["Slightly Corrected"]) {
      #expect(stored[symbol].map(Float.init) == value, "\(symbol)")
    }
    // Not in that preset: as it was.
    #expect(stored["tuning"].map(Float.init) == live["tuning"])
    try space.tape("undo", file)
    #expect(try parameters(space, file, "f2")["corr"].map(Float.init) == live["corr"])
    let unknown = try space.tape("fx", "set", file, "f2", "--preset", "Loud", status: 64)
    #expect(
      unknown.stderr
        == "error: \(autotune) has no preset 'Loud'; its presets are 'Live', 'Slightly Corrected' ('tape fx presets \(autotune)' lists them)\n"
    )
  }

  /// A preset with state of its own (x42's preset convolver: its impulse response, a delta
  /// spike by its preset file's word) is stored with the effect and heard: the no-op preset
  /// renders the track as it was. Without a preset that plugin renders silence, so `fx add`
  /// refuses it, naming its presets.
  @Test func aPresetWithState() throws {
    let convolver = "http://gareus.org/oss/lv2/zeroconvolv#Stereo"
    try Plugins.require(convolver)
    let space = try Workspace()
    let file = try oneClip(space, "strings-stereo-48k-float.wav")
    try space.tape("render", file, "-o", space.path("dry.wav"), "--bits", "32f")
    let refused = try space.tape("fx", "add", file, "t1", convolver, status: 65)
    #expect(
      refused.stderr.hasSuffix(
        "error: \(convolver) renders silence without the state one of its presets gives it; add it with --preset NAME (its presets: 'No-OP Stereo')\n"
      ), "\(refused.stderr)")
    let presets = try space.tape("fx", "presets", convolver).stdout
    #expect(
      presets
        == "No-OP Stereo\thttp://gareus.org/oss/lv2/zeroconvolv/pset#noopStereo\t(with state)\n")
    try space.tape("fx", "add", file, "t1", convolver, "--preset", "No-OP Stereo")
    let listed = try #require(
      try parseJSON(space.tape("fx", "ls", file, "--json").stdout) as? [[String: Any]])
    #expect(listed.first?["hasState"] as? Bool == true)
    try space.tape("render", file, "-o", space.path("wet.wav"), "--bits", "32f")
    let (dry, wet) = (try samples(space.path("dry.wav")), try samples(space.path("wet.wav")))
    #expect(dry.count == wet.count)
    #expect(differenceDBFS(dry, wet) < -100, "\(differenceDBFS(dry, wet)) dBFS")
  }
}
