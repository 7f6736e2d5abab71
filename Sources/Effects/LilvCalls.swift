// Every lilv and LV2 C call of Tape goes through this file: the world and its queries, the
// host features handed to plugins (URID map, options, worker schedule), and an instance's
// connect/activate/run/deactivate, worker and state entry points.

import Atomics
import CLilv
import Glibc
import Synchronization

/// The URIs of the LV2 vocabulary Tape reads or provides.
enum LV2URI {
  static let audioPort = "http://lv2plug.in/ns/lv2core#AudioPort"
  static let controlPort = "http://lv2plug.in/ns/lv2core#ControlPort"
  static let cvPort = "http://lv2plug.in/ns/lv2core#CVPort"
  static let inputPort = "http://lv2plug.in/ns/lv2core#InputPort"
  static let outputPort = "http://lv2plug.in/ns/lv2core#OutputPort"
  static let atomPort = "http://lv2plug.in/ns/ext/atom#AtomPort"
  static let connectionOptional = "http://lv2plug.in/ns/lv2core#connectionOptional"
  static let isSideChain = "http://lv2plug.in/ns/lv2core#isSideChain"
  static let portGroup = "http://lv2plug.in/ns/ext/port-groups#group"
  static let sideChainOf = "http://lv2plug.in/ns/ext/port-groups#sideChainOf"
  static let reportsLatency = "http://lv2plug.in/ns/lv2core#reportsLatency"
  static let toggled = "http://lv2plug.in/ns/lv2core#toggled"
  static let integer = "http://lv2plug.in/ns/lv2core#integer"
  static let enumeration = "http://lv2plug.in/ns/lv2core#enumeration"
  static let sampleRate = "http://lv2plug.in/ns/lv2core#sampleRate"
  static let hardRTCapable = "http://lv2plug.in/ns/lv2core#hardRTCapable"
  static let inPlaceBroken = "http://lv2plug.in/ns/lv2core#inPlaceBroken"
  static let isLive = "http://lv2plug.in/ns/lv2core#isLive"
  static let logarithmic = "http://lv2plug.in/ns/ext/port-props#logarithmic"
  static let unit = "http://lv2plug.in/ns/extensions/units#unit"
  static let unitSymbol = "http://lv2plug.in/ns/extensions/units#symbol"
  static let minimumSize = "http://lv2plug.in/ns/ext/resize-port#minimumSize"
  static let urodMap = "http://lv2plug.in/ns/ext/urid#map"
  static let uridUnmap = "http://lv2plug.in/ns/ext/urid#unmap"
  static let options = "http://lv2plug.in/ns/ext/options#options"
  static let boundedBlockLength = "http://lv2plug.in/ns/ext/buf-size#boundedBlockLength"
  static let minBlockLength = "http://lv2plug.in/ns/ext/buf-size#minBlockLength"
  static let maxBlockLength = "http://lv2plug.in/ns/ext/buf-size#maxBlockLength"
  static let nominalBlockLength = "http://lv2plug.in/ns/ext/buf-size#nominalBlockLength"
  static let sequenceSize = "http://lv2plug.in/ns/ext/buf-size#sequenceSize"
  static let parameterSampleRate = "http://lv2plug.in/ns/ext/parameters#sampleRate"
  static let atomInt = "http://lv2plug.in/ns/ext/atom#Int"
  static let atomFloat = "http://lv2plug.in/ns/ext/atom#Float"
  static let atomSequence = "http://lv2plug.in/ns/ext/atom#Sequence"
  static let atomChunk = "http://lv2plug.in/ns/ext/atom#Chunk"
  static let workSchedule = "http://lv2plug.in/ns/ext/worker#schedule"
  static let workInterface = "http://lv2plug.in/ns/ext/worker#interface"
  static let stateInterface = "http://lv2plug.in/ns/ext/state#interface"
  static let loadDefaultState = "http://lv2plug.in/ns/ext/state#loadDefaultState"
  static let stateURI = "urn:tape:effect-state"
  static let preset = "http://lv2plug.in/ns/ext/presets#Preset"
  static let patchWritable = "http://lv2plug.in/ns/ext/patch#writable"
  static let atomPath = "http://lv2plug.in/ns/ext/atom#Path"
  static let atomObject = "http://lv2plug.in/ns/ext/atom#Object"
  static let atomURID = "http://lv2plug.in/ns/ext/atom#URID"
  static let patchSet = "http://lv2plug.in/ns/ext/patch#Set"
  static let patchGet = "http://lv2plug.in/ns/ext/patch#Get"
  static let patchProperty = "http://lv2plug.in/ns/ext/patch#property"
  static let patchValue = "http://lv2plug.in/ns/ext/patch#value"
  static let atomDouble = "http://lv2plug.in/ns/ext/atom#Double"
  static let atomLong = "http://lv2plug.in/ns/ext/atom#Long"
  static let atomBool = "http://lv2plug.in/ns/ext/atom#Bool"
  static let rdfsRange = "http://www.w3.org/2000/01/rdf-schema#range"
  static let rdfsLabel = "http://www.w3.org/2000/01/rdf-schema#label"
}

