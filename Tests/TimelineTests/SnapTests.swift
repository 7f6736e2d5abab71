import Foundation
import Testing
import Timeline

/// The rules of `--snap`: what each spelling means, and where a time lands.
@Suite("Snapping")
struct SnapTests {
  @Test(arguments: [
    ("clips", SnapRule.clipEdges), ("zero", .zeroCrossing), ("500ms", .grid(step: 24_000)),
    ("0.25s", .grid(step: 12_000)), ("1200f", .grid(step: 1_200)),
    ("1/4@120bpm", .grid(step: 24_000)), ("1/8@90bpm", .grid(step: 16_000)),
    ("3/4@100bpm", .grid(step: 86_400)),
  ])
  func spellings(text: String, rule: SnapRule) throws {
    #expect(try SnapRule(parsing: text, sampleRate: 48_000) == rule)
  }

  @Test(arguments: [
    "x", "", "0", "0ms", "-1s", "1/0@120bpm", "0/4@120bpm", "1/4@0bpm", "1/4", "nan",
  ])
  func nonsenseIsRefused(text: String) {
    #expect(throws: TimelineError.invalidSnap(text)) {
      try SnapRule(parsing: text, sampleRate: 48_000)
    }
  }

  /// The nearest line, half-way to the later one, a fractional step rounded to a frame.
  @Test func gridLines() {
    #expect(SnapRule.nearestLine(to: 30_000, step: 24_000) == 24_000)
    #expect(SnapRule.nearestLine(to: 36_000, step: 24_000) == 48_000)
    #expect(SnapRule.nearestLine(to: 11_999, step: 24_000) == 0)
    // 1/4@130bpm at 48 kHz: 22153.846… frames; the third line is 66461.5… → 66462.
    #expect(SnapRule.nearestLine(to: 66_000, step: 48_000 * 60 / 130) == 66_462)
  }

  /// A clip edge within 100 ms pulls the time, on any track; the edited clip's own edges do
  /// not; a tie goes to the earlier edge; farther, the time stays.
  @Test func clipEdges() {
    let project = Fixture.project(
      [Fixture.clip(1, start: 0, length: 48_000), Fixture.clip(2, start: 96_000, length: 1_000)],
      secondTrack: [Fixture.clip(3, start: 50_000, length: 10_000)])
    let snap = { (frame: Int64, excluding: Int64?) in
      project.snapped(
        FramePosition(frame), to: .clipEdges, excluding: excluding.map { Clip.ID($0) }
      ).frames
    }
    #expect(snap(47_000, nil) == 48_000)
    #expect(snap(49_000, nil) == 48_000)  // 1 000 from c1's end, 1 000 from c3's start: earlier
    #expect(snap(49_500, nil) == 50_000)
    #expect(snap(49_500, 3) == 48_000)
    #expect(snap(60_000 + 4_800, nil) == 60_000)
    #expect(snap(60_000 + 4_801, nil) == 64_801)
    #expect(snap(96_500, 2) == 96_500)
    #expect(project.snapped(FramePosition(30_000), to: .zeroCrossing) == FramePosition(30_000))
  }

  /// The sample where a signal is 0 or changes sign nearest the centre, within the window.
  @Test func zeroCrossings() {
    let sine = (0..<1_000).map { sin(Double($0) * 2 * Double.pi / 100 + 0.3) }
    // Crossings where the phase passes a multiple of π: just after 45.2, 95.2, 145.2…
    #expect(ZeroCrossing.nearest(in: sine, center: 90, window: 48) == 96)
    #expect(ZeroCrossing.nearest(in: sine, center: 130, window: 48) == 146)
    #expect(ZeroCrossing.nearest(in: sine, center: 120, window: 10) == nil)
    #expect(ZeroCrossing.nearest(in: [1, 1, 0, 1, 1], center: 0, window: 4) == 2)
    // A crossing either side, one frame away: the earlier.
    #expect(ZeroCrossing.nearest(in: [1, -1, -1, 1, 1], center: 2, window: 2) == 1)
  }
}
