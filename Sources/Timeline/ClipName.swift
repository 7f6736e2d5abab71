import Synchronization

/// The table of clip names: each name a clip has had in this process, numbered from 1, so
/// that a ``Clip`` stores a number instead of a string.
///
/// Why: a clip with a `String` is not plain data, so every copy of a clip (a snapshot's chunk
/// of clips is copied whenever one of its clips changes, and a checkout of thousands of
/// clips copies most chunks) went through a call per clip and a reference count; with a number,
/// copying a chunk is copying its bytes. Names with the same bytes get the same number, so clips
/// compare and hash by their names' bytes, as the store compares rows. The table only grows (a
/// name stays numbered while the process runs: about 100 bytes a distinct name): nothing else
/// would know when a number is no longer held.
enum ClipName {
  private static let table = Mutex<(names: [String], numbers: [[UInt8]: UInt32])>(([], [:]))

  /// The number of `name` (0 for nil), numbering it if it is new. Names are told apart by
  /// their bytes, as the file stores them (two spellings of the same text, which `String`
  /// calls equal, keep their own numbers: a clip reads back the bytes it was given).
  static func number(of name: String?) -> UInt32 {
    guard let name else { return 0 }
    let bytes = Array(name.utf8)
    return table.withLock { table in
      if let number = table.numbers[bytes] { return number }
      table.names.append(name)
      let number = UInt32(table.names.count)
      table.numbers[bytes] = number
      return number
    }
  }

  /// The name numbered `number` (nil for 0).
  static func text(of number: UInt32) -> String? {
    guard number > 0 else { return nil }
    return table.withLock { $0.names[Int(number) - 1] }
  }
}
