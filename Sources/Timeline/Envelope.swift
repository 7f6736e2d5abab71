#if canImport(Glibc)
  public import Glibc
#endif

/// A track's gain over time (volume automation): breakpoints of (timeline frame, gain in dB).
///
/// The definition, which the renderer evaluates for every sample, offline and in the player:
/// - before the first point, the first point's gain; after the last, the last point's;
/// - between two points, the gain runs linearly in dB (`dB = dB₀ + x·(dB₁ − dB₀)`, `x` the
///   fraction of the way from one point's frame to the next);
/// - a segment with `-inf` dB (silence) at either end runs linearly in amplitude instead
///   (`a = a₀ + x·(a₁ − a₀)`, with `a = 10^(dB/20)` and 0 for `-inf`), since no dB line
///   reaches silence.
///
/// That is the default shape of a segment (``EnvelopeShape/decibels``); a point may give the
/// segment that starts at it another: ``EnvelopeShape/linear`` (linearly in amplitude) or
/// ``EnvelopeShape/hold`` (the point's gain until the next point). Each shape cut anywhere is
/// the same shape between the cut and the next point, so range edits keep every frame's gain.
///
/// At a breakpoint's frame the gain is exactly that point's. Times strictly increase.
///
/// ```swift
/// let fadeDown = try Envelope(parsing: "0s:0dB,10s:-6dB,12s:-inf", sampleRate: 48_000)
/// fadeDown.gain(at: 480_000)  // 0.501… (−6 dB)
/// ```
public struct Envelope: Sendable, Hashable, Codable {
  public struct Point: Sendable, Hashable, Codable {
    public var time: FramePosition
    /// Finite within ``Gain/minimumDecibels`` … ``Gain/maximumDecibels``, or `-infinity`.
    public var decibels: Double
    /// How the gain runs from this point to the next (nothing, after the last point).
    public var shape: EnvelopeShape

    public init(time: FramePosition, decibels: Double, shape: EnvelopeShape = .decibels) {
      self.time = time
      self.decibels = decibels
      self.shape = shape
    }

    private enum CodingKeys: String, CodingKey { case time, decibels, shape }

    /// A point encoded before shapes existed has the default shape.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      time = try container.decode(FramePosition.self, forKey: .time)
      decibels = try container.decode(Double.self, forKey: .decibels)
      shape = try container.decodeIfPresent(EnvelopeShape.self, forKey: .shape) ?? .decibels
    }

    /// `10^(dB/20)`; 0 for `-inf`.
    public var amplitude: Double {
      decibels == -.infinity ? 0 : pow(10, decibels / 20)
    }
  }

  public var points: [Point]

  public init(points: [Point]) {
    self.points = points
  }

  /// The gain (amplitude) at timeline frame `frame`: the definition above.
  public func gain(at frame: Int64) -> Double {
    let segments = segments()
    guard let index = EnvelopeSegment.index(of: frame, in: segments) else { return 1 }
    return segments[index].gain(at: frame)
  }

  /// The envelope as flat segments, one per stretch of time with one formula: a hold before
  /// the first point (from `Int64.min`), one per pair of points, a hold after the last (to
  /// `Int64.max`). What the render kernel reads.
  public func segments() -> [EnvelopeSegment] {
    guard let first = points.first, let last = points.last else { return [] }
    var segments = [
      EnvelopeSegment(
        start: .min, end: first.time.frames, kind: .hold, from: first.amplitude, to: 0,
        fromDecibels: first.decibels, toDecibels: first.decibels)
    ]
    for (a, b) in zip(points, points.dropFirst()) {
      let kind: EnvelopeSegment.Kind
      switch a.shape {
      case _ where a.decibels == b.decibels, .hold: kind = .hold
      case .linear: kind = .amplitudeLine
      case .decibels:
        kind = a.decibels.isFinite && b.decibels.isFinite ? .decibelLine : .amplitudeLine
      }
      segments.append(
        EnvelopeSegment(
          start: a.time.frames, end: b.time.frames, kind: kind, from: a.amplitude,
          to: b.amplitude, fromDecibels: a.decibels, toDecibels: b.decibels))
    }
    segments.append(
      EnvelopeSegment(
        start: last.time.frames, end: .max, kind: .hold, from: last.amplitude, to: 0,
        fromDecibels: last.decibels, toDecibels: last.decibels))
    return segments
  }

  /// Throws unless there is a point, times start at 0 or later, strictly increase and stay
  /// within the time limit, and every gain is in range or `-inf`.
  public func validate(track: Track.ID, sampleRate: Int) throws(TimelineError) {
    guard !points.isEmpty else { throw .emptyEnvelope(track: track) }
    var previous: FramePosition?
    for point in points {
      guard point.time >= .zero, point.time.frames <= TimeValue.maximumFrames.frames else {
        throw .envelopeTimeOutOfRange(track: track, time: point.time, sampleRate: sampleRate)
      }
      if let previous, point.time <= previous {
        throw .envelopeNotIncreasing(track: track, time: point.time, sampleRate: sampleRate)
      }
      previous = point.time
      // Below the least gain is allowed: a range edit that cuts a segment running to silence
      // adds a point with the gain at the cut, however small, so that no frame changes.
      if point.decibels != -.infinity {
        try Gain(decibels: max(point.decibels, Gain.minimumDecibels)).validate(
          as: "envelope gain of track \(track)")
      }
    }
  }
}

