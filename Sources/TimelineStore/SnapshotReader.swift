internal import CMemoryHints
internal import GRDB
import Timeline

/// A project as the store holds it: the snapshot, each track's stored position (the `track`
/// table's `position`, which the snapshot's order reflects), and where each clip is
/// (``Timeline/ClipIndex``, so diffs of a few clips cost a few lookups).
struct HeldProject: Sendable, Hashable {
  var project: Project
  var positions: [Track.ID: Int64]
  /// The row ids of each track's envelope points (``EnvelopePointRow``), in point order; no
  /// entry for a track without an envelope or whose envelope is still one text row.
  var points: [Track.ID: [Int64]] = [:]
  var clips: ClipIndex

  /// No project at all: the snapshot of a store that reads only parts (``ScopedEditor``).
  static var none: HeldProject {
    let empty = Project(sampleRate: 0, channels: 0)
    return HeldProject(project: empty, positions: [:], clips: ClipIndex(empty))
  }
}

/// Reads projects out of the tracked tables: whole, or by applying the rows that changed in
/// memory and sharing everything else with the previous snapshot.
enum SnapshotReader {
  /// The whole project, with each track's stored position and the clip index; with `clips`,
  /// a part of it: every table whole but the clips, of which only those (read by primary key,
  /// an id with no row is skipped). A part is for a scoped edit alone
  /// (``TimelineStore/ScopedEditor``), which checks that its commands touch nothing else; it
  /// never becomes a store's snapshot. A whole project is the head's: a pending history move
  /// (``PendingMove``) is applied to the rows read.
  /// `pagesChecked`: the clip tables' pages were checked in this transaction already (a
  /// history move reads a part twice: before and after it knows which clips it changes).
  static func load(
    _ db: Database, clips part: Set<Clip.ID>? = nil, pagesChecked: Bool = false
  ) throws -> HeldProject {
    let only = part.map { ids in ids.map { String($0.rawValue) }.sorted().joined(separator: ", ") }
    // Projects made before cut fades have no detail table until opened for writing.
    let hasDetails = try db.tableExists(Schema.clipDetailTable)
    if part != nil, !pagesChecked {
      // A part reads few clips, but a damaged page of the clip tables must stop the edit as it
      // stops a whole load: a count walks every page of each table (without decoding a row:
      // at 100,000 clips about 1 ms warm, 3 ms in a new process), and SQLite refuses a page
      // that is not sound.
      for table in [ClipRow.table] + (hasDetails ? [Schema.clipDetailTable] : []) {
        _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table) NOT INDEXED")
      }
    }
    var project = Project(sampleRate: 0, channels: 0)
    var found = false
    try all(ProjectRow.self, db) { row in
      try ProjectRow.read(row, into: &project)
      found = true
    }
    guard found else { throw StoreError.corrupt(detail: "the project row is missing") }
    try all(SourceRow.self, orderedBy: "id", db) { row in
      project.sources.append(
        try SourceRow.read(row, id: Source.ID(row.int64(0)), updating: nil))
    }
    var details: [Clip.ID: ClipDetailRow.Detail] = [:]
    if hasDetails {
      try all(ClipDetailRow.self, where: only.map { "clipID IN (\($0))" }, db) { row in
        let id = Clip.ID(row.int64(0))
        details[id] = try ClipDetailRow.read(row, id: id, updating: nil)
      }
    }
    var clipsByTrack: [Track.ID: [Clip]] = [:]
    try all(
      ClipRow.self, where: only.map { "id IN (\($0))" }, orderedBy: "trackID, timelineStart, id", db
    ) { row in
      var (clip, track) = try ClipRow.read(row, id: Clip.ID(row.int64(0)), updating: nil)
      if let detail = details.removeValue(forKey: clip.id) { clip = detail.applied(to: clip) }
      try requireSound(clip)
      clipsByTrack[track, default: []].append(clip)
    }
    if let orphan = details.keys.first {
      throw StoreError.corrupt(detail: "the detail of missing clip \(orphan) is stored")
    }
    // Projects made before envelopes existed have neither table until opened for writing.
    var envelopes: [Track.ID: Envelope] = [:]
    if try db.tableExists(Schema.envelopeTable) {
      try all(EnvelopeRow.self, db) { row in
        let track = Track.ID(row.int64(0))
        envelopes[track] = try EnvelopeRow.read(row, of: track)
      }
      try all(MasterRow.self, db) { row in
        project.masterGain = try MasterRow.read(row) ?? .unity
      }
    }
    // Projects made before envelope points have no point table until opened for writing.
    var points: [Track.ID: [Int64]] = [:]
    if try db.tableExists(Schema.envelopePointTable) {
      var rows: [Int64: [ChangeValue?]] = [:]
      try all(EnvelopePointRow.self, db) { row in
        let id = row.int64(0)
        rows[id] = [
          .integer(id), .integer(row.int64(1)), row.isNull(2) ? .null : .integer(row.int64(2)),
          .integer(row.int64(3)), row.isNull(4) ? .null : .real(row.double(4)),
          row.text(Int32(5)).map(ChangeValue.text) ?? .null,
        ]
      }
      for (track, stored) in try EnvelopePointRow.envelopes(rows) {
        guard envelopes[track] == nil else {
          throw StoreError.corrupt(detail: "track \(track) has two envelopes")
        }
        envelopes[track] = stored.envelope
        points[track] = stored.ids
      }
    }
    // Projects made before routing have neither table until opened for writing.
    var outputs: [Track.ID: Track.ID] = [:]
    if try db.tableExists(Schema.trackOutputTable) {
      try all(TrackOutputRow.self, db) { row in
        outputs[Track.ID(row.int64(0))] = try TrackOutputRow.read(row)
      }
    }
    if try db.tableExists(Schema.sendTable) {
      try all(SendRow.self, orderedBy: "id", db) { row in
        project.sends.append(try SendRow.read(row, id: Send.ID(row.int64(0)), updating: nil))
      }
    }
    // Projects made before pan automation and sends' envelopes have no lane table until
    // opened for writing.
    var pans: [Track.ID: ParameterEnvelope] = [:]
    if try db.tableExists(Schema.laneTable) {
      var envelopes: [Send.ID: Envelope] = [:]
      try all(LaneRow.self, db) { row in
        let id = row.int64(0)
        guard let points = try LaneRow.points(row, id: id) else { throw LaneRow.unreadable(id) }
        if let track = LaneRow.track(ofLane: id) {
          pans[track] = ParameterEnvelope(curve: points)
        } else if let send = LaneRow.send(ofLane: id) {
          envelopes[send] = points
        }
      }
      for index in project.sends.indices {
        project.sends[index].envelope = envelopes.removeValue(forKey: project.sends[index].id)
      }
      if let stray = envelopes.keys.min() {
        throw StoreError.corrupt(detail: "an envelope belongs to missing send \(stray)")
      }
    }
    var positions: [Track.ID: Int64] = [:]
    try all(TrackRow.self, orderedBy: "position, id", db) { row in
      var (track, position) = try TrackRow.read(row, id: Track.ID(row.int64(0)), updating: nil)
      track.envelope = envelopes[track.id]
      track.output = outputs[track.id]
      track.panEnvelope = pans.removeValue(forKey: track.id)
      track.clips = ClipList(clipsByTrack[track.id] ?? [])
      positions[track.id] = position
      project.tracks.append(track)
    }
    // Projects made before effects have no effect table until opened for writing.
    if try db.tableExists(Schema.effectTable) {
      var effects: [(effect: Effect, owner: ChainOwner, position: Int)] = []
      try all(EffectRow.self, db) { row in
        effects.append(try EffectRow.read(row, id: Effect.ID(row.int64(0)), updating: nil))
      }
      // Projects made before side chains have no side-chain table until opened for writing.
      if try db.tableExists(Schema.effectSidechainTable) {
        var sources: [Effect.ID: Track.ID] = [:]
        try all(EffectSidechainRow.self, db) { row in
          sources[Effect.ID(row.int64(0))] = try EffectSidechainRow.read(row)
        }
        for index in effects.indices {
          effects[index].effect.sidechain = sources[effects[index].effect.id]
        }
      }
      try EffectRow.place(effects, in: &project)
      // Projects made before effects' files have no such table until opened for writing.
      if try db.tableExists(Schema.effectFileTable) {
        var files: [(effect: Effect.ID, key: String, file: EffectFile)] = []
        try all(EffectFileRow.self, orderedBy: "id", db) { row in
          files.append(try EffectFileRow.read(row, id: row.int64(0), updating: nil))
        }
        try EffectFileRow.attach(files, to: &project)
      }
    }
    // Projects made before automation have no automation table until opened for writing.
    if try db.tableExists(Schema.effectAutomationTable) {
      var lanes: [Effect.ID: [String: ParameterEnvelope]] = [:]
      try all(EffectAutomationRow.self, db) { row in
        let id = Effect.ID(row.int64(0))
        lanes[id] = try EffectAutomationRow.read(row, of: id)
      }
      try EffectAutomationRow.place(lanes, in: &project)
    }
    // Projects made before markers have no marker table until opened for writing.
    if try db.tableExists(Schema.markerTable) {
      try all(MarkerRow.self, orderedBy: "position, id", db) { row in
        project.markers.append(
          try MarkerRow.read(row, id: Marker.ID(row.int64(0)), updating: nil))
      }
    }
    if try db.tableExists(Schema.takeTable) {
      try all(TakeRow.self, orderedBy: "id", db) { row in
        project.takes.append(try TakeRow.read(row, id: Clip.ID(row.int64(0)), updating: nil))
      }
    }
    try requireSound(project)
    let held = HeldProject(
      project: project, positions: positions, points: points, clips: ClipIndex(project))
    // The rows hold an earlier version while a history move is pending; a part is read after
    // the edit's transaction folded it (``PendingMove``).
    guard part == nil, let pending = try PendingMove.read(db)?.changes else { return held }
    return try applying(pending, changed: pending.changedIDs, to: held)
  }

  /// Refuses a project that the tables' own checks would have refused: an id twice, or a
  /// format or source no valid write could store. Ids are primary keys and the columns carry
  /// CHECK constraints, so none of this happens unless the file's pages are damaged (a scan can
  /// then see one row twice, or a column as NULL or 0) or a damaged recorded change brings such
  /// a row back; every later step keys by id and divides by the rates, and would trap.
  ///
  /// With `clips` (the ids an in-memory step changed), clip ids are checked track by track
  /// only (the step's snapshot was checked before it).
  static func requireSound(_ project: Project, clips: Set<Clip.ID>? = nil) throws {
    // Every in-memory step asks (twice): a few ids are compared pairwise, without a set.
    func requireUnique<IDs: Collection>(_ ids: IDs, _ table: String) throws
    where IDs.Element: Hashable {
      let unique: Bool
      if ids.count <= 16 {
        var rest = ids[...]
        var repeated = false
        while let first = rest.popFirst(), !repeated { repeated = rest.contains(first) }
        unique = !repeated
      } else {
        unique = Set(ids).count == ids.count
      }
      guard unique else {
        throw StoreError.corrupt(detail: "the \(table) table holds an id twice")
      }
    }
    guard (try? project.validateFormat()) != nil else {
      throw StoreError.corrupt(
        detail:
          "the project row holds an impossible format (\(project.sampleRate) Hz, \(project.channels) channels)"
      )
    }
    for source in project.sources
    where source.sampleRate <= 0 || !(1...2).contains(source.channels)
      || source.frameCount.frames <= 0
    {
      throw StoreError.corrupt(detail: "source \(source.id) holds an impossible format")
    }
    try requireUnique(project.sources.lazy.map(\.id), SourceRow.table)
    try requireUnique(project.tracks.lazy.map(\.id), TrackRow.table)
    if clips != nil {
      // Every track holds each of its ids once (its id map counts them); no id is on two
      // tracks, as an in-memory step takes each changed clip off its old track first.
      if project.tracks.contains(where: \.clips.hasRepeatedIDs) {
        throw StoreError.corrupt(detail: "the \(ClipRow.table) table holds an id twice")
      }
    } else {
      try requireUnique(project.allClips.map(\.id), ClipRow.table)
    }
    if !project.masterEffects.isEmpty || project.tracks.contains(where: { !$0.effects.isEmpty }) {
      try requireUnique(project.allEffects.map(\.effect.id), EffectRow.table)
    }
    try requireUnique(project.markers.lazy.map(\.id), MarkerRow.table)
    try requireUnique(project.sends.lazy.map(\.id), SendRow.table)
    try requireUnique(project.takes.lazy.map(\.id), TakeRow.table)
  }

  /// Refuses a clip whose fades no valid write could store (a damaged detail row, or one
  /// left behind by a damaged change): every later step trusts them.
  static func requireSound(_ clip: Clip) throws {
    guard (try? clip.validateFades(sampleRate: 1)) != nil else {
      throw StoreError.corrupt(detail: "clip \(clip.id) holds impossible fades")
    }
  }

  /// Calls `body` with every row of `table` (those `condition` selects when given), all its
  /// columns in ``TrackedRow/columns`` order.
  private static func all<Table: TrackedRow>(
    _ table: Table.Type, where condition: String? = nil, orderedBy order: String? = nil,
    _ db: Database, _ body: (RawStatement.ResultRow) throws -> Void
  ) throws {
    let columns = Table.columns.joined(separator: ", ")
    let sql =
      "SELECT \(columns) FROM \(Table.table)" + (condition.map { " WHERE \($0)" } ?? "")
      + (order.map { " ORDER BY \($0)" } ?? "")
    // A part's ids are in its text: not cached, or the cache grows by one statement per edit.
    let statement = try condition == nil ? db.cachedStatement(sql: sql) : db.makeStatement(sql: sql)
    try RawStatement.query(statement.sqliteStatement, on: connection(db), body)
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
    // Format, sources and track settings first: clips are placed on the tracks as they end up.
    // (`old` was checked whole when loaded, and each step since checks what it changed.)
    try requireSound(old, clips: [])
    var sources = Dictionary(uniqueKeysWithValues: project.sources.map { ($0.id, $0) })
    var trackIndex = Dictionary(
      uniqueKeysWithValues: project.tracks.enumerated().map { ($1.id, $0) })
    var removedTracks: Set<Track.ID> = []
    let settings = [ProjectRow.index, SourceRow.index, TrackRow.index, MasterRow.index]
    try changes.forEachRow(in: settings) { key, kind, row in
      let columns = Columns(row)
      switch key.table {
      case ProjectRow.index:
        if kind == .delete { throw StoreError.corrupt(detail: "a change removes the project row") }
        try ProjectRow.read(columns, into: &project)
      case SourceRow.index:
        let id = Source.ID(key.id)
        if kind == .delete {
          sources[id] = nil
        } else {
          sources[id] = try SourceRow.read(
            columns, id: id, updating: kind == .insert ? nil : sources[id])
        }
      case TrackRow.index:
        let id = Track.ID(key.id)
        if kind == .delete {
          removedTracks.insert(id)
          positions[id] = nil
          return
        }
        let base = kind == .insert ? nil : trackIndex[id].map { project.tracks[$0] }
        let (settings, position) = try TrackRow.read(
          columns, id: id, updating: base.map { ($0, positions[id] ?? 0) })
        positions[id] = position
        if let index = trackIndex[id] {
          var track = settings
          track.clips = project.tracks[index].clips
          track.envelope = project.tracks[index].envelope
          track.effects = project.tracks[index].effects
          track.output = project.tracks[index].output
          track.panEnvelope = project.tracks[index].panEnvelope
          project.tracks[index] = track
        } else {
          trackIndex[id] = project.tracks.count
          project.tracks.append(settings)
        }
      case MasterRow.index:
        if kind == .delete {
          project.masterGain = .unity
        } else if let gain = try MasterRow.read(columns) {
          project.masterGain = gain
        }
      default:
        break
      }
    }
    // Envelopes once every track is in place: point rows first, each changed track's chain
    // rebuilt from its points as they were and the changes; then text rows (older projects),
    // whose removal leaves a track's points alone.
    var points = held.points
    var pointRows: [Track.ID: [Int64: [ChangeValue?]]] = [:]
    try changes.forEachRow(in: [EnvelopePointRow.index]) { key, kind, row in
      let track = EnvelopePointRow.track(ofPoint: key.id)
      if pointRows[track] == nil {
        let envelope = trackIndex[track].flatMap { project.tracks[$0].envelope }
        let ids = points[track] ?? []
        pointRows[track] = EnvelopePointRow.values(
          envelope.map { Envelope(points: Array($0.points.prefix(ids.count))) }
            ?? Envelope(points: []), ids: ids, of: track
        ).mapValues { $0.map(Optional.some) }
      }
      switch kind {
      case .delete: pointRows[track]?[key.id] = nil
      case .insert:
        pointRows[track]?[key.id] = (0..<EnvelopePointRow.columns.count).map {
          row.newValue($0)
        }
      case .update:
        guard var values = pointRows[track]?[key.id] else {
          throw StoreError.corrupt(detail: "a change moves a missing envelope point of \(track)")
        }
        for column in 1..<values.count {
          if let value = row.newValue(column) { values[column] = value }
        }
        pointRows[track]?[key.id] = values
      }
    }
    for (track, rows) in pointRows {
      let stored = try EnvelopePointRow.envelopes(rows)[track]
      points[track] = stored?.ids
      guard let index = trackIndex[track] else {
        if stored == nil { continue }
        throw StoreError.corrupt(detail: "an envelope belongs to missing track \(track)")
      }
      project.tracks[index].envelope = stored?.envelope
    }
    try changes.forEachRow(in: [EnvelopeRow.index]) { key, kind, row in
      let track = Track.ID(key.id)
      guard let index = trackIndex[track] else {
        if kind == .delete { return }
        throw StoreError.corrupt(detail: "an envelope belongs to missing track \(track)")
      }
      if kind == .delete {
        if points[track] == nil { project.tracks[index].envelope = nil }
      } else if let envelope = try EnvelopeRow.read(Columns(row), of: track) {
        project.tracks[index].envelope = envelope
      }
    }
    if changed.sources.count > 0 {
      project.sources = sources.values.sorted { $0.id < $1.id }
    }

    if !changed.clips.isEmpty {
      // Take the changed clips out of the tracks that hold them (the other tracks keep sharing
      // storage with `old`), then put back the new state of those that still exist.
      // By the index when they are few, by one pass over the clips when they are many.
      let before = LocatedClips(changed.clips, in: held)
      // Where each leaves from, by its start and id: the tracks find them without a lookup.
      var leaving = Array(
        repeating: [(start: FramePosition, id: Clip.ID)](), count: project.tracks.count)
      for place in before.places {
        if let index = trackIndex[place.track] {
          leaving[index].append((place.clip.timelineStart, place.clip.id))
        }
      }
      // The new state of each changed clip: its clip row's change, then its detail's (a clip
      // whose detail alone changed keeps its row as it was), with where it was (nil for a new
      // clip; its position in its track's list), so that each clip is looked up in `before`
      // once. In an array, found by id through `placed` when details changed.
      typealias State = (
        clip: Clip, track: Track.ID, was: (track: Track.ID, start: FramePosition, position: Int)?
      )
      var states: [State] = []
      states.reserveCapacity(changed.clips.count)
      var deleted: Set<Clip.ID> = []
      var detailsChange = false
      try changes.forEachRow(
        in: [ClipRow.index, ClipDetailRow.index], ahead: { before.prefetch(Clip.ID($0.id)) }
      ) { key, kind, row in
        guard key.table == ClipRow.index else {
          if key.table == ClipDetailRow.index { detailsChange = true }
          return
        }
        let id = Clip.ID(key.id)
        guard kind != .delete else {
          deleted.insert(id)
          return
        }
        let base = kind == .insert ? nil : before[id]
        let (clip, track) = try ClipRow.read(
          Columns(row), id: id, updating: base.map { ($0.clip, $0.track) })
        states.append((clip, track, base.map { ($0.track, $0.clip.timelineStart, $0.position) }))
      }
      if detailsChange {
        var placed = Dictionary(
          uniqueKeysWithValues: states.indices.lazy.map { (states[$0].clip.id, $0) })
        try changes.forEachRow(in: [ClipDetailRow.index]) { key, kind, row in
          let id = Clip.ID(key.id)
          guard !deleted.contains(id) else {
            if kind == .delete { return }
            throw StoreError.corrupt(detail: "a change gives removed clip \(id) a detail")
          }
          let position = placed[id]
          let base: State
          if let position {
            base = states[position]
          } else if let was = before[id] {
            base = (was.clip, was.track, (was.track, was.clip.timelineStart, was.position))
          } else {
            throw StoreError.corrupt(detail: "a change gives missing clip \(id) a detail")
          }
          let detail =
            kind == .delete
            ? ClipDetailRow.Detail.none
            : try ClipDetailRow.read(
              Columns(row), id: id,
              updating: kind == .insert ? nil : ClipDetailRow.Detail(base.clip))
          let state = (detail.applied(to: base.clip), base.track, base.was)
          if let position {
            states[position] = state
          } else {
            placed[id] = states.count
            states.append(state)
          }
        }
      }
      // Checked in any order; what is refused is the lowest id refused, so the same damage
      // gets the same message every time.
      var arriving = Array(repeating: [Clip](), count: project.tracks.count)
      // Each arriving clip's position before, for the tracks written in place.
      var positions = Array(repeating: [Int](), count: project.tracks.count)
      // Tracks whose every arriving clip comes back to its own place (as many as leave it):
      // written over in place, without a batch plan.
      var inPlace = Array(repeating: true, count: project.tracks.count)
      var refused: (id: Clip.ID, error: StoreError)?
      for (clip, trackID, was) in states {
        let problem: StoreError?
        if let index = trackIndex[trackID], !removedTracks.contains(trackID) {
          arriving[index].append(clip)
          positions[index].append(was?.position ?? -1)
          do {
            try requireSound(clip)
            problem = nil
          } catch let error as StoreError {
            problem = error
          }
        } else {
          problem = StoreError.corrupt(detail: "clip \(clip.id) is on missing track \(trackID)")
        }
        if let problem, refused.map({ clip.id < $0.id }) ?? true { refused = (clip.id, problem) }
        // The index holds a clip's track and start: one that keeps both keeps its place.
        if let was, was.track == trackID, was.start == clip.timelineStart { continue }
        if let index = trackIndex[trackID] { inPlace[index] = false }
        placements.append((clip.id, .placed(clip, on: trackID)))
      }
      if let refused { throw refused.error }
      // Each track's changes in one batch: a chunk of its clips is copied once, however many
      // of its clips change.
      for index in project.tracks.indices where !leaving[index].isEmpty || !arriving[index].isEmpty
      {
        if inPlace[index] && leaving[index].count == arriving[index].count
          && Self.replaceInPlace(
            &project.tracks[index].clips, arriving[index], at: positions[index])
        {
          continue
        }
        project.tracks[index].clips.replace(removingAt: leaving[index], inserting: arriving[index])
      }
      // Every changed clip has a state or was deleted.
      for id in deleted { placements.append((id, .removed)) }
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
    if changed.effects {
      // Chains are short: take every effect as it was (position = its index), apply the
      // changes, and rebuild every chain.
      var effects = Dictionary(
        uniqueKeysWithValues: old.allEffects.map {
          ($0.effect.id, (effect: $0.effect, owner: $0.owner, position: $0.index))
        })
      try changes.forEachRow(in: [EffectRow.index]) { key, kind, row in
        let id = Effect.ID(key.id)
        if kind == .delete {
          effects[id] = nil
        } else {
          effects[id] = try EffectRow.read(
            Columns(row), id: id, updating: kind == .insert ? nil : effects[id])
        }
      }
      try changes.forEachRow(in: [EffectSidechainRow.index]) { key, kind, row in
        let id = Effect.ID(key.id)
        guard effects[id] != nil else {
          if kind == .delete { return }
          throw StoreError.corrupt(detail: "the side chain of missing effect f\(key.id) is stored")
        }
        if kind == .delete {
          effects[id]?.effect.sidechain = nil
        } else if let source = try EffectSidechainRow.read(Columns(row)) {
          effects[id]?.effect.sidechain = source
        }
      }
      try EffectRow.place(Array(effects.values), in: &project)
      // Every effect keeps its automation unless its automation row changed.
      var lanes = Dictionary(
        uniqueKeysWithValues: old.allEffects.map { ($0.effect.id, $0.effect.automation) })
      try changes.forEachRow(in: [EffectAutomationRow.index]) { key, kind, row in
        let id = Effect.ID(key.id)
        if kind == .delete {
          lanes[id] = nil
        } else if let read = try EffectAutomationRow.read(Columns(row), of: id) {
          lanes[id] = read
        }
      }
      let present = Set(project.allEffects.map(\.effect.id))
      try EffectAutomationRow.place(lanes.filter { present.contains($0.key) }, in: &project)
      var files = EffectFileRow.rows(of: old.allEffects.map(\.effect))
      try changes.forEachRow(in: [EffectFileRow.index]) { key, kind, row in
        if kind == .delete {
          files[key.id] = nil
        } else {
          files[key.id] = try EffectFileRow.read(
            Columns(row), id: key.id, updating: kind == .insert ? nil : files[key.id])
        }
      }
      try EffectFileRow.attach(Array(files.values), to: &project)
    }
    try changes.forEachRow(in: [TrackOutputRow.index]) { key, kind, row in
      guard let index = project.tracks.firstIndex(where: { $0.id == Track.ID(key.id) }) else {
        if kind == .delete { return }
        throw StoreError.corrupt(detail: "the output of missing track t\(key.id) is stored")
      }
      if kind == .delete {
        project.tracks[index].output = nil
      } else if let output = try TrackOutputRow.read(Columns(row)) {
        project.tracks[index].output = output
      }
    }
    try changes.forEachRow(in: [LaneRow.index]) { key, kind, row in
      guard let id = LaneRow.track(ofLane: key.id) else { return }
      guard let index = project.tracks.firstIndex(where: { $0.id == id }) else {
        if kind == .delete { return }
        throw StoreError.corrupt(detail: "the pan automation of missing track \(id) is stored")
      }
      if kind == .delete {
        project.tracks[index].panEnvelope = nil
      } else if let points = try LaneRow.points(Columns(row), id: key.id) {
        project.tracks[index].panEnvelope = ParameterEnvelope(curve: points)
      }
    }
    if changed.sends {
      var sends = Dictionary(uniqueKeysWithValues: old.sends.map { ($0.id, $0) })
      try changes.forEachRow(in: [SendRow.index]) { key, kind, row in
        let id = Send.ID(key.id)
        if kind == .delete {
          sends[id] = nil
        } else {
          let envelope = sends[id]?.envelope
          sends[id] = try SendRow.read(
            Columns(row), id: id, updating: kind == .insert ? nil : sends[id])
          sends[id]?.envelope = envelope
        }
      }
      try changes.forEachRow(in: [LaneRow.index]) { key, kind, row in
        guard let id = LaneRow.send(ofLane: key.id) else { return }
        guard sends[id] != nil else {
          if kind == .delete { return }
          throw StoreError.corrupt(detail: "the envelope of missing send \(id) is stored")
        }
        if kind == .delete {
          sends[id]?.envelope = nil
        } else if let envelope = try LaneRow.points(Columns(row), id: key.id) {
          sends[id]?.envelope = envelope
        }
      }
      project.sends = sends.values.sorted { $0.id < $1.id }
    }
    if changed.markers {
      var markers = Dictionary(uniqueKeysWithValues: old.markers.map { ($0.id, $0) })
      try changes.forEachRow(in: [MarkerRow.index]) { key, kind, row in
        let id = Marker.ID(key.id)
        if kind == .delete {
          markers[id] = nil
        } else {
          markers[id] = try MarkerRow.read(
            Columns(row), id: id, updating: kind == .insert ? nil : markers[id])
        }
      }
      project.markers = markers.values.sorted(by: Marker.timelineOrder)
    }
    if changed.takes {
      var takes = Dictionary(uniqueKeysWithValues: old.takes.map { ($0.id, $0) })
      try changes.forEachRow(in: [TakeRow.index]) { key, kind, row in
        let id = Clip.ID(key.id)
        if kind == .delete {
          takes[id] = nil
        } else {
          takes[id] = try TakeRow.read(
            Columns(row), id: id, updating: kind == .insert ? nil : takes[id])
        }
      }
      project.takes = takes.values.sorted { $0.id < $1.id }
    }
    try requireSound(project, clips: changed.clips)
    // Many changes: a new index costs less than as many persistent updates.
    let index =
      placements.count > held.clips.count / 2
      ? ClipIndex(project) : held.clips.updating(placements)
    return HeldProject(project: project, positions: positions, points: points, clips: index)
  }
}

