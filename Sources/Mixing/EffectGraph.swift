import Effects
public import Timeline

/// One chain of a plan as the kernel reads it: its bus, its processors in order, how long its
/// output is delayed to line up with the others, and the gain after it.
public struct ChainRecord: @unchecked Sendable, BitwiseCopyable {
  /// The bus's buffer (``EffectRack``'s, `maximumFrames` interleaved frames).
  public var buffer: UnsafeMutablePointer<Float>
  /// The bus's second buffer: where a player mixes the clips of the plan fading out.
  public var scratch: UnsafeMutablePointer<Float>
  public var delayLine: UnsafeMutablePointer<DelayLine>
  /// Where a player's reorder of the chain is (see ``ReorderRole``).
  public var reorder: UnsafeMutablePointer<ReorderState>
  /// Frames the chain's output is delayed by: the longest chain's latency less this one's.
  public var delay: Int
  /// The processors, as `Unmanaged<EffectProcessor>` addresses, kept alive by the plan.
  public var processors: UnsafePointer<UnsafeRawPointer>?
  /// Each processor's settings in this plan, in the same order.
  public var settings: UnsafePointer<EffectSettings>?
  public var processorCount: Int
  /// The gain after the chain: mute and solo (0 or 1), times the master gain when the chain
  /// goes to the master.
  public var postGain: Float
  /// Where the chain's output goes: −1 the master (the output), else a chain's index (a bus:
  /// its ``input``). Routed graphs only (see ``GraphView/routed``).
  public var destination: Int = -1
  /// The destination's track id (0 for the master), and the chain's own: what a player's
  /// switch of destination follows from plan to plan.
  public var destinationTrack: Int64 = 0
  public var trackID: Int64 = 0
  /// What the chain's track receives (others' outputs and sends), summed here before the
  /// chain runs; nil when nothing routes into it.
  public var input: UnsafeMutablePointer<Float>? = nil
  /// The track's pre-fader tap (its clips at their clip gains, and its inputs); nil when no
  /// pre-fader send taps it.
  public var prefader: UnsafeMutablePointer<Float>? = nil
  /// The gain of ``input`` for the left (or only) and right channels: the track's gain and its
  /// pan (a balance) on what it receives, before its chain.
  public var inputLeft: Float = 1
  public var inputRight: Float = 1
  /// The track's envelope on what it receives, shifted by the chain's alignment (what its
  /// clips are delayed by: see ``RenderPlan``); nil for none.
  public var envelope: UnsafePointer<EnvelopeSegment>? = nil
  public var envelopeCount = 0
  /// What the envelope is (a hash of its segments; 0 for none): one that comes, goes or
  /// changes while playing glides from the level reached, as a pan lane does (``panKey``).
  public var envelopeKey = 0
  /// The track's pan automation on what it receives (a balance, ``PanLaw/stereoSource(pan:)``
  /// at the lane's value, frame by frame; ``inputLeft`` and ``inputRight`` then leave the pan
  /// out), shifted as ``envelope``; nil for none or a mono mix.
  public var pan: UnsafePointer<EnvelopeSegment>? = nil
  public var panCount = 0
  /// What the pan lane is (a hash of its segments; 0 for none): a lane that changes while
  /// playing glides from the balance reached (`RouteState.follow(lane:key:rampFrames:)`).
  public var panKey = 0
  /// The gains reached on ``input`` and the destination the output went to.
  public var route: UnsafeMutablePointer<RouteState>? = nil
  /// Frames the track's clips are delayed by to line up with what it receives (routed
  /// graphs): the chain's input plays at the timeline frame this much before the mix's.
  public var inputDelay = 0
  /// The chain does not run: an offline plan mixes its track's clips straight into where the
  /// chain would have sent them (see ``TrackFold``), and the kernel skips it.
  public var folded = false
}

/// Where an offline plan mixes the clips of a track whose chain would only pass them on (no
/// effects, nothing received, no pre-fader tap, no side chain keyed by it, only steady
/// post-fader sends): its destination (the output, or a bus's input) at its post gain, `delay`
/// frames later, and each send's target at the send's gains, the send's delay later. The same
/// sums as running the chain, with one pass over the clips per destination instead of a copy,
/// a delay line and an add per chain; a player never folds (its gains, delays and
/// destinations ramp and crossfade from plan to plan).
public struct TrackFold: Sendable {
  public struct Copy: Sendable {
    /// −1 the output, else the chain (``GraphView/chains``' index) whose input takes it.
    public var destination: Int
    public var delay: Int
    public var gainLeft: Float
    public var gainRight: Float
  }
  /// The track's output, then its sends.
  public var copies: [Copy]
}

/// One send of a routed plan as the kernel reads it.
public struct SendRecord: @unchecked Sendable, BitwiseCopyable {
  /// The chains (``GraphView/chains``' indices) it taps and feeds.
  public var source: Int
  public var target: Int
  /// Taps the source's pre-fader buffer (else its output after its chain and mute).
  public var preFader: Bool
  /// Its gain for the left (or only) and right channels: the send's gain, its balance, and 0
  /// when its track is silent (muted, or unsoloed while another sounds) or it was removed.
  public var gainLeft: Float
  public var gainRight: Float
  /// Frames the copy is delayed by to line up with the rest of what its target receives.
  public var delay: Int
  public var buffer: UnsafeMutablePointer<Float>
  public var delayLine: UnsafeMutablePointer<DelayLine>
  public var state: UnsafeMutablePointer<RouteState>
  /// The send's gain automation (``/Timeline/Send/envelope``) on what it delivers, shifted to
  /// the frames its target receives it at; nil for none.
  public var envelope: UnsafePointer<EnvelopeSegment>? = nil
  public var envelopeCount = 0
  /// What the envelope is (a hash of its segments; 0 for none), as ``ChainRecord/panKey``.
  public var envelopeKey = 0
}

/// One side chain of a routed plan as the kernel reads it: the source chain's output (after
/// its chain, before its delay line, as a post-fader send taps it), delayed to reach the
/// effect aligned with what the effect processes, at the source's mute, written into the
/// effect's processors' side-chain inputs (``/Effects/EffectProcessor/sidechainInput``).
public struct SidechainRecord: @unchecked Sendable, BitwiseCopyable {
  /// The chain (``GraphView/chains``' index) it taps.
  public var source: Int
  /// The effect's processor's side-chain input, and a second processor of the same effect
  /// (a reorder's old and new orders run side by side); nil for none.
  public var target: UnsafeMutablePointer<Float>
  public var second: UnsafeMutablePointer<Float>?
  /// 1, or 0 when its source is muted (or silent and keying no track that sounds: see
  /// ``/Timeline/Project/keyingTracks(for:)``).
  public var gain: Float
  /// Frames the copy is delayed by to line up with the effect's input.
  public var delay: Int
  public var buffer: UnsafeMutablePointer<Float>
  public var delayLine: UnsafeMutablePointer<DelayLine>
  public var state: UnsafeMutablePointer<RouteState>
}

/// One effect's values in a plan (its plugin's control ports in order) and its bypass: what a
/// player hands the running processor when the plan starts to sound.
public struct EffectSettings: @unchecked Sendable, BitwiseCopyable {
  public var values: UnsafePointer<Float>
  public var bypassed: Bool
  /// False for a processor leaving its chain (see ``/Effects/EffectProcessor/setPresent(_:)``).
  public var present: Bool
  /// Its part in a reorder of its chain (``ReorderRole``'s raw value).
  public var role: UInt8
  /// Its automated ports in this plan (``Effects/EffectProcessor/setAutomation(_:count:)``).
  var lanes: UnsafePointer<AutomationLane>? = nil
  public var laneCount = 0
}

/// The effects part of a plan: a chain per track (every track of a project with effects runs
/// through a bus, so that each can be delayed to line up with the chains of most latency), and
/// the master's chain.
///
/// The kernel mixes each clip into its track's bus (``ClipRecord/bus``) at its clip gain ×
/// track gain × pan (no master gain, no mute: those come after the chain), runs each chain,
/// delays it, adds it at its post gain, then runs the master's chain on the sum.
public struct GraphView: @unchecked Sendable, BitwiseCopyable {
  public var chains: UnsafePointer<ChainRecord>?
  public var chainCount: Int
  public var master: UnsafePointer<UnsafeRawPointer>?
  public var masterSettings: UnsafePointer<EffectSettings>?
  public var masterCount: Int
  /// The master's chain as a record: no bus of its own (it runs on the sum), but a scratch
  /// buffer and reorder state for a player's reorder of it.
  public var masterChain: ChainRecord
  /// Whether a chain of the plan holds a reorder (see ``ReorderRole``).
  public var hasReorder: Bool
  /// The frames the whole graph delays its input by: the longest track chain's latency plus
  /// the master chain's. A render feeds the kernel this far ahead and drops as many frames at
  /// the start, so that what it writes lines up with the timeline.
  public var latency: Int
  /// Whether any track goes to another or any send exists: the chains then run in
  /// ``order`` and route as their records say; otherwise every chain goes to the master in
  /// track order, exactly as before routing existed.
  public var routed = false
  /// The chains' indices in the order they run (every track after the tracks that feed it).
  public var order: UnsafePointer<Int32>? = nil
  public var sends: UnsafePointer<SendRecord>? = nil
  public var sendCount = 0
  public var sidechains: UnsafePointer<SidechainRecord>? = nil
  public var sidechainCount = 0
}

/// An effect of a plan that takes a side chain, as ``Routing`` aligns it: its chain, its
/// source's chain, the latency of what runs before it in its chain, and its processors'
/// side-chain inputs.
struct SidechainTap {
  let effect: Effect.ID
  let chain: Int
  let source: Int
  let before: Int
  let targets: [UnsafeMutablePointer<Float>]
  /// A side chain the project no longer has, ramping out at gain 0 while it still sounds.
  var ghost = false
}

