import Foundation
import GRDB
import ReferenceRenders
import Synchronization
import Testing

@testable import Timeline
@testable import TimelineStore

/// The snapshots a store builds in memory (sharing structure with the one before) against a
/// rebuild from the file: after every step of a seeded random walk of commits (every command
/// kind, through the edit functions and as raw commands), undos, redos and checkouts across
/// branches, the store's project, track positions, envelope point ids and clip index equal
/// what ``SnapshotReader/load(_:)`` reads from the tables.
@Suite("Snapshots against a rebuild from the file")
struct SnapshotRebuildTests {
  /// A command of a kind the edit functions seldom give, made directly: sources removed, whole
  /// tracks set (taking clips from other tracks), the track order, clips set and removed in
  /// several tracks at once.
  static func rawEdit(
    _ project: Project, _ ids: inout IDAllocator, _ rng: inout SeededGenerator
  ) -> [Command] {
    let clips = project.allClips
    switch Int.random(in: 0..<6, using: &rng) {
    case 0:
      let used = Set(clips.map(\.source))
      let unused = project.sources.filter { !used.contains($0.id) }.map(\.id)
      return unused.isEmpty ? [] : [.removeSources(unused)]
    case 1:
      // A track takes a few clips of other tracks, keeps some of its own, and drops the rest.
      guard var track = project.tracks.randomElement(using: &rng) else { return [] }
      let taken = clips.filter { _ in Int.random(in: 0..<5, using: &rng) == 0 }
      let kept = track.clips.filter { _ in Int.random(in: 0..<4, using: &rng) > 0 }
      track.clips = ClipList(kept + taken.filter { !track.clips.contains(id: $0.id) })
      track.name = "Set \(Int.random(in: 0..<100, using: &rng))"
      return [.setTrack(track)]
    case 2:
      return [.setTrackOrder(project.tracks.map(\.id).shuffled(using: &rng))]
    case 3:
      guard let track = project.tracks.randomElement(using: &rng) else { return [] }
      return clips.filter { _ in Int.random(in: 0..<6, using: &rng) == 0 }.map { clip in
        var moved = clip
        moved.timelineStart = FramePosition(Int64.random(in: 0...2_000_000, using: &rng))
        return .setClip(moved, track: track.id)
      }
    case 4:
      let gone = clips.filter { _ in Int.random(in: 0..<8, using: &rng) == 0 }.map(\.id)
      return gone.isEmpty ? [] : [.removeClips(gone)]
    default:
      guard let source = project.sources.first, let track = project.tracks.first else { return [] }
      // Many clips at once (more than the in-order insertion handles one by one).
      return (0..<Int.random(in: 1...40, using: &rng)).map { _ in
        .setClip(
          Clip(
            id: ids.newClipID(), source: source.id,
            timelineStart: FramePosition(Int64.random(in: 0...2_000_000, using: &rng)),
            sourceRange: FrameRange(start: .zero, count: 1_000)),
          track: track.id)
      }
    }
  }

  /// Each seed twice: with the standard threshold of a pending move (which a walk of this size
  /// never reaches: every move writes its rows), and with every history move kept pending
  /// (``PendingMove``): composed with the next move, applied by every whole read, folded by the
  /// next edit and by the close.
  @Test(arguments: [UInt64(21), 22], [false, true])
  func randomHistoryMatchesTheFile(seed: UInt64, deferringEveryMove: Bool) throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("walk.tape")
    try TimelineStore.create(at: path).close()
    // What is compared is what the file holds, not whether it reached the disk.
    let store = try TimelineStore.open(
      at: path, durability: .normal, historyBlocks: .standard,
      deferredMoveRows: deferringEveryMove ? 1 : TimelineStore.standardDeferredMoveRows)
    var configuration = Configuration()
    configuration.readonly = true
    let file = try DatabaseQueue(path: path, configuration: configuration)
    var rng = SeededGenerator(seed: seed)
    var versions: [Int64] = [store.snapshot.version]
    var kinds: [String: Int] = [:]
    var mostClips = 0
    var pendingSteps = 0
    for step in 0..<300 {
      let roll = Int.random(in: 0..<10, using: &rng)
      var kind: String
      if roll == 0 {
        kind = "undo"
        _ = try? store.undo(steps: Int.random(in: 1...3, using: &rng))
      } else if roll == 1 {
        kind = "redo"
        _ = try? store.redo(steps: Int.random(in: 1...3, using: &rng))
      } else if roll == 2 {
        kind = "checkout"
        try store.checkout(versions.randomElement(using: &rng)!)
      } else {
        kind = roll == 3 ? "raw" : "edit"
        let result = try store.commit(label: "Step \(step)") { project, ids in
          roll == 3
            ? Self.rawEdit(project, &ids, &rng)
            : (try? RandomSequenceTests.randomEdit(project, &ids, &rng)) ?? []
        }
        if !result.changed.isEmpty { versions.append(result.version) }
        // An edit that changed nothing is rolled back, with the fold it began with.
        if result.changed.isEmpty { kind += " (nothing)" }
      }
      kinds[kind.hasSuffix("(nothing)") ? String(kind.prefix { $0 != " " }) : kind, default: 0] +=
        1
      let held = store.state.withLock { $0.held }
      mostClips = max(mostClips, held.project.clipCount)
      let (rebuilt, pending, verified) = try file.read {
        (
          try SnapshotReader.load($0), try PendingMove.exists($0),
          try PendingMove.verify($0, blocks: .standard)
        )
      }
      if pending { pendingSteps += 1 }
      // The pending change, composed move by move, is what history says from its base to the
      // head, and finds the rows it covers as it expects.
      #expect(verified.matches, "step \(step) (\(kind))")
      #expect(!pending || deferringEveryMove, "step \(step) (\(kind))")
      #expect(
        !pending || ["undo", "redo", "checkout"].contains(kind) || kind.hasSuffix("(nothing)"),
        "step \(step) (\(kind))")
      #expect(held.project == rebuilt.project, "step \(step) (\(kind))")
      #expect(held.positions == rebuilt.positions, "step \(step) (\(kind))")
      #expect(held.points == rebuilt.points, "step \(step) (\(kind))")
      #expect(held.clips == rebuilt.clips, "step \(step) (\(kind))")
      for track in held.project.tracks {
        #expect(track.clips.structureProblem() == nil, "step \(step): \(track.id)")
        #expect(track.clips.isSorted, "step \(step): \(track.id)")
      }
      if held.project != rebuilt.project { break }
    }
    // The walk went everywhere it should.
    #expect(kinds.keys.sorted() == ["checkout", "edit", "raw", "redo", "undo"])
    #expect(mostClips > 20)
    #expect((pendingSteps > 20) == deferringEveryMove)
    // Closing writes a pending move to the rows: the tables alone hold the head.
    let last = store.state.withLock { $0.held }
    try store.close()
    let (closed, pendingAfterClose) = try file.read {
      (try SnapshotReader.load($0), try PendingMove.exists($0))
    }
    #expect(!pendingAfterClose)
    #expect(closed.project == last.project)
    #expect(closed.positions == last.positions)
    #expect(closed.points == last.points)
  }
}

