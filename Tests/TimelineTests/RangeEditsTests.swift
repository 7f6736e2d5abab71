import ReferenceRenders
import Testing
import Timeline

@Suite("Range edits, copies and reordering")
struct RangeEditsTests {
  /// What sounds at each frame (overlapping clips in no particular order).
  typealias Playback = [Int64: Set<Fixture.SourceSample>]

  static func playback(of clips: [Clip]) -> Playback {
    Fixture.playback(of: clips).mapValues(Set.init)
  }

  /// What the whole project plays, per track, frame by frame.
  static func playback(_ project: Project) -> [Track.ID: Playback] {
    Dictionary(uniqueKeysWithValues: project.tracks.map { ($0.id, playback(of: $0.clips)) })
  }

  /// `before` with `[a, b)` removed: silent there, or (ripple) everything after it earlier by
  /// its length.
  static func expected(_ before: Playback, cutting a: Int64, _ b: Int64, ripple: Bool) -> Playback {
    var out: Playback = [:]
    for (frame, samples) in before {
      if frame < a {
        out[frame] = samples
      } else if frame >= b {
        out[ripple ? frame - (b - a) : frame] = samples
      }
    }
    return out
  }

  /// Random clips (some overlapping, some with fades) on two tracks, random ranges: wherever
  /// the range cuts no fade, every track plays exactly the old audio minus the range; ids stay
  /// unique and the project stays valid.
  @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
  func randomCutsRemoveExactlyTheRange(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    var checked = 0
    for _ in 0..<300 {
      var nextID: Int64 = 1
      func clips() -> [Clip] {
        (0..<Int.random(in: 0...5, using: &rng)).map { _ in
          defer { nextID += 1 }
          let length = Int64.random(in: 4...60, using: &rng)
          let fadeIn = Bool.random(using: &rng) ? Int64.random(in: 0...length / 2, using: &rng) : 0
          let fadeOut = Bool.random(using: &rng) ? Int64.random(in: 0...length / 2, using: &rng) : 0
          return Fixture.clip(
            nextID, start: Int64.random(in: 0...200, using: &rng),
            crop: Int64.random(in: 0...1_000, using: &rng), length: length, fadeIn: fadeIn,
            fadeOut: fadeOut)
        }
      }
      let project = Fixture.project(clips(), secondTrack: clips())
      let a = Int64.random(in: 0...220, using: &rng)
      let b = a + Int64.random(in: 1...80, using: &rng)
      let ripple = Bool.random(using: &rng)
      var newID = nextID
      let cutsAFade = project.allClips.contains { clip in
        let fadeIn = (
          clip.timelineStart.frames, clip.timelineStart.frames + clip.fadeIn.length.frames
        )
        let fadeOut = (
          clip.timelineEnd.frames - clip.fadeOut.length.frames, clip.timelineEnd.frames
        )
        return [fadeIn, fadeOut].contains { fade in
          [a, b].contains { fade.0 < $0 && $0 < fade.1 }
        }
      }
      var commands: [Command] = []
      do {
        commands = try project.cutRange(
          FrameRange(start: FramePosition(a), end: FramePosition(b)), ripple: ripple
        ) {
          defer { newID += 1 }
          return Clip.ID(newID)
        }
      } catch {
        // Refused only where a fade is cut on its loud side.
        guard case .rangeCutsFade = error else { throw error }
        #expect(cutsAFade)
        continue
      }
      let after = try project.applying(commands)
      let ids = after.allClips.map { $0.id }
      #expect(Set(ids).count == ids.count)
      guard !cutsAFade else { continue }
      checked += 1
      let old = Self.playback(project)
      let new = Self.playback(after)
      for track in project.tracks {
        let same =
          new[track.id] == Self.expected(old[track.id] ?? [:], cutting: a, b, ripple: ripple)
        #expect(same, "seed \(seed): cut \(a)–\(b) ripple \(ripple) of \(track.clips)")
      }
    }
    #expect(checked > 100)
  }

