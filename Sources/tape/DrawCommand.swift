import ArgumentParser
import AudioFiles
import Foundation
import Pictures
import SafeFiles
import Timeline
import TimelineStore

struct Draw: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "draw",
    abstract: "Draw the timeline as a picture (SVG or PNG): tracks, clips, waveforms, fades.",
    discussion: """
      A ruler with times; one lane per track with its name, gain, pan, mute (M) and solo (S) \
      and its effects; each clip a box to scale with its id, source and waveform (the min \
      and max of each pixel column, from a peak file computed once per source in the \
      decoded-audio cache); fades drawn as their curves; stretches where clips overlap marked \
      in orange; markers as dashed lines. Clips of muted or unsoloed tracks are grey.
      The output's extension picks the format: .svg, or .png (the same picture rendered by \
      rsvg-convert, from the librsvg2-bin package). --width is the picture's width in pixels \
      (default 1200); --from and --to take any time, a marker (@chorus) or a clip's edge, and \
      --to also +TIME after --from. With two versions A B, B is drawn and the clips added, \
      removed, moved or changed since A are marked (as 'tape diff A B' lists them).
      Example: tape draw song.tape -o timeline.svg --width 1600
      Example: tape draw song.tape -o chorus.png --from @chorus --to +10s
      Example: tape draw song.tape 12 17 -o changes.svg
      """)

  @OptionGroup var project: ProjectArgument
  @Argument(
    help: "Two versions to compare (A B): B is drawn, what changed since A marked.",
    completion: ids("v"))
  var versions: [String] = []
  @Option(
    name: .shortAndLong, help: "The picture to write: a .svg or .png file.",
    completion: .file(extensions: ["svg", "png"]))
  var output: String
  @Option(help: "Draw this version instead of the current one (the head does not move).")
  var version: String?
  @Option(parsing: .unconditional, help: "The picture's width in pixels, 400 to 16384.")
  var width = 1200
  @Option(parsing: .unconditional, help: "Start on the timeline (default 0).") var from: String?
  @Option(
    parsing: .unconditional,
    help: "End on the timeline, or +TIME after --from (default: the last clip's end or marker).")
  var to: String?

  /// The formats a picture is written in, by the output's extension.
  enum Format: String {
    case svg
    case png
  }

  func validate() throws {
    if !versions.isEmpty && versions.count != 2 {
      throw ValidationError(
        "give two versions to compare (tape draw FILE A B -o diff.svg), or --version V to draw one")
    }
    if version != nil && !versions.isEmpty {
      throw ValidationError(
        "--version draws one version; to compare two, give them as A B without --version")
    }
    guard TimelinePicture.widths.contains(width) else {
      throw ValidationError(
        "--width \(width) is out of range; give \(TimelinePicture.widths.lowerBound) to \(TimelinePicture.widths.upperBound) pixels"
      )
    }
    try RawArguments.requireUTF8Path(output, "output")
  }

  /// The format `path`'s extension names.
  static func format(of path: String) throws -> Format {
    let name = (path as NSString).lastPathComponent
    let suffix = (name as NSString).pathExtension.lowercased()
    guard name.count > suffix.count + 1, let format = Format(rawValue: suffix) else {
      throw UsageError(
        message:
          "-o \(path): the picture's format comes from its extension; end the name in .svg or .png (such as timeline.svg)"
      )
    }
    return format
  }

  func run() throws {
    Termination.install(
      message: ProjectWords.escaped("draw interrupted; \(output) was not written"))
    try reportingErrors {
      let format = try Self.format(of: output)
      let destination: OutputDestination
      do {
        destination = try OutputDestination.resolve(output)
      } catch SafeFileError.isFolder {
        throw UsageError(
          message: "-o \(output) is a folder; give a file name such as \(output)/timeline.svg")
      }
      guard destination.kind != .standardOutput else {
        throw UsageError(
          message: "-o \(output): a picture is written to a file ending in .svg or .png")
      }
      if let existing = destination.existing,
        let projectFile = FileIdentity(path: project.file), existing.isSameFile(as: projectFile)
      {
        throw UsageError(
          message:
            "-o \(output) is the project file itself; drawing there would destroy it, so choose another name"
        )
      }
      // Before any audio is read: a PNG needs the converter.
      let converter = try format == .png ? Self.rsvgConvert() : nil
      let file = project.file
      let store = try retryingReads { try openStore(file, access: .read) }
      let shown: Project
      var comparison: TimelinePicture.Comparison?
      var title = (file as NSString).lastPathComponent
      if versions.count == 2 {
        // Numbers or tags' names, as everywhere a version is taken.
        let (a, b, diff) = try retryingReads {
          try store.diff(
            from: store.resolveVersion(versions[0]), to: store.resolveVersion(versions[1]))
        }
        shown = b.project
        comparison = TimelinePicture.Comparison(before: a.project, diff: diff)
        title += " · version \(a.version) → \(b.version)"
      } else if let version {
        let number = try store.resolveVersion(version)
        shown = try retryingReads { try store.project(at: number) }
        title += " · version \(number)"
      } else {
        shown = store.snapshot.project
        title += " · version \(store.snapshot.version)"
      }
      let range = try range(of: shown, before: comparison?.before)
      // A source whose audio cannot be had is drawn without a waveform, said once on stderr.
      let found = try AudioCache(forProject: file).peaks(of: shown, in: range)
      for (id, error) in found.unavailable {
        writeOut(ProjectWords.escaped("note: \(id) is drawn without its waveform: \(error)") + "\n")
      }
      let picture = TimelinePicture(
        project: shown, range: range, width: width, title: title, peaks: found.peaks,
        unavailable: Set(found.unavailable.map(\.source)), comparison: comparison)
      var bytes = Array(picture.svg().utf8)
      if let converter { bytes = try Self.png(from: bytes, converter: converter) }
      do {
        let out = try SafeOutput(destination)
        try out.write(bytes)
        try out.commit()
      }
      let clips = shown.tracks.flatMap(\.clips).filter {
        $0.timelineEnd > range.start && $0.timelineStart < range.end
      }.count
      let rate = shown.sampleRate
      print(
        "\(ProjectWords.escaped(output)): \(format.rawValue), \(width) px wide, \(shown.tracks.count) track\(shown.tracks.count == 1 ? "" : "s"), \(clips) clip\(clips == 1 ? "" : "s"), \(TimeValue.clock(FrameCount(range.start.frames), sampleRate: rate))–\(TimeValue.clock(FrameCount(range.end.frames), sampleRate: rate))"
      )
    }
  }

  /// `--from`/`--to` over `project`: by default from 0 to the end of its last clip or marker
  /// (of either version when comparing), or 10 s of an empty project.
  func range(of project: Project, before: Project?) throws -> FrameRange {
    let start = try from.map { try parsePosition($0, project, option: "--from") } ?? .zero
    let ends =
      [project.timelineEnd, before?.timelineEnd ?? .zero]
      + (project.markers + (before?.markers ?? [])).map(\.position)
    var end = ends.max() ?? .zero
    if end == .zero { end = FramePosition(Int64(project.sampleRate) * 10) }
    if let to { end = try parsePosition(to, project, relativeTo: start, option: "--to") }
    guard start < end else {
      let shown = { (position: FramePosition) in
        TimeValue.clock(FrameCount(position.frames), sampleRate: project.sampleRate)
      }
      throw UsageError(
        message: to == nil
          ? "--from \(shown(start)) is past the end of the project (\(shown(end))); give a --from before \(shown(end)), or a --to after it"
          : "nothing to draw: --from \(shown(start)) is not before --to \(shown(end)); give --to after --from"
      )
    }
    return FrameRange(start: start, end: end)
  }

  /// The path of `rsvg-convert` on `PATH`, or an error saying how to get it.
  static func rsvgConvert() throws -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for folder in path.split(separator: ":") where !folder.isEmpty {
      let candidate = "\(folder)/rsvg-convert"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw MissingInput(
      message:
        "a PNG is rendered by rsvg-convert, which is not installed (or not on PATH); install it (Debian/Ubuntu: apt-get install librsvg2-bin; Fedora: dnf install librsvg2-tools; macOS: brew install librsvg), or draw an .svg"
    )
  }

  /// `svg` rendered to PNG by `converter` (rsvg-convert), through pipes: no file is made.
  static func png(from svg: [UInt8], converter: String) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: converter)
    process.arguments = ["--format=png"]
    let input = Pipe()
    let output = Pipe()
    let messages = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = messages
    do {
      try process.run()
    } catch {
      throw MissingInput(
        message:
          "cannot run \(converter) (\(error.localizedDescription)); reinstall librsvg2-bin, or draw an .svg"
      )
    }
    // The picture goes in on one thread while its PNG and messages come out on others, so
    // that no pipe fills up and stops the converter.
    let done = DispatchGroup()
    let writer = input.fileHandleForWriting
    let inputDescriptor = writer.fileDescriptor
    let messagesDescriptor = messages.fileHandleForReading.fileDescriptor
    let said = ReadBox()
    DispatchQueue.global().async(group: done) {
      svg.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count, let base = bytes.baseAddress {
          let written = Glibc.write(inputDescriptor, base + offset, bytes.count - offset)
          if written > 0 {
            offset += written
          } else if written < 0 && errno == EINTR {
            continue
          } else {
            break
          }
        }
      }
      try? writer.close()
    }
    DispatchQueue.global().async(group: done) {
      said.bytes = readAll(messagesDescriptor)
    }
    let png = readAll(output.fileHandleForReading.fileDescriptor)
    process.waitUntilExit()
    done.wait()
    let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    guard process.terminationReason == .exit, process.terminationStatus == 0,
      Array(png.prefix(8)) == signature
    else {
      let message =
        String(decoding: said.bytes, as: UTF8.self)
        .split(separator: "\n").first.map(String.init) ?? "exit \(process.terminationStatus)"
      throw ToolFailure(
        message:
          "rsvg-convert could not render the picture (\(message)); draw an .svg instead, or try a smaller --width"
      )
    }
    return png
  }
}

/// What a helper thread read, handed to the thread that waits for it.
final class ReadBox: @unchecked Sendable {
  var bytes: [UInt8] = []
}

/// Everything `descriptor` gives until its end (or an error).
func readAll(_ descriptor: Int32) -> [UInt8] {
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 65_536)
  while true {
    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    if count > 0 {
      bytes += buffer[0..<count]
    } else if count < 0 && errno == EINTR {
      continue
    } else {
      return bytes
    }
  }
}

/// A program Tape runs (rsvg-convert) failed (exit 74: its output could not be made).
struct ToolFailure: Error {
  let message: String
}
