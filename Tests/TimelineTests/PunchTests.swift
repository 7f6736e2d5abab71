import Testing
import Timeline

/// `Project.punch` (tape record --punch-in/--punch-out) over every layout of the track's clip
/// at the punch's edges, against the tests' own fade model (``Fixture/modelPlayback(of:)``):
/// punch-in at 100,000, punch-out at 200,000, 480-frame crossfades (so the take plays
/// 99,760 ..< 200,240 and the old clip is cut from 100,240 ..< 199,760).
struct PunchTests {
  static let (punchIn, punchOut, crossfade): (Int64, Int64, Int64) = (100_000, 200_000, 480)
  static let kept = (start: punchIn - crossfade / 2, end: punchOut + crossfade / 2)
  static let cut = (start: kept.start + crossfade, end: kept.end - crossfade)

  /// The old clip (on the guitar source, t1), by where it starts, how long it is and its
  /// fade-in: spanning the punch; starting at the punch-in (inside the crossfade), one frame
  /// into it, one frame before the cut, one frame before the crossfade (a whole one fits);
  /// fading in over 1,000 frames up to 240 frames into the crossfade; ending at the punch-out,
  /// one frame before the take's end, one frame into the right crossfade; and a clip that
  /// starts and ends inside the left crossfade.
  static let layouts: [(start: Int64, length: Int64, fadeIn: Int64)] = [
    (0, 400_000, 0),
    (punchIn, 200_000, 0),
    (kept.start + 1, 200_000, 0),
    (cut.start - 1, 200_000, 0),
    (kept.start - 1, 200_000, 0),
    (kept.start - 1_000 + 240, 200_000, 1_000),
    (0, punchOut, 0),
    (0, kept.end - 1, 0),
    (0, cut.end + 1, 0),
    (kept.start + 100, 200, 0),
  ]

  /// The punch never refuses these layouts (it used to, after the take was recorded, for
  /// every clip edge inside a crossfade); outside the take nothing the old clip plays changes;
  /// inside the cut only the take plays, at full level; in each crossfade, where the old clip
  /// played at full level, the take's and the old clip's gains sum to 1.
  @Test(arguments: layouts.indices) func aPunchCrossfadesWhateverTheClipsEdges(layout: Int) throws {
    let (start, length, fadeIn) = Self.layouts[layout]
    let old = Fixture.clip(1, start: start, length: length, source: 2, fadeIn: fadeIn)
    let project = Fixture.project([old])
    var next: Int64 = 10
    let commands = try project.punch(
      source: Source.ID(1), track: Track.ID(1), takeStart: FramePosition(0),
      range: FrameRange(start: FramePosition(Self.punchIn), end: FramePosition(Self.punchOut)),
      crossfade: FrameCount(Self.crossfade), clip: Clip.ID(9)
    ) {
      next += 1
      return Clip.ID(next)
    }
    let after = try project.applying(commands)
    let clips = try #require(after.track(Track.ID(1))).clips
    let take = try #require(clips.first { $0.id == Clip.ID(9) })
    #expect(take.timelineStart.frames == Self.kept.start)
    #expect(take.timelineEnd.frames == Self.kept.end)
    let before = Fixture.modelPlayback(of: [old])
    let played = Fixture.modelPlayback(of: clips)
    func gain(_ samples: [Fixture.SourceSample]?, source: Int64) -> Double {
      (samples ?? []).filter { $0.source == Source.ID(source) }.reduce(0) { $0 + $1.gain }
    }
    for frame in (start - 2)..<(start + length + 2) {
      let (was, now) = (before[frame], played[frame])
      if frame < Self.kept.start || frame >= Self.kept.end {
        #expect(was == now, "frame \(frame) changed outside the take")
      } else if frame >= Self.cut.start && frame < Self.cut.end {
        #expect(gain(now, source: 2) == 0, "frame \(frame): the old clip plays under the cut")
        #expect(abs(gain(now, source: 1) - 1) < 1e-12, "frame \(frame): the take is not at 1")
      } else if let sample = was?.first, sample.gain == 1 {
        let sum = gain(now, source: 1) + gain(now, source: 2)
        #expect(abs(sum - 1) < 1e-12, "frame \(frame): the crossfade sums to \(sum)")
      }
    }
  }
}
