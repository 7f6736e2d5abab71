#if canImport(Glibc)
  public import Glibc
#endif

/// How a change moves from its old value to its new one over time: one definition shared by
/// the player (gain ramps and crossfades, on the audio thread) and the animated diffs (views
/// tweening clips from one snapshot to the next), so what is heard and what is seen move
/// alike.
///
/// `t` runs from 0 (the old value, exactly) to 1 (the new value, exactly); values outside are
/// clamped. The player uses ``linear`` (its crossfades must sum to 1 at every frame, since the
/// old and new mixes share every unchanged track); views may pick another.
///
/// ```swift
/// let gain = old + (new - old) * Easing.linear(0.25)
/// ```
public enum Easing: String, Sendable, Hashable, CaseIterable {
  /// A straight line: equal-gain crossfades, constant-speed ramps.
  case linear
  /// Slow at both ends: `(1 − cos(π·t))/2`.
  case smooth

  /// The eased fraction at `t`.
  ///
  /// - Note: Realtime-safe: arithmetic only (`linear` has no libm call).
  @_transparent
  public func callAsFunction(_ t: Double) -> Double {
    let t = min(1, max(0, t))
    switch self {
    case .linear: return t
    case .smooth: return (1 - cos(Double.pi * t)) / 2
    }
  }
}
