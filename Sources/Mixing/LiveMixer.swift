public import Atomics
public import Timeline

/// What changed at a plan swap, as the player logs it.
public enum SwapKind: UInt8, Sendable, BitwiseCopyable {
  /// The first plan of a play: nothing to move from.
  case first
  /// Only gains changed (clip or track gain, pan, mute, solo): each changed clip ramps.
  case ramp
  /// What plays changed (a move, trim, split, removal, another version): the old plan's
  /// output crossfades into the new plan's.
  case crossfade
}

/// One plan swap on the audio thread, as logged for the player's report.
public struct SwapEvent: Sendable, BitwiseCopyable, Equatable {
  /// The version the new plan was compiled from.
  public var version: Int64
  /// The player's number for that plan (``PlanView/sequence``).
  public var sequence: Int64
  public var kind: SwapKind
  /// The output frame (frames since the play started) where the ramp or crossfade began.
  public var frame: Int64
  /// The timeline frame playing at that moment.
  public var position: Int64
  /// How long the ramp or crossfade lasts, in frames (0 for the first plan).
  public var length: Int64

  @inlinable
  public init(
    version: Int64, sequence: Int64 = 0, kind: SwapKind, frame: Int64, position: Int64,
    length: Int64
  ) {
    self.version = version
    self.sequence = sequence
    self.kind = kind
    self.frame = frame
    self.position = position
    self.length = length
  }
}

/// One step of a change of a player's chains: how the latency of an effect that enters or
/// leaves joins the graph's or leaves it without a gap, a repeat, or two readings of the signal
/// mixed (see ``EffectKernel/nextLiveStep(_:latency:maximumFrames:)``).
public struct LiveStep: Sendable, BitwiseCopyable, Equatable {
  public enum Kind: UInt8, Sendable, BitwiseCopyable {
    case none
    /// Feed the graph `frames` ahead at once: the processor at `slot` of `chain` takes them in
    /// as its latency (its output dropped), every other chain's delay line grows by as much.
    case absorb
    /// First feed every chain `slack` frames ahead into its delay line (so that each can give
    /// up `frames`); then, for `frames` frames, hold the clips back: the processor at `slot`
    /// of `chain` gives out what it holds, every other chain reads its delay line.
    case drain
    /// For `frames` frames, hold the clips back: every chain reads its delay line.
    case shrink
  }

  public var kind: Kind
  /// An index of ``GraphView/chains``, or −1 for the master's chain.
  public var chain: Int
  public var slot: Int
  public var frames: Int
  public var slack: Int

  @inlinable
  public init(kind: Kind, chain: Int, slot: Int, frames: Int, slack: Int) {
    self.kind = kind
    self.chain = chain
    self.slot = slot
    self.frames = frames
    self.slack = slack
  }

  @inlinable public static var none: LiveStep {
    LiveStep(kind: .none, chain: 0, slot: 0, frames: 0, slack: 0)
  }
}

/// The player's engine: the audio thread's side of plan swaps, ramps, crossfades and the
/// transport, all without allocation, locks, reference counting or I/O.
///
/// Rules (the realtime contract of ARCHITECTURE.md):
/// - Plans arrive through one atomic slot. A planner thread publishes the newest
///   (``publish(_:)``); the audio thread takes it with one atomic exchange at the start of a
///   period. A plan published before the previous one was taken replaces it (the older is
///   released by the planner: a burst of commits costs one swap).
/// - The audio thread never releases a plan: the plan it replaces goes into a fixed ring that
///   the planner empties (``collectRetired()``). If the ring is full, the audio thread keeps
///   its current plan for another period: it degrades, never blocks.
/// - A swap where only gains changed (the same clips, crops, places and fades: the layouts'
///   hashes agree and every clip, paired by id, matches) ramps each changed clip's gain from
///   where it is now to its new value over ``rampFrames``, linearly, landing exactly on it;
///   a ramp under way when the next swap comes starts again from where it got to.
/// - Any other swap crossfades the old plan's output into the new one's over
///   ``crossfadeFrames`` with equal-gain (linear) curves, `old·(1 − w) + new·w`: the two mixes
///   share every unchanged track, so an equal-power crossfade would swell them by 3 dB in the
///   middle. A plan that arrives during a crossfade waits for it to end, then crossfades from
///   the plan now sounding; plans in between are dropped. Never more than two mixes at once.
/// - Pause and resume, seeks and loop wraps fade out and in over ``declickFrames``, each fade
///   from the gain the last one reached (a resume during a pause's fade-out turns it around);
///   a seek waits for its fade-out to reach silence, even through a pause or a loop wrap.
///   The start of a play and the end of its range do not fade (the project's own fades do
///   that), so a whole play with no swap equals the offline render bit for bit. A quit
///   (``stop()``) fades out too, then ends the play.
/// - Effects delay the mix by their latency: the clips are mixed that far ahead of the frame
///   heard (`EngineState/effectsLatency`). At the start of a play, and after a seek or a loop
///   wrap, the chains start afresh and are fed their latency ahead, unheard (a preroll), so
///   what fades in is the new place at once and every pass of a loop is its range exactly.
///   While playing, an effect's latency joins or leaves its chain only where the chains are
///   fed ahead or the clips held back (``EffectKernel/nextLiveStep(_:latency:maximumFrames:)``):
///   what is heard never slips, and the mixer, not the plan, sets the delay lines.
/// - A chunk of decoded audio that is not resident plays as silence and is counted
///   (``Status/missingFrames``); a loader thread keeps the playhead's audio resident.
///
/// The audio thread calls ``render(_:frames:into:)`` with ``engine`` once per period; every
/// other method is for other threads. Ramps and crossfades use ``/Timeline/Easing/linear``, the
/// curve the animated diffs use too.
///
/// ```swift
/// let mixer = LiveMixer(channels: 2, maximumFrames: 1_024, range: 0..<Int64.max)
/// mixer.publish(plan)
/// LiveMixer.render(mixer.engine, frames: 256, into: buffer)  // on the audio thread
/// mixer.collectRetired()                                     // on the planner
/// ```
public final class LiveMixer: @unchecked Sendable {
  /// Gain ramps: 20 ms at 48 kHz.
  public let rampFrames: Int64
  /// Crossfades between plans: a player's is ``transitionFrames(sampleRate:)``.
  public let crossfadeFrames: Int64
  /// Fades around pause, resume, seeks and loop wraps: a player's is
  /// ``transitionFrames(sampleRate:)``.
  public let declickFrames: Int64
  /// Everything the audio thread touches, in memory this object owns.
  public let engine: UnsafeMutablePointer<EngineState>

