internal import CSQLiteSession
import Foundation
import Timeline

// Every call into SQLite's C API (the session extension, and the statements that apply recorded
// changes) goes through this file, which turns result codes into `StoreError`s and owns the
// memory SQLite hands back (freed with sqlite3_free).

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

  /// One changeset with the net effect of `changesets` applied in order, by
  /// `sqlite3changegroup`: the tests' reference for ``NetChanges``, which is what the store
  /// merges with.
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
}

func freeSQLiteBuffer(_ buffer: UnsafeMutableRawPointer) {
  sqlite3_free(buffer)
}

/// Prepared statements run through the C API: the changes applied row by row, the clip rows a
/// snapshot reads, and the pieces of history a checkout merges.
enum RawStatement {
  /// A statement that the schema refused (a CHECK, NOT NULL, key or foreign key), with
  /// SQLite's message.
  struct ConstraintFailure: Error {
    let message: String
  }

  /// Binds `values` to `statement`'s placeholders in order, runs it to completion, and returns
  /// how many rows it changed. Throws ``ConstraintFailure`` when the schema refuses it.
  static func execute(
    _ statement: OpaquePointer, on db: SQLiteHandle, binding values: [ChangeValue]
  ) throws -> Int {
    sqlite3_reset(statement)
    defer { sqlite3_reset(statement) }
    try bind(values, to: statement, on: db)
    let code = sqlite3_step(statement)
    if code & 0xFF == SQLITE_CONSTRAINT {
      throw ConstraintFailure(message: String(cString: sqlite3_errmsg(db)))
    }
    guard code == SQLITE_DONE else {
      try check(code, "applying a recorded change", on: db, statement: statement)
      throw StoreError.internalFailure("applying a recorded change returned rows")
    }
    return Int(sqlite3_changes(db))
  }

  /// ``execute(_:on:binding:)`` for a statement of Tape's own bookkeeping (the head, its
  /// journal), whose values the schema always accepts: a refusal means the rule in the file is
  /// not the one Tape wrote, reported as the damage it is (as ``TimelineStore/translate(_:)``
  /// reports GRDB's).
  static func executeOwn(
    _ statement: OpaquePointer, on db: SQLiteHandle, binding values: [ChangeValue],
    table: String
  ) throws {
    do {
      _ = try execute(statement, on: db, binding: values)
    } catch is ConstraintFailure {
      throw StoreError.corrupt(
        detail: "table \(table): a constraint in the file refuses what Tape writes")
    }
  }

  /// Binds `values`, then calls `body` with each row of the result. Reading columns through
  /// the C API costs a tenth of decoding GRDB rows by name, which matters when a checkout
  /// re-reads thousands of clips and when a project opens.
  static func query(
    _ statement: OpaquePointer, on db: SQLiteHandle, binding values: [ChangeValue] = [],
    _ body: (ResultRow) throws -> Void
  ) throws {
    sqlite3_reset(statement)
    defer { sqlite3_reset(statement) }
    try bind(values, to: statement, on: db)
    while true {
      let code = sqlite3_step(statement)
      if code == SQLITE_DONE { return }
      guard code == SQLITE_ROW else {
        try check(code, "reading the project", on: db, statement: statement)
        return
      }
      try body(ResultRow(statement: statement))
    }
  }

  /// ``query(_:on:binding:_:)`` for a statement that finds one row at most (by a key): the
  /// value `body` makes of it, nil when there is none.
  static func first<Value>(
    _ statement: OpaquePointer, on db: SQLiteHandle, binding values: [ChangeValue] = [],
    _ body: (ResultRow) throws -> Value
  ) throws -> Value? {
    var value: Value?
    try query(statement, on: db, binding: values) { value = try body($0) }
    return value
  }

