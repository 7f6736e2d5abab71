/// What can go wrong finding, configuring or running an LV2 plugin; each message names the fix.
public enum EffectError: Error, Sendable, CustomStringConvertible, Equatable {
  /// No installed plugin has this URI; `nearest` is the closest installed one, if any.
  case unknownPlugin(uri: String, nearest: String?)
  /// The plugin has no control input port with this symbol; `nearest` is the closest one.
  case unknownSymbol(plugin: String, symbol: String, nearest: String?)
  /// A value that is not a number (or label) the port takes.
  case invalidValue(symbol: String, text: String, expected: String)
  /// A number outside the port's range.
  case outOfRange(symbol: String, value: Float, minimum: Float, maximum: Float)
  /// Wrong number of values for the plugin's control ports.
  case valueCount(plugin: String, expected: Int, got: Int)
  /// The plugin requires LV2 features Tape does not provide.
  case missingFeatures(plugin: String, features: [String])
  /// The plugin's ports cannot be connected to a track (no audio in, more than two outs, MIDI…).
  case unsupportedPorts(plugin: String, reason: String)
  /// A track of this many channels cannot take effects (Tape's tracks have one or two).
  case unsupportedChannels(Int)
  /// The plugin's library refused to instantiate at this rate.
  case instantiateFailed(plugin: String, sampleRate: Int)
  /// Saved plugin state that cannot be read back.
  case badState(plugin: String, reason: String)
  /// A block size or rate that is not positive.
  case invalidConfiguration(String)
  /// A short name or plugin name that several installed plugins answer to.
  case ambiguousPlugin(name: String, candidates: [String])
  /// The plugin has no preset of this label or URI; `labels` are the ones it has.
  case unknownPreset(plugin: String, name: String, labels: [String])
  /// Several presets of the plugin have this label.
  case ambiguousPreset(plugin: String, name: String, candidates: [String])
  /// A parameter given twice in one command.
  case symbolRepeated(symbol: String)

  /// `--file KEY=PATH` names no file parameter of the plugin.
  case unknownFileParameter(plugin: String, key: String, known: [String])
  /// The plugin did not take the file it was given within the time allowed.
  case fileNotApplied(plugin: String, path: String)

  public var description: String {
    switch self {
    case .unknownPlugin(let uri, let nearest):
      let hint = nearest.map { "; did you mean \($0)?" } ?? ""
      return
        "no installed LV2 plugin has the URI \(uri)\(hint) ('tape fx plugins --search TEXT' lists them)"
    case .unknownSymbol(let plugin, let symbol, let nearest):
      let hint = nearest.map { "; did you mean \($0)?" } ?? ""
      return
        "\(plugin) has no parameter '\(symbol)'\(hint) ('tape fx info \(plugin)' lists them)"
    case .invalidValue(let symbol, let text, let expected):
      return "'\(text)' is not a value of \(symbol); use \(expected)"
    case .outOfRange(let symbol, let value, let minimum, let maximum):
      return
        "\(symbol) \(formatNumber(value)) is out of range; use \(formatNumber(minimum)) to \(formatNumber(maximum))"
    case .valueCount(let plugin, let expected, let got):
      return "\(plugin) has \(expected) parameters, and \(got) values were given; give one for each"
    case .missingFeatures(let plugin, let features):
      return
        "\(plugin) requires \(features.joined(separator: ", ")), which Tape does not provide; pick another plugin"
    case .unsupportedPorts(let plugin, let reason):
      return "\(plugin) cannot run on a track: \(reason); pick another plugin"
    case .unsupportedChannels(let channels):
      return "a track of \(channels) channels cannot take effects; effects run on 1 or 2 channels"
    case .instantiateFailed(let plugin, let sampleRate):
      return
        "\(plugin) refused to start at \(sampleRate) Hz; try another sample rate or reinstall the plugin"
    case .badState(let plugin, let reason):
      return
        "the saved state of \(plugin) cannot be restored (\(reason)); remove the effect and add it again"
    case .invalidConfiguration(let what):
      return "\(what); use a positive number"
    case .ambiguousPlugin(let name, let candidates):
      return
        "'\(name)' names \(candidates.count) plugins: \(candidates.joined(separator: ", ")); give the URI of one"
    case .unknownPreset(let plugin, let name, let labels):
      let known =
        labels.isEmpty
        ? "it has none" : "its presets are \(labels.map { "'\($0)'" }.joined(separator: ", "))"
      return
        "\(plugin) has no preset '\(name)'; \(known) ('tape fx presets \(plugin)' lists them)"
    case .ambiguousPreset(let plugin, let name, let candidates):
      return
        "\(candidates.count) presets of \(plugin) are called '\(name)'; give the URI of one: \(candidates.joined(separator: ", "))"
    case .symbolRepeated(let symbol):
      return "\(symbol) is given twice; set each parameter once"
    case .unknownFileParameter(let plugin, let key, let known):
      return known.isEmpty
        ? "\(plugin) takes no file; --file is for plugins with a file parameter (an impulse response)"
        : "\(plugin) has no file parameter '\(key)'; its file parameters are \(known.map { "'\($0)'" }.joined(separator: ", ")) (--file \(known[0])=PATH)"
    case .fileNotApplied(let plugin, let path):
      return
        "\(plugin) did not take the file \(path) (it may not be audio the plugin reads); set another with 'tape fx set FILE EFFECT --file KEY=PATH'"
    }
  }
}

/// A number as a person writes it: `-3`, `0.5`, `120`, no trailing zeros.
func formatNumber(_ value: Float) -> String {
  if value.isNaN { return "nan" }
  if value.isInfinite { return value < 0 ? "-inf" : "inf" }
  if value == value.rounded(), abs(value) < 1e9 { return String(Int(value)) }
  var text = String(format: value)
  if text.contains("e") { return text }
  while text.hasSuffix("0") { text.removeLast() }
  if text.hasSuffix(".") { text.removeLast() }
  return text
}

private extension String {
  /// Up to 6 significant decimals, without Foundation.
  init(format value: Float) {
    let magnitude = abs(Double(value))
    let decimals = magnitude >= 1000 ? 2 : magnitude >= 1 ? 4 : 6
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (Double(value) * scale).rounded()
    let sign = scaled < 0 ? "-" : ""
    let whole = Int(abs(scaled) / scale)
    let fraction = Int(abs(scaled).truncatingRemainder(dividingBy: scale))
    var digits = String(fraction)
    while digits.count < decimals { digits = "0" + digits }
    self = "\(sign)\(whole).\(digits)"
  }
}
