import Foundation
internal import GRDB
import SafeFiles

/// What ``TimelineStore/backup(to:)`` wrote.
public struct BackupReport: Sendable, Hashable {
  /// The copy's path.
  public let path: String
  /// The head's version in the copy (the project's when the copy was taken).
  public let version: Int64
  /// The copy's size in bytes.
  public let bytes: Int64
}

extension TimelineStore {
  /// Writes a consistent copy of the project, with its whole history, to `destination`: the way
  /// to copy a project that other processes may be playing and editing.
  ///
  /// Why not `cp`: commits live in the project's `-wal` until they are copied into the file, so
  /// a copy of the file alone may lack the latest versions while a process has the project
  /// open. The copy is one read transaction (`VACUUM INTO`): it never waits for an editor and
  /// never makes one wait, and holds every version committed when it began. It is a project of
  /// its own, with a log token of its own (`LogOwnership`): put back in place of the original,
  /// a log the original left is not applied to it.
  ///
  /// The copy appears complete or not at all, built in a private folder beside `destination` and
  /// linked into place: an existing file there is never replaced
  /// (``StoreError/alreadyExists(path:)``).
  ///
  /// ```swift
  /// let store = try TimelineStore.open(at: "song.tape", access: .read)
  /// let report = try store.backup(to: "backups/song-monday.tape")
  /// ```
  public func backup(to destination: String) throws(StoreError) -> BackupReport {
    guard FileIdentity(path: destination) == nil else {
      throw .alreadyExists(path: destination)
    }
    let folder: PrivateFolder
    do {
      folder = try PrivateFolder(beside: destination)
    } catch {
      throw .io(detail: error.description)
    }
    defer { folder.remove() }
    let name = (destination as NSString).lastPathComponent
    let temporary = folder.file(name)
    for suffix in ["-wal", "-shm", "-journal"] { _ = folder.file(name + suffix) }
    do {
      try queue.inDatabase { db in
        try db.execute(sql: "VACUUM INTO ?", arguments: [temporary])
      }
      let copy = try DatabaseQueue(path: temporary)
      let version = try copy.writeWithoutTransaction { db in
        // A Tape project is in WAL mode (VACUUM INTO writes a rollback-journal file), with a
        // log token of its own.
        try db.execute(sql: "PRAGMA journal_mode = WAL")
        try db.execute(sql: "PRAGMA user_version = \(Int32.random(in: .min ... .max) | 1)")
        return try Head.read(db).version
      }
      try copy.close()
      try folder.publish(temporary, as: destination)
      let bytes = FileIdentity(path: destination)?.size ?? 0
      return BackupReport(path: destination, version: version, bytes: bytes)
    } catch SafeFileError.cannotOpen(_, EEXIST) {
      throw .alreadyExists(path: destination)
    } catch let error as SafeFileError {
      throw .io(detail: error.description)
    } catch {
      throw Self.translate(error, at: destination)
    }
  }
}
