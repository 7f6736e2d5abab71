internal import CRealtime
import Foundation
import Synchronization

/// Captures from an ALSA device and hands what comes, as it comes, to a writer.
///
/// Two threads besides the caller's:
/// - the **device thread** (SCHED_FIFO when permitted, its stack and buffers locked): reads a
///   period with the one blocking call, `snd_pcm_readi`, measures its peak
///   (`CaptureLevels`) and pushes it into a lock-free ring (`CaptureRing`). It allocates,
///   locks and writes nothing else: a full ring drops the period and counts it, never waits;
/// - the **writer thread**: takes what the ring holds every 50 ms (or when woken) and passes
///   it to `write` (the take's file), then calls `tick` (which rewrites the file's header).
///   Where the ring dropped periods, it writes as many frames of silence in their place, so
///   that every frame after a gap is at the take frame it was captured at (what the clock and
///   an overdub's alignment count in).
///
/// It stops after `frames` frames (``Configuration/frames``), on ``stop()``, or when the
/// device fails; ``wait()`` returns once the writer has written everything captured.
///
/// ```swift
/// let recorder = try Recorder(.init(device: "default", sampleRate: 48_000, channels: 1))
/// try recorder.start(write: { bytes in try take.append(bytes) }, tick: { try take.refresh() })
/// let report = recorder.wait()
/// ```
public final class Recorder: @unchecked Sendable {
  public struct Configuration: Sendable {
    public var device: String
    public var sampleRate: Int
    public var channels: Int
    /// The sample format asked for; nil: the widest the device takes.
    public var format: CaptureFormat?
    /// Frames to capture at most; nil: until ``stop()``.
    public var frames: Int64?
    /// A test hook: the writer thread writes nothing until the device thread has ended, so
    /// that a capture longer than the ring (8 s) overruns it at a known frame. `tape record`
    /// sets it from `TAPE_TEST_WRITER_WAITS=1` (docs/testing.md).
    public var writerWaitsForCapture: Bool

    public init(
      device: String, sampleRate: Int, channels: Int, format: CaptureFormat? = nil,
      frames: Int64? = nil, writerWaitsForCapture: Bool = false
    ) {
      self.device = device
      self.sampleRate = sampleRate
      self.channels = channels
      self.format = format
      self.frames = frames
      self.writerWaitsForCapture = writerWaitsForCapture
    }
  }

  /// What happened during a recording.
  public struct Report: Sendable {
    /// Frames written to the take: every frame captured, those a full ring dropped as silence.
    public var frames: Int64
    /// Periods the device overran (the device thread was late; ALSA lost what it held).
    public var deviceOverruns: Int
    /// Periods dropped because the ring to the writer was full (the disk was late), and their
    /// frames (silence in the take).
    public var ringOverruns: Int
    public var droppedFrames: Int64
    /// Of ``droppedFrames``, those dropped after the take had ``Recorder/gapsFilledAtMost``
    /// gaps: not filled, so what follows them is early by them.
    public var unfilledFrames: Int64
    /// The loudest sample, as a share of full scale (1 = 0 dBFS), and samples at full scale.
    public var peak: Float
    public var clipped: Int
    public var realtimePriority: Bool
    /// Why the recording ended early, when it did: the device failed, or the writer did.
    public var failure: (any Error)?
  }

  public let configuration: Configuration
  private let input: ALSAInput
  private let ring: CaptureRing
  private let levels = CaptureLevels.make()
  private let gaps = OverrunLog.make()
  private let buffer: UnsafeMutableRawPointer
  private let stopRequested = Atomic<Bool>(false)
  private let deviceDone = Atomic<Bool>(false)
  private let capturedFrames = Atomic<Int>(0)
  private let deviceOverrunCount = Atomic<Int>(0)
  private let writerWake = Wakeup()
  private let finished = DispatchGroup()
  private var deviceFailure: PlaybackError?
  private var writerFailure: (any Error)?
  private var written: Int64 = 0
  public private(set) var realtimePriority = false

  /// Which take frame was being captured, and when, after each read (see ``StreamClock``):
  /// what aligns a take made while the project plays. Set before ``start(write:tick:)``.
  public var clock: StreamClock?

  /// Where what is captured is also sent as it comes (software monitoring; see ``Monitor``).
  /// Set before ``start(write:tick:)``.
  public var monitor: Monitor?

