import TerminalViews
import Testing

/// Keys that arrive faster than `play` and `scrub` read them: a 64-byte read can end in the
/// middle of an arrow's ESC [ C, which was dropped (22 → pressed at once moved 21 × 5 s).
@Suite struct KeyInputTests {
  private let right: [UInt8] = [0x1B, UInt8(ascii: "["), UInt8(ascii: "C")]

  /// Every arrow of a burst split into 64-byte reads arrives whole, in order.
  @Test func anArrowSplitBetweenReadsIsKeptWhole() {
    let typed = Array([[UInt8]](repeating: right, count: 22).joined())
    for size in [1, 2, 4, 63, 64, 65] {
      var input = KeyInput()
      var handled: [UInt8] = []
      for start in stride(from: 0, to: typed.count, by: size) {
        let piece = input.take(typed[start..<min(typed.count, start + size)])
        // Each read hands on whole arrows only.
        #expect(piece.count % 3 == 0, "read of \(size): \(piece)")
        handled += piece
      }
      #expect(handled == typed, "reads of \(size) bytes")
    }
  }

  /// Only what could start a control sequence is held: plain keys, a whole sequence and ESC
  /// followed by a key pass at once.
  @Test func plainKeysPassAtOnce() {
    var input = KeyInput()
    #expect(input.take(Array(" ql".utf8)) == Array(" ql".utf8))
    #expect(input.take(right + [0x1B]) == right)
    #expect(input.take([UInt8(ascii: "[")]) == [])
    #expect(input.take([UInt8(ascii: "D")]) == [0x1B, UInt8(ascii: "["), UInt8(ascii: "D")])
    #expect(input.take([0x1B, UInt8(ascii: "q")]) == [0x1B, UInt8(ascii: "q")])
    #expect(input.take(Array("\u{1B}[5".utf8)) == [])
    #expect(input.take([UInt8(ascii: "~")]) == Array("\u{1B}[5~".utf8))
  }
}
