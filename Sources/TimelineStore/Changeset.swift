import Foundation

/// A SQLite session changeset: the exact row changes of one commit, old and new values; or
/// the same changes in ``NetChanges``' packed encoding, which is what the `version` table
/// stores (as a BLOB) since issue 23 (older versions keep their session changesets).
///
/// It is both the undo information (inverted) and the redo information (as is); undo, redo and
/// checkout read it through ``NetChanges``, which tells the two forms apart by the first byte.
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
