/// A file path as Linux sees it: bytes, not text.
///
/// A name need not be valid UTF-8 (a file copied from an old Latin-1 disk is `caf\xE9.wav`), and
/// `String` would replace such bytes with U+FFFD, naming a file that does not exist. A source
/// keeps its path as these bytes, the store writes them back unchanged (text when they are valid
/// UTF-8, a blob otherwise) and people see ``description``, where each byte that is not UTF-8
/// reads `\xE9`.
///
/// A path relative to the project's folder (``isAbsolute`` false) is resolved against it with
/// ``resolved(against:)``: a project moved with its audio keeps working.
///
/// ```swift
/// let path = RawPath(bytes: Array("caf".utf8) + [0xE9] + Array(".wav".utf8))
/// path.description  // "caf\xE9.wav"
/// path.string       // nil: not valid UTF-8
/// ```
public struct RawPath: Sendable, Hashable, Comparable, Codable, ExpressibleByStringInterpolation,
  CustomStringConvertible
{
  /// The path's bytes, without a terminating NUL.
  public let bytes: [UInt8]

  public init(bytes: [UInt8]) { self.bytes = bytes }

  public init(_ string: String) { bytes = Array(string.utf8) }

  public init(stringLiteral value: String) { self.init(value) }

  /// The path as text, when its bytes are valid UTF-8.
  public var string: String? { String(validating: bytes, as: UTF8.self) }

  public var isEmpty: Bool { bytes.isEmpty }

  public var isAbsolute: Bool { bytes.first == UInt8(ascii: "/") }

  /// For people: the path as it reads, each byte that is not part of valid UTF-8 written `\xE9`.
  public var description: String {
    if let string { return string }
    var text = ""
    var index = 0
    while index < bytes.count {
      if let (scalar, length) = Self.scalar(in: bytes, at: index) {
        text.unicodeScalars.append(scalar)
        index += length
      } else {
        text += "\\x" + String(bytes[index], radix: 16, uppercase: true).leftPadded(to: 2)
        index += 1
      }
    }
    return text
  }

  /// The last component (`kick.wav` of `/audio/kick.wav`).
  public var lastComponent: RawPath {
    let trimmed = bytes.last == UInt8(ascii: "/") ? bytes.dropLast() : bytes[...]
    guard let slash = trimmed.lastIndex(of: UInt8(ascii: "/")) else {
      return RawPath(bytes: Array(trimmed))
    }
    return RawPath(bytes: Array(trimmed[(slash + 1)...]))
  }

  /// The folder part (`/audio` of `/audio/kick.wav`, `.` of `kick.wav`).
  public var folder: RawPath {
    guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
    return slash == 0 ? "/" : RawPath(bytes: Array(bytes[..<slash]))
  }

  /// `self/other`, or `other` alone when it is absolute.
  public func appending(_ other: RawPath) -> RawPath {
    if other.isAbsolute || bytes.isEmpty { return other }
    if bytes.last == UInt8(ascii: "/") { return RawPath(bytes: bytes + other.bytes) }
    return RawPath(bytes: bytes + [UInt8(ascii: "/")] + other.bytes)
  }

  /// `.` and empty components dropped and `..` applied, by spelling alone (symlinks are not
  /// followed). `..` above the root stays at the root.
  public var normalized: RawPath {
    var parts: [ArraySlice<UInt8>] = []
    for part in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
      if part.elementsEqual([UInt8(ascii: ".")]) { continue }
      if part.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
        if let last = parts.last, !last.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
          parts.removeLast()
        } else if !isAbsolute {
          parts.append(part)
        }
        continue
      }
      parts.append(part)
    }
    let joined = Array(parts.joined(separator: [UInt8(ascii: "/")]))
    if isAbsolute { return RawPath(bytes: [UInt8(ascii: "/")] + joined) }
    return joined.isEmpty ? "." : RawPath(bytes: joined)
  }

  /// This path relative to `folder` when it lies inside it (both absolute and normalized), nil
  /// otherwise.
  public func relative(to folder: RawPath) -> RawPath? {
    let prefix = folder.bytes.last == UInt8(ascii: "/") ? folder.bytes : folder.bytes + [0x2F]
    guard bytes.count > prefix.count, bytes.starts(with: prefix) else { return nil }
    return RawPath(bytes: Array(bytes[prefix.count...]))
  }

  /// Where this path points for a project in `folder`: itself when absolute, else inside
  /// `folder`.
  public func resolved(against folder: RawPath) -> RawPath {
    isAbsolute ? self : folder.appending(self)
  }

  /// Calls `body` with the path as a NUL-terminated C string, for `open(2)` and friends.
  public func withCString<Result>(
    _ body: (UnsafePointer<CChar>) throws -> Result
  ) rethrows -> Result {
    try (bytes + [0]).withUnsafeBufferPointer { buffer in
      try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
    }
  }

  public static func < (lhs: RawPath, rhs: RawPath) -> Bool {
    lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
  }

  /// Valid UTF-8 encodes as a string; other bytes as an array of numbers.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let string = try? container.decode(String.self) {
      self.init(string)
    } else {
      self.init(bytes: try container.decode([UInt8].self))
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    if let string { try container.encode(string) } else { try container.encode(bytes) }
  }

  /// The Unicode scalar whose UTF-8 encoding starts at `index`, and its length; nil when the
  /// bytes there are not valid UTF-8.
  private static func scalar(in bytes: [UInt8], at index: Int) -> (Unicode.Scalar, Int)? {
    let lead = bytes[index]
    let length: Int
    switch lead {
    case 0x00...0x7F: return (Unicode.Scalar(lead), 1)
    case 0xC2...0xDF: length = 2
    case 0xE0...0xEF: length = 3
    case 0xF0...0xF4: length = 4
    default: return nil
    }
    guard index + length <= bytes.count,
      let text = String(validating: bytes[index..<index + length], as: UTF8.self),
      let scalar = text.unicodeScalars.first
    else { return nil }
    return (scalar, length)
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
