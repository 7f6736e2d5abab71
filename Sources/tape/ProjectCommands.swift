import ArgumentParser
import AudioFiles
import Foundation
import SafeFiles
import Timeline
import TimelineStore

struct New: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Create an empty project file.",
    discussion: "Example: tape new song.tape --rate 48000 --channels 2")

  @OptionGroup var project: ProjectArgument
  @Option(help: "Sample rate of the timeline in Hz.") var rate = 48_000
  @Option(help: "Output channels: 1 (mono) or 2 (stereo).") var channels = 2
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors {
      let store = try TimelineStore.create(at: project.file, sampleRate: rate, channels: channels)
      try MutationOutput(
        version: store.snapshot.version, ids: [],
        done: "\(project.file) was created all the same"
      ).print(json: output.json)
    }
  }
}

struct Import: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Register audio files as sources; prints their ids.",
    discussion: """
      Every file is opened and read completely first; if any is missing, unreadable, not audio, \
      truncated or has more than two channels, nothing is imported. Each file is then decoded \
      once (and resampled to the project rate) into song.tape-cache/ beside the project.
      Example: tape import song.tape vocals.wav drums.flac
      """)

  @OptionGroup var project: ProjectArgument
  @Argument(
    help: "Audio files (WAV, FLAC, AIFF, Ogg… anything libsndfile reads).", completion: .file())
  var audio: [String]
  @OptionGroup var output: JSONOption

  func validate() throws {
    guard !audio.isEmpty else { throw ValidationError("name at least one audio file to import") }
  }

  func run() throws {
    Termination.install(message: "import interrupted; nothing was imported")
    try reportingErrors {
      let store = try openStore(project.file)
      var probed: [AudioFileInfo] = []
      for path in audio { probed.append(try AudioProbe.probe(path)) }
      // Decode (and resample) each file into the cache now, so renders start at once; the
      // cache is keyed by content, so the source's id plays no part.
      let cache = AudioCache(forProject: project.file)
      let projectRate = store.snapshot.project.sampleRate
      for info in probed {
        _ = try cache.load(
          Source(
            id: Source.ID(0), path: info.path, contentHash: info.contentHash,
            sampleRate: info.sampleRate, channels: info.channels,
            frameCount: FrameCount(info.frameCount)),
          projectRate: projectRate)
      }
      let names = probed.map { ($0.path as NSString).lastPathComponent }
      let label = names.count == 1 ? "Import \(names[0])" : "Import \(names.count) files"
      let result = try store.edit(label: label) { _, ids in
        probed.map { info in
          .setSource(
            Source(
              id: ids.newSourceID(), path: info.path, contentHash: info.contentHash,
              sampleRate: info.sampleRate, channels: info.channels,
              frameCount: FrameCount(info.frameCount)))
        }
      }
      try MutationOutput(version: result.version, ids: result.newIDs).print(json: output.json)
    }
  }
}

struct List: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "ls",
    abstract: "Show the timeline: sources, tracks and clips.",
    discussion: "Example: tape ls song.tape --json")

  @OptionGroup var project: ProjectArgument
  @OptionGroup var output: JSONOption
  @Option(help: "Show this version instead of the current one (the head does not move).")
  var version: Int64?
  @OptionGroup var times: TimeDisplayOption

  func run() throws {
    try reportingErrors {
      let shown = try retryingReads {
        let store = try openStore(project.file, access: .read)
        if let version {
          return StoreSnapshot(version: version, project: try store.project(at: version))
        }
        return store.snapshot
      }
      if output.json {
        printJSON(projectJSON(shown))
      } else {
        print(TimelineTable(shown, file: project.file, frames: times.frames).text, terminator: "")
      }
    }
  }
}