  private static let retiredCapacity = 32

  /// The length of a player's crossfades and declick fades at `sampleRate`: 5.3 ms, 256
  /// frames at 48 kHz (1,024 at 192 kHz, 235 at 44.1 kHz), so that they sound the same at
  /// every rate; at least 16 frames.
  public static func transitionFrames(sampleRate: Int) -> Int64 {
    max(16, (Int64(sampleRate) * 256 + 24_000) / 48_000)
  }

  /// A mixer for `channels` output channels, rendering at most `maximumFrames` per call, over
  /// the timeline frames `range` (an upper bound of `Int64.max` follows the plan's end).
  public init(
    channels: Int, maximumFrames: Int, range: Range<Int64>, loop: Bool = false,
    rampFrames: Int64 = 960, crossfadeFrames: Int64 = 256, declickFrames: Int64 = 256
  ) {
    self.rampFrames = rampFrames
    self.crossfadeFrames = crossfadeFrames
    self.declickFrames = declickFrames
    func atomic<Value: AtomicValue>(_ value: Value) -> UnsafeAtomic<Value>
    where Value.AtomicRepresentation == Value.AtomicRepresentation {
      UnsafeAtomic<Value>.create(value)
    }
    let empty = PlanView(
      clips: nil, runningEnd: nil, count: 0, outputChannels: channels, ramps: nil, byID: nil,
      layoutHash: 0, end: 0, version: .min, sequence: .min)
    let retired = UnsafeMutablePointer<UInt>.allocate(capacity: Self.retiredCapacity)
    retired.initialize(repeating: 0, count: Self.retiredCapacity)
    let log = UnsafeMutablePointer<SwapEvent>.allocate(capacity: Self.swapLogCapacity)
    // Written here, so the audio thread's first swaps take no page fault (196 KiB).
    log.initialize(
      repeating: SwapEvent(version: 0, kind: .first, frame: 0, position: 0, length: 0),
      count: Self.swapLogCapacity)
    let scratch = UnsafeMutablePointer<Float>.allocate(capacity: maximumFrames * channels)
    scratch.initialize(repeating: 0, count: maximumFrames * channels)
    let feedBuffer = UnsafeMutablePointer<Float>.allocate(capacity: maximumFrames * channels)
    feedBuffer.initialize(repeating: 0, count: maximumFrames * channels)
    engine = .allocate(capacity: 1)
    engine.initialize(
      to: EngineState(
        inbox: atomic(UInt(0)), retired: retired, retiredCapacity: Self.retiredCapacity,
        retiredHead: atomic(0), retiredTail: atomic(0), requestedPause: atomic(false),
        requestedSeek: atomic(Int64.min), requestedLoop: atomic(loop), requestedStop: atomic(false),
        publishedPosition: atomic(range.lowerBound), publishedClock: atomic(0),
        publishedVersion: atomic(Int64.min), publishedFlags: atomic(0),
        publishedSeek: atomic(Int64.min), periodsEnded: atomic(0),
        missingFrames: atomic(0), swapCount: atomic(0), log: log,
        logCapacity: Self.swapLogCapacity, scratch: scratch, feedBuffer: feedBuffer,
        maximumFrames: maximumFrames,
        channels: channels, rampFrames: rampFrames, crossfadeFrames: crossfadeFrames,
        declickFrames: declickFrames, current: .none(empty), fading: .none(empty),
        empty: empty, crossfadeStart: 0,
        clock: 0, position: range.lowerBound, rangeStart: range.lowerBound,
        rangeEnd: range.upperBound, loop: loop, paused: false, finished: false,
        declick: .none, declickLevel: declickFrames, pendingSeek: .min))
  }

  /// Lets a play that follows the project's end (no upper bound to its range) and does not
  /// loop go on past the end while its effects ring out, as a render's tail does: until every
  /// output sample has stayed under `threshold` (linear) for `quiet` frames, at most `limit`
  /// frames past the end. A plan without effects ends at its end. Call before the play starts.
  ///
  /// Why the play ends `quiet` frames after the last loud one, where a render ends at it: the
  /// player cannot hear ahead; what it plays in that window is under the threshold.
  public func ringOut(quiet: Int64, limit: Int64, threshold: Float) {
    engine.pointee.ringOutQuiet = quiet
    engine.pointee.ringOutLimit = limit
    engine.pointee.ringOutThreshold = threshold
  }

  /// The memory the audio thread reads and writes besides the plans (its state, the retire
  /// ring, the swap log, the crossfade's scratch buffer), for a player to lock into RAM: its
  /// address and length in bytes, region by region. Every page of it has been written.
  public var memoryRegions: [(address: UnsafeRawPointer, bytes: Int)] {
    let state = engine.pointee
    return [
      (UnsafeRawPointer(engine), MemoryLayout<EngineState>.stride),
      (UnsafeRawPointer(state.retired), state.retiredCapacity * MemoryLayout<UInt>.stride),
      (UnsafeRawPointer(state.log), state.logCapacity * MemoryLayout<SwapEvent>.stride),
      (UnsafeRawPointer(state.scratch), state.maximumFrames * state.channels * 4),
      (UnsafeRawPointer(state.feedBuffer), state.maximumFrames * state.channels * 4),
    ]
  }

  /// Only once the audio thread has stopped calling ``render(_:frames:into:)``.
  deinit {
    collectRetired()
    let state = engine.pointee
    for bits in [
      state.inbox.exchange(0, ordering: .acquiring), state.current.bits, state.fading.bits,
      state.waiting,
    ]
    where bits != 0 {
      PlanHandle.release(bits)
    }
    for atomic in [state.retiredHead, state.retiredTail] { atomic.destroy() }
    state.inbox.destroy()
    state.requestedPause.destroy()
    state.requestedSeek.destroy()
    state.requestedLoop.destroy()
    state.requestedStop.destroy()
    state.publishedPosition.destroy()
    state.publishedClock.destroy()
    state.publishedVersion.destroy()
    state.publishedFlags.destroy()
    state.publishedSeek.destroy()
    state.periodsEnded.destroy()
    state.missingFrames.destroy()
    state.swapCount.destroy()
    state.retired.deallocate()
    state.log.deallocate()
    state.scratch.deallocate()
    state.feedBuffer.deallocate()
    engine.deinitialize(count: 1)
    engine.deallocate()
  }

  // MARK: Other threads

