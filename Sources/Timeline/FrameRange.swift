/// A half-open range of frames `[start, end)` on one time axis.
///
/// Ranges are immutable values: edits return new ranges (`withStart(_:)`, `withEnd(_:)`,
/// `movedTo(_:)`), following Tracktion Engine's `TimeRange`. A range's ``count`` is never
/// negative.
///
/// ```swift
/// let crop = FrameRange(start: 48_000, count: 96_000)  // [1 s, 3 s) at 48 kHz
/// crop.withStart(72_000)                               // [1.5 s, 3 s)
/// crop.contains(FramePosition(144_000))                // false: the end is exclusive
/// ```
public struct FrameRange: Sendable, BitwiseCopyable, Hashable, Codable, CustomStringConvertible {
  public let start: FramePosition
  public let count: FrameCount

  /// A range from `start` lasting `count` frames.
  /// - Precondition: `count` is not negative.
  public init(start: FramePosition, count: FrameCount) {
    precondition(count.frames >= 0, "FrameRange count must not be negative")
    self.start = start
    self.count = count
  }

  /// The range `[start, end)`.
  /// - Precondition: `end >= start`.
  public init(start: FramePosition, end: FramePosition) {
    self.init(start: start, count: end - start)
  }

  /// The first frame after the range.
  public var end: FramePosition { start + count }

  public var isEmpty: Bool { count.frames == 0 }

  public var description: String { "[\(start.frames), \(end.frames))" }

  /// Whether `position` lies in `[start, end)`.
  public func contains(_ position: FramePosition) -> Bool {
    position >= start && position < end
  }

  /// Whether `other` lies entirely inside this range.
  public func contains(_ other: FrameRange) -> Bool {
    other.start >= start && other.end <= end
  }

  /// The same end with a new start. - Precondition: `newStart <= end`.
  public func withStart(_ newStart: FramePosition) -> FrameRange {
    FrameRange(start: newStart, end: end)
  }

  /// The same start with a new end. - Precondition: `newEnd >= start`.
  public func withEnd(_ newEnd: FramePosition) -> FrameRange {
    FrameRange(start: start, end: newEnd)
  }

  /// The same length starting at `newStart`.
  public func movedTo(_ newStart: FramePosition) -> FrameRange {
    FrameRange(start: newStart, count: count)
  }

  /// The frames both ranges cover, or `nil` when they do not overlap.
  public func intersection(_ other: FrameRange) -> FrameRange? {
    let lower = max(start, other.start)
    let upper = min(end, other.end)
    return lower < upper ? FrameRange(start: lower, end: upper) : nil
  }
}
