import Dispatch
import Foundation
public import Mixing
public import Timeline

/// What a render should write: container, sample format and whether to dither.
public struct RenderSettings: Sendable {
  public var format: ExportFormat
  public var sampleFormat: SampleFormat
  /// TPDF dither before quantizing to integers (ignored for float output).
  public var dither: Bool

  public init(format: ExportFormat, sampleFormat: SampleFormat, dither: Bool) {
    self.format = format
    self.sampleFormat = sampleFormat
    self.dither = dither
  }
}

/// What a finished render measured.
public struct RenderSummary: Sendable, Equatable {
  public var frames: Int64
  public var sampleRate: Int
  public var channels: Int
  /// The largest absolute sample of the mix, before any clamping (1.0 = 0 dBFS).
  public var peak: Double
  /// Integrated loudness (EBU R128) in LUFS; `-infinity` for silence.
  public var loudness: Double
  /// Samples clamped to the integer range (always 0 for float output).
  public var clippedSamples: Int
  /// Wall-clock seconds spent rendering and writing.
  public var seconds: Double

  /// The peak in dBFS (`-infinity` for silence).
  public var peakDecibels: Double { 20 * log10(peak) }
  public var durationSeconds: Double { Double(frames) / Double(sampleRate) }
  /// How many seconds of audio were rendered per second of wall time.
  public var realtimeFactor: Double { seconds > 0 ? durationSeconds / seconds : .infinity }
}

/// Renders a plan to an audio file: both cores render blocks while a writer thread measures
/// (peak, loudness), quantizes and writes them in order, so the output is the same whatever the
/// scheduling.
///
/// The file is written under a temporary name in the output's folder and renamed over the output
/// only when complete: an interrupted or failed render leaves no partial file behind.
///
/// ```swift
/// let summary = try OfflineRenderer.render(
///   plan, range: FrameRange(start: 0, count: plan.end.frames), to: "mix.wav",
///   settings: RenderSettings(format: .wav, sampleFormat: .int24, dither: false))
/// ```
public enum OfflineRenderer {
  /// Frames per block handed to one render task.
  static let blockFrames = 16_384
  /// Blocks per batch: a batch is rendered in parallel, then written while the next renders.
  static let batchBlocks = 8