/// What a plan with effects owns besides its clips.
final class CompiledGraph: @unchecked Sendable {
  let chains: UnsafeMutableBufferPointer<ChainRecord>
  let processorLists: [UnsafeMutableBufferPointer<UnsafeRawPointer>]
  let masterList: UnsafeMutableBufferPointer<UnsafeRawPointer>
  let settingLists: [UnsafeMutableBufferPointer<EffectSettings>]
  let valueLists: [UnsafeMutablePointer<Float>]
  /// The automation lanes' memory (``EffectSettings/lanes`` and their segments).
  let automationMemory: [UnsafeMutableRawPointer]
  /// Keeps the processors and buses alive while the plan is.
  let processors: [EffectProcessor]
  let buses: [ChainBus]
  let view: UnsafeMutablePointer<GraphView>
  /// An offline plan's graph again, on buffers of its own (its chains' buffers, inputs and
  /// pre-fader taps; everything else, from processors to delay lines, is ``view``'s): a render
  /// mixes the clips of one piece into it while the chains run on the last piece's in
  /// ``view``, and the next way round. Nil for a player's.
  let twin: UnsafeMutablePointer<GraphView>?
  private let twinChains: UnsafeMutableBufferPointer<ChainRecord>?
  private let twinMemory: [UnsafeMutablePointer<Float>]
  /// The effect ids and chain owners the plan uses (what its rack must keep).
  let effectIDs: Set<Effect.ID>
  let owners: Set<ChainOwner>
  /// The routing of a routed plan (see ``GraphView/routed``).
  private(set) var routing: Routing?
  /// The frames each track's clips are delayed by so that they line up with what it receives
  /// (none for a track that receives nothing of latency).
  let alignment: [Track.ID: Int]
  /// The tracks a pre-fader send taps: their clips are mixed a second time, at their clip
  /// gains only, into the chain's pre-fader buffer.
  let preFaderTracks: Set<Track.ID>
  /// The tracks whose clips an offline plan mixes straight into where their chains would
  /// have sent them (see ``TrackFold``).
  let folds: [Track.ID: TrackFold]
  /// The sends the plan runs (ghosts of removed ones included): what the rack must keep.
  let sendKeys: Set<SendKey>
  /// The side chains the plan runs (ghosts included): what the rack must keep.
  let sidechainKeys: Set<SidechainKey>

  /// Compiles the graph of `project` from `rack`: `tracks` in the plan's bus order.
  init(project: Project, rack: EffectRack) throws(MixingError) {
    let audible = Set(project.audibleTracks.map(\.id))
    var processors: [EffectProcessor] = []
    var buses: [ChainBus] = []
    var lists: [UnsafeMutableBufferPointer<UnsafeRawPointer>] = []
    var records: [ChainRecord] = []
    var latencies: [Int] = []
    var missing: [(Effect.ID, String)] = []
    var settingLists: [UnsafeMutableBufferPointer<EffectSettings>] = []
    var valueLists: [UnsafeMutablePointer<Float>] = []
    var automationMemory: [UnsafeMutableRawPointer] = []
    var reordering = false
    /// The flat lanes of `effect`'s automation on `processor`'s ports; nil for none.
    func lanes(
      _ effect: Effect?, _ processor: EffectProcessor
    ) -> (UnsafePointer<AutomationLane>, Int)? {
      guard let effect, !effect.automation.isEmpty else { return nil }
      var made: [AutomationLane] = []
      for (symbol, envelope) in effect.automation.sorted(by: { $0.key < $1.key }) {
        guard let slot = processor.plugin.controls.firstIndex(where: { $0.symbol == symbol })
        else { continue }
        let segments = envelope.curve.segments()
        let memory = UnsafeMutablePointer<EnvelopeSegment>.allocate(capacity: segments.count)
        memory.initialize(from: segments, count: segments.count)
        automationMemory.append(UnsafeMutableRawPointer(memory))
        made.append(
          AutomationLane(
            slot: slot, segments: UnsafeRawPointer(memory), count: segments.count,
            evaluate: automationValue))
      }
      guard !made.isEmpty else { return nil }
      let list = UnsafeMutablePointer<AutomationLane>.allocate(capacity: made.count)
      list.initialize(from: made, count: made.count)
      automationMemory.append(UnsafeMutableRawPointer(list))
      return (UnsafePointer(list), made.count)
    }
    /// The processors of `owner`'s chain (see ``EffectRack/chain(_:_:)``), with their settings
    /// in this plan.
    var entriesByOwner: [ChainOwner: [EffectRack.ChainEntry]] = [:]
    func chain(
      _ owner: ChainOwner, _ effects: [Effect]
    ) throws(MixingError) -> (
      [EffectProcessor], UnsafeMutableBufferPointer<EffectSettings>, latency: Int
    ) {
      var entries: [EffectRack.ChainEntry] = []
      do {
        entries = try rack.chain(owner, effects)
      } catch .pluginsMissing(let list) {
        missing += list
      }
      var settings: [EffectSettings] = []
      for entry in entries {
        let values = UnsafeMutablePointer<Float>.allocate(capacity: max(entry.values.count, 1))
        values.initialize(from: entry.values, count: entry.values.count)
        valueLists.append(values)
        // A reorder's old order plays on (present to its processors) until it is let go of.
        let automated = lanes(effects.first { $0.id == entry.id }, entry.processor)
        settings.append(
          EffectSettings(
            values: UnsafePointer(values), bypassed: entry.bypassed,
            present: entry.present || entry.role == .old, role: entry.role.rawValue,
            lanes: automated?.0, laneCount: automated?.1 ?? 0))
        if entry.role != .none { reordering = true }
      }
      let list = UnsafeMutableBufferPointer<EffectSettings>.allocate(
        capacity: max(settings.count, 1))
      _ = list.initialize(from: settings)
      settingLists.append(list)
      // What the chain will delay by once its entries have entered or left.
      let latency = entries.filter(\.present).reduce(0) { $0 + $1.processor.latency }
      entriesByOwner[owner] = entries
      return (entries.map(\.processor), list, latency)
    }
    for track in project.tracks {
      let (chain, settings, latency) = try chain(.track(track.id), track.effects)
      let bus = rack.bus(.track(track.id))
      let list = UnsafeMutableBufferPointer<UnsafeRawPointer>.allocate(
        capacity: max(chain.count, 1))
      for (index, processor) in chain.enumerated() {
        list.initializeElement(
          at: index, to: UnsafeRawPointer(Unmanaged.passUnretained(processor).toOpaque()))
      }
      lists.append(list)
      processors += chain
      buses.append(bus)
      latencies.append(latency)
      records.append(
        ChainRecord(
          buffer: bus.buffer, scratch: bus.scratch, delayLine: bus.delay, reorder: bus.reorder,
          delay: 0,
          processors: UnsafePointer(list.baseAddress),
          settings: UnsafePointer(settings.baseAddress), processorCount: chain.count,
          postGain: audible.contains(track.id) ? Float(project.masterGain.linear) : 0))
    }
    let (masterChain, masterSettings, masterLatency) = try chain(.master, project.masterEffects)
    let masterBus = rack.bus(.master)
    if !missing.isEmpty { throw .pluginsMissing(missing.sorted { $0.0 < $1.0 }) }
    var longest = latencies.max() ?? 0
    guard longest <= rack.maximumDelay else {
      throw .latencyTooLong(frames: longest, most: rack.maximumDelay)
    }
    for index in records.indices { records[index].delay = longest - latencies[index] }
    // Destinations a player's switch may still be crossfading out of when this plan comes
    // in: the last plan's outputs (it may not have played yet), and where each track's output
    // goes now and is switching from (read off the audio thread, as
    // ``EffectRack/sendIsSounding(_:)`` reads: whether the player is on the plan before or
    // has started the last one's switch, one of the two names it). They still gather their
    // input, after the track switching (see ``EffectKernel/route``).
    var leaving: [(from: Track.ID, to: Track.ID)] = []
    if rack.live {
      for (index, track) in project.tracks.enumerated() {
        let state = buses[index].route.pointee
        var olds = [rack.lastOutputs[track.id]].compactMap { $0 }
        if state.destination > 0 { olds.append(Track.ID(state.destination)) }
        if state.switchLeft > 0 && state.previous > 0 { olds.append(Track.ID(state.previous)) }
        for old in Set(olds).sorted()
        where old != track.output && old != track.id && project.track(old) != nil {
          leaving.append((track.id, old))
        }
      }
      rack.lastOutputs = Dictionary(
        uniqueKeysWithValues: project.tracks.compactMap { track in
          track.output.map { (track.id, $0) }
        })
    }
    var routing: Routing?
    let soundingSidechains = rack.soundingSidechains
    if project.hasRouting || !rack.lastSends.isEmpty || !soundingSidechains.isEmpty
      || !leaving.isEmpty
    {
      let chainIndex = Dictionary(
        uniqueKeysWithValues: project.tracks.enumerated().map { ($1.id, $0) })
      var taps: [SidechainTap] = []
      // A side chain removed, or switched to another source, while it still sounds ramps out
      // from its old source (its effect still in its chain): a ghost, as a removed send is.
      var ghosts: [(effect: Effect, track: Track.ID, source: Track.ID, ghost: Bool)] = []
      for key in soundingSidechains {
        guard let found = project.effect(key.effect), case .track(let track) = found.owner,
          found.effect.sidechain != key.source, project.track(key.source) != nil
        else { continue }
        let source = key.source
        ghosts.append((found.effect, track, source, true))
      }
      // The ghosts' sources still run before their effects' tracks (the effect reads its side
      // chain when its chain runs), and the destinations being left after the tracks leaving
      // them: edges of the order only (a stand-in effect keyed by the ghost's source, a
      // stand-in send), each kept only if it closes no loop. One that would is let go of: a
      // ghost then stops at once, and a destination being left no longer gathers (its share
      // of the crossfade is lost rather than fed back around the loop a period late).
      var ordering = project
      var kept: [(effect: Effect, track: Track.ID, source: Track.ID, ghost: Bool)] = []
      for ghost in ghosts {
        guard let place = ordering.tracks.firstIndex(where: { $0.id == ghost.track }) else {
          continue
        }
        var trial = ordering
        var standIn = ghost.effect
        standIn.sidechain = ghost.source
        trial.tracks[place].effects.append(standIn)
        guard trial.routingLoop() == nil else { continue }
        ordering = trial
        kept.append(ghost)
      }
      ghosts = kept
      var receivers: Set<Track.ID> = []
      for (index, edge) in leaving.enumerated() {
        var trial = ordering
        trial.sends.append(Send(id: Send.ID(-1 - Int64(index)), from: edge.from, to: edge.to))
        guard trial.routingLoop() == nil else { continue }
        ordering = trial
        receivers.insert(edge.to)
      }
      for (effect, track, source, ghost) in project.sidechains.map({ ($0, $1, $2, false) }) + ghosts
      {
        guard let chain = chainIndex[track], let from = chainIndex[source] else { continue }
        let entries = entriesByOwner[.track(track)] ?? []
        guard let first = entries.firstIndex(where: { $0.id == effect.id }) else { continue }
        // What runs before it: the latency of the effects ahead of it that the chain's
        // latency counts (a reorder's old order runs beside the new, and is not counted).
        let before = entries[..<first].filter { $0.present && $0.role != .old }
          .reduce(0) { $0 + $1.processor.latency }
        let targets = entries.filter { $0.id == effect.id && $0.processor.takesSidechain }
          .map(\.processor.sidechainInput)
        guard !targets.isEmpty else { continue }
        taps.append(
          SidechainTap(
            effect: effect.id, chain: chain, source: from, before: before, targets: targets,
            ghost: ghost))
      }
      // Tracks a solo silences that still key a side chain of a track that sounds (a muted
      // one keys nothing).
      let keying = project.keyingTracks(for: audible).filter { project.track($0)?.isMuted == false }
      let made = try Routing(
        project: project, rack: rack, buses: buses, latencies: latencies, audible: audible,
        keying: keying, order: ordering.routingOrder, sidechains: taps,
        receivers: receivers, records: &records)
      longest = made.masterArrival
      routing = made
    }
    rack.lastSends = Dictionary(uniqueKeysWithValues: project.sends.map { ($0.id, $0) })
    var alignment = routing?.alignment ?? [:]
    for (index, track) in project.tracks.enumerated() where index < records.count {
      records[index].inputDelay = alignment[track.id] ?? 0
    }
    if !rack.live && routing == nil {
      // An offline plan without routing: a chain without effects only delays its track to
      // line up with the chains of most latency. Its clips are moved that much later
      // instead, with their envelopes: the same samples in its buffer, bit for bit, without a
      // delay line's copies (a fifth of a render with a few effects on 64 tracks). (A range's
      // preroll now hears those tracks from its first frame, as a whole render does, where
      // the empty delay line gave silence for its first `delay` frames.)
      for (index, track) in project.tracks.enumerated()
      where index < records.count && records[index].processorCount == 0 && records[index].delay > 0
      {
        alignment[track.id] = records[index].delay
        records[index].delay = 0
      }
    }
    self.alignment = alignment
    preFaderTracks = routing?.preFaderTracks ?? []
    // Routed plans only: a plan without routing sums its chains into the master in track
    // order, as it always has, so that a project made before routing renders the same bytes.
    folds =
      rack.live || routing == nil ? [:] : Self.folds(project, routing: routing, records: &records)
    sendKeys = routing?.sendKeys ?? []
    sidechainKeys = routing?.sidechainKeys ?? []
    masterList = .allocate(capacity: max(masterChain.count, 1))
    for (index, processor) in masterChain.enumerated() {
      masterList.initializeElement(
        at: index, to: UnsafeRawPointer(Unmanaged.passUnretained(processor).toOpaque()))
    }
    chains = .allocate(capacity: max(records.count, 1))
    _ = chains.initialize(from: records)
    processorLists = lists
    self.settingLists = settingLists
    self.valueLists = valueLists
    self.automationMemory = automationMemory
    self.processors = processors + masterChain
    self.buses = buses + [masterBus]
    view = .allocate(capacity: 1)
    view.initialize(
      to: GraphView(
        chains: UnsafePointer(chains.baseAddress),
        chainCount: records.count, master: UnsafePointer(masterList.baseAddress),
        masterSettings: UnsafePointer(masterSettings.baseAddress), masterCount: masterChain.count,
        masterChain: ChainRecord(
          buffer: masterBus.buffer, scratch: masterBus.scratch, delayLine: masterBus.delay,
          reorder: masterBus.reorder, delay: 0,
          processors: UnsafePointer(masterList.baseAddress),
          settings: UnsafePointer(masterSettings.baseAddress), processorCount: masterChain.count,
          postGain: 1),
        hasReorder: reordering, latency: longest + masterLatency))
    if let routing {
      view.pointee.routed = true
      view.pointee.order = UnsafePointer(routing.order.baseAddress)
      view.pointee.sends = UnsafePointer(routing.sends.baseAddress)
      view.pointee.sendCount = routing.sendCount
      view.pointee.sidechains = UnsafePointer(routing.sidechains.baseAddress)
      view.pointee.sidechainCount = routing.sidechainCount
    }
    self.routing = routing
    if !rack.live {
      // The second set of buffers an offline render mixes the next piece's clips into while
      // the chains run on this one's (see ``twin``).
      let samples = rack.maximumFrames * rack.channels
      var memory: [UnsafeMutablePointer<Float>] = []
      func fresh() -> UnsafeMutablePointer<Float> {
        let made = UnsafeMutablePointer<Float>.allocate(capacity: samples)
        made.initialize(repeating: 0, count: samples)
        memory.append(made)
        return made
      }
      var copies = records
      for index in copies.indices where !copies[index].folded {
        copies[index].buffer = fresh()
        if copies[index].input != nil { copies[index].input = fresh() }
        if copies[index].prefader != nil { copies[index].prefader = fresh() }
      }
      let twinChains = UnsafeMutableBufferPointer<ChainRecord>.allocate(
        capacity: max(copies.count, 1))
      _ = twinChains.initialize(from: copies)
      var twinView = view.pointee
      twinView.chains = UnsafePointer(twinChains.baseAddress)
      let twin = UnsafeMutablePointer<GraphView>.allocate(capacity: 1)
      twin.initialize(to: twinView)
      self.twin = twin
      self.twinChains = twinChains
      twinMemory = memory
    } else {
      (twin, twinChains, twinMemory) = (nil, nil, [])
    }
    rack.compiled()
    effectIDs = Set(project.allEffects.map(\.effect.id))
    owners = Set(project.tracks.map { ChainOwner.track($0.id) }).union([.master])
  }

