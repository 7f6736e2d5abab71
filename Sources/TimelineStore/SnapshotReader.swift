internal import GRDB
import Timeline

/// A project as the store holds it: the snapshot, each track's stored position (the `track`
/// table's `position`, which the snapshot's order reflects), and where each clip is
/// (``Timeline/ClipIndex``, so diffs of a few clips cost a few lookups).
struct HeldProject: Sendable, Hashable {
  var project: Project
  var positions: [Track.ID: Int64]
  var clips: ClipIndex
}

/// Reads projects out of the tracked tables: whole, or by applying the rows that changed in
/// memory and sharing everything else with the previous snapshot.
enum SnapshotReader {
  /// The whole project, with each track's stored position and the clip index.
  static func load(_ db: Database) throws -> HeldProject {
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
    // Projects made before envelopes existed have neither table until opened for writing.
    let mixTables = try db.tableExists(Schema.envelopeTable)
    var envelopes: [Track.ID: Envelope] = [:]
    var masterGain = Gain.unity
    if mixTables {
      for row in try Row.fetchAll(db, sql: "SELECT trackID, points FROM envelope") {
        guard let envelope = Envelope(storageText: row["points"]) else {
          throw StoreError.corrupt(
            detail: "the envelope of track \(row["trackID"] as Int64) is unreadable")
        }
        envelopes[Track.ID(row["trackID"])] = envelope
      }
      if let gain = try Double.fetchOne(db, sql: "SELECT gainDB FROM master WHERE id = 1") {
        masterGain = Gain(decibels: gain)
      }
    }
    var positions: [Track.ID: Int64] = [:]
    var tracks: [Track] = []
    for row in try Row.fetchAll(db, sql: "SELECT * FROM track ORDER BY position, id") {
      var track = self.track(row)
      track.envelope = envelopes[track.id]
      track.clips = clipsByTrack[track.id] ?? []
      positions[track.id] = row["position"]
      tracks.append(track)
    }
    let project = Project(
      sampleRate: format["sampleRate"], channels: format["channels"], sources: sources,
      tracks: tracks, masterGain: masterGain)
    return HeldProject(project: project, positions: positions, clips: ClipIndex(project))
  }

