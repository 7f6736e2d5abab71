import Foundation
import GRDB
import ReferenceRenders
import Testing
import Timeline

@testable import TimelineStore

/// A ``ScopedEditor`` edit is the edit a whole ``TimelineStore`` makes: seeded random edits
/// (clip gains, names given by id or found by name, names taken, splits, moves to other
/// tracks, removals, ripples that need the whole project, clips that are not there), each
/// made on two copies of one project, one through a scoped editor and one through a store
/// holding the whole project, with other stores committing to both files between opening and
/// each edit. After every edit both give the same result or the same error; after every round
/// the files hold the same rows (tracked tables, versions without their times, head, counters)
/// and the whole store's snapshot equals a fresh read of the scoped file.
/// `TAPE_SCOPED_SEED` replays a run.
@Suite("Scoped editor")
struct ScopedEditorTests {
  /// One edit, as both paths make it.
  struct Edit {
    var label: String
    var scope: EditScope
    /// Reaches beyond its scope (a ripple moves the later clips): the scoped editor must refuse.
    var needsWhole = false
    var commands: @Sendable (Project, inout IDAllocator) throws -> [Command]
  }

  static func randomEdit(_ rng: inout SeededGenerator) -> Edit {
    let id = Clip.ID(Int64.random(in: 1...34, using: &rng))  // 31...34: no such clip
    let name = "name-\(Int.random(in: 0...12, using: &rng))"
    switch Int.random(in: 0..<9, using: &rng) {
    case 0:
      return Edit(label: "Name \(id) \(name)", scope: EditScope(clips: [id], clipNames: [name])) {
        project, _ in try project.nameClip(id, name)
      }
    case 1:
      // By name, as `tape clip set @NAME` finds it.
      return Edit(label: "Gain @\(name)", scope: EditScope(clipNames: [name])) { project, _ in
        guard let clip = project.clip(named: name) else {
          throw TimelineError.unknownClipName(name)
        }
        return try project.setClipGain(clip.id, Gain(decibels: -2))
      }
    case 2:
      return Edit(label: "Remove \(id)", scope: EditScope(clips: [id])) { project, _ in
        try project.removeClip(id, ripple: false)
      }
    case 3:
      return Edit(label: "Ripple \(id)", scope: EditScope(clips: [id]), needsWhole: true) {
        project, _ in try project.removeClip(id, ripple: true)
      }
    case 4:
      return Edit(label: "Split \(id)", scope: EditScope(clips: [id])) { project, ids in
        guard let (clip, _) = project.clip(id) else { throw TimelineError.unknownClip(id) }
        let at = clip.timelineStart + FrameCount(clip.length.frames / 2)
        return try project.splitClip(id, at: at, newID: ids.newClipID())
      }
    case 5:
      let track = Track.ID(Int64.random(in: 1...4, using: &rng))  // 4: no such track
      let position = FramePosition(Int64.random(in: -10...400_000, using: &rng))
      return Edit(label: "Move \(id)", scope: EditScope(clips: [id])) { project, _ in
        try project.moveClip(id, to: position, track: track)
      }
    case 6:
      return Edit(label: "Unname \(id)", scope: EditScope(clips: [id])) { project, _ in
        try project.nameClip(id, nil)
      }
    default:
      let decibels = Double(Int.random(in: -30...8, using: &rng))
      return Edit(label: "Gain \(id)", scope: EditScope(clips: [id])) { project, _ in
        try project.setClipGain(id, Gain(decibels: decibels))
      }
    }
  }

