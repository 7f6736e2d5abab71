import Glibc

/// One control input port of a plugin: a parameter a user sets by its symbol.
public struct ControlPort: Sendable, Hashable, Codable {
  /// How a value moves: continuous values ramp, the others are steps.
  public enum Kind: String, Sendable, Codable {
    case continuous, integer, toggle, enumeration
  }

  /// A named value of the port (`lv2:scalePoint`).
  public struct ScalePoint: Sendable, Hashable, Codable {
    public var label: String
    public var value: Float
    public init(label: String, value: Float) {
      self.label = label
      self.value = value
    }
  }

  /// The port's index in the plugin (not its position in ``PluginInfo/controls``).
  public var index: Int
  public var symbol: String
  public var name: String
  public var minimum: Float
  public var maximum: Float
  public var defaultValue: Float
  /// The unit's symbol (`dB`, `Hz`, `ms`), nil when the plugin names none.
  public var unit: String?
  public var kind: Kind
  public var isLogarithmic: Bool
  public var scalePoints: [ScalePoint]
  /// `lv2:sampleRate`: ``minimum``, ``maximum`` and ``defaultValue`` are fractions of the
  /// sample rate (swh's filters give cutoffs so); ``atSampleRate(_:)`` makes them hertz.
  public var isSampleRateRelative: Bool

  /// This port with its bounds and default in real units at `sampleRate` when they are
  /// fractions of the rate (see ``isSampleRateRelative``); itself otherwise.
  public func atSampleRate(_ sampleRate: Int) -> ControlPort {
    guard isSampleRateRelative else { return self }
    var port = self
    let rate = Float(sampleRate)
    port.minimum *= rate
    port.maximum *= rate
    port.defaultValue *= rate
    port.isSampleRateRelative = false
    return port
  }

  /// Continuous ports ramp when changed; stepped ones (integer, toggle, enumeration) jump.
  public var canRamp: Bool { kind == .continuous }

  init(_ port: PortDescription) {
    index = port.index
    symbol = port.symbol
    name = port.name
    kind =
      port.toggled
      ? .toggle : port.enumeration ? .enumeration : port.integer ? .integer : .continuous
    let lowest = port.minimum ?? (port.scalePoints.map(\.value).min() ?? 0)
    let highest = port.maximum ?? (port.scalePoints.map(\.value).max() ?? 1)
    minimum = min(lowest, highest)
    maximum = max(lowest, highest)
    defaultValue = min(max(port.defaultValue ?? minimum, minimum), maximum)
    unit = port.unit
    isLogarithmic = port.logarithmic
    scalePoints = port.scalePoints.map { ScalePoint(label: $0.label, value: $0.value) }
    isSampleRateRelative = port.sampleRateRelative
  }

  /// The value `text` names: a number (`-3`, `120`, `0.5`; a unit suffix matching ``unit`` is
  /// allowed: `-3dB`), `on`/`off`/`true`/`false` for a toggle, or a scale point's label
  /// (case-insensitive). Throws, naming the range or the labels, for anything else or a number
  /// out of range. Integer, toggle and enumeration ports take whole numbers only.
  ///
  /// ```swift
  /// try port.value(parsing: "-3")   // -3.0
  /// ```
  public func value(parsing text: String) throws(EffectError) -> Float {
    let trimmed = text.trimmingPrefixAndSuffixSpaces()
    let lowered = trimmed.lowercased()
    if let point = scalePoints.first(where: { $0.label.lowercased() == lowered }) {
      return point.value
    }
    if kind == .toggle {
      if ["on", "true", "yes"].contains(lowered) { return maximum > 0 ? maximum : 1 }
      if ["off", "false", "no"].contains(lowered) { return minimum }
    }
    var number = trimmed
    // A linear gain (LSP's coefficient ports, unit "G") also takes decibels: -6dB is 0.501.
    let decibels = isLinearGain && lowered.hasSuffix("db")
    if decibels {
      number = String(trimmed.dropLast(2)).trimmingPrefixAndSuffixSpaces()
    } else if let unit, !unit.isEmpty, lowered.hasSuffix(unit.lowercased()) {
      number = String(trimmed.dropLast(unit.count)).trimmingPrefixAndSuffixSpaces()
    }
    // Decimal only: Float("0x10") is 16, and a gain of 0x10 read as +16 dB is a surprise.
    guard isDecimal(number), var value = Float(number), value.isFinite else {
      throw .invalidValue(symbol: symbol, text: text, expected: expectation)
    }
    if decibels { value = Float(pow(10, Double(value) / 20)) }
    guard value >= minimum && value <= maximum else {
      throw .outOfRange(symbol: symbol, value: value, minimum: minimum, maximum: maximum)
    }
    if kind != .continuous && value != value.rounded() {
      throw .invalidValue(symbol: symbol, text: text, expected: expectation)
    }
    if kind == .enumeration && !scalePoints.isEmpty
      && !scalePoints.contains(where: { $0.value == value })
    {
      throw .invalidValue(symbol: symbol, text: text, expected: expectation)
    }
    return value
  }

