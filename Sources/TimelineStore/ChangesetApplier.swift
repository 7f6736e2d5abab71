import Foundation
internal import GRDB

/// Applies recorded changes to the tracked tables with the store's own statements.
///
/// Why not `sqlite3changeset_apply`: it runs `PRAGMA defer_foreign_keys`, and SQLite expires
/// every prepared statement after a flag pragma, so each undo recompiled every statement of
/// the connection; it also compiles its own statements on every call. Measured on a 10,000-clip
/// project, that was most of an undo's cost. Here each shape of change (table, kind, columns)
/// gets one cached statement, bound and stepped directly: a few µs per row.
///
/// The conflict rule is the same as applying with `SQLITE_CHANGESET_ABORT`: every change must
/// find its row exactly as recorded (a DELETE or UPDATE matches the old values it carries, an
/// INSERT finds no row), otherwise history and data have diverged and the whole transaction is
/// abandoned with ``StoreError/historyDiverged``.
enum ChangesetApplier {
  static func apply(_ changes: NetChanges, _ db: Database) throws {
    if changes.isEmpty { return }
    // Foreign keys are checked per statement: parents are written before the rows that point at
    // them, and removed after.
    let order: [(String, NetChanges.Kind?)] = [
      (Schema.projectTable, nil),
      (Schema.sourceTable, .insert), (Schema.sourceTable, .update),
      (Schema.trackTable, .insert), (Schema.trackTable, .update),
      (Schema.clipTable, .delete), (Schema.clipTable, .update), (Schema.clipTable, .insert),
      (Schema.trackTable, .delete), (Schema.sourceTable, .delete),
    ]
    var byStep = Array(repeating: [(NetChanges.Key, NetChanges.Row)](), count: order.count)
    for (key, row) in changes.rows {
      let table = Schema.trackedTables[key.table]
      guard
        let step = order.firstIndex(where: { $0.0 == table && ($0.1 == nil || $0.1 == row.kind) })
      else { continue }
      byStep[step].append((key, row))
    }
    let connection = try connection(db)
    var statements: [Shape: Statement] = [:]
    for rows in byStep {
      for (key, row) in rows {
        let shape = Shape(key.table, row)
        let statement: Statement
        if let cached = statements[shape] {
          statement = cached
        } else {
          statement = try db.cachedStatement(sql: shape.sql)
          statements[shape] = statement
        }
        let changed = try RawStatement.execute(
          statement.sqliteStatement, on: connection, binding: shape.arguments(row))
        guard changed == 1 else { throw StoreError.historyDiverged }
      }
    }
  }

  /// What a change's statement depends on: its table, kind, and which columns it carries.
  private struct Shape: Hashable {
    let table: Int
    let kind: NetChanges.Kind
    let oldMask: UInt64
    let newMask: UInt64

    init(_ table: Int, _ row: NetChanges.Row) {
      func mask(_ values: [ChangeValue?]) -> UInt64 {
        var mask: UInt64 = 0
        for (index, value) in values.enumerated() where value != nil { mask |= 1 << index }
        return mask
      }
      self.table = table
      kind = row.kind
      oldMask = row.kind == .insert ? 0 : mask(row.old)
      newMask = row.kind == .delete ? 0 : mask(row.new) & ~1
    }

    private var columns: [String] { Schema.trackedColumns[table] }

    private func names(_ mask: UInt64) -> [String] {
      columns.indices.filter { mask & (1 << $0) != 0 }.map { columns[$0] }
    }

    var sql: String {
      let table = Schema.trackedTables[table]
      // `IS` so that a recorded NULL matches a NULL.
      let match = names(oldMask).map { "\($0) IS ?" }.joined(separator: " AND ")
      switch kind {
      case .insert:
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return
          "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
      case .delete:
        return "DELETE FROM \(table) WHERE \(match)"
      case .update:
        let assignments = names(newMask).map { "\($0) = ?" }.joined(separator: ", ")
        return "UPDATE \(table) SET \(assignments) WHERE \(match)"
      }
    }

    /// The values to bind, in the order of ``sql``'s placeholders.
    func arguments(_ row: NetChanges.Row) -> [ChangeValue] {
      switch kind {
      case .insert: return row.new.map { $0 ?? .null }
      case .delete: return row.old.compactMap { $0 }
      case .update: return row.new.dropFirst().compactMap { $0 } + row.old.compactMap { $0 }
      }
    }
  }
}