  /// The tracks of `project` whose chains only pass their clips on, marked ``ChainRecord/folded``
  /// in `records`, with where their clips go instead (see ``TrackFold``).
  private static func folds(
    _ project: Project, routing: Routing?, records: inout [ChainRecord]
  ) -> [Track.ID: TrackFold] {
    var keying: Set<Int> = []
    for index in 0..<(routing?.sidechainCount ?? 0) {
      if let source = routing?.sidechains[index].source { keying.insert(source) }
    }
    var folds: [Track.ID: TrackFold] = [:]
    for (index, track) in project.tracks.enumerated() where index < records.count {
      let record = records[index]
      guard record.processorCount == 0, record.input == nil, record.prefader == nil,
        record.delay >= 0, !keying.contains(index)
      else { continue }
      var copies = [
        TrackFold.Copy(
          destination: record.destination, delay: record.delay,
          gainLeft: record.postGain, gainRight: record.postGain)
      ]
      var foldable = true
      for sendIndex in 0..<(routing?.sendCount ?? 0) {
        guard let send = routing?.sends[sendIndex], send.source == index else { continue }
        guard !send.preFader, send.envelope == nil, send.delay >= 0 else {
          foldable = false
          break
        }
        copies.append(
          TrackFold.Copy(
            destination: send.target, delay: send.delay, gainLeft: send.gainLeft,
            gainRight: send.gainRight))
      }
      guard foldable else { continue }
      folds[track.id] = TrackFold(copies: copies)
      records[index].folded = true
    }
    return folds
  }

  deinit {
    view.deinitialize(count: 1)
    view.deallocate()
    chains.deallocate()
    twin?.deallocate()
    twinChains?.deallocate()
    for buffer in twinMemory { buffer.deallocate() }
    masterList.deallocate()
    for list in processorLists { list.deallocate() }
    for list in settingLists { list.deallocate() }
    for values in valueLists { values.deallocate() }
    for memory in automationMemory { memory.deallocate() }
  }

  /// The memory the audio thread touches, for a player to lock into RAM.
  var memoryRegions: [(address: UnsafeRawPointer, bytes: Int)] {
    var regions: [(UnsafeRawPointer, Int)] = [
      (UnsafeRawPointer(view), MemoryLayout<GraphView>.stride)
    ]
    if let chains = chains.baseAddress {
      regions.append(
        (UnsafeRawPointer(chains), self.chains.count * MemoryLayout<ChainRecord>.stride))
    }
    regions += buses.flatMap(\.memoryRegions)
    regions += routing?.memoryRegions ?? []
    return regions
  }
}

/// Where a player's crossfade between two plans is, for the frames of one call: the new plan's
/// weight at frame `k` of the call is `linear((clock + k − start) / length)`.
public struct CrossfadePosition: Sendable, BitwiseCopyable {
  public var clock: Int64
  public var start: Int64
  public var length: Int64