  /// Hands `plan` to the audio thread, replacing any plan it has not taken yet (which is
  /// released here, never heard: its identity is returned). The plan must have been compiled
  /// for this mixer's channel count.
  @discardableResult
  public func publish(_ plan: RenderPlan) -> ObjectIdentifier? {
    precondition(plan.outputChannels == engine.pointee.channels, "a plan for another layout")
    let bits = UInt(bitPattern: Unmanaged.passRetained(plan).toOpaque())
    let old = engine.pointee.inbox.exchange(bits, ordering: .acquiringAndReleasing)
    guard old != 0 else { return nil }
    let replaced = PlanHandle.identity(old)
    PlanHandle.release(old)
    return replaced
  }

  /// Releases the plans the audio thread has let go of (call it regularly from the planner),
  /// and returns their identities: none of them can sound again.
  @discardableResult
  public func collectRetired() -> [ObjectIdentifier] {
    let state = engine.pointee
    var tail = state.retiredTail.load(ordering: .relaxed)
    let head = state.retiredHead.load(ordering: .acquiring)
    var released: [ObjectIdentifier] = []
    while tail != head {
      let bits = state.retired[tail % state.retiredCapacity]
      released.append(PlanHandle.identity(bits))
      PlanHandle.release(bits)
      tail += 1
    }
    state.retiredTail.store(tail, ordering: .releasing)
    return released
  }

  /// Pauses (fading out) or resumes (fading in).
  public func setPaused(_ paused: Bool) {
    engine.pointee.requestedPause.store(paused, ordering: .releasing)
  }

  /// Moves the playhead to timeline frame `frame` (fading out and in while playing).
  public func seek(to frame: Int64) {
    engine.pointee.requestedSeek.store(frame, ordering: .releasing)
  }

  public func setLoop(_ loop: Bool) {
    engine.pointee.requestedLoop.store(loop, ordering: .releasing)
  }

  /// Ends the play: it fades out over ``declickFrames`` (at once when paused or silent) and
  /// ends there, the rest of that period silent.
  public func stop() {
    engine.pointee.requestedStop.store(true, ordering: .releasing)
  }

  /// Where the play is, as of the last period.
  public struct Status: Sendable, Equatable {
    /// The timeline frame about to play.
    public var position: Int64
    /// Frames output since the play started.
    public var clock: Int64
    /// The version of the plan sounding (nil before the first).
    public var version: Int64?
    public var paused: Bool
    public var finished: Bool
    public var loop: Bool
    /// Clip frames played as silence because their decoded audio was not in memory yet.
    public var missingFrames: Int
    /// Plan swaps so far.
    public var swaps: Int
    /// Where a seek asked for will land, until it has (the audio thread may still be fading
    /// out at ``position``): a loader keeps the audio of both in memory.
    public var seekTarget: Int64?
  }

  public var status: Status {
    let state = engine.pointee
    // In this order: a seek taken from the request slot is published as under way before the
    // slot empties, and a landed one is cleared only after the position where it landed.
    let requested = state.requestedSeek.load(ordering: .acquiring)
    let underWay = state.publishedSeek.load(ordering: .acquiring)
    let seekTarget =
      requested != .min
      ? max(state.rangeStart, requested) : underWay == .min ? nil : underWay
    let flags = state.publishedFlags.load(ordering: .acquiring)
    let version = state.publishedVersion.load(ordering: .relaxed)
    return Status(
      position: state.publishedPosition.load(ordering: .relaxed),
      clock: state.publishedClock.load(ordering: .relaxed),
      version: version == .min ? nil : version, paused: flags & 1 != 0, finished: flags & 2 != 0,
      loop: flags & 4 != 0, missingFrames: state.missingFrames.load(ordering: .relaxed),
      swaps: state.swapCount.load(ordering: .relaxed), seekTarget: seekTarget)
  }

  /// The swaps logged so far, oldest first (the first ``swapLogCapacity`` of a play).
  public var swaps: [SwapEvent] {
    let state = engine.pointee
    let count = min(state.swapCount.load(ordering: .acquiring), state.logCapacity)
    return (0..<count).map { state.log[$0] }
  }

  public static var swapLogCapacity: Int { 4_096 }

  /// How many calls of ``render(_:frames:into:)`` have ended: the audio thread's period count.
  ///
  /// Memory the audio thread may read (a chunk of decoded audio) that was taken out of its
  /// reach may be freed once this is 2 more than it was when read *after* taking it out: the
  /// period that may have begun before and read it has ended by then.
  public var periodsEnded: Int {
    engine.pointee.periodsEnded.load(ordering: .sequentiallyConsistent)
  }

  // MARK: The audio thread

  /// Renders the next `frames` frames (at most the mixer's `maximumFrames`) into `output`,
  /// interleaved; silence while paused or before the first plan. Returns how many of them
  /// belong to the play: `frames`, fewer in the period where the play ends (the rest is
  /// silence), 0 once it has ended.
  ///
  /// - Note: Realtime-safe: no allocation, no locks, no reference counting, no I/O.
  @_noLocks
  @inlinable
  @discardableResult
  public static func render(
    _ engine: UnsafeMutablePointer<EngineState>, frames: Int,
    into output: UnsafeMutablePointer<Float>
  ) -> Int {
    engine.pointee.takeCommands()
    engine.pointee.pickUpPlan()
    var done = 0
    let channels = engine.pointee.channels
    while done < frames {
      // The effects' latency, fed and dropped before the first frame heard (see ``preroll``):
      // at the start, and after a seek or a loop wrap.
      if engine.pointee.preroll > 0 { engine.pointee.runPreroll() }
      if !engine.pointee.renderSegment(frames - done, into: output + done * channels) {
        (output + done * channels).update(repeating: 0, count: (frames - done) * channels)
        if !engine.pointee.finished {
          // Paused, or no plan yet: the silence is played.
          engine.pointee.clock += Int64(frames - done)
          engine.pointee.mixClock += Int64(frames - done)
          done = frames
        }
        break
      }
      done = frames - engine.pointee.remainingAfterSegment
    }
    engine.pointee.publishStatus()
    engine.pointee.periodsEnded.wrappingIncrement(ordering: .sequentiallyConsistent)
    return done
  }
}

extension LiveMixer {
  /// How many swaps the audio thread has made (for the device thread, between periods).
  @_noLocks
  @inlinable
  public static func swapCount(_ engine: UnsafeMutablePointer<EngineState>) -> Int {
    engine.pointee.swapCount.load(ordering: .relaxed)
  }