extension SnapshotReader {
  /// Writes `clips` over themselves in `list`, each at its position there before
  /// (``ClipList/replaceInPlace(at:with:)``, in one walk). False, with nothing changed, when
  /// one is not where it was, or is new (-1).
  fileprivate static func replaceInPlace(
    _ list: inout ClipList, _ clips: [Clip], at positions: [Int]
  ) -> Bool {
    if zip(positions, positions.dropFirst()).allSatisfy({ $0 < $1 }) {
      return list.replaceInPlace(at: positions, with: clips)
    }
    let order = positions.indices.sorted { positions[$0] < positions[$1] }
    return list.replaceInPlace(at: order.map { positions[$0] }, with: order.map { clips[$0] })
  }
}

/// The changed clips of a snapshot as they are there, each with its track and its position in
/// the track's list (so that a track is written over in place without a search per clip),
/// found by id.
///
/// Many (a far checkout changes every clip) are found by one walk along the tracks; few
/// through the snapshot's index (``Timeline/ClipIndex/places(of:in:)``). By id through a table indexed by the id itself when
/// ids are dense (project ids are), else a dictionary: a `Dictionary` of 100,000 clips cost a
/// fifth of an every-clip checkout's snapshot, by perf.
struct LocatedClips {
  typealias Place = (clip: Clip, track: Track.ID, position: Int)
  private(set) var places: [Place] = []
  /// `direct[id]`: the place's index + 1, 0 for none; empty when ids are few or not dense.
  /// (Dense: the largest under 8 × their count, so the table takes at most 32 bytes an id.)
  private var direct: [Int32] = []
  private var byID: [Clip.ID: Int] = [:]

