import ReferenceRenders
import Testing
import Timeline

@Suite("Diffs: indexed lookups and interpolation")
struct DiffAnimationTests {
  let before = Fixture.project(
    [Fixture.clip(1, start: 0, length: 48_000), Fixture.clip(2, start: 96_000, length: 24_000)],
    secondTrack: [Fixture.clip(3, start: 10_000, length: 30_000, fadeIn: 4_800)])

  /// Clip 1 moves and changes track, clip 2 is trimmed and louder, clip 3 goes, clip 4 comes,
  /// track 2 gets quieter and panned.
  var after: Project {
    var project = Fixture.project(
      [
        Fixture.clip(2, start: 96_000, crop: 1_000, length: 20_000, gain: -6),
        Fixture.clip(4, start: 200_000, length: 10_000),
      ],
      secondTrack: [Fixture.clip(1, start: 144_000, length: 48_000)])
    project.tracks[1].gain = Gain(decibels: -12)
    project.tracks[1].pan = -0.5
    return project
  }

  var diff: ProjectDiff { ProjectDiff(from: before, to: after) }

  /// t = 0 and t = 1 are the snapshots themselves, exactly.
  @Test func theEndsAreTheSnapshots() {
    #expect(diff.interpolated(at: 0) == before)
    #expect(diff.interpolated(at: 1) == after)
    #expect(diff.interpolated(at: -0.5) == before)
    #expect(diff.interpolated(at: 7) == after)
  }

  /// A moved marker slides from its old time to its new one, kept in time order on the way.
  @Test func aMovedMarkerSlides() throws {
    let old = try before.applying([
      .setMarker(Marker(id: Marker.ID(1), name: "a", position: 0)),
      .setMarker(Marker(id: Marker.ID(2), name: "b", position: 50_000)),
    ])
    let new = try old.applying([.setMarker(Marker(id: Marker.ID(1), name: "a", position: 100_000))])
    let diff = ProjectDiff(from: old, to: new)
    #expect(diff.interpolated(at: 0.25).markers.map(\.position) == [25_000, 50_000])
    #expect(diff.interpolated(at: 0.75).markers.map(\.id) == [Marker.ID(2), Marker.ID(1)])
    #expect(diff.interpolated(at: 0.75).markers.map(\.position) == [50_000, 75_000])
  }

  /// Positions move monotonically from the old place to the new one, with either easing.
  @Test(arguments: Easing.allCases)
  func positionsAreMonotone(easing: Easing) throws {
    var last = Int64.min
    var lastGain = 0.0
    for step in 0...20 {
      let frame = diff.interpolated(at: Double(step) / 20, easing: easing)
      let clip = try #require(frame.clip(Clip.ID(1))?.clip)
      #expect(clip.timelineStart.frames >= last)
      last = clip.timelineStart.frames
      let gain = try #require(frame.track(Track.ID(2))).gain.decibels
      #expect(step == 0 || gain <= lastGain)
      lastGain = gain
    }
    #expect(last == 144_000)
  }

  /// A clip that appears grows in from its start; one that goes shrinks away.
  @Test func clipsGrowInAndShrinkOut() throws {
    let quarter = diff.interpolated(at: 0.25)
    #expect(quarter.clip(Clip.ID(4))?.clip.length.frames == 2_500)
    #expect(quarter.clip(Clip.ID(4))?.clip.timelineStart.frames == 200_000)
    #expect(quarter.clip(Clip.ID(3))?.clip.length.frames == 22_500)
    #expect(quarter.clip(Clip.ID(3))?.clip.fadeIn.length.frames == 3_600)
    // Trims and gains tween too.
    let half = diff.interpolated(at: 0.5)
    let trimmed = try #require(half.clip(Clip.ID(2))?.clip)
    #expect(trimmed.sourceRange == FrameRange(start: 500, count: 22_000))
    #expect(trimmed.gain == Gain(decibels: -3))
  }

  /// A clip changing track is on its old track in the first half, its new one after, and
  /// says how far along its way between the two rows it is.
  @Test func aClipChangingTrackSlidesBetweenRows() throws {
    #expect(diff.interpolated(at: 0.4).clip(Clip.ID(1))?.track.id == Track.ID(1))
    #expect(diff.interpolated(at: 0.6).clip(Clip.ID(1))?.track.id == Track.ID(2))
    let transition = try #require(diff.trackTransition(of: Clip.ID(1), at: 0.3))
    #expect(transition.from == Track.ID(1) && transition.to == Track.ID(2))
    #expect(transition.progress == 0.3)
    #expect(diff.trackTransition(of: Clip.ID(2), at: 0.3) == nil)
  }

