import Timeline

/// The row layout of one tracked table: its columns, and the one mapping between a model value
/// and them, both ways.
///
/// Rule: a table's columns are named, written and read here and nowhere else (the migration
/// that created the table is history and stays as it was; a test checks these lists against
/// `PRAGMA table_info`). Why: the snapshot reader, the recorded-change reader and the writer
/// must agree on every column's position, and one definition cannot disagree with itself.
protocol TrackedRow: Sendable {
  /// The table's name.
  static var table: String { get }
  /// Its position in ``Schema/trackedTables`` (the table number of ``NetChanges/Key``).
  static var index: Int { get }
  /// Its columns in declaration order, the order changesets use; the primary key is column 0.
  static var columns: [String] { get }
}

/// A row's columns read by position (``TrackedRow/columns`` order): a row of `SELECT *`, or a
/// recorded change, where the columns an update left alone read as `nil` and the value comes
/// from the row as it was.
protocol ColumnReader {
  func integer(_ column: Int) throws -> Int64?
  /// REAL columns may hold integral values as integers.
  func real(_ column: Int) throws -> Double?
  func text(_ column: Int) throws -> String?
  /// A path column: text, or a blob for bytes that are not UTF-8.
  func path(_ column: Int) throws -> RawPath?
  func curve(_ column: Int) throws -> FadeCurve?
  /// The column as stored (`.null` for NULL); `nil` when the change leaves it alone.
  func value(_ column: Int) throws -> ChangeValue?
}

extension TrackedRow {
  /// The error for a row that lacks a column it needs, or holds an impossible value.
  static func unreadable(_ id: Int64) -> StoreError {
    .corrupt(detail: "the \(table) row \(id) is unreadable")
  }
}

/// The project's format: `(id = 1, sampleRate, channels)`.
enum ProjectRow: TrackedRow {
  static let table = "project"
  static let index = 0
  static let columns = ["id", "sampleRate", "channels"]

  static func values(_ project: Project) -> [ChangeValue] {
    [.integer(1), .integer(Int64(project.sampleRate)), .integer(Int64(project.channels))]
  }

  /// Reads the format into `project`, keeping what the row leaves alone.
  static func read(_ row: some ColumnReader, into project: inout Project) throws {
    if let rate = try row.integer(1) { project.sampleRate = Int(rate) }
    if let channels = try row.integer(2) { project.channels = Int(channels) }
  }
}

enum SourceRow: TrackedRow {
  static let table = "source"
  static let index = 1
  static let columns = ["id", "path", "contentHash", "sampleRate", "channels", "frameCount"]

  static func values(_ source: Source) -> [ChangeValue] {
    [
      .integer(source.id.rawValue),
      source.path.string.map(ChangeValue.text) ?? .blob(source.path.bytes),
      .text(source.contentHash), .integer(Int64(source.sampleRate)),
      .integer(Int64(source.channels)), .integer(source.frameCount.frames),
    ]
  }

  static func read(_ row: some ColumnReader, id: Source.ID, updating base: Source?) throws -> Source
  {
    guard let path = try row.path(1) ?? base?.path, let hash = try row.text(2) ?? base?.contentHash,
      let rate = try row.integer(3).map(Int.init) ?? base?.sampleRate,
      let channels = try row.integer(4).map(Int.init) ?? base?.channels,
      let frames = try row.integer(5).map({ FrameCount($0) }) ?? base?.frameCount
    else { throw unreadable(id.rawValue) }
    return Source(
      id: id, path: path, contentHash: hash, sampleRate: rate, channels: channels,
      frameCount: frames)
  }
}

/// A track's settings and its stored position (its clips and envelope live in their own
/// tables).
enum TrackRow: TrackedRow {
  static let table = "track"
  static let index = 2
  static let columns = ["id", "position", "name", "gainDB", "pan", "muted", "solo"]

  static func values(_ track: Track, position: Int64) -> [ChangeValue] {
    [
      .integer(track.id.rawValue), .integer(position), .text(track.name),
      .real(track.gain.decibels), .real(track.pan), .integer(track.isMuted ? 1 : 0),
      .integer(track.isSolo ? 1 : 0),
    ]
  }

  /// A track's settings (no clips, no envelope) and stored position.
  static func read(
    _ row: some ColumnReader, id: Track.ID, updating base: (track: Track, position: Int64)?
  ) throws -> (track: Track, position: Int64) {
    guard let position = try row.integer(1) ?? base?.position,
      let name = try row.text(2) ?? base?.track.name,
      let gain = try row.real(3).map(Gain.init(decibels:)) ?? base?.track.gain,
      let pan = try row.real(4) ?? base?.track.pan,
      let muted = try row.integer(5).map({ $0 != 0 }) ?? base?.track.isMuted,
      let solo = try row.integer(6).map({ $0 != 0 }) ?? base?.track.isSolo
    else { throw unreadable(id.rawValue) }
    return (Track(id: id, name: name, gain: gain, pan: pan, isMuted: muted, isSolo: solo), position)
  }
}

