import Effects
import Testing

@Suite("The LV2 plugin catalog")
struct PluginCatalogTests {
  @Test func listsInstalledPluginsSortedWithTheirPorts() throws {
    let catalog = PluginCatalog.load()
    #expect(catalog === PluginCatalog.load())
    #expect(catalog.plugins.map(\.uri) == catalog.plugins.map(\.uri).sorted())
    let eq = try requirePlugin(TestPlugins.eq)
    #expect(eq.audioInputs == 2 && eq.audioOutputs == 2)
    #expect(eq.missingFeatures.isEmpty && eq.isUsable)
    #expect(eq.controls.map(\.index) == eq.controls.map(\.index).sorted())
    let gain = try eq.control("gain1")
    #expect(gain.kind == .continuous && gain.unit == "dB" && gain.minimum < 0)
    let section = try eq.control("sec1")
    #expect(section.kind == .toggle)
    let limiter = try requirePlugin(TestPlugins.limiter)
    #expect(limiter.reportsLatency && limiter.isHardRTCapable)
    let amp = try requirePlugin(TestPlugins.amp)
    #expect(amp.audioInputs == 1 && amp.audioOutputs == 1 && !amp.reportsLatency)
  }

  @Test func nearestMatches() throws {
    _ = try requirePlugin(TestPlugins.limiter)
    let catalog = PluginCatalog.load()
    #expect(catalog.nearest(to: "http://gareus.org/oss/lv2/dpl#sterio") == TestPlugins.limiter.0)
    #expect(throws: EffectError.self) { try catalog.require("http://example.org/nothing") }
    let eq = try requirePlugin(TestPlugins.eq)
    #expect(
      throws: EffectError.unknownSymbol(plugin: eq.uri, symbol: "gain_1", nearest: "gain1")
    ) { try eq.control("gain_1") }
  }

  /// swh's IIR high-pass gives its cutoff as a fraction of the sample rate.
  @Test func sampleRateRelativeBounds() throws {
    let filter = try requirePlugin(("http://plugin.org.uk/swh-plugins/highpass_iir", "swh-lv2"))
    let cutoff = try filter.control("cutoff")
    #expect(cutoff.isSampleRateRelative && cutoff.maximum == 0.45)
    let real = try filter.atSampleRate(48_000).control("cutoff")
    #expect(!real.isSampleRateRelative && real.maximum == 0.45 * 48_000)
    #expect(try real.value(parsing: "1000") == 1_000)
    #expect(throws: EffectError.self) { try cutoff.value(parsing: "1000") }
  }

  @Test func parsingValues() throws {
    let eq = try requirePlugin(TestPlugins.eq)
    let gain = try eq.control("gain1")
    #expect(try gain.value(parsing: "-3") == -3)
    #expect(try gain.value(parsing: "-3dB") == -3)
    #expect(
      throws: EffectError.outOfRange(
        symbol: "gain1", value: -300, minimum: gain.minimum, maximum: gain.maximum)
    ) {
      try gain.value(parsing: "-300")
    }
    #expect(throws: EffectError.self) { try gain.value(parsing: "loud") }
    let section = try eq.control("sec1")
    #expect(try section.value(parsing: "on") == 1)
    #expect(try section.value(parsing: "OFF") == 0)
    #expect(section.display(1) == "on" && section.display(0) == "off")
    #expect(gain.display(-3) == "-3" && gain.display(0.5) == "0.5")
    let enumerated = try #require(
      PluginCatalog.load().plugins.lazy.flatMap(\.controls).first {
        $0.kind == .enumeration && $0.scalePoints.count >= 2
      })
    let point = enumerated.scalePoints[1]
    #expect(try enumerated.value(parsing: point.label.uppercased()) == point.value)
    #expect(enumerated.display(point.value) == point.label)
    do {
      _ = try enumerated.value(parsing: "no-such-label")
      Issue.record("an unknown label was taken")
    } catch {
      #expect(error.description.contains(enumerated.scalePoints[0].label))
    }
  }
}
