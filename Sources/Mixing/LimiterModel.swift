import Foundation
public import Timeline

/// A peak limiter plugin Tape knows how to drive: which ports are its input gain and its
/// threshold, and in what units.
///
/// Why: a render refused for its true peak names a limiter setting that fixes it, and a master
/// that already ends with a limiter gets that limiter set (turned on, when bypassed), never a
/// second one after it. Setting another plugin's limiter needs its ports: x42's dpl takes
/// decibels, LSP's limiter a linear gain ("G"), swh's fast look-ahead limiter decibels under
/// other names.
///
/// ```swift
/// let model = LimiterModel.model(of: "http://gareus.org/oss/lv2/dpl#stereo")
/// model?.value(decibels: -1, of: model!.threshold)  // -1 (dpl's threshold is in dB)
/// LimiterModel.suggested(channels: 1)  // "http://gareus.org/oss/lv2/dpl#mono"
/// ```
public struct LimiterModel: Sendable {
  /// A port the limiter is driven through.
  public struct Port: Sendable, Hashable {
    public var symbol: String
    /// Whether the port takes a linear gain (1 = 0 dB) rather than decibels.
    public var isLinear: Bool
  }

  /// The plugin URIs this model covers: every URI with this prefix.
  public var uriPrefix: String
  /// The gain before the limiting (its drive).
  public var gain: Port
  /// The level the output is held under.
  public var threshold: Port
  /// Ports set to a fixed value whenever the limiter is suggested (dpl's true-peak mode on,
  /// LSP's gain boost off: it would lift the output back to full scale), as the port's value
  /// and as the command line writes it.
  public var fixed: [String: (value: Double, text: String)]

  /// x42's dpl (true-peak mode on), LSP's limiters, swh's fast look-ahead limiter.
  public static let known: [LimiterModel] = [
    LimiterModel(
      uriPrefix: "http://gareus.org/oss/lv2/dpl#", gain: Port(symbol: "gain", isLinear: false),
      threshold: Port(symbol: "threshold", isLinear: false),
      fixed: ["truepeak": (1, "on")]),
    LimiterModel(
      uriPrefix: "http://lsp-plug.in/plugins/lv2/limiter_",
      gain: Port(symbol: "g_in", isLinear: true), threshold: Port(symbol: "th", isLinear: true),
      fixed: ["boost": (0, "off")]),
    LimiterModel(
      uriPrefix: "http://plugin.org.uk/swh-plugins/fastLookaheadLimiter",
      gain: Port(symbol: "ingain", isLinear: false),
      threshold: Port(symbol: "limit", isLinear: false), fixed: [:]),
  ]

  /// The model of `plugin`, when it is a limiter Tape knows.
  public static func model(of plugin: String) -> LimiterModel? {
    known.first { plugin.hasPrefix($0.uriPrefix) }
  }

  /// The limiter a refusal suggests adding to a master of `channels` channels: x42's dpl, in
  /// its mono or stereo form (a plugin must match the master's channels).
  public static func suggested(channels: Int) -> String {
    channels == 1 ? "http://gareus.org/oss/lv2/dpl#mono" : "http://gareus.org/oss/lv2/dpl#stereo"
  }

  /// The port's value for `decibels`.
  public func value(decibels: Double, of port: Port) -> Double {
    port.isLinear ? pow(10, decibels / 20) : decibels
  }

  /// The decibels a port's `value` stands for.
  public func decibels(_ value: Double, of port: Port) -> Double {
    port.isLinear ? 20 * log10(value) : value
  }

  /// The master's limiter that a fix should set rather than add a second: the last master
  /// effect that is a known limiter, when every effect after it is bypassed (so that nothing
  /// raises the level after it). It may itself be bypassed: the fix turns it on.
  public static func masterLimiter(of project: Project) -> Effect? {
    for effect in project.masterEffects.reversed() {
      if model(of: effect.plugin) != nil { return effect }
      if !effect.isBypassed { return nil }
    }
    return nil
  }
}
