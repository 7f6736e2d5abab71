/// One effect of a chain: an LV2 plugin, its parameter values and whether it is bypassed.
///
/// An effect is a value like a clip: the store keeps it in a tracked table, so adding one,
/// changing a parameter, bypassing, reordering or removing it is one version that undo, redo
/// and checkout restore exactly. The timeline knows nothing of LV2 beyond the plugin's URI: the
/// values are checked against the plugin's ports where a command is parsed (where the plugin
/// is installed), and a project whose plugin is missing still opens, edits and undoes.
///
/// ```swift
/// let eq = Effect(
///   id: Effect.ID(1), plugin: "http://gareus.org/oss/lv2/fil4#stereo",
///   parameters: ["g_1": -3, "f_1": 120])
/// eq.id.description  // "f1"
/// ```
public struct Effect: Sendable, Hashable, Codable, Identifiable, IdentifiedEntity {
  public typealias ID = EntityID<Effect>
  public static let idPrefix = "f"
  public static let entityName = "effect"

  public let id: ID
  /// The plugin's LV2 URI.
  public var plugin: String
  /// Control values by the plugin's port symbol. A port missing here plays at the plugin's
  /// default; `tape fx add` stores every port's value, so a project sounds the same on a
  /// machine whose plugin version has other defaults.
  public var parameters: [String: Double]
  /// Bypassed: the track hears the effect's input (delayed by the effect's latency, so that
  /// bypassing never shifts the track), and the plugin keeps running.
  public var isBypassed: Bool
  /// The plugin's own state beyond its port values (LV2 State), as the plugin saved it; nil for
  /// none.
  public var state: [UInt8]?
  /// The track whose post-fader output (what it sends to its output: after its whole chain
  /// and its mute) feeds the plugin's side-chain inputs, aligned with what the effect
  /// processes; nil for none (the side-chain inputs get silence). A dependency of the routing:
  /// the source runs before the effect's track, and a loop is refused (see
  /// ``Project/validateRouting(startingAt:)``).
  public var sidechain: Track.ID?
  /// Automated parameters by port symbol: the port follows its envelope (in 64-frame steps)
  /// instead of its value in ``parameters``, which it keeps for when the automation goes.
  public var automation: [String: ParameterEnvelope]
  /// The files its plugin's file parameters are set to (an impulse response), by the
  /// parameter's key (`ir`, the end of its property URI): each stored as a source is, by its
  /// path relative to the project's folder when inside it, and its content's identity.
  public var files: [String: EffectFile]

  public init(
    id: ID, plugin: String, parameters: [String: Double] = [:], isBypassed: Bool = false,
    state: [UInt8]? = nil, sidechain: Track.ID? = nil,
    automation: [String: ParameterEnvelope] = [:], files: [String: EffectFile] = [:]
  ) {
    self.id = id
    self.plugin = plugin
    self.parameters = parameters
    self.isBypassed = isBypassed
    self.state = state
    self.sidechain = sidechain
    self.automation = automation
    self.files = files
  }

  private enum CodingKeys: String, CodingKey {
    case id, plugin, parameters, isBypassed, state, sidechain, automation, files
  }

