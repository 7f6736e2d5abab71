import Foundation
import Synchronization

/// Measures a device's round trip with a loopback (its output connected to its input): a train
/// of clicks at known, irregular frames is played while the input is captured; the two
/// streams' clocks (``RoundTrip``) say where each click would be captured if the device had no
/// latency beyond what ALSA reports, and a cross-correlation of the capture with the click
/// train finds where they were: the difference is the device's *extra* latency (converters,
/// cables, JACK's ports), which ``LatencyStore`` keeps and `tape record --play` adds to what
/// the devices report. Ardour's latency calibration measures the same round trip the same
/// way (a known signal, its capture, the lag between them).
///
/// Threads: the capture is a ``Recorder``; the clicks are written by a device thread of their
/// own (SCHED_FIFO when permitted) that renders nothing: it writes a train computed and locked
/// before it starts, and logs its clock, allocating nothing.
///
/// ```swift
/// let measured = try LatencyCalibration.measure(input: "hw:1", output: "hw:1", sampleRate: 48_000)
/// try LatencyStore().save(measured, input: "hw:1", output: "hw:1")
/// ```
public enum LatencyCalibration {
  /// What a calibration found.
  public struct Measurement: Sendable, Equatable {
    /// Frames of round trip beyond what ALSA reports (may be negative: a device that reports
    /// more than it has).
    public var extraFrames: Int64
    /// The whole round trip: what the devices reported, plus ``extraFrames``.
    public var roundTripFrames: Int64
    public var playbackDelay: Int64
    public var captureDelay: Int64
    public var sampleRate: Int
    /// Clicks played, and heard where the measured latency puts them.
    public var clicks: Int
    public var clicksHeard: Int
  }

  /// The frames (from the start of the play) the clicks are played at: every 0.2 s or so,
  /// irregularly (no lag but the right one lines them all up), from 0.5 s to 3 s.
  public static func clickFrames(sampleRate: Int) -> [Int64] {
    let first = Int64(sampleRate) / 2
    let step = Int64(sampleRate) / 5
    return (0..<12).map { index in
      first + Int64(index) * step + Int64((index * index * 37) % 480) * Int64(sampleRate) / 48_000
    }
  }

  /// A click's amplitude (a one-frame impulse).
  static let amplitude: Float = 0.5

