import Foundation
import Testing

@Suite("tape watch and tape diff")
struct WatchAndDiffTests {
  /// A second process edits, undoes, redoes and checks out: `tape watch --json --count 4`
  /// prints four lines with the right causes and every before and after value.
  @Test func watchShowsEveryMoveWithItsCause() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let head =
      try #require(try parseJSON(space.tape("history", file, "--json").stdout) as? [String: Any])[
        "head"] as? Int ?? 0
    let (watcher, out, errors) = try startTape(["watch", file, "--json", "--count", "4"])
    try waitUntilWatching(file)
    try space.tape("clip", "move", file, "c1", "--to", "1s", "--track", "t2")
    try space.tape("undo", file)
    try space.tape("redo", file)
    try space.tape("checkout", file, "\(head - 1)")
    let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    watcher.waitUntilExit()
    #expect(
      watcher.terminationStatus == 0,
      "\(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
    let lines = output.split(separator: "\n").map(String.init)
    #expect(lines.count == 4)
    let objects = try lines.map { try #require(try parseJSON($0) as? [String: Any]) }
    #expect(objects.map { $0["cause"] as? String } == ["edit", "undo", "redo", "checkout"])
    #expect(objects.map { $0["from"] as? Int } == [head, head + 1, head, head + 1])
    #expect(objects.map { $0["to"] as? Int } == [head + 1, head, head + 1, head - 1])
    let sequences = objects.compactMap { $0["sequence"] as? Int }
    #expect(sequences == Array(sequences[0]..<sequences[0] + 4))
    // The move: c1 from 0.5 s on t1 to 1 s on t2, every field before and after.
    let move = try #require((objects[0]["changes"] as? [[String: Any]])?.first)
    #expect(move["kind"] as? String == "clip" && move["id"] as? String == "c1")
    #expect(move["words"] as? String == "c1 moved 0:00.500 → 0:01.000, t1 → t2")
    let before = try #require(move["before"] as? [String: Any])
    let after = try #require(move["after"] as? [String: Any])
    #expect(before["timelineStart"] as? Int == 24_000 && before["track"] as? String == "t1")
    #expect(after["timelineStart"] as? Int == 48_000 && after["track"] as? String == "t2")
    #expect(before["length"] as? Int == 144_000 && after["length"] as? Int == 144_000)
    // The undo says the reverse.
    let undo = try #require((objects[1]["changes"] as? [[String: Any]])?.first)
    #expect(undo["words"] as? String == "c1 moved 0:01.000 → 0:00.500, t2 → t1")
  }

  /// Without --json, one line each, in words.
  @Test func watchInWords() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let (watcher, out, _) = try startTape(["watch", file, "--count", "2"])
    try waitUntilWatching(file)
    try space.tape("track", "set", file, "t2", "--gain", "-9dB", "--mute")
    try space.tape("undo", file)
    let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    watcher.waitUntilExit()
    let lines = output.split(separator: "\n")
    #expect(lines.count == 2)
    #expect(lines.first?.hasSuffix(": t2 gain -6 dB → -9 dB, muted") == true, "\(output)")
    // An undo names what it undid, not the label of the version it went back to.
    #expect(lines.last?.contains("(undid \"Set track t2 gain -9dB, muted\")") == true, "\(output)")
    #expect(lines.last?.hasPrefix("undo ") == true)
    #expect(lines.last?.hasSuffix(": t2 gain -9 dB → -6 dB, unmuted") == true, "\(output)")
  }

  /// How a watch ends besides Ctrl-C: its reader gone (quietly, exit 0), its project deleted
  /// (one line, exit 66), Ctrl-\ (at once, by that signal), and a project it cannot follow
  /// (exit 77).
  @Test func howAWatchEnds() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let pipeline = Process()
    pipeline.executableURL = URL(fileURLWithPath: "/bin/bash")
    pipeline.arguments = [
      "-c", "\"$0\" watch \"$1\" | head -1; echo \"watch exit ${PIPESTATUS[0]}\" >&2",
      TapeBinary.url.path, file,
    ]
    let errors = Pipe()
    pipeline.standardError = errors
    pipeline.standardOutput = FileHandle.nullDevice
    try pipeline.run()
    try waitUntilWatching(file)
    try space.tape("track", "set", file, "t1", "--gain", "-1")
    pipeline.waitUntilExit()
    let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(said == "watch exit 0\n")

    let (deleted, deletedOut, deletedErrors) = try startTape(["watch", file])
    try waitUntilWatching(file)
    // An edit just before the deletion is still printed.
    try space.tape("track", "set", file, "t1", "--gain", "-2")
    for suffix in ["", "-wal", "-shm"] {
      try? FileManager.default.removeItem(atPath: file + suffix)
    }
    let printed = String(
      decoding: deletedOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    deleted.waitUntilExit()
    #expect(printed.hasSuffix(": t1 gain -1 dB → -2 dB\n"), "\(printed)")
    #expect(deleted.terminationStatus == 66)
    #expect(
      String(decoding: deletedErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        == "error: \(file) was deleted or replaced while it was watched; watch the new one\n")

    let otherSpace = try Workspace()
    let other = try RenderCommandTests.project(in: otherSpace)
    let (quit, _, _) = try startTape(["watch", other])
    try waitUntilWatching(other)
    kill(quit.processIdentifier, SIGQUIT)
    quit.waitUntilExit()
    #expect(
      quit.terminationReason == .uncaughtSignal && quit.terminationStatus == SIGQUIT,
      "\(quit.terminationReason.rawValue) \(quit.terminationStatus)")
  }

  /// undo, redo and checkout say where the head went and what changed, in the same words;
  /// with --json the mutation object plus from, label and changes.
  @Test func undoRedoAndCheckoutSayWhatChanged() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    try space.tape("clip", "move", file, "c2", "--to", "3s")
    let head = try space.head(of: file)
    #expect(
      try space.tape("undo", file).stdout
        == "undo: back to v\(head - 1) \"Add s2 to t2 at 0\" — c2 moved 0:03.000 → 0:00.000\n")
    #expect(
      try space.tape("redo", file).stdout
        == "redo: forward to v\(head) \"Move c2 to 3s\" — c2 moved 0:00.000 → 0:03.000\n")
    let json = try #require(
      try parseJSON(space.tape("checkout", file, "\(head - 1)", "--json").stdout)
        as? [String: Any])
    #expect(json["version"] as? Int == head - 1 && json["from"] as? Int == head)
    #expect((json["ids"] as? [Any])?.isEmpty == true)
    let changes = try #require(json["changes"] as? [[String: Any]])
    #expect(changes.map { $0["words"] as? String } == ["c2 moved 0:03.000 → 0:00.000"])
  }

  /// The words say what an edit did: settings of what was added, trims as trims, a curve set
  /// before its fade, names with quotes escaped, and no line for tracks that only shifted row.
  @Test func diffInWords() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    func diffLines(_ edit: [String]) throws -> [String] {
      let before = try space.head(of: file)
      let result = try TapeBinary.run(edit)
      #expect(result.status == 0, "\(edit): \(result.stderr)")
      return try space.tape("diff", file, "\(before)", "\(try space.head(of: file))").stdout
        .split(separator: "\n").map(String.init)
    }
    #expect(
      try diffLines(["track", "add", file, "Say \"hi\"", "--gain", "-3", "--pan", "0.5"])
        == [#"t3 added "Say \"hi\"" (gain -3 dB, pan R50)"#])
    #expect(
      try diffLines([
        "clip", "add", file, "t3", "s1", "--at", "1s", "--length", "2s", "--fade-in", "50ms",
      ]) == ["c3 added on t3 at 0:01.000 (s1 from 0:00.000, 0:02.000 long, fade-in 0.05s linear)"])
    #expect(
      try diffLines(["clip", "trim", file, "c3", "--start", "1.5s"])
        == ["c3 start trimmed 0:01.000 → 0:01.500"])
    #expect(
      try diffLines(["clip", "set", file, "c2", "--fade-in-curve", "s-curve"])
        == ["c2 fade-in curve linear → s-curve (no fade-in yet)"])
    // Removing t1 shifts t2 and t3 up a row: only the removal (and its clip) is said.
    #expect(
      try diffLines(["track", "rm", file, "t1"])
        == [#"t1 removed "Voice""#, "c1 removed from t1 (was at 0:00.500)"])
  }

  /// `tape diff A B` across branches equals the difference of the two versions' `ls --json`:
  /// every clip, track and source that differs, with exactly those values before and after.
  @Test func diffAcrossBranchesEqualsTheListings() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    try space.tape("clip", "split", file, "c1", "--at", "2s")
    try space.tape("track", "set", file, "t2", "--pan", "0.3")
    let branchA = try space.head(of: file)
    try space.tape("undo", file, "--steps", "2")
    try space.tape("clip", "move", file, "c2", "--to", "3s", "--track", "t1")
    try space.tape("track", "add", file, "New")
    try space.tape("clip", "rm", file, "c1")
    let branchB = try space.head(of: file)
    let result = try space.tape("diff", file, "\(branchA)", "\(branchB)", "--json")
    let diff = try #require(try parseJSON(result.stdout) as? [String: Any])
    #expect(diff["from"] as? Int == branchA && diff["to"] as? Int == branchB)
    let changes = try #require(diff["changes"] as? [[String: Any]])

    func listing(
      _ version: Int
    ) throws -> (clips: [String: NSDictionary], tracks: [String: NSDictionary]) {
      let json = try #require(
        try parseJSON(space.tape("ls", file, "--json", "--version", "\(version)").stdout)
          as? [String: Any])
      var clips: [String: NSDictionary] = [:]
      var tracks: [String: NSDictionary] = [:]
      for (index, track) in (json["tracks"] as? [[String: Any]] ?? []).enumerated() {
        var settings = track
        // A track's clips and effects are changes of their own (kinds clip and effect).
        settings["clips"] = nil
        settings["effects"] = nil
        settings["index"] = index
        tracks[track["id"] as? String ?? ""] = settings as NSDictionary
        for clip in track["clips"] as? [[String: Any]] ?? [] {
          var placed = clip
          placed["track"] = track["id"]
          clips[clip["id"] as? String ?? ""] = placed as NSDictionary
        }
      }
      return (clips, tracks)
    }
    let a = try listing(branchA)
    let b = try listing(branchB)
    for (kind, old, new) in [("clip", a.clips, b.clips), ("track", a.tracks, b.tracks)] {
      let expected = Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }
      let reported = changes.filter { $0["kind"] as? String == kind }
      #expect(Set(reported.compactMap { $0["id"] as? String }) == expected, "\(kind)s")
      for change in reported {
        let id = change["id"] as? String ?? ""
        #expect((change["before"] as? NSDictionary) == old[id], "\(id) before")
        #expect((change["after"] as? NSDictionary) == new[id], "\(id) after")
      }
    }
    #expect(!changes.isEmpty)
  }

}

