import ArgumentParser
import AudioFiles
import Foundation
import Mixing
import SafeFiles
import Timeline
import TimelineStore

struct Compare: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "compare",
    abstract: "Null-test two versions: where do their mixes differ, and which edit is to blame?",
    discussion: """
      Renders only the stretches the diff between A and B says can sound different (the clips \
      that changed, where they were and where they are; a track's clips for a change of its \
      gain, pan, envelope, mute or solo; a relinked source's clips; the whole project for the \
      master gain, an effect, or a change that reaches an effect chain), in both versions, \
      subtracts them and lists each stretch where the difference rises above --threshold \
      (default: one step of 24-bit audio, -138.5 dBFS): start, end, peak and RMS of the \
      difference in dBFS, and the clips, tracks, sources or effects the diff blames for it. \
      Versions whose diff has nothing that can sound (an undo, a rename, a marker, an edit \
      on a muted track) are the same without rendering anything. Any two versions, on any \
      branches; neither becomes the head. -o writes the difference A − B (32-bit float WAV or \
      AIFF, over the whole project; silence where nothing could differ). A version is a \
      number, a tag's name, HEAD or HEAD~N (N steps back from the head); with one version it is \
      compared with the head, with none the head with the version before it (HEAD~1).
      Example: tape compare song.tape 12 17
      Example: tape compare song.tape 13 14 --threshold -90dB --json
      Example: tape compare song.tape HEAD~2
      """)

  @OptionGroup var project: ProjectArgument
  @Argument(help: "The first version (A; default HEAD~1).", completion: ids("v"))
  var first: VersionReference?
  @Argument(help: "The second version (B; default HEAD).", completion: ids("v"))
  var second: VersionReference?
  @Option(
    parsing: .unconditional,
    help: "The level a difference must rise above, such as -90dB (default: the 24-bit floor).")
  var threshold: String?
  @Option(
    name: .shortAndLong,
    help: "Write the difference A − B to this WAV or AIFF file (32-bit float).",
    completion: .file())
  var output: String?
  @Flag(
    help:
      "Render effects whose LV2 plugin is not installed as if bypassed, instead of refusing."
  )
  var bypassMissing = false
  @OptionGroup var times: TimeDisplayOption
  @OptionGroup var json: JSONOption

  /// One step of a 24-bit sample: the smallest difference a 24-bit render can show.
  static let floor = 1.0 / 8_388_608.0
  /// Two stretches of difference closer than this (of agreement between them) are one.
  static let joinSeconds = 0.05

  func validate() throws {
    if let output { try RawArguments.requireUTF8Path(output, "output") }
  }

  func run() throws {
    try reportingErrors {
      let level: Double
      if let threshold {
        let decibels = try Render.parseLevel(threshold, unit: "dBFS", option: "--threshold")
        guard (-200...0).contains(decibels) else {
          throw UsageError(
            message:
              "--threshold \(threshold) is out of range; give -200dB to 0dB, such as -90dB")
        }
        level = pow(10, decibels / 20)
      } else {
        level = Self.floor
      }
      var format: ExportFormat?
      var destination: OutputDestination?
      if let output {
        let suffix = (output as NSString).pathExtension.lowercased()
        guard output == "-" || ["wav", "wave", "aiff", "aif"].contains(suffix) else {
          throw UsageError(
            message:
              "-o \(output): the difference is written as 32-bit float WAV or AIFF; name it diff.wav or diff.aiff"
          )
        }
        format = ["aiff", "aif"].contains(suffix) ? .aiff : .wav
        destination = try OutputDestination.resolve(output)
      }
      let cache = AudioCache(forProject: project.file)
      let store = try retryingReads { try openStore(project.file, access: .read) }
      let (a, b) = (
        try (first ?? VersionReference(head: 1)).resolve(in: store),
        try (second ?? VersionReference(head: 0)).resolve(in: store)
      )
      if let destination, let output {
        // Never over the project, its log, a source or the cache, as `tape render`.
        try Render.refuseDestroying(destination, target: output, store: store, cache: cache)
      }
      let (sideA, sideB, diff) = try retryingReads { try store.diff(from: a, to: b) }
      let (projectA, projectB) = (sideA.project, sideB.project)
      guard projectA.sampleRate == projectB.sampleRate, projectA.channels == projectB.channels
      else {
        throw DataError(
          message:
            "v\(a) is \(projectA.sampleRate) Hz \(projectA.channels) ch and v\(b) \(projectB.sampleRate) Hz \(projectB.channels) ch: mixes of different formats cannot be subtracted"
        )
      }
      let changes = diff.soundingChanges(from: projectA, to: projectB)
      let ranges = Self.merged(changes.map(\.range))
      let end = max(projectA.timelineEnd, projectB.timelineEnd).frames
      var differ: Differ?
      if !ranges.isEmpty {
        differ = try Differ(
          a: compile(projectA, cache: cache), b: compile(projectB, cache: cache),
          ranges: ranges, channels: projectA.channels, threshold: Float(level),
          join: Int64(Self.joinSeconds * Double(projectA.sampleRate)),
          preroll: Int64(2 * projectA.sampleRate))
      }
      if let destination, let format {
        try OfflineRenderer.writeFloats(
          frames: end, sampleRate: projectA.sampleRate, channels: projectA.channels,
          format: format, to: destination
        ) { buffer, count in
          if let differ {
            try differ.fill(buffer, frames: count)
          } else {
            buffer.update(repeating: 0, count: count * projectA.channels)
          }
        }
      }
      // The rest (all of it without -o; with it, the end, which closes the last stretch).
      while try differ?.next() != nil {}
      let found = differ?.found ?? []
      let report = Report(
        a: a, b: b, found: found, changes: changes, rendered: differ?.rendered ?? 0,
        end: end, level: level, isDefault: threshold == nil, output: output,
        sampleRate: projectA.sampleRate, times: times)
      let text = json.json ? report.json.rendered + "\n" : report.text
      if destination?.kind == .standardOutput {
        // The difference itself is on standard output: the report goes beside it.
        writeOut(text)
      } else {
        print(text, terminator: "")
      }
    }
  }

  /// A version's plan over its decoded audio, as `tape render` compiles it (its own effect
  /// rack; a missing plugin refused unless --bypass-missing).
  private func compile(_ project: Project, cache: AudioCache) throws -> (RenderPlan, ProjectAudio) {
    let (plan, audio, _) = try SpanOptions.offlinePlan(
      project, cache: cache, bypassMissing: bypassMissing, file: self.project.file)
    return (plan, audio)
  }

  /// `ranges` sorted, with those that overlap or touch joined.
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

