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
    let gain = try Gain(parsingAnyValue: text)
    do {
      try gain.validate(as: "gain")
    } catch {
      // Said as typed: `+48.0000000001` is not "+48 dB", and `1e400` is not "inf dB".
      throw .gainTypedOutOfRange(text.trimmingBlanks)
    }
    self = gain
  }

  /// Parses a gain as ``init(parsing:)`` does, with as many digits as given (the double nearest
  /// to the decimal, so any gain `ls --json` prints reads back exactly) and an exponent
  /// allowed (`-1.5e1`), but without the range check.
  init(parsingAnyValue text: String) throws(TimelineError) {
    var body = Substring(text.trimmingBlanks)
    if body.lowercased().hasSuffix("db") { body = body.dropLast(2) }
    body = Substring(body.trimmingBlanks)
    var unsigned = body
    if unsigned.first == "+" || unsigned.first == "-" { unsigned = unsigned.dropFirst() }
    // Digits with one optional point, then an optional exponent: never `inf`, `nan` or hex,
    // which `Double(_:)` would also take.
    var mantissa = unsigned
    var exponent: Substring = ""
    if let e = unsigned.firstIndex(where: { $0 == "e" || $0 == "E" }) {
      mantissa = unsigned[..<e]
      exponent = unsigned[unsigned.index(after: e)...]
      if exponent.first == "+" || exponent.first == "-" { exponent = exponent.dropFirst() }
      guard !exponent.isEmpty, exponent.allSatisfy(\.isASCIIDigit) else {
        throw .invalidGain(text)
      }
    }
    let pieces = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    guard pieces.count <= 2, pieces.contains(where: { !$0.isEmpty }),
      pieces.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }), let decibels = Double(String(body))
    else { throw .invalidGain(text) }
    self.init(decibels: decibels)
  }

  /// Throws unless the gain is finite and within the accepted range.
  /// `what` names the gain in the message ("gain of clip c3"); it is only built on failure.
  public func validate(as what: @autoclosure () -> String) throws(TimelineError) {
    guard decibels.isFinite, decibels >= Self.minimumDecibels, decibels <= Self.maximumDecibels
    else { throw .gainOutOfRange(what: what(), decibels: decibels) }
  }
}
