import ArgumentParser
import AudioFiles
import Effects
import Foundation
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
    var loudness: Normalization?
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

  /// What the measuring pass found and the gain it chose.
  struct Normalization {
    /// The target asked for with --loudness; nil with --true-peak alone.
    var target: Double?
    /// The ceiling in dBTP.
    var ceiling: Double
    /// The mix's integrated loudness before the gain, in LUFS.
    var measured: Double
    /// The gain applied, in dB (0 with --true-peak alone).
    var gain: Double
    /// The mix's tail as the measuring pass found it: the writing pass renders the same.
    var tail: Int64 = 0
    /// The delivered file as measured when a lossy encoder's output was checked (see
    /// ``AudioFiles/LoudnessTarget``), and how many files that took.
    var delivered: DeliveredAudio?
    var passes = 0
  }

  /// The first pass: renders the whole mix (not a stem: with --tracks or --stems the gain is
  /// the mix's) without writing, and works out the gain; refuses, before anything is written,
  /// a gain that would take the true peak over the ceiling or clip integer samples.
  private func measureMix() throws -> Normalization {
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
    let sampleRate = mixed.sampleRate
    // The settings the files will be written with (with --stems, those of each stem).
    var written = self
    if stems != nil { written.output = "stem.\((format ?? "wav").lowercased())" }
    let settings = try written.renderSettings(for: mixed)
    let bar = ProgressBar(total: range.count.frames, sampleRate: sampleRate, verb: "measuring")
    defer { bar.finish() }
    let tailRule = try tailRule(for: mixed)
    let prerollFrames = try prerollFrames(for: mixed, range: range)
    let mix = try OfflineRenderer.measure(
      plan, audio: audio, range: range, preroll: prerollFrames, tail: tailRule,
      progress: bar.update)
    bar.finish()
    var gain = 0.0
    if let target {
      guard mix.loudness.isFinite else {
        throw DataError(
          message:
            "the mix is silent (below the -70 LUFS gate of BS.1770), so it has no loudness to bring to \(Self.format(target)) LUFS; drop --loudness"
        )
      }
      gain = target - mix.loudness
    }
    let shown = { (value: Double) in Self.format(value) }
    let truePeak = mix.truePeakDecibels + gain
    let lossy = settings.format.isLossy
    // Measures the mix of `project` (a fix tried on it) as a first pass does.
    let measureProject = { (project: Project) throws -> RenderSummary in
      let (plan, audio, _) = try SpanOptions.offlinePlan(
        project, cache: cache, bypassMissing: bypassMissing, file: self.project.file)
      let bar = ProgressBar(
        total: range.count.frames, sampleRate: sampleRate, verb: "checking a fix")
      defer { bar.finish() }
      return try OfflineRenderer.measure(
        plan, audio: audio, range: range, preroll: prerollFrames, tail: tailRule,
        progress: bar.update)
    }
    // Encodes `project` at `gain` (dB) as the file would be, to a private temporary file, and
    // measures what it decodes to.
    let encode = { (project: Project, gain: Double, tail: Int64) throws -> DeliveredAudio in
      let (plan, audio, _) = try SpanOptions.offlinePlan(
        project, cache: cache, bypassMissing: bypassMissing, file: self.project.file)
      let folder = try PrivateFolder(beside: NSTemporaryDirectory() + "/tape-render")
      defer { folder.remove() }
      let path = folder.file("trial.\(settings.format.rawValue)")
      var trial = settings
      trial.gain = pow(10, gain / 20)
      let bar = ProgressBar(total: range.count.frames, sampleRate: sampleRate, verb: "encoding")
      defer { bar.finish() }
      _ = try OfflineRenderer.render(
        plan, audio: audio, range: range, to: try OutputDestination.resolve(path),
        settings: trial, preroll: prerollFrames, tail: .fixed(tail), progress: bar.update)
      bar.finish()
      return try DeliveredAudio(measuring: path)
    }
    let goal = LoudnessTarget(loudness: target, ceiling: ceiling)
    // The delivered file's true peak over the ceiling once `project` is brought to the target
    // (nil: the target is not met, or the project does not render).
    let deliveredExcess = { (project: Project) -> Double? in
      guard let mix = try? measureProject(project) else { return nil }
      let gain = target.map { $0 - mix.loudness } ?? 0
      guard gain.isFinite,
        let found = try? goal.search(
          from: gain, trial: { try encode(project, $0, mix.tailFrames) }),
        found.meetsLoudness
      else { return nil }
      // Passing exactly when a render would pass it (under the ceiling by the meter's margin).
      let over = found.delivered.truePeakDecibels - ceiling + LoudnessTarget.truePeakMargin
      return found.meetsCeiling ? min(0, over) : max(0.01, over)
    }
    if !lossy && truePeak > ceiling + 0.005 {
      let reach =
        target.map {
          "at \(shown($0)) LUFS (a gain of \(Self.signed(gain)) dB) the true peak would be \(shown(truePeak)) dBTP"
        } ?? "the true peak is \(shown(truePeak)) dBTP"
      let (reachable, fixes) = remedies(
        for: mixed, truePeak: truePeak, target: target, gain: gain, ceiling: ceiling,
        integerBits: settings.sampleFormat.integerBits, overshoot: 0
      ) { project in
        guard let mix = try? measureProject(project) else { return nil }
        let gain = target.map { $0 - mix.loudness } ?? 0
        guard gain.isFinite else { return nil }
        if let bits = settings.sampleFormat.integerBits, bits > 0,
          mix.peak * pow(10, gain / 20) >= 1
        {
          return nil
        }
        return mix.truePeakDecibels + gain - ceiling
      }
      throw DataError(
        message:
          "\(reach), over the \(shown(ceiling)) dBTP ceiling\(reachable); \(fixes.joined(separator: "; or "))"
      )
    }
    let samplePeak = mix.peak * pow(10, gain / 20)
    if let bits = settings.sampleFormat.integerBits, samplePeak >= 1 {
      throw DataError(
        message:
          "with a gain of \(Self.signed(gain)) dB the mix peaks at \(shown(20 * log10(samplePeak))) dBFS, which \(bits)-bit samples cannot hold; lower --true-peak to 0dBTP or less, or render --bits 32f"
      )
    }
    var result = Normalization(
      target: target, ceiling: ceiling, measured: mix.loudness, gain: gain, tail: mix.tailFrames)
    guard lossy else { return result }
    // A lossy file is measured as delivered: encoded, decoded, and the gain corrected by what
    // the encoder moved (one pass, as ffmpeg's two-pass loudnorm; see LoudnessTarget).
    let found = try goal.search(from: gain) { try encode(mixed, $0, mix.tailFrames) }
    if !found.meetsTarget {
      let delivered = found.delivered
      let codec =
        "\(settings.format)\(settings.encoding.bitrate.map { " at \($0) kbit/s" } ?? "")"
      guard found.meetsLoudness else {
        throw DataError(
          message:
            "the \(codec) came out at \(shown(delivered.loudness)) LUFS after \(found.passes) encodes, not within 0.1 LU of \(shown(target ?? 0)) LUFS; raise --bitrate, or render a lossless format"
        )
      }
      let over = delivered.truePeakDecibels - ceiling + LoudnessTarget.truePeakMargin
      // What the encoder adds to the true peak of what it is given.
      let overshoot = delivered.truePeakDecibels - (mix.truePeakDecibels + found.gain)
      let reach =
        target.map {
          "at \(shown($0)) LUFS the \(codec) as delivered (decoded) peaks at \(shown(delivered.truePeakDecibels)) dBTP"
        }
        ?? "the \(codec) as delivered (decoded) peaks at \(shown(delivered.truePeakDecibels)) dBTP"
      var (reachable, fixes) = remedies(
        for: mixed, truePeak: delivered.truePeakDecibels, target: target, gain: found.gain,
        ceiling: ceiling, integerBits: nil, overshoot: max(0, overshoot), lossy: true,
        excess: deliveredExcess)
      if let target {
        // The loudness gain moves the delivered true peak almost exactly: checked by encoding.
        fixes.removeAll { $0.hasPrefix("aim lower") }
        var aim = ((target - over) * 10).rounded(.down) / 10
        for _ in 0..<3 {
          var aimed = goal
          aimed.loudness = aim
          guard
            let again = try? aimed.search(
              from: aim - mix.loudness, trial: { try encode(mixed, $0, mix.tailFrames) })
          else { break }
          if again.meetsTarget {
            fixes.append("aim lower, at --loudness \(shown(aim))LUFS")
            break
          }
          let still = again.delivered.truePeakDecibels - ceiling + LoudnessTarget.truePeakMargin
          aim = ((aim - max(0.1, still)) * 10).rounded(.down) / 10
        }
      }
      if fixes.isEmpty {
        fixes.append("raise --bitrate, or render a lossless format")
      }
      throw DataError(
        message:
          "\(reach), over the \(shown(ceiling)) dBTP ceiling (the mix before encoding: \(shown(mix.truePeakDecibels + found.gain)) dBTP)\(reachable); \(fixes.joined(separator: "; or "))"
      )
    }
    result.gain = found.gain
    result.delivered = found.delivered
    result.passes = found.passes
    return result
  }

  /// The look-ahead limiter a refused ceiling suggests (x42's dpl), and its ports' ranges
  /// where the plugin is not installed to say them.
  static let limiterRanges = ["threshold": -10.0...0.0, "gain": -10.0...30.0]

  /// What brings a mix whose true peak would pass `ceiling` (at the loudness `gain` when there
  /// is a `target`) under it, each as a command that is accepted as it is written and that,
  /// run, makes the same render pass: the project is measured again with it (`excess`: how far
  /// over the ceiling it renders, nil when it does not), except a change of gain that moves
  /// the true peak exactly (the loudness gain, and, for a lossless file, the master gain with no
  /// active master effect after it). A limiter keeps its threshold in the plugin's range (under
  /// the ceiling by what an encoder adds, `overshoot`, for a lossy file), and is the master's
  /// own when its chain ends with one, turned on if bypassed; a ceiling out of its reach is said
  /// so (`note`, to follow the ceiling), and where the master's effects undo every master gain
  /// tried, what to turn down instead.
  private func remedies(
    for mixed: Project, truePeak: Double, target: Double?, gain: Double, ceiling: Double,
    integerBits: Int?, overshoot: Double, lossy: Bool = false, excess: (Project) -> Double?
  ) -> (note: String, fixes: [String]) {
    let shown = { (value: Double) in Self.format(value) }
    let file = project.file
    let exact = !lossy
    var fixes: [String] = []
    let active = mixed.masterEffects.filter { !$0.isBypassed }
    let catalog = PluginCatalog.load()
    // The master's limiter: the last known limiter of its chain with nothing active after it.
    let existing = LimiterModel.masterLimiter(of: mixed)
    let uri = existing?.plugin ?? LimiterModel.suggested(channels: mixed.channels)
    let model = LimiterModel.model(of: uri) ?? LimiterModel.known[0]
    let plugin = catalog.plugin(uri)
    // A port's range in dB (a linear port's converted).
    let range = { (port: LimiterModel.Port) -> ClosedRange<Double> in
      if let control = plugin?.controls.first(where: { $0.symbol == port.symbol }) {
        let low = model.decibels(Double(control.minimum), of: port)
        let high = model.decibels(Double(control.maximum), of: port)
        return max(low, -200)...high
      }
      return Self.limiterRanges[port.symbol] ?? 0...0
    }
    let thresholds = range(model.threshold)
    let limiterName = existing.map { "the master's limiter \($0.id)" } ?? "a limiter"
    var note = ""
    // Under the ceiling by what the encoder adds; a ceiling above the limiter's top is met at
    // its top.
    let wanted = overshoot > 0 ? ((ceiling - overshoot) * 10).rounded(.down) / 10 : ceiling
    if wanted >= thresholds.lowerBound {
      var limiter =
        existing
        ?? Effect(
          id: Effect.ID((mixed.allEffects.map(\.effect.id.rawValue).max() ?? 0) + 1),
          plugin: uri,
          parameters: Dictionary(
            uniqueKeysWithValues: (plugin?.controls ?? []).map {
              ($0.symbol, Double($0.defaultValue))
            }))
      let wasBypassed = limiter.isBypassed
      limiter.isBypassed = false
      // At the ceiling, in its true-peak mode. With --loudness the gain comes after the master:
      // the limiter is driven by about as much (its input gain), so that what it holds is then
      // turned down to the target, not up; driven harder while the loudness gain still lifts
      // it over. Without, its threshold is lowered by what is still over (with a lossy file,
      // both: the encoder's overshoot is not the limiter's to hold).
      let gains = range(model.gain)
      var drive =
        limiter.parameters[model.gain.symbol].map { model.decibels($0, of: model.gain) } ?? 0
      if !drive.isFinite { drive = 0 }
      if gain > 0 { drive += gain.rounded(.up) + 1 }
      var threshold = min(wanted, thresholds.upperBound)
      for _ in 0..<(lossy ? 4 : 3) {
        guard gains.contains(drive), thresholds.contains(threshold) else { break }
        let settings =
          (target != nil ? [(model.gain, drive)] : []) + [(model.threshold, threshold)]
        for (port, value) in settings {
          limiter.parameters[port.symbol] = model.value(decibels: value, of: port)
        }
        for (symbol, fixed) in model.fixed { limiter.parameters[symbol] = fixed.value }
        var trial = mixed
        if let index = trial.masterEffects.firstIndex(where: { $0.id == limiter.id }) {
          trial.masterEffects[index] = limiter
        } else {
          trial.masterEffects.append(limiter)
        }
        guard let over = excess(trial) else { break }
        if over <= 0.005 {
          let command =
            (settings.map { port, value in
              port.isLinear
                ? "--set \(port.symbol)=\(String(format: "%.4f", model.value(decibels: value, of: port)))"
                : "--set \(port.symbol)=\(shown(value))"
            } + model.fixed.sorted { $0.key < $1.key }.map { "--set \($0.key)=\($0.value.text)" })
            .joined(separator: " ")
          fixes.append(
            existing.map {
              wasBypassed
                ? "turn \(limiterName) on and set it (tape fx bypass \(file) \($0.id) --on; tape fx set \(file) \($0.id) \(command))"
                : "set \(limiterName) to it (tape fx set \(file) \($0.id) \(command))"
            }
              ?? "put a limiter on the master (tape fx add \(file) master \(uri) \(command))"
          )
          break
        }
        if target != nil {
          drive += over.rounded(.up) + 1
        }
        // A limiter that holds sample peaks (not dpl in its true-peak mode) lets the true peak
        // over its threshold: lowered too.
        if target == nil || lossy || model.fixed["truepeak"] == nil {
          threshold = ((threshold - max(over, 0.1)) * 10).rounded(.down) / 10
        }
      }
    } else {
      note =
        ", out of the reach of \(limiterName) (its threshold goes down to \(shown(thresholds.lowerBound)) dB)"
    }
    if let target {
      // The loudness gain comes after everything: the true peak moves with it exactly.
      fixes.append(
        "aim lower, at --loudness \(shown(((target - (truePeak - ceiling)) * 10).rounded(.down) / 10))LUFS"
      )
      return (note, fixes)
    }
    // The master gain: exact with no active effect after it (and a lossless file). Otherwise
    // measured: lowered by what is still over where the true peak follows the gain, twice as
    // far again where it does not (a limiter holds its output until its input falls under its
    // threshold); once under, raised back by as much as it went under, if that passes too.
    let measured = !active.isEmpty || !exact
    let tenths = { (value: Double) in (value * 10).rounded(.down) / 10 }
    var (tried, peak) = (mixed.masterGain.decibels, truePeak)
    var next = tenths(tried - (truePeak - ceiling))
    var found: Double?
    for _ in 0..<(measured ? 6 : 1) {
      guard next >= Gain.minimumDecibels, next < tried else { break }
      var trial = mixed
      trial.masterGain = Gain(decibels: next)
      guard let over = measured ? excess(trial) : 0 else { break }
      let lowered = tried - next
      let followed = peak - (over + ceiling) >= 0.9 * lowered
      (tried, peak) = (next, over + ceiling)
      if over <= 0.005 {
        found = next
        if over < -0.5 {
          var closer = mixed
          closer.masterGain = Gain(decibels: tenths(next - over))
          if let again = excess(closer), again <= 0.005 { found = closer.masterGain.decibels }
        }
        break
      }
      next = tenths(next - (followed ? over : max(over, 2 * lowered)))
    }
    if let found {
      fixes.append("turn the mix down (tape master \(file) --gain \(shown(found))dB)")
    }
    if fixes.isEmpty {
      fixes.append(
        "turn down the master's effects (tape fx ls \(file) lists them): the master gain comes before them, and they bring the level back up"
      )
    }
    return (note, fixes)
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

  /// A level with at most two decimals and no trailing zeros: -1, -0.99, -16.5.
  static func format(_ value: Double) -> String {
    var text = String(format: "%.2f", value)
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
    return text == "-0" ? "0" : text
  }
  static func signed(_ value: Double) -> String { String(format: "%+.2f", value) }

  /// One file per track in `folder`, created if missing (its parent must exist).
  private func renderStems(into folder: String, loudness: Normalization?) throws {
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
      let heard = Set(whole.audibleTracks.map(\.id))
      let silent = allTracks ? [] : whole.tracks.filter { !heard.contains($0.id) }
      if !silent.isEmpty {
        let named = silent.map { track in
          "\(track.id) \(track.name) (\(track.isMuted ? "muted" : "not soloed"))"
        }.joined(separator: ", ")
        writeOut(
          escaped(
            "note: no stem for \(named): the mix does not hear \(silent.count == 1 ? "it" : "them"); --all-tracks writes every track"
          ) + "\n")
      }
      guard silent.count < whole.tracks.count else {
        throw DataError(
          message:
            "the mix hears no track (every one is muted), so no stems; unmute one, or give --all-tracks"
        )
      }
      let skipped = Set(silent.map(\.id))
      ids = whole.tracks.filter { !skipped.contains($0.id) }.map { track in
        let name = String(
          track.name.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" })
        return (
          track.id, (folder as NSString).appendingPathComponent("\(track.id)-\(name).\(suffix)")
        )
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
    stem: (tracks: [Track.ID], masterGain: Bool)?, loudness: Normalization? = nil,
    stems: String? = nil
  ) throws {
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
        writeOut(escaped("note: effect \(id) skipped: \(reason)") + "\n")
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
        ).rendered + "\n"
        : summaryText(
          summary, settings: settings, range: range, loudness: loudness, delivered: delivered)
      if let loudness, stem != nil, summary.truePeakDecibels > loudness.ceiling + 0.005 {
        // The ceiling was checked on the mix; a stem can peak higher than the mix it is part of.
        printWarning(
          "the stem \(output) peaks at \(Self.format(summary.truePeakDecibels)) dBTP, over the \(Self.format(loudness.ceiling)) dBTP ceiling (the mix does not)"
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

  /// Refuses an output that is (the same file as, by device and inode, whatever its name) a
  /// source any version of the project uses, the project file, or a decoded-audio cache file;
  /// or that is named as the project's `-wal`, `-shm` or `-journal`, or lies in its cache
  /// folder, whether or not that file exists yet (SQLite may create it any moment). Standard
  /// output is checked too when it is a file (`1<> song.tape` does not truncate it).
  ///
  /// `stems`: the folder of `--stems`, when `target` is one of its files, for the message.
  /// `refusal`: the error for an output that is `what` (`path`), when not a render's.
  static func refuseDestroying(
    _ destination: OutputDestination, target: String, store: TimelineStore, cache: AudioCache,
    stems: String? = nil, refusal: ((_ what: String, _ path: String) -> UsageError)? = nil
  ) throws {
    let file = store.path
    func refuse(_ what: String, _ path: String) -> UsageError {
      if let refusal { return refusal(what, path) }
      let named = path == target ? "" : " (\(path))"
      if let stems {
        return UsageError(
          message:
            "--stems \(stems) would write the stem \(target), which is \(what)\(named); rendering there would destroy it, so give --stems another folder"
        )
      }
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
    let folder = RawPath(path).folder.description
    let name = (path as NSString).lastPathComponent
    guard let real = realpath(folder.isEmpty ? "." : folder, nil) else { return path }
    defer { free(real) }
    return String(cString: real) + "/" + name
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
    loudness: Normalization?, delivered: DeliveredAudio?
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
          ? " (under the \(Self.format(mix.ceiling)) dBTP ceiling)"
          : " (the mix measured \(decibels(mix.measured)) LUFS: \(Self.signed(mix.gain)) dB applied)"
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
    loudness: Normalization?, delivered: DeliveredAudio?
  )
    -> JSONValue
  {
    let finite = { (value: Double) in value.isFinite ? JSONValue.double(value) : .null }
    let fields: [(String, JSONValue)] = [
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
    ]
    let seconds = { (frames: Int64) in
      JSONValue.double(rounded(Double(frames) / Double(summary.sampleRate), places: 6))
    }
    let spanFields: [(String, JSONValue)] = [
      ("prerollFrames", .int(summary.prerollFrames)),
      ("prerollSeconds", seconds(summary.prerollFrames)),
      ("tailFrames", .int(summary.tailFrames)),
      ("tailSeconds", seconds(summary.tailFrames)),
      ("tailReachedLimit", .bool(summary.tailReachedLimit)),
    ]
    let deliveredFields: [(String, JSONValue)] = [
      ("deliveredLoudnessLUFS", delivered.map { finite(rounded($0.loudness)) } ?? .null),
      ("deliveredTruePeakDBTP", delivered.map { finite(rounded($0.truePeakDecibels)) } ?? .null),
      ("deliveredPeakDBFS", delivered.map { finite(rounded($0.peakDecibels)) } ?? .null),
      ("deliveredPasses", loudness.map { .int(Int64($0.passes)) } ?? .null),
    ]
    return .object(
      fields + loudnessJSON(summary, settings: settings, loudness: loudness) + spanFields
        + deliveredFields)
  }

  /// The fields the loudness and encoder options added to the summary.
  private func loudnessJSON(
    _ summary: RenderSummary, settings: RenderSettings, loudness: Normalization?
  ) -> [(String, JSONValue)] {
    let finite = { (value: Double) in value.isFinite ? JSONValue.double(value) : .null }
    let kbps = settings.encoding.bitrate
    return [
      ("truePeakDBTP", finite(rounded(summary.truePeakDecibels))),
      ("loudnessRangeLU", .double(rounded(summary.loudnessRange))),
      ("loudnessTargetLUFS", loudness?.target.map { .double($0) } ?? .null),
      ("measuredLoudnessLUFS", loudness.map { finite(rounded($0.measured)) } ?? .null),
      ("gainDB", .double(rounded(loudness?.gain ?? 0, places: 4))),
      ("truePeakCeilingDBTP", loudness.map { .double($0.ceiling) } ?? .null),
      ("fileSampleRate", .int(Int64(summary.fileSampleRate ?? summary.sampleRate))),
      ("bitrateKbps", kbps.map { .int(Int64($0)) } ?? .null),
      ("title", settings.encoding.title.map { .string($0) } ?? .null),
      ("artist", settings.encoding.artist.map { .string($0) } ?? .null),
    ]
  }
}

/// Writes `warning: message` as one line on stderr.
private func printWarning(_ message: String) {
  _ = writeOut(escaped("warning: \(message)") + "\n")
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
