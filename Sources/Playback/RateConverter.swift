import Foundation

/// How Tape converts a project's rate to a device's (`RateConverter`'s filter), as a player
/// reports it.
public struct RateConversion: Sendable, Equatable {
  public let inputRate: Int
  public let outputRate: Int
  /// Output frames per ``down`` input frames (L), in lowest terms: also the number of phases.
  public let up: Int
  /// Input frames per ``up`` output frames (M).
  public let down: Int
  /// Input frames each output frame reads (even, a multiple of 4): `taps / 2` before its position
  /// and `taps / 2` after.
  public let taps: Int
  /// The passband's end (Hz): flat to within ±0.0001 dB up to here.
  public let passband: Double
  /// The stopband's start (Hz): the Nyquist frequency of the lower rate, so nothing aliases
  /// (going down) and no image is left (going up).
  public let stopband: Double
  /// The Kaiser window's design attenuation in the stopband (dB).
  public let attenuation: Double

  /// The filter from `inputRate` to `outputRate`; nil when the rates are equal, or when the
  /// ratio needs more than 4,096 phases (rates no device or project uses).
  public init?(from inputRate: Int, to outputRate: Int) {
    guard inputRate > 0, outputRate > 0, inputRate != outputRate else { return nil }
    var (a, b) = (inputRate, outputRate)
    while b != 0 { (a, b) = (b, a % b) }
    up = outputRate / a
    down = inputRate / a
    guard up <= RateConverter.maximumPhases else { return nil }
    self.inputRate = inputRate
    self.outputRate = outputRate
    stopband = Double(min(inputRate, outputRate)) / 2
    passband = min(RateConverter.audibleBand, stopband * RateConverter.passbandShare)
    attenuation = RateConverter.attenuation
    // Kaiser's estimate of the length for this attenuation and transition band.
    let transition = 2 * Double.pi * (stopband - passband) / Double(inputRate)
    let length = Int(((attenuation - 7.95) / (2.285 * transition)).rounded(.up)) + 1
    taps = (length + 3) / 4 * 4
  }

  /// The cut-off of the sinc (Hz): the middle of the transition band.
  public var cutoff: Double { (passband + stopband) / 2 }

  /// The Kaiser window's shape parameter for ``attenuation``.
  public var beta: Double { 0.1102 * (attenuation - 8.7) }

  /// The most input frames `outputs` output frames move on by: ⌈outputs × M / L⌉ + 1.
  func inputFrames(forOutputs outputs: Int) -> Int {
    (outputs * down + up - 1) / up + 1
  }
}

/// Converts interleaved float32 audio from one sample rate to another by an exact rational
/// factor, for a device that does not take the project's rate.
///
/// Output frame n is the band-limited value of the input at input time n × M / L exactly
/// (L / M is the output rate over the input rate in lowest terms: 160 / 147 from 44.1 to
/// 48 kHz), so pitch and duration are exact: every M input frames become exactly L output
/// frames, forever, and output frame 0 is input frame 0 (no delay). Each output frame is a
/// dot product of ``RateConversion/taps`` input frames with one of L phases of a
/// Kaiser-windowed sinc, each phase normalised to a gain of exactly 1 at DC.
///
/// Why not libsoxr (which decodes sources): in streaming mode it hands its output over in
/// blocks (measured here, 44.1 → 48 kHz in calls of 235 frames: nothing for three calls, then
/// about 890 frames; the first after 940 input frames, 21 ms), so a player would have to run
/// a block ahead and do a block's work in one period, and it grows its buffers with `realloc`
/// as needed: allocation-free only once warmed up, which the compiler cannot check. This
/// converter does the same work every period, allocates nothing after ``init``, and the
/// compiler checks it for locks (`@_noLocks`).
///
/// Rule: one ``Kernel`` per stream, used by one thread (the device thread). The converter
/// owns the memory the kernel points into; it must outlive every use of the kernel.
final class RateConverter: @unchecked Sendable {
  /// At most this many phases (output frames per cycle of the ratio): 11,025 → 192,000 Hz
  /// needs 2,560.
  static let maximumPhases = 4_096
  /// The passband ends here, or below when the lower rate's Nyquist frequency is lower.
  static let audibleBand = 20_000.0
  /// The passband's share of the lower Nyquist frequency when that is below 22.05 kHz
  /// (20 kHz at 44.1 kHz).
  static let passbandShare = 0.907
  static let attenuation = 110.0