/// A clip and the track it is on.
enum ClipRow: TrackedRow {
  static let table = "clip"
  static let index = 3
  static let columns = [
    "id", "trackID", "sourceID", "timelineStart", "sourceStart", "length", "gainDB",
    "fadeInLength", "fadeInCurve", "fadeOutLength", "fadeOutCurve",
  ]

  static func values(_ clip: Clip, on track: Track.ID) -> [ChangeValue] {
    [
      .integer(clip.id.rawValue), .integer(track.rawValue), .integer(clip.source.rawValue),
      .integer(clip.timelineStart.frames), .integer(clip.sourceRange.start.frames),
      .integer(clip.length.frames), .real(clip.gain.decibels),
      .integer(clip.fadeIn.length.frames), .text(clip.fadeIn.curve.rawValue),
      .integer(clip.fadeOut.length.frames), .text(clip.fadeOut.curve.rawValue),
    ]
  }

  static func read(
    _ row: some ColumnReader, id: Clip.ID, updating base: (clip: Clip, track: Track.ID)?
  ) throws -> (clip: Clip, track: Track.ID) {
    guard let track = try row.integer(1).map({ Track.ID($0) }) ?? base?.track,
      let source = try row.integer(2).map({ Source.ID($0) }) ?? base?.clip.source,
      let start = try row.integer(3).map({ FramePosition($0) }) ?? base?.clip.timelineStart,
      let sourceStart = try row.integer(4).map({ FramePosition($0) })
        ?? base?.clip.sourceRange.start,
      let length = try row.integer(5).map({ FrameCount($0) }) ?? base?.clip.length,
      let gain = try row.real(6).map(Gain.init(decibels:)) ?? base?.clip.gain,
      let fadeInLength = try row.integer(7).map({ FrameCount($0) }) ?? base?.clip.fadeIn.length,
      let fadeInCurve = try row.curve(8) ?? base?.clip.fadeIn.curve,
      let fadeOutLength = try row.integer(9).map({ FrameCount($0) })
        ?? base?.clip.fadeOut.length,
      let fadeOutCurve = try row.curve(10) ?? base?.clip.fadeOut.curve, length.frames >= 0
    else { throw unreadable(id.rawValue) }
    var clip = Clip(
      id: id, source: source, timelineStart: start,
      sourceRange: FrameRange(start: sourceStart, count: length), gain: gain,
      fadeIn: Fade(length: fadeInLength, curve: fadeInCurve),
      fadeOut: Fade(length: fadeOutLength, curve: fadeOutCurve))
    // The cut parts of its fades live in its detail row (``ClipDetailRow``): an update keeps
    // them, and a change of that row comes after.
    if let base { clip = ClipDetailRow.Detail(base.clip).applied(to: clip) }
    return (clip, track)
  }
}

/// A track's volume automation as one text row, keyed by the track: what projects stored
/// before ``EnvelopePointRow``. Such a row is read as it is and stays until the envelope
/// changes, when the store replaces it with point rows (in the same version, so undo brings it
/// back and the versions written before keep applying to it).
enum EnvelopeRow: TrackedRow {
  static let table = "envelope"
  static let index = 4
  static let columns = ["trackID", "points"]

  static func values(_ envelope: Envelope, of track: Track.ID) -> [ChangeValue] {
    [.integer(track.rawValue), .text(envelope.storageText)]
  }

  /// The envelope a row holds; `nil` when the row leaves it alone.
  static func read(_ row: some ColumnReader, of track: Track.ID) throws -> Envelope? {
    guard let text = try row.text(1) else { return nil }
    guard let envelope = Envelope(storageText: text) else {
      throw StoreError.corrupt(detail: "the envelope of track \(track) is unreadable")
    }
    return envelope
  }
}

/// The master gain: `(id = 1, gainDB)`, no row when it is 0 dB, so that setting 0 dB on a
/// project that never had a master gain changes nothing.
enum MasterRow: TrackedRow {
  static let table = "master"
  static let index = 5
  static let columns = ["id", "gainDB"]

  static func values(_ gain: Gain) -> [ChangeValue]? {
    gain == .unity ? nil : [.integer(1), .real(gain.decibels)]
  }

  /// The gain a row holds; `nil` when the row leaves it alone.
  static func read(_ row: some ColumnReader) throws -> Gain? {
    try row.real(1).map(Gain.init(decibels:))
  }
}

/// One point of a track's volume automation: `(id, trackID, previous, gap, gainDB, shape)`.
///
/// A point is stored relative to the one before it (`previous`, its row id, NULL for the first
/// point; `gap`, the frames after it, the first point's frame for the first), so a ripple edit
/// that moves every later point changes one row: the first point after the cut. The id carries
/// the track in its high 32 bits (`trackID << 32 | n`), so that a recorded change names its
/// track whichever columns it holds. `gainDB` is NULL for silence (`-inf`).
enum EnvelopePointRow: TrackedRow {
  static let table = "envelope_point"
  static let index = 6
  static let columns = ["id", "trackID", "previous", "gap", "gainDB", "shape"]

