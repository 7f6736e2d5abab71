import Foundation
import Testing
import Timeline

@testable import TimelineStore

/// Kept takes in the store (table 16, ``TakeRow``): the packed history's header escape for a
/// table past 15, and takes added, chosen, undone, redone, checked out and reopened exactly.
@Suite("Takes in the store")
struct TakeStoreTests {
  /// The header every version written before table 16 has: the table in 4 bits, the kind in 2,
  /// the two flags (written out here as the format always had it, not through the code).
  @Test(arguments: 0..<16)
  func tablesBefore16KeepTheirOneByteHeader(table: Int) {
    for kind in [NetChanges.Kind.insert, .update, .delete] {
      for (isNext, sameShape) in [(false, false), (true, false), (false, true), (true, true)] {
        let old =
          UInt8(table) | kind.rawValue << 4 | (isNext ? 0x40 : 0) | (sameShape ? 0x80 : 0)
        #expect(NetChanges.header(table: table, kind: kind, isNext, sameShape) == [old])
      }
    }
  }

  /// A row of table 16 is written with kind 0 (which no old header has) and the table in the
  /// next byte, and reads back; rows of old tables around it read as before.
  @Test func table16RoundTripsThroughThePackedEncoding() throws {
    #expect(TakeRow.index == 16)
    #expect(Schema.trackedTables[16] == "take")
    #expect(NetChanges.header(table: 16, kind: .update, true, false) == [0x42, 16])
    var changes = NetChanges()
    let clip = Clip(
      id: Clip.ID(9), source: Source.ID(1), timelineStart: 48_000,
      sourceRange: FrameRange(start: 96_000, count: 96_000), gain: Gain(decibels: -2),
      fadeIn: Fade(length: 480, curve: .sCurve), fadeOut: Fade(length: 96, silentCut: 12))
    let take = Take(
      clip: clip, track: Track.ID(2), playing: Clip.ID(10),
      range: FrameRange(start: 48_000, count: 96_000))
    func kept(_ id: Int64, playing: Int64) -> Take {
      var clip = Clip(
        id: Clip.ID(id), source: take.clip.source, timelineStart: take.clip.timelineStart,
        sourceRange: take.clip.sourceRange, gain: take.clip.gain)
      clip.fadeOut = take.clip.fadeOut
      return Take(clip: clip, track: take.track, playing: Clip.ID(playing), range: take.range)
    }
    changes.record(
      NetChanges.Key(table: TakeRow.index, id: 9), from: nil, to: TakeRow.values(take))
    changes.record(
      NetChanges.Key(table: TakeRow.index, id: 11), from: TakeRow.values(kept(11, playing: 10)),
      to: TakeRow.values(kept(11, playing: 13)))
    changes.record(
      NetChanges.Key(table: TakeRow.index, id: 12), from: TakeRow.values(kept(12, playing: 10)),
      to: nil)
    changes.record(
      NetChanges.Key(table: MarkerRow.index, id: 1), from: nil,
      to: [.integer(1), .integer(5), .text("a")])
    changes.record(
      NetChanges.Key(table: ClipRow.index, id: 10), from: nil,
      to: ClipRow.values(kept(10, playing: 1).clip, on: Track.ID(2)))
    let packed = changes.packed()
    var unpacked = NetChanges()
    try unpacked.append(changeset: Changeset(data: packed))
    #expect(unpacked.rows == changes.rows)
    let touched = try packed.withUnsafeBytes { bytes in
      (
        try NetChanges.touches(bytes, where: { $0.table == TakeRow.index && $0.id == 12 }),
        try NetChanges.touches(bytes, where: { $0.table == TakeRow.index && $0.id == 13 })
      )
    }
    #expect(touched == (true, false))
  }

