import ArgumentParser
import AudioFiles
import Foundation
import Interchange
import SafeFiles
import Timeline
import TimelineStore

struct Export: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract:
      "Write the timeline for other editors: OpenTimelineIO (.otio) or a CMX3600 EDL (.edl).",
    discussion: """
      The output's extension picks the format. .otio: OpenTimelineIO JSON (as OTIO 0.18 writes \
      it): one audio track per track (a track whose clips overlap is spread over extra tracks \
      named after it: Drums, Drums (2)), each clip's crop at the project rate with an absolute \
      file:// URL to its source, gaps where nothing plays, fades also as dissolve transitions \
      placed as OTIO means them: two clips that crossfade (as 'tape clip crossfade' makes \
      them) are one dissolve between them on one track; any other fade a dissolve from or into \
      a gap (of length 0 between two clips that abut), so a reader that lengthens clips into \
      transitions plays what Tape plays. A fade a range edit cut part of is warned about: \
      other tools fade it whole. Gain, pan, mute, solo, envelopes, effects, routing, automation, names and exact \
      fades are kept in metadata["tape"], so that 'tape import-otio' gets the same project \
      back. --start writes the timeline's global_start_time (a timecode at --fps).
      .edl: a CMX3600 audio EDL at --fps (24, 25 or 30 non-drop, or 29.97 drop-frame; default \
      25), its record timecode from --start (default 00:00:00:00). Each track (each \
      of its lanes, when its clips overlap) is one channel, A then A2; a project with more than \
      two writes the others to further EDLs, edit-2.edl (A, A2), edit-3.edl… Fades are \
      dissolves from and to black; gain, pan, mute and effects have no place in an EDL. Every \
      edit is rounded to the nearest frame, with a warning when that moves any. Every file \
      is checked before the first is written; edit-2.edl and the others replace only EDLs. \
      The files written are printed, one per line.
      Example: tape export song.tape -o edit.otio
      Example: tape export song.tape -o edit.edl --fps 25
      Example: tape export song.tape -o edit.edl --start 01:00:00:00
      """)

  @OptionGroup var project: ProjectArgument
  @Option(
    name: .shortAndLong, help: "The file to write: edit.otio or edit.edl.",
    completion: .file(extensions: ["otio", "edl"]))
  var output: String
  @Option(help: "Export this version instead of the current one (the head does not move).")
  var version: String?
  @Option(
    parsing: .unconditional,
    help:
      "Frames per second of the timecode: 24, 25, 30 or 29.97 (drop-frame) (default 25).")
  var fps: String?
  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "The timecode of the timeline's first frame (an EDL's record start; OTIO's global_start_time).",
      discussion: "HH:MM:SS:FF at --fps (HH:MM:SS;FF drop-frame); default 00:00:00:00.",
      valueName: "timecode"))
  var start: String?

  /// The timecode rate, --fps or 25.
  var timecodeRate: TimecodeRate { fps.flatMap(TimecodeRate.init(parsing:)) ?? .fps25 }

  /// The format the output's extension names.
  enum Format { case otio, edl }

  var format: Format? {
    switch (output as NSString).pathExtension.lowercased() {
    case "otio": .otio
    case "edl": .edl
    default: nil
    }
  }

  func validate() throws {
    try RawArguments.requireUTF8Path(output, "output")
    guard let format else {
      throw ValidationError(
        "tape export writes OpenTimelineIO (.otio) or a CMX3600 EDL (.edl); name the output edit.otio or edit.edl"
      )
    }
    if let fps {
      guard format == .edl || start != nil else {
        throw ValidationError(
          "--fps is for EDLs, and for the timecode of --start; name the output edit.edl or give --start"
        )
      }
      guard TimecodeRate(parsing: fps) != nil else {
        throw ValidationError("--fps \(fps) is not a timecode rate; give \(TimecodeRate.accepted)")
      }
    }
    if let start, timecodeRate.frames(parsing: start) == nil {
      let example = timecodeRate.dropFrame ? "01:00:00;00" : "01:00:00:00"
      throw ValidationError(
        "--start \(start) is not a timecode at \(timecodeRate) fps; write HH:MM:SS\(timecodeRate.dropFrame ? ";" : ":")FF, for example \(example)"
      )
    }
  }

  func run() throws {
    try reportingErrors {
      let file = project.file
      let folder = projectFolder(file)
      let path = { (source: Source) in source.path.resolved(against: folder).normalized.bytes }
      var title = (file as NSString).lastPathComponent
      if title.hasSuffix(".tape") { title = String(title.dropLast(5)) }
      let rate = timecodeRate
      let startFrame = start.flatMap(rate.frames(parsing:)) ?? 0
      // Every file to write, each checked before the first is written: a refusal writes
      // nothing.
      let (current, export, files) = try retryingReads {
        () throws -> (Project, EDLExport?, [(name: String, text: String)]) in
        let store = try openStore(file, access: .read)
        // A number or a tag's name, as everywhere a version is taken.
        let current =
          try version.map { try store.project(at: store.resolveVersion($0)) }
          ?? store.snapshot.project
        var export: EDLExport?
        var files: [(name: String, text: String)]
        switch format {
        case .otio:
          files = [
            (
              output,
              OTIOExport.document(
                current, name: title, start: start.map { _ in (startFrame, rate) }, path: path
              ).rendered()
            )
          ]
        case .edl, nil:
          let edl = EDLExport(current, title: title, rate: rate, start: startFrame, path: path)
          export = edl
          files = edl.documents.enumerated().map { index, document in
            (index == 0 ? output : Self.numbered(output, index + 1), document.text)
          }
        }
        let cache = AudioCache(forProject: file)
        for (index, name) in files.map(\.name).enumerated() {
          try refuseDestroying(name, extra: index > 0, store: store, cache: cache)
        }
        return (current, export, files)
      }
      if format == .otio {
        let cut = OTIOExport.partlyCutFades(current)
        if !cut.isEmpty {
          let ids = cut.map(\.description).joined(separator: ", ")
          writeOut(
            "warning: \(ids) \(cut.count == 1 ? "has a fade" : "have fades") a range edit cut part of; OTIO's dissolves run from or to silence, so other tools fade \(cut.count == 1 ? "it" : "them") whole over the length that plays ('tape import-otio' keeps \(cut.count == 1 ? "it" : "them") exact)\n"
          )
        }
      }
      var written: [String] = []
      for (index, (name, text)) in files.enumerated() {
        try Self.write(text, to: name)
        written.append(name)
        guard let export else { continue }
        let extra =
          export.documents.count > 1
          || export.documents.contains { $0.lanes.contains { $0.index > 0 } }
        if extra {
          let channels = zip(["A", "A2"], export.documents[index].lanes).map { channel, lane in
            "\(channel) \(lane.track.id) \(ProjectWords.escaped(lane.name))"
          }
          writeOut(
            "note: \(ProjectWords.escaped(name)) holds \(channels.joined(separator: ", "))\n")
        }
      }
      if let export {
        if export.roundedEdits > 0 {
          let most = Double(export.largestRounding) / Double(current.sampleRate) * 1000
          writeOut(
            "warning: \(export.roundedEdits) edit\(export.roundedEdits == 1 ? " is" : "s are") not on a frame at \(rate) fps and \(export.roundedEdits == 1 ? "was" : "were") rounded to the nearest (by up to \(String(format: "%.1f", most)) ms); export .otio to keep them exact\n"
          )
        }
        if !export.lateFades.isEmpty {
          let ids = export.lateFades.map(\.description).joined(separator: ", ")
          writeOut(
            "warning: \(ids) \(export.lateFades.count == 1 ? "fades" : "fade") in at the very start, where an EDL's dissolve needs something before it: \(export.lateFades.count == 1 ? "its fade starts" : "their fades start") one frame later, after a frame of black; export .otio to keep \(export.lateFades.count == 1 ? "it" : "them") exact\n"
          )
        }
        if !export.droppedClips.isEmpty {
          writeOut(
            "warning: \(export.droppedClips.map(\.description).joined(separator: ", ")) \(export.droppedClips.count == 1 ? "is" : "are") shorter than a frame at \(rate) fps and left out of the EDL\n"
          )
        }
      }
      StandardOutput.done = "\(written.joined(separator: ", ")) written all the same"
      for name in written { print(name) }
    }
  }

  /// Refuses to write `name` over the project, its `-wal`, `-shm` or `-journal`, a source of
  /// any version, or the decoded-audio cache (as a render refuses them); and, for an `extra`
  /// file (`edit-2.edl`, which the user did not name), over anything but an EDL: a file there
  /// that is not one (another project, an audio file) is the user's, not an earlier export's.
  func refuseDestroying(
    _ name: String, extra: Bool, store: TimelineStore, cache: AudioCache
  ) throws {
    let shown = extra ? "-o \(output) would also write \(name), which" : "-o \(name)"
    let destination = try OutputDestination.resolve(name)
    try Render.refuseDestroying(
      destination, target: name, store: store, cache: cache,
      refusal: { what, path in
        let named = path == name ? "" : " (\(path))"
        return UsageError(
          message:
            "\(shown) is \(what)\(named); exporting there would destroy it, so choose another output name"
        )
      })
    guard extra, let existing = destination.existing else { return }
    let header = Self.header(of: destination.target)
    guard !existing.isRegularFile || !header.starts(with: Array("TITLE: ".utf8)) else { return }
    let kind =
      header.starts(with: Array("SQLite format 3\0".utf8))
      ? "a SQLite database (a Tape project?)"
      : existing.isRegularFile ? "a file that is not an EDL" : "not a regular file"
    throw UsageError(
      message:
        "\(shown) is \(kind); an export replaces only EDLs there, so choose another output name or move \(name) away"
    )
  }

  /// The first 16 bytes of the regular file at `path` (fewer when it is shorter or cannot be
  /// read), read without waiting on a FIFO.
  static func header(of path: String) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 16)
    let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    return Array(bytes.prefix(max(0, count)))
  }

  /// `edit-2.edl` for `edit.edl` and 2.
  static func numbered(_ path: String, _ number: Int) -> String {
    let ext = (path as NSString).pathExtension
    return (path as NSString).deletingPathExtension + "-\(number)." + ext
  }

  /// Writes `text` to `path` whole: it appears complete or not at all, replacing what was there.
  static func write(_ text: String, to path: String) throws {
    let output = try SafeOutput(OutputDestination.resolve(path))
    var bytes = Array(text.utf8)
    try bytes.withUnsafeMutableBytes { try output.write(UnsafeRawBufferPointer($0)) }
    try output.commit()
  }
}