extension Envelope {
  /// ``validate(track:sampleRate:)``'s checks for a send's envelope, its messages naming the
  /// send.
  public func validate(send: Send.ID, sampleRate: Int) throws(TimelineError) {
    guard !points.isEmpty else {
      throw .invalidAutomation("the envelope of send \(send) has no points; give TIME:GAIN pairs")
    }
    try validateTimes(name: "send \(send)'s envelope", sampleRate: sampleRate)
    for point in points where point.decibels != -.infinity {
      try Gain(decibels: max(point.decibels, Gain.minimumDecibels)).validate(
        as: "envelope gain of send \(send)")
    }
  }

  /// Throws unless every point's time is on the timeline and times strictly increase; `name`
  /// is how messages name the lane.
  func validateTimes(name: String, sampleRate: Int) throws(TimelineError) {
    var previous: FramePosition?
    for point in points {
      guard point.time >= .zero, point.time.frames <= TimeValue.maximumFrames.frames else {
        throw .invalidAutomation(
          "a point of \(name) at \(TimeValue.seconds(FrameCount(point.time.frames), sampleRate: sampleRate)) is outside the timeline"
        )
      }
      if let previous, point.time <= previous {
        throw .invalidAutomation("the points of \(name) must be in time order")
      }
      previous = point.time
    }
  }
}

/// How an ``Envelope``'s gain runs from one point to the next. Each is the same shape when cut
/// anywhere (what range edits rely on), which is why there is no S-curve.
public enum EnvelopeShape: String, Sendable, Hashable, Codable, CaseIterable {
  /// Linearly in dB; linearly in amplitude where either end is `-inf` (the default).
  case decibels = "db"
  /// Linearly in amplitude.
  case linear
  /// The point's gain until the next point, which it then steps to.
  case hold
}

/// One stretch of an ``Envelope`` with one formula, flat and trivially copyable for the audio
/// thread: frames `[start, end)`.
public struct EnvelopeSegment: Sendable, Hashable, BitwiseCopyable {
  public enum Kind: UInt8, Sendable, Hashable, BitwiseCopyable {
    /// `from` throughout.
    case hold
    /// Linear in dB from `fromDecibels` at `start` to `toDecibels` at `end`.
    case decibelLine
    /// Linear in amplitude from `from` at `start` to `to` at `end` (an end is silence).
    case amplitudeLine
  }

  public var start: Int64
  public var end: Int64
  public var kind: Kind
  public var from: Double
  public var to: Double
  public var fromDecibels: Double
  public var toDecibels: Double

  public init(
    start: Int64, end: Int64, kind: Kind, from: Double, to: Double, fromDecibels: Double,
    toDecibels: Double
  ) {
    self.start = start
    self.end = end
    self.kind = kind
    self.from = from
    self.to = to
    self.fromDecibels = fromDecibels
    self.toDecibels = toDecibels
  }

  /// The gain at `frame` (in `[start, end)`).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inlinable
  public func gain(at frame: Int64) -> Double {
    switch kind {
    case .hold:
      return from
    case .decibelLine:
      let x = Double(frame - start) / Double(end - start)
      let decibels = fromDecibels + x * (toDecibels - fromDecibels)
      return _unsafePerformance { pow(10, decibels / 20) }
    case .amplitudeLine:
      let x = Double(frame - start) / Double(end - start)
      return from + x * (to - from)
    }
  }

  /// The index of the segment holding `frame` (segments sorted and contiguous, as
  /// ``Envelope/segments()`` makes them); nil when there are none.
  ///
  /// - Note: Realtime-safe: a binary search.
  @_noLocks
  @inlinable
  public static func index(
    of frame: Int64, in segments: UnsafeBufferPointer<EnvelopeSegment>
  )
    -> Int?
  {
    guard !segments.isEmpty else { return nil }
    var low = 0
    var high = segments.count - 1
    while low < high {
      let middle = (low + high + 1) / 2
      if segments[middle].start <= frame { low = middle } else { high = middle - 1 }
    }
    return low
  }

