#if canImport(Glibc)
  import Glibc
#endif

/// Integrated loudness after ITU-R BS.1770-4 / EBU R128, in LUFS.
///
/// Each channel goes through the K-weighting filter (a high-shelf pre-filter and the RLB
/// high-pass, with libebur128's formulas so any sample rate works); the mean square is taken over
/// 400 ms blocks every 100 ms; blocks below −70 LUFS are gated out, then blocks more than 10 LU
/// below the mean of the rest. Channel weights are 1 (mono or left/right). Feed it the whole
/// programme in order, then read ``integratedLoudness``.
///
/// ```swift
/// var meter = LoudnessMeter(sampleRate: 48_000, channels: 2)
/// meter.process(samples, frames: count)
/// meter.integratedLoudness  // −23.0 for EBU's reference tone
/// ```
public struct LoudnessMeter: Sendable {
  public let sampleRate: Int
  public let channels: Int
  private let shelf: Biquad
  private let highPass: Biquad
  /// Per channel: the two filters' state `(x1, x2, y1, y2)` for each stage.
  private var state: [BiquadState]
  private let subBlockFrames: Int
  private var subBlockFill = 0
  private var subBlockEnergy = 0.0
  /// The K-weighted energy (sum over channels of squares) of each complete 100 ms sub-block.
  private var subBlocks: [Double] = []

  public init(sampleRate: Int, channels: Int) {
    self.sampleRate = sampleRate
    self.channels = channels
    let rate = Double(sampleRate)
    // Stage 1: the high shelf modelling the head (libebur128's parameters).
    do {
      let f0 = 1681.974450955533
      let gain = 3.999843853973347
      let q = 0.7071752369554196
      let k = tan(Double.pi * f0 / rate)
      let vh = pow(10, gain / 20)
      let vb = pow(vh, 0.4996667741545416)
      let a0 = 1 + k / q + k * k
      shelf = Biquad(
        b0: (vh + vb * k / q + k * k) / a0, b1: 2 * (k * k - vh) / a0,
        b2: (vh - vb * k / q + k * k) / a0, a1: 2 * (k * k - 1) / a0,
        a2: (1 - k / q + k * k) / a0)
    }
    // Stage 2: the RLB high-pass.
    do {
      let f0 = 38.13547087602444
      let q = 0.5003270373238773
      let k = tan(Double.pi * f0 / rate)
      let a0 = 1 + k / q + k * k
      highPass = Biquad(
        b0: 1, b1: -2, b2: 1, a1: 2 * (k * k - 1) / a0, a2: (1 - k / q + k * k) / a0)
    }
    state = Array(repeating: BiquadState(), count: channels)
    subBlockFrames = max(1, Int((rate / 10).rounded()))
  }

  /// Measures `frames` interleaved frames, continuing where the previous call stopped.
  public mutating func process(_ samples: UnsafePointer<Float>, frames: Int) {
    var offset = 0
    while offset < frames {
      let run = min(frames - offset, subBlockFrames - subBlockFill)
      var energy = 0.0
      if channels == 2 {
        energy = filterStereo(samples + offset * 2, frames: run)
      } else {
        for channel in 0..<channels {
          energy += filter(samples + offset * channels + channel, frames: run, channel: channel)
        }
      }
      subBlockEnergy += energy
      subBlockFill += run
      offset += run
      if subBlockFill == subBlockFrames {
        subBlocks.append(subBlockEnergy)
        subBlockEnergy = 0
        subBlockFill = 0
      }
    }
  }

  /// K-weights `frames` samples of one channel (stride `channels`) and returns their energy.
  private mutating func filter(_ input: UnsafePointer<Float>, frames: Int, channel: Int) -> Double {
    var s = state[channel]
    let (p, h) = (shelf, highPass)
    var energy = 0.0
    for i in 0..<frames {
      let x = Double(input[i * channels])
      let y = p.b0 * x + p.b1 * s.x1 + p.b2 * s.x2 - p.a1 * s.y1 - p.a2 * s.y2
      s.x2 = s.x1
      s.x1 = x
      s.y2 = s.y1
      s.y1 = y
      let z = y - 2 * s.u1 + s.u2 - h.a1 * s.z1 - h.a2 * s.z2
      s.u2 = s.u1
      s.u1 = y
      s.z2 = s.z1
      s.z1 = z
      energy += z * z
    }
    state[channel] = s
    return energy
  }

