import Foundation
import Testing
import Timeline
import TimelineStore

/// `tape scrub` driven through a real terminal: a tmux server on a private socket runs it in a
/// pane of a known size, sends it keys and reads back what is on the screen.
@Suite("tape scrub")
struct ScrubTests {
  @Test func scrubStepsChecksOutFollowsAndRestoresTheTerminal() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    try space.tape("clip", "move", file, "c2", "--to", "2s")
    let head = try space.head(of: file)
    let terminal = try Tmux(width: 100, height: 24)
    defer { terminal.kill() }
    let status = space.path("status")
    try terminal.start(
      "stty -a > \(shellQuoted(space.path("before"))); \(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)); echo $? > \(shellQuoted(status)); stty -a > \(shellQuoted(space.path("after.part"))); mv \(shellQuoted(space.path("after.part"))) \(shellQuoted(space.path("after"))); sleep 60"
    )

    // The head on screen: its tracks and its clips by id.
    let first = try terminal.waitFor { $0.contains("v\(head) ") && $0.contains("c2") }
    for word in ["Voice", "Piano", "c1", "c2", "head v\(head)"] {
      #expect(first.contains(word), "\(word) not on screen:\n\(first)")
    }

    // ← steps back to the version before the move, → returns to exactly the same screen.
    try terminal.send("Left")
    let back = try terminal.waitFor { $0.hasPrefix("v\(head - 1) ") }
    #expect(back != first)
    #expect(back.contains("head v\(head)"), "scrubbing moved the head:\n\(back)")
    try terminal.send("Right")
    let again = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
    #expect(again == first)
    // Keys that come faster than the animation (← held down) are all taken, in order.
    try terminal.send("Left", "Left", "Left")
    _ = try terminal.waitFor { $0.hasPrefix("v\(head - 3) ") }
    try terminal.send("Right", "Right", "Right")
    #expect(try terminal.waitFor { $0.hasPrefix("v\(head) ") } == first)
    #expect(try space.head(of: file) == head, "scrubbing alone moved the head")

    // An edit in another shell appears live while the head is on screen.
    try space.tape("track", "set", file, "t2", "--gain", "-9dB")
    _ = try terminal.waitFor { $0.hasPrefix("v\(head + 1) ") && $0.contains("head v\(head + 1)") }

    // Enter checks out the version on screen.
    try terminal.send("Left")
    try terminal.send("Left")
    _ = try terminal.waitFor { $0.hasPrefix("v\(head - 1) ") }
    try terminal.send("Enter")
    _ = try terminal.waitFor { $0.contains("checked out v\(head - 1)") }
    #expect(try space.head(of: file) == head - 1)

    // A resize redraws at the new width.
    try terminal.resize(width: 60, height: 16)
    let narrow = try terminal.waitFor { screen in
      screen.hasPrefix("v\(head - 1) ")
        && screen.split(separator: "\n").allSatisfy { $0.count <= 60 }
        && screen.contains("Voice")
    }
    #expect(narrow.split(separator: "\n").count <= 16)

