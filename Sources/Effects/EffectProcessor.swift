import Atomics
import Foundation

/// One effect of a chain, running: one or two plugin instances, its parameter ramps, and a dry
/// path delayed by its latency.
///
/// ```swift
/// let catalog = PluginCatalog.load()
/// let eq = try catalog.require("http://gareus.org/oss/lv2/fil4#stereo")
/// let effect = try EffectProcessor(
///   plugin: eq, catalog: catalog, sampleRate: 48_000, channels: 2, maximumFrames: 1024,
///   values: eq.defaultValues, bypassed: false, state: nil)
/// effect.process(buffer, frames: 1024)   // on the audio thread
/// ```
///
/// **The 64-frame grid.** The plugin runs on exactly 64 frames at a time, at every multiple of
/// 64 of the frames this processor has been given since it was made, through a 64-frame FIFO
/// (which is part of ``latency``; ``StepAlignment/cut`` does without it, see there); new
/// targets, ramp steps and bypass changes apply only at those boundaries. So the output depends on the signal and on which 64-frame step targets
/// were set in, not on how the caller blocks it: a render in blocks of 3840 equals a play in
/// periods of 256 or 100, bit for bit, whatever the plugin. (Cutting the caller's blocks at
/// grid points alone is not enough: x42's plugins smooth parameters and filter coefficients
/// per `run` call, and gave different output for blocks of 1 and 100.)
///
/// **Channels.** A 1-in/1-out plugin on a stereo track runs as two instances (dual mono, as
/// Ardour replicates). A 2/2 plugin on a mono track gets the channel on both inputs and
/// gives (L+R)/2; a 1-in plugin on stereo gets (L+R)/2; a 1-out plugin on stereo has its
/// output copied to both channels.
///
/// **Latency.** Read from the plugin's `lv2:reportsLatency` output once, at creation: the fresh
/// instance runs 64 frames of silence, the port is read, and the instance is deactivated and
/// activated again (LV2: activate resets the plugin's signal state, as if new). A plugin whose
/// latency changes later with a parameter keeps the first value here; the dry path and the
/// track's compensation are built on it.
///
/// **Worker.** The Worker extension's `work` runs on a thread of this processor, so when a
/// response reaches `run` depends on that thread's timing: a plugin that uses it is realtime
/// but not necessarily reproducible bit for bit. With `worker: .inline` (offline renders)
/// `work` runs right after the `run` that asked for it, and the output is reproducible.
public final class EffectProcessor: @unchecked Sendable {
  /// How an effect's `run` calls line up with its 64-frame grid.
  public enum StepAlignment: Sendable, Hashable {
    /// Through a 64-frame FIFO: every `run` is exactly one 64-frame step, so the output does
    /// not depend on the caller's block size, whatever the plugin; 64 frames of latency more.
    case fifo
    /// The caller's blocks cut at the grid's points, each piece one `run`, no added latency.
    /// The output equals another run's when the block sizes are multiples of 64 (every `run`
    /// is then a whole step), or for a plugin whose output does not depend on where its runs
    /// begin and end; x42's EQ, compressor and limiter do depend on it (they smooth per run).
    case cut
  }

  /// Parameters and bypass change only at multiples of this many frames of the running count.
  public static let stepFrames = 64

  public let plugin: PluginInfo
  public let sampleRate: Int
  /// 1 or 2: the track's.
  public let channels: Int
  public let maximumFrames: Int
  /// Frames this effect delays its input by: ``pluginLatency`` plus the 64 frames of the FIFO
  /// that makes every `run` exactly one 64-frame step (see ``process(_:frames:)``). Constant
  /// for the processor's life; the dry path is delayed by the same.
  public let latency: Int
  /// What the plugin reports on its `lv2:reportsLatency` port at creation (0 without one).
  public let pluginLatency: Int
  /// How `run` calls line up with the 64-frame grid.
  public let alignment: StepAlignment
  private let usesFIFO: Bool
  /// How long a ramp or a bypass crossfade takes: 20 ms at ``sampleRate``.
  public let rampFrames: Int

  private let world: LilvWorld
  private let instanceCount: Int
  private let instances: UnsafeMutablePointer<LV2Instance>
  private let features: [HostFeatures]
  private let workers: [Worker?]
  /// Per instance, its worker's channel or nil (read by the audio thread).
  private let workerChannels: UnsafeMutablePointer<UnsafeMutablePointer<WorkerChannel>?>
  private let inputsPerInstance: Int
  private let outputsPerInstance: Int
  /// instanceCount × inputsPerInstance × 64 floats.
  private let inputBuffers: UnsafeMutablePointer<Float>
  private let outputBuffers: UnsafeMutablePointer<Float>
  /// 64 zeros for optional and CV inputs; scratch for optional outputs.
  private let silence: UnsafeMutablePointer<Float>
  /// The plugin's side-chain audio inputs per instance (see ``sidechainInput``).
  private let sidechainsPerInstance: Int
  /// instanceCount × sidechainsPerInstance × 64 floats: what the side-chain ports read.
  private let sidechainBuffers: UnsafeMutablePointer<Float>
  /// The side-chain signal's FIFO, beside ``fifoIn``: `channels × 64` floats.
  private let sidechainFIFO: UnsafeMutablePointer<Float>
  /// Where a caller puts the side-chain signal of the next ``process(_:frames:)`` call:
  /// `maximumFrames` interleaved frames of ``channels`` channels, frame for frame beside the
  /// call's buffer (so it passes through the same FIFO and reaches the plugin aligned with
  /// it). The call reads and then silences what it used: a call nobody fed hears silence, as a
  /// plugin's side chain did before side chains were routed. Holds zeros for a plugin without
  /// side-chain inputs (``takesSidechain``), and is never read then.
  public let sidechainInput: UnsafeMutablePointer<Float>
  private let scratch: UnsafeMutablePointer<Float>
  private let scratchCount: Int

  private let controlCount: Int
  /// The values the plugin reads: shared by every instance.
  private let current: UnsafeMutablePointer<Float>
  private let rampStart: UnsafeMutablePointer<Float>
  private let rampTarget: UnsafeMutablePointer<Float>
  private let rampStep: UnsafeMutablePointer<Int>
  private let pending: UnsafeMutablePointer<Float>
  private let continuous: UnsafeMutablePointer<Bool>
  /// Per port, when its automation changed while playing: what the value was above the new
  /// lane's, fading to 0 over ``rampSteps`` steps (`laneStep` of them done).
  private let laneOffset: UnsafeMutablePointer<Float>
  private let laneStep: UnsafeMutablePointer<Int>
  private let rampSteps: Int
  /// Control outputs, one float per port per instance.
  private let controlOutputs: UnsafeMutablePointer<Float>
  private let controlOutputCount: Int

  /// Atom sequence buffers: `atomCount` of `atomCapacity` bytes; the first `atomInputs` are
  /// inputs.
  private let atoms: UnsafeMutableRawPointer
  private let atomIsInput: UnsafeMutablePointer<Bool>
  private let atomCount: Int
  private let atomCapacity: Int
  private let sequenceType: UInt32
  private let chunkType: UInt32
  /// The atom buffers again, with the messages waiting for the control input.
  private let messagePorts: MessagePorts
  /// The file of each file parameter as last sent, by property URI (off the audio thread).
  public private(set) var files: [String: String] = [:]

  /// The FIFO: 64 frames of input collected, and the last 64 frames processed.
  private let fifoIn: UnsafeMutablePointer<Float>
  private let fifoOut: UnsafeMutablePointer<Float>
  /// The dry path: `channels × pluginLatency` delay memory and one step of delayed input.
  private let delay: UnsafeMutablePointer<Float>
  private let dry: UnsafeMutablePointer<Float>
  private let run: UnsafeMutablePointer<RunState>
  /// The input of a call, undelayed, while the processor warms up to enter a chain.
  private let undelayed: UnsafeMutablePointer<Float>
  /// Set by the audio thread once an exit has ended (the processor is then the identity, and
  /// a plan may drop it); cleared when it enters again. Read by the planner.
  private let absence: UnsafeAtomic<Bool>

