import Testing
import Timeline

@Suite("Project edits and commands")
struct ProjectEditsTests {
  let project = Fixture.project(
    [
      Fixture.clip(1, start: 0, length: 96_000, fadeIn: 480),
      Fixture.clip(2, start: 48_000, crop: 96_000, length: 96_000, fadeOut: 4_800),
    ],
    secondTrack: [Fixture.clip(3, start: 10_000, length: 20_000, source: 2)])

  @Test func splitReturnsBothHalvesAsFinalState() throws {
    let commands = try project.splitClip(Clip.ID(2), at: 96_000, newID: Clip.ID(4))
    let left = Fixture.clip(2, start: 48_000, crop: 96_000, length: 48_000)
    let right = Fixture.clip(4, start: 96_000, crop: 144_000, length: 48_000, fadeOut: 4_800)
    #expect(commands == [.setClip(left, track: Track.ID(1)), .setClip(right, track: Track.ID(1))])
    let after = try project.applying(commands)
    #expect(after.tracks[0].clips == [project.tracks[0].clips[0], left, right])
    #expect(after.tracks[1] == project.tracks[1])
  }

  @Test func splitRefusesAnIdInUse() {
    #expect(throws: TimelineError.duplicateID("c3")) {
      try project.splitClip(Clip.ID(2), at: 96_000, newID: Clip.ID(3))
    }
  }

  @Test func moveToAnotherTrackLeavesTheFirst() throws {
    let commands = try project.moveClip(Clip.ID(1), to: 200_000, track: Track.ID(2))
    let moved = Fixture.clip(1, start: 200_000, length: 96_000, fadeIn: 480)
    #expect(commands == [.setClip(moved, track: Track.ID(2))])
    let after = try project.applying(commands)
    #expect(after.tracks.map { $0.clips.map(\.id) } == [[Clip.ID(2)], [Clip.ID(3), Clip.ID(1)]])
    #expect(after.clip(Clip.ID(1))?.clip == moved)
  }

  @Test func trimBeyondTheSourceIsRefused() throws {
    // c1 plays source frames 0… from timeline 0: starting 1 frame earlier needs frame −1.
    #expect(
      throws: TimelineError.negativeTimelineStart(clip: Clip.ID(1), start: -1, sampleRate: 48_000)
    ) {
      try project.trimClip(Clip.ID(1), start: -1, end: nil)
    }
    // c2 plays from 2 s of the source at 1 s: extending it to the timeline start is fine.
    #expect(try project.trimClip(Clip.ID(2), start: 0, end: nil).count == 1)
    // c3 plays from the source's first frame at 10 000: starting 5 000 earlier needs frame −5 000.
    #expect(
      throws: TimelineError.cropOutsideSource(
        clip: Clip.ID(3), crop: FrameRange(start: -5_000, count: 25_000), source: Source.ID(2),
        sourceLength: 480_000, sampleRate: 48_000)
    ) {
      try project.trimClip(Clip.ID(3), start: 5_000, end: nil)
    }
    #expect(
      TimelineError.cropOutsideSource(
        clip: Clip.ID(3), crop: FrameRange(start: -5_000, count: 25_000), source: Source.ID(2),
        sourceLength: 480_000, sampleRate: 48_000
      ).description
        == "clip c3 would start 0.104s before the beginning of source s2; start it at or after the source's first frame"
    )
  }

  @Test func fadesAndGainCarryTheWholeClip() throws {
    let fades = try project.setClipFades(
      Clip.ID(1), fadeIn: Fade(length: 960, curve: .sCurve), fadeOut: nil)
    var expected = project.clip(Clip.ID(1))!.clip
    expected.fadeIn = Fade(length: 960, curve: .sCurve)
    #expect(fades == [.setClip(expected, track: Track.ID(1))])

    let gain = try project.setClipGain(Clip.ID(1), Gain(decibels: -6))
    expected = project.clip(Clip.ID(1))!.clip
    expected.gain = Gain(decibels: -6)
    #expect(gain == [.setClip(expected, track: Track.ID(1))])

    #expect(
      throws: TimelineError.fadeLongerThanClip(
        clip: Clip.ID(1), end: .fadeOut, fade: 96_001, clipLength: 96_000, sampleRate: 48_000)
    ) {
      try project.setClipFades(Clip.ID(1), fadeIn: nil, fadeOut: Fade(length: 96_001))
    }
  }

  @Test func trackSettingsKeepTheClips() throws {
    let commands = try project.setTrack(
      Track.ID(2), name: "Gtr", gain: Gain(decibels: 2), pan: -1, muted: true, solo: true)
    let expected = Track(
      id: Track.ID(2), name: "Gtr", gain: Gain(decibels: 2), pan: -1, isMuted: true, isSolo: true,
      clips: project.tracks[1].clips)
    #expect(commands == [.setTrack(expected)])
    #expect(try project.applying(commands).tracks == [project.tracks[0], expected])
    #expect(throws: TimelineError.panOutOfRange(track: Track.ID(2), pan: 2)) {
      try project.setTrack(Track.ID(2), pan: 2)
    }
  }

  @Test func tracksReorderAndRemoveWithTheirClips() throws {
    let reordered = try project.applying(project.moveTrack(Track.ID(2), to: 0))
    #expect(reordered.tracks.map(\.id) == [Track.ID(2), Track.ID(1)])
    #expect(
      try project.moveTrack(Track.ID(1), to: 99) == [.setTrackOrder([Track.ID(2), Track.ID(1)])])

    let removed = try project.applying(project.removeTracks([Track.ID(1)]))
    #expect(removed.tracks == [project.tracks[1]])
    #expect(removed.clip(Clip.ID(1)) == nil)
  }

  @Test func addTrackAppendsAnEmptyTrack() throws {
    let drums = Track(id: Track.ID(3), name: "Drums", gain: Gain(decibels: -2), pan: 0.25)
    let after = try project.applying(project.addTrack(drums))
    #expect(after.tracks == project.tracks + [drums])
    #expect(throws: TimelineError.duplicateID("t1")) {
      try project.addTrack(Track(id: Track.ID(1), name: "Again"))
    }
  }

  @Test func setTrackIsTheTracksWholeFinalState() throws {
    // Listing c3 on track 1 moves it there; leaving c2 out removes it.
    var track = project.tracks[0]
    track.clips = [project.tracks[0].clips[0], project.tracks[1].clips[0]]
    let after = try project.applying([.setTrack(track)])
    #expect(after.tracks[0].clips.map(\.id) == [Clip.ID(1), Clip.ID(3)])
    #expect(after.tracks[1].clips == [])
    #expect(after.clip(Clip.ID(2)) == nil)
  }

  @Test func commandsFailOnUnknownIdsAndSourcesInUse() {
    #expect(throws: TimelineError.unknownClip(Clip.ID(9))) {
      try project.applying([.removeClips([Clip.ID(9)])])
    }
    #expect(throws: TimelineError.unknownTrack(Track.ID(9))) {
      try project.applying([.removeTracks([Track.ID(9)])])
    }
    #expect(throws: TimelineError.unknownTrack(Track.ID(9))) {
      try project.applying([.setClip(Fixture.clip(5, start: 0, length: 1), track: Track.ID(9))])
    }
    #expect(throws: TimelineError.sourceInUse(Source.ID(1), clips: [Clip.ID(1), Clip.ID(2)])) {
      try project.applying([.removeSources([Source.ID(1)])])
    }
    #expect(throws: TimelineError.trackOrderMismatch) {
      try project.applying([.setTrackOrder([Track.ID(1)])])
    }
  }

  /// Shrinking a source re-validates every clip that uses it.
  @Test func changingASourceRevalidatesItsClips() {
    var shorter = Fixture.speech
    shorter.frameCount = 100_000
    #expect(
      throws: TimelineError.cropOutsideSource(
        clip: Clip.ID(2), crop: FrameRange(start: 96_000, count: 96_000), source: Source.ID(1),
        sourceLength: 100_000, sampleRate: 48_000)
    ) {
      try project.applying([.setSource(shorter)])
    }
  }

  @Test func timelineEndIsTheEndOfTheLastClip() {
    #expect(project.timelineEnd == 144_000)
    #expect(Project(sampleRate: 48_000, channels: 2).timelineEnd == 0)
  }
}