  /// An effect encoded before side chains, automation or file parameters existed has none.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    id = try container.decode(ID.self, forKey: .id)
    plugin = try container.decode(String.self, forKey: .plugin)
    parameters = try container.decode([String: Double].self, forKey: .parameters)
    isBypassed = try container.decode(Bool.self, forKey: .isBypassed)
    state = try container.decodeIfPresent([UInt8].self, forKey: .state)
    sidechain = try container.decodeIfPresent(Track.ID.self, forKey: .sidechain)
    automation =
      try container.decodeIfPresent([String: ParameterEnvelope].self, forKey: .automation) ?? [:]
    files = try container.decodeIfPresent([String: EffectFile].self, forKey: .files) ?? [:]
  }

  /// This effect's automation with `range` taken out of the timeline, as a ripple takes it out
  /// of its track's clips (``ParameterEnvelope/removing(_:)``).
  public func removingTime(_ range: FrameRange) -> Effect {
    var moved = self
    moved.automation = automation.mapValues { $0.removing(range) }
    return moved
  }

  /// This effect's automation with a gap opened, as an insert opens it in its track's clips.
  public func openingTime(at position: FramePosition, length: FrameCount) -> Effect {
    var moved = self
    moved.automation = automation.mapValues { $0.opening(at: position, length: length) }
    return moved
  }

  /// Checks what the model can check without the plugin: a URI, finite values on named ports.
  public func validate(sampleRate: Int = 48_000) throws(TimelineError) {
    for (symbol, envelope) in automation.sorted(by: { $0.key < $1.key }) {
      guard Self.isPortSymbol(symbol) else {
        throw .invalidEffect(id, reason: "'\(symbol)' is not a port symbol")
      }
      try envelope.validate(name: "\(id) \(symbol)", sampleRate: sampleRate)
    }
    guard !plugin.trimmingBlanks.isEmpty, !plugin.contains(where: { $0.isNewline }) else {
      throw .invalidEffect(id, reason: "its plugin URI is empty")
    }
    // Checked as they come, and only if one is bad, again by name: a dictionary's order
    // changes from process to process, and the error must not. (Every edit of an effect
    // checks all its ports, twice: 33 for an EQ, at 100 changes a second from `tape shell`.)
    for (key, file) in files.sorted(by: { $0.key < $1.key }) {
      guard Self.isPortSymbol(key) else {
        throw .invalidEffect(id, reason: "'\(key)' is not the key of a file parameter")
      }
      guard !file.path.bytes.isEmpty else {
        throw .invalidEffect(id, reason: "the file of \(key) has an empty path")
      }
    }
    guard parameters.contains(where: { !Self.isPortSymbol($0.key) || !$0.value.isFinite })
    else { return }
    for (symbol, value) in parameters.sorted(by: { $0.key < $1.key }) {
      guard Self.isPortSymbol(symbol) else {
        throw .invalidEffect(id, reason: "'\(symbol)' is not a port symbol")
      }
      guard value.isFinite else {
        throw .invalidEffect(id, reason: "parameter \(symbol) is \(value), not a finite number")
      }
    }
  }

  /// Whether `symbol` is an LV2 port symbol: ASCII letters, digits and `_`, at least one.
  /// Read as bytes: a `Character`'s `isLetter` looks its properties up in Unicode's tables.
  static func isPortSymbol(_ symbol: String) -> Bool {
    !symbol.isEmpty
      && symbol.utf8.allSatisfy { byte in
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte)
          || (0x61...0x7A).contains(byte) || byte == 0x5F
      }
  }
}

/// The file an effect's file parameter is set to (x42's IR convolver's impulse response),
/// kept as a ``Source``'s file is: its path (relative to the project's folder when it lies
/// inside it, so a project moved with its files keeps working) and its content's identity
/// (the hash sources use), which tells a changed or wrongly relinked file.
public struct EffectFile: Sendable, Hashable, Codable {
  public var path: RawPath
  public var contentHash: String

  public init(path: RawPath, contentHash: String) {
    self.path = path
    self.contentHash = contentHash
  }
}

/// Where a chain of effects runs: on one track (after its clips are summed, its gain, pan and
/// envelope applied, before mute and solo), or on the master (after the master gain).
public enum ChainOwner: Sendable, Hashable, Comparable, CustomStringConvertible {
  case master
  case track(Track.ID)

  /// `master`, or the track's id (`t1`): the form commands and JSON use.
  public var description: String {
    switch self {
    case .master: "master"
    case .track(let id): id.description
    }
  }

  /// `master` or a track id.
  public init?(parsing text: String) {
    if text == "master" {
      self = .master
    } else if let id = Track.ID(parsing: text) {
      self = .track(id)
    } else {
      return nil
    }
  }
}

extension Project {
  /// The effects of `owner` in the order they run; nil for a track that is not in the project.
  public func effects(of owner: ChainOwner) -> [Effect]? {
    switch owner {
    case .master: masterEffects
    case .track(let id): track(id)?.effects
    }
  }

  /// The effect with `id`, the chain it is in and its place there.
  public func effect(_ id: Effect.ID) -> (effect: Effect, owner: ChainOwner, index: Int)? {
    if let index = masterEffects.firstIndex(where: { $0.id == id }) {
      return (masterEffects[index], .master, index)
    }
    for track in tracks {
      if let index = track.effects.firstIndex(where: { $0.id == id }) {
        return (track.effects[index], .track(track.id), index)
      }
    }
    return nil
  }

  /// Every effect with its chain and place: the master's first, then each track's in display
  /// order.
  public var allEffects: [(effect: Effect, owner: ChainOwner, index: Int)] {
    masterEffects.enumerated().map { ($1, ChainOwner.master, $0) }
      + tracks.flatMap { track in
        track.effects.enumerated().map { ($1, ChainOwner.track(track.id), $0) }
      }
  }
}
