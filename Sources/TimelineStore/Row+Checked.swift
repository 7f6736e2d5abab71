internal import GRDB

extension Row {
  /// The value of `column` in a row read from `table`, or a ``StoreError/corrupt(detail:)``
  /// naming both when the file holds something Tape never writes there (NULL in a NOT NULL
  /// column, text where a number belongs).
  ///
  /// Rule: every value read from the file goes through this (or an optional), never GRDB's
  /// subscript. Why: the subscript traps on a value it cannot convert, so one flipped byte
  /// in a version's label crashed `tape history` with SIGILL and a stack trace.
  func value<Value: DatabaseValueConvertible>(
    _ column: String, of table: String
  ) throws(StoreError) -> Value {
    do {
      return try decode(Value.self, forColumn: column)
    } catch {
      let stored = (try? decode(DatabaseValue.self, forColumn: column)) ?? .null
      throw .corrupt(
        detail:
          "table \(table): column \(column) holds \(stored.isNull ? "NULL" : "a value of the wrong type")"
      )
    }
  }
}