/// A stretch where the mixes differ: its frames, the peak and RMS of the difference (linear,
/// over every sample of every channel).
struct DifferingRange {
  var start: Int64
  var end: Int64
  var peak: Float
  var rms: Double
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
  ) throws {
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

/// What `tape compare` prints.
struct Report {
  let a: Int64
  let b: Int64
  let found: [DifferingRange]
  let changes: [SoundingChange]
  let rendered: Int64
  let end: Int64
  let level: Double
  let isDefault: Bool
  let output: String?
  let sampleRate: Int
  let times: TimeDisplayOption

  /// The ids the diff blames for a stretch: every change whose range meets it, in the order
  /// the diff lists them.
  func blame(_ range: DifferingRange) -> [String] {
    var ids: [String] = []
    for change in changes
    where change.range.start.frames < range.end && change.range.end.frames > range.start {
      for id in change.blame.split(separator: ",").map(String.init) where !ids.contains(id) {
        ids.append(id)
      }
    }
    return ids
  }

  static func decibels(_ value: Double) -> Double? {
    value > 0 ? 20 * log10(value) : nil
  }

  private func shown(_ decibels: Double?) -> String {
    decibels.map { String(format: "%.2f", $0) } ?? "-inf"
  }

  var text: String {
    var lines: [String] = []
    let show = { (frames: Int64) in times.show(frames, sampleRate: sampleRate) }
    for range in found {
      lines.append(
        "\(show(range.start))–\(show(range.end))  peak \(shown(Self.decibels(Double(range.peak)))) dBFS  RMS \(shown(Self.decibels(range.rms))) dBFS  \(blame(range).joined(separator: ", "))"
      )
    }
    let threshold =
      isDefault ? "the 24-bit floor, -138.47 dBFS" : "\(shown(Self.decibels(level))) dBFS"
    let seconds = { (frames: Int64) in
      TimeValue.seconds(FrameCount(frames), sampleRate: sampleRate)
    }
    if changes.isEmpty {
      lines.append(
        "v\(a) and v\(b) sound the same: nothing that changed can sound (nothing rendered)")
    } else if found.isEmpty {
      lines.append(
        "v\(a) and v\(b) sound the same: no difference above \(threshold) (\(seconds(rendered)) rendered of \(seconds(end)))"
      )
    } else {
      lines.append(
        "v\(a) and v\(b) differ in \(found.count) range\(found.count == 1 ? "" : "s") above \(threshold) (\(seconds(rendered)) rendered of \(seconds(end)))"
      )
    }
    if let output { lines.append("the difference A − B is in \(output)") }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The `tape compare --json` contract (docs/reference/json.md); keep stable.
  var json: JSONValue {
    let decibels = { (value: Double) in Self.decibels(value).map(JSONValue.double) ?? .null }
    return .object([
      ("from", .int(a)), ("to", .int(b)), ("identical", .bool(found.isEmpty)),
      ("rendered", .bool(!changes.isEmpty)), ("renderedFrames", .int(rendered)),
      ("projectFrames", .int(end)), ("sampleRate", .int(Int64(sampleRate))),
      ("thresholdDBFS", decibels(level)),
      (
        "ranges",
        .array(
          found.map { range in
            .object([
              ("start", .int(range.start)), ("end", .int(range.end)),
              ("peakDBFS", decibels(Double(range.peak))), ("rmsDBFS", decibels(range.rms)),
              ("blame", .array(blame(range).map(JSONValue.string))),
            ])
          })
      ),
      ("output", output.map(JSONValue.string) ?? .null),
    ])
  }
}
