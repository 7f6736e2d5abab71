/// Automation of a parameter in its own units (an effect port's value, a pan position): points
/// of (timeline frame, value), each segment `linear` (the value runs linearly from one point to
/// the next) or `hold` (the point's value until the next point, then a step).
///
/// The same definition as ``Envelope``'s, read in the parameter's units: before the first
/// point the first point's value, after the last the last's, at a point exactly its value. It
/// is kept as an ``Envelope`` whose numbers are the values (a `db` segment of an envelope runs
/// linearly in its numbers, which is `linear` here), so the point edits, the ripple edits
/// (``removing(_:)``, ``opening(at:length:)``) and the stored form are the volume envelope's,
/// not copies of them.
///
/// ```swift
/// let sweep = try ParameterEnvelope(
///   parsing: "2s:0,4s:-12", shapes: nil, sampleRate: 48_000, value: { Double($0) ?? 0 })
/// sweep.value(at: 144_000)  // -6
/// ```
public struct ParameterEnvelope: Sendable, Hashable, Codable {
  /// The points, `decibels` holding the values; shapes `db` (linear here) or `hold`.
  public var curve: Envelope

  public init(curve: Envelope) {
    self.curve = curve
  }

  /// One point as commands and JSON show it.
  public struct Point: Sendable, Hashable {
    public var time: FramePosition
    public var value: Double
    public var shape: AutomationShape
  }

  public var points: [Point] {
    curve.points.map {
      Point(time: $0.time, value: $0.decibels, shape: $0.shape == .hold ? .hold : .linear)
    }
  }

  /// Parses `TIME:VALUE` points (``Envelope/init(parsing:shapes:sampleRate:)``'s form), each
  /// value read by `value` (in the port's units, checked against its range), and `shapes`:
  /// `linear` or `hold`, one for all or one per segment.
  public init(
    parsing text: String, shapes: String?, sampleRate: Int,
    value: (String) throws(TimelineError) -> Double
  ) throws(TimelineError) {
    curve = try Envelope(
      parsing: text, shapes: try Self.curveShapes(shapes), sampleRate: sampleRate, value: value)
  }

  /// `current` after `edit` (``Envelope/edited(_:by:name:sampleRate:)``, with values read by
  /// `value` and shapes `linear` or `hold`); nil when no point is left.
  public static func edited(
    _ current: ParameterEnvelope?, by edit: EnvelopeEdit, name: String, sampleRate: Int,
    value: (String) throws(TimelineError) -> Double
  ) throws(TimelineError) -> ParameterEnvelope? {
    let translated: EnvelopeEdit
    switch edit {
    case .set(let text, let shapes): translated = .set(text, shapes: try curveShapes(shapes))
    case .add(let text, let shapes): translated = .add(text, shapes: try curveShapes(shapes))
    case .remove, .move, .clear: translated = edit
    }
    return try Envelope.edited(
      current?.curve, by: translated, name: name, sampleRate: sampleRate, value: value
    ).map(ParameterEnvelope.init(curve:))
  }

  /// `linear`/`hold` names as the envelope's (`db`/`hold`); nil stays nil.
  static func curveShapes(_ text: String?) throws(TimelineError) -> String? {
    guard let text else { return nil }
    var names: [String] = []
    for part in text.split(separator: ",", omittingEmptySubsequences: false) {
      let name = part.trimmingBlanks
      guard let shape = AutomationShape(rawValue: name.lowercased()) else {
        throw .invalidAutomationShape(name)
      }
      names.append(shape == .hold ? EnvelopeShape.hold.rawValue : EnvelopeShape.decibels.rawValue)
    }
    return names.joined(separator: ",")
  }

  /// Whether every segment holds (what a toggle, enumeration or integer port allows).
  public var holdsOnly: Bool {
    curve.points.dropLast().allSatisfy { $0.shape == .hold }
  }

  /// The value at timeline frame `frame`, as ``EnvelopeSegment/value(at:)`` computes it.
  public func value(at frame: Int64) -> Double {
    let segments = curve.segments()
    guard let index = EnvelopeSegment.index(of: frame, in: segments) else { return 0 }
    return segments[index].value(at: frame)
  }

  /// Throws unless there is a point, times start at 0 or later and strictly increase, and
  /// every value is finite. `name` is how messages name it.
  public func validate(name: String, sampleRate: Int) throws(TimelineError) {
    guard !curve.points.isEmpty else {
      throw .invalidAutomation("the automation of \(name) has no points; give TIME:VALUE pairs")
    }
    guard curve.points.allSatisfy({ $0.decibels.isFinite }) else {
      throw .invalidAutomation("the automation of \(name) has a value that is not a number")
    }
    try curve.validateTimes(name: name, sampleRate: sampleRate)
  }

  /// This automation with `range` taken out of the timeline (``Envelope/removing(_:)``).
  public func removing(_ range: FrameRange) -> ParameterEnvelope {
    ParameterEnvelope(curve: curve.removing(range))
  }

  /// This automation with a gap opened (``Envelope/opening(at:length:)``).
  public func opening(at position: FramePosition, length: FrameCount) -> ParameterEnvelope {
    ParameterEnvelope(curve: curve.opening(at: position, length: length))
  }

  /// The stored form: ``Envelope/storageText``.
  public var storageText: String { curve.storageText }

  public init?(storageText: String) {
    guard let curve = Envelope(storageText: storageText) else { return nil }
    self.curve = curve
  }

  /// `TIME:VALUE` points with shapes, as `ls` and `diff` show them: `2s:0,4s:-12`, a `hold`
  /// segment marked after its point's value (`2s:1 hold,4s:0`).
  public func description(sampleRate: Int) -> String {
    points.enumerated().map { index, point in
      let time = TimeValue.seconds(FrameCount(point.time.frames), sampleRate: sampleRate)
      let value =
        point.value == point.value.rounded() && abs(point.value) < 1e15
        ? String(Int64(point.value)) : "\(point.value)"
      let held = point.shape == .hold && index < points.count - 1 ? " hold" : ""
      return "\(time):\(value)\(held)"
    }.joined(separator: ",")
  }
}

/// How an automation lane runs from one point to the next.
public enum AutomationShape: String, Sendable, Hashable, Codable, CaseIterable {
  /// Linearly in the parameter's units (the default).
  case linear
  /// The point's value until the next point.
  case hold
}

extension EnvelopeSegment {
  /// The value at `frame` (in `[start, end)`) of a ``ParameterEnvelope``'s segment: its
  /// numbers read as values, linear between them or held.
  ///
  /// - Note: Realtime-safe: arithmetic only.
  @_noLocks
  @inlinable
  public func value(at frame: Int64) -> Double {
    switch kind {
    case .decibelLine:
      let x = Double(frame - start) / Double(end - start)
      return fromDecibels + x * (toDecibels - fromDecibels)
    case .hold, .amplitudeLine:
      return fromDecibels
    }
  }
}
