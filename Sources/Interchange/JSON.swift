/// A JSON value whose objects keep their keys in the order written or read: OTIO documents,
/// written in the order the reference implementation writes them and read with the errors a
/// person can act on ("line 12: expected ',' or '}'"), and every `--json` output of `tape`
/// (``line``), whose keys are a documented contract in the order docs/reference/json.md lists
/// them.
///
/// ```swift
/// let value = try JSON(parsing: #"{"name": "edit", "rate": 48000.0}"#)
/// value["rate"]?.number  // 48000
/// JSON.object([("version", .integer(12)), ("gainDB", .number(-6))]).line
/// // {"version": 12, "gainDB": -6.0}
/// ```
public enum JSON: Sendable, Hashable {
  case object([Member])
  case array([JSON])
  case string(String)
  case number(Double)
  /// A count or a frame position: written without a fraction (`48000`, where ``number(_:)``
  /// writes `48000.0`), so a typed reader takes it as an integer. Reading never makes one: a
  /// value holding one is not equal to itself written and read back.
  case integer(Int64)
  case bool(Bool)
  case null

  /// One key and its value in an object.
  public struct Member: Sendable, Hashable {
    public var key: String
    public var value: JSON

    public init(_ key: String, _ value: JSON) {
      self.key = key
      self.value = value
    }
  }

  /// An object from its members in order.
  public static func object(_ members: KeyValuePairs<String, JSON>) -> JSON {
    .object(members.map { Member($0.key, $0.value) })
  }

  /// An object from its members in order, as (key, value) pairs: for members built one by one
  /// (`fields + [("track", .string("t1"))]`). An empty object is `.object([:])` (`[]` could be
  /// either form).
  public static func object(_ members: [(String, JSON)]) -> JSON {
    .object(members.map { Member($0.0, $0.1) })
  }

  /// The value of `key` when this is an object holding it (the first such member).
  public subscript(key: String) -> JSON? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.key == key }?.value
  }

  /// The value of a number (an ``integer(_:)`` too, as a Double).
  public var number: Double? {
    switch self {
    case .number(let value): value
    case .integer(let value): Double(value)
    default: nil
    }
  }

  public var string: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  public var bool: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }

  public var array: [JSON]? {
    if case .array(let value) = self { return value }
    return nil
  }

  public var members: [Member]? {
    if case .object(let value) = self { return value }
    return nil
  }

  public var isNull: Bool { self == .null }
}

// MARK: Writing

extension JSON {
  /// The value as indented JSON text (4 spaces, as the reference implementation writes),
  /// ending in a newline. An integral ``number(_:)`` is written with `.0`, so that every time
  /// value reads as the double OTIO declares it; an ``integer(_:)`` without.
  public func rendered() -> String {
    var out = ""
    render(into: &out, indent: 0)
    out += "\n"
    return out
  }

  private func render(into out: inout String, indent: Int) {
    let pad = String(repeating: " ", count: indent + 4)
    switch self {
    case .object(let members):
      guard !members.isEmpty else {
        out += "{}"
        return
      }
      out += "{\n"
      for (index, member) in members.enumerated() {
        out += pad
        Self.write(string: member.key, into: &out)
        out += ": "
        member.value.render(into: &out, indent: indent + 4)
        out += index == members.count - 1 ? "\n" : ",\n"
      }
      out += String(repeating: " ", count: indent) + "}"
    case .array(let values):
      guard !values.isEmpty else {
        out += "[]"
        return
      }
      out += "[\n"
      for (index, value) in values.enumerated() {
        out += pad
        value.render(into: &out, indent: indent + 4)
        out += index == values.count - 1 ? "\n" : ",\n"
      }
      out += String(repeating: " ", count: indent) + "]"
    case .string(let text): Self.write(string: text, into: &out)
    case .number(let value): out += Self.text(of: value)
    case .integer(let value): out += String(value)
    case .bool(let value): out += value ? "true" : "false"
    case .null: out += "null"
    }
  }