  /// `old` with `changes` taken in, in memory, from the changes' own values: the project at
  /// the other end of the changes, without reading a table. So reading any version is a read
  /// transaction (the head's snapshot plus the net change of the path, see ``VersionGraph``),
  /// and a history move or catch-up re-reads nothing after applying. Unchanged tracks share
  /// storage with `old`. `changed` holds the changes' ids (``NetChanges/changedIDs``); track
  /// positions and the clip index are updated with it.
  static func applying(
    _ changes: NetChanges, changed: ChangedIDs, to held: HeldProject
  ) throws -> HeldProject {
    let old = held.project
    var positions = held.positions
    var placements: [(Clip.ID, ClipIndex.Change)] = []
    var project = old
    let tables = (
      project: Schema.trackedTables.firstIndex(of: Schema.projectTable),
      source: Schema.trackedTables.firstIndex(of: Schema.sourceTable),
      track: Schema.trackedTables.firstIndex(of: Schema.trackTable),
      clip: Schema.trackedTables.firstIndex(of: Schema.clipTable),
      envelope: Schema.trackedTables.firstIndex(of: Schema.envelopeTable),
      master: Schema.trackedTables.firstIndex(of: Schema.masterTable)
    )
    // Format, sources and track settings first: clips are placed on the tracks as they end up.
    var sources = Dictionary(uniqueKeysWithValues: project.sources.map { ($0.id, $0) })
    var trackIndex = Dictionary(
      uniqueKeysWithValues: project.tracks.enumerated().map { ($1.id, $0) })
    var removedTracks: Set<Track.ID> = []
    try changes.forEach { key, kind, _, new in
      let columns = Columns(new, changes, table: key.table, id: key.id)
      switch key.table {
      case tables.project:
        if kind == .delete { throw StoreError.corrupt(detail: "a change removes the project row") }
        project.sampleRate = Int(try columns.integer(1) ?? Int64(project.sampleRate))
        project.channels = Int(try columns.integer(2) ?? Int64(project.channels))
      case tables.source:
        let id = Source.ID(key.id)
        if kind == .delete {
          sources[id] = nil
        } else {
          sources[id] = try columns.source(id, updating: kind == .insert ? nil : sources[id])
        }
      case tables.track:
        let id = Track.ID(key.id)
        if kind == .delete {
          removedTracks.insert(id)
          positions[id] = nil
          return
        }
        let base = kind == .insert ? nil : trackIndex[id].map { project.tracks[$0] }
        let (settings, position) = try columns.track(
          id, updating: base.map { ($0, positions[id] ?? 0) })
        positions[id] = position
        if let index = trackIndex[id] {
          var track = settings
          track.clips = project.tracks[index].clips
          track.envelope = project.tracks[index].envelope
          project.tracks[index] = track
        } else {
          trackIndex[id] = project.tracks.count
          project.tracks.append(settings)
        }
      case tables.master:
        if kind == .delete {
          project.masterGain = .unity
        } else if let gain = try columns.real(1) {
          project.masterGain = Gain(decibels: gain)
        }
      default:
        break
      }
    }
    // Envelopes once every track is in place.
    try changes.forEach { key, kind, _, new in
      guard key.table == tables.envelope else { return }
      guard let index = trackIndex[Track.ID(key.id)] else {
        if kind == .delete { return }
        throw StoreError.corrupt(detail: "an envelope belongs to missing track t\(key.id)")
      }
      if kind == .delete {
        project.tracks[index].envelope = nil
        return
      }
      let columns = Columns(new, changes, table: key.table, id: key.id)
      guard let text = try columns.text(1) else { return }
      guard let envelope = Envelope(storageText: text) else {
        throw StoreError.corrupt(detail: "the envelope of track t\(key.id) is unreadable")
      }
      project.tracks[index].envelope = envelope
    }
    if changed.sources.count > 0 {
      project.sources = sources.values.sorted { $0.id < $1.id }
    }

    if !changed.clips.isEmpty {
      // Take the changed clips out of the tracks that hold them (the other tracks keep sharing
      // storage with `old`), then put back the new state of those that still exist.
      let before = Dictionary(
        uniqueKeysWithValues: changed.clips.compactMap { id in
          held.clips.clip(id, in: old).map { (id, (clip: $0.clip, track: $0.track)) }
        })
      let leaving = Set(before.values.compactMap { trackIndex[$0.track] })
      let filter = EntityIDFilter(changed.clips)
      for index in leaving {
        project.tracks[index].clips.removeAll { filter.contains($0.id) }
      }
      var arriving: [Int: [Clip]] = [:]
      try changes.forEach { key, kind, _, new in
        guard key.table == tables.clip, kind != .delete else { return }
        let (clip, trackID) = try Columns(new, changes, table: key.table, id: key.id).clip(
          Clip.ID(key.id), updating: kind == .insert ? nil : before[Clip.ID(key.id)])
        guard let index = trackIndex[trackID], !removedTracks.contains(trackID) else {
          throw StoreError.corrupt(detail: "clip \(clip.id) is on missing track \(trackID)")
        }
        arriving[index, default: []].append(clip)
        placements.append((clip.id, .placed(clip, on: trackID)))
      }
      for (index, clips) in arriving {
        project.tracks[index].clips.insertSorted(clips)
      }
    }
    if !removedTracks.isEmpty {
      for track in project.tracks where removedTracks.contains(track.id) && !track.clips.isEmpty {
        throw StoreError.corrupt(detail: "track \(track.id) is removed with its clips still on it")
      }
      project.tracks.removeAll { removedTracks.contains($0.id) }
    }
    if !changed.tracks.isEmpty {
      project.tracks.sort { (positions[$0.id] ?? 0, $0.id) < (positions[$1.id] ?? 0, $1.id) }
    }
    let placed = Set(placements.map(\.0))
    for id in changed.clips where !placed.contains(id) { placements.append((id, .removed)) }
    return HeldProject(
      project: project, positions: positions, clips: held.clips.updating(placements))
  }

