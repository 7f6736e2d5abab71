import Foundation
internal import GRDB

/// Applies a changeset to the tracked tables with the store's own cached statements.
///
/// Why not `sqlite3changeset_apply`: it runs `PRAGMA defer_foreign_keys`, and SQLite expires
/// every prepared statement after a flag pragma, so each undo recompiled every statement of
/// the connection; it also compiles its own statements on every call. Measured on a 10,000-clip
/// project, that was most of an undo's cost.
///
/// The conflict rule is the same as applying with `SQLITE_CHANGESET_ABORT`: every change must
/// find its row exactly as recorded (a DELETE or UPDATE matches the old values it carries, an
/// INSERT finds no row), otherwise history and data have diverged and the whole transaction is
/// abandoned with ``StoreError/historyDiverged``.
enum ChangesetApplier {
  static func apply(_ changeset: Changeset, _ db: Database) throws {
    var changes: [RowChange] = []
    try SessionCalls.forEachChange(in: changeset) { changes.append($0) }
    // Foreign keys are checked per statement: parents are written before the rows that point at
    // them, and removed after.
    let order: [(String, RowChange.Kind?)] = [
      (Schema.projectTable, nil),
      (Schema.sourceTable, .insert), (Schema.sourceTable, .update),
      (Schema.trackTable, .insert), (Schema.trackTable, .update),
      (Schema.clipTable, .delete), (Schema.clipTable, .update), (Schema.clipTable, .insert),
      (Schema.trackTable, .delete), (Schema.sourceTable, .delete),
    ]
    for (table, kind) in order {
      for change in changes where change.table == table && (kind == nil || change.kind == kind) {
        try apply(change, db)
      }
    }
  }

  private static func apply(_ change: RowChange, _ db: Database) throws {
    guard let columns = Schema.columns[change.table], columns.count == change.old.count else {
      throw StoreError.corrupt(detail: "a recorded change names unknown table \(change.table)")
    }
    let table = change.table
    switch change.kind {
    case .insert:
      let values = change.new.map { $0 ?? .null }
      let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
      do {
        try db.cachedStatement(
          sql: "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
        ).execute(arguments: StatementArguments(values.map(\.databaseValue)))
      } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
        throw StoreError.historyDiverged
      }
    case .delete:
      let (condition, arguments) = match(columns, change.old)
      try db.cachedStatement(sql: "DELETE FROM \(table) WHERE \(condition)")
        .execute(arguments: StatementArguments(arguments))
      guard db.changesCount == 1 else { throw StoreError.historyDiverged }
    case .update:
      var assignments: [String] = []
      var values: [DatabaseValue] = []
      for (index, value) in change.new.enumerated() where index > 0 {
        guard let value else { continue }
        assignments.append("\(columns[index]) = ?")
        values.append(value.databaseValue)
      }
      guard !assignments.isEmpty else { return }
      let (condition, arguments) = match(columns, change.old)
      try db.cachedStatement(
        sql: "UPDATE \(table) SET \(assignments.joined(separator: ", ")) WHERE \(condition)"
      ).execute(arguments: StatementArguments(values + arguments))
      guard db.changesCount == 1 else { throw StoreError.historyDiverged }
    }
  }

  /// `col IS ? AND …` for every column the change recorded an old value for.
  private static func match(_ columns: [String], _ old: [ChangeValue?]) -> (String, [DatabaseValue])
  {
    var terms: [String] = []
    var arguments: [DatabaseValue] = []
    for (index, value) in old.enumerated() {
      guard let value else { continue }
      terms.append("\(columns[index]) IS ?")
      arguments.append(value.databaseValue)
    }
    return (terms.joined(separator: " AND "), arguments)
  }
}

extension ChangeValue {
  var databaseValue: DatabaseValue {
    switch self {
    case .null: return .null
    case .integer(let value): return value.databaseValue
    case .real(let value): return value.databaseValue
    case .text(let value): return value.databaseValue
    case .blob(let bytes): return Data(bytes).databaseValue
    }
  }
}