  /// The value as one line of JSON, members separated by `, ` and keys by `: ` (what every
  /// `tape … --json` prints): a ``number(_:)`` as Swift writes a Double (`-6.0`, `0.3`,
  /// `1e-05`), `null` for one JSON cannot hold; an ``integer(_:)`` without a fraction.
  public var line: String {
    var out = ""
    renderLine(into: &out)
    return out
  }

  private func renderLine(into out: inout String) {
    switch self {
    case .object(let members):
      out += "{"
      for (index, member) in members.enumerated() {
        if index > 0 { out += ", " }
        Self.write(string: member.key, into: &out)
        out += ": "
        member.value.renderLine(into: &out)
      }
      out += "}"
    case .array(let values):
      out += "["
      for (index, value) in values.enumerated() {
        if index > 0 { out += ", " }
        value.renderLine(into: &out)
      }
      out += "]"
    case .string(let text): Self.write(string: text, into: &out)
    case .number(let value): out += value.isFinite ? "\(value)" : "null"
    case .integer(let value): out += String(value)
    case .bool(let value): out += value ? "true" : "false"
    case .null: out += "null"
    }
  }

  /// `48000.0`, `-3.5`, `0.1`; `null` for a value JSON cannot hold.
  static func text(of value: Double) -> String {
    guard value.isFinite else { return "null" }
    if value == value.rounded(), abs(value) < 1e15 { return "\(Int64(value)).0" }
    return "\(value)"
  }

  /// Appends `text` to `out` as a JSON string: quoted, with `"`, `\\` and control characters
  /// escaped (the only escaping JSON needs; `tape`'s own `--json` writer uses it too).
  public static func write(string text: String, into out: inout String) {
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

// MARK: Reading

/// JSON text that does not parse: where and why.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
  /// 1-based line of the offending character.
  public let line: Int
  public let reason: String

  public var description: String { "line \(line): \(reason)" }
}

extension JSON {
  /// Parses JSON text (RFC 8259; `NaN`, `Infinity` and `-Infinity` are taken as numbers, since
  /// Python's `json`, which OTIO tools often use, writes them). Nesting deeper than 512 levels
  /// is refused rather than overflowing the stack.
  public init(parsing text: String) throws(JSONSyntaxError) {
    var parser = JSONParser(bytes: Array(text.utf8))
    self = try parser.parseDocument()
  }
}

/// A recursive-descent parser over UTF-8 bytes.
private struct JSONParser {
  let bytes: [UInt8]
  var index = 0
  var depth = 0

  init(bytes: [UInt8]) {
    self.bytes = bytes
  }

  func fail(_ reason: String) -> JSONSyntaxError {
    let line = 1 + bytes[..<min(index, bytes.count)].lazy.filter { $0 == UInt8(ascii: "\n") }.count
    return JSONSyntaxError(line: line, reason: reason)
  }

  mutating func parseDocument() throws(JSONSyntaxError) -> JSON {
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    skipBlanks()
    guard index < bytes.count else { throw fail("the file is empty") }
    let value = try parseValue()
    skipBlanks()
    guard index == bytes.count else { throw fail("text after the end of the JSON value") }
    return value
  }

  mutating func skipBlanks() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  var described: String {
    guard index < bytes.count else { return "the end of the file" }
    let byte = bytes[index]
    return byte >= 0x21 && byte < 0x7F ? "'\(Character(UnicodeScalar(byte)))'" : "byte \(byte)"
  }

  mutating func parseValue() throws(JSONSyntaxError) -> JSON {
    guard index < bytes.count else { throw fail("the file ends where a value should be") }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"): return try literal("true", .bool(true))
    case UInt8(ascii: "f"): return try literal("false", .bool(false))
    case UInt8(ascii: "n"): return try literal("null", .null)
    case UInt8(ascii: "N"): return try literal("NaN", .number(.nan))
    case UInt8(ascii: "I"): return try literal("Infinity", .number(.infinity))
    default: return .number(try parseNumber())
    }
  }

  mutating func literal(_ word: String, _ value: JSON) throws(JSONSyntaxError) -> JSON {
    let expected = Array(word.utf8)
    guard bytes[index...].starts(with: expected) else {
      throw fail("expected a value, found \(described)")
    }
    index += expected.count
    return value
  }