  @inlinable
  public init(clock: Int64, start: Int64, length: Int64) {
    self.clock = clock
    self.start = start
    self.length = length
  }

  /// The new plan's weight at frame `frame` of the call.
  ///
  /// - Note: Realtime-safe: arithmetic only.
  public func weight(_ frame: Int) -> Float {
    Float(Easing.linear(Double(clock + Int64(frame) - start) / Double(length)))
  }
}

/// Runs the effects part of a plan after its clips are mixed into their buses.
public enum EffectKernel {
  /// Runs each chain on its bus, delays it, adds it to `output` (which it overwrites, unless
  /// not `clearing`) at its post gain (ramping from the gain the bus had to this plan's over
  /// `rampFrames`), then runs the master chain on `output`. `frames` at most the rack's
  /// `maximumFrames`. For an offline render: one plan over the rack's life, whose delays
  /// never change (a delay of 0 keeps no history; a player calls
  /// ``finishLive(_:frames:channels:into:rampFrames:latency:clearing:freeze:at:)``).
  ///
  /// - Note: Realtime-safe: no allocation, no locks (the processors' `process` is too).
  public static func finish(
    _ graph: GraphView, frames: Int, channels: Int, into output: UnsafeMutablePointer<Float>,
    rampFrames: Int = 960, clearing: Bool = true, at time: Int64 = 0
  ) {
    if clearing { output.update(repeating: 0, count: frames * channels) }
    if graph.routed {
      for step in 0..<graph.chainCount {
        guard let index = graph.order?[step], let chain = graph.chains?[Int(index)] else { break }
        if chain.folded { continue }
        gather(
          graph, Int(index), frames: frames, channels: channels, at: time, rampFrames: rampFrames,
          live: false)
        automate(chain, at: time - Int64(chain.inputDelay))
        run(chain.processors, chain.processorCount, on: chain.buffer, frames: frames)
        send(
          graph, from: Int(index), preFader: false, frames: frames, channels: channels,
          rampFrames: rampFrames, live: false, at: time)
        sidechain(
          graph, from: Int(index), frames: frames, channels: channels, rampFrames: rampFrames,
          live: false)
        chain.delayLine.pointee.process(
          chain.buffer, frames: frames, delay: chain.delay, rampFrames: rampFrames, history: false)
        route(
          graph, chain, frames: frames, channels: channels, into: output, rampFrames: rampFrames,
          live: false)
      }
      automateMaster(graph, at: time, latency: graph.latency)
      run(graph.master, graph.masterCount, on: output, frames: frames)
      return
    }
    for index in 0..<graph.chainCount {
      guard let chain = graph.chains?[index] else { break }
      if chain.folded { continue }
      automate(chain, at: time)
      run(chain.processors, chain.processorCount, on: chain.buffer, frames: frames)
      chain.delayLine.pointee.process(
        chain.buffer, frames: frames, delay: chain.delay, rampFrames: rampFrames, history: false)
      add(
        chain, from: chain.buffer, frames: frames, channels: channels, into: output,
        rampFrames: rampFrames, fadingOut: CrossfadePosition(clock: 0, start: 0, length: 1),
        fading: false)
    }
    automateMaster(graph, at: time, latency: graph.latency)
    run(graph.master, graph.masterCount, on: output, frames: frames)
  }