  /// The track a point row belongs to.
  static func track(ofPoint id: Int64) -> Track.ID { Track.ID(id >> 32) }

  /// The rows of `envelope`'s points, with their ids (`ids[k]` is point `k`'s).
  static func values(
    _ envelope: Envelope, ids: [Int64], of track: Track.ID
  ) -> [Int64: [ChangeValue]] {
    var rows: [Int64: [ChangeValue]] = [:]
    var previous: (id: Int64, time: Int64)?
    for (point, id) in zip(envelope.points, ids) {
      rows[id] = [
        .integer(id), .integer(track.rawValue), previous.map { .integer($0.id) } ?? .null,
        .integer(point.time.frames - (previous?.time ?? 0)),
        point.decibels == -.infinity ? .null : .real(point.decibels), .text(point.shape.rawValue),
      ]
      previous = (id, point.time.frames)
    }
    return rows
  }

  /// Row ids for `new`'s points that keep the ids of `old`'s (`oldIDs`) where they can, so
  /// that rows a change leaves alone are not rewritten: the points both share at the start
  /// (same frame, gain, shape), those they share at the end (same gain, shape and gap to the
  /// point before; the first of them may have moved), and in between, old ids in order for
  /// new points; new points beyond those get ids after the greatest of `oldIDs`.
  static func ids(
    for new: [Envelope.Point], replacing old: [Envelope.Point], oldIDs: [Int64], of track: Track.ID
  ) -> [Int64] {
    func gap(_ points: [Envelope.Point], _ k: Int) -> Int64 {
      points[k].time.frames - (k > 0 ? points[k - 1].time.frames : 0)
    }
    func same(_ a: Envelope.Point, _ b: Envelope.Point) -> Bool {
      a.decibels.bitPattern == b.decibels.bitPattern && a.shape == b.shape
    }
    let common = min(old.count, new.count)
    var prefix = 0
    while prefix < common && old[prefix] == new[prefix]
      && old[prefix].decibels.bitPattern == new[prefix].decibels.bitPattern
    {
      prefix += 1
    }
    var suffix = 0
    while suffix < common - prefix {
      let (a, b) = (old.count - 1 - suffix, new.count - 1 - suffix)
      guard same(old[a], new[b]) else { break }
      suffix += 1
      if gap(old, a) != gap(new, b) { break }
    }
    var ids = Array(oldIDs[..<prefix])
    let middleOld = oldIDs[prefix..<(old.count - suffix)]
    var next = (oldIDs.max() ?? (track.rawValue << 32)) + 1
    for k in 0..<(new.count - prefix - suffix) {
      if k < middleOld.count {
        ids.append(middleOld[middleOld.startIndex + k])
      } else {
        ids.append(next)
        next += 1
      }
    }
    ids += oldIDs[(old.count - suffix)...]
    return ids
  }

  /// Reads point rows (all columns) into each track's envelope and point ids, following each
  /// track's chain from its first point; a broken chain is corrupt.
  static func envelopes(
    _ rows: [Int64: [ChangeValue?]]
  ) throws -> [Track.ID: (envelope: Envelope, ids: [Int64])] {
    var byTrack: [Track.ID: [Int64: [ChangeValue?]]] = [:]
    for (id, row) in rows { byTrack[track(ofPoint: id), default: [:]][id] = row }
    var result: [Track.ID: (envelope: Envelope, ids: [Int64])] = [:]
    // In track order: the broken chain named is the same in every process.
    for (track, rows) in byTrack.sorted(by: { $0.key < $1.key }) {
      var first: Int64?
      var next: [Int64: Int64] = [:]
      for (id, row) in rows {
        switch row[2] {
        case .integer(let previous)?:
          guard next.updateValue(id, forKey: previous) == nil else { throw broken(track) }
        case .null?:
          guard first == nil else { throw broken(track) }
          first = id
        default: throw broken(track)
        }
      }
      var points: [Envelope.Point] = []
      var ids: [Int64] = []
      var cursor = first
      var time: Int64 = 0
      while let id = cursor, let row = rows[id], ids.count < rows.count {
        guard case .integer(let gap)? = row[3], case .text(let name)? = row[5],
          let shape = EnvelopeShape(rawValue: name)
        else { throw broken(track) }
        let decibels: Double
        switch row[4] {
        case .real(let value)?: decibels = value
        case .integer(let value)?: decibels = Double(value)
        case .null?: decibels = -.infinity
        default: throw broken(track)
        }
        time += gap
        points.append(Envelope.Point(time: FramePosition(time), decibels: decibels, shape: shape))
        ids.append(id)
        cursor = next[id]
      }
      guard ids.count == rows.count else { throw broken(track) }
      result[track] = (Envelope(points: points), ids)
    }
    return result
  }