  /// The timeline frame the next period starts at, as the last period left it (for the device
  /// thread, between periods).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inlinable
  public static func position(_ engine: UnsafeMutablePointer<EngineState>) -> Int64 {
    engine.pointee.publishedPosition.load(ordering: .relaxed)
  }

  /// Whether the audio the next `frames` frames play is all in memory (for the plans sounding
  /// and where a loop wraps): a player whose device does not pace it (a file or null PCM)
  /// waits for its loader while this is false, instead of playing silence.
  ///
  /// Takes the transport requests and the newest plan first, as the next render would: the
  /// plan waiting in the inbox is the one that will sound, so it is the one checked.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inlinable
  public static func isReady(_ engine: UnsafeMutablePointer<EngineState>, frames: Int) -> Bool {
    EngineState.isReady(engine, frames: frames)
  }
}

/// A retained plan as the audio thread holds it: its address and its view, no reference.
public struct PlanHandle: @unchecked Sendable, BitwiseCopyable {
  /// `Unmanaged<RenderPlan>`'s address; 0 for none.
  public var bits: UInt
  public var view: PlanView

  @inlinable
  init(bits: UInt, view: PlanView) {
    self.bits = bits
    self.view = view
  }

  /// No plan (the view is an empty one the mixer made).
  static func none(_ empty: PlanView) -> PlanHandle {
    PlanHandle(bits: 0, view: empty)
  }

  /// The view of the plan at `bits` (not 0), read without retaining it.
  @inlinable
  static func at(_ bits: UInt) -> PlanHandle {
    let address = UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped
    let view = Unmanaged<RenderPlan>.fromOpaque(address)._withUnsafeGuaranteedRef { $0.view }
    return PlanHandle(bits: bits, view: view)
  }

  /// Off the audio thread: the plan at `bits` (not 0), as an identity.
  static func identity(_ bits: UInt) -> ObjectIdentifier {
    let address = UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped
    return ObjectIdentifier(Unmanaged<RenderPlan>.fromOpaque(address).takeUnretainedValue())
  }

  /// Off the audio thread: gives back the reference ``LiveMixer/publish(_:)`` took.
  static func release(_ bits: UInt) {
    guard let address = UnsafeRawPointer(bitPattern: bits) else { return }
    Unmanaged<RenderPlan>.fromOpaque(address).release()
  }
}

/// The audio thread's state and its atomics shared with the other threads; see ``LiveMixer``.
public struct EngineState: @unchecked Sendable {
  // Shared with the other threads.
  @usableFromInline let inbox: UnsafeAtomic<UInt>
  @usableFromInline let retired: UnsafeMutablePointer<UInt>
  @usableFromInline let retiredCapacity: Int
  @usableFromInline let retiredHead: UnsafeAtomic<Int>
  @usableFromInline let retiredTail: UnsafeAtomic<Int>
  @usableFromInline let requestedPause: UnsafeAtomic<Bool>
  @usableFromInline let requestedSeek: UnsafeAtomic<Int64>
  @usableFromInline let requestedLoop: UnsafeAtomic<Bool>
  @usableFromInline let requestedStop: UnsafeAtomic<Bool>
  @usableFromInline let publishedPosition: UnsafeAtomic<Int64>
  @usableFromInline let publishedClock: UnsafeAtomic<Int64>
  @usableFromInline let publishedVersion: UnsafeAtomic<Int64>
  @usableFromInline let publishedFlags: UnsafeAtomic<Int>
  /// The target of a seek the audio thread took and has not landed yet (`Int64.min`: none).
  @usableFromInline let publishedSeek: UnsafeAtomic<Int64>
  /// Renders ended (see ``LiveMixer/periodsEnded``).
  @usableFromInline let periodsEnded: UnsafeAtomic<Int>
  @usableFromInline let missingFrames: UnsafeAtomic<Int>
  @usableFromInline let swapCount: UnsafeAtomic<Int>
  @usableFromInline let log: UnsafeMutablePointer<SwapEvent>
  @usableFromInline let logCapacity: Int
  // The audio thread's own.
  @usableFromInline let scratch: UnsafeMutablePointer<Float>
  /// Where the frames fed ahead to the chains go (a preroll, an effect's latency taken in).
  @usableFromInline let feedBuffer: UnsafeMutablePointer<Float>
  @usableFromInline let maximumFrames: Int
  @usableFromInline let channels: Int
  @usableFromInline let rampFrames: Int64
  @usableFromInline let crossfadeFrames: Int64
  @usableFromInline let declickFrames: Int64
  @usableFromInline var current: PlanHandle
  /// The plan fading out during a crossfade (bits 0 otherwise).
  @usableFromInline var fading: PlanHandle
  /// The view of no plan.
  @usableFromInline let empty: PlanView
  @usableFromInline var crossfadeStart: Int64
  @usableFromInline var clock: Int64
  @usableFromInline var position: Int64
  @usableFromInline var rangeStart: Int64
  /// `Int64.max`: the current plan's end.
  @usableFromInline var rangeEnd: Int64
  @usableFromInline var loop: Bool
  @usableFromInline var paused: Bool
  @usableFromInline var finished: Bool
  /// Ringing out past the end (see ``LiveMixer/ringOut(quiet:limit:threshold:)``): the frames of
  /// quiet that end it (0: no ringing out, the play ends at the end), the most frames past the
  /// end, the level under which a frame is quiet, and the quiet frames so far.
  @usableFromInline var ringOutQuiet: Int64 = 0
  @usableFromInline var ringOutLimit: Int64 = 0
  @usableFromInline var ringOutThreshold: Float = 0
  @usableFromInline var quietSoFar: Int64 = 0
  @usableFromInline var declick: Declick
  /// The transport's gain, in frames of a declick: `declickLevel / declickFrames` (full
  /// gain is `declickFrames`, paused is 0). Every fade starts from where it is, so a request
  /// in the middle of a fade turns it around instead of jumping.
  @usableFromInline var declickLevel: Int64
  /// Where to jump when the fade-out under way ends (`Int64.min`: nowhere): queued, so a
  /// pause or a loop wrap during that fade does not drop it.
  @usableFromInline var pendingSeek: Int64
  /// Whether the other threads ask for a pause (as of the last ``takeCommands()``).
  @usableFromInline var pauseWanted = false
  /// Frames of the period left after the last segment.
  @usableFromInline var remainingAfterSegment = 0
  /// Frames still to feed the chains and drop before the next frame heard: the effects'
  /// latency, at the start of the play and after a seek or a loop wrap, so that what is heard
  /// lines up with the timeline, as in a render.
  @usableFromInline var preroll: Int64 = 0
  /// The frames the effects delay the mix by now (0 without effects): ``position`` is this far
  /// ahead of the frame heard. It changes only where the chains are fed ahead or held back
  /// (see ``Mixing/EffectKernel/nextLiveStep(_:latency:maximumFrames:)``), so what is heard
  /// goes on without a jump.
  @usableFromInline var effectsLatency = 0
  /// A hold of the clips under way (a drain or a shrink), and the frames it has left.
  @usableFromInline var freeze = LiveStep.none
  @usableFromInline var freezeRemaining = 0
  /// Frames mixed from the clips since the play started: what gain ramps and crossfades of
  /// clips follow. As ``clock``, but for the frames fed ahead (counted here, unheard yet) and
  /// those played while the clips were held back (not counted here).
  @usableFromInline var mixClock: Int64 = 0
  /// A quit asked for: fading out, then the play ends.
  @usableFromInline var stopping = false
  /// A plan taken from the inbox that waits to be swapped in (one without effects, while the
  /// chains still give back latency); 0 for none.
  @usableFromInline var waiting: UInt = 0