  /// Opens the device (the rate exactly; the format asked for, or the widest it takes).
  public init(_ configuration: Configuration) throws(PlaybackError) {
    self.configuration = configuration
    input = try ALSAInput(
      name: configuration.device, sampleRate: configuration.sampleRate,
      channels: configuration.channels, format: configuration.format, period: 1_024,
      periods: 16)
    let frameBytes = input.format.bytesPerSample * configuration.channels
    // Eight seconds: a disk that stalls that long loses audio, and says so.
    ring = CaptureRing(capacity: configuration.sampleRate * 8 * frameBytes)
    buffer = .allocate(byteCount: input.period * frameBytes, alignment: 16)
    buffer.initializeMemory(as: UInt8.self, repeating: 0, count: input.period * frameBytes)
  }

  deinit {
    ring.deallocate()
    buffer.deallocate()
    levels.deallocate()
    gaps.deallocate()
  }

  /// The format the device delivers, which the take keeps.
  public var format: CaptureFormat { input.format }
  /// The period and buffer the device granted, in frames.
  public var granted: (period: Int, bufferFrames: Int) { (input.period, input.bufferFrames) }
  /// Bytes of one frame.
  public var frameBytes: Int { input.format.bytesPerSample * configuration.channels }

  /// Frames captured so far.
  public var frames: Int64 { Int64(capturedFrames.load(ordering: .relaxed)) }
  /// Whether the device thread still captures.
  public var isCapturing: Bool { !deviceDone.load(ordering: .acquiring) }
  /// Overruns so far: the device's, and the ring's (periods dropped).
  public var overruns: Int {
    deviceOverrunCount.load(ordering: .relaxed) + ring.overruns.periods
  }
  /// Where the take has gaps so far: the take frame at which each overrun (of the device, or
  /// of the ring) lost audio, in order; periods lost one after another are one gap. A ring's
  /// gap is silence in the take, as long as what it lost; a device's lost an unknown stretch
  /// and what follows it is early by that. At most ``gapsFilledAtMost`` are kept (the count
  /// of overruns goes on). Any thread.
  public var gapFrames: [Int64] { gaps.frames }
  /// How many gaps a take keeps and fills at most (see ``Report/unfilledFrames``).
  public static let gapsFilledAtMost = OverrunLog.capacity

  /// The loudest sample since the last call (a share of full scale), and samples at full
  /// scale since the start.
  public func takeLevels() -> (peak: Float, clipped: Int) {
    (levels.takeWindowPeak(), levels.clipped)
  }

  /// Starts capturing; `write` receives the bytes captured in order, on the writer thread;
  /// `tick` is called after each pass of the writer (at least every 50 ms while capturing).
  /// A `write` or `tick` that throws ends the recording (its report says why).
  public func start(
    write: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void,
    tick: @escaping @Sendable () throws -> Void
  ) throws(PlaybackError) {
    RealtimeThread.lockCode()
    _ = RealtimeThread.lockMemory(ring.memory.0, ring.memory.1)
    _ = RealtimeThread.lockMemory(buffer, input.period * frameBytes)
    if let feed = monitor?.feed { _ = RealtimeThread.lockMemory(feed.memory.0, feed.memory.1) }
    try input.start()
    finished.enter()
    Thread.detachNewThread { [self] in
      runWriter(write: write, tick: tick)
      finished.leave()
    }
    finished.enter()
    guard
      let (_, realtime) = RealtimeThread.start({ [self] in
        runDevice()
        deviceDone.store(true, ordering: .releasing)
        writerWake.signal()
        finished.leave()
      })
    else {
      deviceDone.store(true, ordering: .releasing)
      finished.leave()
      writerWake.signal()
      finished.wait()
      throw .cannotOpenInput(device: input.name, reason: "no thread for the device")
    }
    realtimePriority = realtime
  }

  /// Ends the capture after the period being read; ``wait()`` for what was written.
  public func stop() {
    stopRequested.store(true, ordering: .releasing)
  }