  private static func broken(_ track: Track.ID) -> StoreError {
    .corrupt(detail: "the envelope points of track \(track) do not form one chain")
  }
}

/// One effect of a chain: `(id, trackID, position, plugin, parameters, bypassed, state)`.
///
/// `trackID` is NULL for the master's chain; `position` is the effect's index in its chain
/// (the store rewrites the positions a change shifts, so they always count 0, 1, 2…).
/// `parameters` is ``parametersText(_:)``: `symbol=value` pairs sorted by symbol, one space
/// apart, each value in the shortest form that reads back as the same `Double`. `state` is the
/// plugin's LV2 State bytes, NULL for none.
enum EffectRow: TrackedRow {
  static let table = "effect"
  static let index = 7
  static let columns = ["id", "trackID", "position", "plugin", "parameters", "bypassed", "state"]

  static func values(_ effect: Effect, owner: ChainOwner, position: Int) -> [ChangeValue] {
    let track: ChangeValue
    switch owner {
    case .master: track = .null
    case .track(let id): track = .integer(id.rawValue)
    }
    return [
      .integer(effect.id.rawValue), track, .integer(Int64(position)), .text(effect.plugin),
      .text(parametersText(effect.parameters)), .integer(effect.isBypassed ? 1 : 0),
      effect.state.map(ChangeValue.blob) ?? .null,
    ]
  }

  static func parametersText(_ parameters: [String: Double]) -> String {
    parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
  }

  static func parameters(parsing text: String) -> [String: Double]? {
    var parameters: [String: Double] = [:]
    for pair in text.split(separator: " ") {
      let parts = pair.split(separator: "=", maxSplits: 1)
      guard parts.count == 2, let value = Double(parts[1]), value.isFinite else { return nil }
      parameters[String(parts[0])] = value
    }
    return parameters
  }

  /// An effect as a row holds it (taking what an update leaves alone from `base`), with its
  /// chain and position.
  static func read(
    _ row: some ColumnReader, id: Effect.ID,
    updating base: (effect: Effect, owner: ChainOwner, position: Int)?
  ) throws -> (effect: Effect, owner: ChainOwner, position: Int) {
    let owner: ChainOwner?
    switch try row.value(1) {
    case nil: owner = base?.owner
    case .null?: owner = .master
    case .integer(let track)?: owner = .track(Track.ID(track))
    default: throw unreadable(id.rawValue)
    }
    let state: [UInt8]??
    switch try row.value(6) {
    case nil: state = base.map { $0.effect.state }
    case .null?: state = .some(nil)
    case .blob(let bytes)?: state = .some(bytes)
    default: throw unreadable(id.rawValue)
    }
    guard let owner, let state,
      let position = try row.integer(2).map({ Int($0) }) ?? base?.position, position >= 0,
      let plugin = try row.text(3) ?? base?.effect.plugin,
      let parameters = try row.text(4).map({ try parsed($0, id) }) ?? base?.effect.parameters,
      let bypassed = try row.integer(5).map({ $0 != 0 }) ?? base?.effect.isBypassed
    else { throw unreadable(id.rawValue) }
    // The side chain lives in its own table (``EffectSidechainRow``): an update keeps it.
    return (
      Effect(
        id: id, plugin: plugin, parameters: parameters, isBypassed: bypassed, state: state,
        sidechain: base?.effect.sidechain),
      owner, position
    )
  }

  private static func parsed(_ text: String, _ id: Effect.ID) throws -> [String: Double] {
    guard let parameters = parameters(parsing: text) else { throw unreadable(id.rawValue) }
    return parameters
  }

  /// Sets every chain of `project` from `effects` (each effect with its chain and position),
  /// ordered by position; an effect on a track that is not in the project is damage.
  static func place(
    _ effects: [(effect: Effect, owner: ChainOwner, position: Int)], in project: inout Project
  ) throws {
    var chains: [ChainOwner: [(Int, Effect)]] = [:]
    for (effect, owner, position) in effects {
      chains[owner, default: []].append((position, effect))
    }
    // Not uniqueKeysWithValues: a damaged history may bring a track twice, which the reader
    // refuses once the project is rebuilt (``SnapshotReader/requireSound(_:)``).
    let trackIndex = Dictionary(
      project.tracks.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
    project.masterEffects = []
    for index in project.tracks.indices { project.tracks[index].effects = [] }
    // In owner order: the first missing track named is the same in every process.
    for (owner, chain) in chains.sorted(by: { $0.key < $1.key }) {
      let ordered = chain.sorted { ($0.0, $0.1.id) < ($1.0, $1.1.id) }.map(\.1)
      switch owner {
      case .master: project.masterEffects = ordered
      case .track(let id):
        guard let index = trackIndex[id] else {
          throw StoreError.corrupt(detail: "effect \(ordered[0].id) belongs to missing track \(id)")
        }
        project.tracks[index].effects = ordered
      }
    }
  }
}

/// One marker: `(id, position, name)`, the position in frames at the project rate.
enum MarkerRow: TrackedRow {
  static let table = "marker"
  static let index = 8
  static let columns = ["id", "position", "name"]