  /// Plays the clicks on `output` while capturing `input`, and measures the round trip.
  public static func measure(
    input: String, output: String, sampleRate: Int, channels: Int = 2, period: Int? = nil
  ) throws(PlaybackError) -> Measurement {
    let clicks = clickFrames(sampleRate: sampleRate)
    let length = Int((clicks.last ?? 0) + Int64(sampleRate))
    let device = try ALSAOutput(
      request: DeviceRequest(name: output, period: period), sampleRate: sampleRate,
      channels: channels)
    guard device.rate == sampleRate else {
      throw .calibrationFailed(
        device: output, reason: "it does not play \(sampleRate) Hz; calibrate at its own rate")
    }
    let recorder = try Recorder(
      Recorder.Configuration(device: input, sampleRate: sampleRate, channels: channels))
    let captureClock = StreamClock()
    let playClock = StreamClock()
    recorder.clock = captureClock
    let captured = CapturedBytes()
    try recorder.start(write: { captured.append($0) }, tick: {})
    // The train, written and locked before the thread starts.
    let train = UnsafeMutablePointer<Float>.allocate(capacity: length * channels)
    train.initialize(repeating: 0, count: length * channels)
    defer { train.deallocate() }
    for click in clicks {
      for channel in 0..<channels { train[Int(click) * channels + channel] = amplitude }
    }
    _ = RealtimeThread.lockMemory(train, length * channels * 4)
    let done = DispatchSemaphore(value: 0)
    let failed = Atomic<Int32>(0)
    let pcm = device.device
    let writer = playClock.writer
    let plays = Player(
      pcm: pcm, train: train, length: length, period: device.period,
      bufferFrames: device.bufferFrames, rate: sampleRate, channels: channels, clock: writer)
    guard
      RealtimeThread.start({
        failed.store(plays.run(), ordering: .relaxed)
        done.signal()
      }) != nil
    else {
      recorder.stop()
      _ = recorder.wait()
      throw .cannotOpen(device: output, reason: "no thread for the device")
    }
    done.wait()
    // What the device still holds is heard, then a little more.
    Thread.sleep(forTimeInterval: Double(device.bufferFrames) / Double(sampleRate) + 0.3)
    device.drop()
    recorder.stop()
    let report = recorder.wait()
    if failed.load(ordering: .relaxed) != 0 {
      throw device.failure(failed.load(ordering: .relaxed))
    }
    if let failure = report.failure as? PlaybackError { throw failure }
    guard
      let trip = RoundTrip.align(
        playback: playClock.entries, capture: captureClock.entries,
        period: min(device.period, recorder.granted.period), sampleRate: sampleRate)
    else {
      throw .calibrationFailed(device: input, reason: "the two streams' clocks never met")
    }
    let samples = captured.magnitudes(
      format: recorder.format, channels: recorder.configuration.channels)
    // Clicks played at frame p are captured at p + lag − offset: the best lag is the extra
    // latency. Searched from a period early to half a second late.
    let earliest = -Int64(max(device.period, recorder.granted.period))
    let latest = Int64(sampleRate / 2)
    var best: (lag: Int64, score: Float) = (0, -1)
    for lag in earliest...latest {
      var score: Float = 0
      for click in clicks {
        let index = click + lag - trip.offset
        if index >= 0 && index < Int64(samples.count) { score += samples[Int(index)] }
      }
      if score > best.score { best = (lag, score) }
    }
    let heard = clicks.filter { click in
      let index = click + best.lag - trip.offset
      return index >= 0 && index < Int64(samples.count)
        && samples[Int(index)] > amplitude / 4
    }.count
    guard heard * 4 >= clicks.count * 3 else {
      throw .calibrationFailed(
        device: input,
        reason:
          "\(heard) of its \(clicks.count) clicks came back (the loudest capture was \(String(format: "%.3f", samples.max() ?? 0)))"
      )
    }
    return Measurement(
      extraFrames: best.lag, roundTripFrames: trip.playbackDelay + trip.captureDelay + best.lag,
      playbackDelay: trip.playbackDelay, captureDelay: trip.captureDelay,
      sampleRate: sampleRate, clicks: clicks.count, clicksHeard: heard)
  }

  /// The clicks' device thread: what it needs, as values.
  private struct Player: @unchecked Sendable {
    let pcm: ALSAOutput.PCM
    let train: UnsafeMutablePointer<Float>
    let length: Int
    let period: Int
    let bufferFrames: Int
    let rate: Int
    let channels: Int
    let clock: StreamClock.Writer

    /// Writes the train period by period, logging the clock; 0, or ALSA's error code.
    func run() -> Int32 {
      _ = RealtimeThread.lockStack()
      var watch = DropoutWatch(
        bufferFrames: bufferFrames, period: period, rate: rate,
        continued: LivePlayer.continuations)
      var written = 0
      while written < length {
        let frames = min(period, length - written)
        switch ALSAOutput.write(pcm, train + written * channels, frames: frames, watch: &watch) {
        case .written, .recoveredXrun: break
        case .failed(let code): return code
        case .stalled: return -EIO
        }
        written += frames
        let delay = ALSAOutput.delay(pcm)
        clock.log(time: RealtimeThread.now(), position: Int64(written) - delay, delay: delay)
      }
      return 0
    }
  }
}

/// What a calibration captured, appended by the recorder's writer thread, read after it ended.
private final class CapturedBytes: @unchecked Sendable {
  private var bytes = Data()

  func append(_ buffer: UnsafeRawBufferPointer) {
    bytes.append(contentsOf: buffer)
  }

