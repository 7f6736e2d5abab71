import Effects
import Foundation
public import Mixing
import SafeFiles
public import Timeline

/// What a loudness-normalised render's measuring pass found, and the gain it chose: the first
/// pass of `tape render --loudness` and `--true-peak`.
///
/// Rule: the whole mix is measured first (ITU-R BS.1770-4 gating, as EBU R128) and written
/// with the one gain that reaches the target; the true peak (4× oversampled) must then stay at
/// or under the ceiling, and integer samples must not clip, or nothing is written and the
/// refusal names the fixes (a limiter on the master, the master gain, or the loudest target
/// that fits), each checked by measuring the project with it. A lossy file is measured as
/// delivered: encoded, decoded, and the gain corrected (``LoudnessTarget/search(from:trial:)``).
///
/// Why: a loudness target that clips, or a file over its platform's ceiling, is a file that
/// must be made again; refusing before a byte is written, with a fix that is known to pass,
/// saves the second render and the guess.
///
/// What if the mix is silent (under the -70 LUFS gate): it has no loudness to bring anywhere,
/// and a target is refused (``AudioFileError/loudnessRefused(_:)``); a ceiling alone is checked.
///
/// ```swift
/// let found = try LoudnessTarget(loudness: -16, ceiling: -1).normalise(
///   project, range: FrameRange(start: .zero, end: project.timelineEnd), tail: .none,
///   settings: RenderSettings(format: .wav, sampleFormat: .float32, dither: false)
/// ) { project in
///   let audio = try cache.sources(for: project)
///   return (try RenderPlan(project: project, audio: audio.audio), audio)
/// }
/// var settings = RenderSettings(format: .wav, sampleFormat: .float32, dither: false)
/// settings.gain = pow(10, found.gain / 20)  // then render with it: -16 LUFS
/// ```
public struct LoudnessNormalization: Sendable, Equatable {
  /// The target asked for, in LUFS; nil with a ceiling alone.
  public var target: Double?
  /// The ceiling in dBTP.
  public var ceiling: Double
  /// The mix's integrated loudness before the gain, in LUFS.
  public var measured: Double
  /// The gain to apply, in dB (0 with a ceiling alone).
  public var gain: Double
  /// The mix's tail as the measuring pass found it: the writing pass renders the same.
  public var tail: Int64 = 0
  /// The delivered file as measured when a lossy encoder's output was checked, and how many
  /// files that took.
  public var delivered: DeliveredAudio?
  public var passes = 0

  /// Which pass a progress report is about.
  public enum Pass: Sendable, Hashable {
    /// The mix, measured.
    case measuring
    /// A fix tried on the project, measured.
    case checkingFix
    /// A lossy file encoded (to a private temporary file) to be measured as delivered.
    case encoding
  }

  /// The look-ahead limiter a refused ceiling suggests (x42's dpl), and its ports' ranges
  /// where the plugin is not installed to say them.
  public static let limiterRanges = ["threshold": -10.0...0.0, "gain": -10.0...30.0]

  /// A level with at most two decimals and no trailing zeros: -1, -0.99, -16.5.
  public static func levelText(_ value: Double) -> String {
    var text = String(format: "%.2f", value)
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
    return text == "-0" ? "0" : text
  }

  /// A gain in dB with its sign and two decimals: +3.25, -0.50.
  public static func signedText(_ value: Double) -> String { String(format: "%+.2f", value) }
}