/// The `tape ls --json` contract: every time in frames. Documented in the README; keep stable.
func projectJSON(_ snapshot: StoreSnapshot) -> JSONValue {
  let project = snapshot.project
  return .object([
    ("version", .int(snapshot.version)),
    ("sampleRate", .int(Int64(project.sampleRate))),
    ("channels", .int(Int64(project.channels))),
    (
      "sources",
      .array(
        project.sources.map { source in
          guard case .object(let fields) = sourceJSON(source, projectRate: project.sampleRate)
          else { return .null }
          return .object(fields + [("missing", .bool(isMissing(source)))])
        })
    ),
    (
      "tracks",
      .array(
        project.tracks.map { track in
          .object(trackFields(track) + [("clips", .array(track.clips.map(clipJSON)))])
        })
    ),
  ])
}

/// A source as `ls --json` and the diffs show it: `frames` at the source's own `sampleRate`,
/// `projectFrames` the same length at the project's rate (what `--length` takes).
func sourceJSON(_ source: Source, projectRate: Int) -> JSONValue {
  .object([
    ("id", .string(source.id.description)), ("path", .string(source.path)),
    ("sampleRate", .int(Int64(source.sampleRate))), ("channels", .int(Int64(source.channels))),
    ("frames", .int(source.frameCount.frames)),
    ("projectFrames", .int(source.frameCount(atRate: projectRate).frames)),
  ])
}

/// Whether a source's file is gone from where the project says it is.
func isMissing(_ source: Source) -> Bool {
  FileIdentity(path: source.path) == nil
}

/// A track's settings as `ls --json` shows them (its clips aside).
func trackFields(_ track: Track) -> [(String, JSONValue)] {
  [
    ("id", .string(track.id.description)), ("name", .string(track.name)),
    ("gainDB", .double(track.gain.decibels)), ("pan", .double(track.pan)),
    ("muted", .bool(track.isMuted)), ("solo", .bool(track.isSolo)),
  ]
}

/// A clip as `ls --json` shows it.
func clipJSON(_ clip: Clip) -> JSONValue {
  .object(clipFields(clip))
}

func clipFields(_ clip: Clip) -> [(String, JSONValue)] {
  let fade = { (fade: Fade) in
    JSONValue.object([
      ("length", .int(fade.length.frames)), ("curve", .string(fade.curve.rawValue)),
    ])
  }
  return [
    ("id", .string(clip.id.description)), ("source", .string(clip.source.description)),
    ("timelineStart", .int(clip.timelineStart.frames)),
    ("sourceStart", .int(clip.sourceRange.start.frames)), ("length", .int(clip.length.frames)),
    ("gainDB", .double(clip.gain.decibels)), ("fadeIn", fade(clip.fadeIn)),
    ("fadeOut", fade(clip.fadeOut)),
  ]
}

/// `tape ls` for people: sources, then one table per track.
struct TimelineTable {
  let text: String