@Suite("Where a snapshot's changed clips are")
struct LocatedClipsTests {
  /// Every clip asked for is found with its track and its position in the track's list, when
  /// many are asked for (found by a walk along the tracks) and when few are (through the
  /// index); an id not in the project is not found. Ids dense (many found through a table
  /// indexed by id) and sparse (a dictionary).
  @Test(arguments: [Int64(1), 1_000_003])
  func eachClipIsFoundWhereItIs(idStep: Int64) {
    let tracks = (1...3).map { track in
      Track(
        id: Track.ID(Int64(track)), name: "t\(track)",
        clips: (0..<400).map { index in
          Clip(
            id: Clip.ID((Int64(track) * 1_000 + Int64(index)) * idStep),
            source: Source.ID(1), timelineStart: FramePosition(Int64(399 - index) * 1_000),
            sourceRange: FrameRange(start: .zero, count: 500))
        })
    }
    var project = Project(sampleRate: 48_000, channels: 2)
    project.tracks = tracks
    let held = HeldProject(project: project, positions: [:], clips: ClipIndex(project))
    let missing = Clip.ID(7 * idStep)
    let every = Set(project.allClips.map(\.id))
    for (what, ids) in [
      ("every clip", every.union([missing])),
      ("three", Set(project.allClips.prefix(3).map(\.id)).union([missing])),
      ("twenty", Set(project.allClips.suffix(20).map(\.id)).union([missing])),
    ] {
      #expect(what != "every clip" || ids.count >= LocatedClips.directFrom)
      let located = LocatedClips(ids, in: held)
      #expect(located.places.count == ids.count - 1, "\(what)")
      #expect(located[missing] == nil, "\(what)")
      for track in project.tracks {
        for (position, clip) in track.clips.enumerated() where ids.contains(clip.id) {
          let place = located[clip.id]
          #expect(place?.clip == clip, "\(what): \(clip.id)")
          #expect(place?.track == track.id, "\(what): \(clip.id)")
          #expect(place?.position == position, "\(what): \(clip.id)")
        }
      }
    }
  }
}

@Suite("Damaged changes")
struct DamagedChangeTests {
  /// Changes that give several clips impossible fades are refused naming the lowest id,
  /// whatever order the changes are held in (they used to be checked in a dictionary's order,
  /// which differs from run to run).
  @Test func theLowestDamagedClipIsNamedInEveryOrder() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("song.tape")
    let (store, _) = try StoreFixture.populated(at: path)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    let fadeIn = try #require(
      Schema.trackedColumns[ClipRow.index].firstIndex(of: "fadeInLength"))
    var messages: Set<String> = []
    try queue.read { db in
      let held = try SnapshotReader.load(db)
      func stored(_ id: Int64) throws -> [ChangeValue] {
        let row = try #require(
          try Row.fetchOne(db, sql: "SELECT * FROM clip WHERE id = ?", arguments: [id]))
        return row.databaseValues.map { value in
          switch value.storage {
          case .null: .null
          case .int64(let integer): .integer(integer)
          case .double(let real): .real(real)
          case .string(let text): .text(text)
          case .blob(let data): .blob([UInt8](data))
          }
        }
      }
      for order: [Int64] in [[1, 2, 3], [3, 2, 1], [2, 3, 1], [3, 1, 2]] {
        var changes = NetChanges()
        for id in order {
          let old = try stored(id)
          var new = old
          new[fadeIn] = .integer(100_000_000)
          changes.record(NetChanges.Key(table: ClipRow.index, id: id), from: old, to: new)
        }
        do {
          _ = try SnapshotReader.applying(changes, changed: changes.changedIDs, to: held)
          Issue.record("damaged clips were taken in (order \(order))")
        } catch let error as StoreError {
          messages.insert(error.description)
        }
      }
    }
    #expect(messages.count == 1)
    #expect(messages.first?.contains("clip \(Clip.ID(1)) ") == true, "\(messages)")
  }
}
