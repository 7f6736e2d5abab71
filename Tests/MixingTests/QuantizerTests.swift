import Foundation
import Mixing
import Testing

@Suite("Quantizer")
struct QuantizerTests {
  /// The quantizer written plainly, one sample after another, from its specification: the
  /// key is SplitMix64's output for the seed (its high 32 bits); sample `n` of the stream
  /// (from 1, across calls) hashes `key ^ n` with `lowbias32` and takes its two 16-bit halves as
  /// two uniform values; `⌊x + ½⌋` by `rounded(.down)`, in float for dithered output of 16 bits
  /// or fewer (`x·scale + noise + ½`, in that order), in double otherwise; clamped and counted,
  /// NaN to 0.
  struct Sequential {
    let bits: Int
    let dither: Bool
    let key: UInt32
    var n: UInt32 = 0

    init(bits: Int, dither: Bool, seed: UInt64) {
      self.bits = bits
      self.dither = dither
      var z = seed &+ 0x9E37_79B9_7F4A_7C15
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      z ^= z >> 31
      key = UInt32(z >> 32)
    }

    mutating func noise() -> Double {
      n &+= 1
      var x = key ^ n
      x ^= x >> 16
      x &*= 0x7FEB_352D
      x ^= x >> 15
      x &*= 0x846C_A68B
      x ^= x >> 16
      return Double(x >> 16) / 65_536 - 0.5 + Double(x % 65_536) / 65_536 - 0.5
    }

    mutating func quantize(_ input: [Float]) -> (codes: [Int32], clipped: Int) {
      let scale = Double(1 << (bits - 1))
      var clipped = 0
      var codes: [Int32] = []
      for sample in input {
        var value: Double
        if dither && bits <= 16 {
          let noise = Float(noise())
          value = Double((sample * Float(scale) + noise + 0.5).rounded(.down))
        } else {
          let noise = dither ? noise() : 0
          value = (Double(sample) * scale + noise + 0.5).rounded(.down)
        }
        if value > scale - 1 {
          value = scale - 1
          clipped += 1
        } else if value < -scale {
          value = -scale
          clipped += 1
        } else if value.isNaN {
          value = 0
        }
        codes.append(Int32(value) << Int32(32 - bits))
      }
      return (codes, clipped)
    }
  }

  /// Samples across and beyond full scale, ties, tiny values, infinities and NaN.
  static func samples(_ count: Int, seed: UInt64) -> [Float] {
    var random = SeededUniform(seed)
    var samples: [Float] = [
      0, -0, 1, -1, 1.5, -1.5, .infinity, -.infinity, .nan, 0.99999, -0.99999,
      Float(0.5 / 32_768), Float(-0.5 / 32_768), Float(1.5 / 32_768), Float(-1.5 / 32_768),
      Float(0.5 / 8_388_608), Float(-2.5 / 128), .leastNonzeroMagnitude, 32_767.0 / 32_768,
    ]
    while samples.count < count {
      samples.append(Float(random.uniform() * 2.4 - 1.2))
    }
    return samples
  }

  /// The quantizer (its dither counter-based, its loops branch-free and vectorized) gives
  /// exactly the codes and clip counts of the plain sequential one, call after call.
  @Test(arguments: [8, 16, 20, 24], [false, true])
  func equalsTheSequentialQuantizer(bits: Int, dither: Bool) {
    let input = Self.samples(20_000, seed: UInt64(bits))
    var quantizer = Quantizer(bits: bits, dither: dither, seed: 0x5441_5045 &+ UInt64(bits))
    var reference = Sequential(bits: bits, dither: dither, seed: 0x5441_5045 &+ UInt64(bits))
    var offset = 0
    // Uneven pieces: the stream continues from one call to the next.
    for count in [1, 7, 4_096, 3, 10_000, 5_893] {
      let piece = Array(input[offset..<offset + count])
      var codes = [Int32](repeating: 0, count: count)
      let clipped = piece.withUnsafeBufferPointer { source in
        codes.withUnsafeMutableBufferPointer { output in
          quantizer.quantize(source.baseAddress!, count: count, into: output.baseAddress!)
        }
      }
      let expected = reference.quantize(piece)
      #expect(codes == expected.codes, "bits \(bits), dither \(dither), at \(offset)")
      #expect(clipped == expected.clipped, "bits \(bits), dither \(dither), at \(offset)")
      offset += count
    }
  }
}

/// A small seeded generator of uniform values in `[0, 1)` for test inputs.
struct SeededUniform {
  var state: UInt64
  init(_ seed: UInt64) { state = seed }
  mutating func uniform() -> Double {
    state &+= 0x2545_F491_4F6C_DD1D
    var z = state
    z = (z ^ (z >> 33)) &* 0xFF51_AFD7_ED55_8CCD
    z = (z ^ (z >> 33)) &* 0xC4CE_B9FE_1A85_EC53
    z ^= z >> 33
    return Double(z >> 11) * 0x1.0p-53
  }
}