/// The store's allocator as the import's source of ids.
struct StoreIDs: ImportIDs {
  var ids: IDAllocator

  mutating func newSourceID() -> Source.ID { ids.newSourceID() }
  mutating func newTrackID() -> Track.ID { ids.newTrackID() }
  mutating func newClipID() -> Clip.ID { ids.newClipID() }
  mutating func newEffectID() -> Effect.ID { ids.newEffectID() }
  mutating func newMarkerID() -> Marker.ID { ids.newMarkerID() }
  mutating func newSendID() -> Send.ID { ids.newSendID() }
}

struct ImportOTIO: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "import-otio",
    abstract: "Make a new project from an OpenTimelineIO (.otio) timeline; prints its tracks' ids.",
    discussion: """
      Audio tracks only: video tracks are named on stderr and skipped. Every clip's file is \
      registered as a source through the same checks as 'tape import' (missing, unreadable or \
      truncated audio is refused) and decoded into the new project's cache. metadata["tape"] \
      (written by 'tape export') is honoured: tracks spread over several OTIO tracks become one \
      again, with their gain, pan, mute, solo, envelope, effects and exact fades, and their \
      outputs, sends, side chains and automation lanes. Otherwise a \
      transition is a linear fade (a dissolve between two clips lengthens both into it, as OTIO \
      means) and a disabled track is muted. Relative media paths are taken from the .otio \
      file's folder. The project's rate is --rate, else the one Tape wrote, else the clips' \
      rate when it is an audio rate, else 48000 Hz.
      FILE must not exist: import-otio makes a new project and never changes an existing one. \
      The whole import is one version after 'New project', so one 'tape undo' empties it. \
      On any error nothing is written.
      Example: tape import-otio edit.otio imported.tape
      """)

  @Argument(help: "The OpenTimelineIO file to read.", completion: .file(extensions: ["otio"]))
  var otio: String
  @OptionGroup var project: ProjectArgument
  @Option(
    parsing: .unconditional,
    help: "Sample rate of the new project in Hz (default: from the file, else 48000).")
  var rate: Int?
  @Option(
    parsing: .unconditional,
    help: "Output channels of the new project: 1 or 2 (default: from the file, else 2).")
  var channels: Int?
  @OptionGroup var options: EditOptions

  func run() throws {
    Termination.install(
      message: ProjectWords.escaped("import-otio interrupted; \(project.file) was not created"))
    try reportingErrors {
      let file = project.file
      guard FileIdentity(path: file) == nil else {
        throw UsageError(
          message:
            "\(file) already exists; import-otio makes a new project: name a file that does not exist, or remove \(file) first"
        )
      }
      let otioPath = RawArguments.path(otio)
      guard
        let data = otioPath.withCString({
          FileManager.default.contents(atPath: String(cString: $0))
        })
      else {
        throw MissingInput(message: "cannot read \(otio); give the path of an .otio file")
      }
      let name = ProjectWords.escaped((otio as NSString).lastPathComponent)
      guard let text = String(validating: data, as: UTF8.self) else {
        throw DataError(
          message: "\(name) is not text (not UTF-8); give an .otio file (OpenTimelineIO JSON)")
      }
      var timeline: OTIOTimeline
      do {
        timeline = try OTIOTimeline(
          parsing: text, folder: otioPath.absolute.folder, rate: rate, channels: channels)
      } catch {
        throw DataError(message: "cannot import \(name): \(error)")
      }
      // The same reading and checks as `tape import`, every file before anything is written.
      // Every missing file is named at once, with the clips that play it.
      var missing: [String] = []
      var probed: [AudioFileInfo] = []
      for media in timeline.media {
        do throws(AudioFileError) {
          probed.append(try AudioProbe.probe(media.path))
        } catch {
          guard case .missing = error else { throw error }
          let users =
            media.clips.isEmpty
            ? ""
            : " (\(media.clips.prefix(3).joined(separator: ", "))\(media.clips.count > 3 ? " and \(media.clips.count - 3) more" : ""))"
          missing.append(media.path.description + users)
        }
      }
      if !missing.isEmpty {
        throw MissingInput(
          message:
            "cannot import \(name): \(missing.count == 1 ? "a media file is" : "\(missing.count) media files are") missing: \(missing.joined(separator: "; ")); put \(missing.count == 1 ? "it" : "them") where the timeline says, or relink \(missing.count == 1 ? "it" : "them") in the tool that wrote it"
        )
      }
      let sources = probed.map { info in
        Source(
          id: Source.ID(0), path: storedPath(info.path, project: file),
          contentHash: info.contentHash, sampleRate: info.sampleRate, channels: info.channels,
          frameCount: FrameCount(info.frameCount))
      }
      var counting = LocalIDs()
      var checked = timeline
      let commands: [Command]
      do {
        commands = try checked.commands(sources: sources, ids: &counting)
      } catch {
        throw DataError(message: "cannot import \(name): \(error)")
      }
      try Project(sampleRate: timeline.sampleRate, channels: timeline.channels).validateFormat()
      _ = try Project(sampleRate: timeline.sampleRate, channels: timeline.channels).applying(
        commands)
      let cache = AudioCache(forProject: file)
      for source in sources { _ = try cache.load(source, projectRate: timeline.sampleRate) }
      let store = try TimelineStore.create(
        at: file, sampleRate: timeline.sampleRate, channels: timeline.channels)
      StoresClosedAtExit.keep(store)
      sayNotes(store.notes)
      // Until the import is committed, a signal or a failure removes the new project.
      let tokens = ["", "-wal", "-shm"].map { Termination.remember(file + $0) }
      let result: TimelineStore.CommitResult
      do {
        result = try store.edit(label: options.message ?? "Import \(name)") { _, ids in
          var store = StoreIDs(ids: ids)
          defer { ids = store.ids }
          return try timeline.commands(sources: sources, ids: &store)
        }
      } catch {
        try? store.close()
        for suffix in ["", "-wal", "-shm"] { unlink(file + suffix) }
        tokens.forEach(Termination.forget)
        throw error
      }
      tokens.forEach(Termination.forget)
      Termination.install(
        message: ProjectWords.escaped("interrupted; \(file) was created all the same"))
      if !timeline.skippedTracks.isEmpty {
        let count = timeline.skippedTracks.count
        writeOut(
          ProjectWords.escaped(
            "note: skipped \(count) track\(count == 1 ? "" : "s") that \(count == 1 ? "is" : "are") not audio: \(timeline.skippedTracks.joined(separator: ", "))"
          ) + "\n")
      }
      for note in checked.notes { writeOut(ProjectWords.escaped("note: \(note)") + "\n") }
      if let start = timeline.startTimecode {
        writeOut(
          ProjectWords.escaped(
            "note: the timeline starts at \(start) (its global_start_time); Tape's starts at 0 and every time keeps its place from there ('tape export --start \(start)' writes it again)"
          ) + "\n")
      }
      let tracks = result.newIDs.filter { $0.hasPrefix("t") }
      try MutationOutput(
        version: result.version, ids: tracks, done: "\(file) was imported all the same"
      ).print(json: options.json)
    }
  }
}

/// Ids counted from 1, as a new project's store gives them: for checking an import before
/// its project exists.
struct LocalIDs: ImportIDs {
  var next: [Character: Int64] = [:]

  mutating func take(_ kind: Character) -> Int64 {
    defer { next[kind, default: 1] += 1 }
    return next[kind, default: 1]
  }

  mutating func newSourceID() -> Source.ID { Source.ID(take("s")) }
  mutating func newTrackID() -> Track.ID { Track.ID(take("t")) }
  mutating func newClipID() -> Clip.ID { Clip.ID(take("c")) }
  mutating func newEffectID() -> Effect.ID { Effect.ID(take("f")) }
  mutating func newMarkerID() -> Marker.ID { Marker.ID(take("m")) }
  mutating func newSendID() -> Send.ID { Send.ID(take("n")) }
}