  static func values(_ marker: Marker) -> [ChangeValue] {
    [.integer(marker.id.rawValue), .integer(marker.position.frames), .text(marker.name)]
  }

  /// A marker as a row holds it, taking what an update leaves alone from `base`.
  static func read(
    _ row: some ColumnReader, id: Marker.ID, updating base: Marker?
  ) throws
    -> Marker
  {
    guard let position = try row.integer(1).map({ FramePosition($0) }) ?? base?.position,
      let name = try row.text(2) ?? base?.name
    else { throw unreadable(id.rawValue) }
    return Marker(id: id, name: name, position: position)
  }
}

/// What a clip holds beyond its ``ClipRow``: its name, and the parts of its fades' curves an
/// edit cut away (``Timeline/Fade/silentCut``, ``Timeline/Fade/fullCut``). `(clipID, name,
/// fadeInSilentCut, fadeInFullCut, fadeOutSilentCut, fadeOutFullCut)`, `name` NULL for none; no
/// row for a clip without a name whose fades are whole, so projects and history without either
/// are as they were. A table of its own because a tracked table never gains columns
/// (``Schema/trackedRows``).
enum ClipDetailRow: TrackedRow {
  static let table = "clip_detail"
  static let index = 9
  static let columns = [
    "clipID", "name", "fadeInSilentCut", "fadeInFullCut", "fadeOutSilentCut", "fadeOutFullCut",
  ]

  /// A clip's name and the cut parts of its fades.
  struct Detail: Hashable {
    var name: String?
    var fadeIn: (silent: FrameCount, full: FrameCount)
    var fadeOut: (silent: FrameCount, full: FrameCount)

    static func == (a: Detail, b: Detail) -> Bool {
      a.name == b.name && a.fadeIn == b.fadeIn && a.fadeOut == b.fadeOut
    }

    func hash(into hasher: inout Hasher) {
      hasher.combine(name)
      for value in [fadeIn.silent, fadeIn.full, fadeOut.silent, fadeOut.full] {
        hasher.combine(value.frames)
      }
    }

    static let none = Detail(name: nil, fadeIn: (.zero, .zero), fadeOut: (.zero, .zero))

    init(
      name: String?, fadeIn: (silent: FrameCount, full: FrameCount),
      fadeOut: (silent: FrameCount, full: FrameCount)
    ) {
      self.name = name
      self.fadeIn = fadeIn
      self.fadeOut = fadeOut
    }

    init(_ clip: Clip) {
      name = clip.name
      fadeIn = (clip.fadeIn.silentCut, clip.fadeIn.fullCut)
      fadeOut = (clip.fadeOut.silentCut, clip.fadeOut.fullCut)
    }

    /// `clip` with this name and these cut parts.
    func applied(to clip: Clip) -> Clip {
      var clip = clip
      clip.name = name
      (clip.fadeIn.silentCut, clip.fadeIn.fullCut) = fadeIn
      (clip.fadeOut.silentCut, clip.fadeOut.fullCut) = fadeOut
      return clip
    }
  }

  /// The row of `clip`, nil when it has no name and whole fades.
  static func values(_ clip: Clip) -> [ChangeValue]? {
    let detail = Detail(clip)
    guard detail != .none else { return nil }
    return [
      .integer(clip.id.rawValue), detail.name.map(ChangeValue.text) ?? .null,
      .integer(detail.fadeIn.silent.frames), .integer(detail.fadeIn.full.frames),
      .integer(detail.fadeOut.silent.frames), .integer(detail.fadeOut.full.frames),
    ]
  }

  /// The detail a row holds, taking what an update leaves alone from `base`.
  static func read(_ row: some ColumnReader, id: Clip.ID, updating base: Detail?) throws -> Detail {
    let base = base ?? .none
    func frames(_ column: Int, _ old: FrameCount) throws -> FrameCount {
      guard let value = try row.integer(column) else { return old }
      guard value >= 0 else { throw unreadable(id.rawValue) }
      return FrameCount(value)
    }
    let name: String?
    switch try row.value(1) {
    case nil: name = base.name
    case .null?: name = nil
    case .text(let text)?: name = text
    default: throw unreadable(id.rawValue)
    }
    return Detail(
      name: name, fadeIn: (try frames(2, base.fadeIn.silent), try frames(3, base.fadeIn.full)),
      fadeOut: (try frames(4, base.fadeOut.silent), try frames(5, base.fadeOut.full)))
  }
}

/// Where a track's sound goes when not to the master: `(trackID, outputID)`; no row for a track
/// whose output is the master (every track of a project made before routing).
enum TrackOutputRow: TrackedRow {
  static let table = "track_output"
  static let index = 10
  static let columns = ["trackID", "outputID"]

  static func values(_ track: Track) -> [ChangeValue]? {
    track.output.map { [.integer(track.id.rawValue), .integer($0.rawValue)] }
  }

