import Foundation
import Testing

@Suite("Commands stopped by a signal leave nothing behind")
struct InterruptionTests {
  /// SIGTERM, SIGINT or SIGHUP at random moments of `tape new` (10 of 30 runs left a
  /// `.song.tape.tape-XXXXXX/` folder with the database and its side files, and exited 143
  /// with no `error:` line): each run either creates a whole project, or is stopped with one
  /// line, by that signal, leaving nothing.
  @Test func aStoppedNewLeavesNothing() throws {
    let ws = try Workspace()
    var rng = SystemRandomNumberGenerator()
    var stopped = 0
    for round in 0..<30 {
      let signal = [SIGTERM, SIGINT, SIGHUP][round % 3]
      let name = "s\(round).tape"
      let (process, _, errors) = try startTape(["new", ws.path(name)])
      usleep(UInt32.random(in: 0...25_000, using: &rng))
      kill(process.processIdentifier, signal)
      process.waitUntilExit()
      let message = String(
        decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      let left = listing(ws.url.path).filter {
        $0.hasPrefix("s\(round).") || $0.hasPrefix(".s\(round).")
      }
      if process.terminationReason == .exit {
        #expect(process.terminationStatus == 0, "round \(round): \(message)")
        #expect(left == [name], "round \(round)")
        continue
      }
      stopped += 1
      #expect(process.terminationStatus == signal, "round \(round)")
      if message == "error: interrupted; \(ws.path(name)) was created all the same\n" {
        #expect(left.contains(name), "round \(round)")
        continue
      }
      #expect(
        message == "error: new interrupted; \(ws.path(name)) was not created\n", "round \(round)")
      #expect(left == [], "round \(round)")
    }
    #expect(stopped >= 10, "only \(stopped) of 30 runs were stopped")
  }

  /// `kill -9` while a render writes under a temporary name (the fallback for file systems
  /// without O_TMPFILE; with O_TMPFILE, between `linkat` and `rename`) leaves
  /// `.mix.wav.tape-…`: the name says whose it is, and the next render to that name removes
  /// it, but not one of a process still running, of another output, or of another user.
  @Test func theNextRenderRemovesAKilledRendersTemporary() throws {
    let ws = try Workspace()
    let song = try RenderCommandTests.project(in: ws)
    let mix = ws.path("mix.wav")
    let (process, _, _) = try startTape(
      ["render", song, "-o", mix, "--to", "2:00:00"], environment: ["TAPE_NO_TMPFILE": "1"])
    // Until the render has named its temporary: up to a minute (2 s was a guess a loaded
    // machine could overrun, decoding the sources into the cache first).
    var left: [String] = []
    let deadline = Date().addingTimeInterval(60)
    while left.isEmpty, Date() < deadline {
      usleep(10_000)
      left = listing(ws.url.path).filter(isTemporaryName)
    }
    usleep(100_000)
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    let stale = try #require(left.first)
    #expect(stale.hasPrefix(".mix.wav.tape-"))
    // Copies that must stay: a running process's (this one's), another output's, another
    // user's (as root; its process is the killed one).
    let fields = stale.dropFirst(".mix.wav.tape-".count).split(separator: "-")
    #expect(fields.count == 3)
    let running = ".mix.wav.tape-\(fields[0])-\(fields[1])-\(getpid())"
    let other = ".other.wav.tape-\(fields.joined(separator: "-"))"
    let anothers = ".mix.wav.tape-0000000000000000-\(fields[1])-\(fields[2])"
    let kept = [running, other] + (isRoot ? [anothers] : [])
    for name in kept {
      try FileManager.default.copyItem(atPath: ws.path(stale), toPath: ws.path(name))
    }
    if isRoot { chown(ws.path(anothers), 65_534, 65_534) }
    try ws.tape("render", song, "-o", mix)
    #expect(listing(ws.url.path).filter(isTemporaryName).sorted() == kept.sorted())
  }
}
