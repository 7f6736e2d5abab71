public import Foundation
internal import GRDB
public import Timeline

/// A clipboard as the project keeps it: the clipboard, and when and at which version it was
/// copied.
public struct SavedClipboard: Sendable, Hashable {
  public let clipboard: Clipboard
  /// The head version when it was copied (what its range refers to).
  public let version: Int64
  public let date: Date
}

/// Named clipboards (``Clipboard``), kept in the project file beside its history but not in
/// it: like transient state, undo and redo never touch them and saving one makes no version.
extension TimelineStore {
  /// Every clipboard of the project, by name. A project made before clipboards existed, read
  /// without upgrading it, has none.
  public func clipboards() throws(StoreError) -> [SavedClipboard] {
    try readClipboards(named: nil)
  }

  /// The clipboard `name`, or nil when the project has none by that name.
  public func clipboard(named name: String) throws(StoreError) -> SavedClipboard? {
    try readClipboards(named: name).first
  }

  /// Keeps `clipboard` under its name, replacing one of that name; true when it replaced one.
  @discardableResult
  public func saveClipboard(_ clipboard: Clipboard) throws(StoreError) -> Bool {
    try checkWriteAccess()
    do {
      return try writeTransaction { db in
        let replaced = try Self.deleteClipboard(clipboard.name, db)
        try db.execute(
          sql:
            "INSERT INTO clipboard (name, rangeStart, length, version, createdAt, lanes) VALUES (?, ?, ?, ?, ?, ?)",
          arguments: [
            clipboard.name, clipboard.range.start.frames, clipboard.range.count.frames,
            try Head.read(db).version, now(), clipboard.keepsLanes ? 1 : 0,
          ])
        for (position, track) in clipboard.tracks.enumerated() {
          try db.execute(
            sql:
              "INSERT INTO clipboard_track (clipboard, position, trackID, envelope) VALUES (?, ?, ?, ?)",
            arguments: [clipboard.name, position, track.id.rawValue, track.envelope?.storageText])
        }
        var position = 0
        for track in clipboard.tracks {
          let lanes: [(Int64?, Int64?, String?)] =
            (track.panEnvelope.map { [(nil, nil, $0.storageText)] } ?? [])
            + track.sends.map { ($0.id.rawValue, $0.to.rawValue, $0.envelope?.storageText) }
          for (sendID, toTrack, points) in lanes {
            try db.execute(
              sql: """
                INSERT INTO clipboard_lane (clipboard, position, trackID, sendID, toTrack, points)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
              arguments: [clipboard.name, position, track.id.rawValue, sendID, toTrack, points])
            position += 1
          }
        }
        for (position, piece) in clipboard.pieces.enumerated() {
          try db.execute(
            sql: """
              INSERT INTO clipboard_clip (clipboard, position, trackID, copiedFrom, sourceID,
                offset, sourceStart, length, gainDB, fadeInLength, fadeInCurve, fadeOutLength,
                fadeOutCurve, fadeInSilentCut, fadeInFullCut, fadeOutSilentCut, fadeOutFullCut)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
              """,
            arguments: [
              clipboard.name, position, piece.track.rawValue, piece.copiedFrom.rawValue,
              piece.source.rawValue, piece.offset.frames, piece.sourceRange.start.frames,
              piece.sourceRange.count.frames, piece.gain.decibels, piece.fadeIn.length.frames,
              piece.fadeIn.curve.rawValue, piece.fadeOut.length.frames,
              piece.fadeOut.curve.rawValue, piece.fadeIn.silentCut.frames,
              piece.fadeIn.fullCut.frames, piece.fadeOut.silentCut.frames,
              piece.fadeOut.fullCut.frames,
            ])
        }
        return replaced
      }
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  /// Removes the clipboard `name`; false when there was none.
  @discardableResult
  public func removeClipboard(named name: String) throws(StoreError) -> Bool {
    try checkWriteAccess()
    do {
      return try writeTransaction { db in try Self.deleteClipboard(name, db) }
    } catch {
      throw Self.translate(error, at: path)
    }
  }

  private static func deleteClipboard(_ name: String, _ db: Database) throws -> Bool {
    try db.execute(sql: "DELETE FROM clipboard_clip WHERE clipboard = ?", arguments: [name])
    if try db.tableExists("clipboard_lane") {
      try db.execute(sql: "DELETE FROM clipboard_lane WHERE clipboard = ?", arguments: [name])
    }
    try db.execute(sql: "DELETE FROM clipboard_track WHERE clipboard = ?", arguments: [name])
    try db.execute(sql: "DELETE FROM clipboard WHERE name = ?", arguments: [name])
    return db.changesCount > 0
  }

  private func readClipboards(named name: String?) throws(StoreError) -> [SavedClipboard] {
    let found: [SavedClipboard]
    do {
      found = try queue.read { db in
        guard try db.tableExists("clipboard") else { return [] }
        let filter = name == nil ? "" : " WHERE name = ?"
        let arguments: StatementArguments = name.map { [$0] } ?? []
        // Whether each keeps its lanes (v20); none did before.
        let lanes = try db.columns(in: "clipboard").contains { $0.name == "lanes" }
        let heads = try Row.fetchAll(
          db,
          sql:
            "SELECT name, rangeStart, length, version, createdAt\(lanes ? ", lanes" : "") FROM clipboard\(filter) ORDER BY name",
          arguments: arguments)
        var tracks: [String: [Clipboard.CopiedTrack]] = [:]
        for row in try Row.fetchAll(
          db,
          sql:
            "SELECT clipboard, trackID, envelope FROM clipboard_track\(name == nil ? "" : " WHERE clipboard = ?") ORDER BY clipboard, position",
          arguments: arguments)
        {
          let text: String? = try row.value("envelope", of: "clipboard_track")
          var envelope: Envelope?
          if let text {
            guard let parsed = Envelope(storageText: text) else {
              throw StoreError.corrupt(
                detail: "table clipboard_track: column envelope holds a value Tape never writes")
            }
            envelope = parsed
          }
          let owner: String = try row.value("clipboard", of: "clipboard_track")
          tracks[owner, default: []].append(
            Clipboard.CopiedTrack(
              id: Track.ID(try row.value("trackID", of: "clipboard_track")), envelope: envelope))
        }
        // The pan lanes and sends (v20); a file read without that migration has none.
        if try db.tableExists("clipboard_lane") {
          let table = "clipboard_lane"
          for row in try Row.fetchAll(
            db,
            sql:
              "SELECT * FROM clipboard_lane\(name == nil ? "" : " WHERE clipboard = ?") ORDER BY clipboard, position",
            arguments: arguments)
          {
            let owner: String = try row.value("clipboard", of: table)
            let trackID = Track.ID(try row.value("trackID", of: table))
            let text: String? = try row.value("points", of: table)
            var points: Envelope?
            if let text {
              guard let parsed = Envelope(storageText: text) else {
                throw StoreError.corrupt(
                  detail: "table \(table): column points holds a value Tape never writes")
              }
              points = parsed
            }
            guard let index = tracks[owner]?.firstIndex(where: { $0.id == trackID }) else {
              throw StoreError.corrupt(
                detail: "table \(table): a lane of a track clipboard \(owner) did not copy")
            }
            let sendID: Int64? = try row.value("sendID", of: table)
            if let sendID {
              tracks[owner]?[index].sends.append(
                Clipboard.CopiedSend(
                  id: Send.ID(sendID), to: Track.ID(try row.value("toTrack", of: table)),
                  envelope: points))
            } else {
              tracks[owner]?[index].panEnvelope = points.map(ParameterEnvelope.init(curve:))
            }
          }
        }
        var pieces: [String: [Clipboard.Piece]] = [:]
        for row in try Row.fetchAll(
          db,
          sql:
            "SELECT * FROM clipboard_clip\(name == nil ? "" : " WHERE clipboard = ?") ORDER BY clipboard, position",
          arguments: arguments)
        {
          let table = "clipboard_clip"
          let owner: String = try row.value("clipboard", of: table)
          let curve = { (column: String) throws -> FadeCurve in
            let text: String = try row.value(column, of: table)
            guard let curve = FadeCurve(rawValue: text) else {
              throw StoreError.corrupt(
                detail: "table \(table): column \(column) holds a value Tape never writes")
            }
            return curve
          }
          // The cut parts of its fades (v11); a file read without that migration has none.
          let cut = { (column: String) throws -> FrameCount in
            guard row.hasColumn(column) else { return .zero }
            let frames: Int64 = try row.value(column, of: table)
            guard frames >= 0 else {
              throw StoreError.corrupt(
                detail: "table \(table): column \(column) holds a value Tape never writes")
            }
            return FrameCount(frames)
          }
          pieces[owner, default: []].append(
            Clipboard.Piece(
              track: Track.ID(try row.value("trackID", of: table)),
              copiedFrom: Clip.ID(try row.value("copiedFrom", of: table)),
              source: Source.ID(try row.value("sourceID", of: table)),
              offset: FrameCount(try row.value("offset", of: table)),
              sourceRange: FrameRange(
                start: FramePosition(try row.value("sourceStart", of: table)),
                count: FrameCount(try row.value("length", of: table))),
              gain: Gain(decibels: try row.value("gainDB", of: table)),
              fadeIn: Fade(
                length: FrameCount(try row.value("fadeInLength", of: table)),
                curve: try curve("fadeInCurve"), silentCut: try cut("fadeInSilentCut"),
                fullCut: try cut("fadeInFullCut")),
              fadeOut: Fade(
                length: FrameCount(try row.value("fadeOutLength", of: table)),
                curve: try curve("fadeOutCurve"), silentCut: try cut("fadeOutSilentCut"),
                fullCut: try cut("fadeOutFullCut"))))
        }
        return try heads.map { row in
          let owner: String = try row.value("name", of: "clipboard")
          let range = FrameRange(
            start: FramePosition(try row.value("rangeStart", of: "clipboard")),
            count: FrameCount(try row.value("length", of: "clipboard")))
          let created: Int64 = try row.value("createdAt", of: "clipboard")
          return SavedClipboard(
            clipboard: Clipboard(
              name: owner, range: range, tracks: tracks[owner] ?? [], pieces: pieces[owner] ?? [],
              keepsLanes: lanes ? (try row.value("lanes", of: "clipboard") as Int64) != 0 : false),
            version: try row.value("version", of: "clipboard"),
            date: Date(timeIntervalSince1970: Double(created) / 1000))
        }
      }
    } catch {
      throw Self.translate(error, at: path)
    }
    try checkUnchanged()
    return found
  }
}
