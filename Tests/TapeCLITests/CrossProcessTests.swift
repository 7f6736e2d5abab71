import Foundation
import Testing
import Timeline
import TimelineStore

@Suite("Other processes", .timeLimit(.minutes(5)))
struct CrossProcessTests {
  /// An edit made by `tape` in another process reaches this process's subscribers through the
  /// same sequence as its own edits.
  @Test func anEditInAnotherProcessIsObserved() async throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("track", "add", song, "Voice")
    let store = try TimelineStore.open(at: song)
    var updates = store.updates().makeAsyncIterator()
    let first = try #require(await updates.next())
    #expect(first.version == 2)

    try ws.tape("track", "set", song, "t1", "--gain", "-6", "--pan", "0.5")
    let update = try #require(await updates.next())
    #expect(update.version == 3)
    #expect(update.project.track(Track.ID(1))?.gain == Gain(decibels: -6))
    #expect(update.diff.tracks.map(\.id) == [Track.ID(1)])
    #expect(update.diff.tracks.first?.before?.pan == 0)
    #expect(update.diff.tracks.first?.after?.pan == 0.5)

    try ws.tape("undo", song)
    let undone = try #require(await updates.next())
    #expect(undone.version == 2)
    #expect(undone.project == first.project)
  }

  /// A second store opened and closed in this process (what `tape scrub`'s Enter does to check
  /// out) leaves a follower hearing every later edit from other processes. Opening a store
  /// used to read the file's header through a descriptor it then closed, which released this
  /// process's SQLite locks: the next editing process deleted the log under the follower,
  /// which never heard another commit.
  @Test func aSecondStoreInThisProcessLeavesTheFollowerHearing() async throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("track", "add", song, "Voice")
    let follower = try TimelineStore.open(at: song, access: .follow)
    var updates = follower.updates().makeAsyncIterator()
    _ = await updates.next()
    let writer = try TimelineStore.open(at: song)
    try writer.commit(label: "Rename") { project, _ in
      try project.setTrack(Track.ID(1), name: "Lead")
    }
    try writer.close()
    for gain in ["-1", "-2", "-3", "-4"] {
      try ws.tape("track", "set", song, "t1", "--gain", gain)
      let expected = Gain(decibels: Double(gain)!)
      let deadline = ContinuousClock.now + .seconds(5)
      while follower.snapshot.project.track(Track.ID(1))?.gain != expected,
        ContinuousClock.now < deadline
      {
        try await Task.sleep(for: .milliseconds(20))
      }
      #expect(
        follower.snapshot.project.track(Track.ID(1))?.gain == expected,
        "the follower stopped hearing at gain \(gain)")
    }
    #expect(FileManager.default.fileExists(atPath: song + "-wal"))
  }

  /// A child process commits in a loop and is killed with SIGKILL at random moments. After each
  /// kill the file passes SQLite's integrity check, every acknowledged operation is there, the
  /// head is the last acknowledged version or the one in flight, undo back to version 1 works,
  /// and every history block equals the versions it stands for (`tape-testing verify`). The loop
  /// also checks out far versions (600 clips each way), which are kept pending: killed during
  /// one, the head is where it went or where it was, and the pending change the file keeps is
  /// what history says (`verify`'s `pendingMoveMatches`).
  @Test func killingAWriterLosesNothingItAcknowledged() throws {
    let ws = try Workspace()
    let song = ws.path("crash.tape")
    try ws.tape("new", song)
    let kills = Int(ProcessInfo.processInfo.environment["TAPE_CRASH_KILLS"] ?? "") ?? 15
    var rng = SystemRandomNumberGenerator()
    var acknowledgedCommits = 0
    var farCheckouts = 0
    var killedDuringFarCheckouts = 0
    var leftPending = 0
    for round in 0..<kills {
      let lines = try CrashRound.run(
        song: song, killAfter: .milliseconds(Int.random(in: 30...400, using: &rng)))
      let verify = try TapeBinary.run(TapeBinary.testing, ["verify", song])
      #expect(verify.status == 0, "round \(round): \(verify.stdout) \(verify.stderr)")
      if let report = try? parseJSON(verify.stdout) as? [String: Any],
        (report["pendingMoveRows"] as? Int ?? 0) > 0
      {
        leftPending += 1
      }
      let history = try #require(
        try parseJSON(ws.tape("history", song, "--json").stdout) as? [String: Any])
      let head = try #require(history["head"] as? Int)
      let versions = try #require(history["versions"] as? [[String: Any]])
      let parents = Dictionary(
        uniqueKeysWithValues: versions.map { ($0["version"] as! Int, $0["parent"] as? Int) })
      for line in lines where line.hasPrefix("commit ") {
        let version = Int(line.dropFirst(7))!
        #expect(parents.keys.contains(version), "round \(round): acknowledged \(line) is missing")
        acknowledgedCommits += 1
      }
      if let last = lines.last, let lastVersion = Int(last.split(separator: " ")[1]) {
        if last.hasPrefix("toward ") {
          // Killed during a far checkout (kept pending): there, or where it started.
          let started = lines.dropLast().last.flatMap { Int($0.split(separator: " ")[1]) }
          #expect(
            head == lastVersion || head == started,
            "round \(round): head \(head) after '\(last)', from \(started.map(String.init) ?? "?")")
          killedDuringFarCheckouts += 1
        } else {
          let inFlight = parents[head] == lastVersion || parents[lastVersion] == head
          #expect(
            head == lastVersion || inFlight,
            "round \(round): head \(head) after acknowledging '\(last)'")
        }
      }
      farCheckouts += lines.filter { $0.hasPrefix("toward ") }.count
    }
    #expect(acknowledgedCommits > kills)
    #expect(farCheckouts > 0, "no round reached a far checkout")
    print(
      "crash test: \(kills) kills, \(acknowledgedCommits) acknowledged commits, all present; \(farCheckouts) far checkouts, \(killedDuringFarCheckouts) kills during one, \(leftPending) files left with a move pending"
    )
  }
}

/// One run of `tape-testing commit-loop`, killed with SIGKILL after a delay; returns the lines it
/// acknowledged.
enum CrashRound {
  /// The delay counts from the start, but the kill waits for two acknowledgements: a loaded
  /// machine may take longer than the delay to start the loop, and rounds that acknowledged
  /// nothing then left `acknowledgedCommits > kills` to chance.
  static func run(song: String, killAfter delay: Duration) throws -> [String] {
    let started = ContinuousClock.now
    let process = Process()
    process.executableURL = TapeBinary.testing
    process.arguments = ["commit-loop", song]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    // Never wait forever for a loop that does not get going: killed, its output ends.
    let pid = process.processIdentifier
    let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
    let reader = pipe.fileHandleForReading
    var output = Data()
    while output.count(where: { $0 == UInt8(ascii: "\n") }) < 2 {
      let chunk = reader.availableData
      if chunk.isEmpty { break }
      output.append(chunk)
    }
    watchdog.cancel()
    let left = delay - (ContinuousClock.now - started)
    if left > .zero {
      Thread.sleep(
        forTimeInterval: Double(left.components.attoseconds) / 1e18
          + Double(left.components.seconds))
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    output.append(reader.readDataToEndOfFile())
    // A line cut off by the kill is not an acknowledgement.
    return String(decoding: output, as: UTF8.self)
      .split(separator: "\n", omittingEmptySubsequences: true)
      .filter { $0.split(separator: " ").count == 2 && Int($0.split(separator: " ")[1]) != nil }
      .map(String.init)
  }
}
