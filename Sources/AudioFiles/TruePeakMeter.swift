import Foundation

/// The true peak of a programme after ITU-R BS.1770-4 Annex 2: the largest magnitude of the
/// signal oversampled 4× (and never less than the largest sample itself), in dBTP.
///
/// The interpolator is the Annex's kind, a polyphase FIR, but longer than its 48-tap example:
/// ``tapsPerPhase`` input samples per interpolated value, a Kaiser-windowed sinc (β
/// ``kaiserBeta``) cut off at the input's Nyquist frequency, each phase normalised to unity gain
/// at DC. Every phase is flat within 0.01 dB to 42 % of the sample rate (20.3 kHz at 48 kHz;
/// −0.1 dB at 43.5 %), so it does not read low on bright material, as the Annex's example and
/// shorter filters do: a meter that decides whether a render passes its ceiling must not read
/// low. (16 taps, β 6, was −0.65 dB at 20 kHz in the half-sample phase, and read full-band noise
/// 0.05 dB low.) Measured: full-band white noise 0.017 dB under ffmpeg's `ebur128=peak=true` and
/// 0.007 dB under libsoxr at high quality (what Tape used before), the worst of the test files;
/// 0.004 dB at most from either on the other files; a sine's crest between its samples to
/// 0.003 dB (`TruePeakMeterTests`). Only the three phases between the samples are computed: the
/// samples themselves are the caller's to count (the renderer has their peak already) —
/// ``process(_:frames:)`` counts them.
///
/// The filter's state (the last samples of the previous call) carries over exactly: every
/// interpolated value is computed by the same operations in the same order whatever the
/// pieces the signal is fed in, so a render cut into other blocks reads the same, bit for bit.
/// The signal is taken as silence before the first sample and after the last (``finish()``).
///
/// Four interpolated values at a time (SIMD), and each phase pair (the first and third are
/// mirror images) from one sum and one difference of mirrored samples (two thirds of the
/// arithmetic of the plain loop).
///
/// Each channel is filtered on its own, so one meter per channel, each fed its channel
/// (``process(_:frames:channel:of:)``), reads exactly what one meter of all the channels does,
/// and the meters can run on different threads: what the offline renderer does.
final class TruePeakMeter {
  /// Input samples each interpolated value is computed from.
  static let tapsPerPhase = 32
  /// The Kaiser window's shape parameter.
  static let kaiserBeta = 8.0
  /// Frames of one channel filtered at a time (what fits a level-1 cache with the history).
  private static let blockFrames = 4_096
  private static let history = tapsPerPhase - 1
  private static let half = tapsPerPhase / 2

  private let channels: Int
  /// Per channel: the last ``history`` samples fed, then room for ``blockFrames`` new ones.
  private let lines: UnsafeMutablePointer<Float>
  /// Per mirrored pair of taps, broadcast: the half-sample phase, the half sum and the half
  /// difference of the quarter- and three-quarter-sample phases.
  private let coefficients: UnsafeMutablePointer<SIMD4<Float>>
  private(set) var peak: Float = 0
  /// ``tapsPerPhase`` / 2, taken from the designed filter at run time: with the count a
  /// constant, the compiler turned the tap loop into shuffles that ran 2.5 times slower.
  private let pairs: Int
  /// What no value this meter computes can exceed per unit of the largest sample magnitude in
  /// its window: the sum of the magnitudes of the weights of the phase whose sum is largest
  /// (2.39, the half-sample phase's), and a thousandth over for the rounding of float sums of
  /// 32 terms (a few millionths of that sum for normal numbers).
  ///
  /// Rule: a block whose largest sample times this is at most ``peak`` is not filtered.
  /// Why: no value between its samples can then raise the peak, so the reading is the same, to
  /// the bit, as if it were filtered; the filter is the costliest part of a render's analysis
  /// (21 % of a 16-track render's CPU, measured), and much of a programme (speech, anything
  /// with dynamics) is quieter than its loudest moment by more than the 7.6 dB this asks for.
  /// What if every block is that loud (dense or limited material)? Then none is skipped, and
  /// the cost is a peak scan of each block (a fiftieth of the filter's).
  private let gainBound: Float
  /// Blocks skipped by ``gainBound`` (for the tests: the skip is taken).
  private(set) var skippedBlocks = 0
  /// Whether quiet blocks are skipped (the tests compare with a meter that filters all).
  private let skipsQuietBlocks: Bool