/// The features Tape gives every plugin it instantiates (`work:schedule` only to plugins with
/// the worker interface). What a plugin requires beyond these makes it unusable.
let providedFeatures: Set<String> = [
  LV2URI.urodMap, LV2URI.uridUnmap, LV2URI.options, LV2URI.boundedBlockLength,
  LV2URI.workSchedule, LV2URI.loadDefaultState, LV2URI.hardRTCapable, LV2URI.inPlaceBroken,
  LV2URI.isLive,
]

// MARK: - URID map

/// The process's one URID map: URIs to small integers and back, as LV2 plugins need them.
///
/// Thread-safe (a mutex): plugins map at instantiation, and some do while running. The C strings
/// `unmap` returns live as long as the process.
final class URIDMap: @unchecked Sendable {
  static let shared = URIDMap()

  private struct Table {
    var ids: [String: UInt32] = [:]
    var strings: [UnsafeMutablePointer<CChar>] = []
  }
  private let table = Mutex(Table())

  /// The map and unmap features' data, allocated once.
  let mapFeature: UnsafeMutablePointer<LV2_URID_Map>
  let unmapFeature: UnsafeMutablePointer<LV2_URID_Unmap>
  /// The same map, except that it gives atom:Path an id no plugin is given
  /// (``pathStandIn``), for `lilv_state_new_from_instance` alone (see
  /// ``LilvWorld/saveState(_:of:features:quietPaths:)``).
  let quietPathsFeature: UnsafeMutablePointer<LV2_URID_Map>
  static let pathStandIn = UInt32.max - 1

  private init() {
    mapFeature = .allocate(capacity: 1)
    unmapFeature = .allocate(capacity: 1)
    quietPathsFeature = .allocate(capacity: 1)
    let handle = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
    mapFeature.initialize(to: LV2_URID_Map(handle: handle, map: uridMapCallback))
    unmapFeature.initialize(to: LV2_URID_Unmap(handle: handle, unmap: uridUnmapCallback))
    quietPathsFeature.initialize(to: LV2_URID_Map(handle: handle, map: quietPathsMapCallback))
  }

  func map(_ uri: String) -> UInt32 {
    table.withLock { table in
      if let id = table.ids[uri] { return id }
      let copy = strdup(uri)
      guard let copy else { return 0 }
      table.strings.append(copy)
      let id = UInt32(table.strings.count)
      table.ids[uri] = id
      return id
    }
  }

  func unmap(_ id: UInt32) -> UnsafePointer<CChar>? {
    table.withLock { table in
      id >= 1 && Int(id) <= table.strings.count ? UnsafePointer(table.strings[Int(id) - 1]) : nil
    }
  }
}

private func uridMapCallback(
  _ handle: LV2_URID_Map_Handle?, _ uri: UnsafePointer<CChar>?
) -> LV2_URID {
  guard let handle, let uri else { return 0 }
  return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().map(String(cString: uri))
}

private func quietPathsMapCallback(
  _ handle: LV2_URID_Map_Handle?, _ uri: UnsafePointer<CChar>?
) -> LV2_URID {
  guard let handle, let uri else { return 0 }
  let string = String(cString: uri)
  if string == LV2URI.atomPath { return URIDMap.pathStandIn }
  return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().map(string)
}

private func uridUnmapCallback(
  _ handle: LV2_URID_Unmap_Handle?, _ urid: LV2_URID
) -> UnsafePointer<CChar>? {
  guard let handle else { return nil }
  return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().unmap(urid)
}

// MARK: - The world

/// What lilv says about one port, read once when the catalog loads.
struct PortDescription: Sendable, Hashable {
  enum Kind: Sendable, Hashable { case audio, control, atom, cv, other }
  var index: Int
  var symbol: String
  var name: String
  var kind: Kind
  var isInput: Bool
  var isOptional: Bool
  var isSideChain: Bool
  var reportsLatency: Bool
  var toggled: Bool
  var integer: Bool
  var enumeration: Bool
  var logarithmic: Bool
  var sampleRateRelative: Bool
  var minimum: Float?
  var maximum: Float?
  var defaultValue: Float?
  var unit: String?
  var scalePoints: [(label: String, value: Float)]
  var minimumSize: Int?

