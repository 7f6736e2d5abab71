import Effects
import Timeline

/// One chain of a plan as the kernel reads it: its bus, its processors in order, how long its
/// output is delayed to line up with the others, and the gain after it.
public struct ChainRecord: @unchecked Sendable, BitwiseCopyable {
  /// The bus's buffer (``EffectRack``'s, `maximumFrames` interleaved frames).
  public var buffer: UnsafeMutablePointer<Float>
  /// The bus's second buffer: where a player mixes the clips of the plan fading out.
  public var scratch: UnsafeMutablePointer<Float>
  public var delayLine: UnsafeMutablePointer<DelayLine>
  /// Frames the chain's output is delayed by: the longest chain's latency less this one's.
  public var delay: Int
  /// The processors, as `Unmanaged<EffectProcessor>` addresses, kept alive by the plan.
  public var processors: UnsafePointer<UnsafeRawPointer>?
  /// Each processor's settings in this plan, in the same order.
  public var settings: UnsafePointer<EffectSettings>?
  public var processorCount: Int
  /// The gain after the chain: mute and solo (0 or 1) times the master gain.
  public var postGain: Float
}

/// One effect's values in a plan (its plugin's control ports in order) and its bypass: what a
/// player hands the running processor when the plan starts to sound.
public struct EffectSettings: @unchecked Sendable, BitwiseCopyable {
  public var values: UnsafePointer<Float>
  public var bypassed: Bool
  /// False for a processor leaving its chain (see ``Effects/EffectProcessor/setPresent(_:)``).
  public var present: Bool
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
  /// The frames the whole graph delays its input by: the longest track chain's latency plus
  /// the master chain's. A render feeds the kernel this far ahead and drops as many frames at
  /// the start, so that what it writes lines up with the timeline.
  public var latency: Int
}