  /// Hands each processor of `chain` its automation in this plan and the timeline frame its
  /// input plays at, the chain's input playing at `time`: each processor's input is the one
  /// before it delayed by that one's latency (a reorder's old order, running beside the new
  /// one, and a processor warming up to enter delay nothing on the way).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  static func automate(_ chain: ChainRecord, at time: Int64) {
    guard let processors = chain.processors, let settings = chain.settings else { return }
    var frame = time
    for index in 0..<chain.processorCount {
      let setting = settings[index]
      Unmanaged<EffectProcessor>.fromOpaque(processors[index])._withUnsafeGuaranteedRef {
        $0.setAutomation(setting.lanes, count: setting.laneCount)
        $0.setPosition(frame)
        if setting.role != ReorderRole.old.rawValue && $0.isEngaged {
          frame -= Int64($0.latency)
        }
      }
    }
  }

  /// ``automate(_:at:)`` for the master's chain, whose input (the tracks' sum) plays
  /// `latency` (the graph's) less the master chain's own before `time`.
  static func automateMaster(_ graph: GraphView, at time: Int64, latency: Int) {
    var chain = graph.masterChain
    chain.processors = graph.master
    chain.settings = graph.masterSettings
    chain.processorCount = graph.masterCount
    automate(chain, at: time - Int64(latency - engagedLatency(chain)))
  }

  /// A player's ``finish(_:frames:channels:into:rampFrames:clearing:at:)``: each delay line at the
  /// delay the player keeps it at (a chain new to the play starts at what `latency`, the
  /// graph's latency now, asks of it), not its plan's. During a freeze (`freeze` a drain or a
  /// shrink, see ``nextLiveStep(_:latency:maximumFrames:)``) no clip was mixed: the chain of
  /// the drain gives out what its processor holds, through the processors after it; every
  /// other chain reads its delay line without writing (for a drain of the master's chain,
  /// no chain runs and the master's gives out what its processor holds).
  ///
  /// - Note: Realtime-safe: no allocation, no locks (the processors' `process` is too).
  public static func finishLive(
    _ graph: GraphView, frames: Int, channels: Int, into output: UnsafeMutablePointer<Float>,
    rampFrames: Int, latency: Int, clearing: Bool = true, freeze: LiveStep = .none,
    at time: Int64 = 0
  ) {
    if clearing { output.update(repeating: 0, count: frames * channels) }
    if graph.routed && freeze.kind == .none {
      for step in 0..<graph.chainCount {
        guard let index = graph.order?[step], let chain = graph.chains?[Int(index)] else { break }
        gather(
          graph, Int(index), frames: frames, channels: channels, at: time, rampFrames: rampFrames,
          live: true)
        automate(chain, at: time - Int64(chain.inputDelay))
        runLive(chain, on: chain.buffer, frames: frames, channels: channels, rampFrames: rampFrames)
        send(
          graph, from: Int(index), preFader: false, frames: frames, channels: channels,
          rampFrames: rampFrames, live: true, at: time)
        sidechain(
          graph, from: Int(index), frames: frames, channels: channels, rampFrames: rampFrames,
          live: true)
        chain.delayLine.pointee.process(
          chain.buffer, frames: frames, delay: liveDelay(graph, chain, latency: latency),
          rampFrames: rampFrames)
        route(
          graph, chain, frames: frames, channels: channels, into: output, rampFrames: rampFrames,
          live: true)
      }
      automateMaster(graph, at: time, latency: latency)
      runLive(
        graph.masterChain, on: output, frames: frames, channels: channels, rampFrames: rampFrames)
      return
    }
    if graph.routed { clearInputs(graph, frames: frames, channels: channels) }
    let master = engagedLatency(graph.masterChain)
    let frozen = freeze.kind != .none
    let masterDrains = freeze.kind == .drain && freeze.chain < 0
    for index in 0..<graph.chainCount where !masterDrains {
      guard let chain = graph.chains?[index] else { break }
      prepareDelay(chain, latency: latency, master: master)
      if frozen && freeze.kind == .drain && freeze.chain == index {
        drain(
          chain.processors, chain.processorCount, slot: freeze.slot, into: chain.buffer,
          frames: frames)
        let delay = chain.delayLine.pointee.delay
        chain.delayLine.pointee.process(chain.buffer, frames: frames, delay: delay)
      } else if frozen {
        chain.delayLine.pointee.pull(into: chain.buffer, frames: frames)
      } else {
        automate(chain, at: time)
        runLive(
          chain, on: chain.buffer, frames: frames, channels: channels, rampFrames: rampFrames)
        let delay = chain.delayLine.pointee.delay
        chain.delayLine.pointee.process(chain.buffer, frames: frames, delay: delay)
      }
      add(
        chain, from: chain.buffer, frames: frames, channels: channels, into: output,
        rampFrames: rampFrames, fadingOut: CrossfadePosition(clock: 0, start: 0, length: 1),
        fading: false)
    }
    if masterDrains {
      drain(graph.master, graph.masterCount, slot: freeze.slot, into: output, frames: frames)
    } else {
      if !frozen { automateMaster(graph, at: time, latency: latency) }
      runLive(
        graph.masterChain, on: output, frames: frames, channels: channels, rampFrames: rampFrames)
    }
  }

  /// The delay a player keeps a routed chain's output at: its plan's, and for a chain going to
  /// the master what the graph's latency now has beyond the plan's.
  static func liveDelay(_ graph: GraphView, _ chain: ChainRecord, latency: Int) -> Int {
    chain.destination >= 0 ? chain.delay : max(0, chain.delay + latency - graph.latency)
  }

  /// Before chain `index` of a routed graph runs: what its track received, at the track's
  /// gain, pan and envelope (ramping from the gains reached), added to its bus (and as it is to
  /// its pre-fader tap), then its pre-fader sends; its input is left silent for the next call.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  static func gather(
    _ graph: GraphView, _ index: Int, frames: Int, channels: Int, at time: Int64,
    rampFrames: Int, live: Bool
  ) {
    guard let chain = graph.chains?[index] else { return }
    if let input = chain.input, let route = chain.route {
      if let prefader = chain.prefader {
        for sample in 0..<frames * channels { prefader[sample] += input[sample] }
      }
      var state = route.pointee
      if !state.hasGain {
        (state.left, state.right, state.hasGain) = (chain.inputLeft, chain.inputRight, true)
        (state.hadLane, state.laneKey) = (chain.pan != nil, chain.panKey)
        state.shapeKey = chain.envelopeKey
      }
      state.follow(lane: chain.pan != nil, key: chain.panKey, rampFrames: rampFrames)
      state.follow(envelope: chain.envelopeKey, rampFrames: rampFrames)
      let stepLeft =
        max(abs(chain.inputLeft), abs(state.left), 1e-6) / Float(max(rampFrames, 1))
      let stepRight =
        max(abs(chain.inputRight), abs(state.right), 1e-6) / Float(max(rampFrames, 1))
      let steady =
        chain.envelope == nil && chain.pan == nil && state.left == chain.inputLeft
        && state.right == chain.inputRight && (state.laneGlide == 0 || channels == 1)
        && state.shapeGlide == 0
      if steady { (state.laneLeft, state.laneRight, state.shapeReached) = (1, 1, 1) }
      if steady && (channels == 1 || state.left == state.right) {
        // Steady gains, no envelope or pan lane: the loop below's products (its shape is 1).
        accumulate(input, times: state.left, into: chain.buffer, count: frames * channels)
      } else if steady {
        for frame in 0..<frames {
          chain.buffer[frame * 2] += input[frame * 2] * state.left
          chain.buffer[frame * 2 + 1] += input[frame * 2 + 1] * state.right
        }
      } else {
        var envelope = Lane(chain.envelope, chain.envelopeCount, at: time)
        var lane = Lane(chain.pan, chain.panCount, at: time)
        for frame in 0..<frames {
          state.left = toward(state.left, chain.inputLeft, by: stepLeft)
          state.right = toward(state.right, chain.inputRight, by: stepRight)
          let t = time + Int64(frame)
          let shape = state.glide(shape: envelope.gain(at: t), rampFrames: rampFrames)
          if channels == 1 {
            chain.buffer[frame] += input[frame] * state.left * shape
          } else {
            var (left, right) = (state.left, state.right)
            let position = lane.value(at: t)
            if state.laneGlide > 0 {
              // A lane come, gone or changed: from the balance reached to the new one, over a
              // ramp.
              var (panLeft, panRight): (Float, Float) = (1, 1)
              if let position {
                let pan = PanLaw.stereoSource(pan: position)
                (panLeft, panRight) = (Float(pan.left), Float(pan.right))
              }
              (panLeft, panRight) = state.glide(panLeft, panRight, rampFrames: rampFrames)
              (left, right) = (left * panLeft, right * panRight)
            } else if let position {
              let pan = PanLaw.stereoSource(pan: position)
              (left, right) = (Float(Double(left) * pan.left), Float(Double(right) * pan.right))
              (state.laneLeft, state.laneRight) = (Float(pan.left), Float(pan.right))
            } else {
              (state.laneLeft, state.laneRight) = (1, 1)
            }
            chain.buffer[frame * 2] += input[frame * 2] * left * shape
            chain.buffer[frame * 2 + 1] += input[frame * 2 + 1] * right * shape
          }
        }
      }
      route.pointee = state
      input.update(repeating: 0, count: frames * channels)
    }
    send(
      graph, from: index, preFader: true, frames: frames, channels: channels,
      rampFrames: rampFrames, live: live, at: time)
  }

  /// An envelope's segments read frame by frame in time order, from a start found once.
  ///
  /// No closures or `Optional.map` here: a debug build instantiates their generic metadata
  /// (and allocates) on the audio thread the first time (the live routing test's counter saw
  /// two mallocs and two frees when it had them).
  struct Lane {
    let segments: UnsafePointer<EnvelopeSegment>?
    let count: Int
    var index = 0

    init(_ segments: UnsafePointer<EnvelopeSegment>?, _ count: Int, at time: Int64) {
      self.segments = segments
      self.count = count
      if let segments {
        let all = UnsafeBufferPointer(start: segments, count: count)
        index = EnvelopeSegment.index(of: time, in: all) ?? 0
      }
    }

    /// Moves to the segment holding `t` (at or after the last asked) of `segments`.
    @inline(__always)
    mutating func advance(_ segments: UnsafePointer<EnvelopeSegment>, to t: Int64) {
      while index + 1 < count && segments[index + 1].start <= t { index += 1 }
    }

    /// The gain at `t` (``Timeline/EnvelopeSegment/gain(at:)``): 1 for no lane.
    @inline(__always)
    mutating func gain(at t: Int64) -> Float {
      guard let segments else { return 1 }
      advance(segments, to: t)
      return Float(segments[index].gain(at: t))
    }

    /// The value at `t` (``Timeline/EnvelopeSegment/value(at:)``); nil for no lane.
    @inline(__always)
    mutating func value(at t: Int64) -> Double? {
      guard let segments else { return nil }
      advance(segments, to: t)
      return segments[index].value(at: t)
    }
  }

  /// One step of a linear ramp from `value` to `target`.
  @inline(__always)
  static func toward(_ value: Float, _ target: Float, by step: Float) -> Float {
    if value == target { return value }
    return value < target ? min(target, value + step) : max(target, value - step)
  }

  /// The sends of chain `from` that tap it pre-fader (or post-fader): a copy of its pre-fader
  /// buffer (or its bus, after its chain), delayed by the send's delay, added to the target's
  /// input at the send's gain, ramping from the gain reached (a send new to a play starts
  /// from silence).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  static func send(
    _ graph: GraphView, from: Int, preFader: Bool, frames: Int, channels: Int, rampFrames: Int,
    live: Bool, at time: Int64
  ) {
    guard let sends = graph.sends, let chains = graph.chains else { return }
    for index in 0..<graph.sendCount where sends[index].source == from {
      let send = sends[index]
      guard send.preFader == preFader, let target = chains[send.target].input else { continue }
      let source = chains[from]
      let tap = preFader ? source.prefader : source.buffer
      guard let tap else { continue }
      for sample in 0..<frames * channels { send.buffer[sample] = tap[sample] }
      send.delayLine.pointee.process(
        send.buffer, frames: frames, delay: send.delay, rampFrames: rampFrames)
      var state = send.state.pointee
      if !state.hasGain {
        (state.left, state.right) = live ? (0, 0) : (send.gainLeft, send.gainRight)
        state.hasGain = true
        (state.hadLane, state.laneKey) = (send.envelope != nil, send.envelopeKey)
      }
      state.follow(lane: send.envelope != nil, key: send.envelopeKey, rampFrames: rampFrames)
      if send.envelope == nil && state.left == send.gainLeft && state.right == send.gainRight
        && (channels == 1 || state.left == state.right) && state.laneGlide == 0
      {
        (state.laneLeft, state.laneRight) = (1, 1)
        // Steady, no envelope: the loop below's products (its shape is 1) in one pass.
        accumulate(send.buffer, times: state.left, into: target, count: frames * channels)
        send.state.pointee = state
        continue
      }
      let stepLeft = max(abs(send.gainLeft), abs(state.left), 1e-6) / Float(max(rampFrames, 1))
      let stepRight =
        max(abs(send.gainRight), abs(state.right), 1e-6) / Float(max(rampFrames, 1))
      var envelope = Lane(send.envelope, send.envelopeCount, at: time)
      for frame in 0..<frames {
        state.left = toward(state.left, send.gainLeft, by: stepLeft)
        state.right = toward(state.right, send.gainRight, by: stepRight)
        var shape = envelope.gain(at: time + Int64(frame))
        if state.laneGlide > 0 {
          // An envelope come, gone or changed: from the level reached to the new one, over a
          // ramp.
          shape = state.glide(shape, shape, rampFrames: rampFrames).0
        } else {
          (state.laneLeft, state.laneRight) = (shape, shape)
        }
        if channels == 1 {
          target[frame] += send.buffer[frame] * state.left * shape
        } else {
          target[frame * 2] += send.buffer[frame * 2] * state.left * shape
          target[frame * 2 + 1] += send.buffer[frame * 2 + 1] * state.right * shape
        }
      }
      send.state.pointee = state
    }
  }

  /// The side chains that chain `from` feeds: a copy of its output (after its chain, before
  /// its delay line), delayed by the side chain's delay, at its gain (ramping from the gain
  /// reached; one new to a play starts from silence), written into each effect's side-chain
  /// input, which the effect reads when its chain runs (later in the order).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  static func sidechain(
    _ graph: GraphView, from: Int, frames: Int, channels: Int, rampFrames: Int, live: Bool
  ) {
    guard let sidechains = graph.sidechains, let chains = graph.chains else { return }
    for index in 0..<graph.sidechainCount where sidechains[index].source == from {
      let record = sidechains[index]
      let tap = chains[from].buffer
      for sample in 0..<frames * channels { record.buffer[sample] = tap[sample] }
      record.delayLine.pointee.process(
        record.buffer, frames: frames, delay: record.delay, rampFrames: rampFrames)
      var state = record.state.pointee
      if !state.hasGain {
        state.left = live ? 0 : record.gain
        state.hasGain = true
      }
      // Added, not stored: a side chain switched to another source ramps in while the old one
      // ramps out into the same inputs (the effect clears them once it has read them).
      let step = max(abs(record.gain), abs(state.left), 1e-6) / Float(max(rampFrames, 1))
      for frame in 0..<frames {
        state.left = toward(state.left, record.gain, by: step)
        for channel in 0..<channels {
          let i = frame * channels + channel
          let keyed = record.buffer[i] * state.left
          record.target[i] += keyed
          if let second = record.second { second[i] += keyed }
        }
      }
      record.state.pointee = state
    }
  }

  /// Adds a routed chain's bus to where it goes (the output, or its destination's input) at
  /// its post gain, ramping as ``add(_:from:frames:channels:into:rampFrames:fadingOut:fading:)``
  /// does; in a player, a destination other than the last period's is reached by a crossfade
  /// of one ramp from the old to the new.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  static func route(
    _ graph: GraphView, _ chain: ChainRecord, frames: Int, channels: Int,
    into output: UnsafeMutablePointer<Float>, rampFrames: Int, live: Bool
  ) {
    guard let route = chain.route else { return }
    var state = route.pointee
    // A switch that comes while another is under way (two plans within one ramp) waits for it
    // to end, the sound going on to where that one was taking it: starting it at once would
    // drop what the first still gave its old destination, a step. Unless that destination has
    // left the plan (nothing to finish the switch into).
    let finishing =
      state.switchLeft > 0 && state.destination != chain.destinationTrack
      && destinationBuffer(graph, track: state.destination, output: output) != nil
    if state.destination != chain.destinationTrack && !finishing {
      // A chain no routed plan has run yet went to the master (a plan without routing).
      let was = max(state.destination, 0)
      if live && was != chain.destinationTrack {
        state.previous = was
        state.switchLeft = max(rampFrames, 1)
      }
      state.destination = chain.destinationTrack
    }
    guard let next = destinationBuffer(graph, track: state.destination, output: output) else {
      return
    }
    let before =
      state.switchLeft > 0 ? destinationBuffer(graph, track: state.previous, output: output) : nil
    let target = chain.postGain
    var gain = chain.delayLine.pointee.hasGain ? chain.delayLine.pointee.gain : target
    if gain == target && state.switchLeft == 0 {
      // Steady: the ramping loop's products (`w` is 1) in one vectorizable pass.
      accumulate(chain.buffer, times: gain, into: next, count: frames * channels)
      chain.delayLine.pointee.gain = gain
      chain.delayLine.pointee.hasGain = true
      route.pointee = state
      return
    }
    let step = max(abs(target), abs(gain), 1e-6) / Float(max(rampFrames, 1))
    for frame in 0..<frames {
      gain = toward(gain, target, by: step)
      var w: Float = 1
      if state.switchLeft > 0 {
        w = 1 - Float(state.switchLeft) / Float(max(rampFrames, 1))
        state.switchLeft -= 1
      }
      for channel in 0..<channels {
        let i = frame * channels + channel
        next[i] += chain.buffer[i] * gain * w
        if w < 1, let before { before[i] += chain.buffer[i] * gain * (1 - w) }
      }
    }
    chain.delayLine.pointee.gain = gain
    chain.delayLine.pointee.hasGain = true
    route.pointee = state
  }

  /// Where a chain going to `track` adds its sound: the output for the master (0), else that
  /// track's chain's input; nil for a track the plan does not have or that takes no input.
  static func destinationBuffer(
    _ graph: GraphView, track: Int64, output: UnsafeMutablePointer<Float>
  ) -> UnsafeMutablePointer<Float>? {
    if track == 0 { return output }
    // Through the pointer, field by field: binding each record (`if let chain = …`) copied the
    // whole of it, a twelfth of a routed render's time.
    guard let chains = graph.chains else { return nil }
    for index in 0..<graph.chainCount where chains[index].trackID == track {
      return chains[index].input
    }
    return nil
  }

  /// Silences every input of a routed graph (a call in which they are not gathered).
  static func clearInputs(_ graph: GraphView, frames: Int, channels: Int) {
    for index in 0..<graph.chainCount {
      if let input = graph.chains?[index].input {
        input.update(repeating: 0, count: frames * channels)
      }
    }
  }

  /// A chain's delay line, set where the graph's latency `latency` (the master's chain's
  /// `master` of it) asks, if the player has not set it yet (a chain new to the play).
  static func prepareDelay(_ chain: ChainRecord, latency: Int, master: Int) {
    guard !chain.delayLine.pointee.hasDelay else { return }
    let own = engagedLatency(chain)
    chain.delayLine.pointee.setDelay(max(0, latency - master - own))
  }

  /// Adds a bus's `buffer` to `output` at its post gain, ramping the gain it has reached to the
  /// chain's; each frame also times `1 − w` of the crossfade at `fadingOut` when `fading`.
  static func add(
    _ chain: ChainRecord, from buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int,
    into output: UnsafeMutablePointer<Float>, rampFrames: Int,
    fadingOut: CrossfadePosition, fading: Bool
  ) {
    // No optionals or closures here: a debug build would instantiate generic metadata (and
    // allocate) on the audio thread the first time.
    let target = chain.postGain
    var gain = chain.delayLine.pointee.hasGain ? chain.delayLine.pointee.gain : target
    if gain == target && !fading {
      // Steady (every block of a render): one pass the compiler vectorizes, the same sums.
      if gain != 0 { accumulate(buffer, times: gain, into: output, count: frames * channels) }
      chain.delayLine.pointee.gain = gain
      chain.delayLine.pointee.hasGain = true
      return
    }
    let step = max(abs(target), abs(gain), 1e-6) / Float(max(rampFrames, 1))
    for frame in 0..<frames {
      if gain != target {
        gain = gain < target ? min(target, gain + step) : max(target, gain - step)
      }
      let g = fading ? gain * (1 - fadingOut.weight(frame)) : gain
      if g == 0 { continue }
      for channel in 0..<channels {
        output[frame * channels + channel] += buffer[frame * channels + channel] * g
      }
    }
    chain.delayLine.pointee.gain = gain
    chain.delayLine.pointee.hasGain = true
  }

  /// `output[i] += buffer[i] * gain` over `count` samples: what a steady gain adds, the same
  /// products and sums as the ramping loops make once their ramps are done.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @inline(__always)
  static func accumulate(
    _ buffer: UnsafePointer<Float>, times gain: Float, into output: UnsafeMutablePointer<Float>,
    count: Int
  ) {
    for sample in 0..<count { output[sample] += buffer[sample] * gain }
  }

  /// Hands each processor of `graph` its settings in this plan: new values (continuous ones
  /// ramp, see ``/Effects/EffectProcessor/setTargets(_:)``) and bypass (a crossfade). What a
  /// player does when a plan starts to sound.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  public static func adopt(_ graph: GraphView) {
    for index in 0..<graph.chainCount {
      guard let chain = graph.chains?[index] else { break }
      adopt(chain.processors, chain.settings, chain.processorCount)
      holdLeaving(chain.processors, chain.processorCount)
    }
    adopt(graph.master, graph.masterSettings, graph.masterCount)
    holdLeaving(graph.master, graph.masterCount)
  }

  private static func adopt(
    _ processors: UnsafePointer<UnsafeRawPointer>?, _ settings: UnsafePointer<EffectSettings>?,
    _ count: Int
  ) {
    guard let processors, let settings else { return }
    for index in 0..<count {
      let joins = settings[index].role == ReorderRole.new.rawValue
      Unmanaged<EffectProcessor>.fromOpaque(processors[index])._withUnsafeGuaranteedRef {
        $0.setTargets(settings[index].values)
        $0.setBypassed(settings[index].bypassed)
        // A reorder's new order runs beside the old one at once (see ``ReorderRole``).
        if joins { $0.joinReorder() } else { $0.setPresent(settings[index].present) }
      }
    }
  }

  /// During a player's crossfade between two plans with effects (the old plan's clips mixed
  /// into its buses' scratch buffers, the new one's into their buffers): each bus of the new
  /// plan takes `old·(1 − w) + new·w` of the two; a bus only the old plan has (a track
  /// removed) runs its own chain on its fading part and adds it to `output`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  public static func crossfade(
    from old: GraphView, to new: GraphView, frames: Int, channels: Int,
    at position: CrossfadePosition, oldOnlyInto output: UnsafeMutablePointer<Float>,
    rampFrames: Int, live: Bool = false
  ) {
    for index in 0..<new.chainCount {
      guard let chain = new.chains?[index] else { break }
      var inOld = false
      for other in 0..<old.chainCount where old.chains?[other].buffer == chain.buffer {
        inOld = true
      }
      for frame in 0..<frames {
        let w = position.weight(frame)
        for channel in 0..<channels {
          let i = frame * channels + channel
          chain.buffer[i] = (inOld ? chain.scratch[i] * (1 - w) : 0) + chain.buffer[i] * w
        }
      }
    }
    for index in 0..<old.chainCount {
      guard let chain = old.chains?[index] else { break }
      var inNew = false
      for other in 0..<new.chainCount where new.chains?[other].buffer == chain.buffer {
        inNew = true
      }
      if inNew { continue }
      run(chain.processors, chain.processorCount, on: chain.scratch, frames: frames)
      // A player keeps each delay line at its own delay (see ``finishLive``).
      let delay = live ? chain.delayLine.pointee.delay : chain.delay
      chain.delayLine.pointee.process(
        chain.scratch, frames: frames, delay: delay, rampFrames: rampFrames)
      add(
        chain, from: chain.scratch, frames: frames, channels: channels, into: output,
        rampFrames: rampFrames, fadingOut: position, fading: true)
    }
  }

  /// Renders `[from, from + frames)` of a plan with effects into `output`: its clips into their
  /// buses, then ``finish(_:frames:channels:into:rampFrames:clearing:at:)``, in pieces of at most
  /// `maximumFrames`.
  /// Calls must follow the timeline in order (the effects keep state from one to the next).
  /// Returns the clip frames whose audio was not resident.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @discardableResult
  public static func render(
    _ plan: PlanView, from: Int64, frames: Int, maximumFrames: Int,
    into output: UnsafeMutablePointer<Float>
  ) -> Int {
    guard let graph = plan.graph?.pointee else {
      return RenderKernel.render(plan, from: from, frames: frames, into: output)
    }
    var missing = 0
    var done = 0
    while done < frames {
      let count = min(maximumFrames, frames - done)
      let piece = output + done * plan.outputChannels
      // The kernel clears `piece`, and mixes into it the clips of tracks folded into the
      // master (see ``TrackFold``): the chains add to them.
      missing += RenderKernel.render(plan, from: from + Int64(done), frames: count, into: piece)
      finish(
        graph, frames: count, channels: plan.outputChannels, into: piece, clearing: false,
        at: from + Int64(done))
      done += count
    }
    return missing
  }

  private static func run(
    _ processors: UnsafePointer<UnsafeRawPointer>?, _ count: Int,
    on buffer: UnsafeMutablePointer<Float>, frames: Int, from first: Int = 0
  ) {
    guard let processors else { return }
    for index in first..<max(first, count) {
      Unmanaged<EffectProcessor>.fromOpaque(processors[index])._withUnsafeGuaranteedRef {
        $0.process(buffer, frames: frames)
      }
    }
  }

  /// Drains the processor at `slot` into `buffer` (see ``Effects/EffectProcessor/drain(_:frames:)``)
  /// and runs the processors after it on what it gave.
  private static func drain(
    _ processors: UnsafePointer<UnsafeRawPointer>?, _ count: Int, slot: Int,
    into buffer: UnsafeMutablePointer<Float>, frames: Int
  ) {
    guard let processors, slot < count else { return }
    Unmanaged<EffectProcessor>.fromOpaque(processors[slot])._withUnsafeGuaranteedRef {
      $0.drain(buffer, frames: frames)
    }
    run(processors, count, on: buffer, frames: frames, from: slot + 1)
  }

  /// The latency of a chain's processors that are engaged (see
  /// ``Effects/EffectProcessor/isEngaged``): what the chain delays its input by now. A
  /// reorder's old order runs beside its new one, whose latency is the same: counted once.
  static func engagedLatency(_ chain: ChainRecord) -> Int {
    guard let processors = chain.processors, let settings = chain.settings else { return 0 }
    var total = 0
    for index in 0..<chain.processorCount
    where settings[index].role != ReorderRole.old.rawValue {
      Unmanaged<EffectProcessor>.fromOpaque(processors[index])._withUnsafeGuaranteedRef {
        if $0.isEngaged { total += $0.latency }
      }
    }
    return total
  }

  /// Runs a player's chain on `buffer`: its processors in order, and a reorder's two orders
  /// side by side (see ``ReorderRole``).
  static func runLive(
    _ chain: ChainRecord, on buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int,
    rampFrames: Int
  ) {
    guard let processors = chain.processors, let settings = chain.settings else { return }
    let count = chain.processorCount
    var slot = 0
    var reordering = false
    while slot < count {
      guard settings[slot].role != ReorderRole.none.rawValue else {
        Unmanaged<EffectProcessor>.fromOpaque(processors[slot])._withUnsafeGuaranteedRef {
          $0.process(buffer, frames: frames)
        }
        slot += 1
        continue
      }
      var split = slot
      while split < count && settings[split].role == ReorderRole.old.rawValue { split += 1 }
      var end = split
      while end < count && settings[end].role == ReorderRole.new.rawValue { end += 1 }
      reordering = true
      reorder(
        chain, old: slot, new: split, end: max(end, slot + 1), on: buffer, frames: frames,
        channels: channels, rampFrames: rampFrames)
      slot = max(end, slot + 1)
    }
    if !reordering { chain.reorder.pointee.key = 0 }
  }

  /// A reorder of `chain` for `frames` frames: its old order (processors `old..<new`) on
  /// `buffer`, its new order (`new..<end`, the same effects, the same latency) on a copy of
  /// the same input; `buffer` gives the old order's output until the new order's is within
  /// −40 dB of it (measured over 1,024 frames, once the new order has run its latency and a
  /// ramp) or has run a quarter of a second (`12.5` ramps), then crossfades to the new
  /// order's over a ramp; then the old order's processors are let go of
  /// (``Effects/EffectProcessor/dismiss()``) and the new order plays alone.
  static func reorder(
    _ chain: ChainRecord, old: Int, new: Int, end: Int, on buffer: UnsafeMutablePointer<Float>,
    frames: Int, channels: Int, rampFrames: Int
  ) {
    guard let processors = chain.processors else { return }
    let key = new < end ? UInt(bitPattern: processors[new]) : 0
    var state = chain.reorder.pointee
    if state.key != key {
      state = ReorderState()
      state.key = key
    }
    if state.done {
      run(processors, end, on: buffer, frames: frames, from: new)
      chain.reorder.pointee = state
      return
    }
    let copy = chain.scratch
    for sample in 0..<frames * channels { copy[sample] = buffer[sample] }
    run(processors, new, on: buffer, frames: frames, from: old)
    run(processors, end, on: copy, frames: frames, from: new)
    if state.mix == 0 {
      var latency = 0
      for slot in new..<end {
        Unmanaged<EffectProcessor>.fromOpaque(processors[slot])._withUnsafeGuaranteedRef {
          latency += $0.latency
        }
      }
      if state.frames >= latency + rampFrames {
        for sample in 0..<frames * channels {
          let difference = Double(copy[sample]) - Double(buffer[sample])
          state.difference += difference * difference
          state.energy += Double(buffer[sample]) * Double(buffer[sample])
        }
        state.measured += frames
        if state.measured >= 1_024 {
          state.converged = state.difference <= state.energy * 1e-4
          (state.difference, state.energy, state.measured) = (0, 0, 0)
        }
      }
      state.frames += frames
      // From the next call on: crossfade.
      if state.converged || state.frames >= rampFrames * 25 / 2 { state.mix = 1 }
    } else {
      for frame in 0..<frames {
        let w = Float(state.mix) / Float(rampFrames)
        for channel in 0..<channels {
          let i = frame * channels + channel
          // Exactly the new order's at the end; exactly the old's where they agree.
          buffer[i] = state.mix >= rampFrames ? copy[i] : buffer[i] + (copy[i] - buffer[i]) * w
        }
        if state.mix < rampFrames { state.mix += 1 }
      }
      if state.mix >= rampFrames {
        for slot in old..<new {
          Unmanaged<EffectProcessor>.fromOpaque(processors[slot])._withUnsafeGuaranteedRef {
            $0.dismiss()
          }
        }
        state.done = true
      }
    }
    chain.reorder.pointee = state
  }

  /// Ends a reorder of `chain` at once (the chains start afresh): the old order let go of.
  static func finishReorder(_ chain: ChainRecord) {
    guard let processors = chain.processors, let settings = chain.settings else { return }
    var first = 0
    for slot in 0..<chain.processorCount {
      let role = settings[slot].role
      if role == ReorderRole.old.rawValue {
        Unmanaged<EffectProcessor>.fromOpaque(processors[slot])._withUnsafeGuaranteedRef {
          $0.dismiss()
        }
      } else if role == ReorderRole.new.rawValue && first == 0 {
        first = Int(bitPattern: UInt(bitPattern: processors[slot]))
      }
    }
    guard first != 0 else { return }
    var state = ReorderState()
    state.key = UInt(bitPattern: first)
    state.done = true
    chain.reorder.pointee = state
  }

  /// Whether the chains of `graph` are as their plan has them, nothing under way: no effect
  /// warming up to enter or leaving, no reorder, and `latency` the longest chain's and the
  /// master's. A player swaps in a reorder only then, and a plan of any kind only once a
  /// reorder is over.
  public static func isSettled(
    _ graph: GraphView, latency: Int
  ) -> (settled: Bool, reordering: Bool) {
    var settled = true
    var reordering = false
    var longest = 0
    for index in -1..<graph.chainCount {
      let chain = record(graph, index)
      guard let processors = chain.processors, let settings = chain.settings else { continue }
      for slot in 0..<chain.processorCount {
        let role = settings[slot].role
        Unmanaged<EffectProcessor>.fromOpaque(processors[slot])._withUnsafeGuaranteedRef {
          if $0.isWarmingUp || $0.isLeaving { settled = false }
          if role == ReorderRole.old.rawValue && $0.isEngaged { reordering = true }
        }
      }
      if index >= 0 { longest = max(longest, engagedLatency(chain)) }
    }
    let natural = graph.routed ? graph.latency : longest + engagedLatency(graph.masterChain)
    if latency != natural { settled = false }
    return (settled && !reordering, reordering)
  }

  /// Chain `index` of `graph`, −1 for the master's.
  static func record(_ graph: GraphView, _ index: Int) -> ChainRecord {
    if index >= 0, let chain = graph.chains?[index] { return chain }
    return graph.masterChain
  }
}

