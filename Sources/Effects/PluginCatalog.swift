import Synchronization

/// The LV2 plugins installed on this machine, as lilv finds them (`LV2_PATH` respected).
///
/// ```swift
/// let catalog = PluginCatalog.load()
/// if let eq = catalog.plugin("http://gareus.org/oss/lv2/fil4#stereo") { print(eq.controls.count) }
/// ```
///
/// ``load()`` makes the catalog once per process and returns the same one after that; a
/// plugin's data is read the first time it is asked about. Thread-safe.
public final class PluginCatalog: @unchecked Sendable {
  let world: LilvWorld
  private let all = Mutex<[PluginInfo]?>(nil)
  private let infos = Mutex<[String: PluginInfo]>([:])

  private static let shared = Mutex<PluginCatalog?>(nil)

  /// The process's catalog, made on first use (cheap: the plugins are read when asked about).
  public static func load() -> PluginCatalog {
    shared.withLock { shared in
      if let shared { return shared }
      let made = PluginCatalog(world: LilvWorld())
      shared = made
      return made
    }
  }

  /// A catalog of the plugins in `path` alone (colon-separated folders of LV2 bundles), made
  /// anew on each call: for tests, and for a host that must ignore `LV2_PATH`.
  public static func load(path: String) -> PluginCatalog {
    PluginCatalog(world: LilvWorld(path: path))
  }

  private init(world: LilvWorld) {
    self.world = world
  }

  /// Every installed plugin, sorted by URI. The first call reads every bundle's data (about a
  /// second with a few hundred plugins); later calls return the same array.
  public var plugins: [PluginInfo] {
    if let known = all.withLock({ $0 }) { return known }
    let made = world.uris.compactMap { plugin($0) }
    all.withLock { $0 = made }
    return made
  }

  /// Every installed plugin's URI, sorted (cheap: no plugin data is read).
  public var uris: [String] { world.uris }

  /// The installed plugin with this URI, or nil.
  public func plugin(_ uri: String) -> PluginInfo? {
    if let known = infos.withLock({ $0[uri] }) { return known }
    guard let description = world.description(uri) else { return nil }
    let made = PluginInfo(description)
    infos.withLock { $0[uri] = made }
    return made
  }

  /// The installed plugin with this URI, or ``EffectError/unknownPlugin(uri:nearest:)`` naming
  /// the closest one.
  public func require(_ uri: String) throws(EffectError) -> PluginInfo {
    guard let info = plugin(uri) else {
      throw .unknownPlugin(uri: uri, nearest: nearest(to: uri))
    }
    return info
  }

  /// The installed URI closest to `uri` (case-insensitive edit distance), for "did you mean".
  public func nearest(to uri: String) -> String? {
    closest(to: uri, among: world.uris)
  }

  func description(_ uri: String) -> PluginDescription? { world.description(uri) }
}

/// The candidate closest to `text` by case-insensitive edit distance; nil when there are none,
/// or when even the closest shares less than about half of its characters.
func closest(to text: String, among candidates: [String]) -> String? {
  let target = Array(text.lowercased().unicodeScalars)
  var best: (String, Int)?
  for candidate in candidates {
    let distance = editDistance(target, Array(candidate.lowercased().unicodeScalars))
    if best.map({ distance < $0.1 }) ?? true { best = (candidate, distance) }
  }
  guard let best, best.1 <= max(2, (max(target.count, best.0.count) + 1) / 2) else { return nil }
  return best.0
}

func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
  if a.isEmpty { return b.count }
  if b.isEmpty { return a.count }
  var previous = Array(0...b.count)
  var current = [Int](repeating: 0, count: b.count + 1)
  for i in 1...a.count {
    current[0] = i
    for j in 1...b.count {
      let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
      current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
    }
    swap(&previous, &current)
  }
  return previous[b.count]
}
