import ArgumentParser
import AudioFiles
import Foundation
import Mixing
import SafeFiles
import Synchronization
import Timeline
import TimelineStore

struct Render: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Mix the project to an audio file (WAV, FLAC, AIFF or Ogg).",
    discussion: """
      Renders from 0 to the end of the last clip unless --from/--to say otherwise. Integer \
      output is clamped (never wrapped) and the clipped samples counted; 16-bit output is TPDF \
      dithered unless --dither none. A file appears only when complete, replacing the old one \
      whole (a symlink's target is replaced, the link kept); a device, a FIFO or - (standard \
      output, with --format) is written as a stream. A source of the project, the project \
      itself and its cache are never overwritten.
      Stems: --tracks t1,t3 renders only those tracks, and --stems DIR writes one file per \
      track into DIR (named after the track: t1-Vocals.wav), each over the whole project's \
      length so that they line up with the mix. A track in a stem plays as it does in the mix \
      (its clips, gain, pan and envelope) with its mute and solo set aside; the master gain \
      is applied unless --no-master-gain. The stems of every track add up to the mix.
      Example: tape render song.tape -o mix.wav --bits 16
      Example: tape render song.tape -o - --format flac | ssh host 'cat > mix.flac'
      Example: tape render song.tape --tracks t1,t3 -o voices.wav
      Example: tape render song.tape --stems stems --format flac
      """)

  @OptionGroup var project: ProjectArgument
  @Option(
    name: .shortAndLong,
    help: "The file to write (its extension picks the format), a device, a FIFO, or - for stdout.",
    completion: .file())
  var output: String?
  @Option(help: "Only these tracks, comma-separated (t1,t3): a stem.", completion: ids("t"))
  var tracks: String?
  @Option(
    help: "Write one file per track into this folder (wav unless --format).", completion: .directory
  )
  var stems: String?
  @Flag(help: "Leave the master gain out of --tracks and --stems renders.")
  var noMasterGain = false
  @Flag(
    help:
      "Render effects whose LV2 plugin is not installed as if bypassed (and say which), instead of refusing."
  )
  var bypassMissing = false
  @Option(help: "wav, flac, aiff or ogg (default: from the output's extension).")
  var format: String?
  @Option(help: "16, 24 or 32f (default 24; Ogg is always encoded from float).")
  var bits: String?
  @Option(help: "tpdf or none (default: tpdf for 16-bit output, none otherwise).")
  var dither: String?
  @OptionGroup var span: SpanOptions
  @OptionGroup var times: TimeDisplayOption
  @OptionGroup var json: JSONOption

  func validate() throws {
    guard (output != nil) != (stems != nil) else {
      throw ValidationError("give -o FILE, or --stems FOLDER for one file per track")
    }
    if stems != nil && tracks != nil {
      throw ValidationError("--stems writes every track; give --tracks with -o instead")
    }
    if noMasterGain && stems == nil && tracks == nil {
      throw ValidationError("--no-master-gain is for stems: give --tracks or --stems with it")
    }
    try RawArguments.requireUTF8Path(output ?? stems ?? "", output == nil ? "stems" : "output")
  }

  /// The file this render writes (with --stems, the stem's).
  private var target: String { output ?? "" }

  func run() throws {
    if let stems {
      try renderStems(into: stems)
      return
    }
    var chosen: [Track.ID]?
    try reportingErrors { chosen = try tracks.map(parseTrackIDs) }
    try render(stem: chosen.map { ($0, !noMasterGain) })
  }

  /// One file per track in `folder`, created if missing (its parent must exist).
  private func renderStems(into folder: String) throws {
    var ids: [(Track.ID, String)] = []
    try reportingErrors {
      let file = self.project.file
      let store = try retryingReads { try openStore(file, access: .read) }
      let whole =
        if let version = span.version { try store.project(at: version) } else {
          store.snapshot.project
        }
      guard !whole.tracks.isEmpty else {
        throw DataError(
          message: "the project has no tracks, so no stems; add one with 'tape track add'")
      }
      var isFolder: ObjCBool = false
      if !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) {
        do {
          try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: false)
        } catch {
          throw MissingInput(
            message:
              "cannot create the folder \(folder) for the stems (does \((folder as NSString).deletingLastPathComponent) exist?)"
          )
        }
      } else if !isFolder.boolValue {
        throw UsageError(message: "--stems \(folder) is a file; give a folder for the stems")
      }
      let suffix = (format ?? "wav").lowercased()
      ids = whole.tracks.map { track in
        let name = String(
          track.name.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" })
        return (
          track.id, (folder as NSString).appendingPathComponent("\(track.id)-\(name).\(suffix)")
        )
      }
    }
    for (id, path) in ids {
      var one = self
      one.output = path
      one.stems = nil
      try one.render(stem: ([id], !noMasterGain))
    }
  }

  private func render(stem: (tracks: [Track.ID], masterGain: Bool)?) throws {
    let output = target
    Termination.install(
      message: escaped(
        "render interrupted; \(output == "-" ? "the output" : output) was not written"))
    try reportingErrors {
      try span.checkUnits(times)
      let cache = AudioCache(forProject: project.file)
      let destination: OutputDestination
      do {
        destination = try OutputDestination.resolve(output)
      } catch SafeFileError.isFolder {
        // The cache folder: the usual "give a file name such as FOLDER/mix.wav" would be
        // refused as inside the cache.
        if let identity = FileIdentity(path: output),
          cache.directories.contains(where: {
            FileIdentity(path: $0).map(identity.isSameFile) ?? false
          })
        {
          throw UsageError(
            message:
              "-o \(output) is the project's decoded-audio cache; give a file name outside it, such as mix.wav"
          )
        }
        throw SafeFileError.isFolder(path: output)
      }
      let (settings, project, plan, audio, range, rack) = try retryingReads {
        () throws -> (RenderSettings, Project, RenderPlan, ProjectAudio, FrameRange, EffectRack?) in
        let store = try openStore(self.project.file, access: .read)
        try refuseDestroying(destination, store: store, cache: cache)
        let settings = try renderSettings()
        let compiled = try span.compile(
          store, cache: cache, stem: stem, bypassMissing: bypassMissing)
        return (
          settings, compiled.project, compiled.plan, compiled.audio, compiled.range, compiled.rack
        )
      }
      for (id, plugin) in (rack?.skipped ?? [:]).sorted(by: { $0.key < $1.key }) {
        writeOut(
          escaped("note: effect \(id) skipped: its plugin \(plugin) is not installed") + "\n")
      }
      let bar = ProgressBar(total: range.count.frames, sampleRate: project.sampleRate)
      defer { bar.finish() }
      let summary = try OfflineRenderer.render(
        plan, audio: audio, range: range, to: destination, settings: settings,
        progress: bar.update)
      bar.finish()
      if destination.kind != .standardOutput {
        StandardOutput.done = "\(output) was written all the same"
      }
      let text =
        json.json
        ? summaryJSON(summary, settings: settings, range: range).rendered + "\n"
        : summaryText(summary, settings: settings, range: range)
      // The audio itself is on standard output: the summary goes beside it, on stderr.
      if destination.kind == .standardOutput {
        writeOut(text)
      } else {
        print(text, terminator: "")
      }
    }
  }

  /// Refuses an output that is (the same file as, by device and inode, whatever its name) a
  /// source any version of the project uses, the project file, or a decoded-audio cache file;
  /// or that is named as the project's `-wal`, `-shm` or `-journal`, or lies in its cache
  /// folder, whether or not that file exists yet (SQLite may create it any moment). Standard
  /// output is checked too when it is a file (`1<> song.tape` does not truncate it).
  private func refuseDestroying(
    _ destination: OutputDestination, store: TimelineStore, cache: AudioCache
  ) throws {
    let file = store.path
    func refuse(_ what: String, _ path: String) -> UsageError {
      let named = path == target ? "" : " (\(path))"
      let shown = target == "-" ? "standard output" : "-o \(target)"
      return UsageError(
        message:
          "\(shown) is \(what)\(named); rendering there would destroy it, so choose another output name"
      )
    }
    let sidecars = [
      ("-wal", "the project's write-ahead log"), ("-shm", "the project's shared-memory index"),
      ("-journal", "the project's journal"),
    ]
    // The project by the name given and by the file SQLite opens (a symlink resolved), whose
    // side files are named from the resolved name.
    let projects = [Self.resolvedPath(file), Self.realPath(file)].compactMap { $0 }
    if destination.kind == .file {
      let target = Self.resolvedPath(destination.target)
      // The folder by identity, so that a bind mount or another path to it is the same folder.
      let targetFolder = FileIdentity(path: (target as NSString).deletingLastPathComponent)
      let targetName = (target as NSString).lastPathComponent
      for (suffix, what) in sidecars {
        for project in projects {
          let projectFolder = FileIdentity(path: (project as NSString).deletingLastPathComponent)
          let sameFolder =
            targetFolder.flatMap { folder in projectFolder.map(folder.isSameFile) } ?? false
          if target == project + suffix
            || (sameFolder && targetName == (project as NSString).lastPathComponent + suffix)
          {
            throw refuse(what, (project == projects[0] ? file : project) + suffix)
          }
        }
      }
      for folder in cache.directories
      where (target as NSString).deletingLastPathComponent == Self.resolvedPath(folder) {
        throw refuse("inside the decoded-audio cache", folder)
      }
    }
    guard let existing = destination.existing, existing.isRegularFile else { return }
    var protected: [(path: RawPath, what: String)] = [(RawPath(file), "the project file itself")]
    for project in [file] + projects {
      protected += sidecars.map { (RawPath(project + $0.0), $0.1) }
    }
    protected += try store.sourcePathsInHistory().sorted().map {
      ($0.resolved(against: cache.projectFolder), "a source of this project")
    }
    protected += cache.files.map { (RawPath($0), "a decoded-audio cache file") }
    for (path, what) in protected {
      guard let identity = path.withCString({ FileIdentity(cPath: $0) }),
        identity.isSameFile(as: existing)
      else { continue }
      throw refuse(what, path.description)
    }
  }

  /// `path` with its folder's symlinks, `.` and `..` resolved (the file itself need not exist).
  /// `path` with every symlink resolved, the file's own included; nil when it does not exist.
  private static func realPath(_ path: String) -> String? {
    guard let real = realpath(path, nil) else { return nil }
    defer { free(real) }
    return String(cString: real)
  }

  private static func resolvedPath(_ path: String) -> String {
    let folder = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    guard let real = realpath(folder.isEmpty ? "." : folder, nil) else { return path }
    defer { free(real) }
    return String(cString: real) + "/" + name
  }

  private func renderSettings() throws -> RenderSettings {
    let output = target
    let extensionFormat = ExportFormat(pathExtension: (output as NSString).pathExtension)
    let chosenFormat: ExportFormat
    if let format {
      guard let parsed = ExportFormat(pathExtension: format) else {
        throw UsageError(message: "'\(format)' is not an output format; use wav, flac, aiff or ogg")
      }
      chosenFormat = parsed
    } else if let extensionFormat {
      chosenFormat = extensionFormat
    } else if output == "-" {
      throw UsageError(
        message:
          "standard output has no extension to tell the format; add --format wav (or flac, aiff, ogg)"
      )
    } else {
      throw UsageError(
        message:
          "cannot tell the format of '\(output)' from its extension; name it .wav, .flac, .aiff or .ogg, or add --format wav"
      )
    }
    let sampleFormat: SampleFormat
    if let bits {
      guard let parsed = SampleFormat(rawValue: bits.lowercased()) else {
        throw UsageError(message: "'\(bits)' is not a sample format; use --bits 16, 24 or 32f")
      }
      sampleFormat = parsed
    } else {
      sampleFormat = chosenFormat.defaultSampleFormat
    }
    guard chosenFormat.sampleFormats.contains(sampleFormat) else {
      let allowed = chosenFormat.sampleFormats.map(\.rawValue).joined(separator: " or ")
      throw UsageError(
        message:
          "\(chosenFormat) cannot store \(sampleFormat) samples; use --bits \(allowed) or another format"
      )
    }
    let shouldDither: Bool
    switch dither?.lowercased() {
    case nil: shouldDither = sampleFormat == .int16
    case "none": shouldDither = false
    case "tpdf":
      guard sampleFormat.integerBits != nil else {
        throw UsageError(
          message: "dither applies to integer output only; drop --dither or use --bits 16 or 24")
      }
      shouldDither = true
    case let other?:
      throw UsageError(message: "'\(other)' is not a dither; use --dither tpdf or --dither none")
    }
    return RenderSettings(format: chosenFormat, sampleFormat: sampleFormat, dither: shouldDither)
  }

  private func summaryText(
    _ summary: RenderSummary, settings: RenderSettings, range: FrameRange
  ) -> String {
    let duration = times.show(summary.frames, sampleRate: summary.sampleRate)
    let layout = summary.channels == 1 ? "mono" : "stereo"
    let format =
      settings.format == .ogg
      ? "Ogg Vorbis"
      : "\(settings.format) \(settings.sampleFormat)\(settings.dither ? " (TPDF dither)" : "")"
    return """
      \(target): \(format), \(summary.sampleRate) Hz \(layout), \(duration)
        peak       \(decibels(summary.peakDecibels)) dBFS
        loudness   \(decibels(summary.loudness)) LUFS
        clipped    \(summary.clippedSamples) samples\(clippedNote(summary, from: range.start.frames))
        rendered   in \(String(format: "%.2f", summary.seconds)) s (\(String(format: "%.0f", summary.realtimeFactor))× realtime)

      """
  }

  /// Why samples were clipped and what to do: infinite or NaN samples (a huge float source at
  /// a high gain) are said with where the first was, as they were written as silence.
  private func clippedNote(_ summary: RenderSummary, from: Int64) -> String {
    guard summary.clippedSamples > 0 else { return "" }
    guard let first = summary.firstNonFiniteFrame else {
      return " (lower a gain to avoid it, or render --bits 32f)"
    }
    let at = times.show(first + from, sampleRate: summary.sampleRate)
    return
      " (\(summary.nonFiniteSamples) not finite, the first at \(at), written as silence: lower a gain)"
  }

  private func summaryJSON(
    _ summary: RenderSummary, settings: RenderSettings, range: FrameRange
  )
    -> JSONValue
  {
    let finite = { (value: Double) in value.isFinite ? JSONValue.double(value) : .null }
    return .object([
      ("output", .string(target)),
      ("format", .string(settings.format.rawValue)),
      ("bits", .string(settings.sampleFormat.rawValue)),
      ("dither", .string(settings.dither ? "tpdf" : "none")),
      ("sampleRate", .int(Int64(summary.sampleRate))),
      ("channels", .int(Int64(summary.channels))),
      ("from", .int(range.start.frames)),
      ("frames", .int(summary.frames)),
      ("duration", .double(summary.durationSeconds)),
      ("peakDBFS", finite(rounded(summary.peakDecibels))),
      ("loudnessLUFS", finite(rounded(summary.loudness))),
      ("clippedSamples", .int(Int64(summary.clippedSamples))),
      ("nonFiniteSamples", .int(Int64(summary.nonFiniteSamples))),
      (
        "firstNonFiniteSeconds",
        summary.firstNonFiniteFrame.map {
          .double(Double($0) / Double(summary.sampleRate))
        } ?? .null
      ),
      ("wallSeconds", .double(rounded(summary.seconds, places: 4))),
      ("realtimeFactor", finite(rounded(summary.realtimeFactor, places: 1))),
    ])
  }
}