  /// The output a row holds; `nil` when the row leaves it alone.
  static func read(_ row: some ColumnReader) throws -> Track.ID? {
    try row.integer(1).map { Track.ID($0) }
  }
}

/// One send: `(id, fromID, toID, gainDB, pan, preFader)`.
enum SendRow: TrackedRow {
  static let table = "send"
  static let index = 11
  static let columns = ["id", "fromID", "toID", "gainDB", "pan", "preFader"]

  static func values(_ send: Send) -> [ChangeValue] {
    [
      .integer(send.id.rawValue), .integer(send.from.rawValue), .integer(send.to.rawValue),
      .real(send.gain.decibels), .real(send.pan), .integer(send.isPreFader ? 1 : 0),
    ]
  }

  /// A send as a row holds it, taking what an update leaves alone from `base`.
  static func read(_ row: some ColumnReader, id: Send.ID, updating base: Send?) throws -> Send {
    guard let from = try row.integer(1).map({ Track.ID($0) }) ?? base?.from,
      let to = try row.integer(2).map({ Track.ID($0) }) ?? base?.to,
      let gain = try row.real(3).map(Gain.init(decibels:)) ?? base?.gain,
      let pan = try row.real(4) ?? base?.pan,
      let pre = try row.integer(5).map({ $0 != 0 }) ?? base?.isPreFader
    else { throw unreadable(id.rawValue) }
    return Send(id: id, from: from, to: to, gain: gain, pan: pan, isPreFader: pre)
  }
}

/// An effect's side chain: `(effectID, sourceID)`, the track whose post-fader output feeds the
/// effect's side-chain inputs; no row, none. Its own table (v16), so that the effect table keeps
/// its columns (a changeset records a table's column count).
enum EffectSidechainRow: TrackedRow {
  static let table = "effect_sidechain"
  static let index = 12
  static let columns = ["effectID", "sourceID"]

  static func values(_ effect: Effect) -> [ChangeValue]? {
    effect.sidechain.map { [.integer(effect.id.rawValue), .integer($0.rawValue)] }
  }

  /// The source a row holds; `nil` when the row leaves it alone.
  static func read(_ row: some ColumnReader) throws -> Track.ID? {
    try row.integer(1).map { Track.ID($0) }
  }
}

/// An effect's automated parameters (``Effect/automation``): one row per effect that has any,
/// `lanes` the lanes by port symbol in symbol order, `symbol=points` separated by spaces, the
/// points in ``ParameterEnvelope/storageText``'s form (`gain=96000:0.0;192000:-12.0`). No row:
/// no automation. A table of its own (v17), so the effect table's layout stays as it was.
enum EffectAutomationRow: TrackedRow {
  static let table = "effect_automation"
  static let index = 13
  static let columns = ["effectID", "lanes"]

  /// The row of `effect`'s automation; nil when it has none.
  static func values(_ effect: Effect) -> [ChangeValue]? {
    guard !effect.automation.isEmpty else { return nil }
    let lanes = effect.automation.sorted { $0.key < $1.key }.map {
      "\($0.key)=\($0.value.storageText)"
    }
    return [.integer(effect.id.rawValue), .text(lanes.joined(separator: " "))]
  }

  /// The automation a row holds; nil when the row leaves it alone.
  static func read(
    _ row: some ColumnReader, of effect: Effect.ID
  ) throws -> [String:
    ParameterEnvelope]?
  {
    guard let text = try row.text(1) else { return nil }
    var lanes: [String: ParameterEnvelope] = [:]
    for lane in text.split(separator: " ") {
      let parts = lane.split(separator: "=", maxSplits: 1)
      guard parts.count == 2, let envelope = ParameterEnvelope(storageText: String(parts[1])),
        lanes[String(parts[0])] == nil
      else { throw unreadable(effect.rawValue) }
      lanes[String(parts[0])] = envelope
    }
    guard !lanes.isEmpty else { throw unreadable(effect.rawValue) }
    return lanes
  }

  /// Gives each effect of `project` the automation `lanes` holds for it; automation of an
  /// effect that is not in the project is damage.
  static func place(
    _ lanes: [Effect.ID: [String: ParameterEnvelope]], in project: inout Project
  )
    throws
  {
    var left = lanes
    for index in project.masterEffects.indices {
      project.masterEffects[index].automation =
        left.removeValue(forKey: project.masterEffects[index].id) ?? [:]
    }
    for track in project.tracks.indices {
      for index in project.tracks[track].effects.indices {
        project.tracks[track].effects[index].automation =
          left.removeValue(forKey: project.tracks[track].effects[index].id) ?? [:]
      }
    }
    if let stray = left.keys.min() {
      throw StoreError.corrupt(detail: "automation belongs to missing effect \(stray)")
    }
  }
}

/// One file of an effect's file parameter: `(id, effectID, key, path, contentHash)`, the path
/// as a source's is stored (text, or a blob for bytes that are not UTF-8). The id carries the
/// effect in its high bits (`effectID << 16 | n`, n counting the effect's keys in sorted order
/// from 1), so that a recorded change names its effect whichever columns it holds. No row for
/// an effect without files (every effect of a project made before them). A table of its own
/// because a tracked table never gains columns (``Schema/trackedRows``).
enum EffectFileRow: TrackedRow {
  static let table = "effect_file"
  static let index = 14
  static let columns = ["id", "effectID", "key", "path", "contentHash"]

