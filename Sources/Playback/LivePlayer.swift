import Foundation
public import Mixing
import Synchronization
public import Timeline

/// Plays a project through ALSA while it changes: every snapshot offered (an edit, an undo, a
/// checkout, from this process or another) is compiled and swapped in on the audio thread
/// without a click (see ``/Mixing/LiveMixer``).
///
/// Three threads besides the caller's:
/// - the **device thread** (SCHED_FIFO when permitted, its stack locked): renders a period with
///   ``/Mixing/LiveMixer/render(_:frames:into:)`` (no allocation, lock, reference counting or
///   I/O: compiler-checked) and hands it to the device with the one blocking call,
///   `snd_pcm_writei`. Underruns are recovered and counted; a device that goes away ends the
///   play with an error;
/// - the **planner**: compiles the newest snapshot offered (a burst of commits compiles once),
///   reads in the audio the playhead is about to need, and only then publishes the plan (until
///   then the old plan plays on); it releases the plans the audio thread hands back;
/// - the **loader**: keeps the decoded audio around the playhead (and the loop's start) in
///   memory, reading chunks ahead of it and letting go of those behind, so the audio thread
///   never waits for a disk and takes no page fault. A chunk it lets go of is freed only once
///   the audio thread has finished the period in which it may have read it.
///
/// The engine takes any snapshot, not only the head's (`tape scrub` plays the version on its
/// screen through ``offer(_:version:cause:)``).
///
/// ```swift
/// let player = try LivePlayer(configuration, compile: compile, load: load)
/// try player.start(project, version: 12)
/// player.offer(nextProject, version: 13, cause: "edit")
/// let report = player.wait()
/// ```
public final class LivePlayer: @unchecked Sendable {
  /// Compiles a snapshot into a plan over decoded audio (every call must use the same
  /// ``/Mixing/SourceAudio`` objects for the same source, so that plans can share memory and
  /// gains can ramp between them).
  ///
  /// The plan must carry `version` and `sequence` (see ``/Mixing/RenderPlan``).
  public typealias Compile =
    @Sendable (Project, _ version: Int64, _ sequence: Int64) throws ->
    RenderPlan
  /// Reads chunk `index` of a source's decoded audio into memory.
  public typealias Load = @Sendable (SourceAudio, Int) throws -> Void

  public struct Configuration: Sendable {
    public var device: DeviceRequest
    public var sampleRate: Int
    public var channels: Int
    /// Timeline frames to play; an upper bound of `Int64.max` follows the project's end.
    public var range: Range<Int64>
    public var loop: Bool
    /// Whether a play to the project's end (not looping) goes on while its effects ring out:
    /// until the output stays under −90 dBFS for a second, at most 30 s, as a render's tail
    /// (see ``/Mixing/LiveMixer/ringOut(quiet:limit:threshold:)``).
    public var ringsOut: Bool

    public init(
      device: DeviceRequest, sampleRate: Int, channels: Int, range: Range<Int64>, loop: Bool,
      ringsOut: Bool = false
    ) {
      self.device = device
      self.sampleRate = sampleRate
      self.channels = channels
      self.range = range
      self.loop = loop
      self.ringsOut = ringsOut
    }
  }

  /// What happened during a play.
  public struct Report: Sendable {
    public var frames: Int64
    /// Dropouts the device played: ``recoveredXruns`` + ``unreportedXruns``.
    public var xruns: Int
    /// Underruns ALSA reported (`-EPIPE`, `-ESTRPIPE`), recovered from.
    public var recoveredXruns: Int
    /// Dropouts ALSA did not report, found around a write: the device's buffer run past
    /// empty, the device thread late by more than the buffer and a period, or the process
    /// stopped (SIGSTOP) while the device was open (see `DropoutWatch`).
    public var unreportedXruns: Int
    /// In frames at ``deviceRate``.
    public var period: Int
    public var bufferFrames: Int
    /// The device's rate: the project's, or the one Tape converted to (``conversion``).
    public var deviceRate: Int
    public var conversion: RateConversion?
    /// Frames handed to the device for the play, at ``deviceRate``.
    public var deviceFrames: Int64
    /// Times the device was closed for a stop (Ctrl-Z) and opened again.
    public var suspensions: Int
    public var viaPlug: Bool
    public var realtimePriority: Bool
    /// Each swap, its cause (nil when not known: the first plan, an offer without one), and
    /// when the device thread rendered its first frame (CLOCK_MONOTONIC nanoseconds, the
    /// clock every process shares, to measure how soon a commit is heard).
    public var swaps: [(event: SwapEvent, cause: String?, renderedAt: UInt64)]
    public var missingFrames: Int
    /// The audio thread's page faults over the play: major ones read a disk.
    public var majorPageFaults: Int
    public var minorPageFaults: Int
    /// The most and the mean of a period's render time, as a share of the period.
    public var peakLoad: Double
    public var meanLoad: Double
    /// Samples played past full scale (magnitude over 1): a device that takes integers clips
    /// them, as `tape render` would.
    public var overs: Int
    /// Why the play ended early, when it did.
    public var failure: PlaybackError?
  }

  public let configuration: Configuration
  public let mixer: LiveMixer
  /// Replaced only while the device thread is parked (``suspend()``, ``resume()``).
  private var output: ALSAOutput
  /// The converter to the device's rate, when it does not take the project's, and the mixer's
  /// frames on their way into it.
  private let converter: RateConverter?
  private let staging: UnsafeMutablePointer<Float>?
  /// The most project frames one call of the mixer renders: the device's period, or, when
  /// Tape converts, the most project frames one device period reads (the effects' block).
  public let mixFrames: Int
  private let compile: Compile
  private let load: Load
  /// Seconds of audio kept in memory ahead of the playhead.
  static let lookahead = 3.0