  @usableFromInline
  enum Declick: UInt8, Sendable, BitwiseCopyable {
    case none
    /// Fading out to silence, then jumping to `pendingSeek` if there is one, then pausing if
    /// a pause is wanted, or fading in.
    case fadingOut
    /// Fading in (after a resume, a seek or a loop wrap).
    case fadingIn
  }

  @usableFromInline
  init(
    inbox: UnsafeAtomic<UInt>, retired: UnsafeMutablePointer<UInt>, retiredCapacity: Int,
    retiredHead: UnsafeAtomic<Int>, retiredTail: UnsafeAtomic<Int>,
    requestedPause: UnsafeAtomic<Bool>, requestedSeek: UnsafeAtomic<Int64>,
    requestedLoop: UnsafeAtomic<Bool>, requestedStop: UnsafeAtomic<Bool>,
    publishedPosition: UnsafeAtomic<Int64>, publishedClock: UnsafeAtomic<Int64>,
    publishedVersion: UnsafeAtomic<Int64>, publishedFlags: UnsafeAtomic<Int>,
    publishedSeek: UnsafeAtomic<Int64>, periodsEnded: UnsafeAtomic<Int>,
    missingFrames: UnsafeAtomic<Int>, swapCount: UnsafeAtomic<Int>,
    log: UnsafeMutablePointer<SwapEvent>, logCapacity: Int, scratch: UnsafeMutablePointer<Float>,
    feedBuffer: UnsafeMutablePointer<Float>, maximumFrames: Int, channels: Int, rampFrames: Int64,
    crossfadeFrames: Int64,
    declickFrames: Int64, current: PlanHandle, fading: PlanHandle, empty: PlanView,
    crossfadeStart: Int64,
    clock: Int64, position: Int64, rangeStart: Int64, rangeEnd: Int64, loop: Bool, paused: Bool,
    finished: Bool, declick: Declick, declickLevel: Int64, pendingSeek: Int64
  ) {
    self.inbox = inbox
    self.retired = retired
    self.retiredCapacity = retiredCapacity
    self.retiredHead = retiredHead
    self.retiredTail = retiredTail
    self.requestedPause = requestedPause
    self.requestedSeek = requestedSeek
    self.requestedLoop = requestedLoop
    self.requestedStop = requestedStop
    self.publishedPosition = publishedPosition
    self.publishedClock = publishedClock
    self.publishedVersion = publishedVersion
    self.publishedFlags = publishedFlags
    self.publishedSeek = publishedSeek
    self.periodsEnded = periodsEnded
    self.missingFrames = missingFrames
    self.swapCount = swapCount
    self.log = log
    self.logCapacity = logCapacity
    self.scratch = scratch
    self.feedBuffer = feedBuffer
    self.maximumFrames = maximumFrames
    self.channels = channels
    self.rampFrames = rampFrames
    self.crossfadeFrames = crossfadeFrames
    self.declickFrames = declickFrames
    self.current = current
    self.fading = fading
    self.empty = empty
    self.crossfadeStart = crossfadeStart
    self.clock = clock
    self.position = position
    self.rangeStart = rangeStart
    self.rangeEnd = rangeEnd
    self.loop = loop
    self.paused = paused
    self.finished = finished
    self.declick = declick
    self.declickLevel = declickLevel
    self.pendingSeek = pendingSeek
  }

  /// The end of the range: `--to`, or the sounding plan's end, plus the effects' latency now
  /// (``effectsLatency``): the chains are fed that far ahead, so the range's last frame comes
  /// out of them that much later, as in a render. A loop wraps there too, and every pass is
  /// the range's length exactly.
  @inlinable
  var end: Int64 {
    let latency = Int64(effectsLatency)
    guard rangeEnd != .max else {
      // The plan's end counts its effects' latency as compiled; the one now counts.
      var compiled: Int64 = 0
      if let graph = current.view.graph { compiled = Int64(graph.pointee.latency) }
      return current.view.end - compiled + latency
    }
    return rangeEnd + latency
  }

  /// The timeline frame heard next: ``position`` less what the chains hold of the mix (their
  /// latency, once fed).
  @inlinable
  var heardPosition: Int64 { position - Int64(effectsLatency) + preroll }

  /// Where the play ends or wraps now: ``end``, or later while a crossfade is under way, which
  /// always plays out whole. Why: an edit that removes the last clip under the playhead makes
  /// the new plan end before it; ending at once would cut the old plan's sound dead (a click),
  /// where the crossfade takes it to silence.
  ///
  /// Only where the play follows the project's end (no `--to`), and no further than the old
  /// plan itself went: a crossfade near an end that did not move changes nothing.
  @inlinable
  var playableEnd: Int64 {
    guard fading.bits != 0, rangeEnd == .max else { return end }
    let crossfadeEnds = position + crossfadeStart + crossfadeFrames - mixClock
    return max(end, min(fading.view.end, crossfadeEnds))
  }

