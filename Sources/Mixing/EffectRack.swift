public import Effects
import Foundation
public import Timeline

/// The running effects of one player or one render: a processor per effect id and a bus per
/// chain, kept from plan to plan.
///
/// Rule: a plugin instance belongs to its effect id, not to a plan. A new plan whose chain
/// still holds an effect reuses its running processor, so a reverb tail or a compressor's
/// envelope goes on through any edit of clips (as Tracktion Engine's graph rebuild hands the
/// old nodes' state to the new graph). Why: instantiating anew would restart every effect at
/// each edit, an audible jump. What if you don't: tails cut at every swap.
///
/// Used by one thread at a time (the planner, or an offline render's thread); the audio thread
/// reaches processors and buses only through the plans compiled from it.
public final class EffectRack: @unchecked Sendable {
  public let sampleRate: Int
  public let channels: Int
  /// The most frames one kernel call renders.
  public let maximumFrames: Int
  /// Effects whose plugin is missing play as if bypassed (with no latency) instead of refusing.
  public let bypassMissing: Bool
  /// For a player: after the first plan, a chain that changes its effects crossfades from the
  /// old chain to the new (see `chain(_:_:)`).
  public let live: Bool
  /// The project's folder, which effects' files stored relative to it are found in (nil: they
  /// are taken as they are, relative to the working directory).
  public let projectFolder: RawPath?
  /// The block an offline render runs its effects in (any block size gives the same result:
  /// processors cut every block at the same places of their own running count).
  public static let offlineFrames = 4_096
  /// The longest delay a chain may need to be aligned with the others, in frames: 0.5 s, more
  /// than a linear-phase EQ's look-ahead (each bus holds this much, locked in memory in a
  /// player: 190 KiB of stereo at 48 kHz).
  public var maximumDelay: Int { sampleRate / 2 }
  let catalog: PluginCatalog
  private var processors: [Effect.ID: (plugin: String, processor: EffectProcessor)] = [:]
  private var buses: [ChainOwner: ChainBus] = [:]
  /// Each send's working memory (its delay line, its gain reached), kept from plan to plan, by
  /// its id and tap: a send turned pre- or post-fader ramps out from its old tap while it
  /// ramps in from the new.
  private var sendBuses: [SendKey: SendBus] = [:]
  /// The sends of the last plan compiled: one that a new plan no longer has ramps out there
  /// (a ghost at gain 0) while its gain has not reached 0.
  var lastSends: [Send.ID: Send] = [:]
  /// Where each track went in the last plan compiled (tracks to the master left out): a
  /// player's switch from there may still be crossfading out of it when a new plan comes,
  /// which must then still gather that destination's input.
  var lastOutputs: [Track.ID: Track.ID] = [:]
  /// Each side chain's working memory (its delay line, its gain reached), by its effect's id
  /// and its source: a side chain switched to another source ramps out from the old while it
  /// ramps in from the new.
  private var sidechainBuses: [SidechainKey: SendBus] = [:]
  /// The effects skipped so far because their plugin is missing or cannot run (with
  /// `bypassMissing`), with why ("its plugin URI is not installed").
  public private(set) var skipped: [Effect.ID: String] = [:]

  public init(
    sampleRate: Int, channels: Int, maximumFrames: Int, bypassMissing: Bool = false,
    live: Bool = false, catalog: PluginCatalog = .load(), projectFolder: RawPath? = nil
  ) {
    self.live = live
    self.projectFolder = projectFolder
    self.sampleRate = sampleRate
    self.channels = channels
    self.maximumFrames = maximumFrames
    self.bypassMissing = bypassMissing
    self.catalog = catalog
  }

  /// The effects of `project` whose plugin is not installed here, with their plugins' URIs.
  public static func missingPlugins(
    in project: Project, catalog: PluginCatalog = .load()
  ) -> [(id: Effect.ID, plugin: String)] {
    project.allEffects.compactMap { entry in
      catalog.plugin(entry.effect.plugin) == nil ? (entry.effect.id, entry.effect.plugin) : nil
    }.sorted { $0.id < $1.id }
  }

  /// `effect`'s value of each of `plugin`'s control ports, in their order (the plugin's
  /// default for a port the effect does not name, and a stored value outside the port's range
  /// brought to its nearer end, as ``check(_:catalog:projectFolder:)`` warns): what a processor
  /// takes.
  public static func values(of effect: Effect, for plugin: PluginInfo) -> [Float] {
    plugin.controls.map { port in
      guard let stored = effect.parameters[port.symbol] else { return port.defaultValue }
      return min(max(Float(stored), port.minimum), port.maximum)
    }
  }