  private struct Shared {
    var offer: (project: Project, version: Int64, cause: String?)?
    /// The cause of each plan compiled, by its sequence number.
    var causes: [Int64: String] = [:]
    var sequence: Int64 = 0
    /// Every plan that can sound: the one being published (from before its audio is read),
    /// the one in the mixer's inbox, the current one and the one fading out. A plan leaves
    /// only when the mixer says it never will sound again (replaced in the inbox unheard, or
    /// retired by the audio thread). Eviction reads it under the lock, where it decides.
    var live: [RenderPlan] = []
    /// Every source a live plan has read (kept after the plan goes, until the loader has let
    /// go of all of its chunks): what eviction looks through.
    var sources: [ObjectIdentifier: SourceAudio] = [:]
    /// The snapshot of the newest plan published (what is heard, or about to be).
    var published: (version: Int64, project: Project)?
    var messages: [String] = []
    var toldLockFailed = false
    /// The sources with a chunk that could not be read, each reported once.
    var reported: Set<ObjectIdentifier> = []
    var stopping = false
    /// Why the device could not be opened again after a stop (the play then ends).
    var resumeFailure: PlaybackError?
    var seek: Int64?
    /// Chunks let go of, by address, and the audio thread's period count read after they were
    /// detached: freed once two more periods have ended (see ``Mixing/LiveMixer/periodsEnded``).
    var pending: [(audio: SourceAudio, chunk: Int, periods: Int)] = []
  }

  private let shared = Mutex(Shared())
  private let wake = DispatchSemaphore(value: 0)
  /// Posted by the audio thread too (when it waits for audio), so not a `DispatchSemaphore`.
  private let loaderWake = Wakeup()
  /// The period the device thread renders into, and when each swap's first frame was
  /// rendered: allocated, written and locked before it starts.
  private let deviceBuffer: UnsafeMutablePointer<Float>
  private let swapTimesBuffer: UnsafeMutablePointer<UInt64>
  private let xruns = Atomic<Int>(0)
  private let recoveredXruns = Atomic<Int>(0)
  private let unreportedXruns = Atomic<Int>(0)
  private let deviceRunning = Atomic<Bool>(false)
  /// Job control: the device thread parks (``suspend()``) while this is set.
  private let parkRequested = Atomic<Bool>(false)
  /// Posted by the device thread once parked; the parked thread waits on ``unparked``.
  private let parkedSignal = DispatchSemaphore(value: 0)
  private let unparked = Wakeup()
  /// Whether the device is closed for a stop; the pause the user asked for meanwhile.
  private let suspended = Atomic<Bool>(false)
  private let userPaused = Atomic<Bool>(false)
  private var suspensions = 0
  private let finished = DispatchSemaphore(value: 0)
  private let helpersDone = DispatchGroup()
  private var deviceThread: pthread_t?
  /// When each swap's first frame was rendered (written by the device thread, read after it).
  private var swapTimes: [UInt64] = []
  private var report: Report?
  /// The device thread's own numbers (written by it, read after it finished).
  private var deviceNumbers = (
    failure: PlaybackError?.none, major: 0, minor: 0, peak: 0.0, total: 0.0, periods: 0,
    deviceFrames: Int64(0)
  )
  public private(set) var realtimePriority = false

  /// Points where a test runs another thread's step (a loader pass, a period of the audio
  /// thread) in the middle of one, to check an interleaving the scheduler rarely picks. Nil in
  /// a play; set only before the threads start or when they are driven by hand.
  struct Hooks {
    /// The planner, once the new plan's audio is read, just before it publishes the plan.
    var plannerBeforePublish: (() -> Void)?
    /// The loader, once it decided what to let go of, just before it detaches it (under the
    /// player's lock: it must not call into the player).
    var loaderBeforeDetach: (() -> Void)?
    /// Locks memory in place of `mlock`: 0, or an error number.
    var lockMemory: ((UnsafeRawPointer, Int) -> Int32)?
    /// Starts the device thread in place of ``RealtimeThread/start(_:)``.
    var startDeviceThread: ((@escaping @Sendable () -> Void) -> (pthread_t, realtime: Bool)?)?
  }
  var hooks = Hooks()

  /// Asked by the planner when no new snapshot waits: whether compiling the snapshot playing
  /// again would give another plan (effects that have left their chains, now the identity,
  /// to let go of). Then it does, and swaps it in (cause `refresh`). Set before
  /// ``start(_:version:cause:)``.
  public var refresh: (@Sendable () -> Bool)?

  /// Where the play was heard, and when, after each write (see ``StreamClock``): what a
  /// recording made while it plays is aligned by. Set before ``start(_:version:cause:)``.
  ///
  /// A loop's passes are laid out end to end: after the play wraps k times, a frame `p` of the
  /// range is logged as `p + k × length`, so positions only grow, as the capture's frames do.
  /// Why here: the device thread logs every write, so it sees every wrap; the clock keeps only
  /// its latest looks, and a reader unwrapping them would miss the passes before the first it
  /// holds (a take of a loop longer than the clock's reach landed passes off).
  public var clock: StreamClock?

  /// A recorder's input mixed into the play (software monitoring while overdubbing; see
  /// ``Monitor/init(mixingInto:sampleRate:channels:inputChannels:)``). Set before ``start``.
  var monitorFeed: MonitorFeed?

