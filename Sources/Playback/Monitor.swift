import Foundation
import Synchronization

/// Software monitoring: what a ``Recorder`` captures, played on an output device as it comes,
/// so the performer hears the input while recording (`tape record --monitor`).
///
/// The recorder's device thread converts each period it reads to float at the output's
/// channels (`MonitorFeed.push(_:frames:format:)`) and pushes it into a lock-free ring; the
/// monitor's own device thread takes up to a period from the ring for each write (silence
/// where the ring has less: the device keeps its pace) and writes it. Neither thread
/// allocates, locks or does file I/O; the one blocking call is the write.
///
/// The latency (``latency(capturePeriod:)``) is the capture's period (a frame is heard once the period that
/// holds it has been read) plus the output's buffer (what the device holds before a frame
/// sounds).
///
/// ```swift
/// let monitor = try Monitor(device: "hw:1", period: nil, sampleRate: 48_000, channels: 2,
///   inputChannels: 1)
/// recorder.monitor = monitor          // before the recorder starts
/// try monitor.start()
/// // … record …
/// monitor.stop()
/// ```
public final class Monitor: @unchecked Sendable {
  public let device: String
  /// The monitor's own output; nil when it is mixed into a player's.
  private let output: ALSAOutput?
  private let player: LivePlayer?
  let feed: MonitorFeed
  private let buffer: UnsafeMutablePointer<Float>
  private let stopRequested = Atomic<Bool>(false)
  private let finished = DispatchSemaphore(value: 0)
  private let failureCode = Atomic<Int32>(0)
  private var running = false

  /// Opens `device` for output at `sampleRate` (exactly: a monitor is not converted) and
  /// `channels`; the input comes with `inputChannels` (mono is sent to every channel).
  public init(
    device: String, period: Int?, sampleRate: Int, channels: Int, inputChannels: Int
  ) throws(PlaybackError) {
    self.device = device
    player = nil
    let output = try ALSAOutput(
      request: DeviceRequest(name: device, period: period), sampleRate: sampleRate,
      channels: channels)
    self.output = output
    guard output.rate == sampleRate else {
      output.drop()
      throw .cannotOpen(
        device: device,
        reason:
          "it does not play \(sampleRate) Hz, the project's rate; monitor on another device with --output"
      )
    }
    // Half a second of room: more than the capture's period and the output's buffer.
    feed = MonitorFeed.make(
      frames: max(sampleRate / 2, 4 * output.bufferFrames), inputChannels: inputChannels,
      outputChannels: channels)
    buffer = .allocate(capacity: output.period * channels)
    buffer.initialize(repeating: 0, count: output.period * channels)
  }

  /// A monitor mixed into `player`'s play (an overdub): the player's device thread adds what
  /// the ring holds to each period it renders (``start()`` does nothing more). Made before
  /// the player starts; the player must play at `sampleRate` (no converter).
  public init(
    mixingInto player: LivePlayer, sampleRate: Int, channels: Int, inputChannels: Int
  ) throws(PlaybackError) {
    device = player.configuration.device.name
    output = nil
    self.player = player
    guard player.deviceRate == sampleRate else {
      throw .cannotOpen(
        device: device,
        reason:
          "it does not play \(sampleRate) Hz, the project's rate; monitor on another device with --output"
      )
    }
    feed = MonitorFeed.make(
      frames: max(sampleRate / 2, 4 * player.granted.bufferFrames),
      inputChannels: inputChannels, outputChannels: channels)
    buffer = .allocate(capacity: 1)
    buffer.initialize(to: 0)
    _ = RealtimeThread.lockMemory(feed.ring.memory.0, feed.ring.memory.1)
    _ = RealtimeThread.lockMemory(feed.mixMemory.0, feed.mixMemory.1)
    player.monitorFeed = feed
  }

  deinit {
    feed.deallocate()
    buffer.deallocate()
  }

  /// The output's period and buffer, in frames (the player's, when mixed into one).
  public var granted: (period: Int, bufferFrames: Int) {
    if let player { return (player.granted.period, player.granted.bufferFrames) }
    guard let output else { return (0, 0) }
    return (output.period, output.bufferFrames)
  }

  /// The latency in frames from a frame captured to it heard: the capture's period
  /// (`capturePeriod`; a frame is heard once the period that holds it has been read) plus the
  /// output's buffer.
  public func latency(capturePeriod: Int) -> Int { capturePeriod + granted.bufferFrames }

  /// Starts the monitor's device thread (silence until the recorder sends what it captures);
  /// nothing for a monitor mixed into a player.
  public func start() throws(PlaybackError) {
    guard let output else { return }
    RealtimeThread.lockCode()
    _ = RealtimeThread.lockMemory(feed.ring.memory.0, feed.ring.memory.1)
    _ = RealtimeThread.lockMemory(buffer, output.period * output.channels * 4)
    let pcm = output.device
    let feed = self.feed
    let period = output.period
    let channels = output.channels
    let frameBytes = channels * 4
    let (bufferFrames, rate) = (output.bufferFrames, output.rate)
    guard
      RealtimeThread.start({ [self] in
        _ = RealtimeThread.lockStack()
        let hooks = RealtimeThread.audioThreadHooks()
        hooks.begin?()
        var watch = DropoutWatch(
          bufferFrames: bufferFrames, period: period, rate: rate,
          continued: LivePlayer.continuations)
        while !stopRequested.load(ordering: .acquiring) {
          let took = feed.ring.take(into: buffer, count: period * frameBytes)
          if took < period * frameBytes {
            Self.silence(UnsafeMutableRawPointer(buffer) + took, period * frameBytes - took)
          }
          switch ALSAOutput.write(pcm, buffer, frames: period, watch: &watch) {
          case .written, .recoveredXrun: continue
          case .failed(let code): failureCode.store(code, ordering: .relaxed)
          case .stalled: failureCode.store(-EIO, ordering: .relaxed)
          }
          break
        }
        hooks.end?()
        finished.signal()
      }) != nil
    else {
      throw .cannotOpen(device: device, reason: "no thread for the device")
    }
    running = true
  }