  /// A linear gain coefficient: LSP's unit "G" (1 is 0 dB). Such a port also takes a value
  /// in decibels (`-6dB`).
  public var isLinearGain: Bool { unit == "G" && kind == .continuous }

  /// What a value can be, for messages: the labels, on/off, or the range.
  var expectation: String {
    let range =
      "a number from \(formatNumber(minimum)) to \(formatNumber(maximum))"
      + (isLinearGain ? " (or decibels, such as -6dB)" : "")
    switch kind {
    case .toggle: return "on or off (or \(formatNumber(minimum)) or \(formatNumber(maximum)))"
    case .enumeration where !scalePoints.isEmpty:
      return "one of " + scalePoints.map(\.label).joined(separator: ", ")
    case .integer: return "a whole number from \(formatNumber(minimum)) to \(formatNumber(maximum))"
    default:
      guard !scalePoints.isEmpty else { return range }
      return range + " or one of " + scalePoints.map(\.label).joined(separator: ", ")
    }
  }

  /// `value` as a person reads it: a scale point's label for enumerations (and any port whose
  /// value is exactly a labelled point), `on`/`off` for toggles, else the number.
  public func display(_ value: Float) -> String {
    if kind == .toggle { return value > minimum ? "on" : "off" }
    if kind == .enumeration || kind == .integer,
      let point = scalePoints.first(where: { $0.value == value })
    {
      return point.label
    }
    return formatNumber(value)
  }
}

/// Whether `text` is a decimal number as people write one: an optional sign, digits with at
/// most one point, and an optional exponent (`-3`, `0.5`, `.5`, `1e3`); not hexadecimal
/// (`0x10`), `inf` or `nan`, which `Float(_:)` also reads.
func isDecimal(_ text: String) -> Bool {
  var bytes = Substring(text).utf8[...]
  if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
    bytes = bytes.dropFirst()
  }
  let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
  let mantissa = bytes.prefix { isDigit($0) || $0 == UInt8(ascii: ".") }
  guard mantissa.contains(where: isDigit),
    mantissa.filter({ $0 == UInt8(ascii: ".") }).count <= 1
  else { return false }
  var rest = bytes.dropFirst(mantissa.count)
  guard let e = rest.first else { return true }
  guard e == UInt8(ascii: "e") || e == UInt8(ascii: "E") else { return false }
  rest = rest.dropFirst()
  if let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
    rest = rest.dropFirst()
  }
  return !rest.isEmpty && rest.allSatisfy(isDigit)
}

extension String {
  fileprivate func trimmingPrefixAndSuffixSpaces() -> String {
    var text = Substring(self)
    while text.first?.isWhitespace == true { text.removeFirst() }
    while text.last?.isWhitespace == true { text.removeLast() }
    return String(text)
  }
}
