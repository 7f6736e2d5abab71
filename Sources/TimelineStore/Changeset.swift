import Foundation

/// A SQLite session changeset: the exact row changes of one commit, old and new values.
///
/// It is both the undo information (inverted) and the redo information (as is); undo, redo and
/// checkout read it through ``NetChanges``. Stored in the `version` table as a BLOB.
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
}