  /// The effect a file row belongs to.
  static func effect(ofFile id: Int64) -> Effect.ID { Effect.ID(id >> 16) }

  /// The rows of `effect`'s files, by id.
  static func values(_ effect: Effect) -> [Int64: [ChangeValue]] {
    var rows: [Int64: [ChangeValue]] = [:]
    for (slot, (key, file)) in effect.files.sorted(by: { $0.key < $1.key }).enumerated() {
      let id = effect.id.rawValue << 16 | Int64(slot + 1)
      rows[id] = [
        .integer(id), .integer(effect.id.rawValue), .text(key),
        file.path.string.map(ChangeValue.text) ?? .blob(file.path.bytes), .text(file.contentHash),
      ]
    }
    return rows
  }

  /// A file as a row holds it (taking what an update leaves alone from `base`), with its
  /// effect and key.
  static func read(
    _ row: some ColumnReader, id: Int64,
    updating base: (effect: Effect.ID, key: String, file: EffectFile)?
  ) throws -> (effect: Effect.ID, key: String, file: EffectFile) {
    guard let effect = try row.integer(1).map({ Effect.ID($0) }) ?? base?.effect,
      let key = try row.text(2) ?? base?.key,
      let path = try row.path(3) ?? base?.file.path,
      let hash = try row.text(4) ?? base?.file.contentHash
    else { throw unreadable(id) }
    return (effect, key, EffectFile(path: path, contentHash: hash))
  }

  /// Every effect's files as rows would hold them, by row id: what a change of rows starts
  /// from.
  static func rows(
    of effects: [Effect]
  ) -> [Int64: (effect: Effect.ID, key: String, file: EffectFile)] {
    var rows: [Int64: (effect: Effect.ID, key: String, file: EffectFile)] = [:]
    for effect in effects {
      for (slot, (key, file)) in effect.files.sorted(by: { $0.key < $1.key }).enumerated() {
        rows[effect.id.rawValue << 16 | Int64(slot + 1)] = (effect.id, key, file)
      }
    }
    return rows
  }

  /// Sets each effect of `project` to the files `rows` give it (none for an effect they do
  /// not name); a file of an effect that is not in the project is damage.
  static func attach(
    _ rows: [(effect: Effect.ID, key: String, file: EffectFile)], to project: inout Project
  ) throws {
    var files: [Effect.ID: [String: EffectFile]] = [:]
    for (effect, key, file) in rows { files[effect, default: [:]][key] = file }
    var found = 0
    for index in project.masterEffects.indices {
      let id = project.masterEffects[index].id
      project.masterEffects[index].files = files[id] ?? [:]
      if files[id] != nil { found += 1 }
    }
    for track in project.tracks.indices {
      for index in project.tracks[track].effects.indices {
        let id = project.tracks[track].effects[index].id
        project.tracks[track].effects[index].files = files[id] ?? [:]
        if files[id] != nil { found += 1 }
      }
    }
    guard found == files.count else {
      let known = Set(project.allEffects.map(\.effect.id))
      let missing = files.keys.filter { !known.contains($0) }.min().map(\.description) ?? "?"
      throw StoreError.corrupt(detail: "a file belongs to missing effect \(missing)")
    }
  }
}

/// An automation lane of a track or a send: a track's pan automation (``Track/panEnvelope``,
/// its points in ``ParameterEnvelope/storageText``'s form) or a send's gain envelope
/// (``Send/envelope``, in ``Envelope/storageText``'s form): `(id, trackID, sendID, points)`,
/// one of the owners set, the id carrying it (twice the track's id, twice the send's plus
/// one); no row, no lane. One table (v19) for both: a version's packed rows name their table
/// in four bits (``NetChanges/packed()``), so there is room for one more table, not two; and
/// its own table, so that the track and send tables keep their columns (a changeset records a
/// table's column count).
enum LaneRow: TrackedRow {
  static let table = "automation_lane"
  static let index = 15
  static let columns = ["id", "trackID", "sendID", "points"]

  /// The row id of track `id`'s pan lane.
  static func id(_ track: Track.ID) -> Int64 { track.rawValue * 2 }

  /// The row id of send `id`'s envelope.
  static func id(_ send: Send.ID) -> Int64 { send.rawValue * 2 + 1 }

  /// The track whose pan lane row `id` is; nil for a send's.
  static func track(ofLane id: Int64) -> Track.ID? { id & 1 == 0 ? Track.ID(id >> 1) : nil }

