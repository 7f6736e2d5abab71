#if canImport(Glibc)
  import Glibc
#endif

/// How a time was written on the command line, so it can be printed back the same way.
public enum TimeStyle: Sendable, Hashable {
  /// `1.5` or `1.5s`, with this many decimals.
  case seconds(decimals: Int)
  /// `250ms`.
  case milliseconds
  /// `1:02.5` (`m:ss`) or `01:02:03.250` (`h:mm:ss`), with this many decimals.
  case clock(hours: Bool, decimals: Int)
  /// `96000f`.
  case frames
}

/// A time typed by the user, converted to whole frames at a sample rate.
///
/// Accepted forms (all non-negative):
/// - seconds: `1.5`, `1.5s`, `2s`
/// - milliseconds: `250ms`, `12.5ms`
/// - clock: `1:02.5` (m:ss[.fff]), `01:02:03.250` (h:mm:ss[.fff]); two-digit seconds and
///   minutes, below 60
/// - frames: `96000f`
///
/// Fractions are converted exactly (decimal arithmetic, no floating point) and rounded to the
/// nearest frame, halves away from zero.
///
/// ```swift
/// try TimeValue(parsing: "1:02.5", sampleRate: 48_000).frames  // FrameCount(3_000_000)
/// try TimeValue(parsing: "250ms", sampleRate: 44_100).frames   // FrameCount(11_025)
/// ```
public struct TimeValue: Sendable, Hashable {
  public let frames: FrameCount
  public let style: TimeStyle

  public init(frames: FrameCount, style: TimeStyle) {
    self.frames = frames
    self.style = style
  }

  public init(parsing text: String, sampleRate: Int) throws(TimelineError) {
    let trimmed = text.trimmingBlanks
    guard let parsed = Self.parse(trimmed, sampleRate: Int64(sampleRate)) else {
      throw .invalidTime(text)
    }
    guard parsed.frames <= Self.maximumFrames else {
      throw .timeTooLarge(text, sampleRate: sampleRate)
    }
    self = parsed
  }

  /// The longest time Tape accepts: 2^40 frames (about 265 days at 48 kHz), far beyond any
  /// project, and small enough that positions plus lengths can never overflow.
  public static let maximumFrames = FrameCount(1 << 40)

  /// The frame position this time names on an axis starting at 0.
  public var position: FramePosition { FramePosition(frames.frames) }

  /// What a well-formed time too large to convert parses to: refused as past the maximum.
  private static let beyondTheMaximum = TimeValue(frames: FrameCount(Int64.max), style: .frames)

  private static func parse(_ text: String, sampleRate rate: Int64) -> TimeValue? {
    if text.hasSuffix("ms") {
      guard let d = DecimalText(text.dropLast(2)) else { return nil }
      return TimeValue(frames: d.frames(perUnit: rate, unitsPerSecond: 1000), style: .milliseconds)
    }
    if text.hasSuffix("f") {
      let digits = text.dropLast()
      guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else { return nil }
      guard let n = Int64(digits) else { return Self.beyondTheMaximum }
      return TimeValue(frames: FrameCount(n), style: .frames)
    }
    if text.contains(":") {
      let parts = text.split(separator: ":", omittingEmptySubsequences: false)
      guard parts.count == 2 || parts.count == 3,
        let seconds = DecimalText(parts[parts.count - 1]), seconds.integer < 60,
        parts[parts.count - 1].prefix(while: \.isASCIIDigit).count == 2
      else { return nil }
      var wholeMinutes: Int64 = 0
      if parts.count == 3 {
        guard let hours = DecimalText(parts[0]), hours.fractionDigits.isEmpty,
          let minutes = DecimalText(parts[1]), minutes.fractionDigits.isEmpty, minutes.integer < 60,
          parts[1].count == 2
        else { return nil }
        // Hours that would overflow the minutes are past the maximum, not "not a time".
        guard hours.integer < 1_000_000_000 else { return Self.beyondTheMaximum }
        wholeMinutes = hours.integer * 60 + minutes.integer
      } else {
        guard let minutes = DecimalText(parts[0]), minutes.fractionDigits.isEmpty else {
          return nil
        }
        wholeMinutes = minutes.integer
      }
      guard wholeMinutes < 1_000_000 else { return Self.beyondTheMaximum }
      let total = DecimalText(
        integer: seconds.integer + wholeMinutes * 60, fractionDigits: seconds.fractionDigits)
      return TimeValue(
        frames: total.frames(perUnit: rate, unitsPerSecond: 1),
        style: .clock(hours: parts.count == 3, decimals: seconds.fractionDigits.count))
    }
    let body = text.hasSuffix("s") ? text.dropLast() : Substring(text)
    guard let d = DecimalText(body) else { return nil }
    return TimeValue(
      frames: d.frames(perUnit: rate, unitsPerSecond: 1),
      style: .seconds(decimals: d.fractionDigits.count))
  }

  /// Formats `frames` at `sampleRate` in `style`. Clock styles print milliseconds at most.
  public static func format(_ frames: FrameCount, sampleRate: Int, style: TimeStyle) -> String {
    let rate = Int64(sampleRate)
    switch style {
    case .frames:
      return "\(frames.frames)f"
    case .milliseconds:
      return formatFixed(frames.frames * 1000, divisor: rate, maxDecimals: 3) + "ms"
    case .seconds(let decimals):
      return formatFixed(frames.frames, divisor: rate, maxDecimals: max(decimals, 3)) + "s"
    case .clock(let hours, let decimals):
      let negative = frames.frames < 0
      let totalMillis = roundedDivision(abs(frames.frames) * 1000, rate)
      let millis = totalMillis % 1000
      let totalSeconds = totalMillis / 1000
      let secs = totalSeconds % 60
      let totalMinutes = totalSeconds / 60
      var text = negative ? "-" : ""
      if hours {
        text += "\(pad2(totalMinutes / 60)):\(pad2(totalMinutes % 60)):\(pad2(secs))"
      } else if totalMinutes >= 60 {
        // An hour or more: `1:15:03.200`, never `75:03.200` (which reads as a typo).
        text += "\(totalMinutes / 60):\(pad2(totalMinutes % 60)):\(pad2(secs))"
      } else {
        text += "\(totalMinutes):\(pad2(secs))"
      }
      let shown = min(max(decimals, 3), 3)
      if shown > 0 {
        let digits = String(millis + 1000).dropFirst()
        text += "." + digits.prefix(shown)
      }
      return text
    }
  }

