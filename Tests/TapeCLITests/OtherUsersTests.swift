import Foundation
import Testing

/// Runs `tape` as another user (nobody unless told) from a copy of the binary that user may
/// run, with its own home and cache folder under `space`.
struct OtherUser {
  let uid: UInt32
  let gid: UInt32
  let home: String
  let binary: String

  init(
    _ space: Workspace, uid: UInt32 = 65_534, gid: UInt32? = nil, name: String = "nobody"
  )
    throws
  {
    self.uid = uid
    self.gid = gid ?? uid
    home = space.path(name)
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    chown(home, uid, self.gid)
    chmod(home, 0o755)
    chmod(space.url.path, 0o755)
    binary = space.path("bin/tape")
    if !FileManager.default.fileExists(atPath: binary) {
      try FileManager.default.createDirectory(
        atPath: space.path("bin"), withIntermediateDirectories: true)
      chmod(space.path("bin"), 0o755)
      try FileManager.default.copyItem(atPath: TapeBinary.url.path, toPath: binary)
    }
    chmod(binary, 0o755)
  }

  func tape(_ arguments: [String], umask: String? = nil) throws -> TapeBinary.Result {
    try run(binary, arguments, umask: umask)
  }

  /// Any program, as this user (with `umask` set first when given).
  func run(
    _ program: String, _ arguments: [String], umask: String? = nil
  ) throws
    -> TapeBinary.Result
  {
    let command =
      umask.map { ["/bin/sh", "-c", "umask \($0); exec \"$0\" \"$@\"", program] } ?? [program]
    return try TapeBinary.run(
      URL(fileURLWithPath: "/usr/bin/setpriv"),
      ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"] + command + arguments,
      environment: ["NO_COLOR": "1", "HOME": home, "XDG_CACHE_HOME": home + "/cache"],
      directory: URL(fileURLWithPath: home))
  }
}

/// A user made for one test (`useradd --system`) and removed with it: two real users, so a
/// test can play the victim and the attacker. Root only.
///
/// The name is one no user has (a run killed before its `userdel`, on a machine that runs
/// the suite again and again, leaves its users behind: CI once failed on "user 'tapea11341'
/// already exists"). Each user's comment names the test process that made it, so a later run
/// removes the users of runs that have ended, and nobody else's.
final class ThrowawayUser {
  let name: String
  let user: OtherUser
  static let marker = "tape test throwaway, pid "

  init(_ space: Workspace, _ role: String) throws {
    Self.removeLeftovers()
    var made: (name: String, result: TapeBinary.Result)?
    for _ in 0..<8 {
      let name = "tape\(role)\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
      let result = try TapeBinary.run(
        URL(fileURLWithPath: "/usr/sbin/useradd"),
        [
          "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group",
          "--comment", Self.marker + String(getpid()), name,
        ])
      made = (name, result)
      // 9: a user or group has that name already; try another.
      if result.status != 9 { break }
    }
    guard let made, made.result.status == 0 else {
      throw TmuxError(
        message: "useradd \(made?.name ?? "tape\(role)…"): \(made?.result.stderr ?? "no free name")"
      )
    }
    name = made.name
    let uid = try TapeBinary.run(URL(fileURLWithPath: "/usr/bin/id"), ["-u", name]).stdout
    let gid = try TapeBinary.run(URL(fileURLWithPath: "/usr/bin/id"), ["-g", name]).stdout
    guard let uid = UInt32(uid.trimmingCharacters(in: .whitespacesAndNewlines)),
      let gid = UInt32(gid.trimmingCharacters(in: .whitespacesAndNewlines))
    else { throw TmuxError(message: "no id for \(name)") }
    user = try OtherUser(space, uid: uid, gid: gid, name: name)
  }

  deinit {
    Self.remove(name)
  }

  private static func remove(_ name: String) {
    let userdel = URL(fileURLWithPath: "/usr/sbin/userdel")
    // A process of the user still ending makes a plain userdel refuse; the user must go.
    if (try? TapeBinary.run(userdel, [name]).status) != 0 {
      _ = try? TapeBinary.run(userdel, ["--force", name])
    }
  }