    // q leaves: the head stays where Enter put it, the exit status is 0, and the terminal
    // settings are what they were before.
    try terminal.send("Right")
    _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
    try terminal.send("q")
    let deadline = Date().addingTimeInterval(10)
    while !FileManager.default.fileExists(atPath: space.path("after")), Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
    }
    Thread.sleep(forTimeInterval: 0.2)
    #expect(try String(contentsOfFile: status, encoding: .utf8) == "0\n")
    #expect(try space.head(of: file) == head - 1)
    let before = try String(contentsOfFile: space.path("before"), encoding: .utf8)
    let after = try String(contentsOfFile: space.path("after"), encoding: .utf8)
    // The size line differs (the pane was resized); every mode must be back.
    func modes(_ text: String) -> [Substring] {
      text.split(separator: "\n").filter { !$0.contains("rows") }
    }
    #expect(modes(before) == modes(after))
    // The alternate screen is gone: the shell's screen no longer shows the timeline.
    let left = try terminal.capture()
    #expect(!left.contains("←/→ versions"), "the full-screen view stayed:\n\(left)")
  }

  /// Ctrl-Z leaves the full-screen view and gives the terminal back as it was; `fg` brings
  /// the view and its keys back. (In an interactive shell, which does job control.)
  @Test func ctrlZAndForeground() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let head = try space.head(of: file)
    let terminal = try Tmux(width: 100, height: 24)
    defer { terminal.kill() }
    try terminal.start("PS1='$ ' exec bash --norc --noprofile -i")
    Thread.sleep(forTimeInterval: 0.5)
    try terminal.type("\(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file))")
    try terminal.send("Enter")
    _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
    try terminal.send("C-z")
    let stopped = try terminal.waitFor { $0.contains("Stopped") }
    #expect(!stopped.contains("←/→ versions"), "the view stayed while stopped:\n\(stopped)")
    try terminal.type("fg")
    try terminal.send("Enter")
    _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
    try terminal.send("Left")
    _ = try terminal.waitFor { $0.hasPrefix("v\(head - 1) ") }
    try terminal.send("q")
    _ = try terminal.waitFor { $0.contains("$ ") && !$0.contains("←/→ versions") }
  }

  /// `tape play`'s status line in a terminal narrower than it: cut to the width, never
  /// wrapped (a wrapped line leaves a copy of itself on every redraw).
  @Test func playsStatusLineFitsANarrowTerminal() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let terminal = try Tmux(width: 40, height: 10)
    defer { terminal.kill() }
    try terminal.start(
      "\(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device null --loop 2>&1; sleep 60"
    )
    // The status line starts with "playing"; notes above it (the priority line, say) may
    // hold the word too.
    func statusLines(_ screen: String) -> Int {
      screen.split(separator: "\n", omittingEmptySubsequences: false)
        .filter { $0.hasPrefix("playing ") }.count
    }
    let screen = try terminal.waitFor(steady: false) { statusLines($0) > 0 }
    Thread.sleep(forTimeInterval: 0.5)
    let later = try terminal.capture()
    try terminal.send("q")
    for shown in [screen, later] {
      #expect(statusLines(shown) == 1, "\(shown)")
      #expect(!shown.contains("quit)"), "the status line wrapped:\n\(shown)")
    }
  }

  /// Ctrl-\ (SIGQUIT, a crash's path) during `play` or `scrub` leaves the terminal as it was
  /// before, echo on: the mode remembered for a crash is the one before raw mode.
  @Test(arguments: ["play", "scrub"])
  func ctrlBackslashRestoresTheTerminal(command: String) throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let terminal = try Tmux(width: 100, height: 24)
    defer { terminal.kill() }
    let extra = command == "play" ? " --device null --loop" : ""
    try terminal.start(
      // Job control (set -m): Ctrl-\ reaches tape alone, not the shell (dash, which restores
      // no terminal mode itself).
      "set -m; stty -a > \(shellQuoted(space.path("before"))); \(shellQuoted(TapeBinary.url.path)) \(command) \(shellQuoted(file))\(extra); stty -a > \(shellQuoted(space.path("after.part"))); mv \(shellQuoted(space.path("after.part"))) \(shellQuoted(space.path("after"))); sleep 60"
    )
    _ = try terminal.waitFor(steady: false) {
      $0.contains(command == "play" ? "playing" : "←/→ versions")
    }
    try terminal.send("C-\\")
    let deadline = Date().addingTimeInterval(10)
    while !FileManager.default.fileExists(atPath: space.path("after")), Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
    }
    Thread.sleep(forTimeInterval: 0.2)
    let before = try String(contentsOfFile: space.path("before"), encoding: .utf8)
    let after = try String(contentsOfFile: space.path("after"), encoding: .utf8)
    #expect(before == after)
    #expect(after.contains(" echo ") && after.contains(" icanon "), "\(after)")
  }

  /// A version the player cannot play (a source it never opened is gone) is said in the
  /// footer, and the play goes on.
  @Test func anUnplayableVersionIsSaidInTheFooter() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let extra = space.path("extra.aiff")
    try FileManager.default.copyItem(
      atPath: TestAudio.path("tone-mono-44k-24.aiff"), toPath: extra)
    try space.tape("import", file, extra)
    try space.tape("clip", "add", file, "t1", "s3", "--at", "1s", "--length", "0.5s")
    try space.tape("undo", file)
    try FileManager.default.removeItem(atPath: extra)
    let head = try space.head(of: file)
    let terminal = try Tmux(width: 120, height: 24)
    defer { terminal.kill() }
    try terminal.start(
      "\(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)) --device null; sleep 60")
    _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
    try terminal.send("Space")
    _ = try terminal.waitFor(steady: false) { $0.contains("playing") }
    try terminal.send("Right")
    let screen = try terminal.waitFor(steady: false) { $0.contains("cannot be played") }
    #expect(screen.contains("source s3 is missing"), "\(screen)")
    #expect(screen.contains("playing"), "\(screen)")
    try terminal.send("q")
  }

  /// A project of 400 frames, shorter than a loop's wrap needs; its file and head.
  static func tooShortToLoop(in space: Workspace) throws -> (file: String, head: Int) {
    let file = try RenderCommandTests.project(in: space)
    try space.tape("cut", file, "--from", "400f", "--to", "1:00")
    return (file, try space.head(of: file))
  }

  /// A project shorter than the loop's wrap fades (400 frames, of the 513 needed at 48 kHz)
  /// plays once, with a line in the footer that stays after it ended, instead of looping with
  /// a click at every wrap.
  @Test func aProjectTooShortToLoopPlaysOnce() throws {
    let space = try Workspace()
    let (file, head) = try Self.tooShortToLoop(in: space)
    let terminal = try Tmux(width: 200, height: 24)
    defer { terminal.kill() }
    try terminal.start(
      "\(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)) --device null; sleep 60")
    _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
    try terminal.send("Space")
    let screen = try terminal.waitFor(steady: false) { $0.contains("plays once") }
    #expect(
      screen.contains(
        "v\(head) plays once: a loop over its 400 frames (8.3 ms) is shorter than the 513 frames (10.7 ms) its wrap needs to fade out and in without a click; space plays it again"
      ), "\(screen)")
    // Once played, the header no longer says playing, and the line stays.
    let ended = try terminal.waitFor { !$0.contains("playing") && $0.contains("plays once") }
    try terminal.send("q")
    #expect(ended.contains("plays once"), "\(ended)")
  }

  /// Where memory cannot be locked (a user without the privilege: every user but root), the
  /// lock notice joins the plays-once line instead of replacing it. Root is run without
  /// CAP_IPC_LOCK and every user with a lock limit of 0, so the notice comes on every machine.
  @Test func aPlayedOnceLineStaysBesideALockNotice() throws {
    let space = try Workspace()
    let (file, head) = try Self.tooShortToLoop(in: space)
    let terminal = try Tmux(width: 200, height: 24)
    defer { terminal.kill() }
    let unprivileged = geteuid() == 0 ? "setpriv --bounding-set -ipc_lock " : ""
    try terminal.start(
      "ulimit -l 0; \(unprivileged)\(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)) --device null; sleep 60"
    )
    _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
    try terminal.send("Space")
    let ended = try terminal.waitFor {
      !$0.contains("playing") && $0.contains("could not lock")
    }
    try terminal.send("q")
    #expect(ended.contains("v\(head) plays once: a loop over its 400 frames"), "\(ended)")
  }

  /// Two spaces read together (typed faster than the pause's fade) pause and resume: space
  /// toggles what was asked for, not the status, which says paused only once the fade ends.
  @Test func twoQuickSpacesResume() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let terminal = try Tmux(width: 120, height: 10)
    defer { terminal.kill() }
    try terminal.start(
      "\(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device null --loop 2>&1; sleep 60"
    )
    _ = try terminal.waitFor(steady: false) { $0.contains("playing") }
    try terminal.send(["Space", "Space"])
    Thread.sleep(forTimeInterval: 0.5)
    // Then until it plays: a loaded machine may not have drawn the second Space yet (a screen
    // caught between the two said "paused"); a second Space lost stays paused, and fails.
    let screen = try terminal.waitFor(steady: false) {
      $0.contains("playing") && !$0.contains("paused")
    }
    #expect(screen.contains("playing") && !screen.contains("paused"), "\(screen)")
    try terminal.send("Space")
    _ = try terminal.waitFor(steady: false) { $0.contains("paused") }
    try terminal.send("q")
  }

  /// At a fork the header says which branch → follows (the one toward the head at first);
  /// ↑ chooses the other, and → then steps onto it.
  @Test func choosingABranchAtAFork() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    try space.tape("clip", "move", file, "c2", "--to", "2s")
    let old = try space.head(of: file)
    try space.tape("undo", file)
    try space.tape("clip", "move", file, "c2", "--to", "3s")
    let head = try space.head(of: file)
    let fork = old - 1
    let terminal = try Tmux(width: 120, height: 24)
    defer { terminal.kill() }
    try terminal.start("\(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)); sleep 60")
    _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
    try terminal.send("Left")
    let atFork = try terminal.waitFor { $0.hasPrefix("v\(fork) ") }
    #expect(atFork.contains("fork: → v\(head) (branch 2/2, ↑/↓)"), "\(atFork)")
    try terminal.send("Up")
    _ = try terminal.waitFor { $0.contains("fork: → v\(old) (branch 1/2, ↑/↓)") }
    try terminal.send("Right")
    let onOld = try terminal.waitFor { $0.hasPrefix("v\(old) ") }
    #expect(onOld.contains("\"Move c2 to 2s\""))
    // + zooms in (the ruler changes); a function key (F9: ESC [ 2 0 ~) is no key at all, not
    // a "0" that would fit the view again.
    let ruler = { (screen: String) in screen.split(separator: "\n").dropFirst().first }
    try terminal.send("+")
    let zoomed = try terminal.waitFor { ruler($0) != ruler(onOld) }
    try terminal.send("F9")
    Thread.sleep(forTimeInterval: 0.5)
    #expect(ruler(try terminal.capture()) == ruler(zoomed))
    try terminal.send("q")
    #expect(try space.head(of: file) == head)
  }

  /// A drag in another process (commits that fold into the head version) moves the clip on
  /// screen each time, though the version number stays.
  @Test func aDragInAnotherProcessIsShown() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let head = try space.head(of: file)
    let terminal = try Tmux(width: 100, height: 24)
    defer { terminal.kill() }
    try terminal.start("\(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)); sleep 60")
    _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
    let store = try TimelineStore.open(at: file)
    defer { try? store.close() }
    func drag(to seconds: Int64) throws {
      try store.commit(label: "Drag c2", coalescingKey: "drag c2") { project, _ in
        try project.moveClip(Clip.ID(2), to: FramePosition(seconds * 48_000), track: nil)
      }
    }
    try drag(to: 4)
    let first = try terminal.waitFor { $0.hasPrefix("v\(head + 1) ") }
    try drag(to: 6)
    let second = try terminal.waitFor { $0.hasPrefix("v\(head + 1) ") && $0 != first }
    let row = { (screen: String) in screen.split(separator: "\n").first { $0.hasPrefix("t2 ") } }
    #expect(row(first) != row(second), "the drag's second step is not on screen")
    try terminal.send("q")
  }

  /// Scripts get a clear refusal, not a garbled screen.
  @Test func scrubNeedsATerminal() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let result = try space.tape("scrub", file, status: 64)
    #expect(result.stderr.contains("needs a terminal"))
    #expect(result.stdout.isEmpty)
  }

}

