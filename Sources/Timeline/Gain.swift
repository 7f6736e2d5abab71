#if canImport(Glibc)
  import Glibc
#endif

/// A gain in decibels, with its linear amplitude factor.
///
/// 0 dB is unity; −6.02 dB halves the amplitude. Gains are stored and edited in decibels and
/// must be finite: silence is expressed by muting a track, not by an infinite attenuation.
///
/// ```swift
/// Gain(decibels: -6).linear  // 0.501…
/// Gain.unity.linear          // 1.0
/// ```
public struct Gain: Sendable, BitwiseCopyable, Hashable, Codable, CustomStringConvertible {
  public var decibels: Double

  public init(decibels: Double) {
    self.decibels = decibels
  }

  public static let unity = Gain(decibels: 0)

  /// `10^(dB/20)`.
  public var linear: Double { pow10(decibels / 20) }

  public var isFinite: Bool { decibels.isFinite }

  /// Gains this large are almost certainly a typo; the model rejects them.
  public static let maximumDecibels = 48.0
  /// Anything quieter is inaudible in any format we write; the model rejects it.
  public static let minimumDecibels = -144.0

  public var description: String {
    let rounded = (decibels * 100).rounded() / 100
    return rounded > 0 ? "+\(formatDecimal(rounded)) dB" : "\(formatDecimal(rounded)) dB"
  }

  public init(from decoder: any Decoder) throws {
    decibels = try decoder.singleValueContainer().decode(Double.self)
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(decibels)
  }
}

@inline(__always)
func pow10(_ x: Double) -> Double {
  Glibc.pow(10, x)
}
