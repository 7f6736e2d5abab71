import Testing
import Timeline

@Suite("Strip silence: the cuts and their commands")
struct SilenceCutsTests {
  @Test("each quiet stretch less the pad at each end; those too short for two pads are kept")
  func cuts() {
    let quiet = [
      FrameRange(start: FramePosition(100), end: FramePosition(300)),
      FrameRange(start: FramePosition(400), end: FramePosition(450)),
      FrameRange(start: FramePosition(500), end: FramePosition(541)),
    ]
    #expect(
      Project.silenceCuts(quiet, pad: FrameCount(20)) == [
        FrameRange(start: FramePosition(120), end: FramePosition(280)),
        FrameRange(start: FramePosition(420), end: FramePosition(430)),
        FrameRange(start: FramePosition(520), end: FramePosition(521)),
      ])
    #expect(
      Project.silenceCuts(quiet, pad: FrameCount(25)) == [
        FrameRange(start: FramePosition(125), end: FramePosition(275))
      ])
    #expect(Project.silenceCuts(quiet, pad: .zero) == quiet)
  }

  /// Three ranges cut from a track of clips (one range inside a clip, one over a gap and an
  /// edge, one over a fade): every frame plays what it played before with the ranges removed
  /// (closed up with ripple), by the tests' own model of playback; the other track is untouched
  /// when only the first is named.
  @Test(arguments: [false, true])
  func cutRanges(ripple: Bool) throws {
    let project = Fixture.project(
      [
        Fixture.clip(1, start: 0, length: 200),
        Fixture.clip(2, start: 260, crop: 1_000, length: 300, fadeIn: 40, fadeOut: 60),
      ],
      secondTrack: [Fixture.clip(3, start: 0, length: 600, source: 2)])
    let ranges = [
      FrameRange(start: FramePosition(50), end: FramePosition(80)),
      FrameRange(start: FramePosition(180), end: FramePosition(280)),
      FrameRange(start: FramePosition(500), end: FramePosition(530)),
    ]
    var next: Int64 = 10
    let commands = try project.cutRanges(ranges, tracks: [Track.ID(1)], ripple: ripple) {
      defer { next += 1 }
      return Clip.ID(next)
    }
    let edited = try project.applying(commands)
    var expected = RangeEditsTests.modelPlayback(project)[Track.ID(1)] ?? [:]
    for range in ranges.reversed() {
      expected = RangeEditsTests.expected(
        expected, cutting: range.start.frames, range.end.frames, ripple: ripple)
    }
    #expect(RangeEditsTests.modelPlayback(edited)[Track.ID(1)] == expected)
    #expect(edited.tracks[1] == project.tracks[1])
  }
}