  private static func source(_ row: Row) throws -> Source {
    guard let path = RawPath(row["path"] as DatabaseValue) else {
      throw StoreError.corrupt(detail: "source \(row["id"] as Int64) has no path")
    }
    return Source(
      id: Source.ID(row["id"]), path: path, contentHash: row["contentHash"],
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

/// A row's columns as a change records them: all of them for an insert, the changed ones for
/// an update (the others come from the value as it was). Column order is ``Schema/columns``.
private struct Columns {
  let values: NetChanges.Values
  let changes: NetChanges
  let table: Int
  let id: Int64

  init(_ values: NetChanges.Values, _ changes: NetChanges, table: Int, id: Int64) {
    self.values = values
    self.changes = changes
    self.table = table
    self.id = id
  }

  private func missing() -> StoreError {
    .corrupt(
      detail: "the recorded change of \(Schema.trackedTables[table]) \(id) lacks a column")
  }

  func source(_ id: Source.ID, updating base: Source?) throws -> Source {
    guard let path = try path(1) ?? base?.path, let hash = try text(2) ?? base?.contentHash,
      let rate = try integer(3).map(Int.init) ?? base?.sampleRate,
      let channels = try integer(4).map(Int.init) ?? base?.channels,
      let frames = try integer(5).map({ FrameCount($0) }) ?? base?.frameCount
    else { throw missing() }
    return Source(
      id: id, path: path, contentHash: hash, sampleRate: rate, channels: channels,
      frameCount: frames)
  }

  /// A track's settings (no clips) and stored position.
  func track(_ id: Track.ID, updating base: (Track, Int64)?) throws -> (Track, Int64) {
    guard let position = try integer(1) ?? base?.1, let name = try text(2) ?? base?.0.name,
      let gain = try real(3).map(Gain.init(decibels:)) ?? base?.0.gain,
      let pan = try real(4) ?? base?.0.pan,
      let muted = try integer(5).map({ $0 != 0 }) ?? base?.0.isMuted,
      let solo = try integer(6).map({ $0 != 0 }) ?? base?.0.isSolo
    else { throw missing() }
    return (Track(id: id, name: name, gain: gain, pan: pan, isMuted: muted, isSolo: solo), position)
  }

  func clip(
    _ id: Clip.ID, updating base: (clip: Clip, track: Track.ID)?
  ) throws -> (Clip, Track.ID) {
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

  func integer(_ column: Int) throws -> Int64? {
    switch changes.value(values[column]) {
    case nil: return nil
    case .integer(let value)?: return value
    default: throw StoreError.corrupt(detail: "a recorded column \(column) is not an integer")
    }
  }

  /// REAL columns may hold integral values as integers.
  func real(_ column: Int) throws -> Double? {
    switch changes.value(values[column]) {
    case nil: return nil
    case .real(let value)?: return value
    case .integer(let value)?: return Double(value)
    default: throw StoreError.corrupt(detail: "a recorded column \(column) is not a number")
    }
  }

  func text(_ column: Int) throws -> String? {
    switch changes.value(values[column]) {
    case nil: return nil
    case .text(let value)?: return value
    default: throw StoreError.corrupt(detail: "a recorded column \(column) is not text")
    }
  }

  /// A path column: text, or a blob for bytes that are not UTF-8.
  func path(_ column: Int) throws -> RawPath? {
    switch changes.value(values[column]) {
    case nil: return nil
    case .text(let value)?: return RawPath(value)
    case .blob(let value)?: return RawPath(bytes: value)
    default: throw StoreError.corrupt(detail: "a recorded column \(column) is not a path")
    }
  }

  func curve(_ column: Int) throws -> FadeCurve? {
    guard let name = try text(column) else { return nil }
    guard let curve = FadeCurve(rawValue: name) else {
      throw StoreError.corrupt(detail: "a recorded clip has an unknown fade curve")
    }
    return curve
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