  /// Waits until everything captured is written, and returns what happened.
  public func wait() -> Report {
    finished.wait()
    let overruns = ring.overruns
    let levels = self.levels
    return Report(
      frames: written, deviceOverruns: deviceOverrunCount.load(ordering: .relaxed),
      ringOverruns: overruns.periods, droppedFrames: Int64(overruns.bytes / frameBytes),
      unfilledFrames: gaps.unlogged,
      peak: levels.peak, clipped: levels.clipped, realtimePriority: realtimePriority,
      failure: deviceFailure ?? writerFailure)
  }

  // MARK: The device thread

  /// The device thread: a read, its levels, a push into the ring, until stopped. Everything
  /// but the read is compiler-checked (``CaptureRing/push(_:count:)``,
  /// ``CaptureLevels/measure(_:count:format:)``).
  private func runDevice() {
    _ = RealtimeThread.lockStack()
    let pcm = input.device
    let period = input.period
    let frameBytes = self.frameBytes
    let channels = configuration.channels
    let format = input.format
    let limit = configuration.frames ?? Int64.max
    let ring = self.ring
    let levels = self.levels
    let buffer = self.buffer
    let wake = writerWake.handle
    let clock = self.clock?.writer
    let gaps = self.gaps
    let monitorFeed = monitor?.feed
    let hooks = RealtimeThread.audioThreadHooks()
    hooks.begin?()
    // Frames read so far: the take frame of the next one (the writer fills a ring's gap).
    var captured: Int64 = 0
    var failure: Int32?
    var stalled = false
    var idle: Int32 = 0
    while captured < limit && !stopRequested.load(ordering: .acquiring) {
      let wanted = Int(min(Int64(period), limit - captured))
      switch ALSAInput.read(pcm, into: buffer, frames: wanted) {
      case .idle:
        idle += 1
        stalled = idle * ALSAInput.waitSliceMilliseconds >= ALSAInput.stallMilliseconds
      case .read(let count):
        guard count > 0 else { continue }
        idle = 0
        levels.measure(buffer, count: count * channels, format: format)
        monitorFeed?.push(buffer, frames: count, format: format)
        if !ring.push(buffer, count: count * frameBytes) {
          gaps.note(captured, lost: Int64(count))
        }
        captured += Int64(count)
        capturedFrames.store(Int(captured), ordering: .relaxed)
        if let clock {
          let delay = ALSAInput.delay(pcm)
          clock.log(time: RealtimeThread.now(), position: captured + delay, delay: delay)
        }
        Wakeup.signal(wake)
      case .overrun:
        deviceOverrunCount.add(1, ordering: .relaxed)
        gaps.note(captured, lost: 0)
      case .failed(let code):
        failure = code
      }
      if failure != nil || stalled { break }
    }
    hooks.end?()
    input.drop()
    if let failure { deviceFailure = input.failure(failure) }
    if stalled { deviceFailure = input.stalled }
  }

  // MARK: The writer thread

  private func runWriter(
    write: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void,
    tick: @Sendable () throws -> Void
  ) {
    if configuration.writerWaitsForCapture {
      while !deviceDone.load(ordering: .acquiring) { writerWake.wait(milliseconds: 50) }
    }
    var filler = GapFiller(gaps: gaps, frameBytes: frameBytes, write: write)
    while true {
      let ended = deviceDone.load(ordering: .acquiring)
      do {
        _ = try ring.pop { try filler.hand($0) }
        // A gap at the end: nothing more will come, so its length is final.
        if ended { try filler.fillGapsHere() }
        try tick()
      } catch {
        writerFailure = error
        stop()
        // What is left is not written: the device thread stops soon, the ring is dropped.
        while !deviceDone.load(ordering: .acquiring) { writerWake.wait(milliseconds: 50) }
        break
      }
      if ended { break }
      writerWake.wait(milliseconds: 50)
    }
    written = filler.frames
  }
}

/// The writer's side of the gaps: hands what the ring gives to `write`, and at each gap the
/// ring dropped, as many frames of silence as it lost, so that the take's frames are the
/// frames captured. A gap is filled once a frame after it has been handed (or the capture has
/// ended): until then the device thread may still be adding lost periods to it.
struct GapFiller {
  let gaps: OverrunLog
  let frameBytes: Int
  let write: (UnsafeRawBufferPointer) throws -> Void
  /// Take frames handed to `write` so far, silence included.
  private(set) var frames: Int64 = 0
  private var next = 0
  private let silence: [UInt8]

