import Foundation
import Testing

/// Runs `tape` as another user (nobody unless told) from a copy of the binary that user may
/// run, with its own home and cache folder under `space`.
struct OtherUser {
  let uid: UInt32
  let home: String
  let binary: String

  init(_ space: Workspace, uid: UInt32 = 65_534, name: String = "nobody") throws {
    self.uid = uid
    home = space.path(name)
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    chown(home, uid, uid)
    chmod(space.url.path, 0o755)
    binary = home + "/tape"
    if !FileManager.default.fileExists(atPath: binary) {
      try FileManager.default.copyItem(atPath: TapeBinary.url.path, toPath: binary)
    }
    chmod(binary, 0o755)
  }

  func tape(_ arguments: [String]) throws -> TapeBinary.Result {
    try TapeBinary.run(
      URL(fileURLWithPath: "/usr/bin/setpriv"),
      ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", binary] + arguments,
      environment: ["NO_COLOR": "1", "HOME": home, "XDG_CACHE_HOME": home + "/cache"])
  }
}

/// The 32-byte header SQLite writes first into a new `-wal` (big-endian magic, so the
/// checksums are of big-endian words), with the salts of a log that no index knows.
func walHeader(pageSize: UInt32 = 4_096) -> Data {
  var words: [UInt32] = [0x377F_0683, 3_007_000, pageSize, 0, 0x1234_5678, 0x9ABC_DEF0]
  var (s0, s1): (UInt32, UInt32) = (0, 0)
  for index in stride(from: 0, to: words.count, by: 2) {
    s0 = s0 &+ words[index] &+ s1
    s1 = s1 &+ words[index + 1] &+ s0
  }
  words += [s0, s1]
  return Data(
    words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } })
}

@Suite("Another user's reads")
struct OtherUsersTests {
  /// A writer killed right after creating its log leaves a 32-byte `-wal` (no frame) and an
  /// index only its owner may rebuild: every other user's `ls` and `render` failed with
  /// "internal error: SQLite error 15: locking protocol" (exit 70) until the owner wrote
  /// again. The file holds everything: a reader reads it, and leaves the folder as it was.
  @Test(.enabled(if: isRoot, "needs root: a project owned by root, read as nobody"))
  func aLogWithNoFrameIsReadPast() throws {
    let space = try Workspace()
    let song = try ErrorPathTests.project(space)
    let nobody = try OtherUser(space)
    let listing = try space.tape("ls", song, "--json").stdout
    try space.tape("render", song, "-o", space.path("owner.wav"))
    try walHeader().write(to: URL(fileURLWithPath: song + "-wal"))
    try Data(count: 32_768).write(to: URL(fileURLWithPath: song + "-shm"))
    let before =
      try space.fingerprint("song.tape") + [Data(contentsOf: URL(fileURLWithPath: song + "-shm"))]
    let ls = try nobody.tape(["ls", song, "--json"])
    #expect(ls.status == 0, "\(ls.stderr)")
    #expect(ls.stdout == listing)
    let render = try nobody.tape(["render", song, "-o", nobody.home + "/mix.wav"])
    #expect(render.status == 0, "\(render.stderr)")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: nobody.home + "/mix.wav"))
        == Data(contentsOf: URL(fileURLWithPath: space.path("owner.wav"))))
    let history = try nobody.tape(["history", song])
    #expect(history.status == 0, "\(history.stderr)")
    #expect(
      try space.fingerprint("song.tape") + [Data(contentsOf: URL(fileURLWithPath: song + "-shm"))]
        == before)
    // The owner's next edit rebuilds the index and goes on as ever.
    try space.tape("track", "add", song, "After")
    #expect(try nobody.tape(["ls", song]).stdout.contains("After"))
  }
}
