import Foundation
import GRDB
import ReferenceRenders
import Testing
import Timeline

@testable import TimelineStore

/// `TimelineStore.log(of:allBranches:)`, which reads the versions' recorded changes without
/// replaying them, against what replaying gives (the diff of each version from its parent).
@Suite("The log of one clip or track")
struct LogTests {
  /// The scan that skips a version's values finds exactly the rows a full decode finds, in both
  /// encodings (the packed one versions store, and SQLite session changesets, which older
  /// versions hold).
  @Test func scanningFindsWhatDecodingFinds() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("scan.tape")
    let store = try TimelineStore.create(at: path)
    _ = try HistoryBlockTests.commitRandomEdits(to: store, until: 300, seed: 27)
    try store.close()
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    let stored = try queue.read { db in
      try Data.fetchAll(db, sql: "SELECT changeset FROM version ORDER BY id")
    }
    var rng = SeededGenerator(seed: 28)
    var found = 0
    for data in stored {
      var changes = NetChanges()
      try changes.append(changeset: Changeset(data: data))
      let keys = Set(changes.rows.keys)
      let others = (0..<20).map { _ in
        NetChanges.Key(
          table: Int.random(in: 0..<Schema.trackedTables.count, using: &rng),
          id: Int64.random(in: 1...60, using: &rng))
      }.filter { !keys.contains($0) }
      for encoding in [data, changes.changeset().data] {
        for key in keys {
          let hit = try encoding.withUnsafeBytes {
            try NetChanges.touches($0, where: { $0 == key })
          }
          #expect(hit)
          found += 1
        }
        for key in others {
          let hit = try encoding.withUnsafeBytes {
            try NetChanges.touches($0, where: { $0 == key })
          }
          #expect(!hit)
        }
      }
    }
    #expect(found > 500)
  }

  /// On a random walk with branches, the log of every clip and track lists exactly the versions
  /// whose diff from their parent changes it (all branches, and the head's line alone), with
  /// the fields that diff changes.
  @Test func theLogIsWhatReplayingSays() throws {
    let dir = try TemporaryDirectory()
    let path = dir.path("walk.tape")
    let store = try TimelineStore.create(at: path)
    var rng = SeededGenerator(seed: 29)
    for step in 0..<260 {
      if Int.random(in: 0..<100, using: &rng) < 80 || store.snapshot.version < 3 {
        try store.commit(label: "Step \(step)") { project, ids in
          try RandomSequenceTests.randomEdit(project, &ids, &rng)
        }
      } else {
        _ = try? store.undo(steps: Int.random(in: 1...4, using: &rng))
      }
    }
    let history = try store.history()
    #expect(Set(history.versions.map(\.parent)).count < history.versions.count - 20)
    var line = Set<Int64>()
    var parents: [Int64: Int64] = [:]
    for entry in history.versions { parents[entry.version] = entry.parent }
    var cursor: Int64? = history.head
    while let version = cursor {
      line.insert(version)
      cursor = parents[version] ?? nil
    }
    // What replaying says: each version's diff from its parent.
    var clipVersions: [Clip.ID: [Int64]] = [:]
    var trackVersions: [Track.ID: [Int64]] = [:]
    var clipFields: [Int64: [Clip.ID: ProjectDiff.ClipChange]] = [:]
    for entry in history.versions {
      guard let parent = entry.parent else { continue }
      let diff = try store.diff(from: parent, to: entry.version).diff
      for change in diff.clips {
        clipVersions[change.id, default: []].append(entry.version)
        clipFields[entry.version, default: [:]][change.id] = change
      }
      for change in diff.tracks
      where change.before == nil || change.after == nil
        || change.before?.index == change.after?.index
      {
        trackVersions[change.id, default: []].append(entry.version)
      }
    }
    #expect(clipVersions.count > 20)
    for (clip, versions) in clipVersions {
      let all = try store.log(of: .clip(clip), allBranches: true)
      #expect(all.entries.map(\.entry.version) == versions.sorted(by: >), "\(clip)")
      let onLine = try store.log(of: .clip(clip))
      #expect(
        onLine.entries.map(\.entry.version) == versions.filter(line.contains).sorted(by: >),
        "\(clip)")
      for entry in all.entries {
        #expect(entry.isOnHeadLine == line.contains(entry.entry.version))
        guard let change = clipFields[entry.entry.version]?[clip] else { continue }
        // The fields the log names are the columns that differ between before and after.
        switch (change.before, change.after) {
        case (nil, _?): #expect(entry.change == .added)
        case (_?, nil): #expect(entry.change == .removed)
        case (let old?, let new?):
          #expect(entry.change == .changed)
          var differing: [String] = []
          if old.track != new.track { differing.append("trackID") }
          if old.clip.source != new.clip.source { differing.append("sourceID") }
          if old.clip.timelineStart != new.clip.timelineStart { differing.append("timelineStart") }
          if old.clip.sourceRange.start != new.clip.sourceRange.start {
            differing.append("sourceStart")
          }
          if old.clip.length != new.clip.length { differing.append("length") }
          if old.clip.gain != new.clip.gain { differing.append("gainDB") }
          if old.clip.fadeIn.length != new.clip.fadeIn.length { differing.append("fadeInLength") }
          if old.clip.fadeIn.curve != new.clip.fadeIn.curve { differing.append("fadeInCurve") }
          if old.clip.fadeOut.length != new.clip.fadeOut.length {
            differing.append("fadeOutLength")
          }
          if old.clip.fadeOut.curve != new.clip.fadeOut.curve { differing.append("fadeOutCurve") }
          #expect(entry.fields.map(\.name) == differing, "\(clip) in v\(entry.entry.version)")
        default: break
        }
      }
    }
    // Tracks: every version that changed a track's settings or envelope is listed (a track
    // may also be listed where only its stored position moved, which the diff words as a row).
    for (track, versions) in trackVersions {
      let listed = Set(
        try store.log(of: .track(track), allBranches: true).entries.map(\.entry.version))
      #expect(Set(versions).isSubset(of: listed), "\(track)")
    }
    try store.close()
  }
}
