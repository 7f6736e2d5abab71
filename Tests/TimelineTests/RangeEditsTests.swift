import ReferenceRenders
import Testing
import Timeline

@Suite("Range edits, copies and reordering")
struct RangeEditsTests {
  /// What sounds at each frame (overlapping clips in no particular order).
  typealias Playback = [Int64: Set<Fixture.SourceSample>]

  static func playback(of clips: some Sequence<Clip>) -> Playback {
    Fixture.playback(of: clips).mapValues(Set.init)
  }

  /// What the whole project plays, per track, frame by frame, by the tests' own fade model
  /// (``Fixture/modelPlayback(of:)``).
  static func modelPlayback(_ project: Project) -> [Track.ID: Playback] {
    Dictionary(
      uniqueKeysWithValues: project.tracks.map {
        ($0.id, Fixture.modelPlayback(of: $0.clips).mapValues(Set.init))
      })
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

  /// Random clips (some overlapping, some with fades) on two tracks, random ranges: every
  /// track plays exactly the old audio minus the range, wherever the range starts or ends
  /// (inside fades too, by the tests' own fade model); ids stay unique and the project stays
  /// valid.
  @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
  func randomCutsRemoveExactlyTheRange(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    var (checked, cutFades) = (0, 0)
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
      let commands = try project.cutRange(
        FrameRange(start: FramePosition(a), end: FramePosition(b)), ripple: ripple
      ) {
        defer { newID += 1 }
        return Clip.ID(newID)
      }
      let after = try project.applying(commands)
      let ids = after.allClips.map { $0.id }
      #expect(Set(ids).count == ids.count)
      checked += 1
      if cutsAFade { cutFades += 1 }
      // The tests' own fade model, and the code's gains, each against itself before the cut.
      let (modelOld, modelNew) = (Self.modelPlayback(project), Self.modelPlayback(after))
      let (old, new) = (Self.playback(project), Self.playback(after))
      for track in project.tracks {
        let model =
          modelNew[track.id]
          == Self.expected(modelOld[track.id] ?? [:], cutting: a, b, ripple: ripple)
        #expect(model, "seed \(seed): cut \(a)–\(b) ripple \(ripple) of \(track.clips)")
        let same =
          new[track.id] == Self.expected(old[track.id] ?? [:], cutting: a, b, ripple: ripple)
        #expect(same, "seed \(seed): cut \(a)–\(b) ripple \(ripple) of \(track.clips)")
      }
    }
    #expect(cutFades > 30)
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

  /// A fade the range cuts through keeps the gain of every frame that remains, as the part of
  /// its curve that remains; a new edge that cut no fade gets the edge fade; edge fades that do
  /// not fit are refused naming every clip at once.
  @Test func aCutFadeKeepsWhatRemainsOfItsCurve() throws {
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
    #expect(left.fadeOut == Fade(length: 20, curve: .sCurve, silentCut: 20))
    #expect(left.fadeIn == Fade(length: 10, curve: .sCurve))
    #expect(right.timelineRange == FrameRange(start: 230, end: 300))
    #expect(right.sourceRange.start == 30)
    #expect(right.fadeIn == Fade(length: 20, curve: .equalPower, silentCut: 30))
    // Every frame that stays plays at the gain it had (the tests' own fade model).
    let before = Fixture.modelPlayback(of: project.allClips)
    for (frame, samples) in Fixture.modelPlayback(of: after.allClips) {
      #expect(before[frame] == samples, "frame \(frame)")
    }

    // A range inside one fade-out, and one from inside a fade-in past the clip's end: the
    // parts keep their gains (the loud end of a fade cut away too).
    for range in [FrameRange(start: 70, end: 90), FrameRange(start: 5, end: 150)] {
      for ripple in [false, true] {
        let cut = try project.applying(
          project.cutRange(range, ripple: ripple) { Clip.ID(9) })
        #expect(
          Self.modelPlayback(cut)
            == Self.modelPlayback(project).mapValues {
              Self.expected(
                $0, cutting: range.start.frames, range.end.frames, ripple: ripple)
            })
      }
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
    // Several, all named at once.
    #expect(
      throws: TimelineError.edgeFadesDoNotFit(
        [
          EdgeFadeMisfit(clip: Clip.ID(1), end: .fadeOut, fade: 15, room: 2, otherFade: 10),
          EdgeFadeMisfit(clip: Clip.ID(2), end: .fadeIn, fade: 15, room: 8, otherFade: 10),
        ], sampleRate: 48_000)
    ) {
      try project.cutRange(
        FrameRange(start: 12, end: 282), ripple: false, edgeFade: Fade(length: 15, curve: .linear)
      ) { Clip.ID(9) }
    }
    #expect(throws: TimelineError.emptyRange(FrameRange(start: 5, end: 5), sampleRate: 48_000)) {
      try project.cutRange(FrameRange(start: 5, end: 5), ripple: true) { Clip.ID(9) }
    }
  }

  /// Insert opens a gap: a clip across the point is split there and its right part moves;
  /// everything later moves right; the audio before the point is untouched, and inside a fade
  /// every frame keeps its gain.
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
    // Inside a fade, split as a split is: both parts keep their gains (the tests' own model).
    let faded = Fixture.project([Fixture.clip(1, start: 0, length: 100, fadeIn: 60)])
    let opened = try faded.applying(faded.insertGap(at: 50, length: 25) { Clip.ID(9) })
    var model: [Int64: [Fixture.SourceSample]] = [:]
    for (frame, samples) in Fixture.modelPlayback(of: faded.allClips) {
      model[frame < 50 ? frame : frame + 25] = samples
    }
    #expect(Fixture.modelPlayback(of: opened.allClips) == model)
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