  /// Times as `m:ss.mmm`, or as raw frames (`96000f`) when `frames` is set.
  init(_ snapshot: StoreSnapshot, file: String = "FILE", frames inFrames: Bool = false) {
    let project = snapshot.project
    let rate = project.sampleRate
    let clock = { (frames: Int64) in
      inFrames ? "\(frames)f" : TimeValue.clock(FrameCount(frames), sampleRate: rate)
    }
    let missing = Set(project.sources.filter(isMissing).map(\.id))
    var lines = [
      "version \(snapshot.version) · \(rate) Hz · \(project.channels == 1 ? "mono" : "stereo") · length \(clock(project.timelineEnd.frames))"
    ]
    lines.append("")
    if project.sources.isEmpty {
      lines.append("no sources yet: tape import FILE AUDIO...")
    } else {
      lines.append("sources")
      for source in project.sources {
        // At the project's rate, as --length and --from take it.
        let length =
          inFrames
          ? "\(source.frameCount(atRate: rate).frames)f"
          : TimeValue.clock(source.frameCount, sampleRate: source.sampleRate)
        lines.append(
          "  \(pad(source.id.description, 5)) \(length)  \(source.sampleRate) Hz \(source.channels == 1 ? "mono  " : "stereo")  \(source.path)\(missing.contains(source.id) ? "  (missing)" : "")"
        )
      }
    }
    if project.tracks.isEmpty {
      lines.append("")
      lines.append("no tracks yet: tape track add FILE NAME")
    }
    for track in project.tracks {
      var flags: [String] = []
      if track.isMuted { flags.append("muted") }
      if track.isSolo { flags.append("solo") }
      lines.append("")
      lines.append(
        "\(track.id) \(escaped(track.name))  gain \(track.gain)  pan \(formatPan(track.pan))\(flags.isEmpty ? "" : "  [" + flags.joined(separator: ", ") + "]")"
      )
      if track.clips.isEmpty {
        lines.append("  (no clips)")
        continue
      }
      lines.append(
        "  clip   source  start      end        from       gain     fade in            fade out")
      for clip in track.clips {
        let fade = { (fade: Fade) in
          fade.length.frames == 0
            ? "-"
            : "\(inFrames ? "\(fade.length.frames)f" : TimeValue.seconds(fade.length, sampleRate: rate)) \(fade.curve.displayName)"
        }
        lines.append(
          "\(missing.contains(clip.source) ? "! " : "  ")\(pad(clip.id.description, 6)) \(pad(clip.source.description, 7)) \(pad(clock(clip.timelineStart.frames), 10)) \(pad(clock(clip.timelineEnd.frames), 10)) \(pad(clock(clip.sourceRange.start.frames), 10)) \(pad(clip.gain.description, 8)) \(pad(fade(clip.fadeIn), 18)) \(fade(clip.fadeOut))"
        )
      }
    }
    if !missing.isEmpty {
      let ids = project.sources.filter { missing.contains($0.id) }.map(\.id.description)
      let clips = project.tracks.flatMap(\.clips).filter { missing.contains($0.source) }.count
      lines.append("")
      lines.append(
        "! \(ids.count == 1 ? "source \(ids[0]) is" : "sources \(ids.joined(separator: ", ")) are") missing (\(clips) clip\(clips == 1 ? "" : "s") marked !); point \(ids.count == 1 ? "it" : "each") at its file with 'tape relink \(file) \(ids[0]) PATH'"
      )
    }
    text = lines.joined(separator: "\n") + "\n"
  }
}

func pad(_ text: String, _ width: Int) -> String {
  text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

func formatPan(_ pan: Double) -> String {
  if pan == 0 { return "C" }
  let percent = Int((abs(pan) * 100).rounded())
  return pan < 0 ? "L\(percent)" : "R\(percent)"
}

struct Relink: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Point a source at its file's new place.",
    discussion: """
      The new file must hold the same audio (same content hash) unless --force is given; with \
      --force it may be different audio, as long as every clip still fits inside it.
      Example: tape relink song.tape s2 ~/audio/moved/drums.wav
      """)

  @OptionGroup var project: ProjectArgument
  @Argument(help: "The source id (s1).", completion: ids("s")) var source: String
  @Argument(help: "The audio file's new path.", completion: .file()) var path: String
  @Flag(help: "Accept a file with different audio.") var force = false
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors {
      let id = try parseID(source, as: Source.ID.self)
      let store = try openStore(project.file)
      let info = try AudioProbe.probe(path)
      guard let old = store.snapshot.project.source(id) else {
        throw TimelineError.unknownSource(id)
      }
      guard force || info.contentHash == old.contentHash else {
        throw DataError(
          message:
            "\(info.path) is not the same audio as source \(id) (\(old.path)); use --force to relink it anyway"
        )
      }
      let result = try store.edit(label: "Relink \(id)") { _, _ in
        [
          .setSource(
            Source(
              id: id, path: info.path, contentHash: info.contentHash, sampleRate: info.sampleRate,
              channels: info.channels, frameCount: FrameCount(info.frameCount)))
        ]
      }
      try MutationOutput(version: result.version, ids: []).print(json: output.json)
    }
  }
}