  private struct RunState {
    var frames = 0
    /// Frames in the FIFO: `frames % 64`.
    var fill = 0
    var delayIndex = 0
    /// 0 (dry) … rampFrames (wet): where the bypass crossfade is.
    var wetPosition = 0
    var bypassed = false
    var pendingBypass = false
    var hasPendingTargets = false
    /// Whether the plan playing has the processor in its chain (see ``setPresent(_:)``).
    var present = true
    /// Whether the processor's latency is part of the chain's: its output is its own (wet, dry
    /// or between), delayed by ``latency``. False while it warms up to enter, and once it has
    /// left (then it is the identity and does not run).
    var engaged = true
    /// A bypass the chain's change imposes, over the user's (see ``setPresent(_:)``).
    var forcedBypass = false
    /// While leaving: whether the chain holds it at its own output until the effects entering
    /// the same chain are engaged, so that both crossfade together (see ``holdLeaving(_:)``).
    var leavingHeld = false
    /// Frames given since the warm-up began.
    var warmed = 0
    /// Frames drained so far (see ``drain(_:frames:)``).
    var drained = 0
    /// The timeline frame of the next input frame (see ``setPosition(_:)``).
    var position: Int64 = 0
    /// The automated ports (see ``setAutomation(_:count:)``); memory of the plan playing.
    var lanes: UnsafePointer<AutomationLane>? = nil
    var laneCount = 0
    /// New lanes, not yet read at a step: the next step glides from the values it had.
    var lanesChanged = false
  }

