import Glibc

/// What has been typed on standard input, waiting up to `milliseconds` for it: at most 64
/// bytes; nil when nothing came (or the input ended). `tape play` and `tape record` read their
/// keys through it.
func typedBytes(waiting milliseconds: Int32) -> ArraySlice<UInt8>? {
  var request = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
  guard poll(&request, 1, milliseconds) > 0 else { return nil }
  var buffer = [UInt8](repeating: 0, count: 64)
  let got = read(STDIN_FILENO, &buffer, buffer.count)
  guard got > 0 else { return nil }
  return buffer[..<got]
}

/// Keys typed on a terminal, read in pieces: a read returns what has arrived (at most a
/// buffer's worth), so a control sequence (ESC [ C, an arrow) can be split between two
/// reads when many keys come at once (22 arrows are 66 bytes). What a read ends with that
/// could be the start of a sequence is kept for the next read instead of being dropped.
struct KeyInput {
  private var held: [UInt8] = []

  /// The bytes of `read` (after those held from before) up to the last whole key.
  mutating func take(_ read: some Collection<UInt8>) -> [UInt8] {
    var bytes = held + read
    held = []
    let cut = Self.incompleteTail(bytes)
    // A sequence never longer than a few bytes: past 16, what is held is not one.
    held = bytes.count - cut <= 16 ? Array(bytes[cut...]) : []
    bytes.removeSubrange(cut...)
    return bytes
  }

  /// Where an unfinished control sequence at the end of `bytes` starts (`bytes.count` if
  /// none): ESC alone, or ESC [ / ESC O and parameter bytes (0x20–0x3F) with no final byte.
  static func incompleteTail(_ bytes: [UInt8]) -> Int {
    guard let escape = bytes.lastIndex(of: 0x1B) else { return bytes.count }
    let rest = bytes[(escape + 1)...]
    if rest.isEmpty { return escape }
    guard rest.first == UInt8(ascii: "[") || rest.first == UInt8(ascii: "O") else {
      return bytes.count
    }
    return rest.dropFirst().allSatisfy { (0x20...0x3F).contains($0) } ? escape : bytes.count
  }
}