  /// What a render or a play must know of `project`'s effects before it starts: those whose
  /// plugin is missing, those whose plugin Tape cannot run (both refused, unless skipped with
  /// ``bypassMissing``), and one warning per effect whose stored values its installed plugin
  /// does not take (a port it no longer has, a value out of its range), saying what is used
  /// instead.
  ///
  /// ```swift
  /// let check = EffectRack.check(project)
  /// if let refusal = check.refusal(bypassMissing: false) { throw refusal }
  /// for line in check.warnings { log.warning("\(line)") }
  /// ```
  public static func check(
    _ project: Project, catalog: PluginCatalog = .load(), projectFolder: RawPath? = nil
  ) -> EffectCheck {
    var check = EffectCheck()
    for (effect, _, _) in project.allEffects.sorted(by: { $0.effect.id < $1.effect.id }) {
      guard let installed = catalog.plugin(effect.plugin) else {
        check.missing.append((effect.id, effect.plugin))
        continue
      }
      if let problem = installed.problem {
        check.unusable.append((effect.id, effect.plugin, problem))
        continue
      }
      if let problem = fileProblem(effect, installed, projectFolder: projectFolder) {
        check.files.append((effect.id, problem))
        continue
      }
      let plugin = installed.atSampleRate(project.sampleRate)
      var notes: [String] = []
      if effect.state == nil,
        let first = catalog.presetsNeeded(by: plugin, savedState: nil).first
      {
        notes.append(
          "its plugin renders silence without the state one of its presets gives it; 'tape fx set FILE \(effect.id) --preset \(quotedIfNeeded(first.label))' sets one ('tape fx presets \(effect.plugin)' lists them)"
        )
      }
      for (symbol, stored) in effect.parameters.sorted(by: { $0.key < $1.key }) {
        guard let port = plugin.controls.first(where: { $0.symbol == symbol }) else {
          notes.append(
            "it has no parameter '\(symbol)' any more (\(symbol)=\(number(stored)) is ignored)")
          continue
        }
        let used = min(max(Float(stored), port.minimum), port.maximum)
        if used != Float(stored) {
          notes.append(
            "\(symbol) \(number(stored)) is out of its range \(port.display(port.minimum)) to \(port.display(port.maximum)), so \(port.display(used)) is used"
          )
        }
      }
      if !notes.isEmpty {
        check.warnings.append(
          "effect \(effect.id) (\(effect.plugin)): " + notes.joined(separator: "; "))
      }
    }
    return check
  }

  /// The files `effect` gives `plugin`'s file parameters, by property URI, as absolute paths
  /// (a stored relative path found in `projectFolder`); keys the plugin has no parameter for
  /// are left out.
  public static func files(
    of effect: Effect, for plugin: PluginInfo, projectFolder: RawPath?
  ) -> [String: String] {
    var files: [String: String] = [:]
    for parameter in plugin.fileParameters {
      guard let file = effect.files[parameter.key] else { continue }
      let path = projectFolder.map { file.path.resolved(against: $0) } ?? file.path
      files[parameter.uri] = path.description
    }
    return files
  }

  /// Why `effect` cannot give `plugin` the files it needs, in one line naming the fix; nil
  /// when it can: a file parameter with no file set (x42's IR convolver renders silence
  /// without one), or a file that is not where the project says.
  public static func fileProblem(
    _ effect: Effect, _ plugin: PluginInfo, projectFolder: RawPath?
  ) -> String? {
    for parameter in plugin.fileParameters {
      guard let file = effect.files[parameter.key] else {
        return
          "effect \(effect.id) (\(effect.plugin)) needs a file for \(parameter.key) (\(parameter.label)) and has none, so it would render silence; set one with 'tape fx set FILE \(effect.id) --file \(parameter.key)=PATH'"
      }
      let path = projectFolder.map { file.path.resolved(against: $0) } ?? file.path
      guard path.withCString({ access($0, R_OK) }) == 0 else {
        return
          "the file of effect \(effect.id)'s \(parameter.key), \(path), is missing; put it back, or point the effect at its new place with 'tape relink FILE \(effect.id) PATH' (a file of other content: 'tape fx set FILE \(effect.id) --file \(parameter.key)=PATH')"
      }
    }
    return nil
  }

  /// `text` as one shell word: itself, or in single quotes when it holds anything but
  /// letters, digits and `-_.#:/`.
  static func quotedIfNeeded(_ text: String) -> String {
    let plain =
      !text.isEmpty
      && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.#:/".contains($0)) }
    return plain
      ? text
      : "'"
        + text.split(separator: "'", omittingEmptySubsequences: false)
        .joined(separator: "'\\''") + "'"
  }

  /// A stored value as a person writes it (`-3`, `0.05`: a value stored from a port's Float
  /// as that Float's shortest decimal).
  private static func number(_ value: Double) -> String {
    if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
    let float = Float(value)
    return Double(float) == value ? String(float) : String(value)
  }

  /// The processor of `effect`: the running one of its id (same plugin), or a new one; nil
  /// when its plugin is missing and ``bypassMissing`` lets it be skipped.
  func processor(
    for effect: Effect, fresh: Bool = false
  ) throws(MixingError) -> EffectProcessor? {
    if !fresh, let running = processors[effect.id], running.plugin == effect.plugin {
      // A file changed while the effect runs: the plugin loads it in its worker and swaps it
      // in (see ``EffectProcessor/setFile(_:path:)``).
      let files = Self.files(
        of: effect, for: running.processor.plugin, projectFolder: projectFolder)
      for (property, path) in files.sorted(by: { $0.key < $1.key })
      where running.processor.files[property] != path {
        running.processor.setFile(property, path: path)
      }
      return running.processor
    }
    guard let installed = catalog.plugin(effect.plugin) else {
      guard bypassMissing else { throw .pluginsMissing([(effect.id, effect.plugin)]) }
      skipped[effect.id] = "its plugin \(effect.plugin) is not installed"
      return nil
    }
    if let problem = installed.problem {
      guard bypassMissing else {
        throw .pluginsUnusable([(effect.id, effect.plugin, problem)], missing: [])
      }
      skipped[effect.id] = "Tape cannot run its plugin \(effect.plugin) (it \(problem))"
      return nil
    }
    if let problem = Self.fileProblem(effect, installed, projectFolder: projectFolder) {
      guard bypassMissing else { throw .effectFiles([problem]) }
      skipped[effect.id] = problem
      return nil
    }
    // Ports given as fractions of the rate (swh's cutoffs) read in Hz at this one.
    let plugin = installed.atSampleRate(sampleRate)
    let values = Self.values(of: effect, for: plugin)
    do throws(EffectError) {
      let processor = try EffectProcessor(
        plugin: plugin, catalog: catalog, sampleRate: sampleRate, channels: channels,
        maximumFrames: maximumFrames, values: values,
        bypassed: effect.isBypassed, state: effect.state,
        files: Self.files(of: effect, for: plugin, projectFolder: projectFolder),
        // A render runs a plugin's background work in line, so that it is reproducible; a
        // player on a worker thread, off the audio thread.
        worker: live ? .thread : .inline,
        // Joining a chain that plays: absent until its plan enters it (see ``chain(_:_:)``).
        present: !(live && hasCompiled))
      // Its own start-up (x42's gain glide) behind it before it is heard (see ``settle``).
      if live && hasCompiled { processor.settle(frames: sampleRate) }
      processors[effect.id] = (effect.plugin, processor)
      return processor
    } catch {
      throw .effectFailed(effect.id, plugin: effect.plugin, reason: error.description)
    }
  }

