/// A point on a time axis (the timeline or a source), in whole frames from its start.
///
/// Positions and durations are different types: a position plus a ``FrameCount`` is a position,
/// and the distance between two positions is a ``FrameCount``. Adding two positions does not
/// compile.
///
/// ```swift
/// let start = FramePosition(96_000)
/// let end = start + FrameCount(48_000)
/// end - start  // FrameCount(48_000)
/// ```
public struct FramePosition: Sendable, BitwiseCopyable, Hashable, Codable, Comparable,
  CustomStringConvertible
{
  /// Frames from the start of the axis.
  public var frames: Int64

  public init(_ frames: Int64) {
    self.frames = frames
  }

  /// Frame 0.
  public static let zero = FramePosition(0)

  public var description: String { "@\(frames)f" }

  public static func < (lhs: FramePosition, rhs: FramePosition) -> Bool {
    lhs.frames < rhs.frames
  }
  public static func + (lhs: FramePosition, rhs: FrameCount) -> FramePosition {
    FramePosition(lhs.frames + rhs.frames)
  }
  public static func - (lhs: FramePosition, rhs: FrameCount) -> FramePosition {
    FramePosition(lhs.frames - rhs.frames)
  }
  public static func - (lhs: FramePosition, rhs: FramePosition) -> FrameCount {
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

extension FramePosition: ExpressibleByIntegerLiteral {
  public init(integerLiteral value: Int64) {
    self.init(value)
  }
}