  /// Applies the transport requests of the other threads.
  @_noLocks
  @inlinable
  mutating func takeCommands() {
    if requestedStop.load(ordering: .acquiring) && !stopping {
      // A quit fades out from the gain it has reached, then ends the play; silent, at once.
      stopping = true
      pendingSeek = .min
      if paused || current.bits == 0 || declickLevel == 0 {
        finished = true
      } else {
        declick = .fadingOut
      }
    }
    if stopping { return }
    loop = requestedLoop.load(ordering: .relaxed)
    var seek = requestedSeek.load(ordering: .acquiring)
    if seek != .min {
      // Under way before the slot empties, for ``LiveMixer/status``'s readers.
      publishedSeek.store(max(rangeStart, seek), ordering: .releasing)
      seek = requestedSeek.exchange(.min, ordering: .acquiringAndReleasing)
    }
    pauseWanted = requestedPause.load(ordering: .acquiring)
    if seek != .min {
      let target = max(rangeStart, seek)
      if paused || current.bits == 0 {
        position = target
        // The chains start afresh there, fed ahead as the play resumes.
        restartEffects()
      } else {
        // Queued (a later seek replaces it); the fade goes down from where it is.
        pendingSeek = target
        declick = .fadingOut
      }
    }
    if pauseWanted {
      if !paused && current.bits != 0 { declick = .fadingOut }
    } else if paused {
      paused = false
      declick = .fadingIn
    } else if declick == .fadingOut && pendingSeek == .min {
      // A resume while the pause fades out: back up from where it got to.
      declick = .fadingIn
    }
  }

  /// What follows a fade-out that reached silence: the queued seek lands, then the play
  /// pauses if a pause is wanted, or fades in.
  @_noLocks
  @inlinable
  mutating func finishFadeOut() {
    declickLevel = 0
    if stopping {
      finished = true
      declick = .none
      return
    }
    if pendingSeek != .min {
      position = pendingSeek
      pendingSeek = .min
      // The chains start afresh at the target, fed ahead by their latency (unheard) before
      // the fade-in: what comes out of them is the target's, at once.
      restartEffects()
    }
    if pauseWanted {
      paused = true
      declick = .none
    } else {
      declick = .fadingIn
    }
  }

  /// Takes the newest plan, unless a crossfade is under way or the retire ring lacks room;
  /// ramps or starts a crossfade.
  @_noLocks
  @inlinable
  mutating func pickUpPlan() {
    guard fading.bits == 0, freezeRemaining == 0 else { return }
    let head = retiredHead.load(ordering: .relaxed)
    guard head - retiredTail.load(ordering: .acquiring) <= retiredCapacity - 2 else { return }
    var bits = waiting
    waiting = 0
    if bits == 0 { bits = inbox.exchange(0, ordering: .acquiringAndReleasing) }
    guard bits != 0 else { return }
    let incoming = PlanHandle.at(bits)
    if current.bits != 0, let graph = current.view.graph {
      let latency = effectsLatency
      var (settled, reordering) = (true, false)
      _unsafePerformance {
        (settled, reordering) = EffectKernel.isSettled(graph.pointee, latency: latency)
      }
      var reorders = false
      if let next = incoming.view.graph { reorders = next.pointee.hasReorder }
      // Effects leave the project: the mix without them (undelayed) crossfades from the one
      // with them only once their chains have given their latency back (else the two
      // readings of the same clips would comb-filter). A reorder runs its two orders side by
      // side from chains that are settled, and no plan comes in before it is over (see
      // ``Mixing/ReorderRole``).
      if (incoming.view.graph == nil && latency > 0) || reordering || (reorders && !settled) {
        waiting = bits
        return
      }
    }
    var kind = SwapKind.first
    var length: Int64 = 0
    if current.bits != 0 && (current.view.graph == nil) != (incoming.view.graph == nil) {
      // Effects come into the project or leave it: the mixes without buses and with them
      // crossfade whole. (Effects that enter or leave a chain crossfade themselves, see
      // ``EffectRack/chain(_:_:)``; the last to leave has left before a plan without them.)
      kind = .crossfade
      length = crossfadeFrames
      fading = current
      crossfadeStart = mixClock
    } else if current.bits != 0 {
      if current.view.layoutHash == incoming.view.layoutHash
        && Self.startRamps(from: current.view, to: incoming.view, at: mixClock, length: rampFrames)
      {
        kind = .ramp
        length = rampFrames
        retire(current.bits)
      } else {
        kind = .crossfade
        length = crossfadeFrames
        fading = current
        crossfadeStart = mixClock
      }
    }
    current = incoming
    if let graph = incoming.view.graph {
      // Each effect takes this plan's values (ramped) and bypass (crossfaded). Effects run
      // plugin code the compiler cannot see (see ``EffectKernel``): exempt from the check,
      // and held to it by the allocation tests and the plugins' hard-RT flag.
      _unsafePerformance { EffectKernel.adopt(graph.pointee) }
    } else {
      effectsLatency = 0
    }
    if kind == .first { restartEffects() }
    let count = swapCount.load(ordering: .relaxed)
    if count < logCapacity {
      log[count] = SwapEvent(
        version: incoming.view.version, sequence: incoming.view.sequence, kind: kind,
        frame: clock, position: heardPosition, length: length)
    }
    swapCount.store(count + 1, ordering: .releasing)
  }

  /// Pairs the clips of two plans of the same layout by id and starts, in `new`, a ramp for
  /// each clip whose gain differs from where it is in `old` at `clock`. False (and no ramp
  /// written) when the layouts differ after all.
  @_noLocks
  @inlinable
  static func startRamps(
    from old: PlanView, to new: PlanView, at clock: Int64, length: Int64
  ) -> Bool {
    guard old.count == new.count, let oldClips = old.clips, let newClips = new.clips,
      let oldOrder = old.byID, let newOrder = new.byID, let oldRamps = old.ramps,
      let newRamps = new.ramps
    else { return old.count == 0 && new.count == 0 }
    for k in 0..<new.count {
      let a = oldClips[Int(oldOrder[k])]
      let b = newClips[Int(newOrder[k])]
      guard a.clipID == b.clipID, a.layout == b.layout else { return false }
    }
    for k in 0..<new.count {
      let oldIndex = Int(oldOrder[k])
      let newIndex = Int(newOrder[k])
      let a = oldClips[oldIndex]
      let b = newClips[newIndex]
      let (left, right) = RenderKernel.gains(
        oldRamps[oldIndex], to: a.gainLeft, a.gainRight, at: clock)
      newRamps[newIndex] =
        left == b.gainLeft && right == b.gainRight
        ? .none : ClipRamp(fromLeft: left, fromRight: right, end: clock + length, length: length)
    }
    return true
  }

