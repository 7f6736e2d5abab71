/// Float samples to integer PCM: scaled, optionally TPDF-dithered, rounded and clamped.
///
/// Full scale is `2^(bits−1)`: −1.0 maps to the most negative code, and anything at or above
/// `(2^(bits−1) − 1)/2^(bits−1)` to the most positive. Values round to the nearest code, ties
/// upward (`⌊x + ½⌋`, as sox rounds). Samples beyond the range are clamped, never
/// wrapped, and counted. TPDF dither adds the sum of two independent uniform values in
/// `[−½, ½)` LSB (a triangular distribution over ±1 LSB) before rounding; its random stream is
/// seeded by the caller, so a render is reproducible byte for byte.
///
/// The random stream is counter-based: sample `n` of the stream (counting from 1, across
/// calls) hashes `key ^ n` (`hash(_:)`, 32 bits, `key` derived from the seed) and reads its
/// two uniform values from the hash's two 16-bit halves. Nothing is carried from one sample to
/// the next, so the loops are plain arithmetic that the compiler vectorizes: no branch, no
/// conversion that can trap. Undithered, the arithmetic is in double and exact. Dithered at 16
/// bits or fewer it is in float, eight samples at a time, in this order: `x·2^(bits−1)`
/// (exact), plus the noise, plus ½ (each sum rounded to float), floored; above 16 bits in
/// double.
///
/// ```swift
/// var quantizer = Quantizer(bits: 16, dither: true, seed: 1)
/// let clipped = quantizer.quantize(floats, count: n, into: ints)  // ints in 32-bit full scale
/// ```
public struct Quantizer: Sendable {
  public let bits: Int
  public let dither: Bool
  /// What the seed makes of every sample's counter.
  private let key: UInt32
  /// The counter of the last sample quantized (0 before the first).
  private var position: UInt32 = 0

  public init(bits: Int, dither: Bool, seed: UInt64) {
    precondition((8...24).contains(bits), "integer output has 8 to 24 bits")
    self.bits = bits
    self.dither = dither
    // SplitMix64's output function of the seed: seeds one apart give unrelated keys.
    var z = seed &+ 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
    key = UInt32(truncatingIfNeeded: (z ^ (z &>> 31)) &>> 32)
  }

  /// The 32-bit integer hash the dither reads (Chris Wellons' `lowbias32`).
  @inline(__always)
  static func hash(_ value: UInt32) -> UInt32 {
    var x = value
    x ^= x &>> 16
    x &*= 0x7FEB_352D
    x ^= x &>> 15
    x &*= 0x846C_A68B
    x ^= x &>> 16
    return x
  }

  /// Quantizes `count` samples into `output` as 32-bit left-justified integers (the form
  /// libsndfile's `int` interface takes for any bit depth) and returns how many were clamped.
  public mutating func quantize(
    _ input: UnsafePointer<Float>, count: Int, into output: UnsafeMutablePointer<Int32>
  ) -> Int {
    let first = position
    position = first &+ UInt32(truncatingIfNeeded: count)
    if dither && bits <= 16 {
      return ditheredInFloat(input, count: count, into: output, first: first)
    }
    let scale = Double(1 << (bits - 1))
    let maximum = scale - 1
    let minimum = -scale
    let shift = Int32(32 - bits)
    var clipped = 0
    if dither {
      for i in 0..<count {
        let h = Self.hash(key ^ (first &+ UInt32(truncatingIfNeeded: i) &+ 1))
        let noise = Double((h &>> 16) + (h & 0xFFFF)) * 0x1.0p-16 - 1
        output[i] = Self.code(
          Double(input[i]) * scale + noise, maximum, minimum, shift, &clipped)
      }
    } else {
      for i in 0..<count {
        output[i] = Self.code(Double(input[i]) * scale, maximum, minimum, shift, &clipped)
      }
    }
    return clipped
  }