  /// Three takes of a range: the last plays, two are kept; choosing one swaps it with the
  /// playing clip in one version; undo, redo, checkout and a reopen give each state exactly;
  /// the takes' source cannot be removed while a kept take uses it.
  @Test func takesAreChosenUndoneRedoneAndReopenedExactly() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("takes.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    var states = [store.snapshot]
    let range = FrameRange(start: 48_000, count: 96_000)
    try store.commit(label: "Record") { project, ids in
      let source = StoreFixture.source(&ids, seconds: 7)
      let clips = (0..<3).map { pass in
        Clip(
          id: ids.newClipID(), source: source.id, timelineStart: range.start,
          sourceRange: FrameRange(start: FramePosition(Int64(pass) * 96_000 + 100), count: 96_000))
      }
      return [.setSource(source)]
        + (try project.applying([.setSource(source)]).addingTakes(
          clips, track: Track.ID(1), range: range))
    }
    states.append(store.snapshot)
    let groups = store.snapshot.project.takeGroups(on: Track.ID(1))
    #expect(groups.count == 1)
    #expect(groups.first?.takes.map(\.id) == [Clip.ID(4), Clip.ID(5), Clip.ID(6)])
    #expect(groups.first?.playing == Clip.ID(6))
    #expect(store.snapshot.project.clip(Clip.ID(6))?.track.id == Track.ID(1))
    #expect(store.snapshot.project.clip(Clip.ID(4)) == nil)

    let chosen = try store.commit(label: "Use c4") { project, _ in
      try project.choosingTake(Clip.ID(4))
    }
    #expect(chosen.changed.takes)
    states.append(store.snapshot)
    let after = store.snapshot.project
    #expect(after.takeGroups(on: Track.ID(1)).first?.playing == Clip.ID(4))
    #expect(after.clip(Clip.ID(4))?.clip.sourceRange.start == 100)
    #expect(after.clip(Clip.ID(6)) == nil)
    #expect(Set(after.takes.map(\.id)) == [Clip.ID(5), Clip.ID(6)])
    #expect(after.takes.allSatisfy { $0.playing == Clip.ID(4) })

    // A source a kept take uses stays.
    let refusal = #expect(throws: (any Error).self) {
      try store.commit(label: "Drop") { project, _ in
        try project.removeClips([Clip.ID(4)]) + [.removeSources([Source.ID(2)])]
      }
    }
    #expect(
      "\(refusal.map { "\($0)" } ?? "")"
        == "source s2 is still used by clips c5, c6; remove those clips first")
    #expect(store.snapshot.project == after)

    // Moving the playing clip moves its takes; removing it dissolves the group.
    try store.commit(label: "Move") { project, _ in
      try project.moveClip(Clip.ID(4), to: 60_000, track: Track.ID(2))
    }
    states.append(store.snapshot)
    #expect(store.snapshot.project.takes.map(\.range.start) == [60_000, 60_000])
    #expect(store.snapshot.project.takes.map(\.track) == [Track.ID(2), Track.ID(2)])
    try store.commit(label: "Remove") { project, _ in try project.removeClips([Clip.ID(4)]) }
    states.append(store.snapshot)
    #expect(store.snapshot.project.takes.isEmpty)

    for index in stride(from: states.count - 2, through: 0, by: -1) {
      let undone = try store.undo()
      #expect(undone.project == states[index].project, "undo to \(index)")
    }
    for index in 1..<states.count {
      let redone = try store.redo()
      #expect(redone.project == states[index].project, "redo to \(index)")
      #expect(try TimelineStore.open(at: path, access: .read).snapshot.project == redone.project)
    }
    #expect(try store.checkout(states[2].version).project == states[2].project)
    #expect(try store.project(at: states[1].version) == states[1].project)
    #expect(try TimelineStore.open(at: path, access: .read).snapshot.project == states[2].project)
  }

  /// Choosing a clip that is no take, or an id that is nothing, is refused and changes nothing.
  @Test func aClipThatIsNoTakeIsRefused() throws {
    let dir = try TemporaryDirectory()
    let (store, _) = try StoreFixture.populated(at: dir.path("takes.tape"))
    let project = store.snapshot.project
    #expect(throws: TimelineError.notATake(Clip.ID(1), track: Track.ID(1))) {
      try project.choosingTake(Clip.ID(1))
    }
    #expect(throws: TimelineError.unknownClip(Clip.ID(99))) {
      try project.choosingTake(Clip.ID(99))
    }
  }
}
