extension StringProtocol {
  /// The text without the blanks at either end: spaces (any Unicode space separator) and tabs,
  /// not newlines (what Foundation's `trimmingCharacters(in: .whitespaces)` removes).
  var trimmingBlanks: String {
    func isBlank(_ scalar: Unicode.Scalar) -> Bool {
      scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
    }
    let scalars = unicodeScalars
    guard let first = scalars.firstIndex(where: { !isBlank($0) }),
      let last = scalars.lastIndex(where: { !isBlank($0) })
    else { return "" }
    return String(String.UnicodeScalarView(scalars[first...last]))
  }
}
