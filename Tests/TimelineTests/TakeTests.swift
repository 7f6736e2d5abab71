import Testing

@testable import Timeline

/// ``Take/passes(landing:range:captured:minimumPartial:)``: which stretch of a looped
/// recording's capture each pass's take is, written out by hand for each layout.
struct TakePassTests {
  static func passes(
    landing: Int64, captured: Int64, minimum: Int64 = 1_000
  ) -> [[Int64]] {
    Take.passes(
      landing: landing, range: FrameRange(start: 10_000, count: 5_000), captured: captured,
      minimumPartial: minimum
    ).map { pass -> [Int64] in
      [pass.timelineStart.frames, pass.sourceRange.start.frames, pass.sourceRange.count.frames]
    }
  }

  @Test func passesAreConsecutiveStretchesOfTheCapture() {
    // Capture frame 0 heard at 9,700: the range's start is frame 300 of it.
    let three = Self.passes(landing: 9_700, captured: 300 + 15_000 + 999)
    #expect(
      three == [
        [10_000, 300, 5_000], [10_000, 5_300, 5_000], [10_000, 10_300, 5_000],
      ])
    // A last pass of 1,000 frames (the minimum) is kept, cut short.
    let partial = Self.passes(landing: 9_700, captured: 300 + 15_000 + 1_000)
    #expect(partial.last == [10_000, 15_300, 1_000])
    #expect(partial.count == 4)
  }

  @Test func aCaptureThatBeganLateStartsItsFirstTakeLater() {
    // Capture frame 0 heard at 10,400: pass 1 from 10,400, 4,600 frames.
    let late = Self.passes(landing: 10_400, captured: 9_600)
    #expect(late == [[10_400, 0, 4_600], [10_000, 4_600, 5_000]])
  }

  @Test func aShortCaptureIsOneTakeAndNoCaptureNone() {
    let short = Self.passes(landing: 9_700, captured: 800)
    #expect(short == [[10_000, 300, 500]])
    #expect(Self.passes(landing: 9_700, captured: 0).isEmpty)
    #expect(Self.passes(landing: 9_700, captured: 200).isEmpty, "nothing of the range")
  }
}

/// ``Take/place(gap:in:)``: where an overrun in a loop's capture lands, by hand.
struct TakeGapTests {
  @Test func aGapLandsInThePassThatHoldsItAtItsPlaceInTheRange() throws {
    // The range 10,000–15,000; capture frame 300 heard at the range's start: pass k is the
    // capture from 300 + 5,000·k.
    let passes = Take.passes(
      landing: 9_700, range: FrameRange(start: 10_000, count: 5_000), captured: 15_300,
      minimumPartial: 1_000)
    #expect(passes.count == 3)
    let placed = { (gap: Int64) in
      Take.place(gap: gap, in: passes).map { [Int64($0.pass), $0.position.frames] }
    }
    #expect(placed(300 + 5_000 + 1_234) == [1, 11_234], "pass 2, 1,234 frames into the range")
    #expect(placed(300 + 10_000 + 4_999) == [2, 14_999])
    #expect(placed(300 + 5_000) == [1, 10_000], "on a border: the later pass, at its start")
    #expect(placed(15_300) == [2, 15_000], "after the last frame: the last pass's end")
    #expect(placed(100) == nil, "before the first pass")
  }
}

/// ``Project/choosingTake(_:)`` when the take that plays was split: refused, naming the part,
/// where it would have left the part playing over the chosen take (found by review).
struct TakeChoiceTests {
  @Test func aTakeThatPlaysInPartsIsNotSwappedForAnother() throws {
    let source = Source(
      id: Source.ID(1), path: "/take.wav", contentHash: "t", sampleRate: 48_000, channels: 1,
      frameCount: 300_000)
    var project = Project(
      sampleRate: 48_000, channels: 1, sources: [source],
      tracks: [Track(id: Track.ID(1), name: "Voice")])
    let range = FrameRange(start: 48_000, count: 96_000)
    let passes = (0..<3).map { pass in
      Clip(
        id: Clip.ID(Int64(pass + 1)), source: source.id, timelineStart: 48_000,
        sourceRange: FrameRange(start: FramePosition(Int64(pass) * 96_000), count: 96_000))
    }
    project = try project.applying(project.addingTakes(passes, track: Track.ID(1), range: range))
    // Whole, the choice swaps the two.
    let chosen = try project.applying(project.choosingTake(Clip.ID(1)))
    #expect(chosen.tracks[0].clips.map(\.id) == [Clip.ID(1)])
    // Split at 1.5 s: c3 and its right part c9 play; choosing c1 is refused, nothing made.
    project = try project.applying(
      project.splitClip(Clip.ID(3), at: 72_000, newID: Clip.ID(9)))
    #expect(throws: TimelineError.takeInParts(playing: Clip.ID(3), parts: [Clip.ID(9)])) {
      try project.choosingTake(Clip.ID(1))
    }
  }
}
