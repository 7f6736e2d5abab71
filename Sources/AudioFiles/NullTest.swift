public import Mixing
public import SafeFiles
public import Timeline

/// A null test of two versions of a project: where their mixes differ, by how much, and which
/// edit is to blame. What `tape compare` runs.
///
/// Rule: only the stretches the diff between the versions says can sound different
/// (``/Timeline/ProjectDiff/soundingChanges(from:to:)``) are rendered, in both versions, a block
/// of each at a time; the blocks are subtracted and each stretch where the difference rises
/// above the threshold is measured (its peak and RMS) and blamed on the changes whose ranges
/// meet it.
///
/// Why: a mix that sounds the same after an edit is the proof that an edit (a split, a
/// relink, a change of routing) is transparent; rendering only what can differ makes that proof
/// cost the edit's length, not the project's, and versions whose diff cannot sound (an undo, a
/// rename, a marker) cost nothing.
///
/// What if the two versions have different rates or channel counts: the test refuses them
/// (``AudioFileError/mixFormatsDiffer(first:firstRate:firstChannels:second:secondRate:secondChannels:)``)
/// before anything is compiled.
///
/// ```swift
/// let (a, b, diff) = try store.diff(from: 12, to: 17)  // or any two projects, diff: nil
/// let test = try NullTest(from: a.project, to: b.project, diff: diff) { project in
///   let audio = try cache.sources(for: project)
///   return (try RenderPlan(project: project, audio: audio.audio), audio)
/// }
/// let result = try test.run()
/// if let first = result.ranges.first { print("differ from frame \(first.start): \(first.blame)") }
/// ```
public final class NullTest {
  /// One step of a 24-bit sample (linear): the smallest difference a 24-bit render can show,
  /// and the default threshold.
  public static let floor = 1.0 / 8_388_608.0
  /// Two stretches of difference closer than this (seconds of agreement between them) are one.
  public static let joinSeconds = 0.05

  /// What the diff says can sound different, with what it blames; empty when nothing can (then
  /// nothing is rendered).
  public let changes: [SoundingChange]
  /// The end of the longer version, in frames: what a difference signal covers.
  public let projectFrames: Int64
  public let sampleRate: Int
  public let channels: Int
  /// The level (linear) a difference must rise above.
  public let threshold: Double
  private let differ: Differ?

  /// Prepares the test of `a` against `b` (the two sides of `diff`; without it, the diff of
  /// the whole projects is taken), compiling each version
  /// with `compile` (its render plan over its decoded audio, as the caller renders it: with its
  /// effects, or refusing missing plugins) only when something can differ.
  ///
  /// `threshold` is linear (``floor`` by default); `labels` name the versions in an error.
  public init(
    from a: Project, to b: Project, diff: ProjectDiff? = nil, threshold: Double = NullTest.floor,
    labels: (String, String) = ("A", "B"),
    compile: (Project) throws -> (plan: RenderPlan, audio: ProjectAudio)
  ) throws {
    guard a.sampleRate == b.sampleRate, a.channels == b.channels else {
      throw AudioFileError.mixFormatsDiffer(
        first: labels.0, firstRate: a.sampleRate, firstChannels: a.channels, second: labels.1,
        secondRate: b.sampleRate, secondChannels: b.channels)
    }
    changes = (diff ?? ProjectDiff(from: a, to: b)).soundingChanges(from: a, to: b)
    projectFrames = max(a.timelineEnd, b.timelineEnd).frames
    sampleRate = a.sampleRate
    channels = a.channels
    self.threshold = threshold
    let ranges = Self.merged(changes.map(\.range))
    differ =
      ranges.isEmpty
      ? nil
      : Differ(
        a: try compile(a), b: try compile(b), ranges: ranges, channels: a.channels,
        threshold: Float(threshold), join: Int64(Self.joinSeconds * Double(a.sampleRate)),
        preroll: Int64(2 * a.sampleRate))
  }

  /// Writes the next `frames` frames of the difference A − B (interleaved) from where the last
  /// call stopped (from frame 0): the rendered difference where the versions can differ,
  /// silence elsewhere. Call it before ``run()``, over ``projectFrames`` at most.
  public func fill(_ buffer: UnsafeMutablePointer<Float>, frames: Int) throws {
    if let differ {
      try differ.fill(buffer, frames: frames)
    } else {
      buffer.update(repeating: 0, count: frames * channels)
    }
  }

