#if canImport(Glibc)
  public import Glibc
#endif

/// The pan laws: how a track's pan position splits a source between the left and right outputs.
///
/// With `θ = (pan + 1)·π/4` (pan −1 … +1, so θ runs 0 … π/2):
/// - a mono source is panned at constant power: `L = cos θ`, `R = sin θ` (each −3.01 dB at the
///   centre, `L² + R² = 1` everywhere);
/// - a stereo source is balanced: `L = min(1, √2·cos θ)`, `R = min(1, √2·sin θ)` (unity on both
///   sides at the centre; turning towards one side attenuates only the other).
///
/// ```swift
/// PanLaw.monoSource(pan: 0)    // (0.7071…, 0.7071…)
/// PanLaw.stereoSource(pan: 1)  // (0, 1)
/// ```
///
/// The same functions give a static pan's gains (compiled into a plan) and an automated pan's
/// (evaluated per frame by ``RenderKernel``), so a lane holding the static value sounds the same.
public enum PanLaw {
  /// The left and right gains for a mono source at `pan`.
  ///
  /// - Note: Realtime-safe: arithmetic only.
  @_noLocks
  @inlinable
  public static func monoSource(pan: Double) -> (left: Double, right: Double) {
    let theta = angle(pan)
    // One Double per `_unsafePerformance`: over a tuple, a debug build instantiates the tuple's
    // metadata (and allocates) the first time, on the audio thread.
    let cosine = _unsafePerformance { cos(theta) }
    let sine = _unsafePerformance { sin(theta) }
    return (clean(cosine), clean(sine))
  }

  /// The left and right gains for a stereo source's left and right channels at `pan`.
  ///
  /// - Note: Realtime-safe: arithmetic only.
  @_noLocks
  @inlinable
  public static func stereoSource(pan: Double) -> (left: Double, right: Double) {
    let theta = angle(pan)
    let cosine = _unsafePerformance { cos(theta) }
    let sine = _unsafePerformance { sin(theta) }
    let root = _unsafePerformance { 2.0.squareRoot() }
    return (min(1, clean(root * cosine)), min(1, clean(root * sine)))
  }

  @_noLocks
  @inlinable
  static func angle(_ pan: Double) -> Double {
    (min(1, max(-1, pan)) + 1) * Double.pi / 4
  }

  /// `cos(π/2)` is 6e-17, not 0: a hard-panned source should leave the other side silent.
  @_noLocks
  @inlinable
  static func clean(_ x: Double) -> Double {
    abs(x) < 1e-15 ? 0 : x
  }
}
