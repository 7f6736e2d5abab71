/// Keys typed on a terminal, read in pieces: a read returns what has arrived (at most a
/// buffer's worth), so a control sequence (ESC [ C, an arrow) can be split between two
/// reads when many keys come at once (22 arrows are 66 bytes). What a read ends with that
/// could be the start of a sequence is kept for the next read instead of being dropped.
///
/// Pure: it reads nothing itself; the caller hands it each read's bytes.
///
/// ```swift
/// var input = KeyInput()
/// input.take([0x1B, 0x5B])  // [] (ESC [ held)
/// input.take([0x43])  // [0x1B, 0x5B, 0x43]: → whole
/// ```
public struct KeyInput: Sendable {
  private var held: [UInt8] = []

  public init() {}

  /// The bytes of `read` (after those held from before) up to the last whole key.
  public mutating func take(_ read: some Collection<UInt8>) -> [UInt8] {
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
  public static func incompleteTail(_ bytes: [UInt8]) -> Int {
    guard let escape = bytes.lastIndex(of: 0x1B) else { return bytes.count }
    let rest = bytes[(escape + 1)...]
    if rest.isEmpty { return escape }
    guard rest.first == UInt8(ascii: "[") || rest.first == UInt8(ascii: "O") else {
      return bytes.count
    }
    return rest.dropFirst().allSatisfy { (0x20...0x3F).contains($0) } ? escape : bytes.count
  }
}