  /// `⌊value + ½⌋` clamped to `[minimum, maximum]` (counting a clamp), 0 for NaN, shifted
  /// left by `shift`.
  @inline(__always)
  private static func code(
    _ value: Double, _ maximum: Double, _ minimum: Double, _ shift: Int32, _ clipped: inout Int
  ) -> Int32 {
    let raised = value + 0.5
    // ⌊raised⌋ > maximum exactly when raised ≥ maximum + 1 (both sides integers), and
    // ⌊raised⌋ < minimum when raised < minimum; NaN is neither, and becomes 0.
    let over = raised >= maximum + 1
    let under = raised < minimum
    clipped &+= over || under ? 1 : 0
    var bounded = over ? maximum : raised
    bounded = under ? minimum : bounded
    bounded = bounded.isNaN ? 0 : bounded
    // Adding 1.5·2^52 rounds to the nearest integer (ties to even) and leaves it, in two's
    // complement, in the low bits of the sum; one less where that rounded up gives the floor.
    let magic = 0x1.8p52
    let sum = bounded + magic
    let nearest = Int32(truncatingIfNeeded: sum.bitPattern)
    let floor = nearest &- (sum - magic > bounded ? 1 : 0)
    return floor &<< shift
  }

  /// The dithered path at 16 bits or fewer, eight samples at a time in float (see the type's
  /// summary for the order of operations); the counter of sample `i` is `first + i + 1`.
  private func ditheredInFloat(
    _ input: UnsafePointer<Float>, count: Int, into output: UnsafeMutablePointer<Int32>,
    first: UInt32
  ) -> Int {
    let scale = Float(1 << (bits - 1))
    let maximum = SIMD8<Float>(repeating: scale - 1)
    let limit = SIMD8<Float>(repeating: scale)
    let minimum = SIMD8<Float>(repeating: -scale)
    let shift = SIMD8<Int32>(repeating: Int32(32 - bits))
    // 1.5·2^23: adding it rounds a float below 2^22 in magnitude to an integer, left in the
    // low bits of the sum's bit pattern.
    let magic = SIMD8<Float>(repeating: 0x1.8p23)
    let magicBits = SIMD8<Int32>(repeating: Int32(bitPattern: (0x1.8p23 as Float).bitPattern))
    let lanes = SIMD8<UInt32>(1, 2, 3, 4, 5, 6, 7, 8)
    let source = UnsafeRawPointer(input)
    let target = UnsafeMutableRawPointer(output)
    var clamps = SIMD8<Int32>.zero
    var i = 0
    while i + 8 <= count {
      var h = SIMD8<UInt32>(repeating: key) ^ (lanes &+ (first &+ UInt32(truncatingIfNeeded: i)))
      h ^= h &>> 16
      h &*= 0x7FEB_352D
      h ^= h &>> 15
      h &*= 0x846C_A68B
      h ^= h &>> 16
      let high = SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: h &>> 16))
      let low = SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: h & 0xFFFF))
      let noise = (high + low) * 0x1.0p-16 - 1
      let x = source.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
      var raised = x * scale + noise + 0.5
      let over = raised .>= limit
      let under = raised .< minimum
      clamps &-= SIMD8<Int32>.zero.replacing(with: -1, where: over .| under)
      raised.replace(with: maximum, where: over)
      raised.replace(with: minimum, where: under)
      raised.replace(with: 0 as Float, where: raised .!= raised)
      let sum = raised + magic
      let nearest = unsafeBitCast(sum, to: SIMD8<Int32>.self) &- magicBits
      let floor = nearest &+ SIMD8<Int32>.zero.replacing(with: -1, where: sum - magic .> raised)
      target.storeBytes(of: floor &<< shift, toByteOffset: i * 4, as: SIMD8<Int32>.self)
      i += 8
    }
    var clipped = Int(clamps.wrappedSum())
    // The last few samples, one at a time: the same arithmetic.
    while i < count {
      let h = Self.hash(key ^ (first &+ UInt32(truncatingIfNeeded: i) &+ 1))
      let noise = (Float(h &>> 16) + Float(h & 0xFFFF)) * 0x1.0p-16 - 1
      var raised = input[i] * scale + noise + 0.5
      if raised >= scale {
        raised = scale - 1
        clipped += 1
      } else if raised < -scale {
        raised = -scale
        clipped += 1
      } else if raised.isNaN {
        raised = 0
      }
      output[i] = Int32(raised.rounded(.down)) &<< Int32(32 - bits)
      i += 1
    }
    return clipped
  }
}