extension EffectKernel {
  /// What a player does next to bring its chains to its plan's: its processors' entries and
  /// exits (see ``/Effects/EffectProcessor/setPresent(_:)``) move the graph's latency only by
  /// feeding the chains ahead (the delay lines of the others grow) or holding them back (the
  /// delay lines give out what they hold), so the sound never jumps and two readings of the
  /// signal are never mixed: a crossfade of a signal with itself delayed comb-filters it (64
  /// frames: −26 dB at 375 Hz for 20 ms, −3 dB on noise). `latency` is the graph's latency
  /// now (what the player is fed ahead of what it plays).
  ///
  /// In order: a processor that has warmed up to enter is engaged (``LiveStep/Kind/absorb``)
  /// if every delay line has room; one that has left its chain's sound is drained
  /// (``LiveStep/Kind/drain``); a graph whose latency is more than its longest chain's and
  /// the master's gives the difference back (``LiveStep/Kind/shrink``: a chain that entered
  /// an effect is not always the longest). Leaving processors of a chain are held while an
  /// effect of the same chain warms up, so that a moved effect's old place crossfades out as
  /// its new place crossfades in.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  public static func nextLiveStep(_ graph: GraphView, latency: Int, maximumFrames: Int) -> LiveStep
  {
    let master = engagedLatency(graph.masterChain)
    var longest = 0
    for index in 0..<graph.chainCount {
      guard let chain = graph.chains?[index] else { break }
      prepareDelay(chain, latency: latency, master: master)
      longest = max(longest, engagedLatency(chain))
      holdLeaving(chain.processors, chain.processorCount)
    }
    holdLeaving(graph.master, graph.masterCount)
    // An effect that has warmed up enters: every other chain's delay line takes its latency.
    for index in -1..<graph.chainCount {
      let chain = record(graph, index)
      let slot = firstSlot(chain.processors, chain.processorCount, wanting: .engage)
      guard slot >= 0 else { continue }
      let frames = latencyAt(chain.processors, slot)
      if index < 0 || fits(graph, growing: frames, except: index, maximumFrames: maximumFrames) {
        return LiveStep(kind: .absorb, chain: index, slot: slot, frames: frames, slack: 0)
      }
    }
    // An effect that has left the sound gives back what it holds.
    for index in -1..<graph.chainCount {
      let chain = record(graph, index)
      let slot = firstSlot(chain.processors, chain.processorCount, wanting: .drain)
      guard slot >= 0 else { continue }
      let frames = latencyAt(chain.processors, slot)
      var slack = 0
      if index >= 0 {
        var least = Int.max
        for other in 0..<graph.chainCount where other != index {
          if let chain = graph.chains?[other] { least = min(least, chain.delayLine.pointee.delay) }
        }
        slack = least == .max ? 0 : max(0, frames - least)
      }
      if fits(graph, growing: slack, except: -2, maximumFrames: maximumFrames) {
        return LiveStep(kind: .drain, chain: index, slot: slot, frames: frames, slack: slack)
      }
    }
    let natural = graph.routed ? graph.latency : longest + master
    if latency > natural {
      return LiveStep(kind: .shrink, chain: 0, slot: 0, frames: latency - natural, slack: 0)
    }
    return .none
  }