  /// Hands a plan back to the planner for release (the caller made sure there is room).
  @_noLocks
  @inlinable
  mutating func retire(_ bits: UInt) {
    let head = retiredHead.load(ordering: .relaxed)
    retired[head % retiredCapacity] = bits
    retiredHead.store(head + 1, ordering: .releasing)
  }

  /// Renders up to `frames` frames of one stretch where nothing changes course (no wrap, no
  /// end of a fade, crossfade or hold of the clips inside); sets ``remainingAfterSegment`` (all
  /// of `frames` left when a loop wrap needs a preroll first). False when there is nothing to
  /// play (no plan, paused, finished): the caller fills the rest with silence.
  @_noLocks
  @inlinable
  mutating func renderSegment(_ frames: Int, into output: UnsafeMutablePointer<Float>) -> Bool {
    guard !finished, current.bits != 0, !paused else { return false }
    if declick == .fadingOut && declickLevel == 0 {
      // Asked to fade out at silence (a pause as a fade-in began).
      finishFadeOut()
      if paused || finished { return false }
    }
    var end = playableEnd
    // Past the end, the effects ringing out (the clips are over: what sounds is their tails).
    let ringing =
      position >= end && !loop && ringOutQuiet > 0 && rangeEnd == .max
      && current.view.graph != nil && fading.bits == 0 && quietSoFar < ringOutQuiet
      && position < end + ringOutLimit
    if position < end { quietSoFar = 0 }
    if position >= end && !ringing {
      // At the end, or the range shrank under the playhead.
      guard loop else {
        finished = true
        return false
      }
      // Looping over nothing (an edit removed every clip, a checkout of an empty version):
      // silence, until an edit brings clips back.
      guard end - Int64(effectsLatency) > rangeStart else { return false }
      position = rangeStart
      // A fade-out under way ends here, in the wrap's silence: its seek lands, or it pauses.
      if declick == .fadingOut {
        finishFadeOut()
        if paused || finished { return false }
      } else {
        declickLevel = 0
        declick = .fadingIn
      }
      // The chains start afresh at the loop's start: fed ahead by their latency (unheard)
      // before its first frame, as at the start of the play, so every pass is the range.
      restartEffects()
      if preroll > 0 {
        remainingAfterSegment = frames
        return true
      }
      end = playableEnd
      if position >= end { return false }
    }
    // A step of a change of the chains (an effect entering or leaving), between crossfades.
    if freezeRemaining == 0 && fading.bits == 0 && current.view.graph != nil {
      takeEffectsStep()
      end = playableEnd
    }
    var count = Int64(frames)
    count = min(count, (ringing ? end + ringOutLimit : end) - position)
    if declick == .fadingOut { count = min(count, declickLevel) }
    if declick == .fadingIn { count = min(count, declickFrames - declickLevel) }
    if fading.bits != 0 { count = min(count, crossfadeStart + crossfadeFrames - mixClock) }
    let frozen = freezeRemaining > 0
    if frozen { count = min(count, Int64(freezeRemaining)) }
    // A loop wrap fades out over the range's last frames (below any declick under way).
    let loopFadeStart = end - declickFrames
    // (Not where a crossfade runs past the plan's end: that already ends in silence.)
    let wrapping =
      loop && end == self.end && end - Int64(effectsLatency) - rangeStart > 2 * declickFrames
    if wrapping && position < loopFadeStart { count = min(count, loopFadeStart - position) }
    let n = Int(max(count, 1))

    var missing = 0
    let graph = current.view.graph
    let fadingGraph = fading.bits != 0 ? fading.view.graph : nil
    let latency = effectsLatency
    if frozen, let graph {
      // The clips held back: the chains give out what they hold (see ``takeEffectsStep``).
      let step = freeze
      _unsafePerformance {
        EffectKernel.finishLive(
          graph.pointee, frames: n, channels: channels, into: output,
          rampFrames: Int(rampFrames), latency: latency, freeze: step)
      }
    } else if fading.bits != 0, let graph, let fadingGraph {
      missing += RenderKernel.render(
        current.view, from: position, frames: n, into: output, clock: mixClock)
      // Both plans have effects: their clips crossfade bus by bus, before the chains, so that
      // each effect runs once and its state (a tail, an envelope) goes on through the swap.
      missing += RenderKernel.render(
        fading.view, from: position, frames: n, into: scratch, clock: mixClock,
        intoScratchBuses: true)
      let (clock, start, length) = (mixClock, crossfadeStart, crossfadeFrames)
      // Plugin code (see pickUpPlan).
      _unsafePerformance {
        let at = CrossfadePosition(clock: clock, start: start, length: length)
        EffectKernel.crossfade(
          from: fadingGraph.pointee, to: graph.pointee, frames: n, channels: channels,
          at: at, oldOnlyInto: output, rampFrames: Int(rampFrames), live: true)
        EffectKernel.finishLive(
          graph.pointee, frames: n, channels: channels, into: output,
          rampFrames: Int(rampFrames), latency: latency, clearing: false, at: position)
      }
    } else {
      missing += RenderKernel.render(
        current.view, from: position, frames: n, into: output, clock: mixClock)
      if let graph {
        _unsafePerformance {
          EffectKernel.finishLive(
            graph.pointee, frames: n, channels: channels, into: output,
            rampFrames: Int(rampFrames), latency: latency, at: position)
        }
      }
      if fading.bits != 0 {
        // One side has no effects: the two whole mixes crossfade.
        missing += RenderKernel.render(
          fading.view, from: position, frames: n, into: scratch, clock: mixClock)
        if let fadingGraph {
          _unsafePerformance {
            EffectKernel.finishLive(
              fadingGraph.pointee, frames: n, channels: channels, into: scratch,
              rampFrames: Int(rampFrames), latency: latency, at: position)
          }
        }
        for frame in 0..<n {
          let w = Float(
            Easing.linear(
              Double(mixClock + Int64(frame) - crossfadeStart) / Double(crossfadeFrames)))
          for channel in 0..<channels {
            let i = frame * channels + channel
            output[i] = scratch[i] * (1 - w) + output[i] * w
          }
        }
      }
    }
    if ringing {
      // The quiet frames since the last loud one.
      var frame = n - 1
      var loud = -1
      while frame >= 0 && loud < 0 {
        for channel in 0..<channels
        where abs(output[frame * channels + channel]) >= ringOutThreshold {
          loud = frame
        }
        frame -= 1
      }
      quietSoFar = loud < 0 ? quietSoFar + Int64(n) : Int64(n - 1 - loud)
    }
    let wrapFade = wrapping && position >= loopFadeStart
    if declick != .none || wrapFade {
      for frame in 0..<n {
        var g: Float = 1
        switch declick {
        case .fadingIn:
          g = Float(Easing.linear(Double(declickLevel + Int64(frame)) / Double(declickFrames)))
        case .fadingOut:
          g = Float(
            Easing.linear(Double(declickLevel - Int64(frame) - 1) / Double(declickFrames)))
        case .none:
          break
        }
        if wrapFade {
          g = min(
            g,
            Float(
              Easing.linear(Double(end - position - Int64(frame) - 1) / Double(declickFrames))))
        }
        for channel in 0..<channels { output[frame * channels + channel] *= g }
      }
    }
    if missing > 0 { missingFrames.wrappingIncrement(by: missing, ordering: .relaxed) }

    if frozen {
      // What is heard moves on; the clips do not: the chains' latency shrinks.
      freezeRemaining -= n
      effectsLatency -= n
      if freezeRemaining == 0 { freeze = .none }
    } else {
      position += Int64(n)
      mixClock += Int64(n)
    }
    clock += Int64(n)
    remainingAfterSegment = frames - n
    if fading.bits != 0 && mixClock >= crossfadeStart + crossfadeFrames {
      retire(fading.bits)
      fading = PlanHandle(bits: 0, view: empty)
    }
    switch declick {
    case .fadingIn:
      declickLevel += Int64(n)
      if declickLevel >= declickFrames {
        declickLevel = declickFrames
        declick = .none
      }
    case .fadingOut:
      declickLevel -= Int64(n)
      if declickLevel <= 0 { finishFadeOut() }
    case .none:
      break
    }
    return true
  }

