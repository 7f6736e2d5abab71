import Foundation
internal import GRDB
import Timeline

/// Writes the rows a commit changed: the only code that writes the tracked tables.
///
/// It compares nothing itself: `changed` (from ``Project/applyingWithChanges(_:)``) says which
/// ids to write, and `new` holds their final values. Rows are upserted, so the session
/// extension records an UPDATE of just the columns that differ.
enum RowWriter {
  /// Returns where each changed clip now is (or that it is gone), for the clip index.
  @discardableResult
  static func write(
    new: Project, changed: ChangedIDs, positions: inout [Track.ID: Int64], _ db: Database
  ) throws -> [(Clip.ID, ClipIndex.Change)] {
    var placements: [(Clip.ID, ClipIndex.Change)] = []
    // Foreign keys are checked statement by statement (deferring them takes a flag pragma, and
    // SQLite expires every prepared statement after one), so parents are written before the
    // clips that point at them and removed after.
    for id in changed.sources.sorted() {
      guard let source = new.source(id) else { continue }
      try db.cachedStatement(
        sql: """
          INSERT INTO source (id, path, contentHash, sampleRate, channels, frameCount)
          VALUES (?, ?, ?, ?, ?, ?)
          ON CONFLICT(id) DO UPDATE SET path = excluded.path, contentHash = excluded.contentHash,
            sampleRate = excluded.sampleRate, channels = excluded.channels,
            frameCount = excluded.frameCount
          """
      ).execute(arguments: [
        id.rawValue, source.path.databaseValue, source.contentHash, source.sampleRate,
        source.channels,
        source.frameCount.frames,
      ])
    }

    var tracksToWrite = changed.tracks
    if changed.trackOrder {
      for (index, track) in new.tracks.enumerated() where positions[track.id] != Int64(index) {
        positions[track.id] = Int64(index)
        tracksToWrite.insert(track.id)
      }
    }
    // In display order, so tracks added together get increasing positions.
    for track in new.tracks where tracksToWrite.contains(track.id) {
      let position = positions[track.id] ?? ((positions.values.max() ?? -1) + 1)
      positions[track.id] = position
      try db.cachedStatement(
        sql: """
          INSERT INTO track (id, position, name, gainDB, pan, muted, solo) VALUES (?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT(id) DO UPDATE SET position = excluded.position, name = excluded.name,
            gainDB = excluded.gainDB, pan = excluded.pan, muted = excluded.muted, solo = excluded.solo
          """
      ).execute(arguments: [
        track.id.rawValue, position, track.name, track.gain.decibels, track.pan, track.isMuted,
        track.isSolo,
      ])
    }
    // Envelopes: a row per track that has one, written with the track.
    for track in new.tracks where tracksToWrite.contains(track.id) {
      if let envelope = track.envelope {
        try db.cachedStatement(
          sql: """
            INSERT INTO envelope (trackID, points) VALUES (?, ?)
            ON CONFLICT(trackID) DO UPDATE SET points = excluded.points
            """
        ).execute(arguments: [track.id.rawValue, envelope.storageText])
      } else {
        try db.cachedStatement(sql: "DELETE FROM envelope WHERE trackID = ?").execute(
          arguments: [track.id.rawValue])
      }
    }
    // The master gain: a row unless it is 0 dB (no row), so that setting 0 dB on a project
    // that never had a master gain changes nothing.
    if changed.format {
      if new.masterGain == .unity {
        try db.cachedStatement(sql: "DELETE FROM master WHERE id = 1").execute()
      } else {
        try db.cachedStatement(
          sql: """
            INSERT INTO master (id, gainDB) VALUES (1, ?)
            ON CONFLICT(id) DO UPDATE SET gainDB = excluded.gainDB
            """
        ).execute(arguments: [new.masterGain.decibels])
      }
    }
    let placed = new.locate(changed.clips)
    for id in changed.clips {
      guard let (clip, track) = placed[id] else {
        try db.cachedStatement(sql: "DELETE FROM clip WHERE id = ?").execute(arguments: [
          id.rawValue
        ])
        placements.append((id, .removed))
        continue
      }
      placements.append((id, .placed(clip, on: track)))
      try db.cachedStatement(
        sql: """
          INSERT INTO clip (id, trackID, sourceID, timelineStart, sourceStart, length, gainDB,
            fadeInLength, fadeInCurve, fadeOutLength, fadeOutCurve)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT(id) DO UPDATE SET trackID = excluded.trackID, sourceID = excluded.sourceID,
            timelineStart = excluded.timelineStart, sourceStart = excluded.sourceStart,
            length = excluded.length, gainDB = excluded.gainDB,
            fadeInLength = excluded.fadeInLength, fadeInCurve = excluded.fadeInCurve,
            fadeOutLength = excluded.fadeOutLength, fadeOutCurve = excluded.fadeOutCurve
          """
      ).execute(arguments: [
        id.rawValue, track.rawValue, clip.source.rawValue, clip.timelineStart.frames,
        clip.sourceRange.start.frames, clip.length.frames, clip.gain.decibels,
        clip.fadeIn.length.frames, clip.fadeIn.curve.rawValue, clip.fadeOut.length.frames,
        clip.fadeOut.curve.rawValue,
      ])
    }
    for id in tracksToWrite where new.track(id) == nil {
      positions[id] = nil
      try db.cachedStatement(sql: "DELETE FROM envelope WHERE trackID = ?").execute(arguments: [
        id.rawValue
      ])
      try db.cachedStatement(sql: "DELETE FROM track WHERE id = ?").execute(arguments: [id.rawValue]
      )
    }
    for id in changed.sources.sorted() where new.source(id) == nil {
      try db.cachedStatement(sql: "DELETE FROM source WHERE id = ?").execute(arguments: [
        id.rawValue
      ])
    }
    return placements
  }
}

extension RawPath {
  /// Text when the bytes are valid UTF-8 (every path before paths were bytes), a blob otherwise:
  /// the column is TEXT, and SQLite keeps a blob in it as given.
  var databaseValue: DatabaseValue {
    if let string { return string.databaseValue }
    return Data(bytes).databaseValue
  }

  init?(_ value: DatabaseValue) {
    switch value.storage {
    case .string(let string): self.init(string)
    case .blob(let data): self.init(bytes: [UInt8](data))
    default: return nil
    }
  }
}
