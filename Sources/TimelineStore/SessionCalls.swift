internal import CSQLiteSession
import Foundation

// Every call into SQLite's session extension goes through this file, which turns result codes
// into `StoreError`s and owns the memory SQLite hands back (freed with sqlite3_free).

/// A raw SQLite connection handle, as GRDB exposes it.
typealias SQLiteHandle = OpaquePointer

enum SessionCalls {
  /// Records every change made to `tables` on `db` while `body` runs, and returns them as a
  /// changeset (empty when nothing changed).
  static func capture(
    on db: SQLiteHandle, tables: [String], _ body: () throws -> Void
  ) throws -> Changeset {
    var session: OpaquePointer?
    try check(sqlite3session_create(db, "main", &session), "sqlite3session_create")
    guard let session else {
      throw StoreError.internalFailure("sqlite3session_create returned no session")
    }
    defer { sqlite3session_delete(session) }
    for table in tables {
      try check(sqlite3session_attach(session, table), "sqlite3session_attach(\(table))")
    }
    try body()
    var size: Int32 = 0
    var buffer: UnsafeMutableRawPointer?
    try check(sqlite3session_changeset(session, &size, &buffer), "sqlite3session_changeset")
    return Changeset(takingSQLiteBuffer: buffer, size: size)
  }

  /// The changeset that undoes `changeset`.
  static func invert(_ changeset: Changeset) throws -> Changeset {
    if changeset.isEmpty { return changeset }
    var size: Int32 = 0
    var buffer: UnsafeMutableRawPointer?
    try changeset.data.withUnsafeBytes { raw in
      try check(
        sqlite3changeset_invert(Int32(raw.count), raw.baseAddress, &size, &buffer),
        "sqlite3changeset_invert")
    }
    return Changeset(takingSQLiteBuffer: buffer, size: size)
  }

  /// One changeset with the net effect of `changesets` applied in order.
  static func concatenate(_ changesets: [Changeset]) throws -> Changeset {
    let nonEmpty = changesets.filter { !$0.isEmpty }
    if nonEmpty.count <= 1 { return nonEmpty.first ?? Changeset() }
    var group: OpaquePointer?
    try check(sqlite3changegroup_new(&group), "sqlite3changegroup_new")
    guard let group else {
      throw StoreError.internalFailure("sqlite3changegroup_new returned nothing")
    }
    defer { sqlite3changegroup_delete(group) }
    for changeset in nonEmpty {
      try changeset.data.withUnsafeBytes { raw in
        try check(
          sqlite3changegroup_add(
            group, Int32(raw.count), UnsafeMutableRawPointer(mutating: raw.baseAddress)),
          "sqlite3changegroup_add")
      }
    }
    var size: Int32 = 0
    var buffer: UnsafeMutableRawPointer?
    try check(sqlite3changegroup_output(group, &size, &buffer), "sqlite3changegroup_output")
    return Changeset(takingSQLiteBuffer: buffer, size: size)
  }

  /// Applies `changeset` to `db` inside the caller's transaction. Any conflict (a row that is not
  /// as the changeset expects) aborts the whole apply: history and data have diverged, and
  /// applying anyway would corrupt the project silently.
  static func apply(_ changeset: Changeset, to db: SQLiteHandle) throws {
    if changeset.isEmpty { return }
    let result = changeset.data.withUnsafeBytes { raw in
      sqlite3changeset_apply(
        db, Int32(raw.count), UnsafeMutableRawPointer(mutating: raw.baseAddress), nil,
        { _, _, _ in SQLITE_CHANGESET_ABORT }, nil)
    }
    if result == SQLITE_ABORT || result == SQLITE_CONSTRAINT {
      throw StoreError.historyDiverged
    }
    try check(result, "sqlite3changeset_apply")
  }

  /// Every row the changeset touches: its table and integer primary key (column 0).
  static func touchedRows(in changeset: Changeset) throws -> [(table: String, id: Int64)] {
    if changeset.isEmpty { return [] }
    var rows: [(table: String, id: Int64)] = []
    try changeset.data.withUnsafeBytes { raw in
      var iterator: OpaquePointer?
      try check(
        sqlite3changeset_start(
          &iterator, Int32(raw.count), UnsafeMutableRawPointer(mutating: raw.baseAddress)),
        "sqlite3changeset_start")
      defer { sqlite3changeset_finalize(iterator) }
      while sqlite3changeset_next(iterator) == SQLITE_ROW {
        var table: UnsafePointer<CChar>?
        var columns: Int32 = 0
        var operation: Int32 = 0
        var indirect: Int32 = 0
        try check(
          sqlite3changeset_op(iterator, &table, &columns, &operation, &indirect),
          "sqlite3changeset_op")
        var value: OpaquePointer?
        if operation == SQLITE_INSERT {
          try check(sqlite3changeset_new(iterator, 0, &value), "sqlite3changeset_new")
        } else {
          try check(sqlite3changeset_old(iterator, 0, &value), "sqlite3changeset_old")
        }
        guard let table, let value else { continue }
        rows.append((String(cString: table), sqlite3_value_int64(value)))
      }
    }
    return rows
  }

  private static func check(_ code: Int32, _ call: @autoclosure () -> String) throws {
    guard code != SQLITE_OK else { return }
    switch code & 0xFF {
    case SQLITE_BUSY, SQLITE_LOCKED: throw StoreError.busy
    case SQLITE_CORRUPT, SQLITE_NOTADB:
      throw StoreError.corrupt(detail: "\(call()) failed (\(code))")
    case SQLITE_NOMEM: throw StoreError.internalFailure("out of memory in \(call())")
    default: throw StoreError.internalFailure("\(call()) failed with SQLite code \(code)")
    }
  }
}

func freeSQLiteBuffer(_ buffer: UnsafeMutableRawPointer) {
  sqlite3_free(buffer)
}
