#if canImport(Glibc)
  import Glibc
#endif

/// Columns of a terminal that text takes: a CJK character or most emoji take two, a combining
/// mark none. What `wcwidth` says in a UTF-8 locale (C.UTF-8, whatever the user's locale is),
/// so a line cut to a width never wraps.
///
/// ```swift
/// TerminalText.width("声部 1")  // 6
/// TerminalText.prefix("声部 1", columns: 3)  // "声"
/// ```
public enum TerminalText {
  /// A UTF-8 locale for `wcwidth`, made once; nil where the system has none.
  nonisolated(unsafe) private static let utf8: locale_t? = newlocale(
    LC_CTYPE_MASK, "C.UTF-8", nil)
  /// glibc's `wcwidth` (its header declares it only for X/Open, which Swift's Glibc module
  /// is not built for).
  private static let wcwidth: (@convention(c) (wchar_t) -> Int32)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "wcwidth") else {
      return nil
    }
    return unsafeBitCast(symbol, to: (@convention(c) (wchar_t) -> Int32).self)
  }()

  /// The columns `text` takes.
  public static func width(_ text: some StringProtocol) -> Int {
    withUTF8Locale { text.reduce(0) { $0 + columns($1) } }
  }

  /// The longest start of `text` that takes at most `columns` columns.
  public static func prefix(_ text: some StringProtocol, columns limit: Int) -> String {
    withUTF8Locale {
      var used = 0
      var end = text.startIndex
      for index in text.indices {
        let next = used + columns(text[index])
        guard next <= limit else { break }
        used = next
        end = text.index(after: index)
      }
      return String(text[..<end])
    }
  }

  /// `text` cut or padded with spaces to exactly `columns` columns (a wide character that
  /// would straddle the edge is left out, and its column padded).
  public static func fit(_ text: some StringProtocol, columns limit: Int) -> String {
    let cut = prefix(text, columns: limit)
    return cut + String(repeating: " ", count: max(0, limit - width(cut)))
  }

  /// One character's columns (in the UTF-8 locale): its scalars' `wcwidth`s, a control or
  /// unknown scalar counted as one (it is shown as one replacement).
  private static func columns(_ character: Character) -> Int {
    if character.isASCII { return 1 }
    var total = 0
    for scalar in character.unicodeScalars {
      guard utf8 != nil, let wcwidth else {
        total += scalar.properties.generalCategory == .nonspacingMark ? 0 : 1
        continue
      }
      let width = wcwidth(wchar_t(bitPattern: scalar.value))
      total += width < 0 ? 1 : Int(width)
    }
    return max(total, 0)
  }

  /// Runs `body` with this thread's locale set to the UTF-8 one, then puts it back.
  private static func withUTF8Locale<T>(_ body: () -> T) -> T {
    guard let utf8 else { return body() }
    let previous = uselocale(utf8)
    defer { uselocale(previous) }
    return body()
  }
}
