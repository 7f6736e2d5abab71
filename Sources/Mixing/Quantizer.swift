/// Float samples to integer PCM: scaled, optionally TPDF-dithered, rounded and clamped.
///
/// Full scale is `2^(bits−1)`: −1.0 maps to the most negative code, and anything at or above
/// `(2^(bits−1) − 1)/2^(bits−1)` to the most positive. Values round to the nearest code, ties
/// upward (`⌊x + ½⌋`, as sox rounds). Samples beyond the range are clamped, never
/// wrapped, and counted. TPDF dither adds the sum of two independent uniform values in
/// `[−½, ½)` LSB (a triangular distribution over ±1 LSB) before rounding; its random stream is
/// seeded by the caller, so a render is reproducible byte for byte.
///
/// ```swift
/// var quantizer = Quantizer(bits: 16, dither: true, seed: 1)
/// let clipped = quantizer.quantize(floats, count: n, into: ints)  // ints in 32-bit full scale
/// ```
public struct Quantizer: Sendable {
  public let bits: Int
  public let dither: Bool
  private var random: UInt64

  public init(bits: Int, dither: Bool, seed: UInt64) {
    precondition((8...24).contains(bits), "integer output has 8 to 24 bits")
    self.bits = bits
    self.dither = dither
    random = seed
  }

  /// Quantizes `count` samples into `output` as 32-bit left-justified integers (the form
  /// libsndfile's `int` interface takes for any bit depth) and returns how many were clamped.
  public mutating func quantize(
    _ input: UnsafePointer<Float>, count: Int, into output: UnsafeMutablePointer<Int32>
  ) -> Int {
    let scale = Double(1 << (bits - 1))
    let maximum = scale - 1
    let minimum = -scale
    let shift = Int32(32 - bits)
    var clipped = 0
    for i in 0..<count {
      var value = Double(input[i]) * scale
      if dither { value += nextUniform() + nextUniform() }
      value = (value + 0.5).rounded(.down)
      if value > maximum {
        value = maximum
        clipped += 1
      } else if value < minimum {
        value = minimum
        clipped += 1
      } else if value.isNaN {
        value = 0
      }
      output[i] = Int32(value) << shift
    }
    return clipped
  }

  /// A uniform value in `[−½, ½)` from SplitMix64.
  private mutating func nextUniform() -> Double {
    random &+= 0x9E37_79B9_7F4A_7C15
    var z = random
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    z ^= z >> 31
    return Double(z >> 11) * 0x1.0p-53 - 0.5
  }
}