  /// Opens the device (the period and buffer exactly as asked, see ``DeviceRequest``).
  public init(
    _ configuration: Configuration, compile: @escaping Compile, load: @escaping Load
  ) throws(PlaybackError) {
    self.configuration = configuration
    self.compile = compile
    self.load = load
    output = try ALSAOutput(
      request: configuration.device, sampleRate: configuration.sampleRate,
      channels: configuration.channels)
    let channels = configuration.channels
    if output.rate != configuration.sampleRate,
      let design = RateConversion(from: configuration.sampleRate, to: output.rate)
    {
      mixFrames = design.inputFrames(forOutputs: output.period)
      // The first period reads half the filter's taps ahead of it too.
      converter = RateConverter(
        design, channels: channels, maximumInput: mixFrames + design.taps / 2 + 1)
      let staging = UnsafeMutablePointer<Float>.allocate(capacity: mixFrames * channels)
      staging.initialize(repeating: 0, count: mixFrames * channels)
      self.staging = staging
    } else {
      mixFrames = output.period
      converter = nil
      staging = nil
    }
    deviceBuffer = .allocate(capacity: output.period * channels)
    deviceBuffer.initialize(repeating: 0, count: output.period * channels)
    swapTimesBuffer = .allocate(capacity: LiveMixer.swapLogCapacity)
    swapTimesBuffer.initialize(repeating: 0, count: LiveMixer.swapLogCapacity)
    mixer = LiveMixer(
      channels: configuration.channels, maximumFrames: mixFrames,
      range: configuration.range, loop: configuration.loop,
      rampFrames: Int64(configuration.sampleRate / 50),
      crossfadeFrames: LiveMixer.transitionFrames(sampleRate: configuration.sampleRate),
      declickFrames: LiveMixer.transitionFrames(sampleRate: configuration.sampleRate))
    if configuration.ringsOut {
      mixer.ringOut(
        quiet: Int64(configuration.sampleRate), limit: Int64(configuration.sampleRate) * 30,
        threshold: Float(pow(10, -90.0 / 20)))
    }
  }

  deinit {
    deviceBuffer.deallocate()
    swapTimesBuffer.deallocate()
    staging?.deallocate()
  }

  /// Whether `device` opens for `channels` of float32 at `sampleRate` (the error if not).
  public static func check(
    device: String, sampleRate: Int, channels: Int
  ) -> PlaybackError? {
    do {
      _ = try ALSAOutput(
        request: DeviceRequest(name: device), sampleRate: sampleRate, channels: channels)
      return nil
    } catch {
      return error
    }
  }

  /// The period and buffer the device granted (frames at ``deviceRate``), and whether it
  /// converts the format or channels through `plug`.
  public var granted: (period: Int, bufferFrames: Int, viaPlug: Bool) {
    (output.period, output.bufferFrames, output.viaPlug)
  }

  /// The device's sample rate: the project's, or the one Tape converts to.
  public var deviceRate: Int { output.rate }

  /// How Tape converts the project's rate to the device's; nil when the device takes it.
  public var conversion: RateConversion? { converter?.design }

  // MARK: Control (any thread)

  /// Compiles `project` (at `version`, caused by `cause`) and plays it from the playhead, with
  /// the device starting at once. Throws when the first plan cannot be compiled or its audio
  /// read.
  public func start(_ project: Project, version: Int64, cause: String? = nil) throws {
    try prime(project, version: version, cause: cause)
    helpersDone.enter()
    Thread.detachNewThread { [self] in
      runPlanner()
      helpersDone.leave()
    }
    helpersDone.enter()
    Thread.detachNewThread { [self] in
      runLoader()
      helpersDone.leave()
    }
    deviceRunning.store(true, ordering: .releasing)
    let startThread = hooks.startDeviceThread ?? RealtimeThread.start
    guard
      let (thread, realtime) = startThread({ [self] in
        runDevice()
        deviceRunning.store(false, ordering: .releasing)
        finished.signal()
      })
    else {
      // The planner and the loader stop too: nothing is left running.
      deviceRunning.store(false, ordering: .releasing)
      shared.withLock { $0.stopping = true }
      wake.signal()
      loaderWake.signal()
      helpersDone.wait()
      forget(mixer.collectRetired())
      throw PlaybackError.cannotOpen(device: output.name, reason: "no thread for the device")
    }
    deviceThread = thread
    realtimePriority = realtime
  }

  /// What ``start(_:version:cause:)`` does before any thread starts: the first plan compiled,
  /// its audio read, and published. (Tests call it, then drive the threads' passes by hand.)
  func prime(_ project: Project, version: Int64, cause: String? = nil) throws {
    let plan = try compile(project, version, 0)
    RealtimeThread.lockCode()
    try loadAroundOrThrow(
      [plan], position: configuration.range.lowerBound, loop: configuration.loop)
    // Everything the audio thread will touch, the first plan too.
    let channels = configuration.channels
    for (address, bytes) in plan.memoryRegions + mixer.memoryRegions
      + (converter?.memoryRegions ?? []) + [
        (UnsafeRawPointer(deviceBuffer), output.period * channels * 4),
        (UnsafeRawPointer(swapTimesBuffer), LiveMixer.swapLogCapacity * 8),
      ] + (staging.map { [(UnsafeRawPointer($0), mixFrames * channels * 4)] } ?? [])
    {
      lock(address, bytes)
    }
    mixer.publish(plan)
    shared.withLock {
      $0.live = [plan]
      for source in plan.sources { $0.sources[ObjectIdentifier(source)] = source }
      $0.published = (version, project)
      if let cause { $0.causes[0] = cause }
    }
  }

  /// Offers a new snapshot; the planner compiles the newest one offered.
  public func offer(_ project: Project, version: Int64, cause: String?) {
    shared.withLock { $0.offer = (project, version, cause) }
    wake.signal()
  }

  /// Pauses (fading out) or resumes (fading in); during a stop (``suspend()``), what
  /// ``resume()`` brings back.
  public func setPaused(_ paused: Bool) {
    userPaused.store(paused, ordering: .relaxed)
    if !suspended.load(ordering: .relaxed) { mixer.setPaused(paused) }
  }

  /// Moves the playhead (clamped to the range), once the audio there is in memory.
  public func seek(to frame: Int64) {
    let end = mixer.status.version == nil ? frame : min(frame, currentEnd - 1)
    shared.withLock { $0.seek = max(configuration.range.lowerBound, end) }
    loaderWake.signal()
  }