  /// Makes and starts the effect, off the audio thread: instantiates the plugin (twice for
  /// dual mono), restores `state` (or the plugin's default state when it asks for it), connects
  /// its ports, activates it and learns its latency.
  ///
  /// - Parameters:
  ///   - plugin: the plugin to run, from `catalog`.
  ///   - catalog: the lilv world the plugin is instantiated from.
  ///   - sampleRate: the rate the plugin runs at, in Hz.
  ///   - channels: 1 or 2 (a mono plugin on 2 channels runs as two instances).
  ///   - values: one per ``PluginInfo/controls``, in that order.
  ///   - maximumFrames: the most frames one ``process(_:frames:)`` call will pass (kept for
  ///     the caller; the FIFO takes blocks of any size, and the plugin is told 64).
  ///   - state: what ``saveState()`` returned, or nil.
  ///   - files: the plugin's file parameters to set, by property URI
  ///     (``FileParameter/uri``), each an absolute path: sent as `patch:Set` messages before
  ///     the first run, and waited for until the plugin has applied them (see
  ///     ``setFile(_:path:)``).
  ///   - worker: where a plugin with the Worker extension does its work: `.thread` for live
  ///     playback, `.inline` for a reproducible offline render (see ``WorkerMode``).
  ///   - alignment: `.fifo` (64 frames more latency, output independent of the caller's block
  ///     size for any plugin) or `.cut` (see ``StepAlignment``).
  ///   - bypassed: whether it starts bypassed (see ``setBypassed(_:)``).
  ///   - present: false for an effect entering a chain already playing (see
  ///     ``setPresent(_:)``).
  public init(
    plugin: PluginInfo, catalog: PluginCatalog, sampleRate: Int, channels: Int,
    maximumFrames: Int, values: [Float], bypassed: Bool, state: [UInt8]?,
    files: [String: String] = [:], worker: WorkerMode = .thread,
    alignment: StepAlignment = .fifo, present: Bool = true
  ) throws(EffectError) {
    guard channels == 1 || channels == 2 else { throw .unsupportedChannels(channels) }
    guard sampleRate > 0 else {
      throw .invalidConfiguration("sample rate \(sampleRate) Hz is not a rate")
    }
    guard maximumFrames > 0 else {
      throw .invalidConfiguration("a block of \(maximumFrames) frames is no block")
    }
    guard let description = catalog.description(plugin.uri) else {
      throw .unknownPlugin(uri: plugin.uri, nearest: catalog.nearest(to: plugin.uri))
    }
    let info = PluginInfo(description)
    guard info.missingFeatures.isEmpty else {
      throw .missingFeatures(plugin: info.uri, features: info.missingFeatures)
    }
    if let problem = info.connectionProblem {
      throw .unsupportedPorts(plugin: info.uri, reason: problem)
    }
    guard values.count == info.controls.count else {
      throw .valueCount(plugin: info.uri, expected: info.controls.count, got: values.count)
    }
    let world = catalog.world
    let dualMono = info.audioInputs == 1 && info.audioOutputs == 1 && channels == 2
    let instanceCount = dualMono ? 2 : 1
    let step = EffectProcessor.stepFrames

    // Instances first: the only steps that can fail, undone on failure.
    var made: [LV2Instance] = []
    var workers: [Worker?] = []
    var features: [HostFeatures] = []
    let sequenceCapacity =
      description.ports.filter { $0.kind == .atom }
      .map { max($0.minimumSize ?? 0, 8_192) }.max() ?? 8_192
    func undo() {
      for (index, instance) in made.enumerated() {
        workers[index]?.stop()
        world.free(instance)
      }
    }
    let mode = worker
    for _ in 0..<instanceCount {
      let worker = description.hasWorker ? Worker(mode: mode) : nil
      let list = HostFeatures(
        sampleRate: sampleRate, maximumBlock: step, sequenceSize: sequenceCapacity,
        schedule: worker?.schedule)
      guard
        let instance = world.instantiate(
          info.uri, sampleRate: sampleRate, features: list.pointer)
      else {
        undo()
        throw .instantiateFailed(plugin: info.uri, sampleRate: sampleRate)
      }
      worker?.start(instance)
      made.append(instance)
      workers.append(worker)
      features.append(list)
    }
    for (index, instance) in made.enumerated() {
      if let state {
        guard world.restoreState(state, into: instance, features: features[index].pointer) else {
          undo()
          throw .badState(plugin: info.uri, reason: "it is not LV2 state lilv can read")
        }
      } else if description.requiredFeatures.contains(LV2URI.loadDefaultState)
        || description.optionalFeatures.contains(LV2URI.loadDefaultState)
      {
        world.restoreDefaultState(info.uri, into: instance, features: features[index].pointer)
      }
    }

    self.plugin = info
    self.sampleRate = sampleRate
    self.channels = channels
    self.maximumFrames = maximumFrames
    self.world = world
    self.instanceCount = instanceCount
    self.features = features
    self.workers = workers
    rampFrames = max(1, sampleRate / 50)
    rampSteps = max(1, (rampFrames + step - 1) / step)
    instances = .allocate(capacity: instanceCount)
    instances.initialize(from: made, count: instanceCount)
    workerChannels = .allocate(capacity: instanceCount)
    workerChannels.initialize(from: workers.map { $0?.channel }, count: instanceCount)

    let audio = description.ports.filter { $0.kind == .audio }
    let mainInputs = audio.filter { $0.isInput && !$0.isSideChain && !$0.isOptional }
    let mainOutputs = audio.filter { !$0.isInput && !$0.isSideChain && !$0.isOptional }
    let sidechainInputs = audio.filter { $0.isInput && $0.isSideChain }
    inputsPerInstance = mainInputs.count
    outputsPerInstance = mainOutputs.count
    sidechainsPerInstance = sidechainInputs.count
    sidechainBuffers = .allocate(capacity: max(1, instanceCount * sidechainInputs.count * step))
    sidechainBuffers.initialize(
      repeating: 0, count: max(1, instanceCount * sidechainInputs.count * step))
    sidechainFIFO = .allocate(capacity: channels * step)
    sidechainFIFO.initialize(repeating: 0, count: channels * step)
    sidechainInput = .allocate(capacity: maximumFrames * channels)
    sidechainInput.initialize(repeating: 0, count: maximumFrames * channels)
    inputBuffers = .allocate(capacity: instanceCount * inputsPerInstance * step)
    inputBuffers.initialize(repeating: 0, count: instanceCount * inputsPerInstance * step)
    outputBuffers = .allocate(capacity: instanceCount * outputsPerInstance * step)
    outputBuffers.initialize(repeating: 0, count: instanceCount * outputsPerInstance * step)
    silence = .allocate(capacity: step)
    silence.initialize(repeating: 0, count: step)
    let extraOutputs = description.ports.filter {
      ($0.kind == .audio || $0.kind == .cv) && !$0.isInput
    }.count
    scratchCount = max(1, instanceCount * extraOutputs) * step
    scratch = .allocate(capacity: scratchCount)
    scratch.initialize(repeating: 0, count: scratchCount)

    let controls = info.controls
    controlCount = controls.count
    current = .allocate(capacity: max(1, controlCount))
    current.initialize(from: values, count: controlCount)
    rampStart = .allocate(capacity: max(1, controlCount))
    rampStart.initialize(from: values, count: controlCount)
    rampTarget = .allocate(capacity: max(1, controlCount))
    rampTarget.initialize(from: values, count: controlCount)
    pending = .allocate(capacity: max(1, controlCount))
    pending.initialize(from: values, count: controlCount)
    rampStep = .allocate(capacity: max(1, controlCount))
    rampStep.initialize(repeating: rampSteps, count: max(1, controlCount))
    continuous = .allocate(capacity: max(1, controlCount))
    continuous.initialize(from: controls.map(\.canRamp), count: controlCount)
    laneOffset = .allocate(capacity: max(1, controlCount))
    laneOffset.initialize(repeating: 0, count: max(1, controlCount))
    laneStep = .allocate(capacity: max(1, controlCount))
    laneStep.initialize(repeating: rampSteps, count: max(1, controlCount))

    let outputs = description.ports.filter { $0.kind == .control && !$0.isInput }
    controlOutputCount = outputs.count
    controlOutputs = .allocate(capacity: max(1, instanceCount * outputs.count))
    controlOutputs.initialize(repeating: 0, count: max(1, instanceCount * outputs.count))

    let atomPorts = description.ports.filter { $0.kind == .atom }
    atomCount = instanceCount * atomPorts.count
    atomCapacity = sequenceCapacity
    atoms = .allocate(byteCount: max(1, atomCount) * atomCapacity, alignment: 16)
    atoms.initializeMemory(as: UInt8.self, repeating: 0, count: max(1, atomCount) * atomCapacity)
    atomIsInput = .allocate(capacity: max(1, atomCount))
    atomIsInput.initialize(repeating: false, count: max(1, atomCount))
    sequenceType = URIDMap.shared.map(LV2URI.atomSequence)
    chunkType = URIDMap.shared.map(LV2URI.atomChunk)
    let messagePorts = MessagePorts(
      atoms: atoms, capacity: sequenceCapacity, stride: atomPorts.count,
      instances: instanceCount, control: atomPorts.firstIndex { $0.isInput },
      notify: atomPorts.firstIndex { !$0.isInput }, sequence: sequenceType,
      messages: .make(capacity: Self.messageCapacity),
      scratch: .allocate(byteCount: Self.messageCapacity, alignment: 16))
    self.messagePorts = messagePorts

    dry = .allocate(capacity: channels * step)
    dry.initialize(repeating: 0, count: channels * step)
    fifoIn = .allocate(capacity: channels * step)
    fifoIn.initialize(repeating: 0, count: channels * step)
    fifoOut = .allocate(capacity: channels * step)
    fifoOut.initialize(repeating: 0, count: channels * step)
    run = .allocate(capacity: 1)
    run.initialize(to: RunState())

    // Connect every port of every instance.
    for instanceIndex in 0..<instanceCount {
      let instance = instances[instanceIndex]
      var extra = 0
      var outputSlot = 0
      var atomSlot = 0
      for port in description.ports {
        switch port.kind {
        case .audio where port.isInput:
          if let main = mainInputs.firstIndex(of: port) {
            instance.connect(
              port.index, inputBuffers + (instanceIndex * inputsPerInstance + main) * step)
          } else if let side = sidechainInputs.firstIndex(of: port) {
            instance.connect(
              port.index,
              sidechainBuffers + (instanceIndex * sidechainInputs.count + side) * step)
          } else {
            instance.connect(port.index, silence)
          }
        case .audio, .cv:
          if port.kind == .audio, let main = mainOutputs.firstIndex(of: port) {
            instance.connect(
              port.index, outputBuffers + (instanceIndex * outputsPerInstance + main) * step)
          } else if port.isInput {
            instance.connect(port.index, silence)
          } else {
            instance.connect(port.index, scratch + (instanceIndex * extraOutputs + extra) * step)
            extra += 1
          }
        case .control where port.isInput:
          if let slot = controls.firstIndex(where: { $0.index == port.index }) {
            instance.connect(port.index, current + slot)
          }
        case .control:
          instance.connect(
            port.index, controlOutputs + instanceIndex * controlOutputCount + outputSlot)
          outputSlot += 1
        case .atom:
          let slot = instanceIndex * atomPorts.count + atomSlot
          atomIsInput[slot] = port.isInput
          instance.connect(port.index, atoms + slot * atomCapacity)
          atomSlot += 1
        case .other:
          instance.connect(port.index, nil)
        }
      }
    }

    // Files first (x42's IR convolver loads its impulse response in its worker), so that the
    // latency learnt and the first samples are those of the plugin with its file.
    if !files.isEmpty {
      let (isInput, chunk) = (atomIsInput, chunkType)
      for index in 0..<instanceCount { instances[index].activate() }
      do throws(EffectError) {
        // A plugin with the State interface is given its files as state, as its presets give
        // them (x42's IR convolver takes a patch:Set, runs a worker job, and loads nothing).
        if description.hasState {
          let turtle = fileStateTurtle(plugin: info.uri, files: files)
          for index in 0..<instanceCount {
            guard
              world.restoreState(
                Array(turtle.utf8), into: instances[index], features: features[index].pointer)
            else {
              throw EffectError.fileNotApplied(plugin: info.uri, path: files.values.sorted()[0])
            }
          }
        }
        try Self.apply(
          files, plugin: info.uri, ports: messagePorts, instances: instances,
          count: instanceCount, workers: workers, inputs: inputBuffers,
          inputCount: instanceCount * inputsPerInstance * step,
          reset: {
            resetAtomBuffers(
              messagePorts.atoms, count: messagePorts.stride * instanceCount,
              capacity: messagePorts.capacity, isInput: isInput,
              sequence: messagePorts.sequence, chunk: chunk)
            messagePorts.deliver()
          }, mode: worker, asState: description.hasState)
        if description.hasState {
          // It says what it holds when it saves its state: each file's URI must be there.
          let (first, firstFeatures) = (instances[0], features[0].pointer)
          // The first file the saved state does not name, if any.
          let missingFile = { (quietPaths: Bool) -> String? in
            let saved = world.saveState(
              info.uri, of: first, features: firstFeatures, quietPaths: quietPaths)
            let text = saved.map { String(decoding: $0, as: UTF8.self) } ?? ""
            return files.values.sorted().first { !text.contains(fileURI($0)) }
          }
          // A plugin that keeps a path as other than plain data is asked again the loud way.
          if missingFile(true) != nil, let path = missingFile(false) {
            throw EffectError.fileNotApplied(plugin: info.uri, path: path)
          }
        }
      } catch {
        for index in 0..<instanceCount { instances[index].deactivate() }
        throw error
      }
      for index in 0..<instanceCount { instances[index].deactivate() }
      // What it was given (a player compares a plan's files with these: empty, every compile
      // handed a running plugin its file again, and a replacement was started again).
      self.files = files
    }

    // Learn the latency: one block of silence through a fresh instance, then a reset. A
    // plugin with a worker may set up what its state names there first (x42's preset
    // convolver loads its impulse response, and only then reports its 64 frames): up to 8
    // blocks, until it reports a latency, its worker given a moment between them.
    var learned = 0
    if let slot = outputs.firstIndex(where: { $0.reportsLatency }) {
      for index in 0..<instanceCount { instances[index].activate() }
      resetAtomBuffers(
        atoms, count: atomCount, capacity: atomCapacity, isInput: atomIsInput,
        sequence: sequenceType, chunk: chunkType)
      let blocks = description.hasWorker ? 8 : 1
      for block in 0..<blocks {
        if block > 0 && worker == .thread { usleep(2_000) }
        for index in 0..<instanceCount {
          instances[index].run(step)
          if let channel = workerChannels[index] {
            deliverWorkerResponses(channel, to: instances[index])
          }
        }
        let value = controlOutputs[slot]
        learned = value.isFinite && value > 0 ? Int(value.rounded()) : 0
        if learned > 0 { break }
      }
      for index in 0..<instanceCount { instances[index].deactivate() }
    }
    pluginLatency = learned
    self.alignment = alignment
    usesFIFO = alignment == .fifo
    latency = learned + (alignment == .fifo ? step : 0)
    delay = .allocate(capacity: max(1, channels * learned))
    delay.initialize(repeating: 0, count: max(1, channels * learned))
    inputBuffers.update(repeating: 0, count: instanceCount * inputsPerInstance * step)
    for index in 0..<instanceCount { instances[index].activate() }
    run.pointee.bypassed = bypassed
    run.pointee.pendingBypass = bypassed
    run.pointee.wetPosition = bypassed ? 0 : rampFrames
    run.pointee.present = present
    run.pointee.engaged = present
    undelayed = .allocate(capacity: maximumFrames * channels)
    undelayed.initialize(repeating: 0, count: maximumFrames * channels)
    absence = .create(!present)
  }

