#if canImport(Glibc)
  import Glibc
#endif

extension Gain {
  /// Parses a gain as typed on the command line: `-3`, `-3dB`, `+2.5dB`, `-3 db`, `0`.
  ///
  /// The gain must be finite and within ``minimumDecibels`` … ``maximumDecibels``.
  ///
  /// ```swift
  /// try Gain(parsing: "+2.5dB")  // Gain(decibels: 2.5)
  /// try Gain(parsing: "loud")    // throws TimelineError.invalidGain
  /// ```
  public init(parsing text: String) throws(TimelineError) {
    var body = Substring(text.trimmingBlanks)
    if body.lowercased().hasSuffix("db") { body = body.dropLast(2) }
    body = Substring(body.trimmingBlanks)
    var sign = 1.0
    if body.first == "+" || body.first == "-" {
      sign = body.first == "-" ? -1 : 1
      body = body.dropFirst()
    }
    guard let magnitude = DecimalText(body) else { throw .invalidGain(text) }
    var scale = 1.0
    var fraction = 0.0
    for digit in magnitude.fractionDigits {
      scale *= 10
      fraction = fraction * 10 + Double(digit)
    }
    let gain = Gain(decibels: sign * (Double(magnitude.integer) + fraction / scale))
    try gain.validate(as: "gain")
    self = gain
  }

  /// Throws unless the gain is finite and within the accepted range.
  /// `what` names the gain in the message ("gain of clip c3"); it is only built on failure.
  public func validate(as what: @autoclosure () -> String) throws(TimelineError) {
    guard decibels.isFinite, decibels >= Self.minimumDecibels, decibels <= Self.maximumDecibels
    else { throw .gainOutOfRange(what: what(), decibels: decibels) }
  }
}
