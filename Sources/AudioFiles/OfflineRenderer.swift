import Dispatch
import Foundation
public import Mixing
public import SafeFiles
import Synchronization
public import Timeline

/// What a render should write: container, sample format and whether to dither.
public struct RenderSettings: Sendable {
  public var format: ExportFormat
  public var sampleFormat: SampleFormat
  /// TPDF dither before quantizing to integers (ignored for float output).
  public var dither: Bool
  /// A linear gain applied to the whole mix before it is measured, quantized and written
  /// (the loudness normalisation's; 1 leaves the mix as it is).
  public var gain: Double
  /// What the encoder is asked for: bit rate and tags (ignored where the format has none).
  public var encoding: EncoderSettings

  public init(
    format: ExportFormat, sampleFormat: SampleFormat, dither: Bool, gain: Double = 1,
    encoding: EncoderSettings = EncoderSettings()
  ) {
    self.format = format
    self.sampleFormat = sampleFormat
    self.dither = dither
    self.gain = gain
    self.encoding = encoding
  }
}

/// How a render ends after its range: where its effects ring out.
///
/// The clips stop at the range's end, but a reverb or a delay on a track or the master still
/// sounds after its input stops: its echo is part of the mix. A render of a plan with effects
/// feeds them silence past the range and writes what they give out, for a fixed length or until
/// they have rung out. A plan without effects has nothing to ring: a ring-out tail is empty
/// there, so it renders exactly the range (a fixed tail is written as asked, in silence).
///
/// ```swift
/// let tail = RenderTail.ringOut(sampleRate: 48_000)  // −90 dBFS for 1 s, at most 30 s
/// let summary = try OfflineRenderer.render(
///   plan, audio: audio, range: range, to: destination, settings: settings, tail: tail)
/// summary.tailFrames  // where the output fell quiet, after the range
/// ```
public enum RenderTail: Sendable, Equatable, Hashable {
  /// Exactly this many frames after the range (0: none).
  case fixed(Int64)
  /// Until the output (after the render's gain) stays under `threshold` (linear, 1 = 0 dBFS)
  /// for `quiet` frames, and at most `limit` frames: the render ends at the first frame of that
  /// quiet stretch, or after `limit` frames with ``RenderSummary/tailReachedLimit`` set.
  case ringOut(threshold: Float, quiet: Int64, limit: Int64)

  /// No tail: the render ends with its range.
  public static let none = RenderTail.fixed(0)

  /// Tape's rule: rung out when the output stays under −90 dBFS for a second, at most 30 s.
  ///
  /// Why a second of quiet and not less: a feedback delay's repeats are separated by silence
  /// as long as its delay time less the echo's length, so a shorter window would end the
  /// render between two repeats (a 500 ms delay on a clip whose last 200 ms are quiet stops
  /// after its first repeat with a 100 ms window). Rendering the window costs a second of
  /// effect processing; it is not written.
  public static func ringOut(sampleRate: Int) -> RenderTail {
    .ringOut(
      threshold: Float(pow(10, -90.0 / 20)), quiet: Int64(sampleRate),
      limit: Int64(sampleRate) * 30)
  }

  /// Whether its length depends on what the effects give out.
  public var ringsOut: Bool {
    if case .ringOut = self { return true }
    return false
  }

