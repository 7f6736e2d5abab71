import ArgumentParser
import Effects
import Interchange
import Timeline

struct FxPlugins: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "plugins",
    abstract: "List the installed LV2 plugins: URI, name, audio ports, usable or why not.",
    discussion: """
      One line per plugin, sorted by URI: its URI, name, audio inputs and outputs (side-chain \
      and optional ports left out), and 'usable' or why Tape cannot run it. --search keeps \
      the plugins whose URI or name contains TEXT (case-insensitive). Plugins are found where \
      lilv looks: the system's LV2 folders, or LV2_PATH.
      Example: tape fx plugins --search limiter
      Example: tape fx plugins --search gareus --json
      """)

  @Option(help: "Only plugins whose URI or name contains this (case-insensitive).")
  var search: String?
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors(readerMayStop: true) {
      let needle = search?.lowercased()
      let plugins = PluginCatalog.load().plugins.filter { plugin in
        guard let needle, !needle.isEmpty else { return true }
        return plugin.uri.lowercased().contains(needle) || plugin.name.lowercased().contains(needle)
      }
      if output.json {
        printJSON(.array(plugins.map(Self.json)))
        return
      }
      for plugin in plugins {
        print(
          "\(ProjectWords.escaped(plugin.uri))\t\(ProjectWords.escaped(plugin.name))\t\(plugin.audioInputs) in, \(plugin.audioOutputs) out\t\(plugin.problem.map { "unusable: \(ProjectWords.escaped($0))" } ?? "usable")"
        )
      }
    }
  }

  static func json(_ plugin: PluginInfo) -> JSON {
    .object([
      ("uri", .string(plugin.uri)), ("name", .string(plugin.name)),
      ("author", plugin.author.map(JSON.string) ?? .null),
      ("audioInputs", .integer(Int64(plugin.audioInputs))),
      ("audioOutputs", .integer(Int64(plugin.audioOutputs))),
      ("usable", .bool(plugin.isUsable)),
      ("problem", plugin.problem.map(JSON.string) ?? .null),
    ])
  }
}

struct FxInfo: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "info",
    abstract: "Show an LV2 plugin's parameters: symbol, name, range, default, unit, kind.",
    discussion: """
      Every control input of the plugin, in port order: its symbol (what 'fx add --set' \
      takes), name, range, default, unit, kind (continuous parameters ramp when changed; \
      integer, toggle and enumeration ones jump) and, for enumerations, the labels it takes \
      ('× sample rate': the range is a fraction of the project's rate, as some filters give \
      their cutoff). Then whether it reports latency, is hard-realtime capable, and has state of its own. \
      The plugin is named by its URI, the end of it (dpl#stereo) or its name. An unknown \
      one is an error naming the nearest installed URI (exit 66).
      Example: tape fx info http://gareus.org/oss/lv2/dpl#stereo
      Example: tape fx info http://gareus.org/oss/lv2/fil4#stereo --json
      """)

  @Argument(
    help:
      "The plugin: its URI, the end of it (dpl#stereo) or its name ('tape fx plugins' lists them)."
  ) var uri: String
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors(readerMayStop: true) {
      let plugin = try PluginCatalog.load().resolve(uri)
      if output.json {
        printJSON(Self.json(plugin))
        return
      }
      let yes = { (flag: Bool) in flag ? "yes" : "no" }
      var lines = [
        ProjectWords.escaped(plugin.uri),
        "name: \(ProjectWords.escaped(plugin.name))",
        "author: \(plugin.author.map(ProjectWords.escaped) ?? "unknown")",
        "audio: \(plugin.audioInputs) in, \(plugin.audioOutputs) out",
        "reports latency: \(yes(plugin.reportsLatency))",
        "hard realtime: \(yes(plugin.isHardRTCapable))",
        "state: \(yes(plugin.hasState))",
        "usable: \(plugin.problem.map { "no, it \(ProjectWords.escaped($0))" } ?? "yes")",
        "parameters: \(plugin.controls.count)",
      ]
      for control in plugin.controls {
        let unit = control.unit.map { " \(ProjectWords.escaped($0))" } ?? ""
        var line =
          "  \(ProjectWords.escaped(control.symbol))\t\(ProjectWords.escaped(control.name))\t\(control.display(control.minimum)) to \(control.display(control.maximum))\(unit)\tdefault \(control.display(control.defaultValue))\(unit)\t\(control.kind.rawValue)\(control.isLogarithmic ? ", logarithmic" : "")\(control.isSampleRateRelative ? ", × sample rate" : "")"
        if !control.scalePoints.isEmpty {
          line +=
            "\t"
            + control.scalePoints.map {
              "\(ProjectWords.escaped($0.label))=\(ProjectWords.number($0.value))"
            }
            .joined(separator: ", ")
        }
        lines.append(line)
      }
      if !plugin.fileParameters.isEmpty {
        lines.append("files: \(plugin.fileParameters.count) (set with --file KEY=PATH)")
        for parameter in plugin.fileParameters {
          lines.append(
            "  \(ProjectWords.escaped(parameter.key))\t\(ProjectWords.escaped(parameter.label))\t\(ProjectWords.escaped(parameter.uri))"
          )
        }
      }
      print(lines.joined(separator: "\n"))
    }
  }

  static func json(_ plugin: PluginInfo) -> JSON {
    .object([
      ("uri", .string(plugin.uri)), ("name", .string(plugin.name)),
      ("author", plugin.author.map(JSON.string) ?? .null),
      ("audioInputs", .integer(Int64(plugin.audioInputs))),
      ("audioOutputs", .integer(Int64(plugin.audioOutputs))),
      ("reportsLatency", .bool(plugin.reportsLatency)),
      ("hardRTCapable", .bool(plugin.isHardRTCapable)),
      ("hasState", .bool(plugin.hasState)),
      ("usable", .bool(plugin.isUsable)),
      ("problem", plugin.problem.map(JSON.string) ?? .null),
      ("missingFeatures", .array(plugin.missingFeatures.map(JSON.string))),
      (
        "files",
        .array(
          plugin.fileParameters.map {
            .object([
              ("key", .string($0.key)), ("label", .string($0.label)), ("uri", .string($0.uri)),
            ])
          })
      ),
      (
        "controls",
        .array(
          plugin.controls.map { control in
            .object([
              ("index", .integer(Int64(control.index))), ("symbol", .string(control.symbol)),
              ("name", .string(control.name)), ("minimum", .number(Double(control.minimum))),
              ("maximum", .number(Double(control.maximum))),
              ("default", .number(Double(control.defaultValue))),
              ("unit", control.unit.map(JSON.string) ?? .null),
              ("kind", .string(control.kind.rawValue)),
              ("logarithmic", .bool(control.isLogarithmic)),
              ("sampleRateRelative", .bool(control.isSampleRateRelative)),
              (
                "scalePoints",
                .array(
                  control.scalePoints.map {
                    .object([("label", .string($0.label)), ("value", .number(Double($0.value)))])
                  })
              ),
            ])
          })
      ),
    ])
  }
}