  /// Feeds `frames` frames of `plan`'s clips from `from` into its chains for a player, the
  /// output dropped (`scratch`: `maximumFrames` frames): with `step` none, every chain and the
  /// master's play as usual (a preroll: the chains' latency fed ahead of the first frame
  /// heard); for an absorb, the chain of `step` runs up to its processor `step.slot`, which is
  /// then engaged, and every other chain's delay line takes what its chain gives (or, for the
  /// master's processor, every chain plays into the master's chain up to it); for a drain's
  /// slack, every chain's delay line takes what its chain gives. The clips' gain ramps and
  /// crossfades follow `clock` (the player's count of frames mixed). Returns the clip frames
  /// whose audio was not resident.
  ///
  /// - Note: Realtime-safe: no allocation, no locks (the processors' `process` is too).
  public static func feed(
    _ plan: PlanView, from: Int64, frames: Int, maximumFrames: Int, clock: Int64,
    scratch: UnsafeMutablePointer<Float>, step: LiveStep, rampFrames: Int, latency: Int
  ) -> Int {
    guard let graph = plan.graph?.pointee else { return 0 }
    let channels = plan.outputChannels
    let master = engagedLatency(graph.masterChain)
    var missing = 0
    var done = 0
    while done < frames {
      let count = min(maximumFrames, frames - done)
      missing += RenderKernel.render(
        plan, from: from + Int64(done), frames: count, into: scratch, clock: clock + Int64(done))
      if graph.routed && step.kind == .none {
        finishLive(
          graph, frames: count, channels: channels, into: scratch, rampFrames: rampFrames,
          latency: latency, clearing: false, at: from + Int64(done))
        done += count
        continue
      }
      if graph.routed { clearInputs(graph, frames: count, channels: channels) }
      for index in 0..<graph.chainCount {
        guard let chain = graph.chains?[index] else { break }
        prepareDelay(chain, latency: latency, master: master)
        switch step.kind {
        case .absorb where step.chain == index:
          run(
            chain.processors, min(step.slot + 1, chain.processorCount), on: chain.buffer,
            frames: count)
        case .absorb where step.chain >= 0, .drain:
          runLive(
            chain, on: chain.buffer, frames: count, channels: channels, rampFrames: rampFrames)
          chain.delayLine.pointee.push(chain.buffer, frames: count)
        default:
          automate(chain, at: from + Int64(done))
          runLive(
            chain, on: chain.buffer, frames: count, channels: channels, rampFrames: rampFrames)
          let delay = chain.delayLine.pointee.delay
          chain.delayLine.pointee.process(chain.buffer, frames: count, delay: delay)
          add(
            chain, from: chain.buffer, frames: count, channels: channels, into: scratch,
            rampFrames: rampFrames, fadingOut: CrossfadePosition(clock: 0, start: 0, length: 1),
            fading: false)
        }
      }
      if step.kind == .none {
        automateMaster(graph, at: from + Int64(done), latency: latency)
        runLive(
          graph.masterChain, on: scratch, frames: count, channels: channels,
          rampFrames: rampFrames)
      } else if step.kind == .absorb && step.chain < 0 {
        run(graph.master, min(step.slot + 1, graph.masterCount), on: scratch, frames: count)
      }
      done += count
    }
    if step.kind == .absorb {
      let chain = record(graph, step.chain)
      if let processors = chain.processors, step.slot < chain.processorCount {
        Unmanaged<EffectProcessor>.fromOpaque(processors[step.slot])._withUnsafeGuaranteedRef {
          $0.engage()
        }
        // Effects leaving the chain crossfade out as this one crossfades in (a move).
        holdLeaving(processors, chain.processorCount)
      }
    }
    return missing
  }