  /// The most frames this tail can add.
  public var maximumFrames: Int64 {
    switch self {
    case .fixed(let frames): max(0, frames)
    case .ringOut(_, _, let limit): max(0, limit)
    }
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
  /// Loudness range (EBU Tech 3342) in LU; 0 for less than 3 s or silence.
  public var loudnessRange: Double = 0
  /// The true peak (ITU-R BS.1770-4 Annex 2, 4× oversampled) of the mix as written, before
  /// any clamping (1.0 = 0 dBTP).
  public var truePeak: Double = 0
  /// The rate of the file written, when the format needed another than the project's (Opus
  /// at 44.1 kHz is written at 48 kHz); nil when it is ``sampleRate``.
  public var fileSampleRate: Int?
  /// Samples clamped to the integer range, and samples that were not finite (counted in any
  /// output format).
  public var clippedSamples: Int
  /// Samples the mix made infinite or NaN (a huge float source at a high gain), written as
  /// silence: counted in ``clippedSamples`` too.
  public var nonFiniteSamples: Int = 0
  /// The frame (from the start of the render) of the first of them; nil when there are none.
  public var firstNonFiniteFrame: Int64?
  /// Wall-clock seconds spent rendering and writing.
  public var seconds: Double
  /// Frames rendered after the range's end for the effects to ring out (see ``RenderTail``);
  /// counted in ``frames``.
  public var tailFrames: Int64 = 0
  /// Whether a ``RenderTail/ringOut(threshold:quiet:limit:)`` tail stopped at its limit with
  /// the output still above the threshold (an effect that never falls silent).
  public var tailReachedLimit = false
  /// Frames fed to the effects before the range and dropped (see ``RenderTail``'s preroll).
  public var prerollFrames: Int64 = 0

  /// The peak in dBFS (`-infinity` for silence).
  public var peakDecibels: Double { 20 * log10(peak) }
  /// The true peak in dBTP (`-infinity` for silence).
  public var truePeakDecibels: Double { 20 * log10(truePeak) }
  public var durationSeconds: Double { Double(frames) / Double(sampleRate) }
  /// How many seconds of audio were rendered per second of wall time.
  public var realtimeFactor: Double { seconds > 0 ? durationSeconds / seconds : .infinity }
}

/// Renders a plan to an audio file, using both cores: render tasks mix, measure the peak of and
/// quantize blocks in parallel, while one thread K-weights them for the loudness meter and
/// another writes them, in order. Every block is computed the same way whatever the scheduling
/// (dither is seeded by the block's index), so the output is the same bytes on every run.
///
/// The output is written through ``/SafeFiles/SafeOutput``: a file appears under its name only
/// when complete (an interrupted or failed render leaves nothing behind), and a device, a FIFO
/// or standard output is written as a stream (WAV and AIFF with Tape's own final header, see
/// `PCMStreamWriter`; FLAC and Ogg through libsndfile's virtual I/O).
///
/// ```swift
/// let summary = try OfflineRenderer.render(
///   plan, range: FrameRange(start: 0, count: plan.end.frames),
///   to: try OutputDestination.resolve("mix.wav"),
///   settings: RenderSettings(format: .wav, sampleFormat: .int24, dither: false))
/// ```
public enum OfflineRenderer {
  /// Frames per block handed to one render task.
  static let blockFrames = 16_384
  /// Blocks per batch: a batch is rendered in parallel, then measured and written while the
  /// next one renders.
  static let batchBlocks = 8

  /// Renders `range` of `plan` into `destination`.
  ///
  /// - Parameters:
  ///   - plan: what to render.
  ///   - audio: the decoded audio `plan` was compiled from, whose chunks are read as needed.
  ///   - range: the timeline frames to render.
  ///   - destination: where the output goes (see ``/SafeFiles/OutputDestination``).
  ///   - settings: the container, sample format, dither and gain.
  ///   - progress: called on the calling thread after each batch with the frames done so far.
  ///   - isCancelled: polled between batches; when it returns true the render stops, the
  ///     unfinished file is dropped and ``AudioFileError/cancelled(path:)`` is thrown.
  ///   - preroll: frames before the range fed to the effects and dropped, so that they enter
  ///     the range warmed up as in a render from further back (at most `range.start`).
  ///   - tail: how far past the range the effects ring out (a plan without effects has none).
  ///     A ``RenderTail/ringOut(threshold:quiet:limit:)`` tail's length is not known before
  ///     it is rendered: a WAV or AIFF stream, whose header says its length first, needs a
  ///     fixed one (measure first, then render with ``RenderTail/fixed(_:)``).
  public static func render(
    _ plan: RenderPlan, audio: ProjectAudio, range: FrameRange, to destination: OutputDestination,
    settings: RenderSettings, preroll: Int64 = 0, tail: RenderTail = .none,
    progress: (Int64) -> Void = { _ in }, isCancelled: () -> Bool = { false }
  ) throws(AudioFileError) -> RenderSummary {
    let tail = plan.view.graph == nil && tail.ringsOut ? RenderTail.none : tail
    let clock = ContinuousClock.now
    guard settings.format.sampleFormats.contains(settings.sampleFormat) else {
      throw .unsupportedOutput(
        format: settings.format.description, detail: settings.sampleFormat.description)
    }
    let bytes =
      (range.count.frames + tail.maximumFrames)
      * Int64(plan.outputChannels * settings.sampleFormat.bytes)
    if let limit = settings.format.maximumDataBytes, bytes > limit {
      throw .tooLong(
        format: settings.format.description, bytes: bytes, limit: limit)
    }
    let output: SafeOutput
    let writer: any SampleWriter
    do {
      output = try SafeOutput(destination)
    } catch {
      throw .output(error)
    }
    if output.destination.isStream && (settings.format == .wav || settings.format == .aiff) {
      guard case .fixed(let tailFrames) = tail else {
        throw .unsupportedOutput(
          format: settings.format.description,
          detail: "a stream of unknown length (a tail that rings out); give the tail a length")
      }
      writer = try PCMStreamWriter(
        output: output, format: settings.format, sampleFormat: settings.sampleFormat,
        sampleRate: plan.sampleRate, channels: plan.outputChannels,
        frames: range.count.frames + max(0, tailFrames))
    } else {
      writer = try SndfileWriter(
        output: output, format: settings.format, sampleFormat: settings.sampleFormat,
        sampleRate: plan.sampleRate, channels: plan.outputChannels, encoding: settings.encoding)
    }
    var summary = try mix(
      plan, audio: audio, range: range, into: writer, settings: settings, preroll: preroll,
      tail: tail, progress: progress, isCancelled: isCancelled, path: destination.path)
    try writer.close()
    do {
      try output.commit()
    } catch {
      throw .output(error)
    }
    summary.fileSampleRate = (writer as? SndfileWriter)?.resampledRate
    summary.seconds = (ContinuousClock.now - clock).seconds
    return summary
  }