  static func == (lhs: PortDescription, rhs: PortDescription) -> Bool { lhs.index == rhs.index }
  func hash(into hasher: inout Hasher) { hasher.combine(index) }
}

/// What lilv says about one plugin.
struct PluginDescription: Sendable {
  var uri: String
  var name: String
  var author: String?
  var requiredFeatures: [String]
  var optionalFeatures: [String]
  var hasWorker: Bool
  var hasState: Bool
  var ports: [PortDescription]
  /// The plugin's `patch:writable` parameters that are files (`atom:Path`): an impulse
  /// response, a sample.
  var fileParameters: [FileParameter] = []
}

/// What lilv says about one of a plugin's presets (`pset:Preset`).
struct PresetDescription: Sendable {
  var uri: String
  var label: String
  /// Its port values, by symbol, as the preset lists them.
  var values: [(symbol: String, value: Float)]
  /// It has state beyond its port values (`state:state`).
  var hasState: Bool
}

/// A lilv world over every installed bundle (`LV2_PATH` respected) and the plugins in it.
///
/// lilv's world is not thread-safe: every use of it holds ``lock``.
final class LilvWorld: @unchecked Sendable {
  private let world: OpaquePointer
  let lock = Mutex(())
  /// The world's plugins by URI (lilv's pointers, valid as long as the world).
  private var pluginsByURI: [String: OpaquePointer] = [:]
  /// Every installed plugin's URI, sorted.
  let uris: [String]
  /// Descriptions made so far (under ``lock``): lilv reads a bundle's data only when one of
  /// its plugins is asked about, so describing one plugin costs milliseconds and all of them
  /// about a second.
  private var described: [String: PluginDescription] = [:]

  /// - Parameter path: where to look instead of `LV2_PATH` and the system's folders
  ///   (colon-separated), or nil.
  init(path: String? = nil) {
    // lilv_world_new only fails when out of memory; a process in that state has worse troubles.
    guard let world = lilv_world_new() else {
      preconditionFailure("lilv could not create a world (out of memory)")
    }
    self.world = world
    if let path {
      let value = lilv_new_string(world, path)
      lilv_world_set_option(world, "http://drobilla.net/ns/lilv#lv2-path", value)
      lilv_node_free(value)
    }
    lilv_world_load_all(world)
    let all = lilv_world_get_all_plugins(world)
    var iterator = lilv_plugins_begin(all)
    var byURI: [String: OpaquePointer] = [:]
    while !lilv_plugins_is_end(all, iterator) {
      if let plugin = lilv_plugins_get(all, iterator),
        let uri = lilv_node_as_uri(lilv_plugin_get_uri(plugin)).map({ String(cString: $0) })
      {
        byURI[uri] = plugin
      }
      iterator = lilv_plugins_next(all, iterator)
    }
    pluginsByURI = byURI
    uris = byURI.keys.sorted()
  }

  /// What lilv says about the plugin with this URI, nil when none is installed.
  func description(_ uri: String) -> PluginDescription? {
    lock.withLock { _ in
      if let known = described[uri] { return known }
      guard let plugin = pluginsByURI[uri] else { return nil }
      let made = describe(plugin)
      described[uri] = made
      return made
    }
  }

  deinit {
    for node in nodes.values { lilv_node_free(node) }
    lilv_world_free(world)
  }

  /// URI nodes made so far, kept until the world goes (under ``lock``): describing every
  /// plugin asks about a dozen properties of each of thousands of ports.
  private var nodes: [String: OpaquePointer] = [:]

  private func withNode<T>(_ uri: String, _ body: (OpaquePointer?) -> T) -> T {
    if let made = nodes[uri] { return body(made) }
    let made = lilv_new_uri(world, uri)
    if let made { nodes[uri] = made }
    return body(made)
  }

  private func string(_ node: OpaquePointer?) -> String? {
    guard let node else { return nil }
    if lilv_node_is_uri(node) { return lilv_node_as_uri(node).map { String(cString: $0) } }
    return lilv_node_as_string(node).map { String(cString: $0) }
  }

  private func number(_ node: OpaquePointer?) -> Float? {
    guard let node, lilv_node_is_float(node) || lilv_node_is_int(node) else { return nil }
    return lilv_node_as_float(node)
  }