  /// The current row of a query, read by column index.
  struct ResultRow {
    fileprivate let statement: OpaquePointer

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    func blob(_ column: Int32) -> Data {
      // The pointer first, then the size, as SQLite's documentation asks.
      guard let bytes = sqlite3_column_blob(statement, column) else { return Data() }
      return Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, column)))
    }
    /// Calls `body` with the bytes of a blob column, in SQLite's memory (valid only during the
    /// call): no copy.
    func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
      let bytes = sqlite3_column_blob(statement, column)
      let count = Int(sqlite3_column_bytes(statement, column))
      return try body(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : count))
    }
    /// Text by its length in bytes (a NUL inside it is part of it); `nil` when NULL.
    func text(_ column: Int32) -> String? {
      guard let text = sqlite3_column_text(statement, column) else { return nil }
      let count = Int(sqlite3_column_bytes(statement, column))
      return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func isBlob(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_BLOB }

    /// The integer in `column` (named `name` in `table`), or ``StoreError/corrupt(detail:)``
    /// naming both, as ``GRDB/Row/value(_:of:)`` says it, when the column holds anything else.
    func integer(_ column: Int32, _ name: String, of table: String) throws(StoreError) -> Int64 {
      guard let value = try optionalInteger(column, name, of: table) else {
        throw .corrupt(detail: "table \(table): column \(name) holds NULL")
      }
      return value
    }

    /// ``integer(_:_:of:)`` where NULL is allowed (read as nil).
    func optionalInteger(
      _ column: Int32, _ name: String, of table: String
    ) throws(StoreError) -> Int64? {
      switch sqlite3_column_type(statement, column) {
      case SQLITE_NULL: return nil
      case SQLITE_INTEGER: return int64(column)
      default:
        throw .corrupt(detail: "table \(table): column \(name) holds a value of the wrong type")
      }
    }

    /// The text in `column`, or ``StoreError/corrupt(detail:)``: as GRDB reads a String, a blob
    /// of valid UTF-8 is its text.
    func text(_ column: Int32, _ name: String, of table: String) throws(StoreError) -> String {
      switch sqlite3_column_type(statement, column) {
      case SQLITE_TEXT:
        if let text = text(column) { return text }
      case SQLITE_BLOB:
        if let text = withBlob(column, { String(validating: $0, as: UTF8.self) }) { return text }
      case SQLITE_NULL:
        throw .corrupt(detail: "table \(table): column \(name) holds NULL")
      default: break
      }
      throw .corrupt(detail: "table \(table): column \(name) holds a value of the wrong type")
    }

    /// Whether `column IS value` certainly holds in SQL, read without making a value: the same
    /// storage class and the same value or bytes (an integer and a real compare as numbers, as
    /// SQLite compares them). False may still hold in SQL, where SQLite would convert the value
    /// by the column's affinity first: a caller asks SQLite then.
    func holds(_ column: Int32, _ value: ChangeValue) -> Bool {
      let type = sqlite3_column_type(statement, column)
      switch value {
      case .null:
        return type == SQLITE_NULL
      case .integer(let integer):
        return holds(column, type, integer: integer)
      case .real(let real):
        return holds(column, type, real: real)
      case .text(let text):
        guard type == SQLITE_TEXT else { return false }
        var text = text
        return text.withUTF8 { self.text(column, equals: UnsafeRawBufferPointer($0)) }
      case .blob(let bytes):
        guard type == SQLITE_BLOB else { return false }
        let stored = sqlite3_column_blob(statement, column)
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count == bytes.count else { return false }
        guard count > 0 else { return true }
        guard let stored else { return false }
        return bytes.withUnsafeBufferPointer { expected in
          guard let expected = expected.baseAddress else { return false }
          return memcmp(stored, expected, count) == 0
        }
      }
    }

    /// ``holds(_:_:)`` for a change's slot, its text or blob in `payloads`: a number is
    /// compared without making a value of it.
    func holds(_ column: Int32, slot: Slot, payloads: [ChangeValue]) -> Bool {
      switch slot.tag {
      case Slot.integer:
        return holds(
          column, sqlite3_column_type(statement, column), integer: Int64(bitPattern: slot.bits))
      case Slot.real:
        return holds(
          column, sqlite3_column_type(statement, column), real: Double(bitPattern: slot.bits))
      case Slot.null:
        return sqlite3_column_type(statement, column) == SQLITE_NULL
      default:
        return NetChanges.value(slot, payloads: payloads).map { holds(column, $0) } ?? false
      }
    }

    private func holds(_ column: Int32, _ type: Int32, integer: Int64) -> Bool {
      if type == SQLITE_INTEGER { return sqlite3_column_int64(statement, column) == integer }
      return type == SQLITE_FLOAT && integer.magnitude < 1 << 53
        && sqlite3_column_double(statement, column) == Double(integer)
    }

    private func holds(_ column: Int32, _ type: Int32, real: Double) -> Bool {
      if type == SQLITE_FLOAT { return sqlite3_column_double(statement, column) == real }
      guard type == SQLITE_INTEGER else { return false }
      let stored = sqlite3_column_int64(statement, column)
      return stored.magnitude < 1 << 53 && Double(stored) == real
    }

    /// Whether the column holds exactly `bytes` as text, without making a String.
    func text(_ column: Int32, equals bytes: [UInt8]) -> Bool {
      bytes.withUnsafeBytes { text(column, equals: $0) }
    }

    private func text(_ column: Int32, equals bytes: UnsafeRawBufferPointer) -> Bool {
      // The pointer first, then the size, as SQLite's documentation asks.
      guard let text = sqlite3_column_text(statement, column),
        Int(sqlite3_column_bytes(statement, column)) == bytes.count
      else { return false }
      guard let expected = bytes.baseAddress else { return true }
      return memcmp(text, expected, bytes.count) == 0
    }
  }

  private static func bind(
    _ values: [ChangeValue], to statement: OpaquePointer, on db: SQLiteHandle
  ) throws {
    for (offset, value) in values.enumerated() {
      let index = Int32(offset + 1)
      let code: Int32
      switch value {
      case .null: code = sqlite3_bind_null(statement, index)
      case .integer(let value): code = sqlite3_bind_int64(statement, index, value)
      case .real(let value): code = sqlite3_bind_double(statement, index, value)
      case .text(let value):
        // By its length in bytes: a NUL inside the text is part of it.
        var text = value
        code = text.withUTF8 { bytes in
          // An empty buffer may have no address, which would bind NULL: bind "" itself.
          guard let base = bytes.baseAddress, !bytes.isEmpty else {
            return sqlite3_bind_text(statement, index, "", 0, transient)
          }
          return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            sqlite3_bind_text(statement, index, $0, Int32(bytes.count), transient)
          }
        }
      case .blob(let value):
        code = value.withUnsafeBytes {
          sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), transient)
        }
      }
      try check(code, "binding a value", on: db)
    }
  }

  /// SQLITE_TRANSIENT: SQLite copies the bytes before the call returns.
  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// Turns a SQLite result code into a ``StoreError``. Given the connection, I/O errors are