  /// The default display form: `m:ss.mmm`.
  public static func clock(_ frames: FrameCount, sampleRate: Int) -> String {
    format(frames, sampleRate: sampleRate, style: .clock(hours: false, decimals: 3))
  }

  /// A time as `--frames` asks for it: `96000f` when `inFrames`, else ``clock(_:sampleRate:)``
  /// (`m:ss.mmm`). The one way every listing, log and status line says a time.
  public static func shown(_ frames: FrameCount, sampleRate: Int, inFrames: Bool) -> String {
    inFrames ? "\(frames.frames)f" : clock(frames, sampleRate: sampleRate)
  }

  /// Seconds with up to three decimals and no trailing zeros, in the form the command line
  /// accepts (`4s`, `1.5s`, `0.01s`); used in messages.
  public static func seconds(_ frames: FrameCount, sampleRate: Int) -> String {
    formatFixed(frames.frames, divisor: Int64(sampleRate), maxDecimals: 3) + "s"
  }

  /// `frames` exactly, in a form the command line takes back to the same frame: seconds when
  /// they are a whole number of milliseconds (`6.4s`), frames otherwise (`307249f`). For the
  /// values a message suggests: a rounded one could itself be refused.
  public static func exact(_ frames: FrameCount, sampleRate: Int) -> String {
    frames.frames * 1_000 % Int64(sampleRate) == 0
      ? seconds(frames, sampleRate: sampleRate) : "\(frames.frames)f"
  }
}

/// A non-negative decimal number read exactly from text: an integer part and fraction digits.
struct DecimalText {
  var integer: Int64
  var fractionDigits: [Int64]

  init(integer: Int64, fractionDigits: [Int64]) {
    self.integer = integer
    self.fractionDigits = fractionDigits
  }

  /// Reads `12`, `12.5`, `.5`, `12.`: ASCII digits only, at most 18 integer and 9 fraction
  /// digits (more integer digits than a time can have, so a long one is refused as too large
  /// rather than as "not a time").
  init?<S: StringProtocol>(_ text: S) {
    let pieces = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    guard let intText = pieces.first, pieces.count <= 2 else { return nil }
    let fracText = pieces.count == 2 ? pieces[1] : ""
    guard !(intText.isEmpty && fracText.isEmpty), intText.count <= 18, fracText.count <= 9,
      intText.allSatisfy(\.isASCIIDigit), fracText.allSatisfy(\.isASCIIDigit)
    else { return nil }
    integer = intText.isEmpty ? 0 : Int64(intText) ?? 0
    fractionDigits = fracText.compactMap { Int64(String($0)) }
  }

  /// `value / unitsPerSecond` seconds in frames at `rate`, rounded to nearest (halves up).
  func frames(perUnit rate: Int64, unitsPerSecond: Int64) -> FrameCount {
    var scale: Int64 = 1
    var fraction: Int64 = 0
    for digit in fractionDigits {
      scale *= 10
      fraction = fraction * 10 + digit
    }
    // value = (integer·scale + fraction) / scale units; frames = value · rate / unitsPerSecond.
    // Past 2^62 the result is far beyond any time Tape takes: refused as too large, never
    // trapped on (an overflow, or the rounding's `n + d / 2`).
    let scaled = integer.multipliedReportingOverflow(by: scale)
    let numerator = (scaled.partialValue + fraction).multipliedReportingOverflow(by: rate)
    guard !scaled.overflow, !numerator.overflow, numerator.partialValue < 1 << 62 else {
      return FrameCount(Int64.max)
    }
    return FrameCount(roundedDivision(numerator.partialValue, scale * unitsPerSecond))
  }
}

/// `n / d` rounded to the nearest integer, halves away from zero; `d > 0`.
func roundedDivision(_ n: Int64, _ d: Int64) -> Int64 {
  n >= 0 ? (n + d / 2) / d : -((-n + d / 2) / d)
}

private func pad2(_ n: Int64) -> String {
  n < 10 ? "0\(n)" : "\(n)"
}

/// `n / divisor` printed with up to `maxDecimals` decimals, trailing zeros removed.
func formatFixed(_ n: Int64, divisor: Int64, maxDecimals: Int) -> String {
  var scale: Int64 = 1
  for _ in 0..<maxDecimals { scale *= 10 }
  let scaled = roundedDivision(n * scale, divisor)
  let negative = scaled < 0
  let magnitude = abs(scaled)
  var fraction = String(magnitude % scale + scale).dropFirst()
  while fraction.hasSuffix("0") { fraction = fraction.dropLast() }
  let whole = "\(negative ? "-" : "")\(magnitude / scale)"
  return fraction.isEmpty ? whole : "\(whole).\(fraction)"
}

/// A double printed with up to two decimals and no trailing zeros (`-3`, `2.5`, `0.01`).
func formatDecimal(_ value: Double) -> String {
  formatFixed(Int64((value * 100).rounded()), divisor: 100, maxDecimals: 2)
}