  init(gaps: OverrunLog, frameBytes: Int, write: @escaping (UnsafeRawBufferPointer) throws -> Void)
  {
    self.gaps = gaps
    self.frameBytes = frameBytes
    self.write = write
    silence = [UInt8](repeating: 0, count: 4_096 * frameBytes)
  }

  /// Writes `data` (whole frames that follow what was handed before), silence first where a
  /// gap lies before or inside it.
  mutating func hand(_ data: UnsafeRawBufferPointer) throws {
    var offset = 0
    while offset < data.count {
      // Data after the gap has come: the gap is whole.
      try fillGapsHere()
      var end = data.count
      if let gap = gaps.entry(next) {
        end = min(end, offset + Int(gap.frame - frames) * frameBytes)
      }
      try write(UnsafeRawBufferPointer(rebasing: data[offset..<end]))
      frames += Int64((end - offset) / frameBytes)
      offset = end
    }
  }

  /// Fills the gaps noted at the frame reached (a device's overrun, which lost an unknown
  /// stretch, fills nothing).
  mutating func fillGapsHere() throws {
    while let gap = gaps.entry(next), gap.frame <= frames {
      var left = Int(gap.lost) * frameBytes
      while left > 0 {
        let count = min(left, silence.count)
        try silence.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        left -= count
      }
      frames += gap.lost
      next += 1
    }
  }
}

/// Where a take has gaps: the take frames at which overruns lost audio, and how much (a
/// ring's drop: its frames; a device's overrun: 0, not known), logged by the device thread
/// into slots allocated before it starts, read by any thread. Beyond ``capacity`` gaps, later
/// ones are neither kept nor filled: their frames are counted (``unlogged``), and the count
/// of overruns goes on.
struct OverrunLog: @unchecked Sendable, BitwiseCopyable {
  /// Gaps kept at most.
  static let capacity = 4_096
  private let starts: UnsafeMutablePointer<Atomic<Int64>>
  private let lengths: UnsafeMutablePointer<Atomic<Int64>>
  private let count: UnsafeMutablePointer<Atomic<Int>>
  private let overflow: UnsafeMutablePointer<Atomic<Int64>>

  static func make() -> OverrunLog {
    let starts = UnsafeMutablePointer<Atomic<Int64>>.allocate(capacity: capacity)
    let lengths = UnsafeMutablePointer<Atomic<Int64>>.allocate(capacity: capacity)
    for index in 0..<capacity {
      (starts + index).initialize(to: Atomic(0))
      (lengths + index).initialize(to: Atomic(0))
    }
    let count = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: 1)
    count.initialize(to: Atomic(0))
    let overflow = UnsafeMutablePointer<Atomic<Int64>>.allocate(capacity: 1)
    overflow.initialize(to: Atomic(0))
    return OverrunLog(starts: starts, lengths: lengths, count: count, overflow: overflow)
  }

  func deallocate() {
    starts.deinitialize(count: Self.capacity)
    starts.deallocate()
    lengths.deinitialize(count: Self.capacity)
    lengths.deallocate()
    count.deinitialize(count: 1)
    count.deallocate()
    overflow.deinitialize(count: 1)
    overflow.deallocate()
  }

  /// Notes that `lost` frames were lost at take frame `frame`: added to the last gap when it
  /// ends there (periods lost one after another are one gap), else a new gap; when the log is
  /// full, only counted (``unlogged``). The writer fills a gap only once a frame after it was pushed into the ring
  /// (whose push publishes this), or the capture has ended.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  func note(_ frame: Int64, lost: Int64) {
    let index = count.pointee.load(ordering: .relaxed)
    if index > 0 {
      let last = lengths[index - 1].load(ordering: .relaxed)
      if starts[index - 1].load(ordering: .relaxed) + last == frame {
        lengths[index - 1].store(last + lost, ordering: .releasing)
        return
      }
    }
    guard index < Self.capacity else {
      overflow.pointee.add(lost, ordering: .relaxed)
      return
    }
    starts[index].store(frame, ordering: .relaxed)
    lengths[index].store(lost, ordering: .relaxed)
    count.pointee.store(index + 1, ordering: .releasing)
  }

  /// Gap `index`, when it has been noted.
  func entry(_ index: Int) -> (frame: Int64, lost: Int64)? {
    guard index < count.pointee.load(ordering: .acquiring) else { return nil }
    return (starts[index].load(ordering: .relaxed), lengths[index].load(ordering: .acquiring))
  }

  /// Frames lost after the log was full: neither kept nor filled.
  var unlogged: Int64 { overflow.pointee.load(ordering: .relaxed) }

  /// Where the gaps noted so far start, in order.
  var frames: [Int64] {
    let total = count.pointee.load(ordering: .acquiring)
    return (0..<total).map { starts[$0].load(ordering: .relaxed) }
  }
}

