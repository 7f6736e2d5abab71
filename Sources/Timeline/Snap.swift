/// Where `--snap` moves a time typed for an edit: to the nearest clip edge, to the nearest
/// line of a time grid, or to the nearest zero crossing of the mix.
///
/// The rules, in frames at the project rate:
/// - ``clipEdges``: the nearest start or end of a clip on any track (the edited clip's own
///   edges aside) within ``clipWindowSeconds`` (100 ms) of the time; farther than that, the
///   time stays as typed. A tie goes to the earlier edge.
/// - ``grid(step:)``: the nearest multiple of the step (counted from 0, in frames, rounded to
///   the nearest frame); a time half-way goes to the later line.
/// - ``zeroCrossing``: the nearest frame within ``zeroWindowSeconds`` (10 ms) where the mix
///   (its channels summed) is 0 or changes sign (``ZeroCrossing``); none there, the time stays.
///   It needs the audio, so ``Project/snapped(_:to:excluding:)`` leaves it to the caller.
///
/// ```swift
/// let rule = try SnapRule(parsing: "1/4@120bpm", sampleRate: 48_000)  // .grid(step: 24000)
/// project.snapped(FramePosition(30_000), to: rule)                     // @24000f
/// ```
public enum SnapRule: Sendable, Hashable {
  case clipEdges
  /// Lines every `step` frames (not necessarily a whole number: a note at a tempo).
  case grid(step: Double)
  case zeroCrossing

  /// How far a clip edge pulls a time.
  public static let clipWindowSeconds = 0.1
  /// How far from the time a zero crossing is looked for.
  public static let zeroWindowSeconds = 0.01

  /// Parses `--snap`: `clips`, `zero`, or a grid: a time (`500ms`, `0.25s`, `1200f`: its
  /// multiples) or a note value at a tempo, `N/D@Tbpm` (a 1/4 note is one beat: `1/4@120bpm`
  /// is 0.5 s, `1/8@90bpm` 1/3 s, `3/4@100bpm` a bar of 3/4).
  public init(parsing text: String, sampleRate: Int) throws(TimelineError) {
    let trimmed = text.trimmingBlanks
    switch trimmed.lowercased() {
    case "clips", "clip": self = .clipEdges
    case "zero": self = .zeroCrossing
    default:
      if let note = trimmed.lowercased().wholeMatch(
        of: /([0-9]+)\/([0-9]+)@([0-9]+(?:\.[0-9]+)?)bpm/)
      {
        guard let count = Double(note.1), let division = Double(note.2),
          let tempo = Double(note.3), count > 0, division > 0, tempo > 0
        else { throw .invalidSnap(text) }
        let seconds = 4 * count / division * 60 / tempo
        let step = seconds * Double(sampleRate)
        guard step >= 1, step.isFinite else { throw .invalidSnap(text) }
        self = .grid(step: step)
        return
      }
      let step: FrameCount
      do {
        step = try TimeValue(parsing: trimmed, sampleRate: sampleRate).frames
      } catch {
        throw .invalidSnap(text)
      }
      guard step > .zero else { throw .invalidSnap(text) }
      self = .grid(step: Double(step.frames))
    }
  }

  /// The clip edges `frame` snaps to at `sampleRate`, from `edges` (sorted or not); nil when
  /// none is within the window.
  public static func nearestEdge(
    to frame: Int64, among edges: some Sequence<Int64>, sampleRate: Int
  ) -> Int64? {
    let window = Int64((clipWindowSeconds * Double(sampleRate)).rounded())
    var best: Int64?
    for edge in edges where abs(edge - frame) <= window {
      if let chosen = best {
        let (d, e) = (abs(edge - frame), abs(chosen - frame))
        if d < e || (d == e && edge < chosen) { best = edge }
      } else {
        best = edge
      }
    }
    return best
  }

  /// The grid line nearest `frame` for lines every `step` frames.
  public static func nearestLine(to frame: Int64, step: Double) -> Int64 {
    let line = (Double(frame) / step).rounded(.toNearestOrAwayFromZero) * step
    return Int64(line.rounded(.toNearestOrAwayFromZero))
  }
}

extension Project {
  /// `position` moved by `rule` (``SnapRule``); clip edges of `excluding` (the clip being
  /// edited) do not count. ``SnapRule/zeroCrossing`` needs the mix: it returns `position`.
  public func snapped(
    _ position: FramePosition, to rule: SnapRule, excluding: Clip.ID? = nil
  ) -> FramePosition {
    switch rule {
    case .clipEdges:
      let edges = tracks.lazy.flatMap(\.clips).filter { $0.id != excluding }.flatMap {
        [$0.timelineStart.frames, $0.timelineEnd.frames]
      }
      return SnapRule.nearestEdge(to: position.frames, among: edges, sampleRate: sampleRate)
        .map { FramePosition($0) } ?? position
    case .grid(let step):
      return FramePosition(SnapRule.nearestLine(to: position.frames, step: step))
    case .zeroCrossing:
      return position
    }
  }
}

/// Finding the zero crossing of a signal nearest a frame.
public enum ZeroCrossing {
  /// The index nearest `center` within `window` frames either side where `samples` (one
  /// channel, or the channels summed) is exactly 0 or has the other sign than the sample
  /// before it; a tie goes to the earlier. Nil when there is none.
  public static func nearest(in samples: [Double], center: Int, window: Int) -> Int? {
    func crosses(_ i: Int) -> Bool {
      guard samples.indices.contains(i) else { return false }
      if samples[i] == 0 { return true }
      guard i > 0 else { return false }
      return (samples[i - 1] < 0) != (samples[i] < 0) && samples[i - 1] != 0
    }
    for distance in 0...max(0, window) {
      if crosses(center - distance) { return center - distance }
      if crosses(center + distance) { return center + distance }
    }
    return nil
  }
}
