/// A source's decoded audio as the mixer reads it: interleaved float32 at the project rate.
///
/// The mixer never owns audio memory: `owner` is whatever keeps `samples` valid (a memory-mapped
/// cache file, say), and a ``RenderPlan`` holds it for as long as the plan lives.
///
/// ```swift
/// let audio = SourceAudio(samples: buffer.baseAddress, frames: 48_000, channels: 1, owner: box)
/// ```
public struct SourceAudio: @unchecked Sendable {
  /// Frame `i`, channel `c` is `samples[i * channels + c]`; nil only when `frames` is 0.
  public let samples: UnsafePointer<Float>?
  public let frames: Int
  /// 1 or 2.
  public let channels: Int
  /// Keeps `samples` alive.
  public let owner: AnyObject?

  public init(samples: UnsafePointer<Float>?, frames: Int, channels: Int, owner: AnyObject?) {
    self.samples = samples
    self.frames = frames
    self.channels = channels
    self.owner = owner
  }
}