  private func uris(_ nodes: UnsafeMutableRawPointer?) -> [String] {
    guard let nodes else { return [] }
    defer { lilv_nodes_free(nodes) }
    var result: [String] = []
    var iterator = lilv_nodes_begin(nodes)
    while !lilv_nodes_is_end(nodes, iterator) {
      if let value = string(lilv_nodes_get(nodes, iterator)) { result.append(value) }
      iterator = lilv_nodes_next(nodes, iterator)
    }
    return result
  }

  private func describe(_ plugin: OpaquePointer) -> PluginDescription {
    let uri = string(lilv_plugin_get_uri(plugin)) ?? ""
    let nameNode = lilv_plugin_get_name(plugin)
    let name = string(nameNode) ?? uri
    lilv_node_free(nameNode)
    let authorNode = lilv_plugin_get_author_name(plugin)
    let author = string(authorNode)
    lilv_node_free(authorNode)
    let hasWorker = withNode(LV2URI.workInterface) { lilv_plugin_has_extension_data(plugin, $0) }
    let hasState = withNode(LV2URI.stateInterface) { lilv_plugin_has_extension_data(plugin, $0) }
    var ports: [PortDescription] = []
    for index in 0..<lilv_plugin_get_num_ports(plugin) {
      guard let port = lilv_plugin_get_port_by_index(plugin, index) else { continue }
      ports.append(describe(port, index: Int(index), of: plugin))
    }
    return PluginDescription(
      uri: uri, name: name, author: author,
      requiredFeatures: uris(lilv_plugin_get_required_features(plugin)),
      optionalFeatures: uris(lilv_plugin_get_optional_features(plugin)),
      hasWorker: hasWorker, hasState: hasState, ports: ports,
      fileParameters: fileParameters(of: plugin))
  }

  /// `plugin`'s `patch:writable` parameters whose range is `atom:Path`, sorted by key.
  private func fileParameters(of plugin: OpaquePointer) -> [FileParameter] {
    guard
      let writable = withNode(LV2URI.patchWritable, { lilv_plugin_get_value(plugin, $0) })
    else { return [] }
    defer { lilv_nodes_free(writable) }
    var found: [FileParameter] = []
    var iterator = lilv_nodes_begin(writable)
    while !lilv_nodes_is_end(writable, iterator) {
      if let parameter = lilv_nodes_get(writable, iterator), let uri = string(parameter) {
        let range = withNode(LV2URI.rdfsRange) { lilv_world_get(world, parameter, $0, nil) }
        if string(range) == LV2URI.atomPath {
          let label = withNode(LV2URI.rdfsLabel) { lilv_world_get(world, parameter, $0, nil) }
          let key = FileParameter.key(of: uri)
          found.append(FileParameter(uri: uri, key: key, label: string(label) ?? key))
          lilv_node_free(label)
        }
        lilv_node_free(range)
      }
      iterator = lilv_nodes_next(writable, iterator)
    }
    return found.sorted { ($0.key, $0.uri) < ($1.key, $1.uri) }
  }

  /// The presets of the plugin `uri` (`pset:Preset` resources that apply to it), each
  /// loaded as lilv loads a preset's state: its label, its port values and whether it has
  /// state of its own. Empty for a plugin that is not installed or has none.
  func presets(_ uri: String) -> [PresetDescription] {
    lock.withLock { _ in
      guard let plugin = pluginsByURI[uri],
        let related = withNode(LV2URI.preset, { lilv_plugin_get_related(plugin, $0) })
      else { return [] }
      defer { lilv_nodes_free(related) }
      var presets: [PresetDescription] = []
      var iterator = lilv_nodes_begin(related)
      while !lilv_nodes_is_end(related, iterator) {
        defer { iterator = lilv_nodes_next(related, iterator) }
        guard let node = lilv_nodes_get(related, iterator), let presetURI = string(node) else {
          continue
        }
        lilv_world_load_resource(world, node)
        guard let state = lilv_state_new_from_world(world, URIDMap.shared.mapFeature, node)
        else { continue }
        defer { lilv_state_free(state) }
        let collected = PortValueList()
        lilv_state_emit_port_values(
          state,
          { symbol, data, value, size, type in
            guard let symbol, let data, let value else { return }
            let list = Unmanaged<PortValueList>.fromOpaque(data).takeUnretainedValue()
            if let number = portValue(value, size: Int(size), type: type) {
              list.values.append((String(cString: symbol), number))
            }
          }, Unmanaged.passUnretained(collected).toOpaque())
        let label =
          lilv_state_get_label(state).map { String(cString: $0) }
          ?? presetURI.split(separator: "#").last.map(String.init) ?? presetURI
        presets.append(
          PresetDescription(
            uri: presetURI, label: label, values: collected.values,
            hasState: lilv_state_get_num_properties(state) > 0))
      }
      return presets
    }
  }

