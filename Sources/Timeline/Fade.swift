#if canImport(Glibc)
  public import Glibc
#endif

/// The shape of a fade, applied to the linear ramp `x` that runs from 0 to 1 across it.
///
/// The formulas (Mixing evaluates them; they are documented here so the model and the README
/// agree):
/// - `linear`: `x`
/// - `equalPower`: `sin(x·π/2)` (a crossfade of two uncorrelated signals keeps constant power)
/// - `sCurve`: `(1 − cos(π·x))/2` (gentle at both ends)
/// - `exponential`: `(2^(10·x) − 1)/1023` (a −60 dB-ish start that rises fast at the end,
///   like a fader moved at a constant speed in dB; exactly 0 at `x = 0` and 1 at `x = 1`)
public enum FadeCurve: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
  case linear
  case equalPower
  case sCurve
  case exponential

  public var description: String { rawValue }

  /// A small number for each curve, for hashes of flattened plans.
  public var ordinal: Int {
    switch self {
    case .linear: 0
    case .equalPower: 1
    case .sCurve: 2
    case .exponential: 3
    }
  }

  /// The name the command line uses: `linear`, `equal-power`, `s-curve`, `exponential`.
  public var displayName: String {
    switch self {
    case .linear: "linear"
    case .equalPower: "equal-power"
    case .sCurve: "s-curve"
    case .exponential: "exponential"
    }
  }

  /// Parses a curve name as typed on the command line: `linear`, `equal-power`/`equalPower`,
  /// `s-curve`/`sCurve`, `exponential`/`exp`, case-insensitively.
  public init?(parsing text: String) {
    switch text.lowercased().filter({ $0 != "-" && $0 != "_" }) {
    case "linear", "lin": self = .linear
    case "equalpower", "ep": self = .equalPower
    case "scurve", "s": self = .sCurve
    case "exponential", "exp": self = .exponential
    default: return nil
    }
  }
}

/// A fade at one end of a clip: its length in frames and its curve.
///
/// A fade of length 0 is no fade. A fade-in covers the clip's first `length` frames, a fade-out
/// its last `length` frames; together they may cover the whole clip but not more.
public struct Fade: Sendable, Hashable, Codable {
  public var length: FrameCount
  public var curve: FadeCurve

  public init(length: FrameCount, curve: FadeCurve = .linear) {
    self.length = length
    self.curve = curve
  }

  /// No fade.
  public static let none = Fade(length: .zero)
}

extension FadeCurve: BitwiseCopyable {
  /// The curve's gain at `x` in `0…1` along the fade (0 = silent end, 1 = full level).
  ///
  /// See ``FadeCurve`` for the formulas. The one implementation: the model, the offline
  /// renderer and the audio thread all call it.
  ///
  /// - Note: Realtime-safe: libm's `sin`, `cos` and `exp2` neither allocate nor lock.
  @_noLocks
  @inlinable
  public func shape(_ x: Double) -> Double {
    switch self {
    case .linear: x
    case .equalPower: _unsafePerformance { sin(x * Double.pi / 2) }
    case .sCurve: _unsafePerformance { (1 - cos(Double.pi * x)) / 2 }
    case .exponential: _unsafePerformance { (exp2(10 * x) - 1) / 1023 }
    }
  }
}

extension Fade {
  /// The combined gain of a clip's fades at clip frame `i` (`0 ≤ i < length`), not counting
  /// clip gain: the one definition, used by ``Clip/fadeGain(at:)`` and the render kernel.
  ///
  /// Fade-in: `shape(i / fadeIn)` for `i < fadeIn` (the first frame is silent). Fade-out:
  /// `shape((length − i) / fadeOut)` for `i ≥ length − fadeOut` (the last frame is
  /// `shape(1 / fadeOut)`). These match sox `fade t` and ffmpeg `afade curve=tri` for `linear`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inlinable
  public static func gain(
    at i: Int64, length: Int64, fadeIn: Int64, inCurve: FadeCurve, fadeOut: Int64,
    outCurve: FadeCurve
  ) -> Double {
    var gain = 1.0
    if i < fadeIn {
      gain *= inCurve.shape(Double(i) / Double(fadeIn))
    }
    let fromEnd = length - i
    if fadeOut > 0 && fromEnd <= fadeOut {
      gain *= outCurve.shape(Double(fromEnd) / Double(fadeOut))
    }
    return gain
  }
}

extension Clip {
  /// The fades' combined gain at clip frame `i` (`0 ≤ i < length`), not counting clip gain:
  /// ``Fade/gain(at:length:fadeIn:inCurve:fadeOut:outCurve:)``.
  public func fadeGain(at i: Int64) -> Double {
    Fade.gain(
      at: i, length: sourceRange.count.frames, fadeIn: fadeIn.length.frames,
      inCurve: fadeIn.curve, fadeOut: fadeOut.length.frames, outCurve: fadeOut.curve)
  }
}
