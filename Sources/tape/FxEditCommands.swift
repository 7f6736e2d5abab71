import ArgumentParser
import AudioFiles
import Effects
import Foundation
import Interchange
import Mixing
import SafeFiles
import Timeline
import TimelineStore

// The effect chain commands that change a project: add, set, bypass, move, rm; and `fx ls`.
// Values are checked against the plugin's own ports where it is installed (its ranges, its
// scale points' labels); a project whose plugin is missing still opens and edits, and its
// effects can be bypassed, moved and removed.

/// `--set symbol=value` pairs as typed.
struct ParameterSettings: ParsableArguments {
  @Option(
    name: .customLong("set"), parsing: .unconditionalSingleValue,
    help: ArgumentHelp(
      "A parameter by its port symbol: --set g_1=-3 (repeatable; 'tape fx info URI' lists them).",
      valueName: "symbol=value"))
  var settings: [String] = []

  /// The pairs, split; a pair without `=`, or a symbol given twice, refused (the last of two
  /// was kept without a word).
  func pairs() throws -> [(symbol: String, text: String)] {
    let pairs = try settings.map { setting in
      try RawArguments.requireText(setting, "a --set value")
      guard let equals = setting.firstIndex(of: "="), equals != setting.startIndex else {
        throw UsageError(
          message: "--set '\(setting)' is not symbol=value; write it like --set g_1=-3")
      }
      return (
        symbol: String(setting[..<equals]).trimmingCharacters(in: .whitespaces),
        text: String(setting[setting.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
      )
    }
    var seen: [String: String] = [:]
    for (symbol, text) in pairs {
      if let first = seen[symbol] {
        throw UsageError(
          message:
            "--set \(symbol) is given twice (\(symbol)=\(first) and \(symbol)=\(text)); set each parameter once"
        )
      }
      seen[symbol] = text
    }
    return pairs
  }

  /// The values by symbol, each checked against `plugin`'s control port of that symbol.
  func values(for plugin: PluginInfo) throws -> [String: Double] {
    var values: [String: Double] = [:]
    for (symbol, text) in try pairs() {
      guard let port = plugin.controls.first(where: { $0.symbol == symbol }) else {
        let nearest = NameSuggestion.nearest(to: symbol, in: plugin.controls.map(\.symbol))
        throw UsageError(
          message: "\(plugin.uri) has no parameter '\(symbol)'"
            + (nearest.map { "; did you mean '\($0)'?" } ?? "")
            + " ('tape fx info \(plugin.uri)' lists them)")
      }
      do {
        values[symbol] = Double(try port.value(parsing: text))
      } catch {
        throw UsageError(message: "--set \(symbol)=\(text): \(error)")
      }
    }
    return values
  }
}

/// `--file key=path` pairs as typed: the files of a plugin's file parameters (an impulse
/// response).
struct FileSettings: ParsableArguments {
  @Option(
    name: .customLong("file"), parsing: .unconditionalSingleValue,
    help: ArgumentHelp(
      "A file parameter by its key: --file ir=hall.wav, an impulse response (repeatable; 'tape fx info URI' lists them).",
      valueName: "key=path"))
  var settings: [String] = []

  /// The pairs, split; a pair without `=`, or a key given twice, refused.
  func pairs() throws -> [(key: String, path: String)] {
    var seen = Swift.Set<String>()
    return try settings.map { setting in
      try RawArguments.requireText(setting, "a --file value")
      guard let equals = setting.firstIndex(of: "="), equals != setting.startIndex,
        setting.index(after: equals) != setting.endIndex
      else {
        throw UsageError(
          message: "--file '\(setting)' is not key=path; write it like --file ir=hall.wav")
      }
      let key = String(setting[..<equals])
      guard seen.insert(key).inserted else {
        throw UsageError(message: "--file \(key) is given twice; set each file once")
      }
      return (key, String(setting[setting.index(after: equals)...]))
    }
  }

  /// The files by key, each checked: a file parameter of `plugin`, a file that exists and is
  /// audio (its content identity taken as a source's is), kept relative to the project's
  /// folder when inside it.
  func files(for plugin: PluginInfo, project file: String) throws -> [String: EffectFile] {
    var files: [String: EffectFile] = [:]
    for (key, text) in try pairs() {
      let parameter: FileParameter
      do {
        parameter = try plugin.fileParameter(key)
      } catch {
        throw UsageError(message: error.description)
      }
      let path = RawArguments.path(text).absolute
      guard path.withCString({ FileIdentity(cPath: $0) }) != nil else {
        throw MissingInput(
          message:
            "the file \(ProjectWords.escaped(text)) for \(parameter.key) (\(parameter.label)) does not exist; give the path of an audio file: --file \(parameter.key)=PATH"
        )
      }
      let info: AudioFileInfo
      do {
        info = try AudioProbe.probe(path)
      } catch {
        throw DataError(
          message:
            "--file \(parameter.key)=\(ProjectWords.escaped(text)): \(error); \(parameter.key) (\(parameter.label)) takes an audio file"
        )
      }
      files[parameter.key] = EffectFile(
        path: storedPath(path, project: file), contentHash: info.contentHash)
    }
    return files
  }
}

/// Checks that `plugin` takes `effect`'s files: starts it with them (its worker loading each
/// in line) and waits until it says it has; an error naming the file otherwise, before
/// anything is committed.
func checkFilesTaken(_ effect: Effect, plugin: PluginInfo, project: Project, file: String) throws {
  guard !effect.files.isEmpty else { return }
  do {
    _ = try EffectProcessor(
      plugin: plugin, catalog: PluginCatalog.load(), sampleRate: project.sampleRate,
      channels: project.channels, maximumFrames: 64,
      values: EffectRack.values(of: effect, for: plugin), bypassed: false, state: effect.state,
      files: EffectRack.files(of: effect, for: plugin, projectFolder: projectFolder(file)),
      worker: .inline)
  } catch {
    throw DataError(
      message: error.description.replacingOccurrences(
        of: "'tape fx set FILE ", with: "'tape fx set \(file) "))
  }
}

/// Looking plugins up for the commands, with messages that name the fix.
enum FxNames {
  /// The installed plugin `uri` names: a URI, the end of one as `tape ls` shows it
  /// (`fil4#stereo`), or a plugin's name (``PluginCatalog/resolve(_:)``); an error naming the
  /// nearest installed one, or the plugins an ambiguous name could be.
  static func plugin(_ uri: String, _ catalog: PluginCatalog) throws -> PluginInfo {
    do {
      return try catalog.resolve(uri)
    } catch .unknownPlugin {
      throw MissingInput(
        message: "no LV2 plugin \(uri) is installed"
          + (catalog.nearest(to: uri).map { "; did you mean \($0)?" } ?? "")
          + " ('tape fx plugins --search WORD' lists them)")
    } catch {
      throw UsageError(message: error.description)
    }
  }

  /// The installed plugin `uri` names, which Tape must be able to run: an unusable one (no
  /// audio input, surround, a file it needs) is refused in one line saying why and what to
  /// use instead.
  static func usablePlugin(_ uri: String, _ catalog: PluginCatalog) throws -> PluginInfo {
    let plugin = try plugin(uri, catalog)
    guard let problem = plugin.problem else { return plugin }
    let sibling = catalog.usableSibling(of: plugin.uri)
    throw DataError(
      message: "Tape cannot run \(plugin.uri): it \(problem); "
        + (sibling.map { "use \($0), or another plugin 'tape fx plugins' lists as usable" }
          ?? "use a plugin 'tape fx plugins --search WORD' lists as usable"))
  }

  /// `preset` of `plugin`, or an error listing the plugin's presets.
  static func preset(
    _ name: String, of plugin: PluginInfo, _ catalog: PluginCatalog
  ) throws
    -> Preset
  {
    do {
      return try catalog.preset(name, of: plugin.uri)
    } catch {
      throw UsageError(message: error.description)
    }
  }

  /// The installed plugin of `effect`, or an error saying what works without it.
  static func plugin(of effect: Effect, _ catalog: PluginCatalog) throws -> PluginInfo {
    guard let plugin = catalog.plugin(effect.plugin) else {
      throw MissingInput(
        message: "effect \(effect.id)'s plugin \(effect.plugin) is not installed here, so its "
          + "parameters cannot be checked; install it, or bypass, move or remove the effect "
          + "(those work without it)")
    }
    return plugin
  }

  /// `master`, or a track by id or name (``resolveTrack(_:_:)``), as the command line gives it.
  static func owner(_ text: String, _ project: Project) throws -> ChainOwner {
    if let owner = ChainOwner(parsing: text) { return owner }
    guard project.tracks.contains(where: { $0.name == text }) else {
      throw UsageError(
        message:
          "'\(ProjectWords.escaped(text))' is not a chain; name a track (t1, or its name) or master ('tape track ls' lists the tracks)"
      )
    }
    return .track(try resolveTrack(text, project))
  }

  /// The side chain `--sidechain` names for an effect of `plugin`: a track (t2, or its name),
  /// or nil for `none`. Refused for a plugin without side-chain inputs.
  static func sidechain(
    _ text: String, for plugin: PluginInfo?, _ project: Project
  ) throws -> Track.ID? {
    if text == "none" { return nil }
    let source = try resolveTrack(text, project)
    if let plugin, plugin.sidechainInputs == 0 {
      throw UsageError(
        message:
          "\(ProjectWords.escaped(plugin.name)) has no side-chain input; choose a plugin that has one (lsp's sc_compressor_stereo, say: 'tape fx info URI' shows its ports), or leave out --sidechain"
      )
    }
    return source
  }

  /// An effect's parameter values as its plugin shows them (enum labels, toggles), or the
  /// stored numbers where the plugin is missing.
  static func display(_ effect: Effect, _ plugin: PluginInfo?) -> [(String, String)] {
    effect.parameters.sorted { $0.key < $1.key }.map { symbol, value in
      let port = plugin?.controls.first { $0.symbol == symbol }
      return (symbol, port.map { $0.display(Float(value)) } ?? ProjectWords.number(Float(value)))
    }
  }

}

extension Fx {
  struct Add: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Add an LV2 effect to a track's chain or the master's; prints its id (f1).",
      discussion: """
        The effect runs after the track's clips are summed and its gain, pan and envelope \
        applied (before mute and solo); on the master, after the master gain. Every port's \
        value is stored with the effect: the plugin's default unless --set gives one.
        The plugin is named by its URI, by the end of it that 'tape ls' shows (fil4#stereo), \
        or by its name when no other plugin has it. --preset starts from one of the plugin's \
        presets ('tape fx presets URI' lists them); --set values are applied after it. A \
        plugin Tape cannot run ('tape fx plugins' says why) is refused.
        --sidechain feeds the plugin's side-chain inputs (a compressor's key) from another \
        track's post-fader output (after its whole chain and its mute), aligned with what the \
        effect processes; a side chain that closes a loop of the routing is refused. --file \
        sets a file parameter (a convolver's impulse response), kept as a source is.
        Example: tape fx add song.tape t1 http://gareus.org/oss/lv2/fil4#stereo --set gain=-3
        Example: tape fx add song.tape master dpl#stereo --set threshold=-1
        Example: tape fx add song.tape t1 http://gareus.org/oss/lv2/fat1 --preset Live
        Example: tape fx add song.tape t3 sc_compressor_stereo --sidechain t1 --set sct=External
        Example: tape fx add song.tape t1 zeroconvolv#CfgStereo --file ir=~/irs/hall.wav
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The chain: a track (t1, or its name) or master.") var chain: String
    @Argument(
      help:
        "The plugin: its LV2 URI, the end of it (fil4#stereo) or its name ('tape fx plugins' lists them)."
    ) var uri: String
    @Option(
      help: ArgumentHelp(
        "Start from this preset of the plugin, by name ('tape fx presets URI' lists them).",
        valueName: "name"))
    var preset: String?
    @OptionGroup var parameters: ParameterSettings
    @OptionGroup var fileSettings: FileSettings
    @Option(
      parsing: .unconditional, help: "Its place in the chain, 0 running first (default: last).")
    var at: Int?
    @Flag(help: "Add it bypassed.") var bypass = false
    @Option(
      help: ArgumentHelp(
        "Feed the effect's side-chain inputs from this track's post-fader output (t2, or its name; none removes it).",
        valueName: "track"))
    var sidechain: String?
    @OptionGroup var options: EditOptions

    func validate() throws {
      try RawArguments.requireText(uri, "the plugin URI")
      if let preset { try RawArguments.requireText(preset, "the preset") }
      _ = try parameters.pairs()
      _ = try fileSettings.pairs()
    }

    var label: String {
      historyLabel(
        "Add effect to \(chain)",
        [("", uri), ("preset", preset), ("sidechain", sidechain)]
          + parameters.settings.map { ("", $0) } + fileSettings.settings.map { ("file", $0) })
    }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let owner = try FxNames.owner(chain, project)
      let catalog = PluginCatalog.load()
      // Ports given as fractions of the rate (swh's cutoffs) are set in Hz at the project's.
      let plugin = try FxNames.usablePlugin(uri, catalog).atSampleRate(project.sampleRate)
      let preset = try self.preset.map { try FxNames.preset($0, of: plugin, catalog) }
      var values = Dictionary(
        uniqueKeysWithValues: plugin.controls.map { ($0.symbol, Double($0.defaultValue)) })
      if let preset { values.merge(preset.values(for: plugin)) { _, set in set } }
      values.merge(try parameters.values(for: plugin)) { _, set in set }
      // A plugin with state of its own (LV2 State) has it saved with the effect, as it is
      // with these values (and its preset's state): every later start restores the same.
      var effect = Effect(
        id: ids.newEffectID(), plugin: plugin.uri, parameters: values, isBypassed: bypass,
        sidechain: try sidechain.flatMap { try FxNames.sidechain($0, for: plugin, project) })
      if plugin.hasState {
        effect.state = try EffectState.saved(
          effect, plugin: plugin, preset: preset, state: nil, project: project)
        let needed = catalog.presetsNeeded(by: plugin, savedState: effect.state)
        if preset == nil, !needed.isEmpty {
          throw DataError(
            message:
              "\(plugin.uri) renders silence without the state one of its presets gives it; add it with --preset NAME (its presets: \(needed.map { "'\($0.label)'" }.joined(separator: ", ")))"
          )
        }
      }
      effect.files = try fileSettings.files(for: plugin, project: self.project.file)
      try checkFilesTaken(effect, plugin: plugin, project: project, file: self.project.file)
      return try project.addEffect(effect, to: owner, at: at)
    }
  }

  struct Set: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "set",
      abstract: "Change an effect's parameters (heard live in 'tape play', ramped).",
      discussion: """
        --preset sets the parameters one of the plugin's presets sets (and its state, if it \
        has one), the others as they were; --set values are applied after it. --file sets a \
        file parameter (a convolver's impulse response): the file is kept as a source is, by \
        its path relative to the project's folder when inside it and its content's identity \
        ('tape relink' points it at a new place). One version, one undo step.
        --sidechain feeds the effect's side-chain inputs from a track's post-fader output \
        (--sidechain none removes it): 'tape fx set podcast.tape f3 --sidechain t2'.
        Example: tape fx set song.tape f1 --set gain=-6 --set sec1=on --set freq1=120
        Example: tape fx set song.tape f2 --preset "Slightly Corrected"
        Example: tape fx set song.tape f3 --file ir=~/irs/hall.wav
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The effect id (f1).", completion: ids("f")) var effect: String
    @Option(
      help: ArgumentHelp(
        "Apply this preset of the plugin, by name ('tape fx presets URI' lists them).",
        valueName: "name"))
    var preset: String?
    @OptionGroup var parameters: ParameterSettings
    @Option(
      help: ArgumentHelp(
        "Feed the effect's side-chain inputs from this track's post-fader output (t2, or its name; none removes it).",
        valueName: "track"))
    var sidechain: String?
    @OptionGroup var fileSettings: FileSettings
    @OptionGroup var options: EditOptions

    func validate() throws {
      guard
        !parameters.settings.isEmpty || preset != nil || sidechain != nil
          || !fileSettings.settings.isEmpty
      else {
        throw ValidationError(
          "say what to change: --set symbol=value ('tape fx info URI' lists them), --preset NAME, --sidechain TRACK or --file KEY=PATH"
        )
      }
      if let preset { try RawArguments.requireText(preset, "the preset") }
      _ = try parameters.pairs()
      _ = try fileSettings.pairs()
    }

    var label: String {
      historyLabel(
        "Set effect \(effect)",
        [("preset", preset), ("sidechain", sidechain)] + parameters.settings.map { ("", $0) }
          + fileSettings.settings.map { ("file", $0) })
    }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try parseID(effect, as: Effect.ID.self)
      guard let (current, _, _) = project.effect(id) else { throw TimelineError.unknownEffect(id) }
      let catalog = PluginCatalog.load()
      let plugin = try FxNames.plugin(of: current, catalog).atSampleRate(project.sampleRate)
      let values = try parameters.values(for: plugin)
      let source: Track.ID?? = try sidechain.map {
        try FxNames.sidechain($0, for: catalog.plugin(current.plugin), project)
      }
      let files = try fileSettings.files(for: plugin, project: self.project.file)
      guard let name = preset else {
        guard !files.isEmpty else {
          return try project.setEffect(id, parameters: values, sidechain: source)
        }
        var changed = current
        if let source { changed.sidechain = source }
        changed.parameters.merge(values) { _, new in new }
        changed.files.merge(files) { _, new in new }
        try checkFilesTaken(changed, plugin: plugin, project: project, file: self.project.file)
        return try project.replaceEffect(changed)
      }
      let preset = try FxNames.preset(name, of: plugin, catalog)
      var changed = current
      if let source { changed.sidechain = source }
      changed.parameters.merge(preset.values(for: plugin)) { _, new in new }
      changed.parameters.merge(values) { _, new in new }
      changed.files.merge(files) { _, new in new }
      if preset.hasState {
        changed.state = try EffectState.saved(
          changed, plugin: plugin, preset: preset, state: current.state, project: project)
      }
      try checkFilesTaken(changed, plugin: plugin, project: project, file: self.project.file)
      return try project.replaceEffect(changed)
    }
  }

  struct FxEnvelope: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "envelope",
      abstract: "Automate an effect's parameter over time (an envelope), or clear it.",
      discussion: """
        The same forms as 'tape track envelope', with values in the port's units, each \
        checked against its range ('tape fx info URI' lists them). Between two points the \
        value runs linearly (--shape linear, the default) or holds until the next point \
        (--shape hold); before the first point it is the first's, after the last the last's. \
        The effect takes the value at every 64-frame step (the rate it takes any change at), \
        the same in a render and in 'tape play'; while automated, the value 'fx set' gave \
        waits for the automation to be cleared. A toggle, enumeration or integer port holds \
        each value (hold is its default, linear is refused). Ripple edits of the track move \
        the envelope with its clips.
        Example: tape fx envelope song.tape f1 gain --set 2s:0,4s:-12
        Example: tape fx envelope song.tape f1 gain --add 6s:-3 --shape hold
        Example: tape fx envelope song.tape f1 gain --clear
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The effect id (f1).", completion: ids("f")) var effect: String
    @Argument(help: "The parameter's port symbol ('tape fx info URI' lists them).")
    var symbol: String
    @OptionGroup var envelope: EnvelopeEditOptions
    @OptionGroup var options: EditOptions

    func validate() throws { try envelope.check() }

    var label: String { envelope.label("\(effect) \(symbol)") }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try parseID(effect, as: Effect.ID.self)
      guard let (current, _, _) = project.effect(id) else { throw TimelineError.unknownEffect(id) }
      let plugin = try FxNames.plugin(of: current, PluginCatalog.load()).atSampleRate(
        project.sampleRate)
      let port = try plugin.control(symbol)
      let lane = try port.automation(
        current.automation[symbol], by: envelope.edit(project), name: "\(id) \(symbol)",
        sampleRate: project.sampleRate)
      return try project.setAutomation(id, symbol, lane)
    }
  }

  enum BypassState: EnumerableFlag {
    case off, on

    static func help(for value: Self) -> ArgumentHelp? {
      switch value {
      case .off: "Bypass the effect (the default)."
      case .on: "Turn the effect back on."
      }
    }
  }

  struct Bypass: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "bypass",
      abstract: "Bypass an effect, or turn it back on with --on (crossfaded in 'tape play').",
      discussion: """
        A bypassed effect keeps running, and the track hears its input delayed by the \
        effect's latency, so bypassing never shifts the track in time.
        Example: tape fx bypass song.tape f1
        Example: tape fx bypass song.tape f1 --on
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The effect id (f1).", completion: ids("f")) var effect: String
    @Flag(exclusivity: .exclusive) var state: Fx.BypassState = .off
    @OptionGroup var options: EditOptions

    var label: String { state == .off ? "Bypass effect \(effect)" : "Turn on effect \(effect)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      try project.setEffect(try parseID(effect, as: Effect.ID.self), bypassed: state == .off)
    }
  }

  struct Move: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "move",
      abstract: "Move an effect to another place in its chain (0 runs first).",
      discussion: "Example: tape fx move song.tape f1 --to 0"
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The effect id (f1).", completion: ids("f")) var effect: String
    @Option(parsing: .unconditional, help: "Its new place, 0 running first.") var to: Int
    @OptionGroup var options: EditOptions

    var label: String { "Move effect \(effect) to place \(to)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      try project.moveEffect(try parseID(effect, as: Effect.ID.self), to: to)
    }
  }

  struct Remove: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "rm",
      abstract: "Remove effects from their chains (undo brings them back).",
      discussion: "Example: tape fx rm song.tape f1",
      aliases: ["remove"]
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The effect ids (f1 f2).", completion: ids("f")) var effects: [String]
    @OptionGroup var options: EditOptions

    func validate() throws {
      guard !effects.isEmpty else { throw ValidationError("name the effects to remove (f1)") }
    }

    var label: String { "Remove effect \(effects.joined(separator: ", "))" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      try project.removeEffects(try effects.map { try parseID($0, as: Effect.ID.self) })
    }
  }

  struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ls",
      abstract: "List the effect chains: the master's, then each track's, in the order they run.",
      discussion: "Example: tape fx ls song.tape --json"
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Flag(help: "Print machine-readable JSON on stdout.") var json = false

    func run() throws {
      try reportingErrors(readerMayStop: true) {
        let snapshot = try retryingReads { try openStore(project.file, access: .read) }.snapshot
          .project
        let catalog = PluginCatalog.load()
        if json {
          printJSON(
            .array(
              snapshot.allEffects.map {
                effectJSON($0.effect, owner: $0.owner, index: $0.index, catalog)
              }))
          return
        }
        for (effect, owner, index) in snapshot.allEffects {
          let plugin = catalog.plugin(effect.plugin)
          var line =
            "\(effect.id)  \(owner) #\(index)  \(ProjectWords.escaped(plugin?.name ?? effect.plugin))"
          if effect.isBypassed { line += "  (bypassed)" }
          if let source = effect.sidechain {
            let name = snapshot.track(source).map { " (\(ProjectWords.escaped($0.name)))" } ?? ""
            line += "  sidechain \(source)\(name)"
          }
          if plugin == nil {
            line += "  (plugin not installed: \(ProjectWords.escaped(effect.plugin)))"
          }
          print(line)
          let values = FxNames.display(effect, plugin).map { "\($0)=\($1)" }
          if !values.isEmpty { print("    " + ProjectWords.escaped(values.joined(separator: " "))) }
          for (symbol, envelope) in effect.automation.sorted(by: { $0.key < $1.key }) {
            let text = ProjectWords.automation(envelope, sampleRate: snapshot.sampleRate)
            print("    \(ProjectWords.escaped(symbol)) automated: \(text)")
          }
          let home = projectFolder(project.file)
          for (key, file) in effect.files.sorted(by: { $0.key < $1.key }) {
            let found = file.path.resolved(against: home).withCString { access($0, R_OK) } == 0
            print(
              "    file " + ProjectWords.escaped("\(key)=\(file.path.description)")
                + (found ? "" : "  (missing: 'tape relink \(project.file) \(effect.id) PATH')"))
          }
        }
      }
    }
  }
}