  private static var lineLength: Int { history + blockFrames }

  init(sampleRate: Int, channels: Int, skipsQuietBlocks: Bool = true) throws(AudioFileError) {
    self.channels = channels
    self.skipsQuietBlocks = skipsQuietBlocks
    lines = .allocate(capacity: channels * Self.lineLength)
    lines.initialize(repeating: 0, count: channels * Self.lineLength)
    coefficients = .allocate(capacity: 3 * Self.half)
    let (quarter, middle) = Self.phases()
    pairs = quarter.count / 2
    let taps = Self.tapsPerPhase
    var middleWeight = 0.0
    var outerWeight = 0.0
    for i in 0..<Self.half {
      let mirrored = quarter[taps - 1 - i]
      let weights = (
        Float(middle[i]), Float((quarter[i] + mirrored) / 2), Float((quarter[i] - mirrored) / 2)
      )
      (coefficients + 3 * i).initialize(to: SIMD4(repeating: weights.0))
      (coefficients + 3 * i + 1).initialize(to: SIMD4(repeating: weights.1))
      (coefficients + 3 * i + 2).initialize(to: SIMD4(repeating: weights.2))
      // The half-sample value weights a sum of two samples by each; the larger of the other
      // two, |sum| + |difference|, is |sum ± difference|, which weights the two samples by
      // the half sum plus and minus the half difference: twice the larger of the two.
      middleWeight += 2 * abs(Double(weights.0))
      outerWeight += 2 * max(abs(Double(weights.1)), abs(Double(weights.2)))
    }
    gainBound = Float(max(middleWeight, outerWeight) * 1.001)
  }

  deinit {
    lines.deallocate()
    coefficients.deallocate()
  }

  /// The quarter-sample and half-sample phases of the interpolator, tap `i` weighting the
  /// sample `i - (tapsPerPhase / 2 - 1)` places from the one the value follows; each sums to 1.
  /// (The three-quarter phase is the quarter one reversed.)
  static func phases() -> (quarter: [Double], middle: [Double]) {
    func phase(_ fraction: Double) -> [Double] {
      let taps = (0..<tapsPerPhase).map { i -> Double in
        let t = Double(i - (half - 1)) - fraction
        let u = t / Double(half)
        let window = besselI0(kaiserBeta * (max(0, 1 - u * u)).squareRoot()) / besselI0(kaiserBeta)
        return t == 0 ? window : window * sin(Double.pi * t) / (Double.pi * t)
      }
      let sum = taps.reduce(0, +)
      return taps.map { $0 / sum }
    }
    return (phase(0.25), phase(0.5))
  }

  /// The modified Bessel function of the first kind, order 0 (its power series).
  private static func besselI0(_ x: Double) -> Double {
    var sum = 1.0
    var term = 1.0
    var k = 1.0
    while term > 1e-17 * sum {
      term *= (x / (2 * k)) * (x / (2 * k))
      sum += term
      k += 1
    }
    return sum
  }

  /// Measures channel `channel` of `frames` interleaved frames of `stride` channels (this
  /// meter measures one channel), continuing where the previous call stopped. Only the
  /// oversampled values count in ``peak``: the samples' own peak is the caller's to add (the
  /// renderer has it already).
  func process(
    _ samples: UnsafePointer<Float>, frames: Int, channel: Int, of stride: Int
  ) throws(AudioFileError) {
    precondition(channels == 1, "a meter of one channel")
    feed(line: 0, samples, channel: channel, frames: frames, stride: stride)
  }

  /// Measures `frames` interleaved frames, continuing where the previous call stopped.
  func process(_ samples: UnsafePointer<Float>, frames: Int) throws(AudioFileError) {
    peak = max(peak, Peak.of(samples, count: frames * channels))
    for channel in 0..<channels {
      feed(line: channel, samples, channel: channel, frames: frames, stride: channels)
    }
  }

  /// Measures the values between the last samples fed and the silence after them; call once
  /// at the end.
  func finish() throws(AudioFileError) {
    for channel in 0..<channels {
      let line = lines + channel * Self.lineLength
      (line + Self.history).update(repeating: 0, count: Self.history)
      filter(line, count: Self.history)
    }
  }

