import Effects
import Foundation
import Testing

@Suite("Plugins by short name, values people write, presets")
struct PluginLookupTests {
  /// Float(_:) reads hexadecimal, `inf` and `nan`: a gain of `0x10` was +16 dB. Only decimal
  /// numbers are values.
  @Test(arguments: [
    "0x10", "0X1p2", "inf", "-inf", "nan", "infinity", "1e", "e3", ".", "--3", "1.2.3", "",
  ])
  func onlyDecimalNumbersAreValues(text: String) throws {
    let gain = try requirePlugin(TestPlugins.eq).control("gain")
    #expect(throws: EffectError.self) { try gain.value(parsing: text) }
  }

  @Test(
    arguments: [
      ("-3", -3), ("+3", 3), ("0.5", 0.5), (".5", 0.5), ("5.", 5), ("1e1", 10), ("-1.5E0", -1.5),
      ("-3 dB", -3),
    ] as [(String, Float)])
  func decimalNumbersAre(text: String, value: Float) throws {
    let gain = try requirePlugin(TestPlugins.eq).control("gain")
    #expect(try gain.value(parsing: text) == value)
  }

  /// LSP's coefficient ports (unit "G") take decibels; a port in dB does not convert them.
  @Test func linearGainsTakeDecibels() throws {
    let lsp = try requirePlugin(TestPlugins.lspCompressor)
    let input = try lsp.control("g_in")
    #expect(input.unit == "G" && input.isLinearGain)
    #expect(try input.value(parsing: "-6dB") == Float(pow(10, -6.0 / 20)))
    #expect(try input.value(parsing: "0 dB") == 1)
    #expect(try input.value(parsing: "0.25") == 0.25)
    #expect(throws: EffectError.outOfRange(symbol: "g_in", value: -6, minimum: 0, maximum: 1000)) {
      try input.value(parsing: "-6")
    }
    let eqGain = try requirePlugin(TestPlugins.eq).control("gain")
    #expect(!eqGain.isLinearGain)
    #expect(try eqGain.value(parsing: "-6dB") == -6)
  }

  /// A plugin by its URI, the end of it `tape ls` shows, or its name; an ambiguous one is
  /// refused naming the candidates (two plugins end in `xfade`).
  @Test func resolvingNames() throws {
    let eq = try requirePlugin(TestPlugins.eq)
    let catalog = PluginCatalog.load()
    #expect(try catalog.resolve(eq.uri) == eq)
    #expect(try catalog.resolve("fil4#stereo") == eq)
    #expect(try catalog.resolve(eq.name.uppercased()) == eq)
    #expect(PluginCatalog.shortName(eq.uri) == "fil4#stereo")
    let xfades = catalog.uris.filter { PluginCatalog.shortName($0) == "xfade" }
    try #require(xfades.count == 2, "\(xfades)")
    #expect(throws: EffectError.ambiguousPlugin(name: "xfade", candidates: xfades)) {
      try catalog.resolve("xfade")
    }
    #expect(
      throws: EffectError.unknownPlugin(
        uri: "fil4#sterio", nearest: catalog.nearest(to: "fil4#sterio"))
    ) {
      try catalog.resolve("fil4#sterio")
    }
  }

  /// The presets lilv finds for x42's autotune, against its presets.ttl as written (copied
  /// here by hand from /usr/lib/lv2/fat1.lv2/presets.ttl): labels, URIs and values.
  @Test func presetsAsTheirTurtleSays() throws {
    let autotune = try requirePlugin(("http://gareus.org/oss/lv2/fat1", "x42-plugins"))
    let presets = PluginCatalog.load().presets(of: autotune.uri)
    let expected = [
      Preset(
        uri: "http://gareus.org/oss/lv2/fat1/pset#live", label: "Live",
        values: [
          "bias": 0.5, "corr": 0.83999997, "fastmode": 1, "filter": 0.03347345, "offset": 0,
          "tuning": 440,
        ], hasState: false),
      Preset(
        uri: "http://gareus.org/oss/lv2/fat1/pset#slightly_corrected",
        label: "Slightly Corrected",
        values: ["bias": 0.5, "corr": 0.33, "fastmode": 0, "filter": 0.0425, "offset": 0],
        hasState: false),
    ]
    #expect(presets == expected)
    let catalog = PluginCatalog.load()
    #expect(try catalog.preset("live", of: autotune.uri) == expected[0])
    #expect(try catalog.preset(expected[1].uri, of: autotune.uri) == expected[1])
    #expect(
      throws: EffectError.unknownPreset(
        plugin: autotune.uri, name: "Loud", labels: ["Live", "Slightly Corrected"])
    ) { try catalog.preset("Loud", of: autotune.uri) }
    #expect(catalog.presets(of: TestPlugins.eq.0).isEmpty)
    // Kept in range, and a symbol the plugin has no port for left out.
    var odd = expected[1]
    odd.values["corr"] = 7
    odd.values["nothing"] = 1
    let values = odd.values(for: autotune)
    #expect(values["corr"] == Double(try autotune.control("corr").maximum))
    #expect(values["nothing"] == nil && values.count == 5)
  }
}