  /// Both channels of stereo audio in one loop: the same arithmetic as
  /// ``filter(_:frames:channel:)`` for each, with the two independent chains interleaved so the
  /// processor overlaps them.
  private mutating func filterStereo(_ input: UnsafePointer<Float>, frames: Int) -> Double {
    var l = state[0]
    var r = state[1]
    let (p, h) = (shelf, highPass)
    var energyLeft = 0.0
    var energyRight = 0.0
    for i in 0..<frames {
      let xl = Double(input[2 * i])
      let xr = Double(input[2 * i + 1])
      let yl = p.b0 * xl + p.b1 * l.x1 + p.b2 * l.x2 - p.a1 * l.y1 - p.a2 * l.y2
      let yr = p.b0 * xr + p.b1 * r.x1 + p.b2 * r.x2 - p.a1 * r.y1 - p.a2 * r.y2
      (l.x2, l.x1, l.y2, l.y1) = (l.x1, xl, l.y1, yl)
      (r.x2, r.x1, r.y2, r.y1) = (r.x1, xr, r.y1, yr)
      let zl = yl - 2 * l.u1 + l.u2 - h.a1 * l.z1 - h.a2 * l.z2
      let zr = yr - 2 * r.u1 + r.u2 - h.a1 * r.z1 - h.a2 * r.z2
      (l.u2, l.u1, l.z2, l.z1) = (l.u1, yl, l.z1, zl)
      (r.u2, r.u1, r.z2, r.z1) = (r.u1, yr, r.z1, zr)
      energyLeft += zl * zl
      energyRight += zr * zr
    }
    state[0] = l
    state[1] = r
    return energyLeft + energyRight
  }

  /// The gated integrated loudness of everything measured so far, in LUFS; `-infinity` when
  /// every block is below the −70 LUFS gate (silence, or less than 400 ms of audio).
  public var integratedLoudness: Double {
    guard subBlocks.count >= 4 else { return -.infinity }
    let blockFrames = Double(4 * subBlockFrames)
    var blocks: [Double] = []
    blocks.reserveCapacity(subBlocks.count - 3)
    for j in 0...(subBlocks.count - 4) {
      blocks.append(
        (subBlocks[j] + subBlocks[j + 1] + subBlocks[j + 2] + subBlocks[j + 3]) / blockFrames)
    }
    func loudness(_ meanSquare: Double) -> Double { -0.691 + 10 * log10(meanSquare) }
    let absolute = blocks.filter { loudness($0) > -70 }
    guard !absolute.isEmpty else { return -.infinity }
    let relativeGate = loudness(absolute.reduce(0, +) / Double(absolute.count)) - 10
    let gated = absolute.filter { loudness($0) > relativeGate }
    guard !gated.isEmpty else { return -.infinity }
    return loudness(gated.reduce(0, +) / Double(gated.count))
  }
}

extension LoudnessMeter {
  /// The loudness range after EBU Tech 3342, in LU: the spread between the 10th and the 95th
  /// percentile of the short-term loudness (3 s windows, one every 100 ms) of the blocks above
  /// the −70 LUFS gate and no more than 20 LU below their mean; 0 when fewer than 3 s were
  /// measured or nothing passes the gates.
  ///
  /// Percentiles are taken by nearest rank, as ffmpeg's `ebur128` filter and libebur128 do.
  public var loudnessRange: Double {
    let window = 30
    guard subBlocks.count >= window else { return 0 }
    let windowFrames = Double(window * subBlockFrames)
    func loudness(_ meanSquare: Double) -> Double { -0.691 + 10 * log10(meanSquare) }
    var powers: [Double] = []
    powers.reserveCapacity(subBlocks.count - window + 1)
    for start in 0...(subBlocks.count - window) {
      var energy = 0.0
      for index in start..<start + window { energy += subBlocks[index] }
      powers.append(energy / windowFrames)
    }
    let absolute = powers.filter { loudness($0) >= -70 }
    guard !absolute.isEmpty else { return 0 }
    let relativeGate = loudness(absolute.reduce(0, +) / Double(absolute.count)) - 20
    let gated = absolute.map(loudness).filter { $0 >= relativeGate }.sorted()
    guard !gated.isEmpty else { return 0 }
    func percentile(_ fraction: Double) -> Double {
      let rank = Int((Double(gated.count) * fraction + 0.5).rounded(.down))
      return gated[min(gated.count - 1, max(0, rank - 1))]
    }
    return percentile(0.95) - percentile(0.10)
  }
}

/// A biquad's normalised coefficients (`a0 = 1`).
struct Biquad: Sendable {
  let b0: Double, b1: Double, b2: Double, a1: Double, a2: Double
}

/// One channel's state through both K-weighting stages.
struct BiquadState: Sendable {
  var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
  var u1 = 0.0, u2 = 0.0, z1 = 0.0, z2 = 0.0
}