  /// Where the playhead is going: the target of a seek asked for and not landed yet, or
  /// where it plays. (Seeks from the keys step from here, so two quick ones add up.)
  public var destination: Int64 {
    let asked = shared.withLock { $0.seek }
    let status = mixer.status
    return asked ?? status.seekTarget ?? status.position
  }

  public func setLoop(_ loop: Bool) {
    mixer.setLoop(loop)
    loaderWake.signal()
  }

  /// Ends the play: it fades out over 5.3 ms (see ``/Mixing/LiveMixer/stop()``), and what the
  /// device holds plays out before it closes (a quit is heard within a buffer, and never ends
  /// on a sample at full level).
  public func stop() {
    shared.withLock { $0.stopping = true }
    mixer.stop()
  }

  public var status: LiveMixer.Status { mixer.status }

  /// Whether the device thread still plays (false once the range was played, after ``stop()``
  /// or a device failure).
  public var isPlaying: Bool { deviceRunning.load(ordering: .acquiring) }
  /// Dropouts the device played so far (see ``Report/xruns``).
  public var underruns: Int { xruns.load(ordering: .relaxed) }

  /// Whether the planner or the loader thread still runs.
  var helpersRunning: Bool { helpersDone.wait(timeout: .now()) == .timedOut }

  /// The most a period's mix took over the last second, as a share of the period (0…1).
  public var mixLoad: Double { mixLoadNow.load(ordering: .relaxed) }
  /// The device thread's CPU time over the last second, as a share of that second (0…1): the
  /// mix and the PCM write's own work (the plug layer's conversions), not its waits for the
  /// device or the loader.
  public var threadLoad: Double { threadLoadNow.load(ordering: .relaxed) }
  /// Samples played past full scale so far (see ``Report/overs``).
  public var overs: Int { oversNow.load(ordering: .relaxed) }
  private let mixLoadNow = Atomic<Double>(0)
  private let threadLoadNow = Atomic<Double>(0)
  private let oversNow = Atomic<Int>(0)

  /// Messages for the user since the last call (a source that went missing, say).
  public func takeMessages() -> [String] {
    shared.withLock { state in
      defer { state.messages.removeAll() }
      return state.messages
    }
  }

  /// Waits for the play to end (its range played, ``stop()``, or a device failure) and
  /// returns what happened.
  public func wait() -> Report {
    if let report { return report }
    finished.wait()
    if let deviceThread { pthread_join(deviceThread, nil) }
    shared.withLock { $0.stopping = true }
    wake.signal()
    loaderWake.signal()
    helpersDone.wait()
    forget(mixer.collectRetired())
    let pending = shared.withLock { state in
      defer { state.pending.removeAll() }
      return state.pending
    }
    for (audio, chunk, _) in pending {
      if let memory = UnsafeMutablePointer<Float>(bitPattern: chunk) { audio.release(memory) }
    }
    let causes = shared.withLock { $0.causes }
    let status = mixer.status
    let numbers = deviceNumbers
    let made = Report(
      frames: status.clock, xruns: xruns.load(ordering: .relaxed),
      recoveredXruns: recoveredXruns.load(ordering: .relaxed),
      unreportedXruns: unreportedXruns.load(ordering: .relaxed), period: output.period,
      bufferFrames: output.bufferFrames, deviceRate: output.rate, conversion: conversion,
      deviceFrames: numbers.deviceFrames, suspensions: suspensions, viaPlug: output.viaPlug,
      realtimePriority: realtimePriority,
      swaps: mixer.swaps.enumerated().map { index, event in
        (event, causes[event.sequence], index < swapTimes.count ? swapTimes[index] : 0)
      }, missingFrames: status.missingFrames,
      majorPageFaults: numbers.major, minorPageFaults: numbers.minor, peakLoad: numbers.peak,
      meanLoad: numbers.periods > 0 ? numbers.total / Double(numbers.periods) : 0,
      overs: overs, failure: numbers.failure)
    report = made
    return made
  }

  // MARK: Job control

  /// Counts a SIGCONT: the process was stopped and continued. A player whose device was open
  /// meanwhile (a stop it did not see coming: SIGSTOP) counts it as a dropout, since its
  /// JACK client stopped with it (see `DropoutWatch`). Call it from a SIGCONT handler:
  /// async-signal-safe (one atomic add), once ``continuations`` has been read (which makes
  /// the counter).
  public static func noteContinued() {
    continued.add(1, ordering: .relaxed)
  }

  /// SIGCONTs counted so far (``noteContinued()``).
  public static var continuations: Int { continued.load(ordering: .relaxed) }
  private static let continued = Atomic<Int>(0)

  /// A stop (Ctrl-Z, SIGTSTP): fades out (the pause's 5.3 ms), lets the device play what it
  /// holds, and closes it, so that a stopped process holds no device (a JACK client leaves
  /// the graph, instead of stalling it until `fg`). Returns once it is closed; false when
  /// there was nothing to close (the play had ended, or the device stopped taking audio).
  /// ``resume()`` opens it again; call both from one thread.
  public func suspend() -> Bool {
    guard isPlaying, !suspended.load(ordering: .relaxed) else { return false }
    suspended.store(true, ordering: .relaxed)
    mixer.setPaused(true)
    let patience =
      Double(output.bufferFrames) / Double(output.rate) + Double(ALSAOutput.stallMilliseconds)
      / 1_000
    let deadline = Date().addingTimeInterval(patience)
    func waitFor(_ done: () -> Bool) -> Bool {
      while !done() {
        guard isPlaying, Date() < deadline else { return false }
        usleep(1_000)
      }
      return true
    }
    // The fade-out rendered, then the periods that render the input the converter reads
    // ahead of it (half its taps).
    let tail = 1 + (converter.map { $0.design.taps / 2 / max(1, mixFrames - 2) + 1 } ?? 0)
    var ended = mixer.periodsEnded
    var parked =
      waitFor { mixer.status.paused }
      && {
        ended = mixer.periodsEnded
        return waitFor { mixer.periodsEnded >= ended + tail }
      }()
    if parked {
      parkRequested.store(true, ordering: .releasing)
      parked = waitFor { parkedSignal.wait(timeout: .now() + .milliseconds(5)) == .success }
    }
    guard parked else {
      parkRequested.store(false, ordering: .releasing)
      suspended.store(false, ordering: .relaxed)
      mixer.setPaused(userPaused.load(ordering: .relaxed))
      return false
    }
    output.close()
    suspensions += 1
    return true
  }