  /// Renders and measures `range` of `plan` without writing anything: the first pass of a
  /// loudness-normalised render, which learns the gain (and whether the true peak would pass
  /// the ceiling) before a byte is written. `gain` (linear) is applied as in
  /// ``render(_:audio:range:to:settings:preroll:tail:progress:isCancelled:)``.
  public static func measure(
    _ plan: RenderPlan, audio: ProjectAudio, range: FrameRange, gain: Double = 1,
    preroll: Int64 = 0, tail: RenderTail = .none,
    progress: (Int64) -> Void = { _ in }, isCancelled: () -> Bool = { false }
  ) throws(AudioFileError) -> RenderSummary {
    let clock = ContinuousClock.now
    let settings = RenderSettings(format: .wav, sampleFormat: .float32, dither: false, gain: gain)
    var summary = try mix(
      plan, audio: audio, range: range, into: nil, settings: settings, preroll: preroll,
      tail: plan.view.graph == nil && tail.ringsOut ? .none : tail, progress: progress,
      isCancelled: isCancelled, path: "the measuring pass")
    summary.seconds = (ContinuousClock.now - clock).seconds
    return summary
  }

  /// The render loop: mixes, measures and (given a writer) writes `range` of `plan`.
  private static func mix(
    _ plan: RenderPlan, audio: ProjectAudio, range: FrameRange, into writer: (any SampleWriter)?,
    settings: RenderSettings, preroll requested: Int64, tail: RenderTail,
    progress: (Int64) -> Void, isCancelled: () -> Bool, path: String
  ) throws(AudioFileError) -> RenderSummary {
    let channels = plan.outputChannels
    let batchFrames = Int64(blockFrames * batchBlocks)
    // A tail that rings out holds back the batches after its last loud frame until it knows
    // where it ends: as many more as its quiet window spans, and one.
    var held = 0
    if case .ringOut(_, let quiet, _) = tail {
      held = Int((quiet + batchFrames - 1) / batchFrames) + 1
    }
    // Four batches in flight: one rendering while up to three wait to be measured and written.
    let slots = (0..<4 + held).map { _ in
      Batch(capacity: blockFrames * batchBlocks, channels: channels, settings: settings)
    }
    let sink = try Sink(writer: writer, sampleRate: plan.sampleRate, channels: channels)
    let writeQueue = DispatchQueue(label: "tape.render.write")
    // The loudness meter and the true-peak meter are serial each, and independent: each on
    // its own queue, so neither waits for the other.
    let meterQueue = DispatchQueue(label: "tape.render.loudness")
    // The true peak: one meter and one queue per channel (it filters each channel on its own).
    let truePeakQueues = (0..<channels).map { DispatchQueue(label: "tape.render.true-peak.\($0)") }
    let view = plan.view
    let loader = ChunkLoader(plan: plan, audio: audio)

    var position = range.start.frames
    let rangeEnd = range.end.frames
    var end = rangeEnd + tail.maximumFrames
    // Ringing out: the frame after the last one at or over the threshold past the range, and
    // the rendered batches not yet handed on (each may hold the tail's end).
    var rungOut = rangeEnd
    var decided = true
    var reachedLimit = false
    if tail.ringsOut { decided = false }
    var pending: [Batch] = []
    var batchIndex = 0
    var failure: AudioFileError?
    // A plan with effects is rendered block after block (effects keep state), fed `shift`
    // frames ahead of what is written: the first `shift` frames out are the effects' latency,
    // rendered here and dropped, so the file lines up with the timeline. Before them, the
    // preroll: frames before the range, rendered and dropped, that warm the effects up.
    let shift = Int64(plan.latency)
    let preroll = view.graph == nil ? 0 : max(0, min(requested, position))
    if shift + preroll > 0 {
      let dropped = UnsafeMutablePointer<Float>.allocate(
        capacity: EffectRack.offlineFrames * channels)
      defer { dropped.deallocate() }
      var fed = position - preroll
      while fed < position + shift {
        let count = Int(min(Int64(EffectRack.offlineFrames), position + shift - fed))
        loader.prefetch(fed..<fed + Int64(count))
        if let error = loader.wait() { throw error }
        EffectKernel.render(
          view, from: fed, frames: count, maximumFrames: EffectRack.offlineFrames,
          into: dropped)
        fed += Int64(count)
      }
    }
    loader.prefetch(position + shift..<min(end, position + batchFrames) + shift)
    // Hands a rendered batch to the writer and the meters (cut at the tail's end, once known).
    func dispatch(_ batch: Batch) {
      if decided { batch.frames = Int(max(0, min(Int64(batch.frames), end - batch.from))) }
      guard batch.frames > 0 else { return }
      for _ in 0..<2 + truePeakQueues.count { batch.done.enter() }
      writeQueue.async {
        sink.write(batch)
        batch.done.leave()
      }
      meterQueue.async {
        sink.measureLoudness(batch)
        batch.done.leave()
      }
      for (channel, queue) in truePeakQueues.enumerated() {
        queue.async {
          sink.measureTruePeak(batch, channel: channel)
          batch.done.leave()
        }
      }
    }
    while position < end {
      if isCancelled() {
        failure = .cancelled(path: path)
        break
      }
      let batch = slots[batchIndex % slots.count]
      batch.done.wait()
      if let error = sink.error {
        failure = error
        break
      }
      let frames = Int(min(Int64(blockFrames * batchBlocks), end - position))
      let firstBlock = Int((position - range.start.frames) / Int64(blockFrames))
      let batchRange = position..<position + Int64(frames)
      if let error = loader.wait() {
        failure = error
        break
      }
      // The next batch's audio is read while this one renders.
      if batchRange.upperBound < end {
        loader.prefetch(
          batchRange.upperBound + shift..<min(end, batchRange.upperBound + batchFrames) + shift)
      }
      let missing = batch.render(
        view, twin: plan.twinView, from: position + shift, frames: frames,
        firstBlock: firstBlock)
      precondition(missing == 0, "rendered \(missing) frames whose audio was not read")
      batch.from = position
      loader.release(before: batchRange.upperBound + shift)
      if !decided, case .ringOut(let threshold, let quiet, _) = tail {
        if batchRange.upperBound > rangeEnd {
          let first = max(position, rangeEnd)
          if let loud = batch.lastFrame(atOrOver: threshold, from: Int(first - position)) {
            rungOut = position + Int64(loud) + 1
          }
        }
        if batchRange.upperBound - rungOut >= quiet {
          decided = true
          end = rungOut
        } else if batchRange.upperBound >= end {
          decided = true
          reachedLimit = true
        }
      }
      pending.append(batch)
      // A batch wholly before the last loud frame is written whatever the tail's end.
      while let first = pending.first, decided || first.from + Int64(first.frames) <= rungOut {
        pending.removeFirst()
        dispatch(first)
      }
      position += Int64(frames)
      batchIndex += 1
      progress(position - range.start.frames)
    }
    if failure == nil {
      decided = true
      for batch in pending { dispatch(batch) }
    }
    for batch in slots { batch.done.wait() }
    _ = loader.wait()
    withExtendedLifetime(plan) {}
    if let failure = failure ?? sink.error { throw failure }
    for meter in sink.truePeaks { try meter.finish() }
    let written = max(end, rangeEnd) - range.start.frames
    return RenderSummary(
      frames: written, sampleRate: plan.sampleRate, channels: channels,
      peak: Double(sink.peak), loudness: sink.meter.integratedLoudness,
      loudnessRange: sink.meter.loudnessRange,
      truePeak: Double(max(sink.peak, sink.truePeaks.map(\.peak).max() ?? 0)),
      clippedSamples: sink.clipped + sink.nonFinite, nonFiniteSamples: sink.nonFinite,
      firstNonFiniteFrame: sink.firstNonFinite.map { $0 - range.start.frames }, seconds: 0,
      tailFrames: max(end, rangeEnd) - rangeEnd, tailReachedLimit: reachedLimit,
      prerollFrames: preroll)
  }
}

/// Reads the decoded audio a render needs into memory, one batch ahead, on its own queue (a
/// batch's new chunks on two threads, see ``ProjectAudio/makeResident(_:range:)``), and lets
/// each chunk go after the last batch that reads it.
///
/// A chunk is read once per render (kept until its last read rather than re-read each time a
/// clip comes back to it: a copy from the page cache costs more here than holding the memory),
/// and reading overlaps rendering. Memory is recycled through ``ChunkPool``.
private final class ChunkLoader: @unchecked Sendable {
  private let plan: RenderPlan
  private let audio: ProjectAudio
  private let queue = DispatchQueue(label: "tape.render.load")
  private let done = DispatchGroup()
  /// For each of the plan's sources, for each chunk, the frame after which nothing reads it.
  private let lastReads: [[Int64]]
  /// Written on `queue`, read after `done` is waited for.
  private var failure: AudioFileError?

