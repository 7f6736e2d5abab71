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

  /// `old` with `changes` (just applied to the tables; `changed` holds their ids) taken in: the
  /// format, sources and tracks that changed are re-read, the clips are updated from the
  /// changes' own values (a far checkout may touch thousands of them); unchanged tracks share
  /// storage with `old`.
  static func refresh(
    _ old: Project, positions: inout [Track.ID: Int64], changes: NetChanges,
    changed: ChangedIDs, _ db: Database
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
      // storage with `old`), then put back the new state of those that still exist.
      let before = old.locate(changed.clips)
      let trackIndex = Dictionary(
        uniqueKeysWithValues: project.tracks.enumerated().map { ($1.id, $0) })
      let leaving = Set(before.values.compactMap { trackIndex[$0.track] })
      let filter = EntityIDFilter(changed.clips)
      for index in leaving {
        project.tracks[index].clips.removeAll { filter.contains($0.id) }
      }
      var arriving: [Int: [Clip]] = [:]
      let clipTable = Schema.trackedTables.firstIndex(of: Schema.clipTable)
      try changes.forEach { key, kind, _, new in
        guard key.table == clipTable, kind != .delete else { return }
        let (clip, trackID) = try ClipColumns(new, changes).clip(
          Clip.ID(key.id), updating: kind == .insert ? nil : before[Clip.ID(key.id)])
        guard let index = trackIndex[trackID] else {
          throw StoreError.corrupt(detail: "clip \(clip.id) is on missing track \(trackID)")
        }
        arriving[index, default: []].append(clip)
      }
      for (index, clips) in arriving {
        project.tracks[index].clips.insertSorted(clips)
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

  private static let curveNames = FadeCurve.allCases.map { ($0, Array($0.rawValue.utf8)) }

  /// The fade curve a text column names (compared in place: thousands of clips may be read).
  private static func curve(_ row: RawStatement.ResultRow, _ column: Int32) -> FadeCurve? {
    curveNames.first { row.text(column, equals: $0.1) }?.0
  }

  /// A clip row of `SELECT *`, read by column position (``Schema/columns`` order, which a test
  /// checks).
  private static func clip(_ row: RawStatement.ResultRow) throws -> (Clip, Track.ID) {
    guard let inCurve = curve(row, 8), let outCurve = curve(row, 10) else {
      throw StoreError.corrupt(detail: "unknown fade curve in clip \(row.int64(0))")
    }
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

/// A clip's columns as a change records them: all of them for an insert, the changed ones for an
/// update (the others come from the clip as it was). Column order is ``Schema/columns``.
private struct ClipColumns {
  let values: NetChanges.Values
  let changes: NetChanges

  init(_ values: NetChanges.Values, _ changes: NetChanges) {
    self.values = values
    self.changes = changes
  }

  func clip(
    _ id: Clip.ID, updating base: (clip: Clip, track: Track.ID)?
  ) throws -> (Clip, Track.ID) {
    func missing() -> StoreError {
      .corrupt(detail: "the recorded change of clip \(id) lacks a column")
    }
    let trackID = try integer(1).map { Track.ID($0) } ?? base?.track
    let source = try integer(2).map { Source.ID($0) } ?? base?.clip.source
    let start = try integer(3).map { FramePosition($0) } ?? base?.clip.timelineStart
    let sourceStart = try integer(4).map { FramePosition($0) } ?? base?.clip.sourceRange.start
    let length = try integer(5).map { FrameCount($0) } ?? base?.clip.length
    let gain = try real(6).map(Gain.init(decibels:)) ?? base?.clip.gain
    let fadeInLength = try integer(7).map { FrameCount($0) } ?? base?.clip.fadeIn.length
    let fadeInCurve = try curve(8) ?? base?.clip.fadeIn.curve
    let fadeOutLength = try integer(9).map { FrameCount($0) } ?? base?.clip.fadeOut.length
    let fadeOutCurve = try curve(10) ?? base?.clip.fadeOut.curve
    guard let trackID, let source, let start, let sourceStart, let length, let gain,
      let fadeInLength, let fadeInCurve, let fadeOutLength, let fadeOutCurve, length.frames >= 0
    else { throw missing() }
    let clip = Clip(
      id: id, source: source, timelineStart: start,
      sourceRange: FrameRange(start: sourceStart, count: length), gain: gain,
      fadeIn: Fade(length: fadeInLength, curve: fadeInCurve),
      fadeOut: Fade(length: fadeOutLength, curve: fadeOutCurve))
    return (clip, trackID)
  }

  private func integer(_ column: Int) throws -> Int64? {
    switch changes.value(values[column]) {
    case nil: return nil
    case .integer(let value)?: return value
    default: throw StoreError.corrupt(detail: "a recorded clip column \(column) is not an integer")
    }
  }

  /// REAL columns may hold integral values as integers.
  private func real(_ column: Int) throws -> Double? {
    switch changes.value(values[column]) {
    case nil: return nil
    case .real(let value)?: return value
    case .integer(let value)?: return Double(value)
    default: throw StoreError.corrupt(detail: "a recorded clip column \(column) is not a number")
    }
  }

  private func curve(_ column: Int) throws -> FadeCurve? {
    switch changes.value(values[column]) {
    case nil: return nil
    case .text(let name)?:
      guard let curve = FadeCurve(rawValue: name) else { fallthrough }
      return curve
    default: throw StoreError.corrupt(detail: "a recorded clip has an unknown fade curve")
    }
  }
}

extension [Clip] {
  /// Adds `clips` to this array, sorted by ``Clip/timelineOrder``: a few by binary insertion
  /// (a checkout or undo usually moves a few clips of a long track), many by one sort.
  fileprivate mutating func insertSorted(_ clips: [Clip]) {
    guard clips.count <= 16 else {
      append(contentsOf: clips)
      sort(by: Clip.timelineOrder)
      return
    }
    for clip in clips {
      var (low, high) = (startIndex, endIndex)
      while low < high {
        let middle = (low + high) / 2
        if Clip.timelineOrder(self[middle], clip) { low = middle + 1 } else { high = middle }
      }
      insert(clip, at: low)
    }
  }
}
