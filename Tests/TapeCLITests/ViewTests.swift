import Foundation
import Testing

/// `tape view` in a real browser: Debian's Chromium, headless, driven through its DevTools
/// protocol (Tests/Support/cdp.py). The page shows every clip with its id and start; an edit,
/// an undo and a checkout made by other processes move the clips in the page's DOM within a
/// second; the history strip shows a past version without moving the head; a play's playhead
/// is drawn; the server listens on loopback only and refuses every request without its token.
@Suite("tape view in a browser", .serialized)
struct ViewTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
  static let script = root.appendingPathComponent("Tests/Support/cdp.py").path
  static let chromium = "/usr/bin/chromium"

  /// Runs Tests/Support/cdp.py with `arguments`; its standard output.
  static func cdp(_ arguments: [String], allowFailure: Bool = false) throws -> String {
    let result = try TapeBinary.run(
      URL(fileURLWithPath: "/usr/bin/python3"), [script] + arguments, killAfter: 120)
    if !allowFailure {
      #expect(result.status == 0, "cdp.py \(arguments.prefix(3)): \(result.stderr)")
    }
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// A project of two tracks and three clips of the speech recording.
  static func project(in space: Workspace) throws -> String {
    let audio = try space.copyTestAudio("speech-mono-48k-16.wav")
    let file = space.path("view.tape")
    try space.tape("new", file)
    try space.tape("import", file, audio)
    try space.tape("track", "add", file, "Voice")
    try space.tape("track", "add", file, "Echo")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "1s")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "1.5s", "--length", "1s")
    try space.tape("clip", "add", file, "t2", "s1", "--at", "0.5s", "--length", "2s")
    try space.tape("marker", "add", file, "2s", "chorus")
    return file
  }

  /// Every clip of the head as `[id, start]`, sorted, from `tape ls --json`.
  static func clips(_ space: Workspace, _ file: String) throws -> [[String]] {
    let listed = try #require(
      try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
    let tracks = try #require(listed["tracks"] as? [[String: Any]])
    return tracks.flatMap { track in
      ((track["clips"] as? [[String: Any]]) ?? []).map {
        ["\($0["id"] ?? "")", "\(($0["timelineStart"] as? Int) ?? -1)", "\(track["id"] ?? "")"]
      }
    }.sorted { $0[0] < $1[0] }
  }

  /// What the page's DOM shows: each `.clip` as `[id, start, the track of the lane it is
  /// in]`, sorted by id; a clip whose drawn place (`--start`) is not its `data-start` shows as
  /// start "drawn elsewhere".
  static let domClips = """
    Array.from(document.querySelectorAll('#tracks .clip')).map(e => [e.dataset.id, e.style.getPropertyValue('--start') === e.dataset.start ? e.dataset.start : 'drawn elsewhere', e.closest('.track').dataset.id]).sort((a, b) => a[0] < b[0] ? -1 : 1)
    """

  /// Waits for `process` to end, at most `seconds`; then kills it (and says so) rather than
  /// hang the suite.
  static func waitOrKill(_ process: Process, seconds: Double = 30, _ what: String) {
    let deadline = Date().addingTimeInterval(seconds)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    if process.isRunning {
      Issue.record("\(what) did not end within \(seconds) s")
      kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
  }

  static func encoded(_ clips: [[String]]) throws -> String {
    String(decoding: try JSONSerialization.data(withJSONObject: clips), as: UTF8.self)
  }

  /// Chromium, headless, showing `url`: the process (the leader of a process group its helpers
  /// join, so `killpg` ends them all) and its DevTools port.
  static func openBrowser(_ url: String, in space: Workspace) throws -> (Process, String) {
    let profile = space.path("chromium-profile")
    let browser = Process()
    browser.executableURL = URL(fileURLWithPath: Self.chromium)
    browser.arguments = [
      "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
      "--disable-crash-reporter", "--no-first-run",
      "--no-default-browser-check", "--remote-debugging-port=0", "--user-data-dir=\(profile)",
      "--window-size=1400,900", url,
    ]
    // Its own home: Chromium keeps crash reports and settings there, not in the user's.
    try FileManager.default.createDirectory(
      atPath: space.path("home"), withIntermediateDirectories: true)
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = space.path("home")
    browser.environment = environment
    browser.standardOutput = FileHandle.nullDevice
    browser.standardError = FileHandle.nullDevice
    try browser.run()
    var debugging: String?
    for _ in 0..<600 where debugging == nil {
      if let text = try? String(contentsOfFile: profile + "/DevToolsActivePort", encoding: .utf8),
        let first = text.split(separator: "\n").first
      {
        debugging = String(first)
      } else {
        usleep(100_000)
      }
    }
    guard let debugging else {
      killpg(browser.processIdentifier, SIGKILL)
      waitOrKill(browser, "Chromium")
      throw TmuxError(message: "Chromium opened no DevTools port")
    }
    return (browser, debugging)
  }

  /// The first line `tape view` prints (its URL), or nil after `seconds`.
  static func firstLine(of pipe: Pipe, seconds: Double) -> String? {
    let reader = pipe.fileHandleForReading
    var said = ""
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      var request = pollfd(fd: reader.fileDescriptor, events: Int16(POLLIN), revents: 0)
      if poll(&request, 1, 100) > 0 {
        let data = reader.availableData
        if data.isEmpty { return nil }
        said += String(decoding: data, as: UTF8.self)
        if let end = said.firstIndex(of: "\n") { return String(said[..<end]) }
      }
    }
    return nil
  }

  @Test func thePageFollowsEveryCommitAndNeedsItsToken() throws {
    #expect(
      FileManager.default.isExecutableFile(atPath: Self.chromium),
      "Chromium is not installed: scripts/setup.sh installs it")
    let space = try Workspace()
    let file = try Self.project(in: space)
    let (viewer, out, _) = try startTape(["view", file, "--port", "0", "--no-open"])
    defer {
      if viewer.isRunning { kill(viewer.processIdentifier, SIGTERM) }
      Self.waitOrKill(viewer, "tape view")
    }
    let url = try #require(Self.firstLine(of: out, seconds: 60), "tape view printed no URL")
    let parts = try #require(URLComponents(string: url))
    #expect(parts.host == "127.0.0.1")
    let port = try #require(parts.port)
    let token = try #require(parts.queryItems?.first { $0.name == "token" }?.value)
    #expect(token.count == 32)

    // Loopback only: the listening socket's address is 127.0.0.1 (/proc/net/tcp, in hex).
    let sockets = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
    let listening = sockets.split(separator: "\n").filter {
      $0.contains(String(format: ":%04X ", port)) && $0.contains(" 0A ")
    }
    #expect(!listening.isEmpty, "nothing listens on port \(port)")
    #expect(listening.allSatisfy { $0.contains(String(format: "0100007F:%04X", port)) })

    // Every request needs the token: the page, its data and its live channel.
    let base = "http://127.0.0.1:\(port)"
    for path in ["/", "/snapshot", "/history", "/version/1", "/events"] {
      #expect(try Self.cdp(["get", base + path]) == "403", "\(path) without the token")
      let wrong = (token.hasPrefix("0") ? "1" : "0") + token.dropFirst()
      #expect(try Self.cdp(["get", base + path + "?token=" + wrong]) == "403", "\(path)")
    }
    #expect(try Self.cdp(["get", base + "/snapshot?token=" + token]) == "200")

    // The browser: every clip of the head in the DOM, with its start.
    let (browser, devtools) = try Self.openBrowser(url, in: space)
    defer {
      killpg(browser.processIdentifier, SIGKILL)
      Self.waitOrKill(browser, "Chromium")
    }
    let head = try Self.clips(space, file)
    #expect(head.count == 3)
    _ = try Self.cdp(["wait", devtools, Self.domClips, Self.encoded(head), "60"])
    // Names and markers as `tape draw` shows them.
    #expect(
      try Self.cdp([
        "eval", devtools, "document.querySelector('#markers .marker span').textContent",
      ])
        == "\"chorus\"")
    #expect(
      try Self.cdp(["eval", devtools, "document.querySelectorAll('.track .name').length"]) == "2")

    /// Runs `edit` in another process, then waits for the DOM to show the head's clips: the
    /// seconds from the edit's end to the page's hearing of it (the page notes the time in the
    /// handler that also sets the clips' `data-start`).
    func commitAndWait(_ edit: [String]) throws -> Double {
      try space.tape(edit)
      let done = Date().timeIntervalSince1970
      let wanted = try Self.clips(space, file)
      let said = try Self.cdp(["wait", devtools, Self.domClips, Self.encoded(wanted), "10"])
      let reply = try #require(try parseJSON(said) as? [String: Any], "\(said)")
      #expect(reply["at"] as? Double != nil, "the page never showed \(wanted): \(said)")
      let heard = try Self.cdp(["eval", devtools, "Number(document.body.dataset.heardAt)"])
      return (Double(heard) ?? .infinity) / 1_000 - done
    }
    let moved = try commitAndWait(["clip", "move", file, "c2", "--to", "3s", "--track", "t2"])
    #expect(moved < 1, "the move reached the DOM after \(moved) s")
    let undone = try commitAndWait(["undo", file])
    #expect(undone < 1, "the undo reached the DOM after \(undone) s")
    let checkedOut = try commitAndWait(["checkout", file, "6"])
    #expect(checkedOut < 1, "the checkout reached the DOM after \(checkedOut) s")
    _ = try commitAndWait(["checkout", file, "9"])

    // The history strip shows version 5 (c2 and c3 not yet there) without moving the head.
    let listed = try space.tape("ls", file, "--json").stdout
    let history = try space.tape("history", file).stdout
    _ = try Self.cdp([
      "eval", devtools, "document.querySelector('#history button[data-version=\"5\"]').click()",
    ])
    _ = try Self.cdp(["wait", devtools, Self.domClips, "[[\"c1\",\"0\",\"t1\"]]", "10"])
    #expect(try space.tape("ls", file, "--json").stdout == listed)

    // A play's playhead: a `tape play` of the project (ALSA's null device, unpaced, looping)
    // says where it is beside the project, and the page draws it there; gone when it ends.
    let end = 3 * 48_000
    let (play, _, _) = try startTape(["play", file, "--device", "null", "--loop"])
    defer {
      if play.isRunning { kill(play.processIdentifier, SIGKILL) }
      Self.waitOrKill(play, "tape play")
    }
    let drawn = """
      (() => { const f = document.getElementById('playhead').dataset.frame; \
      return f !== undefined && Number(f) >= 0 && Number(f) <= \(end) })()
      """
    _ = try Self.cdp(["wait", devtools, drawn, "true", "20"])
    kill(play.processIdentifier, SIGTERM)
    Self.waitOrKill(play, "tape play")
    _ = try Self.cdp([
      "wait", devtools, "document.getElementById('playhead').dataset.frame || null", "null", "10",
    ])

    // The page wrote nothing: the head, its clips and the history are as the edits left them.
    kill(viewer.processIdentifier, SIGTERM)
    Self.waitOrKill(viewer, "tape view")
    #expect(viewer.terminationStatus == 0)
    #expect(try space.tape("ls", file, "--json").stdout == listed)
    #expect(try space.tape("history", file).stdout == history)
  }

  /// A port already taken is refused in one line naming the way out, and an impossible port
  /// before anything is opened.
  @Test func aTakenPortIsRefusedNamingTheFix() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let (first, out, _) = try startTape(["view", file, "--port", "0", "--no-open"])
    defer {
      kill(first.processIdentifier, SIGTERM)
      Self.waitOrKill(first, "tape view")
    }
    let url = try #require(Self.firstLine(of: out, seconds: 60))
    let port = try #require(URLComponents(string: url)?.port)
    let second = try TapeBinary.run(
      ["view", file, "--port", "\(port)", "--no-open"], killAfter: 60)
    #expect(second.status != 0)
    #expect(second.stderr.contains("port \(port) is already in use"), "\(second.stderr)")
    #expect(second.stderr.contains("--port 0"), "\(second.stderr)")
    let wrong = try TapeBinary.run(["view", file, "--port", "70000", "--no-open"], killAfter: 60)
    #expect(wrong.status == 64)
    #expect(wrong.stderr.contains("--port 70000 is not a port"), "\(wrong.stderr)")
  }

  /// A project of 1,503 clips: each update names what changed (a moved clip, a removed one,
  /// one put back, a track's gain), not the project (which a page would otherwise be sent
  /// whole, tens of megabytes at 100,000 clips, for every edit); the page, changed in place by
  /// each, shows exactly the head; a cut that moves every clip after it is sent whole.
  @Test func aLargeProjectIsFollowedByWhatChanged() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let script = space.path("many.txt")
    try (0..<1_500).map { index in
      "clip add t\(index % 2 + 1) s1 --at \(10 + index / 2)s --from \(index % 50 * 100)ms --length 0.5s"
    }.joined(separator: "\n").write(toFile: script, atomically: true, encoding: .utf8)
    try space.tape("batch", file, script)
    let (viewer, out, _) = try startTape(["view", file, "--port", "0", "--no-open"])
    defer {
      if viewer.isRunning { kill(viewer.processIdentifier, SIGTERM) }
      Self.waitOrKill(viewer, "tape view")
    }
    let url = try #require(Self.firstLine(of: out, seconds: 60), "tape view printed no URL")

    // What the live channel sends, read beside the page.
    let log = space.path("events.jsonl")
    #expect(FileManager.default.createFile(atPath: log, contents: nil))
    let reader = Process()
    reader.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    reader.arguments = [
      Self.script, "events", url.replacingOccurrences(of: "/?token=", with: "/events?token="),
      "120", "5",
    ]
    reader.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    try reader.run()
    defer {
      if reader.isRunning { kill(reader.processIdentifier, SIGKILL) }
      Self.waitOrKill(reader, "the event reader")
    }
    func said() -> [[String: Any]] {
      ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        .compactMap { try? parseJSON(String($0)) as? [String: Any] }
    }
    let deadline = Date().addingTimeInterval(60)
    while said().isEmpty && Date() < deadline { usleep(50_000) }
    let first = try #require(said().first, "the event stream sent nothing")
    #expect(first["event"] as? String == "snapshot")
    #expect((first["bytes"] as? Int ?? 0) > 100_000, "\(first)")

    let (browser, devtools) = try Self.openBrowser(url, in: space)
    defer {
      killpg(browser.processIdentifier, SIGKILL)
      Self.waitOrKill(browser, "Chromium")
    }
    let head = try Self.clips(space, file)
    #expect(head.count == 1_503)
    _ = try Self.cdp(["wait", devtools, Self.domClips, Self.encoded(head), "60"])
    /// Makes `edit`, then waits for the page to have heard the version it made (so that no
    /// two edits reach the server between two of its looks, which would be one update) and
    /// for its DOM to show the head's clips, each in its track's lane.
    func edit(_ edit: [String]) throws {
      try space.tape(edit)
      let listed = try #require(
        try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
      let version = try #require(listed["version"] as? Int)
      let heard = try Self.cdp([
        "wait", devtools, "document.body.dataset.version", "\"\(version)\"", "20",
      ])
      #expect((try? parseJSON(heard) as? [String: Any])?["at"] != nil, "after \(edit): \(heard)")
      let wanted = try Self.clips(space, file)
      let shown = try Self.cdp(["wait", devtools, Self.domClips, Self.encoded(wanted), "20"])
      #expect((try? parseJSON(shown) as? [String: Any])?["at"] != nil, "after \(edit): \(shown)")
    }
    try edit(["clip", "move", file, "c2", "--to", "3s", "--track", "t2"])
    try edit(["clip", "rm", file, "c500"])
    try edit(["undo", file])
    // A track's new gain: its row drawn again in place, its clips kept.
    try edit(["track", "set", file, "t2", "--gain", "-6"])
    let gain = try Self.cdp([
      "wait", devtools, "document.querySelector('.track[data-id=\"t2\"] .name small').textContent",
      "\"-6.0 dB\"", "20",
    ])
    #expect((try? parseJSON(gain) as? [String: Any])?["at"] != nil, "\(gain)")
    try edit(["cut", file, "--from", "5s", "--to", "6s", "--ripple"])

    // The history strip's data: the last versions of the head's line, and how many there are.
    let base = try #require(url.components(separatedBy: "/?token=").first)
    let token = try #require(url.components(separatedBy: "/?token=").last)
    let whole = try #require(
      try parseJSON(Self.cdp(["body", base + "/history?token=" + token])) as? [String: Any])
    let window = try #require(
      try parseJSON(Self.cdp(["body", base + "/history?last=2&token=" + token]))
        as? [String: Any])
    let all = try #require(whole["versions"] as? [[String: Any]])
    let last = try #require(window["versions"] as? [[String: Any]])
    #expect(last.count == 2)
    #expect(window["head"] as? Int == whole["head"] as? Int)
    #expect(last.last?["version"] as? Int == whole["head"] as? Int)
    #expect(window["total"] as? Int == all.count)
    #expect((window["earlier"] as? Int ?? 0) + 2 <= all.count)
    // The page's strip: the head's line (the version the undo left behind is on a branch).
    let line = try #require(
      try parseJSON(Self.cdp(["body", base + "/history?last=200&token=" + token]))
        as? [String: Any])
    let onLine = try #require(line["versions"] as? [[String: Any]]).count
    #expect(onLine < all.count)
    let strip = try Self.cdp([
      "wait", devtools, "document.querySelectorAll('#history button').length", "\(onLine)", "10",
    ])
    #expect((try? parseJSON(strip) as? [String: Any])?["at"] != nil, "\(strip)")

    Self.waitOrKill(reader, seconds: 60, "the event reader")
    let updates = said().filter { $0["event"] as? String == "update" }
    try #require(updates.count == 5, "\(said())")
    for update in updates.prefix(4) {
      #expect(update["whole"] as? Bool == false, "\(update)")
      #expect((update["bytes"] as? Int ?? .max) < 4_000, "\(update)")
    }
    #expect(updates[0]["clips"] as? Int == 1)
    #expect(updates[0]["steps"] as? Int == 12)
    #expect(updates[1]["removedClips"] as? Int == 1)
    #expect(updates[2]["clips"] as? Int == 1)
    #expect(updates[3]["clips"] as? Int == 0)
    #expect(updates[4]["whole"] as? Bool == true, "\(updates[4])")
  }
}