  init(plan: RenderPlan, audio: ProjectAudio) {
    self.plan = plan
    self.audio = audio
    lastReads = plan.lastReads()
  }

  /// Starts reading the chunks that rendering `range` needs.
  func prefetch(_ range: Range<Int64>) {
    done.enter()
    queue.async { [self] in
      defer { done.leave() }
      guard failure == nil else { return }
      do throws(AudioFileError) {
        try audio.makeResident(plan, range: range)
      } catch {
        failure = error
      }
    }
  }

  /// Waits for the reads started so far; returns their failure, if any.
  func wait() -> AudioFileError? {
    done.wait()
    return failure
  }

  /// Lets go of every chunk that no frame from `frame` on reads.
  func release(before frame: Int64) {
    for (index, source) in plan.sources.enumerated() {
      for chunk in source.residentChunks where lastReads[index][chunk] <= frame {
        source.evict(chunk)
      }
    }
  }
}

/// One batch of blocks: the mixed floats, their integer form, and per-block peak and clip counts.
///
/// Filled by parallel render tasks (each touching only its own block's ranges), then read by
/// the write and loudness threads; `done` orders the hand-offs, which is what makes the
/// unchecked Sendable hold.
private final class Batch: @unchecked Sendable {
  let channels: Int
  let floats: UnsafeMutablePointer<Float>
  let integers: UnsafeMutablePointer<Int32>?
  let bits: Int?
  let dither: Bool
  /// The mix's gain (1: none), applied before anything else reads the block.
  let gain: Float
  var frames = 0
  /// Per block (raw memory: render tasks write their own elements concurrently).
  let peaks = UnsafeMutableBufferPointer<Float>.allocate(capacity: OfflineRenderer.batchBlocks)
  let clipped = UnsafeMutableBufferPointer<Int>.allocate(capacity: OfflineRenderer.batchBlocks)
  /// Per block: samples that were not finite, and the first one's index in the block (or -1).
  let nonFinite = UnsafeMutableBufferPointer<Int>.allocate(capacity: OfflineRenderer.batchBlocks)
  let firstNonFinite = UnsafeMutableBufferPointer<Int>.allocate(
    capacity: OfflineRenderer.batchBlocks)
  /// The frame the batch starts at.
  var from: Int64 = 0
  /// Entered once by each consumer of the batch; waited on before the batch is reused.
  let done = DispatchGroup()

