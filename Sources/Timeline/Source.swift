/// An audio file the project uses: where it is, what it contains, and a hash that tells whether
/// it is still the same file.
///
/// Sources are registered by import and referred to by clips through their ``ID``. The frame
/// count and rate are those of the file itself, before any resampling to the project rate.
public struct Source: Sendable, Hashable, Codable, Identifiable, IdentifiedEntity {
  public typealias ID = EntityID<Source>
  public static let idPrefix = "s"
  public static let entityName = "source"

  public let id: ID
  /// The file's path: relative to the project's folder when the file lies inside it (a project
  /// moved with its audio keeps working), absolute otherwise. Bytes, as Linux names files.
  public var path: RawPath
  /// A hash of the file's contents, used to detect a changed or wrongly relinked file.
  public var contentHash: String
  /// The file's own sample rate in Hz.
  public var sampleRate: Int
  /// 1 (mono) or 2 (stereo).
  public var channels: Int
  /// The file's length in frames at its own rate.
  public var frameCount: FrameCount

  public init(
    id: ID, path: RawPath, contentHash: String, sampleRate: Int, channels: Int,
    frameCount: FrameCount
  ) {
    self.id = id
    self.path = path
    self.contentHash = contentHash
    self.sampleRate = sampleRate
    self.channels = channels
    self.frameCount = frameCount
  }

  /// The source's length in frames at `projectRate`, the length of its decoded cache.
  ///
  /// Resampling maps `n` frames at rate `r` to `round(n · projectRate / r)` frames.
  public func frameCount(atRate projectRate: Int) -> FrameCount {
    guard sampleRate != projectRate, sampleRate > 0 else { return frameCount }
    let scaled = (Double(frameCount.frames) * Double(projectRate) / Double(sampleRate))
    return FrameCount(Int64(scaled.rounded()))
  }
}