extension ProcessHeavyTests {
  /// The audio follows the version on screen: the head mutes the only track, so space plays
  /// silence on the paced device until ← steps to the version before the mute, and the sine is
  /// heard from then on. The head never moves.
  @Test(.timeLimit(.minutes(3))) func scrubbingIsHeard() throws {
    let space = try Workspace()
    let file = try sineProject(in: space, hertz: 220)
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "10s")
    try space.tape("track", "set", file, "t1", "--mute")
    let head = try space.head(of: file)

    let device = try PacedDevice()
    try device.record(seconds: 5)
    let terminal = try Tmux(width: 100, height: 24)
    defer { terminal.kill() }
    let environment = device.environment.map { shellQuoted("\($0.key)=\($0.value)") }
      .joined(separator: " ")
    try terminal.start(
      "env \(environment) \(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)) --device jackrec; sleep 60"
    )
    _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
    try terminal.send("Space")
    _ = try terminal.waitFor(steady: false) { $0.contains("playing") }
    let started = Date()
    Thread.sleep(forTimeInterval: 1.5)
    try terminal.send("Left")
    _ = try terminal.waitFor(steady: false) {
      $0.hasPrefix("v\(head - 1) ") && $0.contains("playing")
    }
    let stepped = Date().timeIntervalSince(started)
    Thread.sleep(forTimeInterval: 1)
    try terminal.send("q")

