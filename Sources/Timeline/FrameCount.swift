/// A duration in whole frames at the project's sample rate.
///
/// Durations and positions are different types, so a length can never be passed where a
/// timeline position is expected. Arithmetic is plain integer arithmetic; validation (for
/// example "a clip is at least one frame long") belongs to the model, not to this type.
///
/// ```swift
/// let oneSecond = FrameCount(48_000)
/// let fade = FrameCount(480)
/// let rest = oneSecond - fade  // 47 520 frames
/// ```
public struct FrameCount: Sendable, BitwiseCopyable, Hashable, Codable, Comparable,
  CustomStringConvertible
{
  /// The number of frames; may be negative only as an intermediate result of arithmetic.
  public var frames: Int64

  public init(_ frames: Int64) {
    self.frames = frames
  }

  public static let zero = FrameCount(0)

  public var description: String { "\(frames)f" }

  public static func < (lhs: FrameCount, rhs: FrameCount) -> Bool { lhs.frames < rhs.frames }
  public static func + (lhs: FrameCount, rhs: FrameCount) -> FrameCount {
    FrameCount(lhs.frames + rhs.frames)
  }
  public static func - (lhs: FrameCount, rhs: FrameCount) -> FrameCount {
    FrameCount(lhs.frames - rhs.frames)
  }

  public init(from decoder: any Decoder) throws {
    frames = try decoder.singleValueContainer().decode(Int64.self)
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(frames)
  }
}

extension FrameCount: ExpressibleByIntegerLiteral {
  public init(integerLiteral value: Int64) {
    self.init(value)
  }
}
