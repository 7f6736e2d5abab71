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
}
