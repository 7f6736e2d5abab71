import Foundation

/// A JSON value whose objects keep their keys in the order written, so `--json` output reads
/// like the documented contract (Foundation's encoder on Linux orders keys arbitrarily).
enum JSONValue: Equatable {
  case object([(String, JSONValue)])
  case array([JSONValue])
  case string(String)
  case int(Int64)
  case double(Double)
  case bool(Bool)
  case null

  static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.rendered == rhs.rendered }

  /// Compact JSON text.
  var rendered: String {
    var out = ""
    render(into: &out)
    return out
  }

  private func render(into out: inout String) {
    switch self {
    case .object(let members):
      out += "{"
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { out += ", " }
        Self.string(key, into: &out)
        out += ": "
        value.render(into: &out)
      }
      out += "}"
    case .array(let values):
      out += "["
      for (index, value) in values.enumerated() {
        if index > 0 { out += ", " }
        value.render(into: &out)
      }
      out += "]"
    case .string(let text): Self.string(text, into: &out)
    case .int(let value): out += String(value)
    case .double(let value): out += value.isFinite ? "\(value)" : "null"
    case .bool(let value): out += value ? "true" : "false"
    case .null: out += "null"
    }
  }

  private static func string(_ text: String, into out: inout String) {
    out += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    out += "\""
  }
}