  init(capacity: Int, channels: Int, settings: RenderSettings) {
    self.channels = channels
    floats = .allocate(capacity: capacity * channels)
    bits = settings.sampleFormat.integerBits
    dither = settings.dither
    gain = Float(settings.gain)
    integers = bits == nil ? nil : .allocate(capacity: capacity * channels)
    peaks.initialize(repeating: 0)
    clipped.initialize(repeating: 0)
    nonFinite.initialize(repeating: 0)
    firstNonFinite.initialize(repeating: -1)
  }

  deinit {
    floats.deallocate()
    integers?.deallocate()
    peaks.deallocate()
    clipped.deallocate()
    nonFinite.deallocate()
    firstNonFinite.deallocate()
  }

  /// Mixes `frames` frames from `from`, in blocks rendered in parallel; `firstBlock` is the
  /// index of the first block from the start of the render, which seeds its dither. Returns the
  /// frames whose source chunks were not resident.
  func render(
    _ view: PlanView, twin: PlanView?, from: Int64, frames: Int, firstBlock: Int
  ) -> Int {
    self.frames = frames
    self.from = from
    let blockFrames = OfflineRenderer.blockFrames
    let blocks = (frames + blockFrames - 1) / blockFrames
    // Each task touches only its own block's elements of these buffers.
    nonisolated(unsafe) let (floats, integers, peaks, clipped) = (floats, integers, peaks, clipped)
    nonisolated(unsafe) let (nonFinite, firstNonFinite) = (nonFinite, firstNonFinite)
    let (channels, bits, dither, gain) = (channels, bits, dither, gain)
    peaks.update(repeating: 0)
    clipped.update(repeating: 0)
    nonFinite.update(repeating: 0)
    firstNonFinite.update(repeating: -1)
    let missing = Atomic<Int>(0)
    /// What follows the mix of a block: gain, non-finite samples, peak, integers.
    @Sendable func finishBlock(_ block: Int) {
      let offset = block * blockFrames
      let count = min(blockFrames, frames - offset)
      let samples = floats + offset * channels
      if gain != 1 {
        for i in 0..<count * channels { samples[i] *= gain }
      }
      // Infinity and NaN never reach a file, the meter or the peak.
      let (silenced, first) = NonFinite.silence(samples, count: count * channels)
      nonFinite[block] = silenced
      firstNonFinite[block] = first.map { offset + $0 / channels } ?? -1
      peaks[block] = Peak.of(samples, count: count * channels)
      if let bits, let integers {
        var quantizer = Quantizer(
          bits: bits, dither: dither, seed: 0x5441_5045 &+ UInt64(firstBlock + block))
        clipped[block] = quantizer.quantize(
          samples, count: count * channels, into: integers + offset * channels)
      }
    }
    if let twin, let graph = view.graph?.pointee, let twinGraph = twin.graph?.pointee {
      // Effects keep state from piece to piece: their chains run on the pieces in order, on
      // this thread, while the next piece's clips are mixed beside them into the twin's
      // buffers (the two views take turns).
      let piece = EffectRack.offlineFrames
      let pieces = (frames + piece - 1) / piece
      @Sendable func mix(_ index: Int) {
        let offset = index * piece
        missing.add(
          RenderKernel.render(
            index % 2 == 0 ? view : twin, from: from + Int64(offset),
            frames: min(piece, frames - offset), into: floats + offset * channels),
          ordering: .relaxed)
      }
      @Sendable func chains(_ index: Int) {
        let offset = index * piece
        EffectKernel.finish(
          index % 2 == 0 ? graph : twinGraph, frames: min(piece, frames - offset),
          channels: channels, into: floats + offset * channels, clearing: false,
          at: from + Int64(offset))
      }
      mix(0)
      for index in 0..<pieces {
        guard index + 1 < pieces else {
          chains(index)
          break
        }
        DispatchQueue.concurrentPerform(iterations: 2) { task in
          if task == 0 { chains(index) } else { mix(index + 1) }
        }
      }
      DispatchQueue.concurrentPerform(iterations: blocks) { finishBlock($0) }
      return missing.load(ordering: .relaxed)
    }
    // A plan without effects mixes its blocks in parallel; one with effects but no twin (not
    // made for a render) in order, on this thread.
    let sequential = view.graph != nil
    DispatchQueue.concurrentPerform(iterations: sequential ? 1 : blocks) { task in
      for block in sequential ? 0..<blocks : task..<task + 1 {
        let offset = block * blockFrames
        missing.add(
          EffectKernel.render(
            view, from: from + Int64(offset), frames: min(blockFrames, frames - offset),
            maximumFrames: EffectRack.offlineFrames, into: floats + offset * channels),
          ordering: .relaxed)
        finishBlock(block)
      }
    }
    return missing.load(ordering: .relaxed)
  }
}

extension Batch {
  /// The last frame, from `first` on, with a sample whose magnitude reaches `threshold`.
  func lastFrame(atOrOver threshold: Float, from first: Int) -> Int? {
    var frame = frames - 1
    while frame >= first {
      for channel in 0..<channels where abs(floats[frame * channels + channel]) >= threshold {
        return frame
      }
      frame -= 1
    }
    return nil
  }
}

enum NonFinite {
  /// Replaces every infinite or NaN sample among `count` with 0; returns how many there were
  /// and the index of the first.
  ///
  /// Eight samples at a time look for an exponent of all ones (what infinity and NaN share);
  /// only a run that has one is gone through sample by sample.
  static func silence(_ samples: UnsafeMutablePointer<Float>, count: Int) -> (Int, Int?) {
    let raw = UnsafeRawPointer(samples)
    let exponent = SIMD8<UInt32>(repeating: 0x7F80_0000)
    var i = 0
    while i + 8 <= count {
      let bits = raw.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<UInt32>.self)
      if any(bits & exponent .== exponent) { break }
      i += 8
    }
    var found = 0
    var first: Int?
    while i < count {
      if !samples[i].isFinite {
        samples[i] = 0
        found += 1
        if first == nil { first = i }
      }
      i += 1
    }
    return (found, first)
  }
}