  /// From how many ids a table indexed by id is made.
  static let directFrom = 1_024

  init(_ ids: Set<Clip.ID>, in held: HeldProject) {
    let project = held.project
    // The table for many ids only: one for an undo's single clip would be 256 KB to clear.
    if ids.count >= Self.directFrom {
      let largest = ids.lazy.map(\.rawValue).max() ?? 0
      if ids.allSatisfy({ $0.rawValue >= 0 }), largest < Int64(ids.count) * 8 {
        direct = Array(repeating: 0, count: Int(largest) + 1)
      }
    }
    places.reserveCapacity(ids.count)
    guard ids.count * project.tracks.count > project.clipCount else {
      for place in held.clips.places(of: ids, in: project) { add(place) }
      return
    }
    let filter = EntityIDFilter(ids)
    for track in project.tracks {
      for (position, clip) in track.clips.enumerated() where filter.contains(clip.id) {
        add((clip, track.id, position))
      }
    }
  }

  /// Keeps the first place of an id (a sound project holds each once).
  private mutating func add(_ place: Place) {
    let id = place.clip.id
    if direct.isEmpty {
      guard self[id] == nil else { return }
      // A few (an undo's) are found by a look at each.
      if places.count >= Self.scanned {
        if byID.isEmpty {
          for (index, earlier) in places.enumerated() { byID[earlier.clip.id] = index }
        }
        byID[id] = places.count
      }
    } else {
      guard direct[Int(id.rawValue)] == 0 else { return }
      direct[Int(id.rawValue)] = Int32(places.count + 1)
    }
    places.append(place)
  }

