import Foundation

/// The float64 reference of a track envelope's definition (see `Timeline.Envelope`), written out
/// here the plain way, independent of Tape's segments: what the kernel, the model and the
/// binary's renders are compared with.
public enum EnvelopeModel {
  /// The gain (amplitude) at frame `t` of breakpoints `(frame, dB)` in time order: held before
  /// the first and after the last; linear in dB between two audible points; linear in amplitude
  /// where either end is `-inf`.
  public static func gain(_ points: [(frame: Int64, decibels: Double)], at t: Int64) -> Double {
    gain(shaped: points.map { ($0.frame, $0.decibels, "db") }, at: t)
  }

  /// The same with each point's segment shape (`db`, `linear` or `hold`, how the gain runs
  /// from that point to the next): `db` as above, `linear` linearly in amplitude, `hold` the
  /// point's gain until the next point.
  public static func gain(
    shaped points: [(frame: Int64, decibels: Double, shape: String)], at t: Int64
  ) -> Double {
    let amplitude = { (dB: Double) in dB == -.infinity ? 0 : pow(10, dB / 20) }
    guard let first = points.first, let last = points.last else { return 1 }
    if t <= first.frame { return amplitude(first.decibels) }
    guard let b = points.firstIndex(where: { $0.frame > t }) else {
      return amplitude(last.decibels)
    }
    let (p, q) = (points[b - 1], points[b])
    let x = Double(t - p.frame) / Double(q.frame - p.frame)
    if p.shape == "hold" { return amplitude(p.decibels) }
    if p.shape == "db" && p.decibels.isFinite && q.decibels.isFinite {
      return amplitude(p.decibels + x * (q.decibels - p.decibels))
    }
    return amplitude(p.decibels) + x * (amplitude(q.decibels) - amplitude(p.decibels))
  }
}

/// SplitMix64: seeded, so a failing random test replays from its seed.
public struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64

  public init(seed: UInt64) { state = seed }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