enum Peak {
  /// The largest magnitude among `count` samples, eight at a time.
  static func of(_ samples: UnsafePointer<Float>, count: Int) -> Float {
    var high = SIMD8<Float>.zero
    var low = SIMD8<Float>.zero
    let raw = UnsafeRawPointer(samples)
    var i = 0
    while i + 8 <= count {
      let v = raw.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
      high.replace(with: v, where: v .> high)
      low.replace(with: v, where: v .< low)
      i += 8
    }
    var peak = max(high.max(), -low.min())
    while i < count {
      peak = max(peak, abs(samples[i]))
      i += 1
    }
    return peak
  }
}

/// The serial side of a render: the writer, the loudness meter and the true-peak meter, each
/// on its own queue.
///
/// `write` runs only on the write queue, `measureLoudness` only on the loudness queue and
/// `measureTruePeak` for each channel only on that channel's true-peak queue; the render loop
/// reads their results after the queues have drained.
private final class Sink: @unchecked Sendable {
  let writer: (any SampleWriter)?
  var meter: LoudnessMeter
  /// One per channel; the true peak is the largest of theirs and the sample peak.
  let truePeaks: [TruePeakMeter]
  var peak: Float = 0
  var clipped = 0
  var nonFinite = 0
  /// The frame of the first sample that was not finite.
  var firstNonFinite: Int64?
  /// Set by the write queue, read by the render loop between batches.
  private let failure = Mutex<AudioFileError?>(nil)
  var error: AudioFileError? { failure.withLock { $0 } }