  /// Through clip indexes, the diff of random edits equals the diff found by scanning both
  /// projects: every change with the same before and after.
  @Test(arguments: [1, 2, 3, 4, 5])
  func indexedDiffsEqualScannedOnes(seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    var clips: [Clip] = []
    for id in 1...300 {
      clips.append(
        Fixture.clip(
          Int64(id), start: Int64.random(in: 0..<400_000, using: &generator),
          length: Int64.random(in: 100..<40_000, using: &generator)))
    }
    let old = Fixture.project(Array(clips[..<150]), secondTrack: Array(clips[150...]))
    var index = ClipIndex(old)
    var new = old
    var changes: [(Clip.ID, ClipIndex.Change)] = []
    for _ in 0..<40 {
      let id = Clip.ID(Int64.random(in: 1...320, using: &generator))
      for track in new.tracks.indices { new.tracks[track].clips.removeAll { $0.id == id } }
      if Bool.random(using: &generator) {
        let clip = Fixture.clip(
          id.rawValue, start: Int64.random(in: 0..<400_000, using: &generator), length: 1_000)
        let track = Int.random(in: 0..<2, using: &generator)
        new.tracks[track].clips.append(clip)
        new.tracks[track].clips.sort(by: Clip.timelineOrder)
        changes.append((id, .placed(clip, on: new.tracks[track].id)))
      } else {
        changes.append((id, .removed))
      }
    }
    let changed = ChangedIDs(clips: Set(changes.map(\.0)))
    let newIndex = index.updating(changes)
    let indexed = ProjectDiff(from: old, to: new, changed: changed, indexes: (index, newIndex))
    let scanned = ProjectDiff(from: old, to: new, changed: changed)
    #expect(indexed == scanned)
    #expect(newIndex == ClipIndex(new))
    index = newIndex
  }

  /// Random moves, removals and additions over three tracks, the third removed with its clips
  /// in half the seeds: at every step each track is in timeline order, a track no change
  /// touches is the new snapshot's own, every clip no change touches is where it ends, each
  /// changed clip is drawn once on its old track in the first half and its new one in the
  /// second, and a removed track's shrinking clips are on one ghost of it, after the others.
  @Test(arguments: [1, 2, 3, 4, 5, 6])
  func stepsRedoOnlyTheTracksTheChangesTouch(seed: UInt64) throws {
    var generator = SeededGenerator(seed: seed)
    func random(_ id: Int64) -> Clip {
      Fixture.clip(
        id, start: Int64.random(in: 0..<400_000, using: &generator),
        length: Int64.random(in: 100..<40_000, using: &generator))
    }
    var old = Fixture.project(
      (1...100).map { random($0) }.sorted(by: Clip.timelineOrder),
      secondTrack: (101...200).map { random($0) }.sorted(by: Clip.timelineOrder))
    old.tracks.append(
      Track(
        id: Track.ID(3), name: "Third",
        clips: ClipList((201...230).map { random($0) }.sorted(by: Clip.timelineOrder))))
    var new = old
    for _ in 0..<20 {
      let id = Clip.ID(Int64.random(in: 1...260, using: &generator))
      for track in new.tracks.indices { _ = new.tracks[track].clips.remove(id: id) }
      if Bool.random(using: &generator) {
        new.tracks[Int.random(in: 0..<3, using: &generator)].clips.insertInOrder(
          random(id.rawValue))
      }
    }
    let removesTrack = seed % 2 == 0
    if removesTrack { new.tracks.removeLast() }
    let diff = ProjectDiff(from: old, to: new)
    let changed = Set(diff.clips.map(\.id))
    var touched: Set<Track.ID> = []
    for change in diff.clips {
      if let track = change.before?.track { touched.insert(track) }
      if let track = change.after?.track { touched.insert(track) }
    }
    for t in [0.1, 0.4, 0.6, 0.9] {
      let shown = diff.interpolated(at: t, easing: .smooth)
      #expect(shown.tracks.prefix(new.tracks.count).map(\.id) == new.tracks.map(\.id))
      for track in shown.tracks {
        #expect(Array(track.clips) == track.clips.sorted(by: Clip.timelineOrder))
      }
      for track in new.tracks where !touched.contains(track.id) {
        #expect(shown.track(track.id) == track)
      }
      for (index, track) in new.tracks.enumerated() {
        let kept = Array(shown.tracks[index].clips).filter { !changed.contains($0.id) }
        #expect(kept == Array(track.clips).filter { !changed.contains($0.id) })
      }
      var seen: [Clip.ID: Int] = [:]
      for track in shown.tracks {
        for clip in track.clips where changed.contains(clip.id) { seen[clip.id, default: 0] += 1 }
      }
      #expect(seen.values.allSatisfy { $0 == 1 })
      for change in diff.clips {
        guard let before = change.before, let after = change.after else { continue }
        let on = shown.locate([change.id])[change.id]?.track
        #expect(on == (t < 0.5 ? before.track : after.track), "\(change.id) at \(t)")
      }
      // The removed track's clips shrink on its ghost, and those moved from it to another
      // track are on it for the first half.
      let leaving = diff.clips.filter { $0.before?.track == Track.ID(3) && $0.after != nil }
      let onGhost = old.tracks[2].clips.count - (t < 0.5 ? 0 : leaving.count)
      let ghosts = shown.tracks.dropFirst(new.tracks.count)
      #expect(ghosts.count == (removesTrack && onGhost > 0 ? 1 : 0))
      for ghost in ghosts {
        #expect(ghost.id == Track.ID(3))
        #expect(ghost.clips.count == onGhost)
      }
    }
  }
}
