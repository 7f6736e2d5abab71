import Foundation
import Testing

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

    /// Every project rate and channel count plays on the 48 kHz JACK device (period 256) with
    /// default options: a period is chosen that the device takes through the rate converter
    /// (at 44.1 kHz, 256 converts to 278.6 JACK frames, which it refuses). One second is
    /// heard, converted to 48 kHz, and the player misses no period. (It used to be refused:
    /// "does not take 44100 Hz", or "does not take 1 channels" for mono.)
    @Test func everyRateAndChannelCountPlaysWithDefaultOptions() throws {
      let space = try Workspace()
      let device = try PacedDevice()
      let cases = [(44_100, 2), (48_000, 1), (44_100, 1), (192_000, 2), (22_050, 2), (32_000, 1)]
      for (rate, channels) in cases {
        let file = try Self.sine(in: space, rate: rate, channels: channels)
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
        #expect(
          abs(heard - 48_000) < 480, "\(rate) Hz, \(channels) channels: \(heard) frames heard")
      }
    }

    // MARK: The file under the player's feet

    /// `mv b.tape a.tape` under `tape scrub a.tape`: ← ← Enter must not check out a version of
    /// the old project in the new one. Scrub says in one line that the path names another file,
    /// writes nothing, and exits 66 (as `tape watch` does). It used to say "checked out v…" and
    /// move the new file's head.
    @Test func scrubNoticesItsFileReplaced() throws {
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
        "\(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)) 2> \(shellQuoted(space.path("errors"))); echo $? > \(shellQuoted(status)); sleep 60"
      )
      _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
      #expect(rename(replacement, file) == 0)
      try terminal.send("Left", "Left", "Enter")
      let deadline = Date().addingTimeInterval(10)
      while !FileManager.default.fileExists(atPath: status), Date() < deadline {
        Thread.sleep(forTimeInterval: 0.05)
      }
      Thread.sleep(forTimeInterval: 0.2)
      #expect(
        try space.head(of: file) == replacementHead, "scrub wrote to the file moved over its own")
      #expect(try String(contentsOfFile: status, encoding: .utf8) == "66\n")
      let errors = try String(contentsOfFile: space.path("errors"), encoding: .utf8)
      #expect(
        errors
          == "error: \(file) was deleted or replaced while it was scrubbed; nothing was written to it; scrub the new one\n"
      )
    }

    /// Ctrl-Z, a wait longer than the device's stall limit (2 s), then `fg`: the play goes on
    /// where it was, three times over. The time stopped is not time the device took no audio. (It
    /// ended the play 4 times in 10: "the audio device went away… it took no audio for 2 s".)
    @Test func ctrlZAndForegroundResumeThePlay() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let device = try PacedDevice()
      try device.record(seconds: 60)
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
  }
}