/// Waits until a `tape watch` of `file` follows it: a process whose arguments are `watch` and
/// `file` holds the inotify descriptor a store subscription opens, after the store was opened
/// (so every later move is printed). Throws after `seconds`.
///
/// Why not a fixed sleep: half a second was the guess, and a loaded machine can take longer to
/// start the watcher; an edit made before it opened the project was never printed, and a test
/// waiting for `--count` lines waited forever.
func waitUntilWatching(_ file: String, seconds: Double = 60) throws {
  struct NotWatching: Error, CustomStringConvertible {
    let description: String
  }
  let deadline = Date().addingTimeInterval(seconds)
  let files = FileManager.default
  repeat {
    for pid in (try? files.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(pid) != nil {
      guard let line = files.contents(atPath: "/proc/\(pid)/cmdline") else { continue }
      let arguments = line.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
      guard arguments.contains("watch"), arguments.contains(file) else { continue }
      let descriptors = (try? files.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
      let watching = descriptors.contains {
        (try? files.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)"))
          == "anon_inode:inotify"
      }
      if watching { return }
    }
    Thread.sleep(forTimeInterval: 0.02)
  } while Date() < deadline
  throw NotWatching(
    description:
      "no tape watch of \(file) followed it after \(seconds) s (with TAPE_NO_INOTIFY set, a watch opens no inotify descriptor to wait for: unset it)"
  )
}