  /// After ``suspend()`` (SIGCONT, `fg`): opens the device again with the same rate, period
  /// and buffer, and plays on from where the fade-out ended (fading in, unless paused). A
  /// device that does not open again, or not as it was, ends the play (its report's
  /// ``Report/failure`` says why).
  public func resume() {
    guard suspended.load(ordering: .relaxed) else { return }
    var request = DeviceRequest(name: configuration.device.name, period: output.period)
    request.bufferFrames = output.bufferFrames
    do throws(PlaybackError) {
      let reopened = try ALSAOutput(
        request: request, sampleRate: configuration.sampleRate, channels: configuration.channels)
      guard reopened.rate == output.rate, reopened.period == output.period,
        reopened.bufferFrames == output.bufferFrames
      else {
        throw PlaybackError.reopenFailed(
          device: output.name,
          reason:
            "it came back at \(reopened.rate) Hz with periods of \(reopened.period) frames and a buffer of \(reopened.bufferFrames), not \(output.rate) Hz, \(output.period) and \(output.bufferFrames)"
        )
      }
      output = reopened
      // Code the device's client may have loaded again (see ``RealtimeThread/lockCode()``).
      RealtimeThread.lockCode()
      suspended.store(false, ordering: .relaxed)
      mixer.setPaused(userPaused.load(ordering: .relaxed))
    } catch {
      let failure: PlaybackError =
        switch error {
        case .reopenFailed: error
        case .cannotOpen(_, let reason), .deviceGone(_, let reason), .write(_, let reason):
          .reopenFailed(device: output.name, reason: reason)
        case .cannotConfigure(_, let what, let reason):
          .reopenFailed(device: output.name, reason: "it does not take \(what) now: \(reason)")
        case .periodRefused(_, let period, _):
          .reopenFailed(device: output.name, reason: "it does not take a period of \(period) now")
        case .badPeriod, .badPeriods, .cannotOpenInput, .inputRefused, .inputGone,
          .calibrationFailed, .latencyStore:
          error
        }
      shared.withLock {
        $0.stopping = true
        $0.resumeFailure = failure
      }
      mixer.stop()
      suspended.store(false, ordering: .relaxed)
    }
    parkRequested.store(false, ordering: .releasing)
    unparked.signal()
  }

  // MARK: The device thread

  /// The device thread. Everything in its loop but the PCM's calls is compiler-checked for
  /// locks (``RealtimeThread/waitUntilReady(_:frames:patience:loader:)``,
  /// ``DeviceFeed/render(_:frames:into:)``, ``DropoutWatch``, ``DeviceMeter``), and reads and
  /// writes only memory written and locked before it started (its stack aside, locked as it
  /// starts).
  private func runDevice() {
    let period = output.period
    let bufferFrames = output.bufferFrames
    let rate = output.rate
    let channels = configuration.channels
    let buffer = deviceBuffer
    let stack = RealtimeThread.lockStack()
    if stack != 0 { tellLockFailed(stack) }
    let engine = mixer.engine
    var pcm = output.device
    let loader = loaderWake.handle
    var feed = DeviceFeed(mixFrames: mixFrames)
    if let converter, let staging {
      feed = DeviceFeed(mixFrames: mixFrames, staging: staging, converter: converter.start())
    }
    var watch = DropoutWatch(
      bufferFrames: bufferFrames, period: period, rate: rate, continued: Self.continuations)
    var meter = DeviceMeter(
      periodNanoseconds: Double(period) * 1e9 / Double(rate),
      periodsPerWindow: max(1, rate / period),
      times: swapTimesBuffer, capacity: LiveMixer.swapLogCapacity)
    meter.begin(at: RealtimeThread.now(), cpu: RealtimeThread.threadCPUTime())
    let faultsBefore = RealtimeThread.pageFaults()
    var failure: PlaybackError?
    // What ended the loop, as plain values: the error (its message a String) is built after
    // `hooks.end`, off the realtime path, as the recorder's loop does.
    var failedCode: Int32?
    var stalled = false
    var deviceFrames: Int64 = 0
    let clock = self.clock?.writer
    // The clock's passes laid out (see ``clock``).
    var clockLayout = LoopLayout(
      length: configuration.range.upperBound - configuration.range.lowerBound)
    let monitorFeed = self.monitorFeed
    let hooks = RealtimeThread.audioThreadHooks()
    hooks.begin?()
    var loaderWait = LoaderWait(
      patience: UInt64(Double(bufferFrames) * 5e8 / Double(rate)),
      restPeriods: bufferFrames / period)
    while true {
      if parkRequested.load(ordering: .acquiring) {
        hooks.end?()
        guard let reopened = park(pcm, buffer: buffer, period: period) else {
          failure = shared.withLock { $0.resumeFailure } ?? output.stalled
          break
        }
        pcm = reopened
        watch.restart(continued: Self.continuations)
        meter.begin(at: RealtimeThread.now(), cpu: RealtimeThread.threadCPUTime())
        hooks.begin?()
        continue
      }
      if loaderWait.mayWait()
        && !RealtimeThread.waitUntilReady(
          engine, frames: feed.inputNeeded(for: period), patience: loaderWait.patience,
          loader: loader)
      {
        loaderWait.ranOut()
      }
      let start = RealtimeThread.now()
      let played = feed.render(engine, frames: period, into: buffer)
      if let monitorFeed, played > 0 { monitorFeed.mix(into: buffer, frames: played) }
      meter.rendered(
        start: start, end: RealtimeThread.now(), swaps: LiveMixer.swapCount(engine),
        samples: buffer, count: played * channels)
      mixLoadNow.store(meter.windowMixLoad, ordering: .relaxed)
      threadLoadNow.store(meter.windowThreadLoad, ordering: .relaxed)
      oversNow.store(meter.overs, ordering: .relaxed)
      if played > 0 {
        let dropouts = watch.dropouts
        var reported = false
        switch ALSAOutput.write(pcm, buffer, frames: played, watch: &watch) {
        case .written: break
        case .recoveredXrun:
          reported = true
          recoveredXruns.add(1, ordering: .relaxed)
          xruns.add(1, ordering: .relaxed)
        case .failed(let code): failedCode = code
        case .stalled: stalled = true
        }
        // One per write: a dropout ALSA reported is not counted again.
        if watch.dropouts > dropouts && !reported {
          unreportedXruns.add(1, ordering: .relaxed)
          xruns.add(1, ordering: .relaxed)
        }
        deviceFrames += Int64(played)
        if let clock {
          // Timeline frames: the device's queued frames (its rate) and what a converter holds
          // are taken back to the project's.
          let delay = ALSAOutput.delay(pcm)
          clock.log(
            time: RealtimeThread.now(),
            position: clockLayout.laidOut(
              LiveMixer.position(engine) - feed.framesAhead(deviceDelay: delay)),
            delay: delay)
        }
      }
      if failedCode != nil || stalled || played < period { break }
    }
    hooks.end?()
    if let failedCode { failure = output.failure(failedCode) }
    if stalled { failure = output.stalled }
    let faultsAfter = RealtimeThread.pageFaults()
    if failure == nil {
      // A buffer of silence after the last frame (the end of the range, or a quit's fade-out),
      // then drain: a device that keeps playing its last buffer while it stops (ALSA's JACK
      // plugin does, under load) repeats silence, not the end of the song; dropping what it
      // holds would cut the fade-out off, on a sample at full level.
      // A device that stalls meanwhile is dropped, not drained (bounded either way).
      if writeSilence(pcm, buffer: buffer, period: period) {
        _ = output.drain(sampleRate: rate)
      } else {
        output.drop()
      }
    }
    swapTimes = Array(UnsafeBufferPointer(start: swapTimesBuffer, count: meter.swapsSeen))
    deviceNumbers = (
      failure, faultsAfter.major - faultsBefore.major, faultsAfter.minor - faultsBefore.minor,
      meter.peak, meter.total, meter.periods, deviceFrames
    )
  }