  /// ``index(of:in:)`` for an array.
  public static func index(of frame: Int64, in segments: [EnvelopeSegment]) -> Int? {
    segments.withUnsafeBufferPointer { index(of: frame, in: $0) }
  }
}

extension Envelope {
  /// Parses breakpoints as typed: `TIME:GAIN` pairs separated by commas, a time in any form
  /// ``TimeValue`` reads and a gain as ``Gain/init(parsing:)`` reads it, or `-inf` (silence):
  /// `0s:0dB,10s:-6dB,12s:-inf`.
  ///
  /// `shapes`, when given, names the segments' shapes (``EnvelopeShape``'s raw values): one for
  /// every segment, or one per segment, comma-separated (`linear,hold`).
  public init(parsing text: String, shapes: String? = nil, sampleRate: Int) throws(TimelineError) {
    try self.init(parsing: text, shapes: shapes, sampleRate: sampleRate, value: Self.gainValue)
  }

  /// A gain as typed in a point, in dB: ``Gain/init(parsingAnyValue:)``'s forms, or `-inf`.
  static func gainValue(_ text: String) throws(TimelineError) -> Double {
    if ["-inf", "-infdb", "-inf db"].contains(text.lowercased()) { return -.infinity }
    return try Gain(parsingAnyValue: text).decibels
  }

  /// ``init(parsing:shapes:sampleRate:)`` with each point's value read by `value` (what an
  /// automation lane reads in its own units: ``ParameterEnvelope``).
  init(
    parsing text: String, shapes: String?, sampleRate: Int,
    value: (String) throws(TimelineError) -> Double
  ) throws(TimelineError) {
    var points: [Point] = []
    for part in text.split(separator: ",", omittingEmptySubsequences: false) {
      let piece = part.trimmingBlanks
      // The last colon separates the gain: times may hold colons (1:02.5).
      guard let colon = piece.lastIndex(of: ":") else { throw .invalidEnvelopePoint(piece) }
      let time = String(piece[..<colon])
      let gain = String(piece[piece.index(after: colon)...]).trimmingBlanks
      if EnvelopeShape(rawValue: gain.lowercased()) != nil { throw .envelopeShapeInPoint(piece) }
      let frames = try TimeValue(parsing: time, sampleRate: sampleRate).frames
      let decibels = try value(gain)
      points.append(Point(time: FramePosition(frames.frames), decibels: decibels))
    }
    if let shapes {
      let segments = points.count - 1
      let named = try Self.shapes(parsing: shapes, count: segments) {
        .envelopeShapeCount(given: $0, segments: segments)
      }
      for (index, shape) in named.enumerated() { points[index].shape = shape }
    }
    self.init(points: points)
  }

  /// `count` shapes as typed: ``EnvelopeShape``'s raw values, comma-separated, in any case,
  /// one for all or one each; another number of them is refused with `mismatch(given)`.
  static func shapes(
    parsing text: String, count: Int, mismatch: (Int) -> TimelineError
  ) throws(TimelineError) -> [EnvelopeShape] {
    var named: [EnvelopeShape] = []
    for part in text.split(separator: ",", omittingEmptySubsequences: false) {
      let name = part.trimmingBlanks
      guard let shape = EnvelopeShape(rawValue: name.lowercased()) else {
        throw .invalidEnvelopeShape(name)
      }
      named.append(shape)
    }
    if named.count == 1 { return Array(repeating: named[0], count: count) }
    guard named.count == count else { throw mismatch(named.count) }
    return named
  }

  /// The form the store keeps: `frames:dB` pairs separated by `;` (`-inf` for silence), the
  /// dB written so that it reads back to the same double, and `:shape` after a point whose
  /// segment is not the default shape (`0:0.0:hold;48000:-6.0`).
  public var storageText: String {
    points.map { point in
      let decibels = point.decibels == -.infinity ? "-inf" : "\(point.decibels)"
      let shape = point.shape == .decibels ? "" : ":\(point.shape.rawValue)"
      return "\(point.time.frames):\(decibels)\(shape)"
    }.joined(separator: ";")
  }