  deinit {
    // The worker first: its `work` may be running, and must not outlive the instance.
    for index in 0..<instanceCount {
      workers[index]?.stop()
      instances[index].deactivate()
      world.free(instances[index])
    }
    instances.deallocate()
    workerChannels.deallocate()
    inputBuffers.deallocate()
    outputBuffers.deallocate()
    silence.deallocate()
    sidechainBuffers.deallocate()
    sidechainFIFO.deallocate()
    sidechainInput.deallocate()
    scratch.deallocate()
    current.deallocate()
    rampStart.deallocate()
    rampTarget.deallocate()
    pending.deallocate()
    rampStep.deallocate()
    continuous.deallocate()
    laneOffset.deallocate()
    laneStep.deallocate()
    controlOutputs.deallocate()
    atoms.deallocate()
    atomIsInput.deallocate()
    delay.deallocate()
    dry.deallocate()
    fifoIn.deallocate()
    fifoOut.deallocate()
    run.deallocate()
    undelayed.deallocate()
    absence.destroy()
    messagePorts.messages.destroy()
    messagePorts.scratch.deallocate()
  }

  /// New target values, in ``PluginInfo/controls`` order (`controls.count` of them), taking
  /// effect at the next 64-frame boundary of the running count (so, with the FIFO, on output
  /// from between 64 and 128 frames later).
  ///
  /// Continuous ports ramp linearly from where they are to the target over ``rampFrames``,
  /// their value updated at every 64-frame step. Integer, toggle and enumeration ports jump at
  /// the next step: their values are steps (a filter type, a band on or off, a count), and a
  /// value between two of them means nothing to the plugin or is a third setting, so a ramp
  /// would pass through settings nobody chose; the plugin's own handling of the jump (most
  /// crossfade or reset a filter) is what a user hears.
  ///
  /// - Note: Realtime-safe: no allocation, no locks. Call on the audio thread, between
  ///   ``process(_:frames:)`` calls.
  @_noLocks
  public func setTargets(_ values: UnsafePointer<Float>) {
    // A loop, not update(from:count:), which the @_noLocks check takes for a release.
    for slot in 0..<controlCount { pending[slot] = values[slot] }
    run.pointee.hasPendingTargets = true
  }