  /// A buffer's worth of silence, period by period; false when the device stopped taking it.
  private func writeSilence(
    _ pcm: ALSAOutput.PCM, buffer: UnsafeMutablePointer<Float>, period: Int
  ) -> Bool {
    buffer.update(repeating: 0, count: period * configuration.channels)
    // Not the play's dropouts.
    var watch = DropoutWatch(
      bufferFrames: output.bufferFrames, period: period, rate: output.rate,
      continued: Self.continuations)
    for _ in 0..<max(1, output.bufferFrames / period) {
      guard case .written = ALSAOutput.write(pcm, buffer, frames: period, watch: &watch) else {
        return false
      }
    }
    return true
  }

  /// The device thread's part of a stop: a buffer of silence behind the fade-out (so that a
  /// device that plays on from its ring, as ALSA's JACK plugin does, repeats silence; and
  /// once it is written, the fade-out has been heard), then it waits, outside the realtime
  /// part, while ``suspend()`` closes the device and ``resume()`` opens it again. Returns the
  /// device to play on; nil when the play is to end instead.
  private func park(
    _ pcm: ALSAOutput.PCM, buffer: UnsafeMutablePointer<Float>, period: Int
  ) -> ALSAOutput.PCM? {
    guard writeSilence(pcm, buffer: buffer, period: period) else { return nil }
    parkedSignal.signal()
    while parkRequested.load(ordering: .acquiring) { unparked.wait(milliseconds: 100) }
    if shared.withLock({ $0.resumeFailure != nil }) { return nil }
    return output.device
  }

  // MARK: The planner

  private func runPlanner() {
    while true {
      _ = wake.wait(timeout: .now() + .milliseconds(20))
      if !plannerPass() { return }
    }
  }

  /// One look of the planner: releases the plans the audio thread handed back, and compiles,
  /// loads and publishes the newest snapshot offered, if any. False once the play is stopping.
  func plannerPass() -> Bool {
    forget(mixer.collectRetired())
    let (offer, stopping, sequence) = shared.withLock { state in
      defer { state.offer = nil }
      if state.offer != nil { state.sequence += 1 }
      return (state.offer, state.stopping, state.sequence)
    }
    if stopping { return false }
    guard let offer else {
      guard refresh?() == true, let published = shared.withLock({ $0.published }) else {
        return true
      }
      let next = shared.withLock { state in
        state.sequence += 1
        return state.sequence
      }
      publish((published.project, published.version, "refresh"), sequence: next)
      return true
    }
    // The snapshot heard (or about to be) again, from a repeated checkout or an edit and its
    // undo within one look: nothing changes, so there is no swap to make or to report. (The
    // same version number is not enough: a coalesced commit rewrites its version in place.)
    let published = shared.withLock { $0.published }
    if let published, published.version == offer.version, published.project == offer.project {
      return true
    }
    publish(offer, sequence: sequence)
    return true
  }