  /// One entry of a compiled chain: a processor, its values in this plan (its plugin's control
  /// ports in order) and whether it is bypassed.
  struct ChainEntry {
    let processor: EffectProcessor
    let values: [Float]
    let bypassed: Bool
    /// False for a processor leaving the chain (see ``EffectProcessor/setPresent(_:)``).
    var present = true
    /// The effect's id.
    let id: Effect.ID
    /// Its part in a reorder (see ``chain(_:_:)``).
    var role = ReorderRole.none
  }

  /// Each chain as the last plan compiled it (leaving processors included), for the next
  /// plan's transition.
  private var lastChains: [ChainOwner: [ChainEntry]] = [:]

  /// Whether a plan was compiled from this rack: the first plan's effects start as they are
  /// (a play begins as a render does), later ones fade in.
  private(set) var hasCompiled = false

  /// Called once a plan's graph is compiled.
  func compiled() { hasCompiled = true }

  /// The chain of `owner` for a new plan: `effects`' processors (missing plugins skipped, or
  /// refused together).
  ///
  /// In a player, after its first plan, a chain that gains, loses or reorders effects changes
  /// without a gap or a click. A reorder and nothing else (the same effects, another order)
  /// runs the span whose order changed twice, its running processors in the old order
  /// (``ReorderRole/old``) and fresh ones in the new (``ReorderRole/new``), and the player
  /// crossfades from the one to the other once they agree (see ``ReorderRole``). Any other
  /// change keeps each running processor running once: the effects both chains keep in the
  /// same order (their longest common run) stay; every other effect of the old chain stays in
  /// place, leaving (it crossfades to its delayed input, then gives out what it holds), and
  /// every other effect of the new one enters where it belongs (it warms up, then crossfades
  /// in from its delayed input; see ``EffectProcessor/setPresent(_:)``); an effect that moved
  /// does both. At either end of the crossfades the chain is exactly the old one or the new
  /// one. A leaving processor that has reached the identity is left out of the next plan (see
  /// ``hasFinishedLeaving``).
  func chain(_ owner: ChainOwner, _ effects: [Effect]) throws(MixingError) -> [ChainEntry] {
    var missing: [(Effect.ID, String)] = []
    func entry(_ effect: Effect, fresh: Bool) throws(MixingError) -> ChainEntry? {
      do {
        guard let processor = try processor(for: effect, fresh: fresh) else { return nil }
        return ChainEntry(
          processor: processor, values: Self.values(of: effect, for: processor.plugin),
          bypassed: effect.isBypassed, id: effect.id)
      } catch .pluginsMissing(let list) {
        missing += list
        return nil
      }
    }
    // A reorder's new order is the chain; its old order is on its way out (the player swaps
    // in no plan before it has gone, unless the reorder's plan was replaced unheard: then its
    // processors leave as any other).
    let old = (lastChains[owner] ?? []).filter { $0.present || !$0.processor.isAbsent }.map {
      entry in
      var entry = entry
      entry.role = .none
      return entry
    }
    var entries: [ChainEntry] = []
    let running = effects.map { effect in
      processors[effect.id].flatMap { $0.plugin == effect.plugin ? $0.processor : nil }
    }
    if !(live && hasCompiled) || old.isEmpty {
      for effect in effects {
        if let made = try entry(effect, fresh: false) { entries.append(made) }
      }
    } else if let (prefix, suffix) =
      Self.reorder(old, effects, running) ?? refiled(old, effects, running)
    {
      // The same effects in another order, nothing else: the span that changed runs twice
      // (its old instances, and new ones in the new order), and the new order takes over once
      // it sounds as the old would (see ``ReorderRole``). Both have the same latency, so the
      // two line up and nothing moves in time. The same for an effect given another file (an
      // impulse response): a fresh instance with the new file runs beside the one playing and
      // takes over by a crossfade (a plugin handed the file swaps it in at once: x42's
      // convolver stepped from the one to the other in a sample).
      entries = Array(old[..<prefix])
      for var leaving in old[prefix..<(old.count - suffix)] {
        leaving.present = false
        leaving.role = .old
        entries.append(leaving)
      }
      for effect in effects[prefix..<(effects.count - suffix)] {
        if var made = try entry(effect, fresh: true) {
          made.role = .new
          entries.append(made)
        }
      }
      for index in (effects.count - suffix)..<effects.count {
        if let kept = try entry(effects[index], fresh: false) { entries.append(kept) }
      }
      for index in 0..<prefix {
        if let kept = try entry(effects[index], fresh: false) { entries[index] = kept }
      }
    } else {
      // The longest common run of the old chain and the new one by the running processor
      // each effect would keep. An effect given another file keeps none: a fresh instance
      // with the file enters while the running one leaves (handed the file, a running plugin
      // may swap it in from one sample to the next).
      let refiledIDs = Set(
        effects.indices.filter { index in
          running[index].map { hasNewFiles(effects[index], $0) } ?? false
        }.map { effects[$0].id })
      let anchors = Self.longestCommonRun(
        old.map { ObjectIdentifier($0.processor) },
        effects.indices.map { index in
          refiledIDs.contains(effects[index].id) ? nil : running[index].map(ObjectIdentifier.init)
        })
      let inOld = Set(old.map { ObjectIdentifier($0.processor) })
      var (i, j) = (0, 0)
      func leave(upTo end: Int) {
        while i < end {
          var leaving = old[i]
          leaving.present = false
          entries.append(leaving)
          i += 1
        }
      }
      func enter(upTo end: Int) throws(MixingError) {
        while j < end {
          // An effect that moved: a new instance enters while the old one leaves.
          let moved =
            refiledIDs.contains(effects[j].id)
            || (running[j].map { inOld.contains(ObjectIdentifier($0)) } ?? false)
          if let made = try entry(effects[j], fresh: moved) { entries.append(made) }
          j += 1
        }
      }
      for (a, b) in anchors {
        leave(upTo: a)
        try enter(upTo: b)
        if let kept = try entry(effects[b], fresh: false) { entries.append(kept) }
        (i, j) = (a + 1, b + 1)
      }
      leave(upTo: old.count)
      try enter(upTo: effects.count)
    }
    if !missing.isEmpty { throw .pluginsMissing(missing) }
    lastChains[owner] = entries
    return entries
  }