    let captured = try device.recorded()
    let start = try #require(onset(captured), "nothing was heard")
    // Silence while the muted head played (at least a second of it), then the sine, from then
    // on without a gap.
    #expect(Double(start) / 48_000 > 1.0, "sound at \(start) before ← was pressed")
    #expect(Double(start) / 48_000 < stepped + 2.5, "heard only at \(start)")
    let after = captured[(start * 2)..<min(captured.count, (start + 24_000) * 2)]
    // 0.5 through the centre pan's −3 dB: 0.354.
    let peak = after.map { abs($0) }.max() ?? 0
    #expect(abs(peak - 0.354) < 0.01, "the sine is at \(peak) after the step, not 0.354")
    #expect(try space.head(of: file) == head, "scrubbing moved the head")
  }
}

/// A tmux server of our own (`-L` names a private socket) with one window of a fixed size.
struct Tmux {
  let socket = "tape-test-\(UUID().uuidString.prefix(8))"
  let width: Int
  let height: Int

  init(width: Int, height: Int) throws {
    self.width = width
    self.height = height
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
      throw TmuxError(message: "tmux is not installed: run scripts/setup.sh")
    }
  }

  /// The server this starts keeps whatever it inherits open, and Foundation's `Process` learns
  /// that a child ended from a socket the child inherits: the daemon would hold it forever and
  /// `waitUntilExit` would never return. So the first command is spawned by hand, with nothing
  /// but /dev/null to inherit, and reaped with `waitpid`.
  func start(_ command: String) throws {
    let arguments = [
      "tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "\(width)", "-y",
      "\(height)", "sh", "-c", command,
    ]
    var environment = ProcessInfo.processInfo.environment
    environment["TERM"] = "xterm-256color"
    environment.removeValue(forKey: "TMUX")
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for descriptor: Int32 in 0...2 {
      posix_spawn_file_actions_addopen(
        &actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    // No signal blocked or ignored: this thread's mask (a pool thread blocks many) would be
    // inherited by the server and every program in its panes.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid = pid_t()
    let spawned = posix_spawn(&pid, "/usr/bin/tmux", &actions, &attributes, argv, envp)
    guard spawned == 0 else { throw TmuxError(message: "tmux did not start: errno \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    guard status == 0 else { throw TmuxError(message: "tmux new-session failed: \(status)") }
  }

  /// Types `text` literally.
  func type(_ text: String) throws { try run(["send-keys", "-t", "0", "-l", text]) }

  /// Sends keys (tmux names: Left, Enter, Space…) in one go.
  func send(_ keys: String...) throws { try send(keys) }

  /// Sends `keys` in one go: the program reads them together.
  func send(_ keys: [String]) throws { try run(["send-keys", "-t", "0"] + keys) }

  /// Makes the window `width` columns wide (as a user drags a terminal narrower).
  func resize(width: Int) throws { try run(["resize-window", "-t", "0", "-x", "\(width)"]) }

  func resize(width: Int, height: Int) throws {
    try run(["resize-window", "-t", "0", "-x", "\(width)", "-y", "\(height)"])
  }

  /// The visible screen, trailing blanks trimmed.
  func capture() throws -> String {
    let text = try run(["capture-pane", "-p", "-t", "0"])
    return text.split(separator: "\n", omittingEmptySubsequences: false)
      .map { String($0.reversed().drop(while: { $0 == " " }).reversed()) }
      .joined(separator: "\n").trimmingCharacters(in: .newlines)
  }

  /// Waits up to 10 s for a screen that `accept`s, and returns it: a steady one (the same
  /// 0.3 s later) unless `steady` is false (a playing screen's clock never stands still).
  func waitFor(
    steady: Bool = true, _ accept: (String) -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> String {
    // A minute: the wait ends as soon as the screen is right; 10 s was a guess a loaded
    // machine could overrun (a debug build starting, decoding, drawing on a busy core).
    let deadline = Date().addingTimeInterval(60)
    var screen = ""
    while Date() < deadline {
      screen = try capture()
      // A screen that is still being drawn may change: take it when it is steady.
      if accept(screen) {
        if !steady { return screen }
        Thread.sleep(forTimeInterval: 0.3)
        let steady = try capture()
        if steady == screen { return screen }
        continue
      }
      Thread.sleep(forTimeInterval: 0.05)
    }
    Issue.record("timed out; the screen:\n\(screen)", sourceLocation: sourceLocation)
    throw TmuxError(message: "timed out waiting for the screen")
  }

  func kill() { _ = try? run(["kill-server"]) }

  @discardableResult
  private func run(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
    process.arguments = ["-L", socket] + arguments
    var environment = ProcessInfo.processInfo.environment
    environment["TERM"] = "xterm-256color"
    environment.removeValue(forKey: "TMUX")
    process.environment = environment
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw TmuxError(message: "tmux \(arguments.first ?? "") failed")
    }
    return String(decoding: data, as: UTF8.self)
  }
}

struct TmuxError: Error, CustomStringConvertible {
  let message: String
  var description: String { message }
}
