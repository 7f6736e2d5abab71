public import Timeline

/// The mix engine: render plans compiled from snapshots, and the render kernel.
///
/// Filled by the rendering issue; this namespace marks where it lives.
public enum Mixing {
  /// The linear gain of a clip at clip frame `i`: clip gain times its fades.
  public static func clipGain(_ clip: Clip, at i: Int64) -> Double {
    clip.gain.linear * clip.fadeGain(at: i)
  }
}