  /// The automated ports from now on: at every 64-frame step each lane's port takes the value
  /// of its lane at the timeline frame of the step's first input frame (``setPosition(_:)``),
  /// at once, without a ramp (the lane is the ramp), over any target ``setTargets(_:)`` set.
  /// A port that leaves automation ramps from its last automated value to its target. `lanes`
  /// must stay valid until the next call (a plan's memory: call when its plan starts to sound).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  public func setAutomation(_ lanes: UnsafePointer<AutomationLane>?, count: Int) {
    // The same plan's lanes again (the mixer hands them over before every block) change
    // nothing; a new plan's, once the processor has run, glide in (see beginStep).
    guard lanes != run.pointee.lanes else { return }
    run.pointee.lanes = lanes
    run.pointee.laneCount = lanes == nil ? 0 : count
    run.pointee.lanesChanged = run.pointee.frames > 0
  }

  /// The timeline frame the next frame given to ``process(_:frames:)`` plays at: what
  /// automation is read at. The processor counts on from it.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  public func setPosition(_ frame: Int64) {
    run.pointee.position = frame
  }

  /// Bypass on or off: from the next 64-frame boundary, the output crossfades linearly between
  /// the plugin's (wet) and the input delayed by ``latency`` (dry) over ``rampFrames``; at any
  /// moment the output is the wet and dry mix of the same input frame, so no comb. The
  /// plugin keeps running while bypassed, so its state stays warm and the track's latency
  /// does not change.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  public func setBypassed(_ bypassed: Bool) {
    run.pointee.pendingBypass = bypassed
  }

  /// Enters the chain (`true`) or leaves it (`false`), for a player whose chain gains, loses
  /// or reorders effects while it plays (an offline render never calls it: its processors are
  /// present from the start). The processor's latency joins or leaves the chain's only where
  /// the player makes room for it or takes it back (``engage()``, ``drain(_:frames:)``), so
  /// that no two copies of the signal, one delayed, are ever mixed (they would comb-filter).
  ///
  /// Entering: the processor warms up for ``warmUpFrames`` (the plugin runs on the chain's
  /// signal, which passes on undelayed: the chain sounds as before), and says so
  /// (``wantsToEngage``); the player feeds it ``latency`` frames ahead and calls ``engage()``;
  /// its output is then its input delayed by ``latency`` (its bypassed output), which
  /// crossfades to its own (wet) output over ``rampFrames``, as a bypass turned off does.
  /// Leaving: its output crossfades to its input delayed by ``latency`` (as a bypass does;
  /// held while another effect of the chain is still warming up, see ``holdLeaving(_:)``),
  /// and once it is that alone it says so (``wantsToDrain``); the player drains it
  /// (``drain(_:frames:)``), and it is then the identity: it stops running its plugin and
  /// says so (``isAbsent``). Entering again while leaving turns back to the wet output.
  ///
  /// - Note: Realtime-safe: no allocation, no locks. Call on the audio thread, between
  ///   ``process(_:frames:)`` calls.
  @_noLocks
  public func setPresent(_ present: Bool) {
    guard present != run.pointee.present else { return }
    run.pointee.present = present
    let engaged = run.pointee.engaged
    if present {
      absence.store(false, ordering: .releasing)
      if engaged {
        // Turning back during an exit: the wet output again (a drain under way ends first).
        run.pointee.forcedBypass = false
      } else {
        beginWarmUp()
      }
    } else if engaged {
      run.pointee.forcedBypass = !run.pointee.leavingHeld
    } else {
      // Never engaged: no latency to give back, gone at once.
      absence.store(true, ordering: .releasing)
    }
  }

  /// From silence: the plugin runs on the chain's signal, unheard, with its output at the dry
  /// end of the bypass crossfade, ready for ``engage()``.
  @_noLocks
  private func beginWarmUp() {
    run.pointee.warmed = 0
    run.pointee.forcedBypass = true
    run.pointee.wetPosition = 0
  }

  /// Frames an entering processor runs, unheard, before it wants to engage: its latency and
  /// the length of a ramp, so that its FIFO, its own latency and the state of its filters are
  /// those of the signal by then.
  public var warmUpFrames: Int { latency + rampFrames }

  /// Whether the plugin has side-chain audio inputs (`lv2:isSideChain`, or in a port group
  /// that is `pg:sideChainOf` another): what ``sidechainInput`` feeds.
  public var takesSidechain: Bool { sidechainsPerInstance > 0 }

  /// Whether the processor's latency is in its chain's now (see ``setPresent(_:)``).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  public var isEngaged: Bool {
    @_noLocks get { run.pointee.engaged }
  }

  /// Whether the processor is entering, has warmed up, and wants the player to feed it
  /// ``latency`` frames ahead and ``engage()`` it.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  public var wantsToEngage: Bool {
    @_noLocks get {
      let needed = warmUpFrames
      let state = run.pointee
      return state.present && !state.engaged && state.warmed >= needed
    }
  }

  /// Whether the processor is warming up to enter (its latency not in the chain yet).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  public var isWarmingUp: Bool {
    @_noLocks get {
      let state = run.pointee
      return state.present && !state.engaged
    }
  }

  /// Whether the processor is leaving and its output is its input delayed by ``latency``,
  /// and will stay so: what ``drain(_:frames:)`` needs.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  public var wantsToDrain: Bool {
    @_noLocks get {
      let state = run.pointee
      return !state.present && state.engaged && state.forcedBypass && state.bypassed
        && state.wetPosition == 0
    }
  }

  /// Whether the processor is leaving its chain and still engaged (its latency still in the
  /// chain's).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  public var isLeaving: Bool {
    @_noLocks get {
      let state = run.pointee
      return !state.present && state.engaged
    }
  }

  /// Holds a leaving processor at its own output (`true`) or lets it crossfade to its delayed
  /// input (`false`). A player holds the effects leaving a chain while others enter it, so that
  /// a move crossfades the old place out and the new one in together. No effect on a
  /// processor that is not leaving.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  public func holdLeaving(_ held: Bool) {
    run.pointee.leavingHeld = held
    let state = run.pointee
    if !state.present && state.engaged && state.drained == 0 {
      run.pointee.forcedBypass = !held
    }
  }

  /// Called by the player once it has fed a warmed-up processor ``latency`` frames more than
  /// it let out (their output dropped): from now on its output is its own, its input delayed by
  /// ``latency``, crossfading from the dry end to the wet one over ``rampFrames`` (unless the
  /// effect is bypassed).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  public func engage() {
    run.pointee.engaged = true
    run.pointee.forcedBypass = false
  }

  /// The next `frames` frames of a leaving processor's output (``wantsToDrain``) into
  /// `buffer`, taking no input: what it holds of the signal, delayed by its latency. Once the
  /// player has drained ``latency`` frames, the processor is the identity (``isAbsent``), or
  /// warms up again if it was asked to enter meanwhile.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  public func drain(_ buffer: UnsafeMutablePointer<Float>, frames: Int) {
    for sample in 0..<frames * channels { buffer[sample] = 0 }
    processPresent(buffer, frames: frames)
    let drained = run.pointee.drained + frames
    guard drained >= latency else {
      run.pointee.drained = drained
      return
    }
    run.pointee.drained = 0
    run.pointee.engaged = false
    if run.pointee.present {
      beginWarmUp()
    } else {
      absence.store(true, ordering: .releasing)
    }
  }

  /// Joins a chain in a new order of its effects (a reorder, see the player's
  /// `EffectKernel`): engaged at once, its output its own (a fresh instance's, filled as the
  /// new order warms up beside the old one, unheard). No effect on an engaged processor.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  public func joinReorder() {
    guard !run.pointee.engaged else { return }
    run.pointee.present = true
    run.pointee.engaged = true
    run.pointee.forcedBypass = false
    let bypassed = run.pointee.pendingBypass
    run.pointee.bypassed = bypassed
    run.pointee.wetPosition = bypassed ? 0 : rampFrames
    absence.store(false, ordering: .releasing)
  }

  /// Leaves at once, the identity from now on (``isAbsent``): a processor of a chain's old
  /// order once the new order has taken over (its latency goes with it: the new order has
  /// the same).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  public func dismiss() {
    run.pointee.present = false
    run.pointee.engaged = false
    run.pointee.drained = 0
    absence.store(true, ordering: .releasing)
  }

  /// Ends an entry or an exit at once, at a point where the player starts its chains afresh
  /// (a seek or a loop wrap feeds them from the new place, unheard): an entering processor is
  /// engaged, at its output, a leaving one is the identity.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  public func finishTransition() {
    run.pointee.drained = 0
    let present = run.pointee.present
    if present {
      if !run.pointee.engaged {
        run.pointee.engaged = true
        run.pointee.forcedBypass = false
        let bypassed = run.pointee.pendingBypass
        run.pointee.bypassed = bypassed
        run.pointee.wetPosition = bypassed ? 0 : rampFrames
      }
    } else if run.pointee.engaged {
      run.pointee.engaged = false
      absence.store(true, ordering: .releasing)
    }
  }

  /// Whether the processor has left its chain and is the identity now (see
  /// ``setPresent(_:)``): a plan compiled after this may leave it out without a change in the
  /// sound. Any thread.
  public var isAbsent: Bool { absence.load(ordering: .acquiring) }

  /// Runs the plugin on `frames` frames of silence, off the audio thread, before any plan
  /// holds the processor: a fresh instance entering a chain that plays has its own start-up
  /// behind it (x42's plugins glide their gain in from silence over most of a second after
  /// activation: unsettled, an EQ entering would dip the track by 15 dB).
  public func settle(frames: Int) {
    let block = UnsafeMutablePointer<Float>.allocate(capacity: maximumFrames * channels)
    defer { block.deallocate() }
    var done = 0
    while done < frames {
      let count = min(maximumFrames, frames - done)
      block.update(repeating: 0, count: count * channels)
      processPresent(block, frames: count)
      done += count
    }
  }

  /// Processes `frames` interleaved frames of ``channels`` channels in place (see
  /// `processPresent(_:frames:)`): the processor's output once engaged; while it warms up to
  /// enter, the plugin runs and the input passes on undelayed; absent, nothing.
  ///
  /// - Note: Realtime-safe: no allocation, no locks, no reference counting, no I/O (as far
  ///   as the plugin's own `run` is; see ``PluginInfo/isHardRTCapable``).
  @_noLocks
  public func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int) {
    processOwnInput(buffer, frames: frames)
    if sidechainsPerInstance > 0 {
      for sample in 0..<min(frames, maximumFrames) * channels { sidechainInput[sample] = 0 }
    }
  }

  @_noLocks
  private func processOwnInput(_ buffer: UnsafeMutablePointer<Float>, frames: Int) {
    let engaged = run.pointee.engaged
    if engaged {
      processPresent(buffer, frames: frames)
      return
    }
    let present = run.pointee.present
    if present == false { return }
    let channels = self.channels
    var done = 0
    while done < frames {
      let count = min(frames - done, maximumFrames)
      let block = buffer + done * channels
      for sample in 0..<count * channels { undelayed[sample] = block[sample] }
      processPresent(block, frames: count)
      for sample in 0..<count * channels { block[sample] = undelayed[sample] }
      done += count
    }
    run.pointee.warmed += frames
  }

  /// Processes `frames` interleaved frames of ``channels`` channels in place.
  ///
  /// With ``StepAlignment/fifo`` the signal passes through a 64-frame FIFO: each frame in is
  /// stored, the frame 64 earlier comes out processed, and whenever the FIFO is full (at every
  /// multiple of 64 of the running count) the plugin runs on exactly those 64 frames. So the
  /// plugin sees the same `run` calls, and gives the same output, however the caller blocks the
  /// signal. With ``StepAlignment/cut`` the block is cut at those multiples and processed in
  /// place, each piece one `run`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks, no reference counting, no I/O (as far
  ///   as the plugin's own `run` is; see ``PluginInfo/isHardRTCapable``).
  @_noLocks
  private func processPresent(_ buffer: UnsafeMutablePointer<Float>, frames: Int) {
    let step = EffectProcessor.stepFrames
    let channels = self.channels
    let position = run.pointee.position
    run.pointee.position = position &+ Int64(frames)
    var done = 0
    if !usesFIFO {
      while done < frames {
        let into = run.pointee.frames % step
        if into == 0 { beginStep(at: position &+ Int64(done)) }
        let count = min(frames - done, step - into)
        let block = buffer + done * channels
        fillInputs(block, count)
        // Nested, not `&&`: its autoclosure would capture self (reference counting).
        if sidechainsPerInstance > 0 {
          if done + count <= maximumFrames {
            fillSidechains(sidechainInput + done * channels, count)
          }
        }
        resetAtoms()
        for index in 0..<instanceCount {
          instances[index].run(count)
          if let channel = workerChannels[index] {
            deliverWorkerResponses(channel, to: instances[index])
          }
        }
        writeOutputs(block, count)
        run.pointee.frames += count
        done += count
      }
      return
    }
    while done < frames {
      let fill = run.pointee.fill
      let count = min(frames - done, step - fill)
      let block = buffer + done * channels
      let offset = fill * channels
      // In, then out: the FIFO's halves are memory of their own.
      let (into, out) = (fifoIn + offset, fifoOut + offset)
      for sample in 0..<count * channels { into[sample] = block[sample] }
      for sample in 0..<count * channels { block[sample] = out[sample] }
      if sidechainsPerInstance > 0 {
        if done + count <= maximumFrames {
          let side = sidechainInput + done * channels
          for sample in 0..<count * channels { sidechainFIFO[offset + sample] = side[sample] }
        }
      }
      run.pointee.fill = fill + count
      run.pointee.frames += count
      done += count
      if fill + count == step {
        run.pointee.fill = 0
        // The step's 64 frames ended here.
        processStep(at: position &+ Int64(done - step))
      }
    }
  }

  /// Runs the plugin on the 64 frames of `fifoIn`, leaving the result in `fifoOut`.
  @_noLocks
  private func processStep(at frame: Int64) {
    let step = EffectProcessor.stepFrames
    beginStep(at: frame)
    fillInputs(fifoIn, step)
    if sidechainsPerInstance > 0 { fillSidechains(sidechainFIFO, step) }
    resetAtoms()
    for index in 0..<instanceCount {
      instances[index].run(step)
      if let channel = workerChannels[index] {
        deliverWorkerResponses(channel, to: instances[index])
      }
    }
    writeOutputs(fifoOut, step)
  }

  /// At a 64-frame boundary: takes pending targets, advances ramps, sets the automated ports
  /// to their lanes' values at `frame` (the step's first input frame), takes a bypass change.
  @inline(__always)
  private func beginStep(at frame: Int64) {
    if run.pointee.hasPendingTargets {
      run.pointee.hasPendingTargets = false
      for slot in 0..<controlCount where pending[slot] != rampTarget[slot] {
        if continuous[slot] {
          rampStart[slot] = current[slot]
          rampTarget[slot] = pending[slot]
          rampStep[slot] = 0
        } else {
          // A step value jumps (see setTargets).
          current[slot] = pending[slot]
          rampTarget[slot] = pending[slot]
          rampStep[slot] = rampSteps
        }
      }
    }
    for slot in 0..<controlCount where rampStep[slot] < rampSteps {
      rampStep[slot] += 1
      let done = rampStep[slot]
      current[slot] =
        done == rampSteps
        ? rampTarget[slot]
        : rampStart[slot] + (rampTarget[slot] - rampStart[slot]) * Float(done)
          / Float(rampSteps)
    }
    if let lanes = run.pointee.lanes {
      let changed = run.pointee.lanesChanged
      run.pointee.lanesChanged = false
      for index in 0..<run.pointee.laneCount {
        let lane = lanes[index]
        let slot = lane.slot
        guard slot < controlCount else { continue }
        // The mixer's function: arithmetic and a binary search (see AutomationLane).
        let value = _unsafePerformance { lane.evaluate(lane.segments, lane.count, frame) }
        // (Not `changed && …`: its autoclosure retains.)
        if changed, continuous[slot] {
          // An edit of the lane while playing (or a port newly automated): from the value
          // the port had, the difference fades out over a ramp, as a set value would ramp.
          laneOffset[slot] = current[slot] - value
          laneStep[slot] = 0
        }
        var played = value
        if laneStep[slot] < rampSteps {
          laneStep[slot] += 1
          played += laneOffset[slot] * Float(rampSteps - laneStep[slot]) / Float(rampSteps)
        }
        current[slot] = played
        rampTarget[slot] = played
        rampStart[slot] = played
        rampStep[slot] = rampSteps
      }
    }
    let forced = run.pointee.forcedBypass
    run.pointee.bypassed = run.pointee.pendingBypass || forced
  }

  /// Resets atom buffers for a run: inputs to an empty sequence, outputs to a chunk of their
  /// capacity (the LV2 convention for the plugin to write into).
  @inline(__always)
  private func resetAtoms() {
    resetAtomBuffers(
      atoms, count: atomCount, capacity: atomCapacity, isInput: atomIsInput,
      sequence: sequenceType, chunk: chunkType)
    messagePorts.deliver()
  }

  /// Copies the sub-block into the plugin's inputs and the dry path (delayed by latency).
  @inline(__always)
  private func fillInputs(_ block: UnsafeMutablePointer<Float>, _ count: Int) {
    spread(block, count, into: inputBuffers, ports: inputsPerInstance)
    let channels = self.channels
    let latency = pluginLatency
    if latency == 0 {
      // Read only while bypass is on or moving: a step that starts fully wet stays so (bypass
      // changes at steps' starts, in ``beginStep(at:)``), and a plugin without latency keeps
      // no history of its input.
      // (Not `||`: its autoclosure trips the realtime checks.)
      var read = run.pointee.bypassed
      if run.pointee.wetPosition < rampFrames { read = true }
      if read { for sample in 0..<count * channels { dry[sample] = block[sample] } }
      return
    }
    var index = run.pointee.delayIndex
    for frame in 0..<count {
      for channel in 0..<channels {
        let slot = channel * latency + index
        dry[frame * channels + channel] = delay[slot]
        delay[slot] = block[frame * channels + channel]
      }
      index += 1
      if index == latency { index = 0 }
    }
    run.pointee.delayIndex = index
  }

  /// Copies `count` frames of the side-chain signal into the plugin's side-chain inputs,
  /// mapped to them as the track's channels are to its main inputs (see ``fillInputs``).
  @inline(__always)
  private func fillSidechains(_ block: UnsafeMutablePointer<Float>, _ count: Int) {
    spread(block, count, into: sidechainBuffers, ports: sidechainsPerInstance)
  }

  /// Copies `count` frames of `block` (the track's channels, interleaved) into `ports` plugin
  /// inputs per instance at `buffers`, a step's frames each: with two instances (a mono plugin
  /// run once per channel) each takes its channel; inputs as many as the channels take one
  /// each; a mono input of a stereo track takes the two channels' mean; otherwise every input
  /// takes the one channel.
  @inline(__always)
  private func spread(
    _ block: UnsafeMutablePointer<Float>, _ count: Int, into buffers: UnsafeMutablePointer<Float>,
    ports: Int
  ) {
    let step = EffectProcessor.stepFrames
    let channels = self.channels
    let instances = instanceCount
    if instances == 2 && ports == 1 {
      // A mono plugin on a stereo track (one input each): the channels apart, in one pass.
      let (left, right) = (buffers, buffers + step)
      for frame in 0..<count {
        left[frame] = block[frame &* 2]
        right[frame] = block[frame &* 2 &+ 1]
      }
      return
    }
    for instance in 0..<instances {
      for input in 0..<ports {
        let target = buffers + (instance * ports + input) * step
        if instances == 2 {
          for frame in 0..<count { target[frame] = block[frame * 2 + instance] }
        } else if ports == channels {
          for frame in 0..<count { target[frame] = block[frame * channels + input] }
        } else if channels == 2 {
          for frame in 0..<count {
            target[frame] = (block[frame * 2] + block[frame * 2 + 1]) * 0.5
          }
        } else {
          for frame in 0..<count { target[frame] = block[frame] }
        }
      }
    }
  }

  /// Writes the plugin's outputs (mapped to the track's channels) into the sub-block, crossfaded
  /// with the dry path where bypass is on or moving.
  @inline(__always)
  private func writeOutputs(_ block: UnsafeMutablePointer<Float>, _ count: Int) {
    let step = EffectProcessor.stepFrames
    let channels = self.channels
    let outputs = outputsPerInstance
    @inline(__always) func wet(_ frame: Int, _ channel: Int) -> Float {
      if instanceCount == 2 { return outputBuffers[channel * step + frame] }
      if outputs == channels { return outputBuffers[channel * step + frame] }
      if outputs == 2 { return (outputBuffers[frame] + outputBuffers[step + frame]) * 0.5 }
      return outputBuffers[frame]
    }
    let full = rampFrames
    var position = run.pointee.wetPosition
    let bypassed = run.pointee.bypassed
    let (instances, outputBuffers) = (instanceCount, self.outputBuffers)
    if !bypassed && position == full {
      // Wet throughout (every step of a render without bypass): the outputs, interleaved.
      if channels == 1 {
        if outputs == 1 {
          for frame in 0..<count { block[frame] = outputBuffers[frame] }
        } else {
          for frame in 0..<count { block[frame] = wet(frame, 0) }
        }
      } else if instances == 2 || outputs == channels {
        let (left, right) = (outputBuffers, outputBuffers + step)
        for frame in 0..<count {
          block[frame * 2] = left[frame]
          block[frame * 2 + 1] = right[frame]
        }
      } else {
        for frame in 0..<count {
          block[frame * 2] = wet(frame, 0)
          block[frame * 2 + 1] = wet(frame, 1)
        }
      }
      return
    }
    for frame in 0..<count {
      if bypassed {
        if position > 0 { position -= 1 }
      } else if position < full {
        position += 1
      }
      if position == full {
        for channel in 0..<channels { block[frame * channels + channel] = wet(frame, channel) }
      } else if position == 0 {
        for channel in 0..<channels {
          block[frame * channels + channel] = dry[frame * channels + channel]
        }
      } else {
        let gain = Float(position) / Float(full)
        for channel in 0..<channels {
          let dryValue = dry[frame * channels + channel]
          block[frame * channels + channel] = dryValue + (wet(frame, channel) - dryValue) * gain
        }
      }
    }
    run.pointee.wetPosition = position
  }

  /// The most bytes of atom messages waiting for the next run (a path of up to about 8 KiB).
  static let messageCapacity = 1 << 14

  /// Sets the file parameter `property` (a ``FileParameter/uri``) to the file at `path`
  /// (absolute), the LV2 way: a `patch:Set` message on the plugin's control input at the next
  /// run, which the plugin answers by loading the file in its worker and swapping it in when
  /// that is done (x42's IR convolver), so the audio thread neither reads nor allocates. Off
  /// the audio thread, while the processor plays or not; false when the plugin has no
  /// control input or the message does not fit.
  @discardableResult
  public func setFile(_ property: String, path: String) -> Bool {
    if plugin.hasState {
      // As state, which a plugin that says restore is thread-safe (x42's convolver) loads in
      // its worker while it runs, swapping the new impulse response in when it is ready.
      var all = files
      all[property] = path
      let turtle = fileStateTurtle(plugin: plugin.uri, files: all)
      for index in 0..<instanceCount {
        guard
          world.restoreState(
            Array(turtle.utf8), into: instances[index], features: features[index].pointer)
        else { return false }
      }
      files[property] = path
      return true
    }
    guard messagePorts.send(property: property, path: path) else { return false }
    files[property] = path
    return true
  }

  /// Sends `files` and runs the plugin on silence until it has taken each one: until its
  /// notify output says so (`patch:Set` of the property with the path, as x42's convolver
  /// says it), or, for a plugin without a notify output, until its worker has done every
  /// request it was given. A plugin with one that says nothing once its worker is idle did
  /// not take the file (x42's convolver, given a file it cannot read). Before the processor
  /// plays, its instances active.
  private static func apply(
    _ files: [String: String], plugin: String, ports: MessagePorts,
    instances: UnsafeMutablePointer<LV2Instance>, count: Int, workers: [Worker?],
    inputs: UnsafeMutablePointer<Float>, inputCount: Int, reset: () -> Void, mode: WorkerMode,
    asState: Bool
  ) throws(EffectError) {
    let step = EffectProcessor.stepFrames
    func runOnce() {
      inputs.update(repeating: 0, count: inputCount)
      reset()
      for index in 0..<count {
        instances[index].run(step)
        if let channel = workers[index]?.channel {
          deliverWorkerResponses(channel, to: instances[index])
        }
      }
    }
    func handled() -> Int {
      workers.reduce(0) { $0 + ($1?.channel.pointee.handled.load(ordering: .acquiring) ?? 0) }
    }
    // Requests waiting in a ring or being worked on by a worker thread (scheduled, not yet
    // handled: a long impulse response loading). Counting only the ring's, a play's start
    // took a convolver loading its file for idle and refused it as not taken.
    func queued() -> Bool {
      workers.contains { worker in
        guard let channel = worker?.channel.pointee else { return false }
        return channel.requests.write.load(ordering: .acquiring)
          != channel.requests.read.load(ordering: .acquiring)
          || channel.scheduled.load(ordering: .acquiring)
            != channel.handled.load(ordering: .acquiring)
      }
    }
    let started = ContinuousClock.now
    // First what the plugin starts with (x42's convolver loads its restored state in its
    // worker from its first runs, and ignores a file sent while it is busy): until its worker
    // has been idle for 4 runs.
    var idleRuns = 0
    var last = handled()
    while idleRuns < 4 {
      runOnce()
      let now = handled()
      idleRuns = queued() || now != last ? 0 : idleRuns + 1
      last = now
      if mode == .thread && idleRuns == 0 { usleep(500) }
      if ContinuousClock.now - started > .seconds(30) { break }
    }
    // Given as state: loaded by now (checked by the caller).
    if asState { return }
    var waiting = Set<String>()
    for (property, path) in files.sorted(by: { $0.key < $1.key }) {
      guard ports.send(property: property, path: path) else {
        throw .fileNotApplied(plugin: plugin, path: path)
      }
      waiting.insert(property)
    }
    func failed() -> EffectError {
      .fileNotApplied(plugin: plugin, path: files[waiting.sorted()[0]] ?? "")
    }
    let before = handled()
    idleRuns = 0
    // A plugin whose worker was given nothing to do for the file by then never will be.
    let patience = mode == .thread ? 2_000 : 64
    var runs = 0
    while !waiting.isEmpty {
      runOnce()
      runs += 1
      for (property, path) in ports.notified() where files[property] == path {
        waiting.remove(property)
      }
      let busy =
        queued() || (workers.contains { $0 != nil } && handled() == before && runs < patience)
      idleRuns = busy ? 0 : idleRuns + 1
      // A plugin says what it has set when asked (`patch:Get`, as a host's UI asks: x42's
      // convolver answers with its impulse response's path once it has loaded it).
      if idleRuns == 2 || idleRuns == 8 { _ = ports.ask() }
      if idleRuns >= 16 {
        guard ports.notify == nil else { throw failed() }
        break
      }
      // A long impulse response takes a while to load on the worker's thread.
      if ContinuousClock.now - started > .seconds(30) { throw failed() }
      if mode == .thread && busy { usleep(500) }
    }
  }

  /// The plugin's LV2 State (what it keeps beyond its port values) as bytes to store with the
  /// effect, nil when it has none. Off the audio thread, while ``process(_:frames:)`` is not
  /// running. For dual mono, the first instance's (both were restored from the same).
  public func saveState() -> [UInt8]? {
    guard plugin.hasState else { return nil }
    return world.saveState(plugin.uri, of: instances[0], features: features[0].pointer)
  }

  /// Restores `preset`'s state (what it holds beyond its port values, LV2 State) into every
  /// instance, as jalv applies a preset; ``saveState()`` then gives it back to store with the
  /// effect. Off the audio thread, while ``process(_:frames:)`` is not running.
  public func restore(preset: Preset) throws(EffectError) {
    guard preset.hasState else { return }
    for index in 0..<instanceCount {
      guard
        world.restorePreset(preset.uri, into: instances[index], features: features[index].pointer)
      else {
        throw .badState(plugin: plugin.uri, reason: "its preset \(preset.uri) cannot be loaded")
      }
    }
  }

  /// The plugin's control output values of the first instance, by port symbol (meters, the
  /// latency port): for tests and diagnostics. Off the audio thread.
  public func controlOutputValues(_ catalog: PluginCatalog) -> [String: Float] {
    guard let description = catalog.description(plugin.uri) else { return [:] }
    let outputs = description.ports.filter { $0.kind == .control && !$0.isInput }
    var values: [String: Float] = [:]
    for (slot, port) in outputs.enumerated() { values[port.symbol] = controlOutputs[slot] }
    return values
  }

  /// How many Worker requests the plugin's worker threads have handled so far (0 for a plugin
  /// without the Worker extension): for tests and diagnostics.
  public var workerRequestsHandled: Int {
    workers.reduce(0) { $0 + ($1?.channel.pointee.handled.load(ordering: .relaxed) ?? 0) }
  }

  /// The values the plugin reads now, in ``PluginInfo/controls`` order (where ramps are).
  /// Off the audio thread, while ``process(_:frames:)`` is not running.
  public var currentValues: [Float] {
    Array(UnsafeBufferPointer(start: current, count: controlCount))
  }
}

