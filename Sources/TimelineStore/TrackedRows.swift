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
    let clip = Clip(
      id: id, source: source, timelineStart: start,
      sourceRange: FrameRange(start: sourceStart, count: length), gain: gain,
      fadeIn: Fade(length: fadeInLength, curve: fadeInCurve),
      fadeOut: Fade(length: fadeOutLength, curve: fadeOutCurve))
    return (clip, track)
  }
}

/// A track's volume automation, keyed by the track (no row: none).
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