extension LoudnessTarget {
  /// Measures `project`'s mix over `range` (after `preroll` frames of warm-up, with `tail`)
  /// and works out the gain that brings it to ``loudness`` with its true peak under
  /// ``ceiling``, for a file written with `settings` (its format and bits); refuses, before
  /// anything is written, a gain that would take the true peak over the ceiling or clip
  /// integer samples, naming the fixes (``AudioFileError/loudnessRefused(_:)``; commands name
  /// the project `FILE`).
  ///
  /// `compile` makes a version's render plan as the caller renders it (its effects, its
  /// missing plugins refused or bypassed): it is called for the fixes tried, and for the mix
  /// unless `mix` gives it already compiled. `progress` hears each pass and its frames done.
  public func normalise(
    _ project: Project, range: FrameRange, preroll: Int64 = 0, tail: RenderTail,
    settings: RenderSettings, mix compiled: (plan: RenderPlan, audio: ProjectAudio)? = nil,
    compile: (Project) throws -> (plan: RenderPlan, audio: ProjectAudio),
    progress: (LoudnessNormalization.Pass, Int64) -> Void = { _, _ in }
  ) throws -> LoudnessNormalization {
    let (target, ceiling, mixed) = (loudness, self.ceiling, project)
    let (plan, audio) = try compiled ?? compile(project)
    let mix = try OfflineRenderer.measure(
      plan, audio: audio, range: range, preroll: preroll, tail: tail,
      progress: { progress(.measuring, $0) })
    var gain = 0.0
    if let target {
      guard mix.loudness.isFinite else {
        throw AudioFileError.loudnessRefused(
          "the mix is silent (below the -70 LUFS gate of BS.1770), so it has no loudness to bring to \(LoudnessNormalization.levelText(target)) LUFS; drop --loudness"
        )
      }
      gain = target - mix.loudness
    }
    let shown = { (value: Double) in LoudnessNormalization.levelText(value) }
    let signed = { (value: Double) in LoudnessNormalization.signedText(value) }
    let truePeak = mix.truePeakDecibels + gain
    let lossy = settings.format.isLossy
    // Measures the mix of `project` (a fix tried on it) as a first pass does.
    func measureProject(_ project: Project) throws -> RenderSummary {
      let (plan, audio) = try compile(project)
      return try OfflineRenderer.measure(
        plan, audio: audio, range: range, preroll: preroll, tail: tail,
        progress: { progress(.checkingFix, $0) })
    }
    // Encodes `project` at `gain` (dB) as the file would be, to a private temporary file, and
    // measures what it decodes to.
    func encode(_ project: Project, _ gain: Double, _ tail: Int64) throws -> DeliveredAudio {
      let (plan, audio) = try compile(project)
      let folder = try PrivateFolder(beside: NSTemporaryDirectory() + "/tape-render")
      defer { folder.remove() }
      let path = folder.file("trial.\(settings.format.rawValue)")
      var trial = settings
      trial.gain = pow(10, gain / 20)
      _ = try OfflineRenderer.render(
        plan, audio: audio, range: range, to: try OutputDestination.resolve(path),
        settings: trial, preroll: preroll, tail: .fixed(tail),
        progress: { progress(.encoding, $0) })
      return try DeliveredAudio(measuring: path)
    }
    let goal = self
    // The delivered file's true peak over the ceiling once `project` is brought to the target
    // (nil: the target is not met, or the project does not render).
    func deliveredExcess(_ project: Project) -> Double? {
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
          "at \(shown($0)) LUFS (a gain of \(signed(gain)) dB) the true peak would be \(shown(truePeak)) dBTP"
        } ?? "the true peak is \(shown(truePeak)) dBTP"
      let (reachable, fixes) = Self.remedies(
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
      throw AudioFileError.loudnessRefused(
        "\(reach), over the \(shown(ceiling)) dBTP ceiling\(reachable); \(fixes.joined(separator: "; or "))"
      )
    }
    let samplePeak = mix.peak * pow(10, gain / 20)
    if let bits = settings.sampleFormat.integerBits, samplePeak >= 1 {
      throw AudioFileError.loudnessRefused(
        "with a gain of \(signed(gain)) dB the mix peaks at \(shown(20 * log10(samplePeak))) dBFS, which \(bits)-bit samples cannot hold; lower --true-peak to 0dBTP or less, or render --bits 32f"
      )
    }
    var result = LoudnessNormalization(
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
        throw AudioFileError.loudnessRefused(
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
      var (reachable, fixes) = Self.remedies(
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
      throw AudioFileError.loudnessRefused(
        "\(reach), over the \(shown(ceiling)) dBTP ceiling (the mix before encoding: \(shown(mix.truePeakDecibels + found.gain)) dBTP)\(reachable); \(fixes.joined(separator: "; or "))"
      )
    }
    result.gain = found.gain
    result.delivered = found.delivered
    result.passes = found.passes
    return result
  }

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
  static func remedies(
    for mixed: Project, truePeak: Double, target: Double?, gain: Double, ceiling: Double,
    integerBits: Int?, overshoot: Double, lossy: Bool = false, excess: (Project) -> Double?
  ) -> (note: String, fixes: [String]) {
    let shown = { (value: Double) in LoudnessNormalization.levelText(value) }
    // The project, as the fixes name it: the command line puts its own file in.
    let file = "FILE"
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
      return LoudnessNormalization.limiterRanges[port.symbol] ?? 0...0
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
}