  /// Takes the next step of a change of the chains (see
  /// ``Mixing/EffectKernel/nextLiveStep(_:latency:maximumFrames:)``): an effect that has
  /// warmed up takes its latency in (the chains fed ahead at once: ``position`` and
  /// ``effectsLatency`` grow together, so what is heard goes on), or one that has left gives it
  /// back, or the graph gives back latency no chain needs (a hold of the clips begins: what is
  /// heard goes on while ``position`` waits).
  @_noLocks
  @inlinable
  mutating func takeEffectsStep() {
    guard let graph = current.view.graph else { return }
    let (latency, maximum) = (effectsLatency, maximumFrames)
    var step = LiveStep.none
    _unsafePerformance {
      step = EffectKernel.nextLiveStep(graph.pointee, latency: latency, maximumFrames: maximum)
    }
    switch step.kind {
    case .none:
      break
    case .absorb:
      feedChains(step.frames, step: step)
      effectsLatency += step.frames
    case .drain:
      if step.slack > 0 {
        feedChains(
          step.slack, step: LiveStep(kind: .drain, chain: 0, slot: 0, frames: step.slack, slack: 0))
        effectsLatency += step.slack
      }
      freeze = step
      freezeRemaining = step.frames
    case .shrink:
      freeze = step
      freezeRemaining = step.frames
    }
  }

  /// Feeds the chains `frames` frames of the clips from ``position``, unheard (see
  /// ``Mixing/EffectKernel/feed(_:from:frames:maximumFrames:clock:scratch:step:rampFrames:latency:)``).
  @_noLocks
  @inlinable
  mutating func feedChains(_ frames: Int, step: LiveStep) {
    let (view, from, clock, buffer) = (current.view, position, mixClock, feedBuffer)
    let (maximum, ramp, latency) = (maximumFrames, Int(rampFrames), effectsLatency)
    var missing = 0
    _unsafePerformance {
      missing = EffectKernel.feed(
        view, from: from, frames: frames, maximumFrames: maximum, clock: clock,
        scratch: buffer, step: step, rampFrames: ramp, latency: latency)
    }
    if missing > 0 { missingFrames.wrappingIncrement(by: missing, ordering: .relaxed) }
    position += Int64(frames)
    mixClock += Int64(frames)
  }

  /// Starts the chains afresh where the play goes on from a jump (the first plan, a seek, a
  /// loop wrap): entries and exits of effects end at once, and the chains are to be fed
  /// ahead by their latency before the next frame heard (``preroll``).
  @_noLocks
  @inlinable
  mutating func restartEffects() {
    freeze = .none
    freezeRemaining = 0
    guard current.bits != 0, let graph = current.view.graph else {
      effectsLatency = 0
      preroll = 0
      return
    }
    var latency = 0
    _unsafePerformance { latency = EffectKernel.restart(graph.pointee) }
    effectsLatency = latency
    preroll = Int64(latency)
  }

  /// Feeds the chains the ``preroll`` (unheard), once there is something to play.
  @_noLocks
  @inlinable
  mutating func runPreroll() {
    guard current.bits != 0, !paused, !finished else { return }
    guard current.view.graph != nil else {
      preroll = 0
      return
    }
    let frames = Int(preroll)
    preroll = 0
    feedChains(frames, step: .none)
  }

  /// Tells the other threads where the play is.
  @_noLocks
  @inlinable
  func publishStatus() {
    publishedPosition.store(heardPosition, ordering: .relaxed)
    publishedClock.store(clock, ordering: .relaxed)
    publishedVersion.store(current.bits == 0 ? .min : current.view.version, ordering: .relaxed)
    publishedFlags.store(
      (paused ? 1 : 0) | (finished ? 2 : 0) | (loop ? 4 : 0), ordering: .releasing)
    // After the position: a reader that sees the seek landed sees where.
    publishedSeek.store(pendingSeek, ordering: .releasing)
  }
}

extension EngineState {
  /// ``LiveMixer/isReady(_:frames:)``, callable where a class's metadata may not be touched
  /// (a `@_noLocks` function of another module).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inlinable
  public static func isReady(_ engine: UnsafeMutablePointer<EngineState>, frames: Int) -> Bool {
    engine.pointee.takeCommands()
    engine.pointee.pickUpPlan()
    let state = engine.pointee
    guard state.current.bits != 0, !state.paused, !state.finished else { return true }
    let end = state.playableEnd
    let here = Int(max(0, min(Int64(frames), end - state.position)))
    var ready = RenderKernel.isResident(state.current.view, from: state.position, frames: here)
    if state.fading.bits != 0 {
      ready =
        ready && RenderKernel.isResident(state.fading.view, from: state.position, frames: here)
    }
    if state.loop && here < frames {
      ready =
        ready
        && RenderKernel.isResident(
          state.current.view, from: state.rangeStart, frames: frames - here)
    }
    return ready
  }
}
