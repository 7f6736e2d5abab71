public import Foundation

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// An SVG (any XML) document as a tree, parsed by libxml2 through FoundationXML's `XMLParser`,
/// which refuses anything that is not well-formed XML: what the picture tests read pictures with.
public final class SVGNode: @unchecked Sendable {
  public let name: String
  public let attributes: [String: String]
  public private(set) var children: [SVGNode] = []
  public private(set) var text = ""
  public private(set) weak var parent: SVGNode?

  init(name: String, attributes: [String: String], parent: SVGNode?) {
    self.name = name
    self.attributes = attributes
    self.parent = parent
  }

  /// Parses `data`; throws with the parser's message (and line) when it is not well-formed.
  public static func parse(_ data: Data) throws -> SVGNode {
    let builder = Builder()
    let parser = XMLParser(data: data)
    parser.delegate = builder
    guard parser.parse(), let root = builder.root else {
      throw ReferenceError(
        message:
          "not well-formed XML at line \(parser.lineNumber), column \(parser.columnNumber): \(parser.parserError.map { "\($0)" } ?? "no root")"
      )
    }
    return root
  }

  public static func parse(file path: String) throws -> SVGNode {
    try parse(try Data(contentsOf: URL(fileURLWithPath: path)))
  }

  /// This node's classes (`class="clip moved"` → `["clip", "moved"]`).
  public var classes: [String] {
    (attributes["class"] ?? "").split(separator: " ").map(String.init)
  }

  /// Every node below this one (not itself), depth first, in document order.
  public var descendants: [SVGNode] {
    children.flatMap { [$0] + $0.descendants }
  }

  /// The descendants with class `name`.
  public func all(_ name: String) -> [SVGNode] {
    descendants.filter { $0.classes.contains(name) }
  }

  /// The first child with class `name`.
  public func first(_ name: String) -> SVGNode? {
    descendants.first { $0.classes.contains(name) }
  }

  /// All the text in this node and below, in order.
  public var allText: String {
    text + children.map(\.allText).joined()
  }

  /// A numeric attribute.
  public func number(_ attribute: String) -> Double? {
    attributes[attribute].flatMap(Double.init)
  }

  /// The points of a path made of `M x y`/`L x y` commands (others are not expected).
  public var pathPoints: [(x: Double, y: Double)] {
    var points: [(x: Double, y: Double)] = []
    let d = attributes["d"] ?? ""
    var numbers: [Double] = []
    var current = ""
    func flush() {
      if let value = Double(current) { numbers.append(value) }
      current = ""
    }
    for character in d {
      if character.isNumber || character == "." || (character == "-" && current.isEmpty) {
        current.append(character)
      } else {
        flush()
        if character == "M" || character == "L" || character == "Z" {
          if numbers.count == 2 { points.append((numbers[0], numbers[1])) }
          numbers = []
        }
      }
    }
    flush()
    if numbers.count == 2 { points.append((numbers[0], numbers[1])) }
    return points
  }

  private final class Builder: NSObject, XMLParserDelegate {
    var root: SVGNode?
    var current: SVGNode?

    func parser(
      _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
      qualifiedName: String?, attributes: [String: String] = [:]
    ) {
      let node = SVGNode(name: elementName, attributes: attributes, parent: current)
      if let current { current.children.append(node) } else { root = node }
      current = node
    }

    func parser(
      _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
      qualifiedName: String?
    ) {
      current = current?.parent
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
      current?.text += string
    }
  }
}
