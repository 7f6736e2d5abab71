/// The true peak of a programme after ITU-R BS.1770-4 Annex 2: the largest magnitude of the
/// signal oversampled 4× (and never less than the largest sample itself), in dBTP.
///
/// The oversampling is libsoxr's, at high quality (SOXR_HQ: a linear-phase low-pass, flat to
/// 0.91 of the input's Nyquist frequency, 20-bit). Why not the Annex's own 48-tap example
/// interpolator: its passband droops well before Nyquist, so on bright material it reads low
/// (0.12 dB under ffmpeg on the test suite's pink noise, where libsoxr agrees to 0.01 dB), and a
/// meter that decides whether a render passes its ceiling must not read low. ffmpeg's
/// `ebur128=peak=true` resamples to 192 kHz with its own long sinc, the same kind of filter.
///
/// libsoxr filters each channel on its own, so one meter per channel, each fed its channel
/// (``process(_:frames:channel:of:)``), reads exactly what one meter of all the channels does
/// (the same oversampled values, bit for bit), and the meters can run on different threads:
/// what the offline renderer does.
///
/// Not realtime-safe: libsoxr allocates. The offline renderer runs it on its own threads.
final class TruePeakMeter {
  private let resampler: SoxrResampler
  private let output: UnsafeMutableBufferPointer<Float>
  /// One channel gathered from interleaved input (``process(_:frames:channel:of:)``).
  private let gathered: UnsafeMutableBufferPointer<Float>
  private(set) var peak: Float = 0

  /// Frames of oversampled output taken from libsoxr at a time (the size made no difference
  /// to its speed from 4,096 to 65,536; a small one keeps the peak scan in cache).
  private static let outputFrames = 16_384
  /// Frames of one channel gathered at a time.
  private static let gatheredFrames = 16_384

  init(sampleRate: Int, channels: Int) throws(AudioFileError) {
    resampler = try SoxrResampler(from: sampleRate, to: 4 * sampleRate, channels: channels)
    output = .allocate(capacity: Self.outputFrames * channels)
    gathered = .allocate(capacity: channels == 1 ? Self.gatheredFrames : 0)
  }

  deinit {
    output.deallocate()
    gathered.deallocate()
  }

  /// Measures channel `channel` of `frames` interleaved frames of `stride` channels (this
  /// meter measures one channel), continuing where the previous call stopped. Only the
  /// oversampled values count in ``peak``: the samples' own peak is the caller's to add (the
  /// renderer has it already).
  func process(
    _ samples: UnsafePointer<Float>, frames: Int, channel: Int, of stride: Int
  ) throws(AudioFileError) {
    precondition(resampler.channels == 1, "a meter of one channel")
    guard let buffer = gathered.baseAddress else { return }
    var done = 0
    while done < frames {
      let count = min(Self.gatheredFrames, frames - done)
      let source = samples + done * stride + channel
      for i in 0..<count { buffer[i] = source[i * stride] }
      try pull(buffer, frames: count)
      done += count
    }
  }

  /// Measures `frames` interleaved frames, continuing where the previous call stopped.
  func process(_ samples: UnsafePointer<Float>, frames: Int) throws(AudioFileError) {
    peak = max(peak, Peak.of(samples, count: frames * resampler.channels))
    try pull(samples, frames: frames)
  }

  /// Measures what libsoxr still holds (the last few milliseconds); call once at the end.
  func finish() throws(AudioFileError) {
    try pull(nil, frames: 0)
  }

  private func pull(_ samples: UnsafePointer<Float>?, frames: Int) throws(AudioFileError) {
    guard let buffer = output.baseAddress else { return }
    let channels = resampler.channels
    var done = 0
    while true {
      let (consumed, produced) = try resampler.process(
        samples.map { $0 + done * channels }, frames: frames - done, into: buffer,
        capacity: Self.outputFrames)
      done += consumed
      peak = max(peak, Peak.of(buffer, count: produced * channels))
      if samples == nil ? produced == 0 : done >= frames && produced < Self.outputFrames {
        return
      }
    }
  }
}
