/// A project's values for people, as `tape` writes them in every listing and message: a name
/// with its control characters escaped, a pan, an envelope, an automation lane, a parameter.
///
/// Rule: every listing of a name goes through ``escaped(_:)``. Why: names and paths made
/// before control characters were refused (or read from another tool's file) may hold a
/// newline, ESC or BEL. What if you don't: one name breaks a listing's lines, moves a
/// terminal's cursor or rings its bell.
///
/// ```swift
/// ProjectWords.pan(-0.25)  // "L25"
/// ProjectWords.escaped("two\nlines")  // "two\\u{A}lines"
/// ```
public enum ProjectWords {
  /// `text` with control characters written as `\u{A}`: a name or label made before they were
  /// refused cannot break a listing.
  public static func escaped(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else {
      return text
    }
    return text.unicodeScalars.map { scalar in
      scalar.properties.generalCategory == .control
        ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
    }.joined()
  }

  /// `count` with its thousands grouped by commas (`12,000`), whatever the locale: a listing
  /// reads the same everywhere.
  public static func grouped(_ count: Int) -> String {
    let digits = Array(String(count.magnitude))
    var text = ""
    for (index, digit) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
      text.append(digit)
    }
    return (count < 0 ? "-" : "") + text
  }

  /// `C` for the centre, `L25` and `R100` for a pan of −0.25 and 1.
  public static func pan(_ pan: Double) -> String {
    if pan == 0 { return "C" }
    let percent = Int((abs(pan) * 100).rounded())
    return pan < 0 ? "L\(percent)" : "R\(percent)"
  }

  /// A parameter's value: an integral one without a fraction (`3`), any other as Swift writes
  /// the Float (`0.3`).
  public static func number(_ value: Float) -> String {
    value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : "\(value)"
  }

  /// An envelope: `0:00.000 0 dB → 0:10.000 -6 dB → 0:12.000 -inf dB`, a segment's shape after
  /// the point it starts at unless it is the default (`0:00.000 0 dB hold → …`); times as raw
  /// frames (`96000f`) when `frames` is set.
  public static func envelope(
    _ envelope: Envelope, sampleRate: Int, frames: Bool = false
  )
    -> String
  {
    envelope.points.enumerated().map { index, point in
      let time =
        frames
        ? "\(point.time.frames)f"
        : TimeValue.clock(FrameCount(point.time.frames), sampleRate: sampleRate)
      let gain = point.decibels.isFinite ? Gain(decibels: point.decibels).description : "-inf dB"
      let last = index == envelope.points.count - 1
      let shape = last || point.shape == .decibels ? "" : " \(point.shape.rawValue)"
      return "\(time) \(gain)\(shape)"
    }.joined(separator: " → ")
  }

  /// An automation lane (an effect parameter's, a pan's): `0:02.000 0 → 0:04.000 -12`, `hold`
  /// after the point a held segment starts at (`0:02.000 1 hold → …`).
  public static func automation(
    _ lane: ParameterEnvelope, sampleRate: Int, frames: Bool = false
  ) -> String {
    lane.points.enumerated().map { index, point in
      let time =
        frames
        ? "\(point.time.frames)f"
        : TimeValue.clock(FrameCount(point.time.frames), sampleRate: sampleRate)
      let last = index == lane.points.count - 1
      let shape = last || point.shape == .linear ? "" : " hold"
      return "\(time) \(number(Float(point.value)))\(shape)"
    }.joined(separator: " → ")
  }

  /// The markers as `tape ls` shows them: `m1 "chorus" 1:02.000 · m2 "outro" …`, each time as
  /// `clock` writes it.
  public static func markers(_ markers: [Marker], clock: (Int64) -> String) -> String {
    markers.map { "\($0.id) \"\(escaped($0.name))\" \(clock($0.position.frames))" }
      .joined(separator: " · ")
  }

  /// A send: `n1 → t5 "reverb" -6 dB pan C post-fader`, the destination's name when `project`
  /// is given.
  public static func send(_ send: Send, project: Project? = nil) -> String {
    let name = project?.track(send.to).map { " \"\(escaped($0.name))\"" } ?? ""
    return
      "\(send.id) → \(send.to)\(name) \(send.gain) pan \(pan(send.pan)) \(send.isPreFader ? "pre-fader" : "post-fader")"
  }

  /// `text` followed by spaces to `width` characters (as it is when it is that long already):
  /// a column of a listing.
  public static func padded(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
  }
}
