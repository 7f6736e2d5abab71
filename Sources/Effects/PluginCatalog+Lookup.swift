/// One of a plugin's LV2 presets (`pset:Preset`): a label, port values, and maybe state of its
/// own beyond them.
///
/// ```swift
/// let live = try catalog.preset("Live", of: "http://gareus.org/oss/lv2/fat1")
/// live.values["corr"]  // 0.84
/// ```
public struct Preset: Sendable, Hashable, Codable {
  /// The preset's URI (`http://gareus.org/oss/lv2/fat1/pset#live`).
  public var uri: String
  /// Its name as the plugin gives it (`rdfs:label`): what `--preset` takes.
  public var label: String
  /// The port values it sets, by symbol; the plugin's other ports are left as they are.
  public var values: [String: Float]
  /// It carries state beyond its port values (LV2 State), restored into the plugin with it.
  public var hasState: Bool

  public init(uri: String, label: String, values: [String: Float], hasState: Bool) {
    self.uri = uri
    self.label = label
    self.values = values
    self.hasState = hasState
  }

  /// Its values for `plugin`'s control ports: each kept within the port's range, and a symbol
  /// the plugin has no port for left out (a preset written for another version of it).
  public func values(for plugin: PluginInfo) -> [String: Double] {
    var result: [String: Double] = [:]
    for port in plugin.controls {
      guard let value = values[port.symbol] else { continue }
      result[port.symbol] = Double(min(max(value, port.minimum), port.maximum))
    }
    return result
  }
}

extension PluginCatalog {
  /// The installed plugin that `name` names: its URI; the end of its URI as `tape ls` shows it
  /// (`fil4#stereo`, the part after the last `/`); or its name (`x42-eq - Parametric
  /// Equalizer Stereo`, case-insensitive). A name several plugins answer to is refused, listing
  /// them; one no plugin answers to names the nearest URI.
  ///
  /// ```swift
  /// try catalog.resolve("dpl#stereo").uri  // "http://gareus.org/oss/lv2/dpl#stereo"
  /// ```
  public func resolve(_ name: String) throws(EffectError) -> PluginInfo {
    if let plugin = plugin(name) { return plugin }
    let short = uris.filter { Self.shortName($0) == name }
    if short.count > 1 { throw .ambiguousPlugin(name: name, candidates: short) }
    if let uri = short.first, let plugin = plugin(uri) { return plugin }
    // By name: every plugin's data is read (about a second), only when the rest found nothing.
    let lowered = name.lowercased()
    let named = plugins.filter { $0.name.lowercased() == lowered }.map(\.uri)
    if named.count > 1 { throw .ambiguousPlugin(name: name, candidates: named) }
    if let uri = named.first, let plugin = plugin(uri) { return plugin }
    throw .unknownPlugin(uri: name, nearest: nearest(to: name))
  }

  /// The end of `uri` as `tape ls` and `tape draw` show an effect's plugin: what follows its
  /// last `/` (`fil4#stereo`), or the whole URI when it has none.
  public static func shortName(_ uri: String) -> String {
    uri.split(separator: "/").last.map(String.init) ?? uri
  }

  /// The presets of the plugin `uri` (LV2 presets that apply to it, from its bundle and any
  /// other installed one), sorted by label; empty when it has none or is not installed.
  public func presets(of uri: String) -> [Preset] {
    world.presets(uri).map { description in
      Preset(
        uri: description.uri, label: description.label,
        values: Dictionary(description.values.map { ($0.symbol, $0.value) }) { first, _ in first },
        hasState: description.hasState)
    }.sorted { ($0.label.lowercased(), $0.uri) < ($1.label.lowercased(), $1.uri) }
  }

  /// The preset of the plugin `uri` that `name` names: its label (case-insensitive) or its
  /// URI. An unknown name is an error listing the plugin's presets; a label two presets share
  /// is refused, naming their URIs.
  public func preset(_ name: String, of uri: String) throws(EffectError) -> Preset {
    let all = presets(of: uri)
    if let exact = all.first(where: { $0.uri == name }) { return exact }
    let matching = all.filter { $0.label.lowercased() == name.lowercased() }
    if matching.count > 1 {
      throw .ambiguousPreset(plugin: uri, name: name, candidates: matching.map(\.uri))
    }
    guard let preset = matching.first else {
      throw .unknownPreset(plugin: uri, name: name, labels: all.map(\.label))
    }
    return preset
  }

  /// The presets `plugin` needs one of, when it runs on what a preset gives it and has
  /// nothing of its own: a plugin with LV2 State that saved none (`savedState` nil) and whose
  /// every preset carries state. x42's preset convolvers are such: their presets name the
  /// impulse response, and without one they render silence. Empty for any other plugin.
  public func presetsNeeded(by plugin: PluginInfo, savedState: [UInt8]?) -> [Preset] {
    guard plugin.hasState, savedState == nil else { return [] }
    let presets = presets(of: plugin.uri)
    guard !presets.isEmpty, presets.allSatisfy(\.hasState) else { return [] }
    return presets
  }

  /// A usable plugin of the same family as `uri` (the same URI before its `#`: x42's
  /// `zeroconvolv#Stereo` for `zeroconvolv#CfgStereo`), the nearest by edit distance: what to
  /// suggest in place of one Tape cannot run. Nil when the family has none.
  public func usableSibling(of uri: String) -> String? {
    let family = uri.split(separator: "#").first.map(String.init) ?? uri
    let siblings = uris.filter { $0 != uri && $0.hasPrefix(family + "#") }
    let distance = { (candidate: String) in
      editDistance(Array(uri.unicodeScalars), Array(candidate.unicodeScalars))
    }
    return siblings.filter { plugin($0)?.isUsable == true }.min { distance($0) < distance($1) }
  }
}