  /// Compiles `offer` as plan `sequence`, reads its audio, and publishes it; a failure is a
  /// message, and the plan playing goes on.
  private func publish(
    _ offer: (project: Project, version: Int64, cause: String?), sequence: Int64
  ) {
    if let cause = offer.cause { shared.withLock { $0.causes[sequence] = cause } }
    do {
      let plan = try compile(offer.project, offer.version, sequence)
      // A plan may have loaded a plugin the audio thread has never run.
      RealtimeThread.lockCode()
      // Live before its audio is read: the loader may not let go of any of it from now on.
      shared.withLock { state in
        state.live.append(plan)
        for source in plan.sources { state.sources[ObjectIdentifier(source)] = source }
      }
      let status = mixer.status
      loadAround([plan], position: status.position, loop: status.loop)
      for (address, bytes) in plan.memoryRegions { lock(address, bytes) }
      hooks.plannerBeforePublish?()
      let replaced = mixer.publish(plan)
      shared.withLock { $0.published = (offer.version, offer.project) }
      forget(replaced.map { [$0] } ?? [])
      loaderWake.signal()
    } catch {
      let playing = mixer.status.version.map { "version \($0)" } ?? "the previous version"
      shared.withLock {
        $0.messages.append(
          "version \(offer.version) cannot be played (\(error)); still playing \(playing)")
      }
    }
  }

  /// Takes out of ``Shared/live`` the plans the mixer says can no longer sound (released here,
  /// outside the lock).
  private func forget(_ plans: [ObjectIdentifier]) {
    guard !plans.isEmpty else { return }
    let gone = Set(plans)
    let dropped = shared.withLock { state -> [RenderPlan] in
      let dropped = state.live.filter { gone.contains(ObjectIdentifier($0)) }
      state.live.removeAll { gone.contains(ObjectIdentifier($0)) }
      return dropped
    }
    _ = dropped
  }

  /// Locks memory the audio thread reads into RAM; a failure is said once (a play goes on).
  private func lock(_ address: UnsafeRawPointer, _ bytes: Int) {
    let code = hooks.lockMemory?(address, bytes) ?? RealtimeThread.lockMemory(address, bytes)
    if code != 0 { tellLockFailed(code) }
  }

  private func tellLockFailed(_ code: Int32) {
    shared.withLock { state in
      guard !state.toldLockFailed else { return }
      state.toldLockFailed = true
      state.messages.append(RealtimeThread.lockFailure(code))
    }
  }

  // MARK: The loader

  private var currentEnd: Int64 {
    shared.withLock { $0.published?.project.timelineEnd.frames } ?? configuration.range.upperBound
  }

  /// The timeline windows whose audio must be in memory: ahead of `position`, and the loop's
  /// start when looping.
  private func windows(position: Int64, loop: Bool) -> [Range<Int64>] {
    let ahead = Int64(Self.lookahead * Double(configuration.sampleRate))
    let behind = Int64(configuration.sampleRate / 4)
    var windows = [max(0, position - behind)..<position + ahead]
    if loop {
      let start = configuration.range.lowerBound
      windows.append(start..<start + ahead)
    }
    return windows
  }

  /// Reads in what `plans` play around `position`, nearest first, chunk by chunk: a chunk
  /// that cannot be read is marked so (it plays as silence, and the audio thread does not
  /// wait for it), its source is reported once, and every other chunk is read all the same.
  /// A chunk marked is not tried again in this play.
  private func loadAround(_ plans: [RenderPlan], position: Int64, loop: Bool) {
    readAround(plans, position: position, loop: loop) { audio, chunk, error in
      audio.markUnreadable(chunk)
      shared.withLock { state in
        if state.reported.insert(ObjectIdentifier(audio)).inserted {
          state.messages.append("\(error); playing on, silent where it cannot be read")
        }
      }
    }
  }

  /// Like ``loadAround(_:position:loop:)``, but the first chunk that cannot be read is an
  /// error: for the first plan, before anything plays.
  private func loadAroundOrThrow(_ plans: [RenderPlan], position: Int64, loop: Bool) throws {
    try readAround(plans, position: position, loop: loop) { _, _, error in throw error }
  }

  private func readAround(
    _ plans: [RenderPlan], position: Int64, loop: Bool,
    failed: (SourceAudio, Int, any Error) throws -> Void
  ) rethrows {
    for window in windows(position: position, loop: loop) {
      for plan in plans {
        try plan.chunksRead(in: window, includingSilent: true) { audio, chunk in
          guard !audio.isResident(chunk), !audio.isUnreadable(chunk) else { return }
          do {
            try load(audio, chunk)
          } catch {
            try failed(audio, chunk, error)
          }
        }
      }
    }
  }

  private func runLoader() {
    while true {
      loaderWake.wait(milliseconds: 20)
      if !loaderPass() { return }
    }
  }

  /// One pass of the loader: a pending seek (its audio read, then the jump), the audio around
  /// the playhead, and eviction. False once the play is stopping.
  func loaderPass() -> Bool {
    let (plans, stopping, seek) = shared.withLock { ($0.live, $0.stopping, $0.seek) }
    if stopping { return false }
    let status = mixer.status
    if let seek {
      // The audio at the target first, then the jump: a seek never lands in silence. It
      // stays asked for until the mixer has it (``destination`` reads it meanwhile); a newer
      // one asked for while this one loaded waits for the next pass.
      loadAround(plans, position: seek, loop: status.loop)
      mixer.seek(to: seek)
      shared.withLock { if $0.seek == seek { $0.seek = nil } }
    }
    loadAround(plans, position: status.position, loop: status.loop)
    evict()
    return true
  }