  init(writer: (any SampleWriter)?, sampleRate: Int, channels: Int) throws(AudioFileError) {
    self.writer = writer
    meter = LoudnessMeter(sampleRate: sampleRate, channels: channels)
    var meters: [TruePeakMeter] = []
    for _ in 0..<channels { meters.append(try TruePeakMeter(sampleRate: sampleRate, channels: 1)) }
    truePeaks = meters
  }

  func write(_ batch: Batch) {
    peak = max(peak, batch.peaks.max() ?? 0)
    clipped += batch.clipped.reduce(0, +)
    nonFinite += batch.nonFinite.reduce(0, +)
    if firstNonFinite == nil, let first = batch.firstNonFinite.first(where: { $0 >= 0 }) {
      firstNonFinite = batch.from + Int64(first)
    }
    guard error == nil, let writer else { return }
    do {
      if let integers = batch.integers {
        try writer.write(integers, frames: batch.frames)
      } else {
        try writer.write(batch.floats, frames: batch.frames)
      }
    } catch {
      failure.withLock { $0 = error }
    }
  }

  func measureLoudness(_ batch: Batch) {
    meter.process(batch.floats, frames: batch.frames)
  }

  /// Oversamples one channel of the batch (its sample peak is counted by ``write(_:)``).
  func measureTruePeak(_ batch: Batch, channel: Int) {
    do {
      try truePeaks[channel].process(
        batch.floats, frames: batch.frames, channel: channel, of: batch.channels)
    } catch {
      failure.withLock { $0 = $0 ?? error }
    }
  }
}

extension Duration {
  var seconds: Double {
    let (whole, fraction) = components
    return Double(whole) + Double(fraction) * 1e-18
  }
}

extension OfflineRenderer {
  /// Renders a range of a plan into memory, block after block, computing every block exactly
  /// as ``render(_:audio:range:to:settings:preroll:tail:progress:isCancelled:)`` does for the same
  /// range
  /// (the same blocks from the range's start, the same effects' latency preroll, non-finite
  /// samples silenced), without the gain, measuring or writing: what `tape compare` reads two
  /// versions through, side by side, a block of each at a time.
  ///
  /// Without effects a frame's value does not depend on where the range starts, so a range
  /// renders the frames a whole render has there; with effects it does (they start afresh at
  /// the range's start), and only a range from 0 equals the whole render.
  ///
  /// ```swift
  /// let stream = try OfflineRenderer.RangeStream(plan, audio: audio, range: range)
  /// let block = UnsafeMutablePointer<Float>.allocate(
  ///   capacity: OfflineRenderer.RangeStream.blockFrames * plan.outputChannels)
  /// while case let frames = try stream.next(into: block), frames > 0 { … }
  /// ```
  public final class RangeStream {
    /// The most frames one ``next(into:)`` renders.
    public static let blockFrames = OfflineRenderer.blockFrames