  /// Stops the monitor's thread and closes its device (what it holds is dropped).
  public func stop() {
    guard running else { return }
    running = false
    stopRequested.store(true, ordering: .releasing)
    finished.wait()
    output?.drop()
  }

  /// Why the monitor's device stopped early, when it did.
  public var failure: PlaybackError? {
    let code = failureCode.load(ordering: .relaxed)
    guard code != 0, let output else { return nil }
    return code == -EIO ? output.stalled : output.failure(code)
  }

  /// Zeroes `count` bytes at `start`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  private static func silence(_ start: UnsafeMutableRawPointer, _ count: Int) {
    _unsafePerformance { _ = memset(start, 0, count) }
  }
}

/// The recorder's side of a ``Monitor``: the ring, and a period's worth of float frames to
/// convert into before pushing. Held by both device threads as a value.
struct MonitorFeed: @unchecked Sendable, BitwiseCopyable {
  let ring: CaptureRing
  private let scratch: UnsafeMutablePointer<Float>
  /// Where the player's device thread takes what it mixes (``mix(into:frames:)``).
  private let mixScratch: UnsafeMutablePointer<Float>
  private let scratchFrames: Int
  let inputChannels: Int
  let outputChannels: Int

  static func make(frames: Int, inputChannels: Int, outputChannels: Int) -> MonitorFeed {
    let scratchFrames = 4_096
    let scratch = UnsafeMutablePointer<Float>.allocate(capacity: scratchFrames * outputChannels)
    scratch.initialize(repeating: 0, count: scratchFrames * outputChannels)
    let mixScratch = UnsafeMutablePointer<Float>.allocate(capacity: scratchFrames * outputChannels)
    mixScratch.initialize(repeating: 0, count: scratchFrames * outputChannels)
    return MonitorFeed(
      ring: CaptureRing(capacity: frames * outputChannels * 4), scratch: scratch,
      mixScratch: mixScratch, scratchFrames: scratchFrames, inputChannels: inputChannels,
      outputChannels: outputChannels)
  }

  func deallocate() {
    ring.deallocate()
    scratch.deallocate()
    mixScratch.deallocate()
  }

  /// The scratch buffers, to lock into memory before the threads start.
  var memory: (UnsafeRawPointer, Int) {
    (UnsafeRawPointer(scratch), scratchFrames * outputChannels * 4)
  }
  var mixMemory: (UnsafeRawPointer, Int) {
    (UnsafeRawPointer(mixScratch), scratchFrames * outputChannels * 4)
  }

  /// Adds up to `frames` frames of what the ring holds to `output` (interleaved at
  /// ``outputChannels``): the player's device thread, after it renders a period.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  func mix(into output: UnsafeMutablePointer<Float>, frames: Int) {
    var done = 0
    while done < frames {
      let count = min(scratchFrames, frames - done)
      let took = ring.take(into: mixScratch, count: count * outputChannels * 4) / 4
      for index in 0..<took { output[done * outputChannels + index] += mixScratch[index] }
      if took < count * outputChannels { return }
      done += count
    }
  }

  /// Converts `frames` captured frames at `samples` (in `format`, ``inputChannels`` each) to
  /// float at ``outputChannels`` (mono to every channel; of more inputs, the first ones) and
  /// pushes them; a full ring drops them (the monitor is late; the take is not touched).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  func push(_ samples: UnsafeRawPointer, frames: Int, format: CaptureFormat) {
    var done = 0
    while done < frames {
      let count = min(scratchFrames, frames - done)
      for frame in 0..<count {
        for channel in 0..<outputChannels {
          let from = (done + frame) * inputChannels + min(channel, inputChannels - 1)
          scratch[frame * outputChannels + channel] = Self.sample(samples, from, format)
        }
      }
      _ = ring.push(scratch, count: count * outputChannels * 4)
      done += count
    }
  }

  /// Sample `index` of `samples` as a float (full scale 1).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inline(__always)
  private static func sample(
    _ samples: UnsafeRawPointer, _ index: Int, _ format: CaptureFormat
  ) -> Float {
    switch format {
    case .float:
      return samples.loadUnaligned(fromByteOffset: index * 4, as: Float.self)
    case .s16:
      return Float(samples.loadUnaligned(fromByteOffset: index * 2, as: Int16.self)) / 32_768
    case .s32:
      return Float(samples.loadUnaligned(fromByteOffset: index * 4, as: Int32.self))
        / 2_147_483_648
    case .s24:
      let low = UInt32(samples.load(fromByteOffset: index * 3, as: UInt8.self))
      let middle = UInt32(samples.load(fromByteOffset: index * 3 + 1, as: UInt8.self))
      let high = UInt32(samples.load(fromByteOffset: index * 3 + 2, as: UInt8.self))
      return Float(Int32(bitPattern: low << 8 | middle << 16 | high << 24) >> 8) / 8_388_608
    }
  }
}