  /// Restores the state of the preset `presetURI` (what it holds beyond its port values) into
  /// `instance`, as jalv applies a preset; false when lilv cannot load it.
  func restorePreset(
    _ presetURI: String, into instance: LV2Instance,
    features: UnsafePointer<UnsafePointer<LV2_Feature>?>
  ) -> Bool {
    lock.withLock { _ in
      guard let node = lilv_new_uri(world, presetURI) else { return false }
      defer { lilv_node_free(node) }
      lilv_world_load_resource(world, node)
      guard let state = lilv_state_new_from_world(world, URIDMap.shared.mapFeature, node) else {
        return false
      }
      lilv_state_restore(state, instance.pointer, nil, nil, 0, features)
      lilv_state_free(state)
      return true
    }
  }

  private func describe(
    _ port: OpaquePointer, index: Int, of plugin: OpaquePointer
  ) -> PortDescription {
    let isA = { (uri: String) in self.withNode(uri) { lilv_port_is_a(plugin, port, $0) } }
    let has = { (uri: String) in self.withNode(uri) { lilv_port_has_property(plugin, port, $0) } }
    let kind: PortDescription.Kind =
      isA(LV2URI.audioPort)
      ? .audio
      : isA(LV2URI.controlPort)
        ? .control : isA(LV2URI.atomPort) ? .atom : isA(LV2URI.cvPort) ? .cv : .other
    let nameNode = lilv_port_get_name(plugin, port)
    defer { lilv_node_free(nameNode) }
    let symbol = string(lilv_port_get_symbol(plugin, port)) ?? "port\(index)"
    var defaultNode: OpaquePointer?
    var minimumNode: OpaquePointer?
    var maximumNode: OpaquePointer?
    lilv_port_get_range(plugin, port, &defaultNode, &minimumNode, &maximumNode)
    defer {
      lilv_node_free(defaultNode)
      lilv_node_free(minimumNode)
      lilv_node_free(maximumNode)
    }
    var unit: String?
    if let units = withNode(LV2URI.unit, { lilv_port_get_value(plugin, port, $0) }) {
      if let first = lilv_nodes_get_first(units) {
        let symbolNode = withNode(LV2URI.unitSymbol) {
          lilv_world_get(world, first, $0, nil)
        }
        unit =
          string(symbolNode)
          ?? string(first).map { uri in
            uri.split(separator: "#").last.map(String.init) ?? uri
          }
        lilv_node_free(symbolNode)
      }
      lilv_nodes_free(units)
    }
    // A side-chain input: marked lv2:isSideChain, or in a port group that is the side chain
    // of another (lsp's plugins say it this way).
    var sideChain = has(LV2URI.isSideChain)
    if !sideChain, let group = withNode(LV2URI.portGroup, { lilv_port_get(plugin, port, $0) }) {
      let of = withNode(LV2URI.sideChainOf) { lilv_world_get(world, group, $0, nil) }
      sideChain = of != nil
      lilv_node_free(of)
      lilv_node_free(group)
    }
    var minimumSize: Int?
    if let sizes = withNode(LV2URI.minimumSize, { lilv_port_get_value(plugin, port, $0) }) {
      if let first = lilv_nodes_get_first(sizes), lilv_node_is_int(first) {
        minimumSize = Int(lilv_node_as_int(first))
      }
      lilv_nodes_free(sizes)
    }
    var points: [(label: String, value: Float)] = []
    if let scale = lilv_port_get_scale_points(plugin, port) {
      var iterator = lilv_scale_points_begin(scale)
      while !lilv_scale_points_is_end(scale, iterator) {
        if let point = lilv_scale_points_get(scale, iterator),
          let label = string(lilv_scale_point_get_label(point)),
          let value = number(lilv_scale_point_get_value(point))
        {
          points.append((label, value))
        }
        iterator = lilv_scale_points_next(scale, iterator)
      }
      lilv_scale_points_free(scale)
      points.sort { $0.value < $1.value }
    }
    return PortDescription(
      index: index, symbol: symbol, name: string(nameNode) ?? symbol, kind: kind,
      isInput: isA(LV2URI.inputPort), isOptional: has(LV2URI.connectionOptional),
      isSideChain: sideChain, reportsLatency: has(LV2URI.reportsLatency),
      toggled: has(LV2URI.toggled), integer: has(LV2URI.integer),
      enumeration: has(LV2URI.enumeration), logarithmic: has(LV2URI.logarithmic),
      sampleRateRelative: has(LV2URI.sampleRate), minimum: number(minimumNode),
      maximum: number(maximumNode), defaultValue: number(defaultNode), unit: unit,
      scalePoints: points, minimumSize: minimumSize)
  }