/// reported as such and other failures carry SQLite's message.
private func check(
  _ code: Int32, _ call: @autoclosure () -> String, on db: SQLiteHandle? = nil,
  statement: OpaquePointer? = nil
) throws {
  guard code != SQLITE_OK else { return }
  let message = db.map { String(cString: sqlite3_errmsg($0)) }
  switch code & 0xFF {
  case SQLITE_BUSY, SQLITE_LOCKED: throw StoreError.busy
  case SQLITE_CORRUPT, SQLITE_NOTADB:
    throw StoreError.corrupt(detail: damage(message, sql: statement.flatMap(sqlText)))
  case SQLITE_NOMEM: throw StoreError.internalFailure("out of memory in \(call())")
  case SQLITE_ERROR where isSchemaDamage(message):
    throw StoreError.corrupt(detail: damage(message, sql: statement.flatMap(sqlText)))
  case SQLITE_IOERR where message != nil, SQLITE_FULL where message != nil:
    throw StoreError.io(detail: message ?? "")
  default:
    throw StoreError.internalFailure(
      "\(call()) failed with SQLite code \(code)" + (message.map { ": \($0)" } ?? ""))
  }
}

/// The SQL a prepared statement was made from.
private func sqlText(_ statement: OpaquePointer) -> String? {
  sqlite3_sql(statement).map { String(cString: $0) }
}

/// A row of `SELECT *` on a tracked table: every column is there.
extension RawStatement.ResultRow: ColumnReader {
  func integer(_ column: Int) -> Int64? { int64(Int32(column)) }
  func real(_ column: Int) -> Double? { double(Int32(column)) }
  func text(_ column: Int) -> String? { text(Int32(column)) }

  func value(_ column: Int) -> ChangeValue? {
    let index = Int32(column)
    switch sqlite3_column_type(statement, index) {
    case SQLITE_INTEGER: return .integer(int64(index))
    case SQLITE_FLOAT: return .real(double(index))
    case SQLITE_TEXT: return text(index).map(ChangeValue.text) ?? .null
    case SQLITE_BLOB: return .blob([UInt8](blob(index)))
    default: return .null
    }
  }

  func path(_ column: Int) -> RawPath? {
    if isBlob(Int32(column)) { return RawPath(bytes: [UInt8](blob(Int32(column)))) }
    return text(Int32(column)).map { RawPath($0) }
  }

  /// Compared in place: thousands of clips may be read.
  func curve(_ column: Int) throws -> FadeCurve? {
    guard let curve = Self.curveNames.first(where: { text(Int32(column), equals: $0.1) })?.0 else {
      throw StoreError.corrupt(detail: "a stored fade curve is not one Tape knows")
    }
    return curve
  }

  private static let curveNames = FadeCurve.allCases.map { ($0, Array($0.rawValue.utf8)) }
}