  /// Appends channel `channel` of `frames` interleaved frames of `stride` channels to line
  /// `index` and filters them.
  private func feed(
    line index: Int, _ samples: UnsafePointer<Float>, channel: Int, frames: Int, stride: Int
  ) {
    let line = lines + index * Self.lineLength
    let target = line + Self.history
    var done = 0
    while done < frames {
      let count = min(Self.blockFrames, frames - done)
      let source = samples + done * stride
      var i = 0
      if stride == 2 {
        // Four stereo frames at a time (only within the frames given).
        let raw = UnsafeRawPointer(source)
        let out = UnsafeMutableRawPointer(target)
        while i + 4 <= count {
          let four = raw.loadUnaligned(fromByteOffset: i * 8, as: SIMD8<Float>.self)
          out.storeBytes(
            of: channel == 0 ? four.evenHalf : four.oddHalf, toByteOffset: i * 4,
            as: SIMD4<Float>.self)
          i += 4
        }
      }
      while i < count {
        target[i] = source[i * stride + channel]
        i += 1
      }
      filter(line, count: count)
      done += count
    }
  }

  /// Interpolates between the samples of `line`'s `count` windows (window `s` is the
  /// ``tapsPerPhase`` samples from `s`), raises ``peak`` to the largest, and keeps the last
  /// ``history`` samples at the start of the line for the next call.
  private func filter(_ line: UnsafeMutablePointer<Float>, count: Int) {
    let half = pairs
    let taps = 2 * half
    // A block that cannot raise the peak is not filtered (``gainBound``). An infinity in it
    // fails the comparison (it is filtered); a NaN is passed over by the scan as by the
    // filter's maximum. Only over a normal peak: a subnormal one rounds coarser than the bound's
    // margin allows for.
    if skipsQuietBlocks && peak >= .leastNormalMagnitude
      && Peak.of(line, count: count + Self.history) * gainBound <= peak
    {
      skippedBlocks += 1
      line.update(from: line + count, count: Self.history)
      return
    }
    let magnitude = SIMD4<UInt32>(repeating: 0x7FFF_FFFF)
    func magnitudes(_ v: SIMD4<Float>) -> SIMD4<Float> {
      unsafeBitCast(unsafeBitCast(v, to: SIMD4<UInt32>.self) & magnitude, to: SIMD4<Float>.self)
    }
    var high = SIMD4<Float>.zero
    var s = 0
    // Four windows at a time. (SIMD4, a register: SIMD8 compiled to shuffles here and ran two
    // to three times slower.)
    while s + 4 <= count {
      var middle = SIMD4<Float>.zero
      var sum = SIMD4<Float>.zero
      var difference = SIMD4<Float>.zero
      let first = UnsafeRawPointer(line + s)
      let last = UnsafeRawPointer(line + s + taps - 1)
      var weights = coefficients
      for i in 0..<half {
        let a = first.loadUnaligned(fromByteOffset: 4 &* i, as: SIMD4<Float>.self)
        let b = last.loadUnaligned(fromByteOffset: -4 &* i, as: SIMD4<Float>.self)
        let together = a + b
        middle = middle + weights[0] * together
        sum = sum + weights[1] * together
        difference = difference + weights[2] * (a - b)
        weights += 3
      }
      // The larger of |sum + difference| and |sum - difference| is |sum| + |difference|.
      let outer = magnitudes(sum) + magnitudes(difference)
      let inner = magnitudes(middle)
      high.replace(with: outer, where: outer .> high)
      high.replace(with: inner, where: inner .> high)
      s += 4
    }
    var largest = high.max()
    // The same operations, in the same order, one window at a time.
    while s < count {
      var middle: Float = 0
      var sum: Float = 0
      var difference: Float = 0
      for i in 0..<half {
        let a = line[s + i]
        let b = line[s + taps - 1 - i]
        let together = a + b
        middle = middle + coefficients[3 * i][0] * together
        sum = sum + coefficients[3 * i + 1][0] * together
        difference = difference + coefficients[3 * i + 2][0] * (a - b)
      }
      largest = max(largest, abs(sum) + abs(difference), abs(middle))
      s += 1
    }
    peak = max(peak, largest)
    line.update(from: line + count, count: Self.history)
  }
}