  @Test func scopedEditsEqualWholeProjectEditsWithOthersCommitting() throws {
    let seed =
      ProcessInfo.processInfo.environment["TAPE_SCOPED_SEED"].flatMap(UInt64.init)
      ?? UInt64.random(in: 1...1_000_000)
    print("scoped editor: seed \(seed) (replay with TAPE_SCOPED_SEED=\(seed))")
    var rng = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let base = directory.path("base.tape")
    do {
      let store = try TimelineStore.create(at: base)
      try store.commit(label: "Setup") { _, ids in
        let source = StoreFixture.source(&ids, seconds: 600)
        var tracks = (1...3).map { Track(id: ids.newTrackID(), name: "T\($0)") }
        for index in 0..<30 {
          tracks[index % 3].clips.append(
            Clip(
              id: ids.newClipID(), source: source.id,
              timelineStart: FramePosition(Int64(index / 3) * 96_000),
              sourceRange: FrameRange(start: FramePosition(Int64(index) * 1_000), count: 48_000),
              name: index % 3 == 0 ? "name-\(index / 3)" : nil))
        }
        // Kept takes of c1–c6 (a group follows its playing clip: moved, it moves; removed,
        // it goes), as a scoped edit must see them too.
        let takes = (0..<6).map { index in
          let playing = tracks[index % 3].clips[index / 3]
          return Command.setTake(
            Take(
              clip: Clip(
                id: ids.newClipID(), source: source.id, timelineStart: playing.timelineStart,
                sourceRange: FrameRange(
                  start: FramePosition(Int64(500 + index) * 1_000), count: 48_000)),
              track: tracks[index % 3].id, playing: playing.id, range: playing.timelineRange))
        }
        return [.setSource(source)] + tracks.map(Command.setTrack) + takes
      }
      try store.close()
    }
    let paths = (scoped: directory.path("scoped.tape"), whole: directory.path("whole.tape"))
    for path in [paths.scoped, paths.whole] {
      try FileManager.default.copyItem(atPath: base, toPath: path)
    }

    var outcomes: [String: Int] = [:]
    for round in 0..<12 {
      let scoped = try ScopedEditor(at: paths.scoped, historyBlocks: HistoryBlocks(spans: [4, 16]))
      let whole = try TimelineStore.open(
        at: paths.whole, historyBlocks: HistoryBlocks(spans: [4, 16]))
      for step in 0..<6 {
        // Another process commits between this one's opening and its edit.
        if Bool.random(using: &rng) {
          let other = Self.randomEdit(&rng)
          for path in [paths.scoped, paths.whole] {
            let store = try TimelineStore.open(
              at: path, historyBlocks: HistoryBlocks(spans: [4, 16]))
            _ = try? store.commit(label: "Other: " + other.label, other.commands)
            try store.close()
          }
        }
        let edit = Self.randomEdit(&rng)
        let shown = "seed \(seed), round \(round), step \(step): \(edit.label)"
        let expected = Result { () throws(StoreError) in
          try whole.commit(label: edit.label, edit.commands)
        }
        var got = Result { () throws(StoreError) in
          try scoped.commit(scope: edit.scope, label: edit.label, edit.commands)
        }
        if case .success(.needsWholeProject) = got {
          #expect(edit.needsWhole, "\(shown)")
          let store = try TimelineStore.open(
            at: paths.scoped, historyBlocks: HistoryBlocks(spans: [4, 16]))
          got = Result { () throws(StoreError) in
            .committed(try store.commit(label: edit.label, edit.commands))
          }
          try store.close()
          outcomes["whole", default: 0] += 1
        } else {
          #expect(!edit.needsWhole || (try? expected.get()) == nil, "\(shown): \(got)")
        }
        switch (expected, got) {
        case (.success(let want), .success(.committed(let have))):
          #expect(want == have, "\(shown)")
          outcomes[want.changed.isEmpty ? "unchanged" : "committed", default: 0] += 1
        case (.failure(let want), .failure(let have)):
          #expect(want.description == have.description, "\(shown)")
          outcomes["refused", default: 0] += 1
        default:
          Issue.record("\(shown): \(expected) against \(got)")
        }
      }
      try scoped.close()
      try whole.close()
      #expect(try Self.rows(paths.scoped) == Self.rows(paths.whole), "seed \(seed), round \(round)")
      let reread = try [paths.scoped, paths.whole].map { path in
        let store = try TimelineStore.open(at: path, access: .read)
        defer { try? store.close() }
        return store.snapshot
      }
      #expect(reread[0] == reread[1], "seed \(seed), round \(round)")
    }
    print("scoped editor: \(outcomes.sorted { $0.key < $1.key })")
    // The run made edits both ways and refused some: it tried what it means to.
    #expect(outcomes["committed", default: 0] > 20)
    #expect(outcomes["refused", default: 0] > 5)
    #expect(outcomes["whole", default: 0] > 0)
  }

  /// Every row a project keeps but the times it was written at.
  static func rows(_ path: String) throws -> [String] {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { db in
      let tables =
        Schema.trackedTables + ["head", "id_sequence", "effect_sequence", "marker_sequence"]
      var rows = try tables.flatMap { table in
        try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1").map { "\(table) \($0)" }
      }
      rows += try Row.fetchAll(
        db,
        sql: """
          SELECT id, parent, jump, depth, label, coalescingKey, changeset, revision
          FROM version ORDER BY id
          """
      ).map { "version \($0)" }
      rows += try Row.fetchAll(
        db, sql: "SELECT seq, fromVersion, toVersion, cause FROM head_move ORDER BY seq"
      ).map { "head_move \($0)" }
      return rows
    }
  }
}