/// What a plan with effects owns besides its clips.
final class CompiledGraph: @unchecked Sendable {
  let chains: UnsafeMutableBufferPointer<ChainRecord>
  let processorLists: [UnsafeMutableBufferPointer<UnsafeRawPointer>]
  let masterList: UnsafeMutableBufferPointer<UnsafeRawPointer>
  let settingLists: [UnsafeMutableBufferPointer<EffectSettings>]
  let valueLists: [UnsafeMutablePointer<Float>]
  /// Keeps the processors and buses alive while the plan is.
  let processors: [EffectProcessor]
  let buses: [ChainBus]
  let view: UnsafeMutablePointer<GraphView>
  /// The effect ids and chain owners the plan uses (what its rack must keep).
  let effectIDs: Set<Effect.ID>
  let owners: Set<ChainOwner>

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
    /// The processors of `owner`'s chain (see ``EffectRack/chain(_:_:)``), with their settings
    /// in this plan.
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
        settings.append(
          EffectSettings(
            values: UnsafePointer(values), bypassed: entry.bypassed, present: entry.present))
      }
      let list = UnsafeMutableBufferPointer<EffectSettings>.allocate(
        capacity: max(settings.count, 1))
      _ = list.initialize(from: settings)
      settingLists.append(list)
      // What the chain will delay by once its entries have entered or left.
      let latency = entries.filter(\.present).reduce(0) { $0 + $1.processor.latency }
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
          buffer: bus.buffer, scratch: bus.scratch, delayLine: bus.delay, delay: 0,
          processors: UnsafePointer(list.baseAddress),
          settings: UnsafePointer(settings.baseAddress), processorCount: chain.count,
          postGain: audible.contains(track.id) ? Float(project.masterGain.linear) : 0))
    }
    let (masterChain, masterSettings, masterLatency) = try chain(.master, project.masterEffects)
    if !missing.isEmpty { throw .pluginsMissing(missing.sorted { $0.0 < $1.0 }) }
    let longest = latencies.max() ?? 0
    guard longest <= rack.maximumDelay else {
      throw .latencyTooLong(frames: longest, most: rack.maximumDelay)
    }
    for index in records.indices { records[index].delay = longest - latencies[index] }
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
    self.processors = processors + masterChain
    self.buses = buses
    view = .allocate(capacity: 1)
    view.initialize(
      to: GraphView(
        chains: UnsafePointer(chains.baseAddress),
        chainCount: records.count, master: UnsafePointer(masterList.baseAddress),
        masterSettings: UnsafePointer(masterSettings.baseAddress), masterCount: masterChain.count,
        latency: longest + masterLatency))
    rack.compiled()
    effectIDs = Set(project.allEffects.map(\.effect.id))
    owners = Set(project.tracks.map { ChainOwner.track($0.id) }).union([.master])
  }

  deinit {
    view.deinitialize(count: 1)
    view.deallocate()
    chains.deallocate()
    masterList.deallocate()
    for list in processorLists { list.deallocate() }
    for list in settingLists { list.deallocate() }
    for values in valueLists { values.deallocate() }
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
  /// not `clearing`) at its
  /// post gain (ramping from the gain the bus had to this plan's over `rampFrames`), then runs
  /// the master chain on `output`. `frames` at most the rack's `maximumFrames`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks (the processors' `process` is too).
  public static func finish(
    _ graph: GraphView, frames: Int, channels: Int, into output: UnsafeMutablePointer<Float>,
    rampFrames: Int = 960, clearing: Bool = true
  ) {
    if clearing { output.update(repeating: 0, count: frames * channels) }
    for index in 0..<graph.chainCount {
      guard let chain = graph.chains?[index] else { break }
      run(chain.processors, chain.processorCount, on: chain.buffer, frames: frames)
      chain.delayLine.pointee.process(
        chain.buffer, frames: frames, delay: chain.delay, rampFrames: rampFrames)
      add(
        chain, from: chain.buffer, frames: frames, channels: channels, into: output,
        rampFrames: rampFrames, fadingOut: CrossfadePosition(clock: 0, start: 0, length: 1),
        fading: false)
    }
    run(graph.master, graph.masterCount, on: output, frames: frames)
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

  /// Hands each processor of `graph` its settings in this plan: new values (continuous ones
  /// ramp, see ``Effects/EffectProcessor/setTargets(_:)``) and bypass (a crossfade). What a
  /// player does when a plan starts to sound.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  public static func adopt(_ graph: GraphView) {
    for index in 0..<graph.chainCount {
      guard let chain = graph.chains?[index] else { break }
      adopt(chain.processors, chain.settings, chain.processorCount)
    }
    adopt(graph.master, graph.masterSettings, graph.masterCount)
  }

  private static func adopt(
    _ processors: UnsafePointer<UnsafeRawPointer>?, _ settings: UnsafePointer<EffectSettings>?,
    _ count: Int
  ) {
    guard let processors, let settings else { return }
    for index in 0..<count {
      Unmanaged<EffectProcessor>.fromOpaque(processors[index])._withUnsafeGuaranteedRef {
        $0.setTargets(settings[index].values)
        $0.setBypassed(settings[index].bypassed)
        $0.setPresent(settings[index].present)
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
    rampFrames: Int
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
      chain.delayLine.pointee.process(
        chain.scratch, frames: frames, delay: chain.delay, rampFrames: rampFrames)
      add(
        chain, from: chain.scratch, frames: frames, channels: channels, into: output,
        rampFrames: rampFrames, fadingOut: position, fading: true)
    }
  }

  /// Renders `[from, from + frames)` of a plan with effects into `output`: its clips into their
  /// buses, then ``finish(_:frames:channels:into:)``, in pieces of at most `maximumFrames`.
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
      missing += RenderKernel.render(plan, from: from + Int64(done), frames: count, into: piece)
      finish(graph, frames: count, channels: plan.outputChannels, into: piece)
      done += count
    }
    return missing
  }

  private static func run(
    _ processors: UnsafePointer<UnsafeRawPointer>?, _ count: Int,
    on buffer: UnsafeMutablePointer<Float>, frames: Int
  ) {
    guard let processors else { return }
    for index in 0..<count {
      Unmanaged<EffectProcessor>.fromOpaque(processors[index])._withUnsafeGuaranteedRef {
        $0.process(buffer, frames: frames)
      }
    }
  }
}