  /// Whether `effect` gives its file parameters files other than those `processor` has.
  func hasNewFiles(_ effect: Effect, _ processor: EffectProcessor) -> Bool {
    Self.files(of: effect, for: processor.plugin, projectFolder: projectFolder)
      .contains { processor.files[$0.key] != $0.value }
  }

  /// Whether `effects` (with `running`, the processor each would keep) is `old` in the same
  /// order, every entry present, each running its old processor, and some given files their
  /// processors do not have: the span from the first such effect to the last, as
  /// ``reorder(_:_:_:)`` gives a reorder's (nil otherwise).
  func refiled(
    _ old: [ChainEntry], _ effects: [Effect], _ running: [EffectProcessor?]
  ) -> (prefix: Int, suffix: Int)? {
    guard old.count == effects.count, old.allSatisfy(\.present),
      old.map(\.id) == effects.map(\.id)
    else { return nil }
    var changed: [Int] = []
    for (index, effect) in effects.enumerated() {
      guard let processor = running[index], processor === old[index].processor else { return nil }
      if hasNewFiles(effect, processor) { changed.append(index) }
    }
    guard let first = changed.first, let last = changed.last else { return nil }
    return (first, effects.count - 1 - last)
  }

  /// Whether `effects` (with `running`, the processor each would keep) is `old` reordered and
  /// nothing else (every entry present, each effect once, its running processor the old
  /// one's), with the lengths of the common prefix and suffix; nil otherwise.
  static func reorder(
    _ old: [ChainEntry], _ effects: [Effect], _ running: [EffectProcessor?]
  ) -> (prefix: Int, suffix: Int)? {
    guard old.count == effects.count, old.count > 1, old.allSatisfy(\.present) else { return nil }
    let oldIDs = old.map(\.id)
    let newIDs = effects.map(\.id)
    guard oldIDs != newIDs, Set(oldIDs) == Set(newIDs), Set(newIDs).count == newIDs.count
    else { return nil }
    let byID = Dictionary(uniqueKeysWithValues: old.map { ($0.id, ObjectIdentifier($0.processor)) })
    for (effect, processor) in zip(effects, running) {
      guard let processor, byID[effect.id] == ObjectIdentifier(processor) else { return nil }
    }
    var prefix = 0
    while oldIDs[prefix] == newIDs[prefix] { prefix += 1 }
    var suffix = 0
    while oldIDs[oldIDs.count - 1 - suffix] == newIDs[newIDs.count - 1 - suffix] { suffix += 1 }
    return (prefix, suffix)
  }

  /// Pairs of indices `(a, b)`, increasing in both, with `old[a] == new[b]`: a longest common
  /// subsequence (chains hold a handful of effects: the quadratic table is nothing).
  static func longestCommonRun(
    _ old: [ObjectIdentifier], _ new: [ObjectIdentifier?]
  ) -> [(Int, Int)] {
    let (m, n) = (old.count, new.count)
    var table = Array(repeating: Array(repeating: 0, count: n + 1), count: m + 1)
    for a in stride(from: m - 1, through: 0, by: -1) {
      for b in stride(from: n - 1, through: 0, by: -1) {
        table[a][b] =
          old[a] == new[b] ? table[a + 1][b + 1] + 1 : max(table[a + 1][b], table[a][b + 1])
      }
    }
    var pairs: [(Int, Int)] = []
    var (a, b) = (0, 0)
    while a < m && b < n {
      if old[a] == new[b] {
        pairs.append((a, b))
        (a, b) = (a + 1, b + 1)
      } else if table[a + 1][b] >= table[a][b + 1] {
        a += 1
      } else {
        b += 1
      }
    }
    return pairs
  }

  /// Whether a chain of the last plan holds a processor that still sounds (present, or not
  /// yet done leaving): a plan of a project without effects then still needs its graph.
  public var isSounding: Bool {
    lastChains.values.contains { chain in
      chain.contains { $0.present || !$0.processor.isAbsent }
    }
  }

  /// Forgets the last plan's chains: a plan without effects was compiled.
  func forgetChains() { lastChains = [:] }