  /// Reads ``storageText`` back; nil when it is not that form.
  public init?(storageText text: String) {
    var points: [Point] = []
    for part in text.split(separator: ";") {
      let fields = part.split(separator: ":")
      guard fields.count == 2 || fields.count == 3, let frames = Int64(fields[0]) else {
        return nil
      }
      let decibels = fields[1] == "-inf" ? -.infinity : Double(fields[1])
      let shape = fields.count == 3 ? EnvelopeShape(rawValue: String(fields[2])) : .decibels
      guard let decibels, let shape else { return nil }
      points.append(Point(time: FramePosition(frames), decibels: decibels, shape: shape))
    }
    guard !points.isEmpty else { return nil }
    self.init(points: points)
  }
}

extension Envelope {
  /// This envelope with `range` taken out of the timeline, as a ripple cut takes it out of the
  /// clips: the gain before the range is what it was, and from the range's start on what it
  /// was `range.count` frames later. Points in the range go; a point just before it and one at
  /// its start carry the gains either side of the cut (one frame apart, so every frame keeps
  /// its gain), and the shapes of the segments they cut (`explicitShape(at:)`), so the gain
  /// between them and the points beyond runs exactly as it did. The result is
  /// ``compacted()``: a cut where the gain is flat adds no point.
  public func removing(_ range: FrameRange) -> Envelope {
    let (a, b) = (range.start.frames, range.end.frames)
    var kept = points(before: a)
    kept.append(
      Point(time: FramePosition(a), decibels: decibels(at: b), shape: explicitShape(at: b)))
    for point in points where point.time.frames > b {
      var moved = point
      moved.time = FramePosition(point.time.frames - (b - a))
      kept.append(moved)
    }
    return Envelope(points: Self.joined(kept, at: a)).compacted()
  }

  /// `points` without the points a cut at `a` leaves (at `a − 1` and at `a`, both or one) that
  /// the segment from the point before them to the point after passes through: the cut then
  /// joins two pieces of one line. So `insert` then `cut --ripple` of the gap gives back the
  /// envelope it began with, where the insert's points (one frame apart, the first at an
  /// interpolated gain such as -4.50003125 dB) stayed. Frames between the points and their
  /// neighbours may differ in the last bits, as the insert's own split of the line made them.
  /// (A segment to or from silence in dB keeps the `linear` shape the insert gave the point
  /// before it, which runs the same: such a segment runs linearly in amplitude.)
  private static func joined(_ points: [Point], at a: Int64) -> [Point] {
    guard let cut = points.firstIndex(where: { $0.time.frames == a }) else { return points }
    let before = cut > 0 && points[cut - 1].time.frames == a - 1 ? cut - 1 : nil
    for dropped in [before.map { $0...cut }, cut...cut, before.map { $0...$0 }] {
      guard let dropped, dropped.lowerBound > 0, dropped.upperBound + 1 < points.count else {
        continue
      }
      // The joined segment runs in the shape of the point before; the segment after the last
      // dropped point must have run so too, unless it was the one frame from a − 1 to a.
      let last = points[dropped.upperBound]
      guard points[dropped.lowerBound - 1].shape == last.shape || last.time.frames == a - 1
      else { continue }
      var joined = points
      joined.removeSubrange(dropped)
      let line = Envelope(points: joined)
      // On a line in amplitude a point's gain went through a logarithm, so "on the line" is
      // within 1e-9 dB (a gain 1e-10 apart), not to the last bit.
      let onTheLine = { (point: Point) in
        let gain = line.decibels(at: point.time.frames)
        return gain == point.decibels || abs(gain - point.decibels) <= 1e-9
      }
      if points[dropped].allSatisfy(onTheLine) { return joined }
    }
    return points
  }

  /// This envelope with a gap of `length` opened at `position`, as an insert opens it in the
  /// clips: the gain before `position` is what it was, and from `position + length` on what it
  /// was `length` frames earlier. The result is ``compacted()``.
  public func opening(at position: FramePosition, length: FrameCount) -> Envelope {
    let p = position.frames
    var moved = points(before: p)
    if !points.contains(where: { $0.time.frames == p }) {
      moved.append(
        Point(
          time: FramePosition(p + length.frames), decibels: decibels(at: p),
          shape: explicitShape(at: p)))
    }
    for point in points where point.time.frames >= p {
      var shifted = point
      shifted.time = FramePosition(point.time.frames + length.frames)
      moved.append(shifted)
    }
    return Envelope(points: moved).compacted()
  }

  /// The points before `frame`, ending at `frame − 1` with the gain there (a point added unless
  /// one is there), the segment the added point cuts made explicit (``explicitShape(at:)``):
  /// what stays of the envelope when everything from `frame` on moves.
  func points(before frame: Int64) -> [Point] {
    var kept = points.filter { $0.time.frames < frame }
    if frame > 0, kept.last?.time.frames != frame - 1 {
      if let last = kept.indices.last {
        kept[last].shape = explicitShape(at: kept[last].time.frames)
      }
      kept.append(Point(time: FramePosition(frame - 1), decibels: decibels(at: frame - 1)))
    }
    return kept
  }