/// An effect's LV2 State as it is stored: what the plugin saves once started with the
/// effect's values and `state`, and `preset`'s state restored into it.
enum EffectState {
  static func saved(
    _ effect: Effect, plugin: PluginInfo, preset: Preset?, state: [UInt8]?, project: Project
  ) throws -> [UInt8]? {
    let processor = try EffectProcessor(
      plugin: plugin, catalog: PluginCatalog.load(), sampleRate: project.sampleRate,
      channels: project.channels, maximumFrames: 64,
      values: EffectRack.values(of: effect, for: plugin), bypassed: false, state: state,
      worker: .inline)
    if let preset, preset.hasState {
      try processor.restore(preset: preset)
      // A plugin may load what the state names on its worker, from its first runs (x42's
      // convolver reads its impulse response so); it saves the state once it has.
      processor.settle(frames: 1_024)
    }
    return processor.saveState()
  }
}

/// An effect as `ls --json` and `fx ls --json` show it.
func effectJSON(
  _ effect: Effect, owner: ChainOwner, index: Int, _ catalog: PluginCatalog
) -> JSON {
  let plugin = catalog.plugin(effect.plugin)
  return .object([
    ("id", .string(effect.id.description)), ("chain", .string(owner.description)),
    ("index", .integer(Int64(index))), ("plugin", .string(effect.plugin)),
    ("name", plugin.map { .string($0.name) } ?? .null), ("installed", .bool(plugin != nil)),
    ("bypassed", .bool(effect.isBypassed)),
    ("sidechain", effect.sidechain.map { .string($0.description) } ?? .null),
    (
      "parameters",
      .object(
        effect.parameters.sorted { $0.key < $1.key }.map {
          ($0.key, ProjectJSON.parameter($0.value))
        })
    ),
    ("hasState", .bool(effect.state != nil)),
    (
      "automation",
      .object(
        effect.automation.sorted { $0.key < $1.key }.map {
          ($0.key, ProjectJSON.automation($0.value))
        })
    ),
    (
      "files",
      .object(
        effect.files.sorted { $0.key < $1.key }.map {
          (
            $0.key,
            .object([
              ("path", .string($0.value.path.description)),
              ("contentHash", .string($0.value.contentHash)),
            ])
          )
        })
    ),
  ])
}