  /// Lets go of every resident chunk no window needs, freeing it once the audio thread has
  /// finished the period in which it may have been reading it.
  ///
  /// The windows are those around where the audio thread plays and, while a seek is under
  /// way, around its target, as the mixer tells them now: a seek just made (or one the audio
  /// thread is still fading out for) keeps the audio it is about to land on.
  ///
  /// It decides and detaches under the lock that guards ``Shared/live``, so a plan the planner
  /// makes live either counts here or comes after the detach (and its own reading finds the
  /// chunk gone, and reads it again).
  private func evict() {
    struct Key: Hashable {
      let audio: ObjectIdentifier
      let chunk: Int
    }
    let free = shared.withLock { state in
      var needed = Set<Key>()
      let status = mixer.status
      let kept = [status.position, status.seekTarget].compactMap { $0 }.flatMap {
        windows(position: $0, loop: status.loop)
      }
      for plan in state.live {
        for window in kept {
          plan.chunksRead(in: window, includingSilent: true) { audio, chunk in
            needed.insert(Key(audio: ObjectIdentifier(audio), chunk: chunk))
          }
        }
      }
      hooks.loaderBeforeDetach?()
      var detached: [(audio: SourceAudio, chunk: Int)] = []
      // Every source a plan read, sounding or not: one no plan uses any more is let go of
      // whole, and forgotten.
      for (id, source) in state.sources {
        for chunk in source.residentChunks where !needed.contains(Key(audio: id, chunk: chunk)) {
          if let memory = source.detach(chunk) {
            detached.append((source, Int(bitPattern: memory)))
          }
        }
      }
      let used = Set(state.live.flatMap { $0.sources.map(ObjectIdentifier.init) })
      state.sources = state.sources.filter { used.contains($0.key) }
      // Counted after the detach: a period that began before it ends by `tag + 1`.
      let tag = mixer.periodsEnded
      state.pending += detached.map { ($0.audio, $0.chunk, tag) }
      let now = mixer.periodsEnded
      let done = state.pending.filter { now >= $0.periods + 2 }
      state.pending.removeAll { now >= $0.periods + 2 }
      return done
    }
    for (audio, chunk, _) in free {
      if let memory = UnsafeMutablePointer<Float>(bitPattern: chunk) { audio.release(memory) }
    }
  }
}

/// How long the device thread waits for the loader before a period, all told.
///
/// At most ``patience`` (half the buffer) before one period: a device that paces the thread
/// then still has audio queued; one that does not (a file or null PCM) is simply waited for.
/// After a wait that ran out, none for ``restPeriods`` periods (a buffer's worth), in which the
/// buffer fills up again. Why: a chunk that never comes would otherwise cost half a buffer
/// every period, and the buffer would run dry (a stream of xruns). (A chunk known to be
/// unreadable is not waited for at all: see ``Mixing/SourceAudio/markUnreadable(_:)``.)
struct LoaderWait {
  /// Nanoseconds.
  let patience: UInt64
  let restPeriods: Int
  private var resting = 0

  init(patience: UInt64, restPeriods: Int) {
    self.patience = patience
    self.restPeriods = max(1, restPeriods)
  }

  /// Whether the thread may wait before this period (asked once a period).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  mutating func mayWait() -> Bool {
    guard resting == 0 else {
      resting -= 1
      return false
    }
    return true
  }

  /// The wait ran out with the audio still missing.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  mutating func ranOut() {
    resting = restPeriods
  }
}

/// The device thread's own figures: each period's render time as a share of the period
/// (the most and the total since the start, and the most over the last window of about a
/// second), its CPU time over that window, the samples past full scale, and when each swap's
/// first frame was rendered (into memory allocated before the thread starts).
struct DeviceMeter {
  let periodNanoseconds: Double
  let periodsPerWindow: Int
  let times: UnsafeMutablePointer<UInt64>
  let capacity: Int
  var peak = 0.0
  var total = 0.0
  var periods = 0
  var swapsSeen = 0
  var overs = 0
  /// The most a period's mix took in the last window that ended, as a share of the period.
  var windowMixLoad = 0.0
  /// The thread's CPU time over the last window that ended, as a share of its wall time.
  var windowThreadLoad = 0.0
  private var windowPeak = 0.0
  private var windowPeriods = 0
  private var windowStart: UInt64 = 0
  private var windowCPU: UInt64 = 0

  init(
    periodNanoseconds: Double, periodsPerWindow: Int, times: UnsafeMutablePointer<UInt64>,
    capacity: Int
  ) {
    self.periodNanoseconds = periodNanoseconds
    self.periodsPerWindow = periodsPerWindow
    self.times = times
    self.capacity = capacity
  }

  /// The first window starts at `now` (nanoseconds), the thread having used `cpu`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  mutating func begin(at now: UInt64, cpu: UInt64) {
    windowStart = now
    windowCPU = cpu
  }

  /// A period rendered from `start` to `end` (nanoseconds) into `samples` (`count` of them
  /// played), after which the mixer had made `swaps` swaps. The thread's CPU time is read
  /// once a window (a system call).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  mutating func rendered(
    start: UInt64, end: UInt64, swaps: Int, samples: UnsafePointer<Float>, count: Int
  ) {
    rendered(start: start, end: end, swaps: swaps, samples: samples, count: count) {
      RealtimeThread.threadCPUTime()
    }
  }

  /// ``rendered(start:end:swaps:samples:count:)`` with the thread's CPU time from `cpu`.
  @_noLocks
  mutating func rendered(
    start: UInt64, end: UInt64, swaps: Int, samples: UnsafePointer<Float>, count: Int,
    cpu: () -> UInt64
  ) {
    while swapsSeen < swaps && swapsSeen < capacity {
      times[swapsSeen] = start
      swapsSeen += 1
    }
    for index in 0..<count where abs(samples[index]) > 1 { overs += 1 }
    let load = Double(end - start) / periodNanoseconds
    peak = max(peak, load)
    total += load
    periods += 1
    windowPeak = max(windowPeak, load)
    windowPeriods += 1
    if windowPeriods >= periodsPerWindow {
      let used = cpu()
      windowMixLoad = windowPeak
      if end > windowStart {
        windowThreadLoad = Double(used &- windowCPU) / Double(end - windowStart)
      }
      windowPeak = 0
      windowPeriods = 0
      windowStart = end
      windowCPU = used
    }
  }
}