  /// Removes the throwaway users of test processes that have ended.
  private static func removeLeftovers() {
    guard let passwd = try? String(contentsOfFile: "/etc/passwd", encoding: .utf8) else { return }
    for line in passwd.split(separator: "\n") {
      let fields = line.split(separator: ":", omittingEmptySubsequences: false)
      guard fields.count > 4, fields[0].hasPrefix("tape"), fields[4].hasPrefix(marker),
        let pid = pid_t(fields[4].dropFirst(marker.count))
      else { continue }
      if kill(pid, 0) != 0 && errno == ESRCH { remove(String(fields[0])) }
    }
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
    let space = try Workspace(reachableByOthers: true)
    // Its source beside it, readable by nobody too (the checkout's may not be).
    let song = space.path("song.tape")
    try space.tape("new", song)
    try space.tape("import", song, try space.copyTestAudio("speech-mono-48k-16.wav"))
    try space.tape("track", "add", song, "Voice")
    try space.tape("clip", "add", song, "t1", "s1", "--at", "1s", "--length", "2s")
    let nobody = try OtherUser(space)
    let listing = try space.tape("ls", song, "--json").stdout
    try space.tape("render", song, "-o", space.path("owner.wav"))
    try walHeader().write(to: URL(fileURLWithPath: song + "-wal"))
    try Data(count: 32_768).write(to: URL(fileURLWithPath: song + "-shm"))
    // Readable by others whatever the umask (077 makes them the owner's alone).
    for name in [song, song + "-wal", song + "-shm"] { chmod(name, 0o644) }
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

  /// A symlink planted in a shared sticky folder by another user: `render -o /tmp/mix.wav`
  /// followed it and replaced its target (the victim's file). Tape follows a link there only
  /// when its owner is the user or the folder's owner, as `fs.protected_symlinks` does (this
  /// machine may not set it), and refuses in one line otherwise; the victim's own link works.
  @Test(.enabled(if: isRoot, "needs root: two throwaway users"))
  func aLinkPlantedInASharedFolderIsNotFollowed() throws {
    let space = try Workspace(reachableByOthers: true)
    let victim = try ThrowawayUser(space, "v")
    let attacker = try ThrowawayUser(space, "a")
    let shared = space.path("shared")
    try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
    chmod(shared, 0o1777)
    let home = victim.user.home
    let song = home + "/song.tape"
    #expect(try victim.user.tape(["new", song]).status == 0)
    #expect(
      try victim.user.tape(["import", song, try space.copyTestAudio("speech-mono-48k-16.wav")])
        .status == 0)
    #expect(try victim.user.tape(["track", "add", song, "A"]).status == 0)
    #expect(try victim.user.tape(["clip", "add", song, "t1", "s1", "--at", "0"]).status == 0)
    let precious = home + "/precious.txt"
    #expect(try victim.user.run("/bin/sh", ["-c", "echo mine > \(precious)"]).status == 0)
    let before = try Data(contentsOf: URL(fileURLWithPath: precious))
    #expect(try attacker.user.run("/bin/ln", ["-s", precious, shared + "/mix.wav"]).status == 0)

    let render = try victim.user.tape(["render", song, "-o", shared + "/mix.wav"])
    #expect(render.status == 77)
    #expect(
      render.stderr
        == "error: \(shared)/mix.wav leads through \(shared)/mix.wav, a symlink that \(attacker.name) (uid \(attacker.user.uid)) made in the shared folder \(shared); Tape does not follow another user's link there (nor does the kernel's fs.protected_symlinks), so remove it or choose another name\n"
    )
    #expect(try Data(contentsOf: URL(fileURLWithPath: precious)) == before)
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: shared + "/mix.wav") == precious)

    // The victim's own link in the same folder is followed as ever.
    #expect(
      try victim.user.run("/bin/ln", ["-s", home + "/out.wav", shared + "/own.wav"]).status == 0)
    let own = try victim.user.tape(["render", song, "-o", shared + "/own.wav"])
    #expect(own.status == 0, "\(own.stderr)")
    #expect(FileManager.default.fileExists(atPath: home + "/out.wav"))
  }

  /// The decoded-audio cache was trusted whoever wrote it (its checksums stop damage, not a
  /// forger): a cache folder another user made in advance in a shared folder, a cache others
  /// may write (setgid team folder, 2775), an entry another user wrote, and a cache made under
  /// umask 000. Now only folders and entries owned by the user (or the project's owner) and
  /// writable by nobody else are used; otherwise the user's own cache, said once.
  @Test(.enabled(if: isRoot, "needs root: two throwaway users"))
  func aCacheAnotherUserCanWriteIsNotTrusted() throws {
    let space = try Workspace(reachableByOthers: true)
    let victim = try ThrowawayUser(space, "v")
    let attacker = try ThrowawayUser(space, "a")
    let audio = space.path("bin/speech.wav")
    try FileManager.default.copyItem(
      atPath: TestAudio.path("speech-mono-48k-16.wav"), toPath: audio)
    chmod(audio, 0o644)
    func project(_ song: String, umask: String? = nil) throws -> [TapeBinary.Result] {
      try [
        ["new", song], ["import", song, audio], ["track", "add", song, "A"],
        ["clip", "add", song, "t1", "s1", "--at", "0"],
      ].map { try victim.user.tape($0, umask: umask) }
    }
    let userCache = victim.user.home + "/cache/tape"
    let warning = "is not only yours (another user made it or may write to it), so it is not used"

    // 1. Made in advance by another user in a shared sticky folder.
    let shared = space.path("shared")
    try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
    chmod(shared, 0o1777)
    #expect(
      try attacker.user.run("/bin/mkdir", ["-m", "777", shared + "/song.tape-cache"]).status == 0)
    let made = try project(shared + "/song.tape")
    #expect(made.allSatisfy { $0.status == 0 }, "\(made.map(\.stderr))")
    #expect(made[1].stderr.contains(warning))
    #expect(made[1].stderr.split(separator: "\n").count == 1)
    let render = try victim.user.tape([
      "render", shared + "/song.tape", "-o", victim.user.home + "/mix.wav",
    ])
    #expect(render.status == 0, "\(render.stderr)")
    #expect(listing(shared + "/song.tape-cache") == [])
    #expect(listing(userCache).contains { $0.hasSuffix(".f32") })

    // 2. A team folder others may write (setgid 2775, the attacker's group): the cache there
    // is group-writable, so it is not used either.
    let team = space.path("team")
    try FileManager.default.createDirectory(atPath: team, withIntermediateDirectories: true)
    chown(team, victim.user.uid, attacker.user.gid)
    chmod(team, 0o2775)
    try FileManager.default.removeItem(atPath: userCache)
    #expect(try project(team + "/song.tape").allSatisfy { $0.status == 0 })
    chmod(team + "/song.tape-cache", 0o2775)
    let entries = listing(team + "/song.tape-cache").filter { $0.hasSuffix(".f32") }
    #expect(entries.count == 1)
    let debug = try victim.user.run(
      "/usr/bin/env",
      [
        "TAPE_LOG=debug", victim.user.binary, "render", team + "/song.tape", "-o",
        victim.user.home + "/mix.wav",
      ])
    #expect(debug.status == 0)
    #expect(debug.stderr.contains(warning))
    #expect(!debug.stderr.contains("found in the cache (\(team)"))

    // 3. An entry another user wrote, in a folder that is the victim's alone: decoded again.
    chmod(team + "/song.tape-cache", 0o755)
    let entry = team + "/song.tape-cache/" + entries[0]
    chown(entry, attacker.user.uid, attacker.user.gid)
    let again = try victim.user.run(
      "/usr/bin/env",
      [
        "TAPE_LOG=debug", victim.user.binary, "render", team + "/song.tape", "-o",
        victim.user.home + "/mix.wav",
      ])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(!again.stderr.contains("found in the cache"))
    #expect(again.stderr.contains("decoded into \(entry)"))

    // 4. umask 000: the cache is made with the project's permissions, never writable by others.
    let open = victim.user.home + "/open"
    #expect(try victim.user.run("/bin/mkdir", [open]).status == 0)
    #expect(try project(open + "/song.tape", umask: "000").allSatisfy { $0.status == 0 })
    for name in [""] + listing(open + "/song.tape-cache") {
      var info = stat()
      #expect(stat(open + "/song.tape-cache/" + name, &info) == 0)
      #expect(info.st_mode & 0o022 == 0, "\(name): \(String(info.st_mode, radix: 8))")
    }
  }
}