  mutating func nest() throws(JSONSyntaxError) {
    depth += 1
    guard depth <= 512 else { throw fail("nested more than 512 levels deep") }
  }

  mutating func parseObject() throws(JSONSyntaxError) -> JSON {
    try nest()
    defer { depth -= 1 }
    index += 1
    var members: [JSON.Member] = []
    skipBlanks()
    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
      index += 1
      return .object(members)
    }
    while true {
      skipBlanks()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
        throw fail("expected a key in quotes, found \(described)")
      }
      let key = try parseString()
      skipBlanks()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
        throw fail("expected ':' after the key \"\(key)\", found \(described)")
      }
      index += 1
      skipBlanks()
      members.append(JSON.Member(key, try parseValue()))
      skipBlanks()
      guard index < bytes.count else { throw fail("the file ends inside an object") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard bytes[index] == UInt8(ascii: "}") else {
        throw fail("expected ',' or '}' in an object, found \(described)")
      }
      index += 1
      return .object(members)
    }
  }

  mutating func parseArray() throws(JSONSyntaxError) -> JSON {
    try nest()
    defer { depth -= 1 }
    index += 1
    var values: [JSON] = []
    skipBlanks()
    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
      index += 1
      return .array(values)
    }
    while true {
      skipBlanks()
      values.append(try parseValue())
      skipBlanks()
      guard index < bytes.count else { throw fail("the file ends inside an array") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard bytes[index] == UInt8(ascii: "]") else {
        throw fail("expected ',' or ']' in an array, found \(described)")
      }
      index += 1
      return .array(values)
    }
  }

  mutating func parseNumber() throws(JSONSyntaxError) -> Double {
    let start = index
    if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
      index += 1
      if bytes[index...].starts(with: Array("Infinity".utf8)) {
        index += 8
        return -.infinity
      }
    }
    while index < bytes.count,
      (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index])
        || [
          UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"),
          UInt8(ascii: "-"),
        ].contains(bytes[index])
    {
      index += 1
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    guard index > start, let value = Double(text), text.first != "+", text.first != "." else {
      index = start
      throw fail("expected a value, found \(described)")
    }
    return value
  }

  mutating func parseString() throws(JSONSyntaxError) -> String {
    index += 1
    // Most strings hold no escape: decoded from the bytes at once.
    var end = index
    while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"),
      bytes[end] >= 0x20
    {
      end += 1
    }
    if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
      defer { index = end + 1 }
      return String(decoding: bytes[index..<end], as: UTF8.self)
    }
    var scalars = String.UnicodeScalarView()
    var run: [UInt8] = []
    func flush() {
      if !run.isEmpty {
        scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
        run.removeAll()
      }
    }
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        flush()
        return String(scalars)
      case UInt8(ascii: "\\"):
        flush()
        index += 1
        guard index < bytes.count else { throw fail("the file ends inside a string") }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""): scalars.append("\"")
        case UInt8(ascii: "\\"): scalars.append("\\")
        case UInt8(ascii: "/"): scalars.append("/")
        case UInt8(ascii: "b"): scalars.append("\u{8}")
        case UInt8(ascii: "f"): scalars.append("\u{C}")
        case UInt8(ascii: "n"): scalars.append("\n")
        case UInt8(ascii: "r"): scalars.append("\r")
        case UInt8(ascii: "t"): scalars.append("\t")
        case UInt8(ascii: "u"):
          var code = try hex4()
          if (0xD800..<0xDC00).contains(code), bytes[index...].starts(with: Array("\\u".utf8)) {
            index += 2
            let low = try hex4()
            if (0xDC00..<0xE000).contains(low) {
              code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
          }
          scalars.append(UnicodeScalar(code) ?? "\u{FFFD}")
        default:
          index -= 1
          throw fail("\(described) is not an escape in a string")
        }
      case 0..<0x20:
        throw fail("a control character (byte \(byte)) inside a string")
      default:
        run.append(byte)
        index += 1
      }
    }
    throw fail("the file ends inside a string")
  }

  mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
    guard index + 4 <= bytes.count,
      let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
    else { throw fail("expected four hex digits after \\u") }
    index += 4
    return code
  }
}