  /// Writes the difference A − B over the whole project to `destination` as 32-bit float WAV
  /// or AIFF (``OfflineRenderer/writeFloats(frames:sampleRate:channels:format:to:fill:)``: a
  /// file appears only when complete). Call it before ``run()``.
  public func writeDifference(to destination: OutputDestination, format: ExportFormat) throws {
    try OfflineRenderer.writeFloats(
      frames: projectFrames, sampleRate: sampleRate, channels: channels, format: format,
      to: destination, fill: fill)
  }

  /// Renders what is left to compare (all of it without ``fill(_:frames:)``) and returns what
  /// the test found.
  public func run() throws -> NullTestResult {
    while try differ?.next() != nil {}
    let found = differ?.found ?? []
    return NullTestResult(
      changes: changes,
      ranges: found.map { range in
        var blamed = range
        blamed.blame = Self.blame(start: range.start, end: range.end, changes: changes)
        return blamed
      }, renderedFrames: differ?.rendered ?? 0, projectFrames: projectFrames,
      sampleRate: sampleRate, threshold: threshold)
  }

  /// The ids the changes blame for the frames `start..<end`: every change whose range meets
  /// it, in the order the diff lists them, each id once.
  static func blame(start: Int64, end: Int64, changes: [SoundingChange]) -> [String] {
    var ids: [String] = []
    for change in changes
    where change.range.start.frames < end && change.range.end.frames > start {
      for id in change.blame.split(separator: ",").map(String.init) where !ids.contains(id) {
        ids.append(id)
      }
    }
    return ids
  }

  /// `ranges` sorted, with those that overlap or touch joined (empty ones dropped).
  static func merged(_ ranges: [FrameRange]) -> [FrameRange] {
    var merged: [FrameRange] = []
    for range in ranges.sorted(by: { $0.start < $1.start }) where range.count > .zero {
      if let last = merged.last, range.start <= last.end {
        merged[merged.count - 1] = FrameRange(start: last.start, end: max(last.end, range.end))
      } else {
        merged.append(range)
      }
    }
    return merged
  }
}

/// What a ``NullTest`` found.
public struct NullTestResult: Sendable, Hashable {
  /// What the diff said can sound different; empty when nothing was rendered.
  public var changes: [SoundingChange]
  /// The stretches where the mixes differ above the threshold, in order.
  public var ranges: [DifferingRange]
  /// Frames rendered of each version.
  public var renderedFrames: Int64
  /// The end of the longer version, in frames.
  public var projectFrames: Int64
  public var sampleRate: Int
  /// The level (linear) a difference had to rise above.
  public var threshold: Double

  /// Whether the versions sound the same (no difference above the threshold).
  public var isIdentical: Bool { ranges.isEmpty }
  /// Whether anything was rendered (false: nothing that changed can sound).
  public var rendered: Bool { !changes.isEmpty }
}

/// A stretch where two mixes differ: its frames, the peak and RMS of the difference (linear,
/// over every sample of every channel), and the ids the diff blames for it (clips, tracks,
/// sources, effects, or `master`).
public struct DifferingRange: Sendable, Hashable {
  public var start: Int64
  public var end: Int64
  public var peak: Float
  public var rms: Double
  public var blame: [String]

  public init(start: Int64, end: Int64, peak: Float, rms: Double, blame: [String] = []) {
    self.start = start
    self.end = end
    self.peak = peak
    self.rms = rms
    self.blame = blame
  }
}

/// Renders the two versions over the ranges that can differ, a block of each at a time, and
/// subtracts them, finding the stretches where the difference rises above the threshold.
final class Differ {
  private let channels: Int
  private let threshold: Float
  private let join: Int64
  private let plans: (a: (RenderPlan, ProjectAudio), b: (RenderPlan, ProjectAudio))
  private var ranges: ArraySlice<FrameRange>
  private var streams: (OfflineRenderer.RangeStream, OfflineRenderer.RangeStream)?
  private let blockA: UnsafeMutablePointer<Float>
  private let blockB: UnsafeMutablePointer<Float>
  /// The frame the next block starts at.
  private var position: Int64 = 0
  /// What `fill` has not handed on yet of the last block: from `pending.start`, `count`
  /// frames at `pending.offset` in `blockA` (which holds the difference).
  private var pending: (start: Int64, offset: Int, count: Int)?
  /// Frames each range's effects are warmed up with before it, as a render's `--preroll`.
  private let preroll: Int64
  /// Where ``fill(_:frames:)`` has written to.
  private var written: Int64 = 0
  /// The stretch being measured: its start, its last differing frame, its peak, the sum of
  /// squares up to that frame and up to the current one.
  private var open:
    (start: Int64, last: Int64, peak: Float, squaresAtLast: Double, squares: Double)?
  private(set) var found: [DifferingRange] = []
  /// Frames rendered (of each version).
  private(set) var rendered: Int64 = 0