  /// Whether a chain of the last plan holds a processor that has left it and is the identity
  /// now: a plan compiled again from the same project would drop it (and let its instance go)
  /// without a change in the sound.
  public var hasFinishedLeaving: Bool {
    lastChains.values.contains { chain in chain.contains { !$0.present && $0.processor.isAbsent } }
  }

  /// The bus of `owner`'s chain, kept from plan to plan (its delay line's contents with it).
  /// The master's has no delay: its buffers and reorder state serve a reorder of its chain.
  func bus(_ owner: ChainOwner) -> ChainBus {
    if let bus = buses[owner] { return bus }
    if owner == .master {
      let bus = ChainBus(channels: channels, maximumFrames: maximumFrames, maximumDelay: 0)
      buses[owner] = bus
      return bus
    }
    // A player's delay lines also take up the latency of effects entering or leaving while it
    // plays (see ``EffectKernel/nextLiveStep(_:latency:)``): twice the longest.
    let bus = ChainBus(
      channels: channels, maximumFrames: maximumFrames,
      maximumDelay: live ? 2 * maximumDelay : maximumDelay, touched: live)
    buses[owner] = bus
    return bus
  }

  /// Lets go of what the newest plan does not use: processors of effects not in `effects`,
  /// chains' buses not in `owners`, send buses not in `sends` and side-chain buses not in
  /// `sidechains` (nil: send buses all kept, side-chain buses kept for every effect in
  /// `effects`). Off the audio thread. A plan still sounding keeps what it uses alive on its
  /// own (its compiled graph holds its processors and its routing its buses): the rack only
  /// stops handing them to new plans.
  public func keepOnly(
    effects: Set<Effect.ID>, owners: Set<ChainOwner>, sends: Set<SendKey>? = nil,
    sidechains: Set<SidechainKey>? = nil
  ) {
    processors = processors.filter { effects.contains($0.key) }
    buses = buses.filter { owners.contains($0.key) }
    lastChains = lastChains.filter { owners.contains($0.key) }
    if let sends { sendBuses = sendBuses.filter { sends.contains($0.key) } }
    if let sidechains {
      sidechainBuses = sidechainBuses.filter { sidechains.contains($0.key) }
    } else {
      sidechainBuses = sidechainBuses.filter { effects.contains($0.key.effect) }
    }
  }

  /// The working memory of a side chain, kept from plan to plan.
  func sidechainBus(_ key: SidechainKey) -> SendBus { bus(key, in: &sidechainBuses) }

  /// The side chains whose buses have not yet ramped to silence (read off the audio thread,
  /// as ``sendIsSounding(_:)``), in order.
  var soundingSidechains: [SidechainKey] {
    sidechainBuses.filter { $0.value.state.pointee.hasGain && $0.value.state.pointee.left != 0 }
      .map(\.key).sorted { ($0.effect, $0.source) < ($1.effect, $1.source) }
  }

  /// The bus of send `id` at its tap, kept from plan to plan (its delay line and gain with it).
  func sendBus(_ id: SendKey) -> SendBus { bus(id, in: &sendBuses) }

  /// The bus `buses` keeps for `key`, made the first time it is asked for.
  private func bus<Key: Hashable>(_ key: Key, in buses: inout [Key: SendBus]) -> SendBus {
    if let bus = buses[key] { return bus }
    let bus = SendBus(
      channels: channels, maximumFrames: maximumFrames,
      maximumDelay: live ? 2 * maximumDelay : maximumDelay, touched: live)
    buses[key] = bus
    return bus
  }

  /// Whether send `id` has a bus whose gain has not yet ramped to silence (read off the audio
  /// thread: a stale value only keeps a silent ghost one plan longer).
  func sendIsSounding(_ id: SendKey) -> Bool {
    guard let bus = sendBuses[id] else { return false }
    let state = bus.state.pointee
    return state.hasGain && (state.left != 0 || state.right != 0)
  }
}

/// A side chain from one source: what its working memory is kept by.
public struct SidechainKey: Sendable, Hashable {
  public let effect: Effect.ID
  public let source: Track.ID

  public init(effect: Effect.ID, source: Track.ID) {
    self.effect = effect
    self.source = source
  }
}

/// A send at one of its taps: what its working memory is kept by.
public struct SendKey: Sendable, Hashable {
  public let id: Send.ID
  public let preFader: Bool

  public init(_ send: Send) {
    id = send.id
    preFader = send.isPreFader
  }
}

/// What a player keeps of a send or a bus's inputs from period to period: the gains reached
/// (ramping to each plan's), for the left (or only) and right channels.
public struct RouteState: Sendable, BitwiseCopyable {
  var left: Float = 0
  var right: Float = 0
  var hasGain = false
  /// A chain's output: the destination it went to in the last period (a track's id, 0 for the
  /// master, −1 before the first), and the frames left of a switch to another.
  var destination: Int64 = -1
  var previous: Int64 = -1
  var switchLeft = 0
  /// A lane on what it carries (a send's envelope, a bus's pan lane): whether the last period
  /// had one, the factors it applied last (1 without), and a crossfade of one ramp from the
  /// factors reached (`fromLeft`, `fromRight`) into the new plan's when a lane comes or goes,
  /// so that it glides from the value playing rather than stepping (`laneGlide`: frames left).
  var hadLane = false
  var laneLeft: Float = 1
  var laneRight: Float = 1
  var fromLeft: Float = 1
  var fromRight: Float = 1
  var laneGlide = 0
  /// The last period's lane (its record's key: a hash of its segments).
  var laneKey = 0
  /// A bus's volume envelope on what it receives, as the lane above: the last period's key,
  /// the factor applied last, and a crossfade of one ramp from the factor reached
  /// (`shapeFrom`) when the envelope comes, goes or changes (`shapeGlide`: frames left).
  var shapeKey = 0
  var shapeReached: Float = 1
  var shapeFrom: Float = 1
  var shapeGlide = 0

