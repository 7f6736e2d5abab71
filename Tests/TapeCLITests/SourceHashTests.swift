import Foundation
import Testing
import Timeline
import TimelineStore

/// The fingerprint projects made before SHA-256 carry (`xh64:`), computed as Tape computed it,
/// and a copy of `data` with two adjacent words changed that keeps it: the forgery that beat
/// the "changed source" check.
enum LegacyFingerprint {
  static func mix(_ value: UInt64) -> UInt64 {
    var z = value &* 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 32)) &* 0xD6E8_FEB8_6659_FD93
    return z ^ (z >> 32)
  }

  static func word(_ data: Data, _ offset: Int) -> UInt64 {
    data[offset..<offset + 8].enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * $1.offset) }
  }

  /// Of a file under 1 MiB (read in one buffer).
  static func of(_ data: Data) -> String {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    var index = 0
    while index + 8 <= data.count {
      hash = mix(hash ^ word(data, index))
      index += 8
    }
    while index < data.count {
      hash = mix(hash ^ UInt64(data[index]))
      index += 1
    }
    let final = String(mix(hash ^ UInt64(data.count)), radix: 16)
    return "xh64:\(String(repeating: "0", count: 16 - final.count))\(final):\(data.count)"
  }

  /// `data` with the word at `offset` flipped and the next one adjusted so that the hash state
  /// after both is what it was.
  static func forged(_ data: Data, at offset: Int) -> Data {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for index in stride(from: 0, to: offset, by: 8) { hash = mix(hash ^ word(data, index)) }
    let first = word(data, offset)
    let changed = first ^ 0x0101_0101_0101_0101
    let before = mix(hash ^ first)
    let after = mix(hash ^ changed)
    let compensated = before ^ word(data, offset + 8) ^ after
    var forged = data
    for byte in 0..<8 {
      forged[offset + byte] = UInt8(truncatingIfNeeded: changed >> (8 * byte))
      forged[offset + 8 + byte] = UInt8(truncatingIfNeeded: compensated >> (8 * byte))
    }
    return forged
  }
}

@Suite("Sources are identified by SHA-256")
struct SourceHashTests {
  /// A same-size file with two words adjusted kept the old 64-bit fingerprint: a render used
  /// the old cached audio and `relink` took the forged file without `--force`. With SHA-256
  /// both refuse it.
  /// song.tape playing a copy of the speech recording (speech.wav, its bytes returned) on t1.
  static func project(in ws: Workspace) throws -> (song: String, audio: String, original: Data) {
    let song = ws.path("song.tape")
    let audio = ws.path("speech.wav")
    let original = try Data(
      contentsOf: URL(fileURLWithPath: TestAudio.path("speech-mono-48k-16.wav")))
    try original.write(to: URL(fileURLWithPath: audio))
    try ws.tape("new", song)
    try ws.tape("import", song, audio)
    try ws.tape("track", "add", song, "A")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0")
    return (song, audio, original)
  }

  @Test func aForgedSourceIsRefused() throws {
    let ws = try Workspace()
    let (song, audio, original) = try Self.project(in: ws)
    let forged = LegacyFingerprint.forged(original, at: 4_096)
    #expect(forged != original && forged.count == original.count)
    #expect(LegacyFingerprint.of(forged) == LegacyFingerprint.of(original))
    try forged.write(to: URL(fileURLWithPath: audio))
    let render = try TapeBinary.run(
      ["render", song, "-o", ws.path("mix.wav")], environment: ["NO_COLOR": "1"])
    #expect(render.status == 65)
    #expect(render.stderr.contains("tape relink"), "\(render.stderr)")
    let copy = ws.path("copy.wav")
    try forged.write(to: URL(fileURLWithPath: copy))
    let relink = try TapeBinary.run(["relink", song, "s1", copy], environment: ["NO_COLOR": "1"])
    #expect(relink.status == 65)
    #expect(relink.stderr.contains("is not the same audio as source s1"), "\(relink.stderr)")
  }

  /// A project made before carries `xh64:` identities: it opens and renders as ever, a forged
  /// file is still caught by the old check where it can be, and the first edit records the
  /// SHA-256 of every source whose file is unchanged, in the edit's own version.
  @Test func olderProjectsAreRehashedByTheirFirstEdit() throws {
    let ws = try Workspace()
    let (song, audio, original) = try Self.project(in: ws)
    // As an older Tape recorded it.
    do {
      let store = try TimelineStore.open(at: song)
      var source = try #require(store.snapshot.project.sources.first)
      #expect(source.contentHash.hasPrefix("sha256:"))
      source.contentHash = LegacyFingerprint.of(original)
      try store.commit([.setSource(source)], label: "As before")
      try store.close()
    }
    try ws.tape("render", song, "-o", ws.path("before.wav"))
    let versions = try ws.head(of: song)
    try ws.tape("track", "add", song, "B")
    #expect(try ws.head(of: song) == versions + 1)
    let store = try TimelineStore.open(at: song, access: .read)
    let source = try #require(store.snapshot.project.sources.first)
    let sha = try TapeBinary.run(URL(fileURLWithPath: "/usr/bin/sha256sum"), [audio]).stdout
    #expect(source.contentHash == "sha256:\(sha.prefix(64)):\(original.count)")
    try store.close()
    // Undoing the edit gives the old identity back with it: the next edit records it again.
    try ws.tape("undo", song)
    try ws.tape("render", song, "-o", ws.path("after.wav"))
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: ws.path("after.wav")))
        == Data(contentsOf: URL(fileURLWithPath: ws.path("before.wav"))))
  }
}