  /// A new instance of `uri` at `sampleRate` with `features`, or nil when the plugin refuses.
  /// Off the audio thread.
  func instantiate(
    _ uri: String, sampleRate: Int, features: UnsafePointer<UnsafePointer<LV2_Feature>?>
  ) -> LV2Instance? {
    lock.withLock { _ in
      guard let plugin = pluginsByURI[uri],
        let made = lilv_plugin_instantiate(plugin, Double(sampleRate), features)
      else { return nil }
      return LV2Instance(made)
    }
  }

  /// Frees `instance` (its plugin's `cleanup`, then lilv closes the plugin's library when no
  /// other instance of this world uses it), under the same lock as ``instantiate(_:sampleRate:features:)``.
  /// Why: lilv keeps a world's open libraries in a list with a count of instances; a free
  /// outside the lock could close a library that an instantiation on another thread had just
  /// found in the list, and the process crashed in lilv or in the unmapped plugin
  /// (`InstanceLifetimeTests`). LV2 also asks that a plugin's instantiation functions never
  /// run at the same time. Off the audio thread.
  func free(_ instance: LV2Instance) {
    lock.withLock { _ in lilv_instance_free(instance.pointer) }
  }

  /// The plugin's own default state (`state:loadDefaultState`), restored into `instance`.
  func restoreDefaultState(
    _ uri: String, into instance: LV2Instance,
    features: UnsafePointer<UnsafePointer<LV2_Feature>?>
  ) {
    lock.withLock { _ in
      guard
        let state = withNode(
          uri, { lilv_state_new_from_world(world, URIDMap.shared.mapFeature, $0) })
      else { return }
      lilv_state_restore(state, instance.pointer, nil, nil, 0, features)
      lilv_state_free(state)
    }
  }

  /// The instance's non-port state as Turtle text (lilv's serialization, URIs not URIDs, so it
  /// reads back in another process); nil when the plugin saved nothing.
  ///
  /// Rule: with `quietPaths`, lilv's state is made with a map that gives atom:Path another id
  /// (``URIDMap/quietPathsFeature``), so that `lilv_state_to_string` writes a file's path as
  /// the plain data it is (the same Turtle: its type is unmapped from the plugin's own id)
  /// instead of printing "Writing absolute path …" on standard error for each, which lilv
  /// 0.24 does for every path of a state serialized without a folder.
  /// What if: a plugin that stores a path without `LV2_STATE_IS_POD` loses it that way (lilv
  /// keeps only plain data, and says "Lost non-POD property"): so only a caller that can tell
  /// a path is missing asks for it (the check that a plugin holds its files, which then asks
  /// again without); state stored with an effect (a preset's) is made the loud way.
  func saveState(
    _ uri: String, of instance: LV2Instance, features: UnsafePointer<UnsafePointer<LV2_Feature>?>,
    quietPaths: Bool = false
  ) -> [UInt8]? {
    lock.withLock { _ -> [UInt8]? in
      let map = quietPaths ? URIDMap.shared.quietPathsFeature : URIDMap.shared.mapFeature
      guard let plugin = pluginsByURI[uri],
        let state = lilv_state_new_from_instance(
          plugin, instance.pointer, map, nil, nil, nil, nil, nil, nil,
          UInt32(LV2_STATE_IS_POD.rawValue | LV2_STATE_IS_PORTABLE.rawValue), features)
      else { return nil }
      defer { lilv_state_free(state) }
      guard lilv_state_get_num_properties(state) > 0,
        let text = lilv_state_to_string(
          world, URIDMap.shared.mapFeature, URIDMap.shared.unmapFeature, state, LV2URI.stateURI,
          nil)
      else { return nil }
      defer { lilv_free(text) }
      return Array(String(cString: text).utf8)
    }
  }