  /// Renders `range` of `plan` into `path`.
  ///
  /// - Parameters:
  ///   - progress: called on the calling thread after each batch with the frames done so far.
  ///   - isCancelled: polled between batches; when it returns true the render stops, the
  ///     temporary file is removed and ``AudioFileError/cancelled(path:)`` is thrown.
  public static func render(
    _ plan: RenderPlan, range: FrameRange, to path: String, settings: RenderSettings,
    progress: (Int64) -> Void = { _ in }, isCancelled: () -> Bool = { false }
  ) throws(AudioFileError) -> RenderSummary {
    let clock = ContinuousClock.now
    guard settings.format.sampleFormats.contains(settings.sampleFormat) else {
      throw .unsupportedOutput(
        format: settings.format.description, detail: settings.sampleFormat.description)
    }
    let temporary = temporaryPath(for: path)
    let writer = try SndfileWriter(
      path: temporary, format: settings.format, sampleFormat: settings.sampleFormat,
      sampleRate: plan.sampleRate, channels: plan.outputChannels)
    var renamed = false
    defer { if !renamed { unlink(temporary) } }

    let sink = BatchSink(
      writer: writer, settings: settings, sampleRate: plan.sampleRate,
      channels: plan.outputChannels)
    let channels = plan.outputChannels
    let batchSamples = blockFrames * batchBlocks * channels
    // Two batch buffers: one being rendered, one being written.
    let buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: batchSamples) }
    defer { for buffer in buffers { buffer.deallocate() } }
    let writerQueue = DispatchQueue(label: "tape.render.writer")
    let written = DispatchSemaphore(value: 2)
    let view = plan.view

    var position = range.start.frames
    let end = range.end.frames
    var batch = 0
    var failure: AudioFileError?
    while position < end {
      if isCancelled() {
        failure = .cancelled(path: path)
        break
      }
      written.wait()
      if let error = sink.error {
        failure = error
        written.signal()
        break
      }
      let buffer = buffers[batch % 2]
      let frames = Int(min(Int64(blockFrames * batchBlocks), end - position))
      let blocks = (frames + blockFrames - 1) / blockFrames
      let start = position
      nonisolated(unsafe) let target = buffer
      DispatchQueue.concurrentPerform(iterations: blocks) { block in
        let offset = block * blockFrames
        RenderKernel.render(
          view, from: start + Int64(offset), frames: min(blockFrames, frames - offset),
          into: target + offset * channels)
      }
      writerQueue.async {
        sink.consume(target, frames: frames)
        written.signal()
      }
      position += Int64(frames)
      batch += 1
      progress(position - range.start.frames)
    }
    writerQueue.sync {}
    withExtendedLifetime(plan) {}
    if let failure = failure ?? sink.error { throw failure }
    try writer.close()
    guard rename(temporary, path) == 0 else {
      throw .cannotCreate(path: path, detail: String(cString: strerror(errno)))
    }
    renamed = true
    return RenderSummary(
      frames: range.count.frames, sampleRate: plan.sampleRate, channels: channels,
      peak: Double(sink.peak), loudness: sink.meter.integratedLoudness,
      clippedSamples: sink.clipped, seconds: (ContinuousClock.now - clock).seconds)
  }

  /// `dir/mix.wav` → `dir/.mix.wav.partial-<pid>`: same folder, so the final rename is atomic.
  static func temporaryPath(for path: String) -> String {
    let url = URL(fileURLWithPath: path)
    let folder = url.deletingLastPathComponent().path
    return "\(folder)/.\(url.lastPathComponent).partial-\(getpid())"
  }
}

/// The writer side of a render: measures, quantizes and writes batches in order.
///
/// Used by one serial queue at a time; the render loop reads its results only after the queue
/// has drained, so the unchecked Sendable is upheld by that hand-off.
private final class BatchSink: @unchecked Sendable {
  let writer: SndfileWriter
  let channels: Int
  var meter: LoudnessMeter
  var quantizer: Quantizer?
  var peak: Float = 0
  var clipped = 0
  var error: AudioFileError?
  private var integers: UnsafeMutablePointer<Int32>?

  init(writer: SndfileWriter, settings: RenderSettings, sampleRate: Int, channels: Int) {
    self.writer = writer
    self.channels = channels
    meter = LoudnessMeter(sampleRate: sampleRate, channels: channels)
    if let bits = settings.sampleFormat.integerBits {
      quantizer = Quantizer(bits: bits, dither: settings.dither, seed: 0x5441_5045)
      integers = .allocate(
        capacity: OfflineRenderer.blockFrames * OfflineRenderer.batchBlocks * channels)
    }
  }

  deinit {
    integers?.deallocate()
  }

  func consume(_ samples: UnsafeMutablePointer<Float>, frames: Int) {
    guard error == nil else { return }
    let count = frames * channels
    var batchPeak: Float = 0
    for i in 0..<count { batchPeak = max(batchPeak, abs(samples[i])) }
    peak = max(peak, batchPeak)
    meter.process(samples, frames: frames)
    do {
      if var quantizer, let integers {
        clipped += quantizer.quantize(samples, count: count, into: integers)
        self.quantizer = quantizer
        try writer.write(integers, frames: frames)
      } else {
        try writer.write(UnsafePointer(samples), frames: frames)
      }
    } catch {
      self.error = error
    }
  }
}

extension Duration {
  var seconds: Double {
    let (whole, fraction) = components
    return Double(whole) + Double(fraction) * 1e-18
  }
}