  /// Asks for the place of `id` to be loaded into the cache (it spans two lines).
  func prefetch(_ id: Clip.ID) {
    guard id.rawValue >= 0, id.rawValue < direct.count else { return }
    let index = Int(direct[Int(id.rawValue)])
    guard index > 0 else { return }
    places.withUnsafeBufferPointer { places in
      guard let place = places.baseAddress.map({ UnsafeRawPointer($0 + index - 1) }) else {
        return
      }
      tape_prefetch(place)
      tape_prefetch(place + 64)
    }
  }

  /// Up to how many places are found by a look at each, without a dictionary.
  static let scanned = 8

  subscript(id: Clip.ID) -> Place? {
    if direct.isEmpty {
      if places.count <= Self.scanned { return places.first { $0.clip.id == id } }
      return byID[id].map { places[$0] }
    }
    guard id.rawValue >= 0, id.rawValue < direct.count else { return nil }
    let index = Int(direct[Int(id.rawValue)])
    return index == 0 ? nil : places[index - 1]
  }
}

/// A row's columns as a change records them: all of them for an insert, the changed ones for
/// an update (the others read as `nil`: the value as it was).
private struct Columns: ColumnReader {
  /// The row's new values, read in place (``NetChanges/forEachRow(in:_:)``).
  let row: NetChanges.RowSlots