  /// Restores state that ``saveState(_:of:features:)`` made; false when it cannot be parsed.
  func restoreState(
    _ bytes: [UInt8], into instance: LV2Instance,
    features: UnsafePointer<UnsafePointer<LV2_Feature>?>
  ) -> Bool {
    lock.withLock { _ in
      // What saveState wrote names its subject; anything else is refused here rather than by
      // serd, which would print its complaint on stderr.
      guard let text = String(validating: bytes, as: UTF8.self),
        text.contains("<\(LV2URI.stateURI)>")
      else { return false }
      guard let state = lilv_state_new_from_string(world, URIDMap.shared.mapFeature, text) else {
        return false
      }
      lilv_state_restore(state, instance.pointer, nil, nil, 0, features)
      lilv_state_free(state)
      return true
    }
  }
}

/// The port values a preset's state gives, collected by lilv's callback.
private final class PortValueList {
  var values: [(symbol: String, value: Float)] = []
}

/// A port value as lilv gives it (an atom's body and type), as a number; nil for a type that
/// is not one.
private func portValue(_ value: UnsafeRawPointer, size: Int, type: UInt32) -> Float? {
  let map = URIDMap.shared
  switch type {
  case map.map(LV2URI.atomFloat) where size >= 4: return value.loadUnaligned(as: Float.self)
  case map.map(LV2URI.atomDouble) where size >= 8:
    return Float(value.loadUnaligned(as: Double.self))
  case map.map(LV2URI.atomInt) where size >= 4, map.map(LV2URI.atomBool) where size >= 4:
    return Float(value.loadUnaligned(as: Int32.self))
  case map.map(LV2URI.atomLong) where size >= 8: return Float(value.loadUnaligned(as: Int64.self))
  default: return nil
  }
}

// MARK: - Features

/// One instance's feature list (URID map/unmap, options, bounded block length, state default
/// loading, and the worker's schedule when it has one), kept alive as long as the instance.
final class HostFeatures: @unchecked Sendable {
  let list: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>
  private var owned: [UnsafeMutableRawPointer] = []
  private var strings: [UnsafeMutablePointer<CChar>] = []
  private let optionValues: UnsafeMutablePointer<Int32>
  private let rateValue: UnsafeMutablePointer<Float>
  private let options: UnsafeMutablePointer<LV2_Options_Option>
  private let count: Int

  /// - Parameter schedule: the worker's `LV2_Worker_Schedule`, or nil for a plugin without one.
  init(
    sampleRate: Int, maximumBlock: Int, sequenceSize: Int,
    schedule: UnsafeMutablePointer<LV2_Worker_Schedule>?
  ) {
    let map = URIDMap.shared
    optionValues = .allocate(capacity: 4)
    optionValues.initialize(
      from: [1, Int32(maximumBlock), Int32(maximumBlock), Int32(sequenceSize)], count: 4)
    rateValue = .allocate(capacity: 1)
    rateValue.initialize(to: Float(sampleRate))
    let int = map.map(LV2URI.atomInt)
    let keys = [
      LV2URI.minBlockLength, LV2URI.maxBlockLength, LV2URI.nominalBlockLength,
      LV2URI.sequenceSize,
    ]
    options = .allocate(capacity: 6)
    for (slot, key) in keys.enumerated() {
      (options + slot).initialize(
        to: LV2_Options_Option(
          context: LV2_OPTIONS_INSTANCE, subject: 0, key: map.map(key), size: 4, type: int,
          value: UnsafeRawPointer(optionValues + slot)))
    }
    (options + 4).initialize(
      to: LV2_Options_Option(
        context: LV2_OPTIONS_INSTANCE, subject: 0, key: map.map(LV2URI.parameterSampleRate),
        size: 4, type: map.map(LV2URI.atomFloat), value: UnsafeRawPointer(rateValue)))
    (options + 5).initialize(
      to: LV2_Options_Option(
        context: LV2_OPTIONS_INSTANCE, subject: 0, key: 0, size: 0, type: 0, value: nil))

    var features: [(String, UnsafeMutableRawPointer?)] = [
      (LV2URI.urodMap, UnsafeMutableRawPointer(map.mapFeature)),
      (LV2URI.uridUnmap, UnsafeMutableRawPointer(map.unmapFeature)),
      (LV2URI.options, UnsafeMutableRawPointer(options)),
      (LV2URI.boundedBlockLength, nil),
      (LV2URI.loadDefaultState, nil),
    ]
    if let schedule { features.append((LV2URI.workSchedule, UnsafeMutableRawPointer(schedule))) }
    count = features.count
    list = .allocate(capacity: features.count + 1)
    for (slot, (uri, data)) in features.enumerated() {
      let name = strdup(uri)
      if let name { strings.append(name) }
      let feature = UnsafeMutablePointer<LV2_Feature>.allocate(capacity: 1)
      feature.initialize(to: LV2_Feature(URI: name, data: data))
      owned.append(UnsafeMutableRawPointer(feature))
      (list + slot).initialize(to: UnsafePointer(feature))
    }
    (list + features.count).initialize(to: nil)
  }