  /// Starts a crossfade of one ramp from the envelope factor reached when the plan's envelope
  /// differs from the last period's (`key`).
  ///
  /// - Note: Realtime-safe: arithmetic only.
  @inline(__always)
  mutating func follow(envelope key: Int, rampFrames: Int) {
    guard key != shapeKey else { return }
    shapeKey = key
    shapeFrom = shapeReached
    shapeGlide = max(rampFrames, 1)
  }

  /// `shape`, the envelope's factor at this frame, blended with the one it glides from, and
  /// kept as the factor reached.
  ///
  /// - Note: Realtime-safe: arithmetic only.
  @inline(__always)
  mutating func glide(shape: Float, rampFrames: Int) -> Float {
    var shape = shape
    if shapeGlide > 0 {
      let share = Float(shapeGlide) / Float(max(rampFrames, 1))
      shape = shapeFrom * share + shape * (1 - share)
      shapeGlide -= 1
    }
    shapeReached = shape
    return shape
  }

  /// Starts a crossfade of one ramp from the lane factors reached when the plan's lane comes,
  /// goes or changes (`hasLane` differs from the last period's, or `key`): a lane edited under
  /// the playhead would otherwise jump to its new value there.
  ///
  /// - Note: Realtime-safe: arithmetic only.
  @inline(__always)
  mutating func follow(lane hasLane: Bool, key: Int, rampFrames: Int) {
    guard hasLane != hadLane || (hasLane && key != laneKey) else { return }
    (hadLane, laneKey) = (hasLane, key)
    (fromLeft, fromRight) = (laneLeft, laneRight)
    laneGlide = max(rampFrames, 1)
  }

  /// `(left, right)`, the lane's factors at this frame, blended with those it glides from,
  /// and kept as the factors reached.
  ///
  /// - Note: Realtime-safe: arithmetic only.
  @inline(__always)
  mutating func glide(_ left: Float, _ right: Float, rampFrames: Int) -> (Float, Float) {
    var (left, right) = (left, right)
    if laneGlide > 0 {
      let share = Float(laneGlide) / Float(max(rampFrames, 1))
      left = fromLeft * share + left * (1 - share)
      right = fromRight * share + right * (1 - share)
      laneGlide -= 1
    }
    (laneLeft, laneRight) = (left, right)
    return (left, right)
  }
}

/// A send's working memory: the copy of its track's sound it delays (to line up with what its
/// target receives from elsewhere) and its gains reached.
final class SendBus: @unchecked Sendable {
  let buffer: UnsafeMutablePointer<Float>
  let delay: UnsafeMutablePointer<DelayLine>
  let state: UnsafeMutablePointer<RouteState>
  let bytes: Int

  init(channels: Int, maximumFrames: Int, maximumDelay: Int, touched: Bool = true) {
    bytes = maximumFrames * channels * MemoryLayout<Float>.stride
    buffer = .allocate(capacity: maximumFrames * channels)
    buffer.initialize(repeating: 0, count: maximumFrames * channels)
    delay = .allocate(capacity: 1)
    delay.initialize(
      to: DelayLine(channels: channels, capacity: maximumDelay + maximumFrames, touched: touched))
    state = .allocate(capacity: 1)
    state.initialize(to: RouteState())
  }

  deinit {
    delay.pointee.free()
    delay.deinitialize(count: 1)
    delay.deallocate()
    state.deallocate()
    buffer.deallocate()
  }

  /// The memory the audio thread touches, for a player to lock into RAM.
  var memoryRegions: [(address: UnsafeRawPointer, bytes: Int)] {
    [
      (UnsafeRawPointer(buffer), bytes),
      (UnsafeRawPointer(delay), MemoryLayout<DelayLine>.stride),
      (UnsafeRawPointer(state), MemoryLayout<RouteState>.stride),
      (
        UnsafeRawPointer(delay.pointee.ring),
        delay.pointee.capacity * delay.pointee.channels * MemoryLayout<Float>.stride
      ),
    ]
  }
}

/// What ``EffectRack/check(_:catalog:projectFolder:)`` found in a project's effects, before a
/// render or a
/// play starts.
public struct EffectCheck: Sendable {
  /// Effects whose plugin is not installed, by id.
  public var missing: [(id: Effect.ID, plugin: String)] = []
  /// Effects whose installed plugin Tape cannot run, with why (``/Effects/PluginInfo/problem``).
  public var unusable: [(id: Effect.ID, plugin: String, reason: String)] = []
  /// Effects that cannot give their plugin the file it needs, each with one line saying why
  /// and what to do (``EffectRack/fileProblem(_:_:projectFolder:)``).
  public var files: [(id: Effect.ID, problem: String)] = []
  /// One line per effect whose stored values its plugin does not take, saying what is used.
  public var warnings: [String] = []

  /// The error that stops a render or a play: every missing or unusable plugin named at once;
  /// nil when there is none, or when `bypassMissing` skips them.
  public func refusal(bypassMissing: Bool) -> MixingError? {
    guard !bypassMissing else { return nil }
    if !unusable.isEmpty {
      return .pluginsUnusable(
        unusable.map { ($0.id, $0.plugin, $0.reason) }, missing: missing.map { ($0.id, $0.plugin) })
    }
    if !missing.isEmpty { return .pluginsMissing(missing.map { ($0.id, $0.plugin) }) }
    if !files.isEmpty { return .effectFiles(files.map(\.problem)) }
    return nil
  }
}