  init(
    a: (RenderPlan, ProjectAudio), b: (RenderPlan, ProjectAudio), ranges: [FrameRange],
    channels: Int, threshold: Float, join: Int64, preroll: Int64
  ) {
    plans = (a, b)
    self.preroll = preroll
    self.ranges = ranges[...]
    self.channels = channels
    self.threshold = threshold
    self.join = join
    let capacity = OfflineRenderer.RangeStream.blockFrames * channels
    blockA = .allocate(capacity: capacity)
    blockB = .allocate(capacity: capacity)
  }

  deinit {
    blockA.deallocate()
    blockB.deallocate()
  }

  /// Renders and subtracts the next block (into `blockA`); returns where it starts and its
  /// frames, nil when every range is done.
  @discardableResult
  func next() throws -> (start: Int64, frames: Int)? {
    while true {
      if streams == nil {
        guard let range = ranges.popFirst() else {
          close()
          return nil
        }
        close()
        streams = (
          try OfflineRenderer.RangeStream(
            plans.a.0, audio: plans.a.1, range: range, preroll: preroll),
          try OfflineRenderer.RangeStream(
            plans.b.0, audio: plans.b.1, range: range, preroll: preroll)
        )
        position = range.start.frames
      }
      guard let (a, b) = streams else { continue }
      let frames = try a.next(into: blockA)
      guard frames > 0, try b.next(into: blockB) == frames else {
        streams = nil
        continue
      }
      measure(frames)
      let start = position
      position += Int64(frames)
      rendered += Int64(frames)
      return (start, frames)
    }
  }

  /// Subtracts `blockB` from `blockA` in place and follows the stretches of difference.
  private func measure(_ frames: Int) {
    for frame in 0..<frames {
      var largest: Float = 0
      var squares: Double = 0
      for channel in 0..<channels {
        let index = frame * channels + channel
        let difference = blockA[index] - blockB[index]
        blockA[index] = difference
        largest = max(largest, abs(difference))
        squares += Double(difference) * Double(difference)
      }
      let at = position + Int64(frame)
      if var stretch = open {
        stretch.squares += squares
        if largest > threshold {
          if at - stretch.last > join {
            close()
            open = (at, at, largest, squares, squares)
            continue
          }
          stretch.last = at
          stretch.peak = max(stretch.peak, largest)
          stretch.squaresAtLast = stretch.squares
        }
        open = stretch
      } else if largest > threshold {
        open = (at, at, largest, squares, squares)
      }
    }
  }

  /// Ends the stretch being measured at its last differing frame.
  private func close() {
    guard let stretch = open else { return }
    let count = Double(stretch.last + 1 - stretch.start) * Double(channels)
    found.append(
      DifferingRange(
        start: stretch.start, end: stretch.last + 1, peak: stretch.peak,
        rms: (stretch.squaresAtLast / count).squareRoot()))
    open = nil
  }

  /// Writes the next `frames` frames of the difference from where the last call stopped
  /// (from 0): the rendered difference inside the ranges, silence outside them.
  func fill(_ buffer: UnsafeMutablePointer<Float>, frames: Int) throws {
    var done = 0
    while done < frames {
      let at = written + Int64(done)
      if pending == nil, let (start, count) = try next() {
        pending = (start, 0, count)
      }
      guard let block = pending, block.start + Int64(block.offset) <= at else {
        // Silence up to the next block, or to the end.
        let until = pending.map { Int(min(Int64(frames - done), $0.start - at)) } ?? frames - done
        (buffer + done * channels).update(repeating: 0, count: until * channels)
        done += until
        continue
      }
      let count = min(frames - done, block.count - block.offset)
      (buffer + done * channels).update(
        from: blockA + block.offset * channels, count: count * channels)
      done += count
      pending =
        block.offset + count == block.count ? nil : (block.start, block.offset + count, block.count)
    }
    written += Int64(frames)
  }
}
