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

  /// A change group that changesets are added to one by one; ``output()`` gives their net effect.
  final class ChangeGroup {
    private var group: OpaquePointer?

    init() throws {
      try check(sqlite3changegroup_new(&group), "sqlite3changegroup_new")
    }

    deinit {
      sqlite3changegroup_delete(group)
    }

    func add(_ data: Data) throws {
      if data.isEmpty { return }
      try data.withUnsafeBytes { raw in
        try check(
          sqlite3changegroup_add(
            group, Int32(raw.count), UnsafeMutableRawPointer(mutating: raw.baseAddress)),
          "sqlite3changegroup_add")
      }
    }

    func output() throws -> Changeset {
      var size: Int32 = 0
      var buffer: UnsafeMutableRawPointer?
      try check(sqlite3changegroup_output(group, &size, &buffer), "sqlite3changegroup_output")
      return Changeset(takingSQLiteBuffer: buffer, size: size)
    }
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

  /// Calls `body` with every change in `changeset`, in order, its values copied out.
  static func forEachChange(in changeset: Changeset, _ body: (RowChange) throws -> Void) throws {
    if changeset.isEmpty { return }
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
        guard let table else { continue }
        let kind: RowChange.Kind =
          operation == SQLITE_INSERT ? .insert : operation == SQLITE_DELETE ? .delete : .update
        var old = [ChangeValue?](repeating: nil, count: Int(columns))
        var new = [ChangeValue?](repeating: nil, count: Int(columns))
        for column in 0..<columns {
          var value: OpaquePointer?
          if kind != .insert {
            try check(sqlite3changeset_old(iterator, column, &value), "sqlite3changeset_old")
            old[Int(column)] = value.map(ChangeValue.init)
          }
          value = nil
          if kind != .delete {
            try check(sqlite3changeset_new(iterator, column, &value), "sqlite3changeset_new")
            new[Int(column)] = value.map(ChangeValue.init)
          }
        }
        try body(RowChange(table: String(cString: table), kind: kind, old: old, new: new))
      }
    }
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

/// One row's change in a changeset. `nil` values are columns the change does not record (an
/// UPDATE records only the primary key and the columns it changed).
struct RowChange {
  enum Kind { case insert, update, delete }
  let table: String
  let kind: Kind
  let old: [ChangeValue?]
  let new: [ChangeValue?]
}

/// A column value copied out of a changeset.
enum ChangeValue: Hashable {
  case null
  case integer(Int64)
  case real(Double)
  case text(String)
  case blob([UInt8])

  init(_ value: OpaquePointer) {
    switch sqlite3_value_type(value) {
    case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
    case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
    case SQLITE_TEXT: self = .text(sqlite3_value_text(value).map { String(cString: $0) } ?? "")
    case SQLITE_BLOB:
      let count = Int(sqlite3_value_bytes(value))
      let bytes = sqlite3_value_blob(value).map {
        Array(UnsafeRawBufferPointer(start: $0, count: count))
      }
      self = .blob(bytes ?? [])
    default: self = .null
    }
  }
}

func freeSQLiteBuffer(_ buffer: UnsafeMutableRawPointer) {
  sqlite3_free(buffer)
}