  /// A clip spanning the range is split (the right part under a new id); clips inside go;
  /// only the chosen tracks change; with ripple later clips move left.
  @Test func aSpanningClipIsSplitAndLaterClipsRipple() throws {
    let project = Fixture.project(
      [
        Fixture.clip(1, start: 0, length: 100),
        Fixture.clip(2, start: 40, length: 10),
        Fixture.clip(3, start: 120, length: 20),
      ],
      secondTrack: [Fixture.clip(4, start: 30, length: 50)])
    let commands = try project.cutRange(
      FrameRange(start: 30, end: 60), tracks: [Track.ID(1)], ripple: true
    ) { Clip.ID(9) }
    let after = try project.applying(commands)
    #expect(
      after.tracks[0].clips == [
        Fixture.clip(1, start: 0, length: 30),
        Fixture.clip(9, start: 30, crop: 60, length: 40),
        Fixture.clip(3, start: 90, length: 20),
      ])
    #expect(after.tracks[1] == project.tracks[1])
  }

  /// A fade the range cuts through keeps its curve and outer end and now ends at the new edge;
  /// a new edge that cut no fade gets the edge fade.
  @Test func aCutFadeIsShortenedToWhatRemains() throws {
    let project = Fixture.project([
      Fixture.clip(1, start: 0, length: 100, fadeIn: 10, fadeOut: 40, curve: .sCurve),
      Fixture.clip(2, start: 200, length: 100, fadeIn: 50, fadeOut: 10, curve: .equalPower),
    ])
    // Cuts clip 1's fade-out (60–100) at 80, and clip 2's fade-in (200–250) at 230.
    let after = try project.applying(
      project.cutRange(
        FrameRange(start: 80, end: 230), ripple: false,
        edgeFade: Fade(length: 5, curve: .linear)
      ) { Clip.ID(9) })
    let (left, right) = (after.tracks[0].clips[0], after.tracks[0].clips[1])
    #expect(left.timelineRange == FrameRange(start: 0, end: 80))
    #expect(left.fadeOut == Fade(length: 20, curve: .sCurve))
    #expect(left.fadeIn == Fade(length: 10, curve: .sCurve))
    #expect(right.timelineRange == FrameRange(start: 230, end: 300))
    #expect(right.sourceRange.start == 30)
    #expect(right.fadeIn == Fade(length: 20, curve: .equalPower))
    // The shortened fade-out ends at silence where the old one was 20 frames from it...
    #expect(left.fadeGain(at: 79) < 0.01)
    // ...and before the cut fade started, every frame plays as before.
    for frame in 0..<60 {
      #expect(left.fadeGain(at: Int64(frame)) == project.allClips[0].fadeGain(at: Int64(frame)))
    }

    // Where no fade is cut, the edge fade: the split clip's new edges fade over 5 frames.
    let split = try project.applying(
      project.cutRange(
        FrameRange(start: 20, end: 40), ripple: true, edgeFade: Fade(length: 5, curve: .linear)
      ) { Clip.ID(9) })
    #expect(split.tracks[0].clips[0].fadeOut == Fade(length: 5, curve: .linear))
    #expect(split.tracks[0].clips[1].fadeIn == Fade(length: 5, curve: .linear))
    #expect(split.tracks[0].clips[1].fadeOut == Fade(length: 40, curve: .sCurve))

    // An edge fade that does not fit beside the clip's other fade is refused with the fix.
    #expect(
      throws: TimelineError.edgeFadeDoesNotFit(
        clip: Clip.ID(1), end: .fadeOut, fade: 15, room: 2, otherFade: 10, sampleRate: 48_000)
    ) {
      try project.cutRange(
        FrameRange(start: 12, end: 40), ripple: false, edgeFade: Fade(length: 15, curve: .linear)
      ) { Clip.ID(9) }
    }
    // A range that starts inside a fade-in or ends inside a fade-out would leave the rest of
    // that fade at full level: refused with the fix.
    #expect(
      throws: TimelineError.rangeCutsFade(
        clip: Clip.ID(1), end: .fadeIn, fade: FrameRange(start: 0, count: 10), at: 5,
        sampleRate: 48_000)
    ) {
      try project.cutRange(FrameRange(start: 5, end: 40), ripple: true) { Clip.ID(9) }
    }
    #expect(
      throws: TimelineError.rangeCutsFade(
        clip: Clip.ID(1), end: .fadeOut, fade: FrameRange(start: 60, count: 40), at: 70,
        sampleRate: 48_000)
    ) {
      try project.cutRange(FrameRange(start: 30, end: 70), ripple: false) { Clip.ID(9) }
    }
    #expect(throws: TimelineError.emptyRange(FrameRange(start: 5, end: 5), sampleRate: 48_000)) {
      try project.cutRange(FrameRange(start: 5, end: 5), ripple: true) { Clip.ID(9) }
    }
  }

  /// Insert opens a gap: a clip across the point is split there and its right part moves;
  /// everything later moves right; the audio before the point is untouched.
  @Test func insertOpensAGap() throws {
    let project = Fixture.project(
      [Fixture.clip(1, start: 0, length: 100), Fixture.clip(2, start: 150, length: 10)],
      secondTrack: [Fixture.clip(3, start: 60, length: 10)])
    let after = try project.applying(
      project.insertGap(at: 50, length: 25, tracks: [Track.ID(1)]) { Clip.ID(9) })
    let old = Self.playback(of: project.tracks[0].clips)
    var expected: Playback = [:]
    for (frame, samples) in old { expected[frame < 50 ? frame : frame + 25] = samples }
    #expect(Self.playback(of: after.tracks[0].clips) == expected)
    #expect(after.tracks[1] == project.tracks[1])
    // Inside a fade, refused as a split would be.
    let faded = Fixture.project([Fixture.clip(1, start: 0, length: 100, fadeIn: 60)])
    #expect(throws: TimelineError.self) {
      try faded.insertGap(at: 50, length: 25) { Clip.ID(9) }
    }
  }

  @Test func removeWithRippleClosesTheHole() throws {
    let project = Fixture.project(
      [
        Fixture.clip(1, start: 0, length: 10), Fixture.clip(2, start: 10, length: 30),
        Fixture.clip(3, start: 45, length: 5),
      ],
      secondTrack: [Fixture.clip(4, start: 45, length: 5)])
    let after = try project.applying(project.removeClip(Clip.ID(2), ripple: true))
    #expect(
      after.tracks[0].clips == [
        Fixture.clip(1, start: 0, length: 10), Fixture.clip(3, start: 15, length: 5),
      ])
    #expect(after.tracks[1] == project.tracks[1])
    let plain = try project.applying(project.removeClip(Clip.ID(2), ripple: false))
    #expect(plain.tracks[0].clips.map(\.timelineStart) == [0, 45])
  }

  @Test func copiesAndReordering() throws {
    let project = Fixture.project(
      [Fixture.clip(1, start: 0, length: 100, fadeIn: 10, gain: -3)],
      secondTrack: [Fixture.clip(2, start: 5, length: 10)])
    let copied = try project.applying(
      project.copyClip(Clip.ID(1), to: 500, track: Track.ID(2), newID: Clip.ID(7)))
    #expect(
      copied.clip(Clip.ID(7))?.clip
        == Fixture.clip(7, start: 500, length: 100, fadeIn: 10, gain: -3))
    #expect(copied.clip(Clip.ID(7))?.track.id == Track.ID(2))
    #expect(throws: TimelineError.unknownClip(Clip.ID(8))) {
      try project.copyClip(Clip.ID(8), to: 0, track: nil, newID: Clip.ID(9))
    }

    var next: Int64 = 10
    let duplicated = try project.applying(
      project.duplicateTrack(Track.ID(1), newID: Track.ID(3), name: "Voice copy") {
        defer { next += 1 }
        return Clip.ID(next)
      })
    #expect(duplicated.tracks.map(\.id) == [Track.ID(1), Track.ID(3), Track.ID(2)])
    #expect(duplicated.tracks[1].name == "Voice copy")
    #expect(
      duplicated.tracks[1].clips == [Fixture.clip(10, start: 0, length: 100, fadeIn: 10, gain: -3)])

    let moved = try project.applying(project.moveTrack(Track.ID(2), to: 0))
    #expect(moved.tracks.map(\.id) == [Track.ID(2), Track.ID(1)])
  }
}