/// A chain's working memory: the buffer its track is mixed into and its effects run on (and a
/// second one, for the plan fading out during a player's crossfade), and the delay line that
/// aligns it with the chains of less latency.
final class ChainBus: @unchecked Sendable {
  let buffer: UnsafeMutablePointer<Float>
  let scratch: UnsafeMutablePointer<Float>
  let delay: UnsafeMutablePointer<DelayLine>
  /// Where a reorder of the chain is (a player's).
  let reorder: UnsafeMutablePointer<ReorderState>
  /// What the track receives from others (their outputs and sends), and its pre-fader tap;
  /// allocated when a plan first routes into the chain or taps it pre-fader.
  private(set) var input: UnsafeMutablePointer<Float>?
  private(set) var prefader: UnsafeMutablePointer<Float>?
  /// The gains reached on its inputs (the track's gain and pan) and where its output goes.
  let route: UnsafeMutablePointer<RouteState>
  /// Bytes in each of `buffer` and `scratch`.
  let bytes: Int
  private let samples: Int

  init(channels: Int, maximumFrames: Int, maximumDelay: Int, touched: Bool = true) {
    bytes = maximumFrames * channels * MemoryLayout<Float>.stride
    buffer = .allocate(capacity: maximumFrames * channels)
    buffer.initialize(repeating: 0, count: maximumFrames * channels)
    scratch = .allocate(capacity: maximumFrames * channels)
    scratch.initialize(repeating: 0, count: maximumFrames * channels)
    delay = .allocate(capacity: 1)
    delay.initialize(
      to: DelayLine(channels: channels, capacity: maximumDelay + maximumFrames, touched: touched))
    reorder = .allocate(capacity: 1)
    reorder.initialize(to: ReorderState())
    route = .allocate(capacity: 1)
    route.initialize(to: RouteState())
    samples = maximumFrames * channels
  }

  /// The input buffer, made on first use (off the audio thread, by a compile).
  func inputBuffer() -> UnsafeMutablePointer<Float> {
    if let input { return input }
    let made = UnsafeMutablePointer<Float>.allocate(capacity: samples)
    made.initialize(repeating: 0, count: samples)
    input = made
    return made
  }

  /// The pre-fader buffer, made on first use (off the audio thread, by a compile).
  func prefaderBuffer() -> UnsafeMutablePointer<Float> {
    if let prefader { return prefader }
    let made = UnsafeMutablePointer<Float>.allocate(capacity: samples)
    made.initialize(repeating: 0, count: samples)
    prefader = made
    return made
  }

  deinit {
    input?.deallocate()
    prefader?.deallocate()
    route.deallocate()
    delay.pointee.free()
    delay.deinitialize(count: 1)
    delay.deallocate()
    reorder.deinitialize(count: 1)
    reorder.deallocate()
    buffer.deallocate()
    scratch.deallocate()
  }

  /// The memory the audio thread touches, for a player to lock into RAM.
  var memoryRegions: [(address: UnsafeRawPointer, bytes: Int)] {
    [
      (UnsafeRawPointer(buffer), bytes), (UnsafeRawPointer(scratch), bytes),
      (UnsafeRawPointer(delay), MemoryLayout<DelayLine>.stride),
      (UnsafeRawPointer(reorder), MemoryLayout<ReorderState>.stride),
      (UnsafeRawPointer(route), MemoryLayout<RouteState>.stride),
      (
        UnsafeRawPointer(delay.pointee.ring),
        delay.pointee.capacity * delay.pointee.channels * MemoryLayout<Float>.stride
      ),
    ] + [input, prefader].compactMap { $0.map { (UnsafeRawPointer($0), bytes) } }
  }
}

/// A delay of interleaved frames: a ring that holds the last `capacity` frames; and the gain
/// after the chain as it is now (ramping to each plan's, see ``ChainRecord/postGain``).
///
/// An offline render asks each call for its plan's delay (constant: a render has one plan). A
/// player sets the delay itself and changes it only by writing without reading
/// (`push(_:frames:)`: it grows by as much) or reading without writing
/// (`pull(into:frames:)`: it shrinks), so that what comes out never jumps nor mixes two
/// readings of the signal (see ``EffectKernel/nextLiveStep(_:latency:maximumFrames:)``).
public struct DelayLine: @unchecked Sendable {
  let channels: Int
  let capacity: Int
  let ring: UnsafeMutablePointer<Float>
  var write = 0
  /// The delay now (none before the first block), and the one it is crossfading from (`fade`
  /// frames of the ramp left). No optionals: see ``EffectKernel``.
  var delay = 0
  var hasDelay = false
  var previous = 0
  var fade = 0
  /// The post gain reached (none before the first block: it starts at the plan's).
  var gain: Float = 0
  var hasGain = false

  /// `touched`: every page written now (a player's: its audio thread must not fault a page in
  /// even where locking the memory failed); otherwise the system zeroes each page when it is
  /// first touched (an offline render's rings of delay 0 never are, see
  /// `process(_:frames:delay:rampFrames:history:)`: writing the zeros was a fifth of a short
  /// render through 72 chains).
  init(channels: Int, capacity: Int, touched: Bool = true) {
    self.channels = channels
    self.capacity = capacity
    guard let memory = calloc(capacity * channels, MemoryLayout<Float>.stride) else {
      preconditionFailure("out of memory for a delay line of \(capacity) frames")
    }
    ring = memory.bindMemory(to: Float.self, capacity: capacity * channels)
    if touched { ring.update(repeating: 0, count: capacity * channels) }
  }