  /// The send whose envelope row `id` is; nil for a track's.
  static func send(ofLane id: Int64) -> Send.ID? { id & 1 == 1 ? Send.ID(id >> 1) : nil }

  static func values(_ track: Track) -> [ChangeValue]? {
    track.panEnvelope.map {
      [.integer(id(track.id)), .integer(track.id.rawValue), .null, .text($0.storageText)]
    }
  }

  static func values(_ send: Send) -> [ChangeValue]? {
    send.envelope.map {
      [.integer(id(send.id)), .null, .integer(send.id.rawValue), .text($0.storageText)]
    }
  }

  /// The points a row holds, as stored; nil when the row leaves them alone.
  static func points(_ row: some ColumnReader, id: Int64) throws -> Envelope? {
    guard let text = try row.text(3) else { return nil }
    guard let envelope = Envelope(storageText: text) else { throw unreadable(id) }
    return envelope
  }
}

/// A kept take that does not play (``Timeline/Take``): `(id, trackID, playingID, rangeStart,
/// rangeLength, sourceID, timelineStart, sourceStart, length, gainDB, fades)`, keyed by its
/// clip's id. `fades` is the clip's two fades as text, `length curve silentCut fullCut` of the
/// fade-in then of the fade-out, one space apart (a table holds at most
/// ``NetChanges/maximumColumns`` columns). The playing clip (`playingID`) is a clip row; the
/// store keeps no row for it here.
enum TakeRow: TrackedRow {
  static let table = "take"
  static let index = 16
  static let columns = [
    "id", "trackID", "playingID", "rangeStart", "rangeLength", "sourceID", "timelineStart",
    "sourceStart", "length", "gainDB", "fades",
  ]

  static func values(_ take: Take) -> [ChangeValue] {
    let clip = take.clip
    let fades = [clip.fadeIn, clip.fadeOut].map {
      "\($0.length.frames) \($0.curve.rawValue) \($0.silentCut.frames) \($0.fullCut.frames)"
    }.joined(separator: " ")
    return [
      .integer(take.id.rawValue), .integer(take.track.rawValue), .integer(take.playing.rawValue),
      .integer(take.range.start.frames), .integer(take.range.count.frames),
      .integer(clip.source.rawValue), .integer(clip.timelineStart.frames),
      .integer(clip.sourceRange.start.frames), .integer(clip.length.frames),
      .real(clip.gain.decibels), .text(fades),
    ]
  }

  static func read(_ row: some ColumnReader, id: Clip.ID, updating base: Take?) throws -> Take {
    guard let track = try row.integer(1).map({ Track.ID($0) }) ?? base?.track,
      let playing = try row.integer(2).map({ Clip.ID($0) }) ?? base?.playing,
      let rangeStart = try row.integer(3).map({ FramePosition($0) }) ?? base?.range.start,
      let rangeLength = try row.integer(4).map({ FrameCount($0) }) ?? base?.range.count,
      let source = try row.integer(5).map({ Source.ID($0) }) ?? base?.clip.source,
      let start = try row.integer(6).map({ FramePosition($0) }) ?? base?.clip.timelineStart,
      let sourceStart = try row.integer(7).map({ FramePosition($0) })
        ?? base?.clip.sourceRange.start,
      let length = try row.integer(8).map({ FrameCount($0) }) ?? base?.clip.length,
      let gain = try row.real(9).map(Gain.init(decibels:)) ?? base?.clip.gain,
      length.frames > 0, rangeLength.frames > 0
    else { throw unreadable(id.rawValue) }
    let fades: (Fade, Fade)?
    if let text = try row.text(10) {
      fades = Self.fades(text)
    } else {
      fades = base.map { ($0.clip.fadeIn, $0.clip.fadeOut) }
    }
    guard let (fadeIn, fadeOut) = fades else { throw unreadable(id.rawValue) }
    let clip = Clip(
      id: id, source: source, timelineStart: start,
      sourceRange: FrameRange(start: sourceStart, count: length), gain: gain, fadeIn: fadeIn,
      fadeOut: fadeOut)
    return Take(
      clip: clip, track: track, playing: playing,
      range: FrameRange(start: rangeStart, count: rangeLength))
  }

  /// The two fades `fades` text holds; nil when it is not that.
  private static func fades(_ text: String) -> (Fade, Fade)? {
    let words = text.split(separator: " ")
    guard words.count == 8 else { return nil }
    func fade(_ at: Int) -> Fade? {
      guard let length = Int64(words[at]), let curve = FadeCurve(rawValue: String(words[at + 1])),
        let silent = Int64(words[at + 2]), let full = Int64(words[at + 3])
      else { return nil }
      return Fade(
        length: FrameCount(length), curve: curve, silentCut: FrameCount(silent),
        fullCut: FrameCount(full))
    }
    guard let fadeIn = fade(0), let fadeOut = fade(4) else { return nil }
    return (fadeIn, fadeOut)
  }
}
