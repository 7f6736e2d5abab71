import ArgumentParser
import AudioFiles
import Effects
import Foundation
import Interchange
import Mixing
import SafeFiles
import Synchronization
import Timeline
import TimelineStore

struct Render: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "render",
    abstract: "Mix the project to an audio file (WAV, FLAC, AIFF, Ogg, MP3 or Opus).",
    discussion: """
      Renders from 0 to the end of the last clip unless --from/--to say otherwise, then, with \
      effects, on while they ring out: until the output stays under -90 dBFS for 1 s (at most \
      30 s; --tail 2s fixes it, --tail 0 ends at the last clip, --to ends where asked). With \
      --from the effects are first fed --preroll (2 s) before it, dropped, so that a range \
      equals that stretch of the whole render. Integer \
      output is clamped (never wrapped) and the clipped samples counted; 16-bit output is TPDF \
      dithered unless --dither none. A file appears only when complete, replacing the old one \
      whole (a symlink's target is replaced, the link kept); a device, a FIFO or - (standard \
      output, with --format) is written as a stream. A source of the project, the project \
      itself and its cache are never overwritten.
      Stems: --tracks t1,t3 renders only those tracks, and --stems DIR writes one file per \
      track heard in the mix into DIR (named after the track: t1-Vocals.wav), each over the \
      whole project's length so that they line up with the mix; a track the mix does not hear \
      (muted, or silenced by another's solo) gets no file, and a note names it (--all-tracks \
      writes every track, as if none were muted). A track in a stem plays as it does in the \
      mix (its clips, gain, pan and envelope); the master gain is applied unless \
      --no-master-gain. Without routing or master effects, the stems written add up to the mix.
      Loudness: --loudness -16LUFS measures the mix first (ITU-R BS.1770-4 gating, as EBU \
      R128), then writes it with the one gain that reaches the target. The true peak (4× \
      oversampled, BS.1770-4) must then stay at or under --true-peak (-1dBTP unless \
      given): where it would not, nothing is written and the error names the fix (a limiter \
      on the master, or the loudest target that fits). --true-peak alone checks the mix as it \
      is. With --tracks or --stems the gain is the whole mix's, so the stems still add up to \
      the normalised mix. The summary reports loudness, loudness range (EBU Tech 3342) and \
      true peak of what was written. MP3 and Opus are measured as delivered (decoded): \
      --loudness is met within 0.1 LU of the file (encoded, measured, corrected and encoded \
      again) and --true-peak is a ceiling on it.
      MP3 is written at a constant --bitrate (default 128 kbit/s), Opus at a variable one \
      (default 96); a rate the codec cannot hold (Opus: 44.1 kHz; MP3: above 48 kHz) is \
      resampled to 48 kHz. \
      --title and --artist tag every format but a WAV or AIFF stream.
      Example: tape render song.tape -o mix.wav --bits 16
      Example: tape render song.tape -o - --format flac | ssh host 'cat > mix.flac'
      Example: tape render song.tape --tracks t1,t3 -o voices.wav
      Example: tape render song.tape --stems stems --format flac
      Example: tape render song.tape -o ep.mp3 --loudness -16LUFS --true-peak -2dBTP
      Example: tape render song.tape -o ep.opus --bitrate 64 --title 'Episode 1'
      Example: tape render song.tape -o part.wav --from 2s --to 4s --preroll 1s
      Example: tape render song.tape -o mix.wav --tail 3s
      """)

  @OptionGroup var project: ProjectArgument
  @Option(
    name: .shortAndLong,
    help: "The file to write (its extension picks the format), a device, a FIFO, or - for stdout.",
    completion: .file())
  var output: String?
  @Option(
    name: [.customLong("tracks"), .customLong("track")],
    help: "Only these tracks, comma-separated, by id or name (t1,t3): a stem.",
    completion: ids("t"))
  var tracks: String?
  @Option(
    help: "Write one file per track into this folder (wav unless --format).", completion: .directory
  )
  var stems: String?
  @Flag(help: "Leave the master gain out of --tracks and --stems renders.")
  var noMasterGain = false
  @Flag(help: "With --stems: every track, also those muted (or silenced by a solo) in the mix.")
  var allTracks = false
  @Flag(
    help:
      "Render effects whose LV2 plugin is not installed as if bypassed (and say which), instead of refusing."
  )
  var bypassMissing = false
  @Option(help: "wav, flac, aiff, ogg, mp3 or opus (default: from the output's extension).")
  var format: String?
  @Option(
    parsing: .unconditional,
    help: "16, 24 or 32f (default 24; Ogg, MP3 and Opus are encoded from float).")
  var bits: String?
  @Option(help: "tpdf or none (default: tpdf for 16-bit output, none otherwise).")
  var dither: String?
  @Option(
    parsing: .unconditional,
    help: "Normalise the mix to this integrated loudness: -16LUFS (podcasts), -23LUFS (EBU R128)."
  )
  var loudness: String?
  @Option(
    name: .customLong("true-peak"), parsing: .unconditional,
    help: "The most the true peak may reach (default -1dBTP with --loudness); refused above it.")
  var truePeak: String?
  @Option(
    parsing: .unconditional,
    help: "kbit/s: MP3 at a constant rate (default 128), Opus at a variable one (default 96).")
  var bitrate: Int?
  @Option(
    parsing: .unconditional,
    help:
      "How long the effects ring out after the last clip (default: until quiet, at most 30 s; 0: none)."
  )
  var tail: String?
  @Option(
    parsing: .unconditional,
    help: "With --from: how long the effects warm up before it (default 2s, or from 0).")
  var preroll: String?
  @Option(help: "A title tag for the file.") var title: String?
  @Option(help: "An artist tag for the file.") var artist: String?
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
    if allTracks && stems == nil {
      throw ValidationError("--all-tracks is for --stems: give --stems FOLDER with it")
    }
    try RawArguments.requireUTF8Path(output ?? stems ?? "", output == nil ? "stems" : "output")
    if tail != nil && span.to != nil {
      throw ValidationError(
        "--to ends the render where asked, with no tail; drop --tail, or drop --to to let the effects ring out"
      )
    }
    if preroll != nil && span.from == nil {
      throw ValidationError(
        "--preroll warms the effects up before --from; give --from with it, or drop --preroll")
    }
    if let bitrate, bitrate <= 0 {
      throw ValidationError("--bitrate is in kbit/s and must be positive, such as --bitrate 128")
    }
  }

  /// How the render ends after its range: at --to exactly; else after --tail, or when the
  /// effects have rung out (a project without effects has no tail whatever the rule).
  func tailRule(for project: Project) throws -> RenderTail {
    if span.to != nil { return .none }
    guard let tail else { return .ringOut(sampleRate: project.sampleRate) }
    return .fixed(try parseTime(tail, project, option: "--tail").frames)
  }

  /// The frames the effects are fed before --from and dropped: --preroll, 2 s by default, never
  /// before the project's start.
  func prerollFrames(for project: Project, range: FrameRange) throws -> Int64 {
    let asked =
      try preroll.map { try parseTime($0, project, option: "--preroll").frames }
      ?? Int64(2 * project.sampleRate)
    return min(asked, range.start.frames)
  }

  /// The file this render writes (with --stems, the stem's).
  private var target: String { output ?? "" }

  func run() throws {
    var loudness: LoudnessNormalization?
    if self.loudness != nil || truePeak != nil {
      Termination.install(message: "render interrupted while measuring; nothing was written")
      try reportingErrors { loudness = try measureMix() }
    }
    if let stems {
      try renderStems(into: stems, loudness: loudness)
      return
    }
    var chosen: [Track.ID]?
    try reportingErrors {
      // Ids need no project; a track's name is looked up in the one rendered.
      chosen = try tracks.map { text in
        try parseTrackIDs(
          text,
          retryingReads {
            let store = try openStore(project.file, access: .read)
            guard let version = try span.version(in: store) else { return store.snapshot.project }
            return try store.project(at: version)
          })
      }
    }
    try render(stem: chosen.map { ($0, !noMasterGain) }, loudness: loudness)
  }

  /// The first pass (``AudioFiles/LoudnessTarget/normalise(_:range:preroll:tail:settings:mix:compile:progress:)``):
  /// renders the whole mix (not a stem: with --tracks or --stems the gain is the mix's)
  /// without writing, and works out the gain; refuses, before anything is written, a gain that
  /// would take the true peak over the ceiling or clip integer samples.
  private func measureMix() throws -> LoudnessNormalization {
    let target = try loudness.map { try Self.parseLevel($0, unit: "LUFS", option: "--loudness") }
    let ceiling =
      try truePeak.map { try Self.parseLevel($0, unit: "dBTP", option: "--true-peak") } ?? -1
    if let target, !(-70...0).contains(target) {
      throw UsageError(
        message:
          "--loudness \(loudness ?? "") is out of range; give -70LUFS to 0LUFS, such as -16LUFS")
    }
    guard (-60...6).contains(ceiling) else {
      throw UsageError(
        message:
          "--true-peak \(truePeak ?? "") is out of range; give -60dBTP to +6dBTP, such as -1dBTP")
    }
    try span.checkUnits(times)
    let cache = AudioCache(forProject: project.file)
    let (plan, audio, range, mixed) = try retryingReads {
      () throws -> (RenderPlan, ProjectAudio, FrameRange, Project) in
      let store = try openStore(self.project.file, access: .read)
      // A rack of its own: the writing pass starts the effects afresh, as this one does.
      let compiled = try span.compile(store, cache: cache, bypassMissing: bypassMissing)
      return (compiled.plan, compiled.audio, compiled.range, compiled.project)
    }
    // The settings the files will be written with (with --stems, those of each stem).
    var written = self
    if stems != nil { written.output = "stem.\((format ?? "wav").lowercased())" }
    let settings = try written.renderSettings(for: mixed)
    let tail = try tailRule(for: mixed)
    let preroll = try prerollFrames(for: mixed, range: range)
    var bar: (pass: LoudnessNormalization.Pass, bar: ProgressBar, done: Int64)?
    defer { bar?.bar.finish() }
    let verbs: [LoudnessNormalization.Pass: String] = [
      .measuring: "measuring", .checkingFix: "checking a fix", .encoding: "encoding",
    ]
    return try LoudnessTarget(loudness: target, ceiling: ceiling).normalise(
      mixed, range: range, preroll: preroll, tail: tail, settings: settings, mix: (plan, audio)
    ) { project in
      let (plan, audio, _) = try SpanOptions.offlinePlan(
        project, cache: cache, bypassMissing: bypassMissing, file: self.project.file)
      return (plan, audio)
    } progress: { pass, done in
      // A bar for each pass (a new one when the pass changes or starts again).
      if bar == nil || bar?.pass != pass || done < bar?.done ?? 0 {
        bar?.bar.finish()
        bar = (
          pass,
          ProgressBar(
            total: range.count.frames, sampleRate: mixed.sampleRate, verb: verbs[pass] ?? ""),
          0
        )
      }
      bar?.done = done
      bar?.bar.update(done)
    }
  }

  /// `-16`, `-16LUFS`, `-16 LUFS`, `-1dBTP`, `-1dB`: a level in `unit`.
  static func parseLevel(_ text: String, unit: String, option: String) throws -> Double {
    var number = text.trimmingCharacters(in: .whitespaces)
    // LKFS is LUFS by another name (ITU-R BS.1770 says LKFS, EBU R 128 LUFS).
    let units = [unit, "dB", "LU"] + (unit == "LUFS" ? ["LKFS"] : [])
    for suffix in units where number.lowercased().hasSuffix(suffix.lowercased()) {
      number = String(number.dropLast(suffix.count)).trimmingCharacters(in: .whitespaces)
      break
    }
    // Decimal only: Double("0x10") is 16.
    guard number.allSatisfy({ "0123456789.+-eE".contains($0) }), let value = Double(number),
      value.isFinite
    else {
      throw UsageError(message: "\(option) \(text) is not a level; write it as -16\(unit)")
    }
    return value
  }

  /// One file per track in `folder`, created if missing (its parent must exist).
  private func renderStems(into folder: String, loudness: LoudnessNormalization?) throws {
    var ids: [(Track.ID, String)] = []
    try reportingErrors {
      let file = self.project.file
      let store = try retryingReads { try openStore(file, access: .read) }
      let whole =
        if let version = try span.version(in: store) { try store.project(at: version) } else {
          store.snapshot.project
        }
      guard !whole.tracks.isEmpty else {
        throw DataError(
          message: "the project has no tracks, so no stems; add one with 'tape track add'")
      }
      var isFolder: ObjCBool = false
      var created = false
      if !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) {
        do {
          try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: false)
          created = true
        } catch {
          throw MissingInput(
            message:
              "cannot create the folder \(folder) for the stems (does \(RawPath(folder).folder) exist?)"
          )
        }
      } else if !isFolder.boolValue {
        throw UsageError(message: "--stems \(folder) is a file; give a folder for the stems")
      }
      let suffix = (format ?? "wav").lowercased()
      // As the mix does: a track it does not hear gets no stem, said in one note, unless
      // --all-tracks (then every track as if none were muted).
      let selection = whole.stemSelection(allTracks: allTracks)
      let silent = selection.unheard
      if !silent.isEmpty {
        let named = silent.map { track in
          "\(track.id) \(track.name) (\(track.isMuted ? "muted" : "not soloed"))"
        }.joined(separator: ", ")
        writeOut(
          ProjectWords.escaped(
            "note: no stem for \(named): the mix does not hear \(silent.count == 1 ? "it" : "them"); --all-tracks writes every track"
          ) + "\n")
      }
      guard !selection.stems.isEmpty else {
        throw DataError(
          message:
            "the mix hears no track (every one is muted), so no stems; unmute one, or give --all-tracks"
        )
      }
      ids = selection.stems.map {
        ($0.track, (folder as NSString).appendingPathComponent("\($0.fileName).\(suffix)"))
      }
      // Every stem's file is checked before the first is written: a refusal writes nothing
      // (and leaves no folder it made).
      do {
        let cache = AudioCache(forProject: file)
        try retryingReads {
          let store = try openStore(file, access: .read)
          for (_, path) in ids {
            try Self.refuseDestroying(
              OutputDestination.resolve(path), target: path, store: store, cache: cache,
              stems: folder)
          }
        }
      } catch {
        if created { rmdir(folder) }
        throw error
      }
    }
    for (id, path) in ids {
      var one = self
      one.output = path
      one.stems = nil
      try one.render(stem: ([id], !noMasterGain), loudness: loudness, stems: stems)
    }
  }

  /// Renders to ``target``; `stems` is the folder given with --stems when this is one of its
  /// files (refusals name it).
  private func render(
    stem: (tracks: [Track.ID], masterGain: Bool)?, loudness: LoudnessNormalization? = nil,
    stems: String? = nil
  ) throws {
    let output = target
    Termination.install(
      message: ProjectWords.escaped(
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
        try Self.refuseDestroying(
          destination, target: target, store: store, cache: cache, stems: stems)
        // Its own rack: the effects start fresh, as they did in a measuring pass.
        let compiled = try span.compile(
          store, cache: cache, stem: stem, bypassMissing: bypassMissing)
        var settings = try renderSettings(for: compiled.project)
        settings.gain = pow(10, (loudness?.gain ?? 0) / 20)
        return (
          settings, compiled.project, compiled.plan, compiled.audio, compiled.range, compiled.rack
        )
      }
      for (id, reason) in (rack?.skipped ?? [:]).sorted(by: { $0.key < $1.key }) {
        writeOut(ProjectWords.escaped("note: effect \(id) skipped: \(reason)") + "\n")
      }
      let preroll = try prerollFrames(for: project, range: range)
      var tail = try tailRule(for: project)
      if let loudness, stem == nil { tail = .fixed(loudness.tail) }
      if case .ringOut = tail, plan.view.graph != nil, destination.isStream,
        settings.format == .wav || settings.format == .aiff
      {
        // A WAV or AIFF stream says its length first: the tail is measured beforehand, by a
        // pass of its own (its own effects, started afresh).
        let (plan, audio) = try retryingReads {
          let store = try openStore(self.project.file, access: .read)
          let compiled = try span.compile(
            store, cache: cache, stem: stem, bypassMissing: bypassMissing)
          return (compiled.plan, compiled.audio)
        }
        let bar = ProgressBar(
          total: range.count.frames, sampleRate: project.sampleRate, verb: "ringing out")
        defer { bar.finish() }
        tail = .fixed(
          try OfflineRenderer.measure(
            plan, audio: audio, range: range, preroll: preroll, tail: tail, progress: bar.update
          ).tailFrames)
      }
      let bar = ProgressBar(total: range.count.frames, sampleRate: project.sampleRate)
      defer { bar.finish() }
      var summary = try OfflineRenderer.render(
        plan, audio: audio, range: range, to: destination, settings: settings, preroll: preroll,
        tail: tail, progress: bar.update)
      bar.finish()
      var delivered = loudness?.delivered
      if settings.format.isLossy, destination.kind == .file {
        // What was written, decoded: the numbers a listener's player meets.
        let clock = ContinuousClock.now
        delivered = try DeliveredAudio(measuring: destination.target)
        let (whole, fraction) = (ContinuousClock.now - clock).components
        summary.seconds += Double(whole) + Double(fraction) * 1e-18
      }
      if destination.kind != .standardOutput {
        StandardOutput.done = "\(output) was written all the same"
      }
      let text =
        json.json
        ? summaryJSON(
          summary, settings: settings, range: range, loudness: loudness, delivered: delivered
        ).line + "\n"
        : summaryText(
          summary, settings: settings, range: range, loudness: loudness, delivered: delivered)
      if let loudness, stem != nil, summary.truePeakDecibels > loudness.ceiling + 0.005 {
        // The ceiling was checked on the mix; a stem can peak higher than the mix it is part of.
        printWarning(
          "the stem \(output) peaks at \(LoudnessNormalization.levelText(summary.truePeakDecibels)) dBTP, over the \(LoudnessNormalization.levelText(loudness.ceiling)) dBTP ceiling (the mix does not)"
        )
      }
      // The audio itself is on standard output: the summary goes beside it, on stderr.
      if destination.kind == .standardOutput {
        writeOut(text)
      } else {
        print(text, terminator: "")
      }
    }
  }

  /// Refuses an output that would destroy a file of the project (``AudioFiles/ProtectedFiles``:
  /// the project file, its side files, a source of any version, the decoded-audio cache).
  ///
  /// `stems`: the folder of `--stems`, when `target` is one of its files, for the message.
  /// `refusal`: the error for an output that is `what` (`path`), when not a render's.
  static func refuseDestroying(
    _ destination: OutputDestination, target: String, store: TimelineStore, cache: AudioCache,
    stems: String? = nil, refusal: ((_ what: String, _ path: String) -> UsageError)? = nil
  ) throws {
    let protected = ProtectedFiles(project: store.path, cache: cache) {
      try store.sourcePathsInHistory()
    }
    guard let (what, path) = try protected.conflict(with: destination) else { return }
    if let refusal { throw refusal(what, path) }
    let named = path == target ? "" : " (\(path))"
    if let stems {
      throw UsageError(
        message:
          "--stems \(stems) would write the stem \(target), which is \(what)\(named); rendering there would destroy it, so give --stems another folder"
      )
    }
    let shown = target == "-" ? "standard output" : "-o \(target)"
    throw UsageError(
      message:
        "\(shown) is \(what)\(named); rendering there would destroy it, so choose another output name"
    )
  }

  /// The settings `project` (its rate and channels) renders with.
  private func renderSettings(for project: Project) throws -> RenderSettings {
    let output = target
    let extensionFormat = ExportFormat(pathExtension: (output as NSString).pathExtension)
    let chosenFormat: ExportFormat
    if let format {
      guard let parsed = ExportFormat(pathExtension: format) else {
        throw UsageError(
          message: "'\(format)' is not an output format; use wav, flac, aiff, ogg, mp3 or opus")
      }
      chosenFormat = parsed
    } else if let extensionFormat {
      chosenFormat = extensionFormat
    } else if output == "-" {
      throw UsageError(
        message:
          "standard output has no extension to tell the format; add --format wav (or flac, aiff, ogg, mp3, opus)"
      )
    } else {
      throw UsageError(
        message:
          "cannot tell the format of '\(output)' from its extension; name it .wav, .flac, .aiff, .ogg, .mp3 or .opus, or add --format wav"
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
      if chosenFormat.isLossy {
        throw UsageError(
          message:
            "\(chosenFormat) is lossy and encodes from float: it has no sample format to choose, so leave out --bits (or pick a lossless --format, such as flac or wav, for \(sampleFormat) samples)"
        )
      }
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
    if let bitrate {
      try checkBitrate(bitrate, format: chosenFormat, project: project)
    }
    let kbps =
      bitrate
      ?? chosenFormat.defaultBitrate(
        sampleRate: chosenFormat.fileSampleRate(for: project.sampleRate))
    if (title != nil || artist != nil) && output == "-"
      && (chosenFormat == .wav || chosenFormat == .aiff)
    {
      throw UsageError(
        message:
          "a \(chosenFormat) stream has no tags; drop --title/--artist, or write to a file or as --format flac"
      )
    }
    if chosenFormat == .mp3 && output == "-" {
      throw UsageError(
        message:
          "MP3 cannot be written to standard output (LAME writes its length header last, at the start); write to a file, or stream --format opus"
      )
    }
    return RenderSettings(
      format: chosenFormat, sampleFormat: sampleFormat, dither: shouldDither,
      encoding: EncoderSettings(bitrate: kbps, title: title, artist: artist))
  }

  /// Refuses a bit rate the format has no use for or its encoder cannot make.
  private func checkBitrate(_ kbps: Int, format: ExportFormat, project whole: Project) throws {
    guard format.takesBitrate else {
      throw UsageError(
        message:
          "--bitrate is for MP3 and Opus; \(format) \(format == .ogg ? "is encoded at a quality" : "is compressed without loss, at no bit rate one chooses"), so drop --bitrate"
      )
    }
    let rate = format.fileSampleRate(for: whole.sampleRate)
    if format == .mp3 {
      let allowed = ExportFormat.mp3Bitrates(sampleRate: rate)
      guard allowed.contains(kbps) else {
        throw UsageError(
          message:
            "MP3 at \(rate) Hz has no \(kbps) kbit/s; use one of \(allowed.map(String.init).joined(separator: ", "))"
        )
      }
    } else if let range = format.bitrates(sampleRate: rate, channels: whole.channels),
      !range.contains(kbps)
    {
      throw UsageError(
        message:
          "Opus \(whole.channels == 1 ? "mono" : "stereo") takes \(range.lowerBound) to \(range.upperBound) kbit/s; --bitrate \(kbps) is outside that"
      )
    }
  }

  private func summaryText(
    _ summary: RenderSummary, settings: RenderSettings, range: FrameRange,
    loudness: LoudnessNormalization?, delivered: DeliveredAudio?
  ) -> String {
    let duration = times.show(summary.frames, sampleRate: summary.sampleRate)
    let layout = summary.channels == 1 ? "mono" : "stereo"
    let kbps = settings.encoding.bitrate
    let format =
      settings.format.isLossy
      ? "\(settings.format)\(kbps.map { " \($0) kbit/s" } ?? "")"
      : "\(settings.format) \(settings.sampleFormat)\(settings.dither ? " (TPDF dither)" : "")"
    let rate =
      summary.fileSampleRate.map { "\($0) Hz (resampled from \(summary.sampleRate) Hz)" }
      ?? "\(summary.sampleRate) Hz"
    let normalised =
      loudness.map { mix in
        mix.target == nil
          ? " (under the \(LoudnessNormalization.levelText(mix.ceiling)) dBTP ceiling)"
          : " (the mix measured \(decibels(mix.measured)) LUFS: \(LoudnessNormalization.signedText(mix.gain)) dB applied)"
      } ?? ""
    let show = { (frames: Int64) in times.show(frames, sampleRate: summary.sampleRate) }
    var extra = ""
    if summary.prerollFrames > 0 {
      extra += "  preroll    \(show(summary.prerollFrames)) (the effects warmed up before it)\n"
    }
    if summary.tailFrames > 0 || (tail != nil && span.to == nil) {
      let why =
        summary.tailReachedLimit
        ? "the 30 s limit: the effects were still above -90 dBFS"
        : tail != nil ? "--tail" : "the effects rang out: under -90 dBFS for 1 s after it"
      extra += "  tail       \(show(summary.tailFrames)) after the last clip (\(why))\n"
    }
    // A lossy file's level is the decoded file's: the encoder moves it.
    var truePeakLine = "\(decibels(summary.truePeakDecibels)) dBTP"
    var loudnessLine = "\(decibels(summary.loudness)) LUFS"
    if let file = delivered {
      truePeakLine =
        "\(decibels(file.truePeakDecibels)) dBTP as delivered (\(decibels(summary.truePeakDecibels)) before encoding)"
      loudnessLine =
        "\(decibels(file.loudness)) LUFS as delivered (\(decibels(summary.loudness)) before encoding)"
    }
    let (peakNote, loudnessNote) = loudness?.target == nil ? (normalised, "") : ("", normalised)
    return """
      \(target): \(format), \(rate) \(layout), \(duration)
      \(extra)  peak       \(decibels(summary.peakDecibels)) dBFS
        true peak  \(truePeakLine)\(peakNote)
        loudness   \(loudnessLine)\(loudnessNote)
        range      \(String(format: "%.1f", summary.loudnessRange)) LU
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
    _ summary: RenderSummary, settings: RenderSettings, range: FrameRange,
    loudness: LoudnessNormalization?, delivered: DeliveredAudio?
  )
    -> JSON
  {
    let finite = { (value: Double) in value.isFinite ? JSON.number(value) : .null }
    let fields: [(String, JSON)] = [
      ("output", .string(target)),
      ("format", .string(settings.format.rawValue)),
      ("bits", .string(settings.sampleFormat.rawValue)),
      ("dither", .string(settings.dither ? "tpdf" : "none")),
      ("sampleRate", .integer(Int64(summary.sampleRate))),
      ("channels", .integer(Int64(summary.channels))),
      ("from", .integer(range.start.frames)),
      ("frames", .integer(summary.frames)),
      ("duration", .number(summary.durationSeconds)),
      ("peakDBFS", finite(rounded(summary.peakDecibels))),
      ("loudnessLUFS", finite(rounded(summary.loudness))),
      ("clippedSamples", .integer(Int64(summary.clippedSamples))),
      ("nonFiniteSamples", .integer(Int64(summary.nonFiniteSamples))),
      (
        "firstNonFiniteSeconds",
        summary.firstNonFiniteFrame.map {
          .number(Double($0) / Double(summary.sampleRate))
        } ?? .null
      ),
      ("wallSeconds", .number(rounded(summary.seconds, places: 4))),
      ("realtimeFactor", finite(rounded(summary.realtimeFactor, places: 1))),
    ]
    let seconds = { (frames: Int64) in
      JSON.number(rounded(Double(frames) / Double(summary.sampleRate), places: 6))
    }
    let spanFields: [(String, JSON)] = [
      ("prerollFrames", .integer(summary.prerollFrames)),
      ("prerollSeconds", seconds(summary.prerollFrames)),
      ("tailFrames", .integer(summary.tailFrames)),
      ("tailSeconds", seconds(summary.tailFrames)),
      ("tailReachedLimit", .bool(summary.tailReachedLimit)),
    ]
    let deliveredFields: [(String, JSON)] = [
      ("deliveredLoudnessLUFS", delivered.map { finite(rounded($0.loudness)) } ?? .null),
      ("deliveredTruePeakDBTP", delivered.map { finite(rounded($0.truePeakDecibels)) } ?? .null),
      ("deliveredPeakDBFS", delivered.map { finite(rounded($0.peakDecibels)) } ?? .null),
      ("deliveredPasses", loudness.map { .integer(Int64($0.passes)) } ?? .null),
    ]
    return .object(
      fields + loudnessJSON(summary, settings: settings, loudness: loudness) + spanFields
        + deliveredFields)
  }

  /// The fields the loudness and encoder options added to the summary.
  private func loudnessJSON(
    _ summary: RenderSummary, settings: RenderSettings, loudness: LoudnessNormalization?
  ) -> [(String, JSON)] {
    let finite = { (value: Double) in value.isFinite ? JSON.number(value) : .null }
    let kbps = settings.encoding.bitrate
    return [
      ("truePeakDBTP", finite(rounded(summary.truePeakDecibels))),
      ("loudnessRangeLU", .number(rounded(summary.loudnessRange))),
      ("loudnessTargetLUFS", loudness?.target.map { .number($0) } ?? .null),
      ("measuredLoudnessLUFS", loudness.map { finite(rounded($0.measured)) } ?? .null),
      ("gainDB", .number(rounded(loudness?.gain ?? 0, places: 4))),
      ("truePeakCeilingDBTP", loudness.map { .number($0.ceiling) } ?? .null),
      ("fileSampleRate", .integer(Int64(summary.fileSampleRate ?? summary.sampleRate))),
      ("bitrateKbps", kbps.map { .integer(Int64($0)) } ?? .null),
      ("title", settings.encoding.title.map { .string($0) } ?? .null),
      ("artist", settings.encoding.artist.map { .string($0) } ?? .null),
    ]
  }
}

/// Writes `warning: message` as one line on stderr.
private func printWarning(_ message: String) {
  _ = writeOut(ProjectWords.escaped("warning: \(message)") + "\n")
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
