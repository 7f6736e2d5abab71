import Effects
import Foundation
import Testing

/// Plugins Tape cannot run, described by a bundle of Turtle written here (no plugin binary is
/// needed: each is refused before it would be loaded).
@Suite("Plugins Tape cannot run")
struct UnusablePluginTests {
  static let bundle = """
    @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
    @prefix ev: <http://lv2plug.in/ns/ext/event#> .
    <urn:tape:test:teleport> a lv2:Plugin ; lv2:binary <none.so> ;
      lv2:requiredFeature <http://example.org/ns#teleport> , <http://lv2plug.in/ns/ext/urid#map> ;
      lv2:port [ a lv2:AudioPort , lv2:InputPort ; lv2:index 0 ; lv2:symbol "in" ; lv2:name "In" ] ,
               [ a lv2:AudioPort , lv2:OutputPort ; lv2:index 1 ; lv2:symbol "out" ; lv2:name "Out" ] .
    <urn:tape:test:synth> a lv2:Plugin ; lv2:binary <none.so> ;
      lv2:port [ a lv2:AudioPort , lv2:OutputPort ; lv2:index 0 ; lv2:symbol "out" ; lv2:name "Out" ] .
    <urn:tape:test:surround> a lv2:Plugin ; lv2:binary <none.so> ;
      lv2:port [ a lv2:AudioPort , lv2:InputPort ; lv2:index 0 ; lv2:symbol "in" ; lv2:name "In" ] ,
               [ a lv2:AudioPort , lv2:OutputPort ; lv2:index 1 ; lv2:symbol "l" ; lv2:name "L" ] ,
               [ a lv2:AudioPort , lv2:OutputPort ; lv2:index 2 ; lv2:symbol "c" ; lv2:name "C" ] ,
               [ a lv2:AudioPort , lv2:OutputPort ; lv2:index 3 ; lv2:symbol "r" ; lv2:name "R" ] .
    <urn:tape:test:events> a lv2:Plugin ; lv2:binary <none.so> ;
      lv2:port [ a lv2:AudioPort , lv2:InputPort ; lv2:index 0 ; lv2:symbol "in" ; lv2:name "In" ] ,
               [ a lv2:AudioPort , lv2:OutputPort ; lv2:index 1 ; lv2:symbol "out" ; lv2:name "Out" ] ,
               [ a ev:EventPort , lv2:InputPort ; lv2:index 2 ; lv2:symbol "midi" ; lv2:name "MIDI" ] .
    """

  static func catalog() throws -> (PluginCatalog, URL) {
    let folder = try temporaryFolder()
    let bundle = folder.appendingPathComponent("unusable.lv2")
    try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
    let manifest = ["teleport", "synth", "surround", "events"].map {
      "<urn:tape:test:\($0)> a <http://lv2plug.in/ns/lv2core#Plugin> ; <http://www.w3.org/2000/01/rdf-schema#seeAlso> <plugins.ttl> ."
    }.joined(separator: "\n")
    try manifest.write(
      to: bundle.appendingPathComponent("manifest.ttl"), atomically: true, encoding: .utf8)
    try Self.bundle.write(
      to: bundle.appendingPathComponent("plugins.ttl"), atomically: true, encoding: .utf8)
    return (PluginCatalog.load(path: folder.path), folder)
  }

  @Test func eachIsRefusedSayingWhy() throws {
    let (catalog, folder) = try Self.catalog()
    defer { try? FileManager.default.removeItem(at: folder) }
    #expect(
      catalog.uris == [
        "urn:tape:test:events", "urn:tape:test:surround", "urn:tape:test:synth",
        "urn:tape:test:teleport",
      ])
    let expected: [String: String] = [
      "urn:tape:test:teleport": "requires http://example.org/ns#teleport",
      "urn:tape:test:synth": "has no audio input",
      "urn:tape:test:surround": "has 1 audio input and 3 outputs; Tape runs 1 or 2",
      "urn:tape:test:events": "has ports Tape cannot connect (midi)",
    ]
    for plugin in catalog.plugins {
      #expect(plugin.problem == expected[plugin.uri], "\(plugin.uri)")
      #expect(!plugin.isUsable)
      let error: EffectError =
        plugin.uri == "urn:tape:test:teleport"
        ? .missingFeatures(plugin: plugin.uri, features: ["http://example.org/ns#teleport"])
        : .unsupportedPorts(plugin: plugin.uri, reason: expected[plugin.uri] ?? "")
      #expect(throws: error) {
        try EffectProcessor(
          plugin: plugin, catalog: catalog, sampleRate: 48_000, channels: 2, maximumFrames: 256,
          values: plugin.defaultValues, bypassed: false, state: nil)
      }
    }
    #expect(catalog.plugins.count == 4)
  }
}