/// The peak of what the device thread captured, for the status line: the loudest sample of the
/// window since the status line last looked, the loudest since the start, and how many samples
/// were at full scale (a clipping input). Written by the device thread, read by any.
struct CaptureLevels: @unchecked Sendable, BitwiseCopyable {
  /// The window's and the whole take's peak as Float bit patterns (positive floats order as
  /// their bits do), and the clipped samples.
  private let window: UnsafeMutablePointer<Atomic<UInt32>>
  private let whole: UnsafeMutablePointer<Atomic<UInt32>>
  private let clips: UnsafeMutablePointer<Atomic<Int>>

  static func make() -> CaptureLevels {
    let window = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: 1)
    window.initialize(to: Atomic(0))
    let whole = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: 1)
    whole.initialize(to: Atomic(0))
    let clips = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: 1)
    clips.initialize(to: Atomic(0))
    return CaptureLevels(window: window, whole: whole, clips: clips)
  }

  func deallocate() {
    window.deinitialize(count: 1)
    window.deallocate()
    whole.deinitialize(count: 1)
    whole.deallocate()
    clips.deinitialize(count: 1)
    clips.deallocate()
  }

  /// Measures `count` samples at `samples` in `format`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  func measure(_ samples: UnsafeRawPointer, count: Int, format: CaptureFormat) {
    var peak: Float = 0
    var clipped = 0
    switch format {
    case .s16:
      for index in 0..<count {
        let value = samples.loadUnaligned(fromByteOffset: index * 2, as: Int16.self)
        if value == .max || value == .min { clipped += 1 }
        peak = max(peak, Float(value.magnitude) / 32_768)
      }
    case .s24:
      for index in 0..<count {
        let low = UInt32(samples.load(fromByteOffset: index * 3, as: UInt8.self))
        let middle = UInt32(samples.load(fromByteOffset: index * 3 + 1, as: UInt8.self))
        let high = UInt32(samples.load(fromByteOffset: index * 3 + 2, as: UInt8.self))
        let value = Int32(bitPattern: (low << 8 | middle << 16 | high << 24)) >> 8
        if value == 8_388_607 || value == -8_388_608 { clipped += 1 }
        peak = max(peak, Float(value.magnitude) / 8_388_608)
      }
    case .s32:
      for index in 0..<count {
        let value = samples.loadUnaligned(fromByteOffset: index * 4, as: Int32.self)
        if value == .max || value == .min { clipped += 1 }
        peak = max(peak, Float(value.magnitude) / 2_147_483_648)
      }
    case .float:
      for index in 0..<count {
        let value = samples.loadUnaligned(fromByteOffset: index * 4, as: Float.self)
        let magnitude = value.magnitude
        if magnitude >= 1 { clipped += 1 }
        if magnitude > peak { peak = magnitude }
      }
    }
    let bits = peak.isFinite ? peak.bitPattern : Float(1).bitPattern
    Self.raise(window, to: bits)
    Self.raise(whole, to: bits)
    if clipped > 0 { clips.pointee.add(clipped, ordering: .relaxed) }
  }

  /// Sets `slot` to `bits` when they are more.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  private static func raise(_ slot: UnsafeMutablePointer<Atomic<UInt32>>, to bits: UInt32) {
    var current = slot.pointee.load(ordering: .relaxed)
    while bits > current {
      let (exchanged, found) = slot.pointee.compareExchange(
        expected: current, desired: bits, ordering: .relaxed)
      if exchanged { return }
      current = found
    }
  }

  /// The window's peak, and a new window.
  func takeWindowPeak() -> Float {
    Float(bitPattern: window.pointee.exchange(0, ordering: .relaxed))
  }

  var peak: Float { Float(bitPattern: whole.pointee.load(ordering: .relaxed)) }
  var clipped: Int { clips.pointee.load(ordering: .relaxed) }
}
