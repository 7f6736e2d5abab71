import Testing
import Timeline

/// Crossfades with handles: which audio each side plays past the join, and what is said when a
/// side has too little.
@Suite("Crossfades")
struct CrossfadeTests {
  /// A ripple cut of 100–200 with a 40-frame crossfade of one clip across it: the left part
  /// plays 20 frames past the join over the removed audio, the right part starts 20 before it
  /// over removed audio too, both fades 40 frames with the chosen curve; the whole length.
  @Test func aRippleCutOverlapsBothSidesOverTheRemovedAudio() throws {
    let project = Fixture.project([Fixture.clip(1, start: 0, crop: 1_000, length: 400)])
    let cut = Crossfade(length: 40, curve: .sCurve)
    let after = try project.applying(
      project.cutRange(FrameRange(start: 100, end: 200), ripple: true, crossfade: cut) {
        Clip.ID(2)
      })
    let (left, right) = (after.tracks[0].clips[0], after.tracks[0].clips[1])
    #expect(left.timelineRange == FrameRange(start: 0, end: 120))
    #expect(left.sourceRange == FrameRange(start: 1_000, end: 1_120))
    #expect(left.fadeOut == Fade(length: 40, curve: .sCurve))
    #expect(right.timelineRange == FrameRange(start: 80, end: 300))
    #expect(right.sourceRange == FrameRange(start: 1_180, end: 1_400))
    #expect(right.fadeIn == Fade(length: 40, curve: .sCurve))
    // Complementary: every frame of the overlap sums to full level (equal gain).
    for frame in Int64(80)..<120 {
      let sum = left.fadeGain(at: frame) + right.fadeGain(at: frame - 80)
      #expect(abs(sum - 1) < 1e-12, "frame \(frame): \(sum)")
    }
    #expect(
      try project.rippleCrossfadeShortfalls(FrameRange(start: 100, end: 200), crossfade: cut)
        .isEmpty)
  }

  /// Clips that only touch the range are not joined. A right side with 10 frames of source
  /// before it: the left makes up the rest (30 past the join), and nothing is short. Both short: the overlap is what they have, and the
  /// shortfall names the clips and their handles.
  @Test func shortHandlesAreMadeUpOrReported() throws {
    let project = Fixture.project([
      Fixture.clip(1, start: 0, crop: 0, length: 100),
      Fixture.clip(2, start: 150, crop: 10, length: 100),
    ])
    let cut = Crossfade(length: 40)
    let range = FrameRange(start: 100, end: 150)
    let after = try project.applying(
      project.cutRange(range, ripple: true, crossfade: cut) { Clip.ID(3) })
    // Clip 1 ends at the range's start and clip 2 starts at its end: neither is cut, so no join.
    #expect(after.tracks[0].clips[0].fadeOut == .none)

    let crossing = Fixture.project([
      Fixture.clip(1, start: 0, crop: 0, length: 120),
      Fixture.clip(2, start: 140, crop: 0, length: 100),
    ])
    let joined = try crossing.applying(
      crossing.cutRange(FrameRange(start: 100, end: 150), ripple: true, crossfade: cut) {
        Clip.ID(3)
      })
    let (left, right) = (joined.tracks[0].clips[0], joined.tracks[0].clips[1])
    #expect(right.sourceRange.start == 0)  // all 10 frames it had before the cut point...
    #expect(right.timelineStart == 90)
    #expect(left.timelineEnd == 130)  // ...and the left plays 30 past the join
    #expect(left.fadeOut.length == 40 && right.fadeIn.length == 40)
    #expect(
      try crossing.rippleCrossfadeShortfalls(FrameRange(start: 100, end: 150), crossfade: cut)
        .isEmpty)

    // The same with a left that ends where its source ends: 10 frames in all.
    let short = Fixture.project([
      Fixture.clip(1, start: 0, crop: 479_880, length: 120),
      Fixture.clip(2, start: 140, crop: 0, length: 100),
    ])
    #expect(
      try short.rippleCrossfadeShortfalls(FrameRange(start: 100, end: 150), crossfade: cut) == [
        ShortCrossfade(
          track: Track.ID(1), at: 100, asked: 40, made: 30, lefts: [Clip.ID(1)],
          leftHandle: 20, rights: [Clip.ID(2)], rightHandle: 10)
      ])
  }

  /// `clipCrossfade` joins clips that touch, and refuses those that do not, and a curve with
  /// no complement.
  @Test func crossfadingTwoClips() throws {
    let project = Fixture.project([
      Fixture.clip(1, start: 0, crop: 0, length: 100),
      Fixture.clip(2, start: 100, crop: 500, length: 100),
      Fixture.clip(3, start: 300, crop: 0, length: 100),
    ])
    let after = try project.applying(
      project.crossfadeClips(Clip.ID(1), Clip.ID(2), Crossfade(length: 20)))
    #expect(after.tracks[0].clips[0].timelineRange == FrameRange(start: 0, end: 110))
    #expect(after.tracks[0].clips[1].timelineRange == FrameRange(start: 90, end: 200))
    #expect(after.tracks[0].clips[1].sourceRange.start == 490)
    #expect(
      throws: TimelineError.notAdjacent(
        left: Clip.ID(2), leftEnd: 200, right: Clip.ID(3), rightStart: 300, sameTrack: true,
        sampleRate: 48_000)
    ) { try project.crossfadeClips(Clip.ID(2), Clip.ID(3), Crossfade(length: 20)) }
    #expect(throws: TimelineError.crossfadeCurve(.exponential)) {
      try project.crossfadeClips(Clip.ID(1), Clip.ID(2), Crossfade(length: 20, curve: .exponential))
    }
  }
}