  let design: RateConversion
  let channels: Int
  /// Phase p's taps, the oldest input frame's first, at `coefficients + p × taps`.
  private let coefficients: UnsafeMutablePointer<Float>
  /// The input kept for the next outputs, one row of ``historyCapacity`` frames per channel.
  private let history: UnsafeMutablePointer<Float>
  private let historyCapacity: Int

  /// A converter for `channels` interleaved channels, taking at most `maximumInput` frames
  /// between two ``Kernel/pull(_:into:)``s.
  init(_ design: RateConversion, channels: Int, maximumInput: Int) {
    self.design = design
    self.channels = channels
    let taps = design.taps
    coefficients = .allocate(capacity: design.up * taps)
    historyCapacity = taps + maximumInput + 1
    history = .allocate(capacity: channels * historyCapacity)
    history.initialize(repeating: 0, count: channels * historyCapacity)
    let half = Double(taps / 2)
    let scale = 2 * design.cutoff / Double(design.inputRate)
    let window = Self.besselI0(design.beta)
    var phase = [Double](repeating: 0, count: taps)
    for p in 0..<design.up {
      // Tap j reads input frame q − taps/2 + 1 + j for an output at input time q + p / L.
      var sum = 0.0
      for j in 0..<taps {
        let offset = Double(p) / Double(design.up) + half - 1 - Double(j)
        let u = offset / half
        let shape = Self.besselI0(design.beta * (1 - u * u).squareRoot()) / window
        let x = scale * offset
        let sinc = x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)
        phase[j] = scale * sinc * shape
        sum += phase[j]
      }
      for j in 0..<taps { coefficients[p * taps + j] = Float(phase[j] / sum) }
    }
  }

  deinit {
    coefficients.deallocate()
    history.deallocate()
  }

  /// The memory the kernel reads and writes, for a player to lock into RAM.
  var memoryRegions: [(address: UnsafeRawPointer, bytes: Int)] {
    [
      (UnsafeRawPointer(coefficients), design.up * design.taps * 4),
      (UnsafeRawPointer(history), channels * historyCapacity * 4),
    ]
  }

  /// A stream at its start (silence before input frame 0), for one thread; any earlier
  /// kernel of this converter must no longer be used.
  func start() -> Kernel {
    history.update(repeating: 0, count: channels * historyCapacity)
    return Kernel(
      coefficients: coefficients, history: history, capacity: historyCapacity,
      channels: channels, up: design.up, down: design.down, taps: design.taps)
  }

  /// The modified Bessel function of the first kind, order 0 (its series).
  static func besselI0(_ x: Double) -> Double {
    var sum = 1.0
    var term = 1.0
    var k = 1.0
    while term > sum * 1e-17 {
      term *= (x / (2 * k)) * (x / (2 * k))
      sum += term
      k += 1
    }
    return sum
  }

  /// The converter as one thread uses it: addresses and counters, no reference.
  struct Kernel: @unchecked Sendable, BitwiseCopyable {
    let coefficients: UnsafeMutablePointer<Float>
    let history: UnsafeMutablePointer<Float>
    let capacity: Int
    let channels: Int
    let up: Int
    let down: Int
    let taps: Int
    /// Absolute input frame of `history[0]` (negative at the start: silence).
    private(set) var first: Int64
    /// Input frames held from `first` on.
    private(set) var held: Int
    /// The next output frame's position: input frame `whole` + `phase` / `up`.
    private(set) var whole: Int64 = 0
    private(set) var phase = 0
    /// Output frames produced so far.
    private(set) var produced: Int64 = 0

    init(
      coefficients: UnsafeMutablePointer<Float>, history: UnsafeMutablePointer<Float>,
      capacity: Int, channels: Int, up: Int, down: Int, taps: Int
    ) {
      self.coefficients = coefficients
      self.history = history
      self.capacity = capacity
      self.channels = channels
      self.up = up
      self.down = down
      self.taps = taps
      // Silence before the first input frame, as far back as the first output reads.
      first = -Int64(taps)
      held = taps
    }

    /// Input frames still to push before ``pull(_:into:)`` can make `frames` more output
    /// frames (each reads up to taps/2 input frames ahead of its position).
    ///
    /// - Note: Realtime-safe: no allocation, no locks.
    @_noLocks
    func inputNeeded(toProduce frames: Int) -> Int {
      guard frames > 0 else { return 0 }
      let last = whole + Int64((phase + (frames - 1) * down) / up)
      let end = last + Int64(taps / 2) + 1
      return max(0, Int(end - (first + Int64(held))))
    }

    /// The output frames that input frames before `inputEnd` account for: those whose
    /// position is before it (how long a play of `inputEnd` input frames lasts at the output
    /// rate, exactly, rounded up).
    ///
    /// - Note: Realtime-safe: no allocation, no locks.
    @_noLocks
    func outputs(before inputEnd: Int64) -> Int64 {
      (inputEnd * Int64(up) + Int64(down) - 1) / Int64(down)
    }

    /// The input frame that output frame `output` sounds: output frames sit at input positions
    /// `output × down / up` (the filter is centred on them), rounded to the nearest.
    ///
    /// - Note: Realtime-safe: no allocation, no locks.
    @_noLocks
    func inputFrame(atOutput output: Int64) -> Int64 {
      (output * Int64(down) + Int64(up / 2)) / Int64(up)
    }

    /// Takes `frames` interleaved input frames (at most the converter's `maximumInput`).
    ///
    /// - Note: Realtime-safe: no allocation, no locks.
    @_noLocks
    mutating func push(_ input: UnsafePointer<Float>, frames: Int) {
      // What no output reads again: before the next output's first tap.
      let keep = whole - Int64(taps / 2) + 1
      let drop = Int(min(Int64(held), max(0, keep - first)))
      if drop > 0 {
        for channel in 0..<channels {
          // Forward: each frame moves towards the start (the rows overlap).
          let row = history + channel * capacity
          for frame in 0..<(held - drop) { row[frame] = row[frame + drop] }
        }
        first += Int64(drop)
        held -= drop
      }
      let count = min(frames, capacity - held)
      for channel in 0..<channels {
        let row = history + channel * capacity + held
        for frame in 0..<count { row[frame] = input[frame * channels + channel] }
      }
      held += count
    }

    /// Makes the next `frames` output frames, interleaved, into `output`. The input they read
    /// must have been pushed (``inputNeeded(toProduce:)`` is 0).
    ///
    /// - Note: Realtime-safe: no allocation, no locks.
    @_noLocks
    mutating func pull(_ frames: Int, into output: UnsafeMutablePointer<Float>) {
      let stepWhole = Int64(down / up)
      let stepPhase = down % up
      for frame in 0..<frames {
        let taps = coefficients + phase * self.taps
        let start = Int(whole - Int64(self.taps / 2) + 1 - first)
        for channel in 0..<channels {
          output[frame * channels + channel] = Self.dot(
            taps, history + channel * capacity + start, count: self.taps)
        }
        whole += stepWhole
        phase += stepPhase
        if phase >= up {
          phase -= up
          whole += 1
        }
      }
      produced += Int64(frames)
    }

    /// Σ a[i] × b[i] over `count` (a multiple of 4) values, in four running sums.
    ///
    /// - Note: Realtime-safe: no allocation, no locks.
    @_noLocks
    @inline(__always)
    static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
      var s0: Float = 0
      var s1: Float = 0
      var s2: Float = 0
      var s3: Float = 0
      var i = 0
      while i < count {
        s0 += a[i] * b[i]
        s1 += a[i + 1] * b[i + 1]
        s2 += a[i + 2] * b[i + 2]
        s3 += a[i + 3] * b[i + 3]
        i += 4
      }
      return (s0 + s1) + (s2 + s3)
    }
  }
}
