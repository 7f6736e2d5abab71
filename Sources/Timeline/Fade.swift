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
public enum FadeCurve: String, Sendable, Hashable, Codable, CaseIterable,
  CustomStringConvertible
{
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

/// A fade at one end of a clip: its length in frames and its curve, and how much of a longer
/// curve an edit cut away.
///
/// A fade of length 0 is no fade. A fade-in covers the clip's first `length` frames, a fade-out
/// its last `length` frames; together they may cover the whole clip but not more.
///
/// A whole fade runs its curve from silence to full level over `length`. A range edit that cuts
/// through a fade (``Project/cutRange(_:tracks:ripple:edgeFade:crossfade:newClipID:)``, a split)
/// keeps the gain of every frame that stays exactly as it was, so what remains is part of the
/// old curve: `silentCut` frames of it were cut away at its silent end (beyond the clip's
/// edge), `fullCut` frames at its full-level end (beyond the fade's inner end, where the clip
/// now ends or begins). The curve spans `silentCut + length + fullCut` frames and the fade
/// plays the stretch of it after the first `silentCut`:
///
/// ```swift
/// // A 2 s fade-out (96,000 frames at 48 kHz) whose last 0.5 s a cut removed:
/// Fade(length: 72_000, curve: .sCurve, silentCut: 24_000)
/// ```
public struct Fade: Sendable, BitwiseCopyable, Hashable, Codable {
  public var length: FrameCount
  public var curve: FadeCurve
  /// Frames of the curve cut away at its silent end (0 for a whole fade).
  public var silentCut: FrameCount
  /// Frames of the curve cut away at its full-level end (0 for a whole fade).
  public var fullCut: FrameCount

  /// No part of the curve was cut away: it runs from silence to full level.
  public var isWhole: Bool { silentCut == .zero && fullCut == .zero }

  public init(
    length: FrameCount, curve: FadeCurve = .linear, silentCut: FrameCount = .zero,
    fullCut: FrameCount = .zero
  ) {
    self.length = length
    self.curve = curve
    self.silentCut = silentCut
    self.fullCut = fullCut
  }

  /// No fade.
  public static let none = Fade(length: .zero)

  /// Whether an edit cut part of the curve away.
  public var isPartial: Bool { silentCut > .zero || fullCut > .zero }

  /// The frames the whole curve spans: `silentCut + length + fullCut`.
  public var curveLength: FrameCount { silentCut + length + fullCut }

  /// What stays of this fade when its clip's edge moves `dropped` frames inward at the fade's
  /// silent end: the fade's first `dropped` frames go (added to `silentCut`); nothing left is
  /// no fade.
  func droppingSilentEnd(_ dropped: FrameCount) -> Fade {
    guard dropped < length else { return .none }
    return Fade(
      length: length - dropped, curve: curve, silentCut: silentCut + dropped, fullCut: fullCut)
  }

  /// The first `kept` frames of this fade from its silent end, the rest cut away at the
  /// full-level end (added to `fullCut`): what stays of it when the clip now ends (or, for a
  /// fade-out, begins) `kept` frames in.
  func keepingSilentEnd(_ kept: FrameCount) -> Fade {
    guard kept > .zero else { return .none }
    guard kept < length else { return self }
    return Fade(
      length: kept, curve: curve, silentCut: silentCut, fullCut: fullCut + (length - kept))
  }
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
  /// Fade-in: `shape((inSkip + i) / inSpan)` for `i < fadeIn` (the first frame of a whole fade
  /// is silent). Fade-out: `shape((outSkip + length − i) / outSpan)` for
  /// `i ≥ length − fadeOut` (the last frame of a whole fade is `shape(1 / fadeOut)`). `inSkip`
  /// and `outSkip` are the fades' ``silentCut``, `inSpan` and `outSpan` their
  /// ``curveLength``; for whole fades (`skip 0`, `span = length`) these match sox `fade t` and
  /// ffmpeg `afade curve=tri` for `linear`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inlinable
  public static func gain(
    at i: Int64, length: Int64, fadeIn: Int64, inCurve: FadeCurve, inSkip: Int64 = 0,
    inSpan: Int64? = nil, fadeOut: Int64, outCurve: FadeCurve, outSkip: Int64 = 0,
    outSpan: Int64? = nil
  ) -> Double {
    var gain = 1.0
    if i < fadeIn {
      gain *= inCurve.shape(Double(inSkip + i) / Double(inSpan ?? fadeIn))
    }
    let fromEnd = length - i
    if fadeOut > 0 && fromEnd <= fadeOut {
      gain *= outCurve.shape(Double(outSkip + fromEnd) / Double(outSpan ?? fadeOut))
    }
    return gain
  }
}

extension Clip {
  /// The fades' combined gain at clip frame `i` (`0 ≤ i < length`), not counting clip gain:
  /// ``Fade/gain(at:length:fadeIn:inCurve:inSkip:inSpan:fadeOut:outCurve:outSkip:outSpan:)``.
  public func fadeGain(at i: Int64) -> Double {
    Fade.gain(
      at: i, length: sourceRange.count.frames, fadeIn: fadeIn.length.frames,
      inCurve: fadeIn.curve, inSkip: fadeIn.silentCut.frames,
      inSpan: fadeIn.curveLength.frames, fadeOut: fadeOut.length.frames,
      outCurve: fadeOut.curve, outSkip: fadeOut.silentCut.frames,
      outSpan: fadeOut.curveLength.frames)
  }
}