  /// Starts a player's chains afresh (its first plan, a seek, a loop wrap): every entry or
  /// exit ends at once (``/Effects/EffectProcessor/finishTransition()``) and each delay line is
  /// set to what the graph's latency asks of its chain. Returns that latency (the longest
  /// chain's plus the master's): what the player then feeds the chains ahead by, unheard.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  public static func restart(_ graph: GraphView) -> Int {
    for index in -1..<graph.chainCount {
      let chain = record(graph, index)
      finishReorder(chain)
      guard let processors = chain.processors else { continue }
      for slot in 0..<chain.processorCount {
        Unmanaged<EffectProcessor>.fromOpaque(processors[slot])._withUnsafeGuaranteedRef {
          $0.finishTransition()
        }
      }
    }
    let master = engagedLatency(graph.masterChain)
    var longest = 0
    for index in 0..<graph.chainCount {
      guard let chain = graph.chains?[index] else { break }
      longest = max(longest, engagedLatency(chain))
    }
    if graph.routed {
      // Every path as the plan aligns it (see ``Routing``), every route where the plan has it
      // and every send at its gain: the play starts as a render does.
      for index in 0..<graph.chainCount {
        guard let chain = graph.chains?[index] else { break }
        chain.delayLine.pointee.setDelay(chain.delay)
        if let route = chain.route {
          route.pointee.destination = chain.destinationTrack
          route.pointee.switchLeft = 0
        }
      }
      for index in 0..<graph.sendCount {
        guard let send = graph.sends?[index] else { break }
        send.state.pointee.left = send.gainLeft
        send.state.pointee.right = send.gainRight
        send.state.pointee.hasGain = true
      }
      return graph.latency
    }
    for index in 0..<graph.chainCount {
      guard let chain = graph.chains?[index] else { break }
      chain.delayLine.pointee.setDelay(longest - engagedLatency(chain))
    }
    return longest + master
  }

  private enum Wish: UInt8 {
    case engage
    case drain
  }

  /// The first slot whose processor wants to engage or to drain, −1 for none. (No optionals
  /// or closures on the audio thread: see ``add(_:from:frames:channels:into:rampFrames:fadingOut:fading:)``.)
  private static func firstSlot(
    _ processors: UnsafePointer<UnsafeRawPointer>?, _ count: Int, wanting wish: Wish
  ) -> Int {
    guard let processors else { return -1 }
    for slot in 0..<count {
      var yes = false
      Unmanaged<EffectProcessor>.fromOpaque(processors[slot])._withUnsafeGuaranteedRef {
        switch wish {
        case .engage: yes = $0.wantsToEngage
        case .drain: yes = $0.wantsToDrain
        }
      }
      if yes { return slot }
    }
    return -1
  }

  private static func latencyAt(_ processors: UnsafePointer<UnsafeRawPointer>?, _ slot: Int) -> Int
  {
    guard let processors else { return 0 }
    return Unmanaged<EffectProcessor>.fromOpaque(processors[slot])._withUnsafeGuaranteedRef {
      $0.latency
    }
  }

  /// Holds a chain's leaving processors at their output while another of the chain warms up.
  private static func holdLeaving(_ processors: UnsafePointer<UnsafeRawPointer>?, _ count: Int) {
    guard let processors else { return }
    var warming = false
    for slot in 0..<count {
      Unmanaged<EffectProcessor>.fromOpaque(processors[slot])._withUnsafeGuaranteedRef {
        if $0.isWarmingUp { warming = true }
      }
    }
    for slot in 0..<count {
      Unmanaged<EffectProcessor>.fromOpaque(processors[slot])._withUnsafeGuaranteedRef {
        $0.holdLeaving(warming)
      }
    }
  }

  /// Whether every chain's delay line but `except`'s has room to grow by `frames`.
  private static func fits(
    _ graph: GraphView, growing frames: Int, except: Int, maximumFrames: Int
  ) -> Bool {
    for index in 0..<graph.chainCount where index != except {
      guard let chain = graph.chains?[index] else { break }
      let line = chain.delayLine.pointee
      if line.delay + frames > line.room(maximumFrames: maximumFrames) { return false }
    }
    return true
  }
}

/// The value of an automation lane (``Effects/AutomationLane``) whose segments are a
/// ``Timeline/ParameterEnvelope``'s, at a timeline frame.
///
/// - Note: Realtime-safe: a binary search and arithmetic.
private let automationValue: @convention(c) (UnsafeRawPointer, Int, Int64) -> Float = {
  raw, count, frame in
  let segments = UnsafeBufferPointer(
    start: raw.assumingMemoryBound(to: EnvelopeSegment.self), count: count)
  guard let index = EnvelopeSegment.index(of: frame, in: segments) else { return 0 }
  return Float(segments[index].value(at: frame))
}
