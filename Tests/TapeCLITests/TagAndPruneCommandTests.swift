import Foundation
import Testing

/// `tape tag`, version names wherever a version is taken, `tape history prune` and `tape cache`,
/// run as a user runs them.
@Suite("Tags, prune and cache commands")
struct TagAndPruneCommandTests {
  /// A project with a branch: v1 new, v2–v4 tracks and a gain, undo to v3, v5 a new branch.
  static func branchedProject(_ ws: Workspace) throws -> String {
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("track", "add", song, "One")
    try ws.tape("track", "add", song, "Two")
    try ws.tape("track", "set", song, "t1", "--gain", "-3dB")
    try ws.tape("undo", song)
    try ws.tape("track", "set", song, "t2", "--pan", "0.5")
    return song
  }

  /// Every version's `ls --json --version V`, by version.
  static func everyVersion(_ ws: Workspace, _ song: String) throws -> [Int: String] {
    let history = try #require(
      try parseJSON(ws.tape("history", song, "--json").stdout) as? [String: Any])
    let versions = try #require(history["versions"] as? [[String: Any]])
    var listed: [Int: String] = [:]
    for entry in versions {
      let version = try #require(entry["version"] as? Int)
      listed[version] = try ws.tape("ls", song, "--json", "--version", "\(version)").stdout
    }
    return listed
  }

  /// The history without the tags: version, parent, label and date of each.
  static func historyWithoutTags(_ ws: Workspace, _ song: String) throws -> [String] {
    let history = try #require(
      try parseJSON(ws.tape("history", song, "--json").stdout) as? [String: Any])
    let versions = try #require(history["versions"] as? [[String: Any]])
    return versions.map { entry in
      "\(entry["version"] ?? "") \(entry["parent"] ?? "") \(entry["label"] ?? "") \(entry["date"] ?? "")"
    } + ["head \(history["head"] ?? "")"]
  }

  /// Names and checkouts never change any version's content: every version's `ls --json
  /// --version V` is the same before and after tagging (the head, a number, another tag),
  /// checking out tags, and deleting tags; tagging adds no version and moves no head; every
  /// command that takes a version takes the name.
  @Test func tagsNeverChangeAnyVersion() throws {
    let ws = try Workspace()
    let song = try Self.branchedProject(ws)
    let before = try Self.everyVersion(ws, song)
    let history = try Self.historyWithoutTags(ws, song)
    #expect(before.count == 5)

    #expect(try ws.tape("tag", song, "branch-b").stdout.hasPrefix("tagged branch-b: v5 \""))
    try ws.tape("tag", song, "4", "gain-3")
    try ws.tape("tag", song, "v2", "one-track")
    try ws.tape("tag", song, "gain-3", "same-as-gain")
    #expect(try Self.historyWithoutTags(ws, song) == history, "tagging is not a history edit")
    let list = try #require(
      try parseJSON(ws.tape("tag", song, "--list", "--json").stdout) as? [String: Any])
    let tags = try #require(list["tags"] as? [[String: Any]])
    #expect(
      tags.map { $0["name"] as? String } == ["branch-b", "gain-3", "one-track", "same-as-gain"])
    #expect(tags.map { $0["version"] as? Int } == [5, 4, 2, 4])
    let tree = try ws.tape("history", song).stdout
    #expect(tree.contains("[gain-3] [same-as-gain]") && tree.contains("[branch-b]  ← head"))

    // Every command that takes a version takes the name.
    #expect(try ws.tape("ls", song, "--json", "--version", "gain-3").stdout == before[4])
    #expect(try ws.tape("diff", song, "gain-3", "4").stdout == "v4 and v4 are the same\n")
    #expect(
      try ws.tape("diff", song, "one-track", "branch-b", "--json").stdout
        == ws.tape("diff", song, "2", "5", "--json").stdout)
    #expect(
      try ws.tape("compare", song, "gain-3", "4", "--json").stdout
        == ws.tape("compare", song, "4", "4", "--json").stdout)
    try ws.tape("export", song, "-o", ws.path("tagged.otio"), "--version", "one-track")
    try ws.tape("export", song, "-o", ws.path("numbered.otio"), "--version", "2")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: ws.path("tagged.otio")))
        == Data(contentsOf: URL(fileURLWithPath: ws.path("numbered.otio"))))
    for (name, versions) in [("tagged", ["one-track", "branch-b"]), ("numbered", ["2", "5"])] {
      try ws.tape(["draw", song] + versions + ["-o", ws.path("\(name).svg")])
      try ws.tape("draw", song, "--version", versions[0], "-o", ws.path("\(name)-one.svg"))
    }
    for suffix in [".svg", "-one.svg"] {
      #expect(
        try Data(contentsOf: URL(fileURLWithPath: ws.path("tagged\(suffix)")))
          == Data(contentsOf: URL(fileURLWithPath: ws.path("numbered\(suffix)"))))
    }
    try ws.tape("checkout", song, "gain-3")
    #expect(try ws.head(of: song) == 4)
    try ws.tape("checkout", song, "one-track")
    try ws.tape("checkout", song, "branch-b")
    try ws.tape("tag", song, "--delete", "gain-3")
    try ws.tape("tag", song, "--delete", "one-track")
    #expect(try Self.everyVersion(ws, song) == before, "no version's content changed")
    #expect(try Self.historyWithoutTags(ws, song) == history.dropLast() + ["head 5"])

    // Errors: one line, the fix named, nothing changed.
    let fingerprint = try ws.fingerprint("song.tape")
    for (arguments, status, message) in [
      (
        ["tag", song, "12"], Int32(64),
        "error: '12' cannot name a version: it reads as a version number"
      ),
      (["tag", song, "a b"], 64, "error: 'a b' cannot name a version: a name cannot hold spaces"),
      (["tag", song, "2", "branch-b"], 65, "error: tag 'branch-b' already names version 5"),
      (["tag", song, "9", "later"], 65, "error: no version 9 in this project"),
      (["tag", song, "--delete", "nope"], 65, "error: no tag 'nope' in this project"),
      (["checkout", song, "nope"], 65, "error: no version or tag 'nope' in this project"),
      (["ls", song, "--version", "nope"], 65, "error: no version or tag 'nope'"),
      (["diff", song, "branch-b", "nope"], 65, "error: no version or tag 'nope'"),
      (
        ["render", song, "-o", ws.path("x.wav"), "--version", "nope"], 65,
        "error: no version or tag 'nope'"
      ),
      (["play", song, "--version", "nope"], 65, "error: no version or tag 'nope'"),
      (["compare", song, "nope", "2"], 65, "error: no version or tag 'nope'"),
      (
        ["export", song, "-o", ws.path("x.otio"), "--version", "nope"], 65,
        "error: no version or tag 'nope'"
      ),
      (
        ["draw", song, "--version", "nope", "-o", ws.path("x.svg")], 65,
        "error: no version or tag 'nope'"
      ),
      (["draw", song, "branch-b", "nope", "-o", ws.path("x.svg")], 65, "error: no version or tag"),
      (["tag", song], 64, "error: name the version"),
    ] {
      let result = try TapeBinary.run(arguments, environment: ["NO_COLOR": "1"])
      #expect(result.status == status, "\(arguments): \(result.stderr)")
      #expect(result.stderr.hasPrefix(message), "\(arguments): \(result.stderr)")
      #expect(result.stderr.split(separator: "\n").count == 1)
    }
    #expect(try ws.fingerprint("song.tape") == fingerprint)
  }

  /// `history prune`: a dry run changes nothing and says what the prune then does; the kept
  /// versions list as before; the store's own check passes; refused while another process
  /// holds the write lock; tags on dropped versions refuse it unless --drop-tags.
  @Test func pruneDropsWhatItSaysAndKeepsTheRest() throws {
    let ws = try Workspace()
    let song = try Self.branchedProject(ws)
    for step in 1...20 {
      try ws.tape("track", "set", song, "t1", "--gain", "-\(step)dB")
    }
    let before = try Self.everyVersion(ws, song)
    try ws.tape("tag", song, "3", "early")
    let fingerprint = try ws.fingerprint("song.tape")
    let refused = try TapeBinary.run(
      ["history", "prune", song, "--keep-last", "5"], environment: ["NO_COLOR": "1"])
    #expect(refused.status == 65)
    #expect(
      refused.stderr.hasPrefix(
        "error: the prune would drop versions named by tags 'early'; keep them"))
    let dry = try #require(
      try parseJSON(
        ws.tape("history", "prune", song, "--keep-last", "5", "--drop-tags", "--dry-run", "--json")
          .stdout) as? [String: Any])
    #expect(try ws.fingerprint("song.tape") == fingerprint, "a dry run changes nothing")
    #expect(dry["dryRun"] as? Bool == true)
    #expect(dry["dropped"] as? [[Int]] == [[1, 20]] && dry["versionsDropped"] as? Int == 20)
    #expect(dry["root"] as? Int == 21 && dry["versionsAfter"] as? Int == 5)
    #expect(dry["tagsDropped"] as? [String] == ["early"])

    // Another process holds the write lock: refused, nothing changed.
    let holder = Process()
    holder.executableURL = TapeBinary.testing
    holder.arguments = ["hold-lock", song, "--seconds", "3"]
    let pipe = Pipe()
    holder.standardOutput = pipe
    try holder.run()
    #expect(String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self) == "locked\n")
    let busy = try TapeBinary.run(
      ["history", "prune", song, "--keep-last", "5", "--drop-tags"],
      environment: ["NO_COLOR": "1", "TAPE_BUSY_TIMEOUT": "0.3"])
    holder.waitUntilExit()
    #expect(busy.status == 75)
    #expect(busy.stderr.hasPrefix("error: project is busy"))
    #expect(try Self.everyVersion(ws, song) == before)

    let pruned = try ws.tape("history", "prune", song, "--keep-last", "5", "--drop-tags").stdout
    #expect(
      pruned.hasPrefix(
        "dropped 20 of 25 versions (v1–v20)\ndropped tags early\nthe history starts at v21\n"))
    print("tape history prune: \(pruned)")
    let after = try Self.everyVersion(ws, song)
    #expect(Set(after.keys) == Set(21...25))
    for (version, listing) in after { #expect(listing == before[version], "version \(version)") }
    let verify = try TapeBinary.run(TapeBinary.testing, ["verify", song])
    #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
    try ws.tape("undo", song, "--steps", "4")
    #expect(try ws.head(of: song) == 21)
    try ws.tape("undo", song, status: 65)
    try ws.tape("redo", song, "--steps", "4")
    #expect(try ws.tape("ls", song, "--json").stdout == before[25])
    try ws.tape("history", "prune", song, status: 64)
  }

  /// `tape cache` lists the decoded audio of every source in the history with the versions
  /// that have it; `--clean` removes only what no version uses, and only once it is older
  /// than the grace period.
  @Test func cacheListsAndCleans() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    let tone = try ws.copyTestAudio("tone-mono-44k-24.aiff")
    try ws.tape("import", song, tone)
    try ws.tape("track", "add", song, "One")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "1s")
    try ws.tape("render", song, "-o", ws.path("mix.wav"))
    let listing = try #require(
      try parseJSON(ws.tape("cache", song, "--json").stdout) as? [String: Any])
    let entries = try #require(listing["entries"] as? [[String: Any]])
    let audio = try #require(entries.first { $0["kind"] as? String == "audio" })
    #expect(audio["sources"] as? [String] == ["s1"] && audio["firstVersions"] as? [Int] == [2])
    #expect(audio["usedByHead"] as? Bool == true && audio["unused"] as? Bool == false)
    let audioPath = try #require(audio["path"] as? String)
    // Foundation's attributes, not stat(2): with the server libraries in the module graph,
    // Swift's member-import rule may take `stat`'s fields as CDispatch's (a compile error).
    let size = try FileManager.default.attributesOfItem(atPath: audioPath)[.size] as? Int
    #expect(size != nil && audio["bytes"] as? Int == size)
    #expect(listing["unusedBytes"] as? Int == 0)

    // A leftover entry no version uses (as a relink to other audio leaves): listed as unused,
    // kept while new, removed once old; the used one stays.
    let cache = ws.path("song.tape-cache")
    let stale = cache + "/xh64-0123456789abcdef-48000hz-1ch.f32"
    try Data(repeating: 1, count: 5_000).write(to: URL(fileURLWithPath: stale))
    var text = try ws.tape("cache", song).stdout
    #expect(text.contains("\(stale)\taudio\t5000 bytes\tunused"))
    text = try ws.tape("cache", song, "--clean").stdout
    #expect(text.contains("kept \(stale): in use"))
    #expect(FileManager.default.fileExists(atPath: stale))
    // Old enough to clean (the cache goes by a file's modification time).
    let old: [FileAttributeKey: Any] = [.modificationDate: Date(timeIntervalSince1970: 1e9)]
    try FileManager.default.setAttributes(old, ofItemAtPath: stale)
    let cleaned = try #require(
      try parseJSON(ws.tape("cache", song, "--clean", "--json").stdout) as? [String: Any])
    #expect((cleaned["removed"] as? [[String: Any]])?.map { $0["path"] as? String } == [stale])
    #expect(!FileManager.default.fileExists(atPath: stale))
    #expect(FileManager.default.fileExists(atPath: audioPath))
    // The render still reads its cached audio.
    try ws.tape("render", song, "-o", ws.path("again.wav"))
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: ws.path("again.wav")))
        == Data(contentsOf: URL(fileURLWithPath: ws.path("mix.wav"))))
  }

  /// After a relink to other audio and an undo of it, `tape cache` says which entry serves
  /// which version: the relinked audio (and its file's identity) from the version of the
  /// relink, not the head's; every identity record of a source in the history is in use, and
  /// `--clean` keeps them all (the next render does not hash the source again). Run as the
  /// user ran it: in the project's folder, with relative names (the sources' stored paths).
  @Test func cacheAttributesEachEntryToTheAudioItServes() throws {
    let ws = try Workspace()
    /// `tape ARGUMENTS` in the workspace; its exit status must be 0.
    @discardableResult
    func tape(_ arguments: String...) throws -> TapeBinary.Result {
      let result = try TapeBinary.run(arguments, directory: ws.url)
      #expect(result.status == 0, "tape \(arguments): \(result.stderr)")
      return result
    }
    // a.wav, and b.wav: the same format and length, other audio (one sample changed).
    var bytes = try Data(contentsOf: URL(fileURLWithPath: TestAudio.path("speech-mono-48k-16.wav")))
    try bytes.write(to: URL(fileURLWithPath: ws.path("a.wav")))
    bytes[bytes.count - 2] ^= 0x40
    try bytes.write(to: URL(fileURLWithPath: ws.path("b.wav")))
    try tape("new", "p.tape")
    try tape("import", "p.tape", "a.wav")
    try tape("track", "add", "p.tape", "T")
    try tape("clip", "add", "p.tape", "t1", "s1", "--at", "0")
    try tape("relink", "p.tape", "s1", "b.wav", "--force")
    try tape("render", "p.tape", "-o", "/dev/null", "--format", "wav")
    try tape("undo", "p.tape")
    try tape("render", "p.tape", "-o", "/dev/null", "--format", "wav")

    let listing = try #require(
      try parseJSON(tape("cache", "p.tape", "--json").stdout) as? [String: Any])
    let entries = try #require(listing["entries"] as? [[String: Any]])
    /// An entry's file, by its path as listed (relative to the workspace).
    func file(_ entry: [String: Any]) -> String {
      let path = entry["path"] as? String ?? ""
      return path.hasPrefix("/") ? path : ws.path(path)
    }
    // Whose audio each entry is, from the identity records themselves (a record holds the
    // file's path, then its content hash, which names its entries).
    var keys: [String: String] = [:]
    for entry in entries where entry["kind"] as? String == "identity" {
      let record = try String(contentsOfFile: file(entry), encoding: .utf8)
        .split(separator: "\n").map(String.init)
      try #require(record.count > 2)
      let key = String(record[2].map { $0.isLetter || $0.isNumber ? $0 : "-" })
      keys[key] =
        record[1].hasSuffix("/a.wav") ? "a" : record[1].hasSuffix("/b.wav") ? "b" : record[1]
    }
    let headKey = try #require(keys.first { $0.value == "a" }?.key)
    let relinkedKey = try #require(keys.first { $0.value == "b" }?.key)
    #expect(headKey != relinkedKey)
    /// Each entry as (kind, whose audio, sources, first versions, used by the head, unused).
    let found = entries.map { entry in
      let name = ((entry["path"] as? String ?? "") as NSString).lastPathComponent
      return [
        entry["kind"] as? String ?? "",
        name.hasPrefix(headKey + "-") ? "a" : name.hasPrefix(relinkedKey + "-") ? "b" : name,
        "\(entry["sources"] as? [String] ?? [])", "\(entry["firstVersions"] as? [Int] ?? [])",
        "\(entry["usedByHead"] as? Bool ?? false)", "\(entry["unused"] as? Bool ?? true)",
      ]
    }
    #expect(
      Set(found) == [
        ["audio", "a", "[\"s1\"]", "[2]", "true", "false"],
        ["audio", "b", "[\"s1\"]", "[5]", "false", "false"],
        ["identity", "a", "[\"s1\"]", "[2]", "true", "false"],
        ["identity", "b", "[\"s1\"]", "[5]", "false", "false"],
      ], "\(entries)")
    #expect(found.count == 4)
    #expect(listing["unusedBytes"] as? Int == 0)
    let text = try tape("cache", "p.tape").stdout
    let lines = text.split(separator: "\n").map(String.init)
    #expect(lines.filter { $0.hasSuffix("\ts1 since v2 (head)") }.count == 2, "\(text)")
    #expect(lines.filter { $0.hasSuffix("\ts1 since v5") }.count == 2, "\(text)")

    // Old enough to clean: none of them goes, and the render reads its source as checked.
    let old: [FileAttributeKey: Any] = [.modificationDate: Date(timeIntervalSince1970: 1e9)]
    for entry in entries { try FileManager.default.setAttributes(old, ofItemAtPath: file(entry)) }
    let cleaned = try #require(
      try parseJSON(tape("cache", "p.tape", "--clean", "--json").stdout) as? [String: Any])
    #expect((cleaned["removed"] as? [[String: Any]])?.isEmpty == true, "\(cleaned)")
    for entry in entries { #expect(FileManager.default.fileExists(atPath: file(entry))) }
    let render = try tape("-v", "render", "p.tape", "-o", "/dev/null", "--format", "wav")
    #expect(render.stderr.contains("decoded audio found in the cache"), "\(render.stderr)")
    #expect(!render.stderr.contains("hashing it"), "\(render.stderr)")
  }
}
