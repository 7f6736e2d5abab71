/// What Tape knows about one installed LV2 plugin: its ports as a track sees them, and whether
/// Tape can run it.
///
/// Audio ports: ``audioInputs`` and ``audioOutputs`` count the *main* audio ports. Ports marked
/// `lv2:isSideChain` or `lv2:connectionOptional`, and ports in a port group that is
/// `pg:sideChainOf` another (as lsp marks its side chains), are left out of the counts: Tape
/// connects a side-chain input to silence and an optional output to a scratch buffer it
/// ignores. (A side-chain plugin then works on its own signal, as with no key connected.)
public struct PluginInfo: Sendable, Hashable, Codable {
  public var uri: String
  public var name: String
  public var author: String?
  public var audioInputs: Int
  public var audioOutputs: Int
  /// Side-chain audio inputs (`lv2:isSideChain`, or in a port group that is `pg:sideChainOf`
  /// another): what an effect's side chain feeds (see ``EffectProcessor/sidechainInput``).
  public var sidechainInputs: Int
  /// Control input ports, in port-index order: the order of every value array of the API.
  public var controls: [ControlPort]
  /// Has an `lv2:reportsLatency` control output (a look-ahead limiter, a linear-phase EQ).
  public var reportsLatency: Bool
  public var isHardRTCapable: Bool
  /// Has the LV2 State interface: state beyond its port values that Tape saves with the effect.
  public var hasState: Bool
  /// Uses the LV2 Worker extension (work done on a non-realtime thread).
  public var usesWorker: Bool
  /// Required LV2 features Tape does not provide (empty = usable, as far as features go).
  public var missingFeatures: [String]
  /// Ports Tape cannot connect (MIDI event ports, unknown types), by symbol.
  public var unsupportedPorts: [String]
  /// Its file parameters (`patch:writable` of range `atom:Path`: an impulse response, a
  /// sample), sorted by key: what `--file KEY=PATH` sets. Such a plugin runs on nothing
  /// without its file (x42's IR convolver renders silence), so a render refuses an effect
  /// that has none set (see ``FileParameter``).
  public var fileParameters: [FileParameter]

  /// Why Tape cannot run this plugin on a track, or nil when it can (on 1 and 2 channels):
  /// ``connectionProblem``. (A plugin that needs a file is usable: the file is the effect's,
  /// set with `--file`.)
  public var problem: String? { connectionProblem }

  /// The file parameter `key` names: its key (`ir`, the end of its URI) or its URI; an error
  /// listing the plugin's file parameters otherwise.
  public func fileParameter(_ key: String) throws(EffectError) -> FileParameter {
    guard let found = fileParameters.first(where: { $0.key == key || $0.uri == key }) else {
      throw .unknownFileParameter(plugin: uri, key: key, known: fileParameters.map(\.key))
    }
    return found
  }

  /// Why Tape cannot connect and run this plugin at all, or nil.
  public var connectionProblem: String? {
    if !missingFeatures.isEmpty {
      return "requires \(missingFeatures.joined(separator: ", "))"
    }
    if !unsupportedPorts.isEmpty {
      return "has ports Tape cannot connect (\(unsupportedPorts.joined(separator: ", ")))"
    }
    if audioInputs == 0 { return "has no audio input" }
    if audioOutputs == 0 { return "has no audio output" }
    if audioInputs > 2 || audioOutputs > 2 {
      return
        "has \(audioInputs) audio input\(audioInputs == 1 ? "" : "s") and \(audioOutputs) output\(audioOutputs == 1 ? "" : "s"); Tape runs 1 or 2"
    }
    return nil
  }

  /// Tape can run it (``problem`` is nil).
  public var isUsable: Bool { problem == nil }

  /// The control port with this symbol, or ``EffectError/unknownSymbol(plugin:symbol:nearest:)``
  /// naming the closest symbol.
  public func control(_ symbol: String) throws(EffectError) -> ControlPort {
    guard let port = controls.first(where: { $0.symbol == symbol }) else {
      throw .unknownSymbol(
        plugin: uri, symbol: symbol, nearest: closest(to: symbol, among: controls.map(\.symbol)))
    }
    return port
  }

  /// This plugin with every control's bounds and default in real units at `sampleRate` (see
  /// ``ControlPort/isSampleRateRelative``): what values given in hertz are checked against.
  public func atSampleRate(_ sampleRate: Int) -> PluginInfo {
    var plugin = self
    plugin.controls = controls.map { $0.atSampleRate(sampleRate) }
    return plugin
  }

  /// Every control's default value, in ``controls`` order (fractions of the rate for
  /// sample-rate-relative ports: use ``atSampleRate(_:)`` first).
  public var defaultValues: [Float] { controls.map(\.defaultValue) }

  init(_ description: PluginDescription) {
    uri = description.uri
    name = description.name
    author = description.author
    let main = description.ports.filter {
      $0.kind == .audio && !$0.isSideChain && !$0.isOptional
    }
    audioInputs = main.filter(\.isInput).count
    audioOutputs = main.filter { !$0.isInput }.count
    sidechainInputs =
      description.ports.filter {
        $0.kind == .audio && $0.isInput && $0.isSideChain
      }.count
    controls = description.ports.filter { $0.kind == .control && $0.isInput }.map(ControlPort.init)
    reportsLatency = description.ports.contains {
      $0.kind == .control && !$0.isInput && $0.reportsLatency
    }
    isHardRTCapable =
      description.requiredFeatures.contains(LV2URI.hardRTCapable)
      || description.optionalFeatures.contains(LV2URI.hardRTCapable)
    hasState = description.hasState
    usesWorker = description.hasWorker
    missingFeatures = description.requiredFeatures.filter { !providedFeatures.contains($0) }
      .sorted()
    unsupportedPorts = description.ports.filter { $0.kind == .other && !$0.isOptional }
      .map(\.symbol)
    fileParameters = description.fileParameters
  }
}

/// A plugin's file parameter: a `patch:writable` property whose range is `atom:Path` (x42's
/// IR convolver's impulse response, `http://gareus.org/oss/lv2/zeroconvolv#ir`). The host
/// sets it with a `patch:Set` message on the plugin's control port (see
/// ``EffectProcessor/init(plugin:catalog:sampleRate:channels:maximumFrames:values:bypassed:state:files:worker:alignment:present:)``).
public struct FileParameter: Sendable, Hashable, Codable {
  /// The property's URI.
  public var uri: String
  /// What commands name it by: the end of its URI, after its `#` (or its last `/`): `ir`.
  public var key: String
  /// Its `rdfs:label` ("Impulse Response"), or the key.
  public var label: String

  public init(uri: String, key: String, label: String) {
    self.uri = uri
    self.key = key
    self.label = label
  }

  /// The end of `uri` after its last `#`, or its last `/` when it has no `#`.
  static func key(of uri: String) -> String {
    if let hash = uri.lastIndex(of: "#") { return String(uri[uri.index(after: hash)...]) }
    return uri.split(separator: "/").last.map(String.init) ?? uri
  }
}
