import Testing
import Timeline

@Suite("FrameRange")
struct FrameRangeTests {
  @Test func endIsStartPlusCount() {
    let range = FrameRange(start: 100, count: 50)
    #expect(range.end == FramePosition(150))
    #expect(FrameRange(start: 100, end: 150) == range)
  }

  @Test func containsIsHalfOpen() {
    let range = FrameRange(start: 10, count: 5)
    #expect(!range.contains(FramePosition(9)))
    #expect(range.contains(FramePosition(10)))
    #expect(range.contains(FramePosition(14)))
    #expect(!range.contains(FramePosition(15)))
    #expect(range.contains(FrameRange(start: 10, count: 5)))
    #expect(!range.contains(FrameRange(start: 10, count: 6)))
  }

  @Test func editsReturnNewRanges() {
    let range = FrameRange(start: 10, count: 20)
    #expect(range.withStart(15) == FrameRange(start: 15, count: 15))
    #expect(range.withEnd(12) == FrameRange(start: 10, count: 2))
    #expect(range.movedTo(100) == FrameRange(start: 100, count: 20))
  }

  @Test(
    arguments: [
      (
        FrameRange(start: 0, count: 10), FrameRange(start: 5, count: 10),
        FrameRange(start: 5, count: 5)
      ),
      (FrameRange(start: 0, count: 10), FrameRange(start: 10, count: 10), nil),
      (
        FrameRange(start: 0, count: 10), FrameRange(start: 2, count: 3),
        FrameRange(start: 2, count: 3)
      ),
      (
        FrameRange(start: 20, count: 10), FrameRange(start: 0, count: 21),
        FrameRange(start: 20, count: 1)
      ),
    ] as [(FrameRange, FrameRange, FrameRange?)])
  func intersection(a: FrameRange, b: FrameRange, expected: FrameRange?) {
    #expect(a.intersection(b) == expected)
    #expect(b.intersection(a) == expected)
  }

  @Test func positionsAndCountsDoArithmetic() {
    #expect(FramePosition(10) + FrameCount(5) == FramePosition(15))
    #expect(FramePosition(10) - FramePosition(4) == FrameCount(6))
    #expect(FrameCount(3) + FrameCount(4) == FrameCount(7))
  }
}
