/// The small pieces every picture is written with: numbers in a fixed form and text that is
/// always valid XML.
enum SVGText {
  /// `value` with at most three decimals and no trailing zeros (`12`, `12.5`, `-0.125`): the
  /// same bytes for the same value on every machine, unlike a locale's or `%g`'s.
  static func number(_ value: Double) -> String {
    guard value.isFinite else { return "0" }
    let thousandths = Int64((value * 1_000).rounded())
    let negative = thousandths < 0
    let magnitude = thousandths.magnitude
    var text = "\(magnitude / 1_000)"
    var fraction = magnitude % 1_000
    if fraction != 0 {
      var digits = 3
      while fraction % 10 == 0 {
        fraction /= 10
        digits -= 1
      }
      let padded = String(repeating: "0", count: digits - "\(fraction)".count) + "\(fraction)"
      text += "." + padded
    }
    return negative ? "-" + text : text
  }

  /// `text` as it may stand in an XML text node or a quoted attribute value.
  ///
  /// XML 1.0 has no way at all to hold most control characters (not even as `&#1;`), nor
  /// U+FFFE and U+FFFF: each is written as `tape ls` shows it, `\u{7}`, so a name or label
  /// holding anything still makes a valid file and stays readable. Then `&`, `<`, `>`, `"` and
  /// `'` become entities.
  static func escaped(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&apos;"
      case _
      where scalar.properties.generalCategory == .control || scalar.value == 0xFFFE
        || scalar.value == 0xFFFF:
        out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  /// `text` cut to at most `characters` characters, ending in `…` when cut; empty when not
  /// even one character and the ellipsis fit.
  static func truncated(_ text: String, toCharacters characters: Int) -> String {
    guard text.count > characters else { return text }
    guard characters >= 2 else { return "" }
    return String(text.prefix(characters - 1)) + "…"
  }

  /// How many characters of a `size`-pixel sans-serif font fit in `width` pixels (an average
  /// advance of 0.62 em, DejaVu Sans's for lowercase text and digits).
  static func characters(fitting width: Double, size: Double) -> Int {
    max(0, Int(width / (size * 0.62)))
  }
}
