import ArgumentParser
import AudioFiles
import Foundation
import Interchange
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
        level = NullTest.floor
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
      let test = try NullTest(
        from: sideA.project, to: sideB.project, diff: diff, threshold: level,
        labels: ("v\(a)", "v\(b)")
      ) { project in
        let (plan, audio, _) = try SpanOptions.offlinePlan(
          project, cache: cache, bypassMissing: bypassMissing, file: self.project.file)
        return (plan, audio)
      }
      if let destination, let format {
        try test.writeDifference(to: destination, format: format)
      }
      let report = Report(
        a: a, b: b, result: try test.run(), isDefault: threshold == nil, output: output,
        times: times)
      let text = json.json ? report.json.line + "\n" : report.text
      if destination?.kind == .standardOutput {
        // The difference itself is on standard output: the report goes beside it.
        writeOut(text)
      } else {
        print(text, terminator: "")
      }
    }
  }
}

/// What `tape compare` prints.
struct Report {
  let a: Int64
  let b: Int64
  let result: NullTestResult
  let isDefault: Bool
  let output: String?
  let times: TimeDisplayOption

  static func decibels(_ value: Double) -> Double? {
    value > 0 ? 20 * log10(value) : nil
  }

  private func shown(_ decibels: Double?) -> String {
    decibels.map { String(format: "%.2f", $0) } ?? "-inf"
  }

  var text: String {
    var lines: [String] = []
    let show = { (frames: Int64) in times.show(frames, sampleRate: result.sampleRate) }
    for range in result.ranges {
      lines.append(
        "\(show(range.start))–\(show(range.end))  peak \(shown(Self.decibels(Double(range.peak)))) dBFS  RMS \(shown(Self.decibels(range.rms))) dBFS  \(range.blame.joined(separator: ", "))"
      )
    }
    let threshold =
      isDefault
      ? "the 24-bit floor, -138.47 dBFS" : "\(shown(Self.decibels(result.threshold))) dBFS"
    let seconds = { (frames: Int64) in
      TimeValue.seconds(FrameCount(frames), sampleRate: result.sampleRate)
    }
    if !result.rendered {
      lines.append(
        "v\(a) and v\(b) sound the same: nothing that changed can sound (nothing rendered)")
    } else if result.isIdentical {
      lines.append(
        "v\(a) and v\(b) sound the same: no difference above \(threshold) (\(seconds(result.renderedFrames)) rendered of \(seconds(result.projectFrames)))"
      )
    } else {
      lines.append(
        "v\(a) and v\(b) differ in \(result.ranges.count) range\(result.ranges.count == 1 ? "" : "s") above \(threshold) (\(seconds(result.renderedFrames)) rendered of \(seconds(result.projectFrames)))"
      )
    }
    if let output { lines.append("the difference A − B is in \(output)") }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The `tape compare --json` contract (docs/reference/json.md); keep stable.
  var json: JSON {
    let decibels = { (value: Double) in Self.decibels(value).map(JSON.number) ?? .null }
    return .object([
      ("from", .integer(a)), ("to", .integer(b)), ("identical", .bool(result.isIdentical)),
      ("rendered", .bool(result.rendered)), ("renderedFrames", .integer(result.renderedFrames)),
      ("projectFrames", .integer(result.projectFrames)),
      ("sampleRate", .integer(Int64(result.sampleRate))),
      ("thresholdDBFS", decibels(result.threshold)),
      (
        "ranges",
        .array(
          result.ranges.map { range in
            .object([
              ("start", .integer(range.start)), ("end", .integer(range.end)),
              ("peakDBFS", decibels(Double(range.peak))), ("rmsDBFS", decibels(range.rms)),
              ("blame", .array(range.blame.map(JSON.string))),
            ])
          })
      ),
      ("output", output.map(JSON.string) ?? .null),
    ])
  }
}