    private let plan: RenderPlan
    private let audio: ProjectAudio
    private let view: PlanView
    private let end: Int64
    private let shift: Int64
    private let lastReads: [[Int64]]
    private var position: Int64

    /// `preroll`: frames before the range fed to the effects and dropped, as a render's.
    public init(
      _ plan: RenderPlan, audio: ProjectAudio, range: FrameRange, preroll: Int64 = 0
    )
      throws(AudioFileError)
    {
      self.plan = plan
      self.audio = audio
      view = plan.view
      position = range.start.frames
      end = range.end.frames
      shift = Int64(plan.latency)
      lastReads = plan.lastReads()
      let preroll = view.graph == nil ? 0 : max(0, min(preroll, position))
      guard shift + preroll > 0 else { return }
      // As the render does: the preroll and the effects' latency, rendered and dropped.
      let dropped = UnsafeMutablePointer<Float>.allocate(
        capacity: EffectRack.offlineFrames * plan.outputChannels)
      defer { dropped.deallocate() }
      var fed = position - preroll
      while fed < position + shift {
        let count = Int(min(Int64(EffectRack.offlineFrames), position + shift - fed))
        try audio.makeResident(plan, range: fed..<fed + Int64(count))
        EffectKernel.render(
          view, from: fed, frames: count, maximumFrames: EffectRack.offlineFrames, into: dropped)
        fed += Int64(count)
      }
    }

    /// Renders the next block (``blockFrames`` at most) into `samples` (interleaved, room for
    /// ``blockFrames`` frames); returns how many frames it rendered, 0 at the end of the range.
    public func next(into samples: UnsafeMutablePointer<Float>) throws(AudioFileError) -> Int {
      guard position < end else { return 0 }
      let count = Int(min(Int64(Self.blockFrames), end - position))
      let from = position + shift
      try audio.makeResident(plan, range: from..<from + Int64(count))
      let missing = EffectKernel.render(
        view, from: from, frames: count, maximumFrames: EffectRack.offlineFrames, into: samples)
      precondition(missing == 0, "rendered \(missing) frames whose audio was not read")
      _ = NonFinite.silence(samples, count: count * plan.outputChannels)
      position += Int64(count)
      for (index, source) in plan.sources.enumerated() {
        for chunk in source.residentChunks where lastReads[index][chunk] <= position + shift {
          source.evict(chunk)
        }
      }
      return count
    }
  }

  /// Writes `frames` interleaved float frames, which `fill` provides a block at a time (its
  /// buffer, the frames wanted), to `destination` as 32-bit float WAV or AIFF: a file appears
  /// only when complete, as a render's does. What `tape compare -o` writes the difference with.
  public static func writeFloats(
    frames: Int64, sampleRate: Int, channels: Int, format: ExportFormat,
    to destination: OutputDestination,
    fill: (UnsafeMutablePointer<Float>, Int) throws -> Void
  ) throws {
    guard format == .wav || format == .aiff else {
      throw AudioFileError.unsupportedOutput(
        format: format.description, detail: "a difference signal; write it as .wav or .aiff")
    }
    let output: SafeOutput
    do {
      output = try SafeOutput(destination)
    } catch {
      throw AudioFileError.output(error)
    }
    let writer: any SampleWriter =
      output.destination.isStream
      ? try PCMStreamWriter(
        output: output, format: format, sampleFormat: .float32, sampleRate: sampleRate,
        channels: channels, frames: frames)
      : try SndfileWriter(
        output: output, format: format, sampleFormat: .float32, sampleRate: sampleRate,
        channels: channels)
    let block = RangeStream.blockFrames
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * channels)
    defer { buffer.deallocate() }
    var done: Int64 = 0
    while done < frames {
      let count = Int(min(Int64(block), frames - done))
      try fill(buffer, count)
      try writer.write(UnsafePointer(buffer), frames: count)
      done += Int64(count)
    }
    try writer.close()
    do {
      try output.commit()
    } catch {
      throw AudioFileError.output(error)
    }
  }
}