private func decibels(_ value: Double) -> String {
  value.isFinite ? String(format: "%.2f", value) : "-inf"
}

private func rounded(_ value: Double, places: Int = 2) -> Double {
  guard value.isFinite else { return value }
  let scale = pow(10, Double(places))
  return (value * scale).rounded() / scale
}

/// A one-line progress bar on stderr, drawn only when stderr is a terminal.
final class ProgressBar {
  private let total: Int64
  private let sampleRate: Int
  private let verb: String
  private let enabled = isatty(STDERR_FILENO) == 1
  private var lastDraw = ContinuousClock.now
  private var drawn = false

  init(total: Int64, sampleRate: Int, verb: String = "rendering") {
    self.total = max(total, 1)
    self.sampleRate = sampleRate
    self.verb = verb
  }

  func update(_ done: Int64) {
    guard enabled, ContinuousClock.now - lastDraw > .milliseconds(100) else { return }
    lastDraw = .now
    drawn = true
    var size = winsize()
    let columns =
      ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0
      ? Int(size.ws_col) : 80
    let time = TimeValue.clock(FrameCount(done), sampleRate: sampleRate)
    writeOut("\r" + Self.line(verb: verb, done: done, total: total, time: time, columns: columns))
  }

  /// The bar's text for a terminal `columns` wide: never as wide, so it never wraps (a line that
  /// wraps leaves a copy of itself on every redraw, which garbled a 10-column terminal). The
  /// bar shrinks first, then goes, then the verb and the time; the percentage stays.
  static func line(verb: String, done: Int64, total: Int64, time: String, columns: Int) -> String {
    let percent = "\(Int(100 * done / total))%"
    let room = columns - 1
    let text = "\(verb) [] \(percent)  \(time)"
    let width = min(30, room - text.count)
    guard width >= 5 else {
      let shorter = ["\(verb) \(percent)  \(time)", "\(percent)  \(time)", percent]
      let fitting = shorter.first { $0.count <= room } ?? String(percent.prefix(max(0, room)))
      return fitting + "\u{1B}[K"
    }
    let filled = Int(Double(width) * Double(done) / Double(total))
    let bar = String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled)
    return "\(verb) [\(bar)] \(percent)  \(time)\u{1B}[K"
  }

  /// Clears the bar's line (once), so what follows starts on a clean line.
  func finish() {
    guard drawn else { return }
    drawn = false
    writeOut("\r\u{1B}[K")
  }
}