/// Resets atom buffers for a run: inputs to an empty sequence, outputs to a chunk of their
/// capacity (the LV2 convention for the plugin to write into).
@_noLocks
private func resetAtomBuffers(
  _ atoms: UnsafeMutableRawPointer, count: Int, capacity: Int,
  isInput: UnsafeMutablePointer<Bool>, sequence: UInt32, chunk: UInt32
) {
  for slot in 0..<count {
    let header = (atoms + slot * capacity).assumingMemoryBound(to: UInt32.self)
    if isInput[slot] {
      header[0] = 8  // the sequence body's unit and pad
      header[1] = sequence
    } else {
      header[0] = UInt32(capacity - 8)
      header[1] = chunk
    }
    header[2] = 0
    header[3] = 0
  }
}

/// One automated port of an ``EffectProcessor``: its lane, flat for the audio thread, and the
/// function that reads it (the timeline's envelope code, which this module does not link: the
/// mixer passes it in).
public struct AutomationLane: @unchecked Sendable, BitwiseCopyable {
  /// The port's position in ``PluginInfo/controls``.
  public var slot: Int
  /// The lane's segments, as `evaluate` reads them; `count` of them.
  public var segments: UnsafeRawPointer
  public var count: Int
  /// The value at a timeline frame: `evaluate(segments, count, frame)`. Realtime-safe.
  public var evaluate: @convention(c) (UnsafeRawPointer, Int, Int64) -> Float