  init(_ row: NetChanges.RowSlots) {
    self.row = row
  }

  private func value(at column: Int) -> ChangeValue? { row.newValue(column) }

  func integer(_ column: Int) throws -> Int64? {
    switch value(at: column) {
    case nil: return nil
    case .integer(let value)?: return value
    default: throw StoreError.corrupt(detail: "a recorded column \(column) is not an integer")
    }
  }

  func real(_ column: Int) throws -> Double? {
    switch value(at: column) {
    case nil: return nil
    case .real(let value)?: return value
    case .integer(let value)?: return Double(value)
    default: throw StoreError.corrupt(detail: "a recorded column \(column) is not a number")
    }
  }

  func text(_ column: Int) throws -> String? {
    switch value(at: column) {
    case nil: return nil
    case .text(let value)?: return value
    default: throw StoreError.corrupt(detail: "a recorded column \(column) is not text")
    }
  }

  func path(_ column: Int) throws -> RawPath? {
    switch value(at: column) {
    case nil: return nil
    case .text(let value)?: return RawPath(value)
    case .blob(let value)?: return RawPath(bytes: value)
    default: throw StoreError.corrupt(detail: "a recorded column \(column) is not a path")
    }
  }

  func value(_ column: Int) throws -> ChangeValue? { value(at: column) }

  func curve(_ column: Int) throws -> FadeCurve? {
    guard let name = try text(column) else { return nil }
    guard let curve = FadeCurve(rawValue: name) else {
      throw StoreError.corrupt(detail: "a recorded clip has an unknown fade curve")
    }
    return curve
  }
}
