/// Editing an envelope one point at a time, beside replacing it whole.
extension Envelope {
  /// This envelope with `points` added, in time order; a point at the time of an existing one
  /// replaces it.
  ///
  /// ```swift
  /// let louder = envelope.addingPoints([Envelope.Point(time: 240_000, decibels: -6)])
  /// ```
  public func addingPoints(_ added: [Point]) -> Envelope {
    let times = Set(added.map(\.time))
    return Envelope(
      points: (points.filter { !times.contains($0.time) } + added).sorted { $0.time < $1.time })
  }

  /// This envelope with the points `text` types added (``init(parsing:shapes:sampleRate:)``'s
  /// form), each with the shape of the segment it starts: `shapes` names one shape for every
  /// added point or one per point, in the order typed. A point that ends up last starts no
  /// segment and has the default shape, as the last point of `--set` has.
  ///
  /// ```swift
  /// // 0 s at 0 dB, 2 s at -12 dB: -6 dB held from 1 s to 2 s.
  /// let held = try envelope.addingPoints(parsing: "1s:-6dB", shapes: "hold", sampleRate: 48_000)
  /// ```
  public func addingPoints(
    parsing text: String, shapes: String?, sampleRate: Int
  ) throws(TimelineError) -> Envelope {
    // Never nil: adding leaves at least the points added.
    try Self.edited(self, by: .add(text, shapes: shapes), name: "", sampleRate: sampleRate)
      ?? self
  }

  /// This envelope without its point at `time`; nil when that was its only point (no envelope
  /// is left). A time with no point is refused, naming the times that have one.
  public func removingPoint(
    at time: FramePosition, envelope name: String, sampleRate: Int
  ) throws(TimelineError) -> Envelope? {
    guard points.contains(where: { $0.time == time }) else {
      throw .noEnvelopePoint(
        envelope: name, time: time, points: points.map(\.time), sampleRate: sampleRate)
    }
    let rest = points.filter { $0.time != time }
    return rest.isEmpty ? nil : Envelope(points: rest)
  }

  /// This envelope with its point at `time` moved to `newTime`, keeping its gain and shape. A
  /// move that would pass or land on another point is refused, naming it.
  public func movingPoint(
    at time: FramePosition, to newTime: FramePosition, envelope name: String, sampleRate: Int
  ) throws(TimelineError) -> Envelope {
    guard let index = points.firstIndex(where: { $0.time == time }) else {
      throw .noEnvelopePoint(
        envelope: name, time: time, points: points.map(\.time), sampleRate: sampleRate)
    }
    let low = index > 0 ? points[index - 1].time : nil
    let high = index + 1 < points.count ? points[index + 1].time : nil
    if let low, newTime <= low {
      throw .envelopePointWouldPass(
        envelope: name, from: time, to: newTime, other: low, sampleRate: sampleRate)
    }
    if let high, newTime >= high {
      throw .envelopePointWouldPass(
        envelope: name, from: time, to: newTime, other: high, sampleRate: sampleRate)
    }
    var moved = self
    moved.points[index].time = newTime
    return moved
  }
}

/// One edit of an envelope as `tape track envelope`, `tape fx envelope`, `tape track envelope
/// --pan` and `tape send envelope` take it: the one meaning of their options.
public enum EnvelopeEdit: Sendable, Hashable {
  /// Replace the envelope: `TIME:VALUE` points, and their shapes (`--set`, `--shape`).
  case set(String, shapes: String?)
  /// Add points (`--add`, `--shape`), replacing one at the same time.
  case add(String, shapes: String?)
  /// Remove the points at these times (`--remove`).
  case remove([FramePosition])
  /// Move one point (`--move … --to`).
  case move(FramePosition, to: FramePosition)
  /// Remove the whole envelope (`--clear`).
  case clear
}

extension Envelope {
  /// `current` (nil: no envelope) after `edit`: nil when no point is left. Points are read by
  /// `value` (a gain in dB for a volume envelope); `name` is how messages name the envelope
  /// (`t1`, `f2 gain`).
  ///
  /// ```swift
  /// let louder = try Envelope.edited(
  ///   track.envelope, by: .add("5s:-6dB", shapes: nil), name: "t1", sampleRate: 48_000)
  /// ```
  public static func edited(
    _ current: Envelope?, by edit: EnvelopeEdit, name: String, sampleRate: Int
  ) throws(TimelineError) -> Envelope? {
    try edited(current, by: edit, name: name, sampleRate: sampleRate, value: gainValue)
  }

  static func edited(
    _ current: Envelope?, by edit: EnvelopeEdit, name: String, sampleRate: Int,
    value: (String) throws(TimelineError) -> Double
  ) throws(TimelineError) -> Envelope? {
    switch edit {
    case .clear:
      return nil
    case .set(let text, let shapes):
      return try Envelope(parsing: text, shapes: shapes, sampleRate: sampleRate, value: value)
    case .add(let text, let shapes):
      var added = try Envelope(parsing: text, shapes: nil, sampleRate: sampleRate, value: value)
        .points
      if let shapes {
        let count = added.count
        let named = try Self.shapes(parsing: shapes, count: count) {
          .envelopeShapeCountForAddedPoints(given: $0, points: count)
        }
        for index in added.indices { added[index].shape = named[index] }
      }
      var envelope = (current ?? Envelope(points: [])).addingPoints(added)
      if let last = envelope.points.indices.last,
        added.contains(where: { $0.time == envelope.points[last].time })
      {
        envelope.points[last].shape = .decibels
      }
      return envelope
    case .remove(let times):
      var left = current
      for time in times {
        guard let envelope = left else {
          throw .noEnvelopePoint(envelope: name, time: time, points: [], sampleRate: sampleRate)
        }
        left = try envelope.removingPoint(at: time, envelope: name, sampleRate: sampleRate)
      }
      return left
    case .move(let from, let to):
      guard let current else {
        throw .noEnvelopePoint(envelope: name, time: from, points: [], sampleRate: sampleRate)
      }
      return try current.movingPoint(at: from, to: to, envelope: name, sampleRate: sampleRate)
    }
  }
}