struct FxPresets: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "presets",
    abstract: "List an LV2 plugin's presets: name, and the parameters each sets.",
    discussion: """
      The plugin's LV2 presets, as lilv finds them (its own bundle's, and any other installed \
      bundle's that apply to it), sorted by name: each name (what 'fx add --preset' and \
      'fx set --preset' take), its URI, the parameters it sets and whether it has state of \
      its own. The plugin is named as 'tape fx info' takes it.
      Example: tape fx presets http://gareus.org/oss/lv2/fat1
      Example: tape fx presets fat1 --json
      """)

  @Argument(
    help: "The plugin: its URI, the end of it (fat1) or its name ('tape fx plugins' lists them)."
  ) var uri: String
  @OptionGroup var output: JSONOption

  func run() throws {
    try reportingErrors(readerMayStop: true) {
      let catalog = PluginCatalog.load()
      let plugin = try catalog.resolve(uri)
      let presets = catalog.presets(of: plugin.uri)
      if output.json {
        printJSON(.array(presets.map { Self.json($0, plugin) }))
        return
      }
      if presets.isEmpty {
        print("\(ProjectWords.escaped(plugin.uri)) has no presets")
        return
      }
      for preset in presets {
        print(
          "\(ProjectWords.escaped(preset.label))\t\(ProjectWords.escaped(preset.uri))\(preset.hasState ? "\t(with state)" : "")"
        )
        let values = Self.shown(preset, plugin).map { "\($0)=\($1)" }
        if !values.isEmpty { print("    " + ProjectWords.escaped(values.joined(separator: " "))) }
      }
    }
  }

  /// The preset's values in port order, as the plugin shows them (labels, on/off).
  static func shown(_ preset: Preset, _ plugin: PluginInfo) -> [(String, String)] {
    plugin.controls.compactMap { port in
      preset.values[port.symbol].map { (port.symbol, port.display($0)) }
    }
  }

  static func json(_ preset: Preset, _ plugin: PluginInfo) -> JSON {
    .object([
      ("name", .string(preset.label)), ("uri", .string(preset.uri)),
      (
        "parameters",
        .object(
          plugin.controls.compactMap { port in
            preset.values[port.symbol].map { (port.symbol, ProjectJSON.parameter(Double($0))) }
          })
      ),
      ("hasState", .bool(preset.hasState)),
    ])
  }
}