  public init(
    slot: Int, segments: UnsafeRawPointer, count: Int,
    evaluate: @convention(c) (UnsafeRawPointer, Int, Int64) -> Float
  ) {
    self.slot = slot
    self.segments = segments
    self.count = count
    self.evaluate = evaluate
  }
}

/// An effect's atom buffers as far as messages go: the control input each `patch:Set` is
/// appended to, the notify output the plugin answers on, and the ring of messages waiting.
struct MessagePorts: @unchecked Sendable {
  let atoms: UnsafeMutableRawPointer
  let capacity: Int
  /// Atom ports per instance.
  let stride: Int
  let instances: Int
  /// The slot (within one instance's atom ports) of the control input, or nil.
  let control: Int?
  /// The slot of the first atom output, where the plugin says what it has set, or nil.
  let notify: Int?
  let sequence: UInt32
  let messages: ByteRing
  let scratch: UnsafeMutableRawPointer

  /// Queues a `patch:Set` of `property` to `path` for the next run; false when the plugin
  /// has no control input or the ring is full. Off the audio thread.
  func send(property: String, path: String) -> Bool {
    guard control != nil else { return false }
    let message = patchSetMessage(property: property, path: path)
    return message.withUnsafeBytes { messages.push($0.baseAddress, size: $0.count) }
  }