  func free() { Foundation.free(ring) }

  /// The most frames the delay can be, with room for a call of `maximumFrames`.
  func room(maximumFrames: Int) -> Int { capacity - maximumFrames }

  /// Sets the delay at once, the ring's contents as they are (a player's, where the chain
  /// starts afresh or a bus starts).
  ///
  /// - Note: Realtime-safe: arithmetic only.
  mutating func setDelay(_ frames: Int) {
    delay = frames
    hasDelay = true
    fade = 0
    previous = 0
  }

  /// Writes `frames` frames of `buffer` into the ring and reads nothing: the delay grows by
  /// `frames` (a player feeding its chains ahead).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  mutating func push(_ buffer: UnsafePointer<Float>, frames: Int) {
    for frame in 0..<frames {
      let slot = (write + frame) % capacity
      for channel in 0..<channels {
        ring[slot * channels + channel] = buffer[frame * channels + channel]
      }
    }
    write = (write + frames) % capacity
    delay += frames
  }

  /// Reads the next `frames` frames (at most the delay) into `buffer` and writes nothing: the
  /// delay shrinks by `frames` (a player holding its chains back).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  mutating func pull(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
    for frame in 0..<frames {
      let slot = (write - delay + frame + capacity) % capacity
      for channel in 0..<channels {
        buffer[frame * channels + channel] = ring[slot * channels + channel]
      }
    }
    delay -= frames
  }

  /// Delays `frames` frames of `buffer` in place by `delay` frames (`delay + frames` less than
  /// ``capacity``): what comes out is what went in `delay` frames earlier, silence at first.
  /// A delay other than the last call's is reached by a linear crossfade over `rampFrames`.
  /// Without `history`, a delay of 0 leaves the ring as it is (a copy of every block into it
  /// was a fifth of a 64-track render through effects): only where the delay never changes
  /// over the line's life, as in an offline render's one plan.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  mutating func process(
    _ buffer: UnsafeMutablePointer<Float>, frames: Int, delay target: Int, rampFrames: Int = 960,
    history: Bool = true
  ) {
    if hasDelay && delay != target {
      previous = delay
      fade = max(rampFrames, 1)
    }
    delay = target
    hasDelay = true
    if fade == 0 && target == 0 && !history { return }
    if fade == 0 {
      // A steady delay (what every render and most periods of a play have): the block goes
      // into the ring, and what went in `target` frames earlier comes out, in at most two
      // contiguous copies each way. A delay of 0 is still written, so that a later delay
      // reads what came before it.
      store(buffer, frames: frames)
      if target > 0 { load(into: buffer, frames: frames, from: write - frames - target) }
      return
    }
    var slot = write
    var read = (write - target + capacity) % capacity
    var old = (write - previous + capacity) % capacity
    for frame in 0..<frames {
      let w: Float = fade > 0 ? 1 - Float(fade) / Float(max(rampFrames, 1)) : 1
      for channel in 0..<channels {
        let sample = buffer[frame * channels + channel]
        ring[slot * channels + channel] = sample
        let now = target == 0 ? sample : ring[read * channels + channel]
        let before = previous == 0 ? sample : ring[old * channels + channel]
        buffer[frame * channels + channel] = fade > 0 ? before * (1 - w) + now * w : now
      }
      if fade > 0 { fade -= 1 }
      slot = slot + 1 == capacity ? 0 : slot + 1
      read = read + 1 == capacity ? 0 : read + 1
      old = old + 1 == capacity ? 0 : old + 1
    }
    write = slot
  }

  /// Writes `frames` frames of `buffer` at the ring's write position and moves it on.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  private mutating func store(_ buffer: UnsafePointer<Float>, frames: Int) {
    let first = min(frames, capacity - write)
    (ring + write * channels).update(from: buffer, count: first * channels)
    if first < frames {
      ring.update(from: buffer + first * channels, count: (frames - first) * channels)
    }
    write = (write + frames) % capacity
  }

  /// Reads `frames` frames of the ring from slot `start` (taken modulo the capacity) into
  /// `buffer`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  private func load(into buffer: UnsafeMutablePointer<Float>, frames: Int, from start: Int) {
    let slot = ((start % capacity) + capacity) % capacity
    let first = min(frames, capacity - slot)
    buffer.update(from: ring + slot * channels, count: first * channels)
    if first < frames {
      (buffer + first * channels).update(from: ring, count: (frames - first) * channels)
    }
  }
}

/// A processor's part in a reorder of its chain in a player: the effects whose order changed
/// run twice, their running instances in the old order (`old`) and fresh instances in the new
/// (`new`), each on the same input; the new order's output crossfades in once it sounds as
/// the old order's (within −40 dB: effects that commute are then not heard moving) or after a
/// quarter of a second (effects that do not commute: the new order is what should be heard),
/// and the old instances are let go of.
public enum ReorderRole: UInt8, Sendable, BitwiseCopyable {
  case none
  case old
  case new
}

/// Where a reorder of one chain is, on the audio thread (see ``ReorderRole``).
public struct ReorderState: Sendable, BitwiseCopyable {
  /// The address of the reorder's first new processor: a reorder other than the one under way
  /// starts again from the beginning.
  var key: UInt = 0
  /// Frames the new order has run.
  var frames = 0
  /// 0 … ramp: where the crossfade from the old order to the new is.
  var mix = 0
  /// The old order's let go of: the new order alone.
  var done = false
  /// The energy of the two orders' difference and of the old order's output over the window
  /// being measured, and its length so far.
  var difference = 0.0
  var energy = 0.0
  var measured = 0
  var converged = false

  public init() {}
}