  var pointer: UnsafePointer<UnsafePointer<LV2_Feature>?> { UnsafePointer(list) }

  deinit {
    for pointer in owned { pointer.deallocate() }
    for string in strings { free(string) }
    list.deallocate()
    options.deallocate()
    optionValues.deallocate()
    rateValue.deallocate()
  }
}

// MARK: - An instance

/// A running plugin instance: lilv's pointer and the extension entry points Tape calls. A
/// trivial value (no ARC), so the audio thread can hold it.
struct LV2Instance: @unchecked Sendable {
  let pointer: UnsafeMutablePointer<LilvInstance>
  private let worker: UnsafePointer<LV2_Worker_Interface>?

  init(_ pointer: UnsafeMutablePointer<LilvInstance>) {
    self.pointer = pointer
    worker = lilv_instance_get_extension_data(pointer, LV2URI.workInterface)?
      .assumingMemoryBound(to: LV2_Worker_Interface.self)
  }

  /// Realtime-safe.
  func connect(_ port: Int, _ data: UnsafeMutableRawPointer?) {
    lilv_instance_connect_port(pointer, UInt32(port), data)
  }

  func activate() { lilv_instance_activate(pointer) }
  func deactivate() { lilv_instance_deactivate(pointer) }

  /// Realtime-safe as far as the plugin's `run` is.
  @_noLocks
  func run(_ frames: Int) { tape_lv2_run(pointer, UInt32(frames)) }

  var hasWorker: Bool { worker != nil }

  /// The worker's `work`, on the worker thread; `respond` is called with `respondHandle`.
  @_noLocks
  func work(size: Int, data: UnsafeRawPointer, channel: UnsafeMutablePointer<WorkerChannel>) {
    tape_lv2_work(
      worker, pointer, workerRespond, UnsafeMutableRawPointer(channel), UInt32(size), data)
  }

  /// Realtime-safe: the worker's `work_response`, on the audio thread.
  @_noLocks
  func workResponse(size: Int, data: UnsafeRawPointer) {
    tape_lv2_work_response(worker, pointer, UInt32(size), data)
  }

  /// Realtime-safe: the worker's `end_run`, after each run.
  @_noLocks
  func endRun() { tape_lv2_end_run(worker, pointer) }
}

// MARK: - The worker's callbacks

/// The `work:schedule` feature's data for one instance's worker channel.
func makeWorkerSchedule(
  _ channel: UnsafeMutablePointer<WorkerChannel>
) -> UnsafeMutablePointer<LV2_Worker_Schedule> {
  let schedule = UnsafeMutablePointer<LV2_Worker_Schedule>.allocate(capacity: 1)
  schedule.initialize(
    to: LV2_Worker_Schedule(
      handle: UnsafeMutableRawPointer(channel), schedule_work: workerSchedule))
  return schedule
}

/// `schedule_work`: called by the plugin from `run` (realtime-safe: a copy into the
/// preallocated ring and a semaphore post) or from a non-realtime call such as state restore.
private func workerSchedule(
  _ handle: LV2_Worker_Schedule_Handle?, _ size: UInt32, _ data: UnsafeRawPointer?
) -> LV2_Worker_Status {
  guard let handle else { return LV2_WORKER_ERR_UNKNOWN }
  let channel = handle.assumingMemoryBound(to: WorkerChannel.self)
  guard channel.pointee.requests.push(data, size: Int(size)) else {
    return LV2_WORKER_ERR_NO_SPACE
  }
  channel.pointee.scheduled.wrappingIncrement(ordering: .releasing)
  tape_lv2_post(channel.pointee.wakeup)
  return LV2_WORKER_SUCCESS
}

/// `respond`: called by the plugin's `work` on the worker thread.
func workerRespond(
  _ handle: LV2_Worker_Respond_Handle?, _ size: UInt32, _ data: UnsafeRawPointer?
) -> LV2_Worker_Status {
  guard let handle else { return LV2_WORKER_ERR_UNKNOWN }
  let channel = handle.assumingMemoryBound(to: WorkerChannel.self)
  return channel.pointee.responses.push(data, size: Int(size))
    ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
}