  /// The gain at `frame` in dB, computed as the segment holding it computes it, so that a point
  /// with this gain plays exactly what that frame played: a held gain is the point's own dB
  /// (not a round trip through the amplitude), a dB line's value is its dB. Only on an
  /// amplitude line is it the logarithm of the amplitude (kept at or below the greatest gain).
  func decibels(at frame: Int64) -> Double {
    let segments = segments()
    guard let index = EnvelopeSegment.index(of: frame, in: segments) else { return 0 }
    let segment = segments[index]
    switch segment.kind {
    case .hold:
      return segment.fromDecibels
    case .decibelLine:
      let x = Double(frame - segment.start) / Double(segment.end - segment.start)
      return segment.fromDecibels + x * (segment.toDecibels - segment.fromDecibels)
    case .amplitudeLine:
      return Point(time: FramePosition(frame), gain: segment.gain(at: frame)).decibels
    }
  }

  /// The shape a new point at `frame` needs for the gain after it to run on as it did: that of
  /// the segment holding `frame`, except ``EnvelopeShape/linear`` for a dB segment with a
  /// silent end (which runs linearly in amplitude, and the new point is audible), and
  /// ``EnvelopeShape/hold`` before the first point and from the last.
  func explicitShape(at frame: Int64) -> EnvelopeShape {
    guard let index = points.lastIndex(where: { $0.time.frames <= frame }),
      index + 1 < points.count
    else { return .hold }
    let (from, to) = (points[index], points[index + 1])
    if from.shape == .decibels && !(from.decibels.isFinite && to.decibels.isFinite) {
      return .linear
    }
    return from.shape
  }

  /// This envelope without the points the segments around them already imply, every frame's
  /// gain bit for bit what it was.
  ///
  /// A point goes when the gain is flat on both sides of it at its own gain: the segment
  /// before it is flat at its gain (equal gains either end) and the segment after it is flat
  /// (a ``EnvelopeShape/hold``, equal gains either end, or one frame long, whose only frame
  /// plays the point's own gain whatever the shape). The point before it then holds its gain
  /// up to the next point (its shape becomes ``EnvelopeShape/hold`` where the gains differ),
  /// so a step of two points one frame apart collapses to one point after a hold. The first
  /// point goes when the next has its gain (the gain before it is held), the last when the one
  /// before it has its gain; the last point's shape, which shapes nothing, is the default.
  ///
  /// Only flat stretches are merged: a point in the middle of a straight line would be implied
  /// as well, but the line computed from farther points rounds differently.
  ///
  /// ```swift
  /// let flat = try Envelope(parsing: "0s:-2dB,1s:-2dB,2s:-2dB,3s:-6dB", sampleRate: 48_000)
  /// flat.compacted().points.count  // 2: 2 s at -2 dB, 3 s at -6 dB
  /// ```
  public func compacted() -> Envelope {
    var kept = points
    func isFlat(after index: Int) -> Bool {
      let (point, next) = (kept[index], kept[index + 1])
      return point.shape == .hold || point.decibels == next.decibels
        || next.time.frames - point.time.frames == 1
    }
    var changed = true
    while changed && kept.count > 1 {
      changed = false
      var index = 0
      while index < kept.count && kept.count > 1 {
        let point = kept[index]
        let isLast = index == kept.count - 1
        if index == 0 {
          if point.decibels == kept[1].decibels {
            kept.remove(at: 0)
            changed = true
            continue
          }
        } else if kept[index - 1].decibels == point.decibels && (isLast || isFlat(after: index)) {
          if !isLast && kept[index - 1].decibels != kept[index + 1].decibels {
            kept[index - 1].shape = .hold
          }
          kept.remove(at: index)
          changed = true
          continue
        }
        index += 1
      }
    }
    if let last = kept.indices.last { kept[last].shape = .decibels }
    return Envelope(points: kept)
  }
}

extension Envelope.Point {
  /// A point with an amplitude (0 is `-inf` dB), however small; kept at or below the greatest
  /// gain (the amplitude of a valid envelope is, but for the rounding of the logarithm).
  init(time: FramePosition, gain amplitude: Double, shape: EnvelopeShape = .decibels) {
    guard amplitude > 0 else {
      self.init(time: time, decibels: -.infinity, shape: shape)
      return
    }
    let decibels = 20 * log10(amplitude)
    self.init(time: time, decibels: min(Gain.maximumDecibels, decibels), shape: shape)
  }
}
