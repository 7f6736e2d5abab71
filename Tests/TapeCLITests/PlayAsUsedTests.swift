import Foundation
import Testing
import Timeline
import TimelineStore

/// `tape play` and `tape scrub` as people use them (issue 30): projects at any rate and
/// channel count, files replaced under them, job control, and terminals.
extension ProcessHeavyTests {
  @Suite("play and scrub as people use them", .timeLimit(.minutes(10)))
  struct PlayAsUsedTests {
    /// A one-second sine project at `rate` Hz with `channels` channels.
    static func sine(in space: Workspace, rate: Int, channels: Int) throws -> String {
      let sine = space.path("sine-\(rate).wav")
      try tool(
        "/usr/bin/sox",
        [
          "-n", "-r", "\(rate)", "-c", "1", "-b", "16", sine, "synth", "2", "sine", "440", "vol",
          "0.5",
        ])
      let file = space.path("sine-\(rate)-\(channels).tape")
      try space.tape("new", file, "--rate", "\(rate)", "--channels", "\(channels)")
      try space.tape("import", file, sine)
      try space.tape("track", "add", file, "Sine")
      try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "1s")
      return file
    }

    /// Every project rate and channel count (8 to 192 kHz, mono and stereo: 22 projects) plays
    /// on the 48 kHz JACK device (period 256) with default options: a period is chosen that the device takes through the rate converter
    /// (at 44.1 kHz, 256 converts to 278.6 JACK frames, which it refuses). One second is
    /// heard, converted to 48 kHz, and the player misses no period. (It used to be refused:
    /// "does not take 44100 Hz", or "does not take 1 channels" for mono.)
    @Test func everyRateAndChannelCountPlaysWithDefaultOptions() throws {
      let space = try Workspace()
      let device = try PacedDevice()
      // Every rate a project may have, each in mono and in stereo.
      let cases = Project.supportedSampleRates.flatMap { rate in [(rate, 1), (rate, 2)] }
      for (rate, channels) in cases {
        let file = try Self.sine(in: space, rate: rate, channels: channels)
        // A capture that lost frames while jackd, on a loaded machine, logged xruns of its own
        // is retried once (docs/alsa-testing.md); the player's own xruns always fail.
        for attempt in 1...2 {
          let serverXruns = device.serverXruns
          let serverLines = device.serverLogLines.count
          try device.record(seconds: 3)
          let played = try TapeBinary.run(
            ["play", file, "--device", "jackrec", "--json"], environment: device.environment)
          #expect(played.status == 0, "\(rate) Hz, \(channels) channels: \(played.stderr)")
          let report = try parseJSON(played.stdout) as? [String: Any] ?? [:]
          #expect(report["frames"] as? Int == rate, "\(rate) Hz, \(channels) channels: \(report)")
          #expect(report["xruns"] as? Int == 0, "\(rate) Hz, \(channels) channels: \(report)")
          let captured = try device.recorded()
          // A second of sound at the device's rate, give or take the converter's edges.
          let first = onset(captured)
          let last = stride(from: captured.count - 2, through: 0, by: -2).first {
            captured[$0] != 0 || captured[$0 + 1] != 0
          }.map { $0 / 2 }
          let heard = first.flatMap { first in last.map { $0 - first } } ?? 0
          let verdict = device.verdict(
            differs: abs(heard - 48_000) >= 480, attempt: attempt,
            playerXruns: report["xruns"] as? Int ?? -1,
            playerRealtime: report["realtimePriority"] as? Bool ?? false,
            serverXrunsBefore: serverXruns)
          if verdict == .retry { continue }
          if case .unjudged(let reason) = verdict {
            print("\(rate) Hz, \(channels) channels: not judged: \(reason)")
            break
          }
          #expect(
            abs(heard - 48_000) < 480,
            "\(rate) Hz, \(channels) channels: \(heard) frames heard (attempt \(attempt), jackd xruns \(device.serverXruns - serverXruns): late clients \(device.serverXrunClients(after: serverLines)))"
          )
          break
        }
      }
    }

    // MARK: The file under the player's feet

    /// `mv b.tape a.tape` under `tape scrub a.tape`: ← ← Enter must not check out a version of
    /// the old project in the new one (or, deleted, leave its -wal and -shm behind). Scrub says in one line that the path names another file,
    /// writes nothing, and exits 66 (as `tape watch` does). It used to say "checked out v…" and
    /// move the new file's head.
    @Test(arguments: ["replaced", "deleted"])
    func scrubNoticesItsFileReplaced(how: String) throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let other = try Workspace()
      let replacement = try RenderCommandTests.project(in: other)
      for gain in ["-1", "-2", "-3", "-4", "-5", "-6"] {
        try other.tape("track", "set", replacement, "t2", "--gain", gain)
      }
      let replacementHead = try other.head(of: replacement)
      let head = try space.head(of: file)
      let terminal = try Tmux(width: 100, height: 24)
      defer { terminal.kill() }
      let status = space.path("status")
      try terminal.start(
        "\(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)) 2> \(shellQuoted(space.path("errors"))); echo $? > \(shellQuoted(status + ".part")); mv \(shellQuoted(status + ".part")) \(shellQuoted(status)); sleep 60"
      )
      _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
      if how == "replaced" {
        #expect(rename(replacement, file) == 0)
      } else {
        try FileManager.default.removeItem(atPath: file)
      }
      try terminal.send("Left", "Left", "Enter")
      let deadline = Date().addingTimeInterval(10)
      while !FileManager.default.fileExists(atPath: status), Date() < deadline {
        Thread.sleep(forTimeInterval: 0.05)
      }
      // Scrub looks at its path every 200 ms: 10 s without an exit is a scrub that hung. What
      // it was doing, for whoever reads the failure (seen once in a CI run, not reproduced).
      guard FileManager.default.fileExists(atPath: status) else {
        let screen = (try? terminal.capture()) ?? "(no screen)"
        let said = (try? String(contentsOfFile: space.path("errors"), encoding: .utf8)) ?? ""
        let waits = Self.threadWaits(of: "scrub \(file)")
        Issue.record(
          "scrub did not exit within 10 s of its file being \(how): screen:\n\(screen)\nstderr: \(said)\nthreads: \(waits)"
        )
        return
      }
      Thread.sleep(forTimeInterval: 0.2)
      if how == "replaced" {
        #expect(
          try space.head(of: file) == replacementHead, "scrub wrote to the file moved over its own")
      } else {
        // Deleted: nothing of it is left behind (SQLite leaves its -wal and -shm).
        let left = try FileManager.default.contentsOfDirectory(atPath: space.url.path)
          .filter { $0.hasPrefix("song.tape") && !$0.hasSuffix("-cache") }
        #expect(left.isEmpty, "left behind: \(left)")
      }
      #expect(try String(contentsOfFile: status, encoding: .utf8) == "66\n")
      let errors = try String(contentsOfFile: space.path("errors"), encoding: .utf8)
      #expect(
        errors
          == "error: \(file) was deleted or replaced while it was scrubbed; nothing was written to it; scrub the new one\n"
      )
    }

    /// Where each thread of the process whose command line contains `command` waits
    /// (`/proc/PID/task/TID/wchan`, and its state), for a failure message.
    static func threadWaits(of command: String) -> String {
      let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
      for pid in processes where pid.allSatisfy(\.isNumber) {
        guard
          let line = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)
            .replacingOccurrences(of: "\0", with: " "),
          line.contains(command), !line.contains("sh -c"), !line.hasPrefix("tmux")
        else { continue }
        let tasks =
          (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.sorted().map { task in
          let wchan =
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/wchan", encoding: .utf8)) ?? "?"
          let stat =
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8)) ?? ""
          let state = stat.split(separator: ")").last?.split(separator: " ").first ?? "?"
          return "\(task) \(state) \(wchan)"
        }.joined(separator: ", ")
      }
      return "(no such process)"
    }

    /// A project deleted while it plays: one line says so, the play goes on with what it has,
    /// and no `-wal` or `-shm` of the deleted file is left behind. (It used to go silent, and
    /// leave both.) A replaced one, a renamed one (it was said to be deleted), or one whose
    /// log was removed, is said the same way.
    @Test(arguments: ["deleted", "replaced by another file", "log", "renamed"])
    func playNoticesItsFileGone(how: String) throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let (player, _, errors) = try startTape(["play", file, "--device", "null", "--loop"])
      // Playing and following: the log is there.
      let deadline = Date().addingTimeInterval(10)
      while FileManager.default.fileExists(atPath: file + "-wal") == false, Date() < deadline {
        Thread.sleep(forTimeInterval: 0.05)
      }
      Thread.sleep(forTimeInterval: 0.5)
      if how == "deleted" {
        try FileManager.default.removeItem(atPath: file)
      } else if how == "log" {
        try FileManager.default.removeItem(atPath: file + "-wal")
      } else if how == "renamed" {
        #expect(rename(file, space.path("moved.tape")) == 0)
      } else {
        let other = try Workspace()
        #expect(rename(try RenderCommandTests.project(in: other), file) == 0)
      }
      Thread.sleep(forTimeInterval: 1)
      #expect(player.isRunning, "the play ended")
      kill(player.processIdentifier, SIGTERM)
      player.waitUntilExit()
      let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      let lines = said.split(separator: "\n").filter { $0.contains("while it played") }
      #expect(
        lines == [
          "tape play: \(file) \(how == "log" ? "lost its log (\(file)-wal)" : how == "renamed" ? "was renamed to \(space.path("moved.tape"))" : "was \(how)") while it played; playing what was loaded, and no later edit will be heard"
        ], "\(said)")
      if how == "deleted" {
        let left = try FileManager.default.contentsOfDirectory(atPath: space.url.path)
          .filter { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") }
        #expect(left.isEmpty, "left behind: \(left)")
      }
    }

    // MARK: Job control and terminals

    /// `tape play song.tape &` from an interactive shell plays in the background: no keys, no
    /// status line, no change of the terminal's mode (which stopped it at once: "Stopped (tty
    /// output)"); `fg` gives it the keys, and Ctrl-Z then `bg` sends it back.
    @Test func playInTheBackground() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let terminal = try Tmux(width: 100, height: 24)
      defer { terminal.kill() }
      try terminal.start("PS1='$ ' exec bash --norc --noprofile -i")
      Thread.sleep(forTimeInterval: 0.5)
      try terminal.type(
        "stty -a > \(shellQuoted(space.path("before"))); \(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device null --loop &"
      )
      try terminal.send("Enter")
      Thread.sleep(forTimeInterval: 1.5)
      try terminal.type("jobs; stty -a > \(shellQuoted(space.path("after")))")
      try terminal.send("Enter")
      let screen = try terminal.waitFor { $0.contains("Running") || $0.contains("Stopped") }
      #expect(screen.contains("Running") && !screen.contains("Stopped"), "\(screen)")
      // `fg`: the keys and the status line; Ctrl-Z, then `bg`: it plays on in the background
      // (it was stopped again at once, from the background).
      try terminal.type("clear; fg")
      try terminal.send("Enter")
      _ = try terminal.waitFor(steady: false) { $0.contains("xruns") }
      try terminal.send("C-z")
      _ = try terminal.waitFor { $0.contains("Stopped") }
      try terminal.type("clear; bg; sleep 1; jobs")
      try terminal.send("Enter")
      let again = try terminal.waitFor { $0.contains("Running") || $0.contains("Stopped") }
      #expect(again.contains("Running") && !again.contains("Stopped"), "\(again)")
      try terminal.type("kill %1; wait; echo ended")
      try terminal.send("Enter")
      _ = try terminal.waitFor { $0.contains("\nended") }
      let before = try String(contentsOfFile: space.path("before"), encoding: .utf8)
      let after = try String(contentsOfFile: space.path("after"), encoding: .utf8)
      #expect(before == after)
      #expect(!screen.contains("xruns"), "a status line in the background:\n\(screen)")
    }

    /// A label that carries escape sequences (an imported file's name) is shown escaped on
    /// play's status line: it neither clears the screen nor sets the window's title. And one
    /// of wide characters (two columns each) is cut by columns: the status line never wraps.
    @Test func playsStatusLineEscapesAndMeasuresItsLabel() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let evil = space.path("evil\u{1B}[2J\u{1B}]2;PWNED\u{07}.wav")
      try FileManager.default.copyItem(
        atPath: TestAudio.path("speech-mono-48k-16.wav"), toPath: evil)
      try space.tape("import", file, evil)
      let terminal = try Tmux(width: 100, height: 10)
      defer { terminal.kill() }
      try terminal.start(
        "echo KEEP; \(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device null --loop 2>&1; sleep 60"
      )
      let screen = try terminal.waitFor(steady: false) { $0.contains("xruns") }
      Thread.sleep(forTimeInterval: 0.5)
      let later = try terminal.capture()
      try terminal.send("q")
      #expect(later.contains("KEEP"), "the screen was cleared:\n\(later)")
      #expect(screen.contains("evil\\u{1B}[2J"), "\(screen)")

      let wide = String(repeating: "声", count: 30)
      try space.tape("track", "set", file, "t1", "--name", wide)
      let narrow = try Tmux(width: 60, height: 10)
      defer { narrow.kill() }
      try narrow.start(
        "\(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device null --loop 2>&1; sleep 60"
      )
      _ = try narrow.waitFor(steady: false) { $0.contains("xruns") || $0.contains("声") }
      Thread.sleep(forTimeInterval: 0.5)
      let shown = try narrow.capture()
      try narrow.send("q")
      let lines = shown.split(separator: "\n").filter { $0.contains("声") }
      #expect(lines.count == 1 && lines.allSatisfy { $0.hasPrefix("playing ") }, "\(shown)")
    }

    /// Ctrl-Z, a wait longer than the device's stall limit (2 s), then `fg`: the play goes on
    /// where it was, three times over. The time stopped is not time the device took no audio. (It
    /// ended the play 4 times in 10: "the audio device went away… it took no audio for 2 s".)
    @Test func ctrlZAndForegroundResumeThePlay() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let device = try PacedDevice()
      try device.record(seconds: 30)
      let terminal = try Tmux(width: 120, height: 24)
      defer { terminal.kill() }
      try terminal.start("PS1='$ ' exec bash --norc --noprofile -i")
      Thread.sleep(forTimeInterval: 0.5)
      let environment = device.environment.map { shellQuoted("\($0.key)=\($0.value)") }
        .joined(separator: " ")
      try terminal.type(
        "env \(environment) \(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device jackrec --loop"
      )
      try terminal.send("Enter")
      _ = try terminal.waitFor(steady: false) { $0.contains("xruns") }
      for _ in 1...3 {
        Thread.sleep(forTimeInterval: 1)
        try terminal.send("C-z")
        _ = try terminal.waitFor { $0.contains("Stopped") }
        Thread.sleep(forTimeInterval: 3)
        try terminal.type("clear; fg")
        try terminal.send("Enter")
        _ = try terminal.waitFor(steady: false) { $0.contains("xruns") }
        Thread.sleep(forTimeInterval: 1)
        let screen = try terminal.capture()
        #expect(!screen.contains("went away") && !screen.contains("played "), "\(screen)")
        let first = try terminal.capture().split(separator: "\n").last { $0.hasPrefix("playing ") }
        Thread.sleep(forTimeInterval: 0.5)
        let second = try terminal.capture().split(separator: "\n").last { $0.hasPrefix("playing ") }
        #expect(first != nil && first != second, "the play is not moving on:\n\(screen)")
      }
      try terminal.send("q")
      _ = try terminal.waitFor { $0.contains("played ") }
      try terminal.type("echo status $?")
      try terminal.send("Enter")
      let ended = try terminal.waitFor { $0.contains("status ") }
      #expect(ended.contains("status 0"), "\(ended)")
    }

    // MARK: Every wait interruptible

    /// A project whose only source is 20 minutes at 44.1 kHz (so that decoding it into the
    /// cache, resampled to 48 kHz, takes seconds), with that decoded audio removed; its clip
    /// plays the source from 19:00, which a play (decoding a resampled source from its start)
    /// must reach before its first sound.
    static func undecodedProject(in space: Workspace) throws -> (file: String, cache: String) {
      let frames = 44_100 * 60 * 20
      var header = Data("RIFF".utf8)
      func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) }
      }
      append(UInt32(36 + frames * 2))
      header.append(contentsOf: Data("WAVEfmt ".utf8))
      append(UInt32(16))
      append(UInt16(1))
      append(UInt16(1))
      append(UInt32(44_100))
      append(UInt32(44_100 * 2))
      append(UInt16(2))
      append(UInt16(16))
      header.append(contentsOf: Data("data".utf8))
      append(UInt32(frames * 2))
      var samples = Data(count: frames * 2)
      samples[0] = 0x40
      let long = space.path("long.wav")
      try (header + samples).write(to: URL(fileURLWithPath: long))
      let file = space.path("long.tape")
      try space.tape("new", file)
      try space.tape("import", file, long)
      try space.tape("track", "add", file, "Long")
      try space.tape(
        "clip", "add", file, "t1", "s1", "--at", "0", "--from", "19:00", "--length", "2s")
      let cache = file + "-cache"
      try FileManager.default.removeItem(atPath: cache)
      return (file, cache)
    }

    /// Waits (up to 20 s) for `cache` to appear: the decode has begun.
    static func waitForDecode(_ cache: String) {
      let deadline = Date().addingTimeInterval(20)
      while !FileManager.default.fileExists(atPath: cache), Date() < deadline {
        Thread.sleep(forTimeInterval: 0.01)
      }
    }

    /// The decoded entries in `cache` (none: a stopped decode kept nothing).
    static func entries(_ cache: String) -> [String] {
      ((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []).filter {
        $0.hasSuffix(".f32")
      }
    }

    /// SIGTERM and Ctrl-C while `play` decodes a long source before its first sound: the
    /// decode stops at once and the process ends with that signal, saying so, keeping no cache
    /// entry; a later play plays. (Both waited for the decode to finish: 6–8 s for a 3-hour
    /// source.)
    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalStopsPlayWhileItDecodes(signal: Int32) throws {
      let space = try Workspace()
      let (file, cache) = try Self.undecodedProject(in: space)
      let (player, _, errors) = try startTape(["play", file, "--device", "null"])
      Self.waitForDecode(cache)
      let sent = ContinuousClock.now
      kill(player.processIdentifier, signal)
      player.waitUntilExit()
      print("play ended \(ContinuousClock.now - sent) after signal \(signal), during a decode")
      #expect(player.terminationReason == .uncaughtSignal && player.terminationStatus == signal)
      let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      #expect(
        said.hasSuffix(
          "tape play: stopped before the first sound, while decoding; nothing was played\n"),
        "\(said)")
      #expect(Self.entries(cache).isEmpty, "the decode went on to the end after the signal")
      let again = try space.tape("play", file, "--device", "null", "--json")
      let report = try #require(try parseJSON(again.stdout) as? [String: Any])
      #expect(report["frames"] as? Int == 96_000)
    }

    /// `q` while space decodes a version in `scrub`: the decode stops and scrub quits, keeping
    /// no cache entry. (The screen froze and `q` waited for the decode, ~6.5 s.)
    @Test func qStopsScrubWhileItDecodes() throws {
      let space = try Workspace()
      let (file, cache) = try Self.undecodedProject(in: space)
      let head = try space.head(of: file)
      let terminal = try Tmux(width: 100, height: 24)
      defer { terminal.kill() }
      let status = space.path("status")
      try terminal.start(
        "\(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)) --device null; echo $? > \(shellQuoted(status + ".part")); mv \(shellQuoted(status + ".part")) \(shellQuoted(status)); sleep 60"
      )
      _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
      try terminal.send("Space")
      Self.waitForDecode(cache)
      let sent = ContinuousClock.now
      try terminal.send("q")
      let deadline = Date().addingTimeInterval(20)
      while !FileManager.default.fileExists(atPath: status), Date() < deadline {
        Thread.sleep(forTimeInterval: 0.01)
      }
      print("scrub ended \(ContinuousClock.now - sent) after q, during a decode")
      #expect(try String(contentsOfFile: status, encoding: .utf8) == "0\n")
      #expect(Self.entries(cache).isEmpty, "the decode went on to the end after q")
    }

    /// `q` while `play` decodes its first version on a terminal: the decode stops, one line
    /// says so, exit 0, no cache entry, the terminal as it was. (`q` was read only once the
    /// decode had finished.)
    @Test func qStopsPlayWhileItDecodes() throws {
      let space = try Workspace()
      let (file, cache) = try Self.undecodedProject(in: space)
      let terminal = try Tmux(width: 150, height: 24)
      defer { terminal.kill() }
      let status = space.path("status")
      try terminal.start(
        "stty -a > \(shellQuoted(space.path("before"))); \(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device null; echo $? > \(shellQuoted(status)); stty -a > \(shellQuoted(space.path("after.part"))); mv \(shellQuoted(space.path("after.part"))) \(shellQuoted(space.path("after"))); sleep 60"
      )
      Self.waitForDecode(cache)
      try terminal.send("q")
      let deadline = Date().addingTimeInterval(20)
      while !FileManager.default.fileExists(atPath: space.path("after")), Date() < deadline {
        Thread.sleep(forTimeInterval: 0.01)
      }
      Thread.sleep(forTimeInterval: 0.2)
      #expect(try String(contentsOfFile: status, encoding: .utf8) == "0\n")
      #expect(Self.entries(cache).isEmpty, "the decode went on to the end after q")
      #expect(
        try terminal.capture().contains(
          "tape play: decoding source s1 was stopped; nothing of it was kept in the cache"))
      let before = try String(contentsOfFile: space.path("before"), encoding: .utf8)
      let after = try String(contentsOfFile: space.path("after"), encoding: .utf8)
      #expect(before == after)
    }

    /// Enter while another process holds the write lock (for longer than the busy timeout,
    /// 60 s here): the footer says the project is busy, and `q` cancels the checkout and quits
    /// at once, the head where it was. (The screen froze and `q` waited the whole timeout.)
    @Test func qCancelsACheckoutWaitingForTheLock() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let head = try space.head(of: file)
      let (holder, out, _) = try startTape(
        ["hold-lock", file, "--seconds", "60"], executable: TapeBinary.testing)
      defer {
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
      }
      #expect(String(decoding: out.fileHandleForReading.availableData, as: UTF8.self) == "locked\n")
      let terminal = try Tmux(width: 160, height: 24)
      defer { terminal.kill() }
      let status = space.path("status")
      try terminal.start(
        "TAPE_BUSY_TIMEOUT=60 \(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)); echo $? > \(shellQuoted(status + ".part")); mv \(shellQuoted(status + ".part")) \(shellQuoted(status)); sleep 60"
      )
      _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
      try terminal.send("Left")
      _ = try terminal.waitFor { $0.hasPrefix("v\(head - 1) ") }
      try terminal.send("Enter")
      _ = try terminal.waitFor(steady: false) { $0.contains("the project is busy") }
      let sent = ContinuousClock.now
      try terminal.send("q")
      let deadline = Date().addingTimeInterval(20)
      while !FileManager.default.fileExists(atPath: status), Date() < deadline {
        Thread.sleep(forTimeInterval: 0.01)
      }
      print("scrub ended \(ContinuousClock.now - sent) after q, during a busy write")
      #expect(FileManager.default.fileExists(atPath: status), "q waited for the lock")
      kill(holder.processIdentifier, SIGKILL)
      holder.waitUntilExit()
      #expect(try space.head(of: file) == head)
    }

    /// 20 × ← pressed at once step back 20 versions, animating only the last step: they used
    /// to take 150 ms each (at least 2.5 s in sleeps alone for 20), now about one animation.
    @Test func keysPressedTogetherStepWithOneAnimation() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      do {
        let store = try TimelineStore.open(at: file)
        defer { try? store.close() }
        for step in 1...20 {
          try store.commit(label: "Move c2 \(step)") { project, _ in
            try project.moveClip(Clip.ID(2), to: FramePosition(Int64(step) * 4_800), track: nil)
          }
        }
      }
      let head = try space.head(of: file)
      let terminal = try Tmux(width: 100, height: 24)
      defer { terminal.kill() }
      try terminal.start("\(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)); sleep 60")
      _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
      let sent = ContinuousClock.now
      try terminal.send(Array(repeating: "Left", count: 20))
      _ = try terminal.waitFor(steady: false) { $0.hasPrefix("v\(head - 20) ") }
      let took = ContinuousClock.now - sent
      print("20 steps took \(took)")
      #expect(took < .seconds(2), "20 steps took \(took)")
      Thread.sleep(forTimeInterval: 0.5)
      #expect(try terminal.capture().hasPrefix("v\(head - 20) "), "more than 20 steps")
      try terminal.send("q")
    }

    // MARK: Audio

    /// A loop shorter than its wrap's fades (out over 256 frames at 48 kHz, in over 256) is
    /// refused in one line instead of clicking at every wrap (a 400-frame loop of a sine
    /// dropped from 0.097 to 0 at each); one just long enough plays.
    @Test func aLoopShorterThanItsWrapFadesIsRefused() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let (short, _, errors) = try startTape(
        ["play", file, "--device", "null", "--loop", "--from", "1s", "--to", "48400f"])
      let deadline = Date().addingTimeInterval(10)
      while short.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
      if short.isRunning { kill(short.processIdentifier, SIGKILL) }
      short.waitUntilExit()
      let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      #expect(short.terminationReason == .exit && short.terminationStatus == 64, "\(said)")
      #expect(
        said
          == "error: --loop over 400 frames (8.3 ms) is shorter than the 513 frames (10.7 ms) its wrap needs to fade out and in without a click; loop a longer range, or play it without --loop\n"
      )
      let (long, _, _) = try startTape(
        ["play", file, "--device", "null", "--loop", "--from", "1s", "--to", "48513f"])
      Thread.sleep(forTimeInterval: 1)
      #expect(long.isRunning)
      kill(long.processIdentifier, SIGINT)
      long.waitUntilExit()
      #expect(long.terminationReason == .uncaughtSignal && long.terminationStatus == SIGINT)
    }

    /// While paused, the status line shows the version the head is at once another shell
    /// commits, not the one heard before the pause (it showed v6 while the head was v26 until
    /// the play resumed).
    @Test func pausedStatusShowsTheHeadsVersion() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let head = try #require(
        (try parseJSON(space.tape("history", file, "--json").stdout) as? [String: Any])?["head"]
          as? Int)
      let terminal = try Tmux(width: 200, height: 10)
      defer { terminal.kill() }
      try terminal.start(
        "\(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device null --loop 2>&1; sleep 60"
      )
      _ = try terminal.waitFor(steady: false) {
        $0.contains("playing ") && $0.contains("v\(head) ")
      }
      try terminal.send(" ")
      _ = try terminal.waitFor(steady: false) { $0.contains("paused ") }
      try space.tape("track", "set", file, "t1", "--gain", "-7")
      try space.tape("track", "set", file, "t1", "--gain", "-8")
      let screen = try terminal.waitFor(steady: false) {
        $0.contains("paused ") && $0.contains("v\(head + 2) ")
      }
      try terminal.send("q")
      let status = screen.split(separator: "\n").last { $0.contains("paused ") } ?? ""
      #expect(status.contains("v\(head + 2) "), "\(screen)")
    }

    /// Play's `l` key refuses a loop too short for its wrap's fades in one line, as `--loop`
    /// does (it looped it, clicking at every wrap): here a loop to the project's end, which
    /// another shell's cut brought 240 frames after `--from`.
    @Test func theLoopKeyRefusesATooShortLoop() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let terminal = try Tmux(width: 250, height: 10)
      defer { terminal.kill() }
      try terminal.start(
        "\(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device null --loop --from 2s 2>&1; sleep 60"
      )
      _ = try terminal.waitFor(steady: false) { $0.contains("[loop]") }
      try terminal.send(" ")
      _ = try terminal.waitFor(steady: false) { $0.contains("paused ") }
      try terminal.send("l")
      _ = try terminal.waitFor(steady: false) { $0.contains("paused ") && !$0.contains("[loop]") }
      try space.tape("cut", file, "--from", "2.005s", "--to", "60s")
      let head = try space.head(of: file)
      _ = try terminal.waitFor(steady: false) { $0.contains("v\(head) ") }
      try terminal.send("l")
      let screen = try terminal.waitFor(steady: false) { $0.contains("l: a loop over") }
      Thread.sleep(forTimeInterval: 0.3)
      let later = try terminal.capture()
      try terminal.send("q")
      #expect(
        screen.contains(
          "l: a loop over 240 frames (5.0 ms) is shorter than the 513 frames (10.7 ms) its wrap needs to fade out and in without a click; play a longer range to loop it"
        ), "\(screen)")
      #expect(!later.contains("[loop]"), "\(later)")
    }

    /// In a terminal one column wide the status line is cut to that column (it was not cut
    /// at all below two columns, and wrapped down the screen on every redraw).
    @Test func aOneColumnTerminalsStatusLineIsCut() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let terminal = try Tmux(width: 1, height: 10)
      defer { terminal.kill() }
      try terminal.start(
        "\(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device null --loop 2>&1; sleep 60"
      )
      _ = try terminal.waitFor(steady: false) { $0.split(separator: "\n").last == "p" }
      Thread.sleep(forTimeInterval: 0.5)
      let screen = try terminal.capture()
      try terminal.send("q")
      #expect(
        !screen.filter { $0 != "\n" }.contains("quit)"), "the status line wrapped:\n\(screen)")
    }

    /// A second `tape play` on a device another one of this user's plays on says so in one
    /// line (the device mixes both: it was heard over the first without a word); once the first
    /// has ended, nothing is said.
    @Test func aSecondPlayOnTheDeviceIsSaid() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let runtime = space.path("runtime")
      try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
      let environment = ["XDG_RUNTIME_DIR": runtime, "NO_COLOR": "1"]
      let (first, _, _) = try startTape(
        ["play", file, "--device", "null", "--loop"], environment: environment)
      defer {
        if first.isRunning { kill(first.processIdentifier, SIGKILL) }
      }
      // The first has claimed the device once its claim file holds its pid.
      let claims = { () -> String in
        ((try? FileManager.default.contentsOfDirectory(atPath: runtime + "/tape")) ?? [])
          .compactMap { try? String(contentsOfFile: runtime + "/tape/" + $0, encoding: .utf8) }
          .joined()
      }
      let deadline = Date().addingTimeInterval(60)
      while !claims().contains("pid \(first.processIdentifier)"), Date() < deadline {
        Thread.sleep(forTimeInterval: 0.05)
      }
      let second = try space.tape(
        "play", file, "--device", "null", "--to", "0.2s", environment: environment)
      #expect(
        second.stderr.contains(
          "tape play: null is played by another tape play too (pid \(first.processIdentifier): \(file)): both are heard\n"
        ), "\(second.stderr)")
      kill(first.processIdentifier, SIGTERM)
      first.waitUntilExit()
      let alone = try space.tape(
        "play", file, "--device", "null", "--to", "0.2s", environment: environment)
      #expect(!alone.stderr.contains("another tape play"), "\(alone.stderr)")
    }

    /// A terminal made narrower while it plays (twice) shows one status line, not a stale copy
    /// of the wider one above it per shrink (a terminal that reflows wraps the old line).
    @Test func aNarrowerTerminalKeepsOneStatusLine() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let terminal = try Tmux(width: 150, height: 12)
      defer { terminal.kill() }
      try terminal.start(
        "\(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device null --loop; sleep 60"
      )
      _ = try terminal.waitFor(steady: false) { $0.contains("xruns") }
      for width in [100, 60] {
        try terminal.resize(width: width)
        Thread.sleep(forTimeInterval: 0.6)
      }
      let screen = try terminal.capture()
      try terminal.send("q")
      let statusLines = screen.split(separator: "\n").filter {
        $0.hasPrefix("playing ") || $0.contains("xruns")
      }
      #expect(statusLines.count == 1, "\(screen)")
    }
  }
}
