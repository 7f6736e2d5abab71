internal import GRDB
import Timeline

/// Reads projects out of the tracked tables: whole, or by re-reading only the rows that changed
/// and sharing everything else with the previous snapshot.
enum SnapshotReader {
  /// The whole project, and each track's stored position.
  static func load(_ db: Database) throws -> (Project, [Track.ID: Int64]) {
    guard
      let format = try Row.fetchOne(
        db, sql: "SELECT sampleRate, channels FROM project WHERE id = 1")
    else { throw StoreError.corrupt(detail: "the project row is missing") }
    let sources = try Row.fetchAll(db, sql: "SELECT * FROM source ORDER BY id").map(source)
    var clipsByTrack: [Track.ID: [Clip]] = [:]
    try RawStatement.query(
      db.cachedStatement(sql: "SELECT * FROM clip ORDER BY trackID, timelineStart, id")
        .sqliteStatement, on: connection(db)
    ) { row in
      let (clip, track) = try self.clip(row)
      clipsByTrack[track, default: []].append(clip)
    }
    var positions: [Track.ID: Int64] = [:]
    var tracks: [Track] = []
    for row in try Row.fetchAll(db, sql: "SELECT * FROM track ORDER BY position, id") {
      var track = self.track(row)
      track.clips = clipsByTrack[track.id] ?? []
      positions[track.id] = row["position"]
      tracks.append(track)
    }
    let project = Project(
      sampleRate: format["sampleRate"], channels: format["channels"], sources: sources,
      tracks: tracks)
    return (project, positions)
  }

  /// `old` with the rows in `changed` re-read; unchanged tracks share storage with `old`.
  static func refresh(
    _ old: Project, positions: inout [Track.ID: Int64], changed: ChangedIDs, _ db: Database
  ) throws -> Project {
    var project = old
    if changed.format {
      guard
        let format = try Row.fetchOne(
          db, sql: "SELECT sampleRate, channels FROM project WHERE id = 1")
      else { throw StoreError.corrupt(detail: "the project row is missing") }
      project.sampleRate = format["sampleRate"]
      project.channels = format["channels"]
    }
    for id in changed.sources {
      project.sources.removeAll { $0.id == id }
      if let row = try Row.fetchOne(
        db.cachedStatement(sql: "SELECT * FROM source WHERE id = ?"), arguments: [id.rawValue])
      {
        project.sources.append(source(row))
      }
    }
    project.sources.sort { $0.id < $1.id }

    for id in changed.tracks {
      let row = try Row.fetchOne(
        db.cachedStatement(sql: "SELECT * FROM track WHERE id = ?"), arguments: [id.rawValue])
      let index = project.tracks.firstIndex { $0.id == id }
      switch (row, index) {
      case (nil, let index?):
        project.tracks.remove(at: index)
        positions[id] = nil
      case (let row?, let index?):
        var settings = track(row)
        settings.clips = project.tracks[index].clips
        project.tracks[index] = settings
        positions[id] = row["position"]
      case (let row?, nil):
        project.tracks.append(track(row))
        positions[id] = row["position"]
      case (nil, nil):
        break
      }
    }

    if !changed.clips.isEmpty {
      // Take the changed clips out of the tracks that hold them (the other tracks keep sharing
      // storage with `old`), then put back those that still exist, read in one statement.
      for index in project.tracks.indices
      where project.tracks[index].clips.contains(where: { changed.clips.contains($0.id) }) {
        project.tracks[index].clips.removeAll { changed.clips.contains($0.id) }
      }
      let trackIndex = Dictionary(
        uniqueKeysWithValues: project.tracks.enumerated().map { ($1.id, $0) })
      var touchedTracks = Set<Int>()
      let ids = "[" + changed.clips.map { String($0.rawValue) }.joined(separator: ",") + "]"
      try RawStatement.query(
        db.cachedStatement(sql: "SELECT * FROM clip WHERE id IN (SELECT value FROM json_each(?))")
          .sqliteStatement, on: connection(db), binding: [.text(ids)]
      ) { row in
        let (clip, trackID) = try self.clip(row)
        guard let index = trackIndex[trackID] else {
          throw StoreError.corrupt(detail: "clip \(clip.id) is on missing track \(trackID)")
        }
        project.tracks[index].clips.append(clip)
        touchedTracks.insert(index)
      }
      for index in touchedTracks {
        project.tracks[index].clips.sort(by: Clip.timelineOrder)
      }
    }
    if !changed.tracks.isEmpty {
      project.tracks.sort { (positions[$0.id] ?? 0, $0.id) < (positions[$1.id] ?? 0, $1.id) }
    }
    return project
  }

  private static func source(_ row: Row) -> Source {
    Source(
      id: Source.ID(row["id"]), path: row["path"], contentHash: row["contentHash"],
      sampleRate: row["sampleRate"], channels: row["channels"],
      frameCount: FrameCount(row["frameCount"] as Int64))
  }

  private static func track(_ row: Row) -> Track {
    Track(
      id: Track.ID(row["id"]), name: row["name"], gain: Gain(decibels: row["gainDB"]),
      pan: row["pan"], isMuted: row["muted"], isSolo: row["solo"])
  }

  /// A clip row of `SELECT *`, read by column position (``Schema/columns`` order, which a test
  /// checks).
  private static func clip(_ row: RawStatement.ResultRow) throws -> (Clip, Track.ID) {
    guard let inCurve = FadeCurve(rawValue: row.text(8)),
      let outCurve = FadeCurve(rawValue: row.text(10))
    else { throw StoreError.corrupt(detail: "unknown fade curve in clip \(row.int64(0))") }
    let clip = Clip(
      id: Clip.ID(row.int64(0)), source: Source.ID(row.int64(2)),
      timelineStart: FramePosition(row.int64(3)),
      sourceRange: FrameRange(
        start: FramePosition(row.int64(4)), count: FrameCount(row.int64(5))),
      gain: Gain(decibels: row.double(6)),
      fadeIn: Fade(length: FrameCount(row.int64(7)), curve: inCurve),
      fadeOut: Fade(length: FrameCount(row.int64(9)), curve: outCurve))
    return (clip, Track.ID(row.int64(1)))
  }
}
