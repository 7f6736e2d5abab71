import Foundation
import Timeline

/// A SQLite session changeset: the exact row changes of one commit, old and new values.
///
/// It is both the undo information (inverted) and the redo information (as is), and the unit
/// that checkout concatenates. Stored in the `version` table as a BLOB.
struct Changeset: Sendable, Hashable {
  var data: Data

  init(data: Data = Data()) {
    self.data = data
  }

  /// Takes ownership of a buffer SQLite allocated, copying it and freeing the original.
  init(takingSQLiteBuffer buffer: UnsafeMutableRawPointer?, size: Int32) {
    if let buffer {
      data = Data(bytes: buffer, count: Int(size))
      freeSQLiteBuffer(buffer)
    } else {
      data = Data()
    }
  }

  var isEmpty: Bool { data.isEmpty }

  func inverted() throws -> Changeset { try SessionCalls.invert(self) }

  /// The ids this changeset touches, by kind: what a snapshot must re-read.
  func changedIDs() throws -> ChangedIDs {
    var changed = ChangedIDs()
    try SessionCalls.forEachChange(in: self) { change in
      // Column 0 is the primary key: in the new values of an insert, the old ones otherwise.
      guard case .integer(let id)? = (change.kind == .insert ? change.new : change.old).first ?? nil
      else { return }
      switch change.table {
      case Schema.clipTable: changed.clips.insert(Clip.ID(id))
      case Schema.trackTable:
        changed.tracks.insert(Track.ID(id))
        changed.trackOrder = true
      case Schema.sourceTable: changed.sources.insert(Source.ID(id))
      default: changed.format = true
      }
    }
    return changed
  }
}