  /// Queues a `patch:Get` for the next run: the plugin answers on its notify output with
  /// what it has set. Off the audio thread.
  func ask() -> Bool {
    guard control != nil else { return false }
    let map = URIDMap.shared
    var message: [UInt8] = []
    for word in [8, map.map(LV2URI.atomObject), 0, map.map(LV2URI.patchGet)] as [UInt32] {
      withUnsafeBytes(of: word.littleEndian) { message += $0 }
    }
    return message.withUnsafeBytes { messages.push($0.baseAddress, size: $0.count) }
  }

  /// Appends the messages waiting to each instance's control input, after the buffers were
  /// reset for a run.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  func deliver() {
    guard let control else { return }
    deliverMessages(
      messages, scratch: scratch, atoms: atoms, slot: control, stride: stride,
      instances: instances, capacity: capacity)
  }

  /// The `patch:Set` messages (property URI, path) the first instance's notify output holds
  /// after its last run. Off the audio thread.
  func notified() -> [(String, String)] {
    guard let notify else { return [] }
    let base = atoms + notify * capacity
    let header = base.assumingMemoryBound(to: UInt32.self)
    guard header[1] == sequence else { return [] }
    let size = Int(header[0])
    let map = URIDMap.shared
    let objectType = map.map(LV2URI.atomObject)
    let setType = map.map(LV2URI.patchSet)
    let propertyKey = map.map(LV2URI.patchProperty)
    let valueKey = map.map(LV2URI.patchValue)
    let pathType = map.map(LV2URI.atomPath)
    var found: [(String, String)] = []
    var offset = 16  // the sequence's header and body header
    while offset + 16 <= 8 + size, offset + 16 <= capacity {
      let event = base + offset
      let atomSize = Int(event.load(fromByteOffset: 8, as: UInt32.self))
      let atomType = event.load(fromByteOffset: 12, as: UInt32.self)
      let body = event + 16
      if atomType == objectType, atomSize >= 8, offset + 16 + atomSize <= capacity,
        body.load(fromByteOffset: 4, as: UInt32.self) == setType
      {
        var property: UInt32?
        var value: String?
        var at = 8
        while at + 16 <= atomSize {
          let key = body.load(fromByteOffset: at, as: UInt32.self)
          let valueSize = Int(body.load(fromByteOffset: at + 8, as: UInt32.self))
          let valueType = body.load(fromByteOffset: at + 12, as: UInt32.self)
          guard at + 16 + valueSize <= atomSize else { break }
          if key == propertyKey, valueSize >= 4 {
            property = body.load(fromByteOffset: at + 16, as: UInt32.self)
          } else if key == valueKey, valueType == pathType, valueSize > 0 {
            let bytes = UnsafeRawBufferPointer(start: body + at + 16, count: valueSize)
            value = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
          }
          at += 16 + ((valueSize + 7) & ~7)
        }
        if let property, let value, let uri = map.unmap(property) {
          found.append((String(cString: uri), value))
        }
      }
      offset += 16 + ((atomSize + 7) & ~7)
    }
    return found
  }
}

/// LV2 State as lilv reads it (``LilvWorld/restoreState(_:into:features:)``) holding
/// `files` (property URI to absolute path) and nothing else.
func fileStateTurtle(plugin: String, files: [String: String]) -> String {
  let properties = files.sorted { $0.key < $1.key }.map { "\t\t<\($0.key)> <\(fileURI($0.value))>" }
  return """
    @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
    @prefix pset: <http://lv2plug.in/ns/ext/presets#> .
    @prefix state: <http://lv2plug.in/ns/ext/state#> .

    <\(LV2URI.stateURI)>
    \ta pset:Preset ;
    \tlv2:appliesTo <\(plugin)> ;
    \tstate:state [
    \(properties.joined(separator: " ;\n"))
    \t] .

    """
}

/// `file://` and the absolute path, each byte but unreserved ones and `/` percent-encoded.
func fileURI(_ path: String) -> String {
  var uri = "file://"
  for byte in path.utf8 {
    let plain =
      (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte)
      || (0x61...0x7A).contains(byte) || "-._~/".utf8.contains(byte)
    uri +=
      plain
      ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded
  }
  return uri
}

extension String {
  /// A one-digit hex number with a leading 0.
  fileprivate var leftPadded: String { count == 1 ? "0" + self : self }
}

/// A `patch:Set` object atom (its header and body) setting `property` to the `atom:Path`
/// `path`, as `lv2_atom_forge` writes one: each property's value padded to 8 bytes.
func patchSetMessage(property: String, path: String) -> [UInt8] {
  let map = URIDMap.shared
  var body: [UInt8] = []
  func word(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { body += $0 } }
  func pad() { while body.count % 8 != 0 { body.append(0) } }
  word(0)  // id: a blank object
  word(map.map(LV2URI.patchSet))
  word(map.map(LV2URI.patchProperty))
  word(0)  // context
  word(4)
  word(map.map(LV2URI.atomURID))
  word(map.map(property))
  pad()
  let bytes = Array(path.utf8) + [0]
  word(map.map(LV2URI.patchValue))
  word(0)
  word(UInt32(bytes.count))
  word(map.map(LV2URI.atomPath))
  body += bytes
  pad()
  var message: [UInt8] = []
  withUnsafeBytes(of: UInt32(body.count).littleEndian) { message += $0 }
  withUnsafeBytes(of: map.map(LV2URI.atomObject).littleEndian) { message += $0 }
  return message + body
}
