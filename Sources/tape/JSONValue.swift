import Foundation
import Interchange

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
        JSON.write(string: key, into: &out)
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
    case .string(let text): JSON.write(string: text, into: &out)
    case .int(let value): out += String(value)
    case .double(let value): out += value.isFinite ? "\(value)" : "null"
    case .bool(let value): out += value ? "true" : "false"
    case .null: out += "null"
    }
  }
}