  /// Each frame's largest magnitude over its channels, as a share of full scale.
  func magnitudes(format: CaptureFormat, channels: Int) -> [Float] {
    let size = format.bytesPerSample
    let frames = bytes.count / (size * channels)
    return bytes.withUnsafeBytes { raw in
      (0..<frames).map { frame in
        var loudest: Float = 0
        for channel in 0..<channels {
          let at = (frame * channels + channel) * size
          let value: Float =
            switch format {
            case .float: raw.loadUnaligned(fromByteOffset: at, as: Float.self)
            case .s16: Float(raw.loadUnaligned(fromByteOffset: at, as: Int16.self)) / 32_768
            case .s32:
              Float(raw.loadUnaligned(fromByteOffset: at, as: Int32.self)) / 2_147_483_648
            case .s24:
              Float(
                Int32(
                  bitPattern: UInt32(raw[at]) << 8 | UInt32(raw[at + 1]) << 16
                    | UInt32(raw[at + 2]) << 24) >> 8) / 8_388_608
            }
          loudest = max(loudest, value.magnitude)
        }
        return loudest
      }
    }
  }
}

/// The round trips `tape record --calibrate` measured, per device, in one file per user:
/// `$XDG_CONFIG_HOME/tape/latency.json` (`~/.config/tape/latency.json` without it). A device's
/// latency belongs to the machine and its cables, not to a project; a user's projects share
/// it. The key is the capture device's name, or `input -> output` when the play goes to
/// another.
///
/// ```json
/// {"devices": {"hw:1": {"extraFrames": 37, "roundTripFrames": 1061, "sampleRate": 48000,
///   "measured": "2026-12-06T12:00:00Z"}}}
/// ```
public struct LatencyStore: Sendable {
  /// One device's calibration.
  public struct Calibration: Sendable, Codable, Equatable {
    public var extraFrames: Int64
    public var roundTripFrames: Int64
    public var sampleRate: Int
    public var measured: String

    /// The extra latency at `rate` (a calibration is kept in frames at its own rate).
    public func extraFrames(atRate rate: Int) -> Int64 {
      rate == sampleRate
        ? extraFrames
        : Int64((Double(extraFrames) * Double(rate) / Double(sampleRate)).rounded())
    }
  }

  private struct File: Codable {
    var devices: [String: Calibration]
  }

  public let path: String

  /// The store of the user running: `$XDG_CONFIG_HOME/tape/latency.json`, or
  /// `~/.config/tape/latency.json`.
  public init() {
    self.init(environment: ProcessInfo.processInfo.environment)
  }

  /// The store `environment` names (its `XDG_CONFIG_HOME`, or its `HOME`).
  public init(environment: [String: String]) {
    let base =
      environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
    path = base + "/tape/latency.json"
  }

  /// The key of a capture device and the device played to.
  public static func key(input: String, output: String) -> String {
    input == output ? input : "\(input) -> \(output)"
  }

  /// The calibration of `input` and `output`; nil when none was measured.
  public func calibration(input: String, output: String) throws(PlaybackError) -> Calibration? {
    try read().devices[Self.key(input: input, output: output)]
  }

  /// Keeps `measurement` as the calibration of `input` and `output` (replacing any before).
  public func save(
    _ measurement: LatencyCalibration.Measurement, input: String, output: String
  ) throws(PlaybackError) {
    var file = try read()
    let stamp = ISO8601DateFormatter().string(from: Date())
    file.devices[Self.key(input: input, output: output)] = Calibration(
      extraFrames: measurement.extraFrames, roundTripFrames: measurement.roundTripFrames,
      sampleRate: measurement.sampleRate, measured: stamp)
    do {
      try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
      try encoder.encode(file).write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
      throw .latencyStore(path: path, reason: "\(error.localizedDescription)")
    }
  }

  private func read() throws(PlaybackError) -> File {
    guard let data = FileManager.default.contents(atPath: path) else {
      return File(devices: [:])
    }
    do {
      return try JSONDecoder().decode(File.self, from: data)
    } catch {
      throw .latencyStore(path: path, reason: "it is not a calibration file: \(error)")
    }
  }
}
