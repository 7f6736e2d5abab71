import Foundation
import Testing

/// `tape record --monitor` on the paced JACK device: a `tape play` of clicks feeds the
/// recorder's capture ports; jack_rec records, side by side, the clicks as played (channel
/// 1) and the recorder's monitor output (channel 2). The monitored clicks are the played
/// ones, later by the latency the summary states, within a capture period.
extension ProcessHeavyTests.RecordTests {
  @Test func theMonitorPlaysTheInputLaterByItsStatedLatency() throws {
    for attempt in 1...2 {
      let space = try Workspace()
      let song = try Self.clickProject(space)
      let judged = try Self.monitored(
        space: space, clicks: song,
        recorderArguments: [
          "record", song, "Voice", "--device", "mic", "--monitor", "--duration", "12s",
        ], attempt: attempt)
      if judged { return }
    }
  }

  /// With --play, the monitor is mixed into the play: an overdub of an empty project (it plays
  /// silence to 12 s) hears the clicks it captures as the monitor without --play does.
  @Test func withPlayTheMonitorIsMixedIntoThePlay() throws {
    for attempt in 1...2 {
      let space = try Workspace()
      let clicks = try Self.clickProject(space)
      let empty = space.path("empty.tape")
      try space.tape("new", empty, "--rate", "48000", "--channels", "2")
      try space.tape("track", "add", empty, "Voice")
      let judged = try Self.monitored(
        space: space, clicks: clicks,
        recorderArguments: [
          "record", empty, "Voice", "--play", "--to", "12s", "--device", "mic", "--monitor",
        ], attempt: attempt)
      if judged { return }
    }
  }

  /// Runs the recorder (`recorderArguments`, monitoring on `mic`) while `tape play` plays the
  /// project `clicks` into its capture, jack_rec recording both; checks the monitored clicks
  /// against the played ones and the stated latency. False (nothing judged) when the test is
  /// to run again in a fresh workspace: jackd lost cycles of its own on the first attempt while
  /// the recorder counted no overrun (a loaded machine: a CI run heard 7 of 8 clicks, delays off
  /// by a server period), as the other paced tests do (``PacedDevice/verdict``).
  ///
  /// The clicks go through `jack_thru` (``PacedDevice/startLoopback()``), to which the PCMs
  /// join themselves as they open: `src` plays into it, `mic` captures from it, and jack_rec
  /// records it (channel 1) beside what `mic` plays (channel 2), all in the same cycle. Nothing
  /// is joined by the test, and jack_rec records until the recorder and the player are done:
  /// no window of time a slow start on a loaded machine could miss (before, a fixed 30 s
  /// recording and ports joined by polling jack_lsp lost clicks under load).
  static func monitored(
    space: Workspace, clicks song: String, recorderArguments: [String], attempt: Int
  ) throws -> Bool {
    // 256-frame cycles: the measured delay is the stated one plus a cycle of the server (the
    // jack PCM's own), which must stay within the tolerance of a capture period.
    let device = try PacedDevice()
    try device.startLoopback()
    try device.definePCM(
      """
      pcm.src {
        type jack
        playback_ports { 0 thru:input_1 1 thru:input_2 }
      }
      pcm.mic {
        type jack
        playback_ports { 0 jackrec:input2 1 jackrec:input2 }
        capture_ports { 0 thru:output_1 1 thru:output_2 }
      }
      """)
    let counter = try allocationCounter(in: space)
    // jack_rec, started first, on the loop's first output (the clicks as played, one channel
    // of them) and a silent port; `mic` joins its second input (the monitor, both channels
    // summed: the same clicks at twice the level, under full scale). It records until it is
    // killed (at most 120 s, its ring holding them).
    try device.record(seconds: 120, from: ["thru:output_1", "system:capture_2"])
    let captured = device.capture
    // The recorder's capture ports, joined to the loop, are awaited by one client that stays
    // open until the recorder is done (no jack_lsp: ``PacedDevice/watchPorts(_:count:connected:)``).
    let watch = try device.watchPorts(#"^tape\.C\."#, count: 2, connected: true)
    defer { watch.close() }
    // The recorder, monitoring on `mic` (its capture and its output).
    let recorder = Process()
    recorder.executableURL = TapeBinary.url
    recorder.arguments = recorderArguments
    var environment = ProcessInfo.processInfo.environment
    environment.merge(device.environment) { $1 }
    environment["LD_PRELOAD"] = counter
    environment["TAPE_ALLOC_REPORT"] = space.path("allocations")
    recorder.environment = environment
    let log = space.path("record.log")
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    recorder.standardError = FileHandle(forWritingAtPath: log)
    recorder.standardOutput = FileHandle.nullDevice
    recorder.standardInput = FileHandle.nullDevice
    try recorder.run()
    defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
    // The clicks start once the recorder captures (its capture ports exist: `mic` joined
    // them to the loop as it opened).
    try watch.wait(while: { recorder.isRunning })
    let player = Process()
    player.executableURL = TapeBinary.url
    player.arguments = ["play", song, "--device", "src"]
    player.environment = device.environment
    player.standardOutput = FileHandle.nullDevice
    player.standardError = FileHandle.nullDevice
    player.standardInput = FileHandle.nullDevice
    try player.run()
    defer { if player.isRunning { kill(player.processIdentifier, SIGKILL) } }
    player.waitUntilExit()
    recorder.waitUntilExit()
    // What the monitor played last reached jack_rec's ring in a cycle: a second later the
    // file has it.
    Thread.sleep(forTimeInterval: 1)
    device.stopRecording()
    let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    #expect(recorder.terminationStatus == 0, "\(said)")
    let stated = try #require(
      said.firstMatch(of: /monitored on mic: latency (\d+) frames/).map { Int($0.1) ?? -1 },
      "\(said)")
    let period = try #require(
      said.firstMatch(of: /the capture's period (\d+)/).map { Int($0.1) ?? -1 })
    // Channel 1: the clicks as played; channel 2: as monitored.
    let raw = captured + ".f32"
    try tool("/usr/bin/sox", ["--ignore-length", captured, "-t", "f32", raw])
    let data = try Data(contentsOf: URL(fileURLWithPath: raw))
    let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    let played = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
    let heard = stride(from: 1, to: samples.count, by: 2).map { samples[$0] }
    func clicks(_ signal: [Float]) -> [Int] {
      var found: [Int] = []
      for (index, value) in signal.enumerated() where abs(value) > 0.2 {
        if let last = found.last, index - last < 2_000 { continue }
        found.append(index)
      }
      return found
    }
    let playedClicks = clicks(played)
    let heardClicks = clicks(heard)
    let delays = zip(playedClicks, heardClicks).map { $1 - $0 }
    let counts = try String(contentsOfFile: space.path("allocations"), encoding: .utf8)
      .split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    print(
      "monitor: stated latency \(stated) frames (capture period \(period)); played clicks \(playedClicks), heard \(heardClicks), delays \(delays); device threads' allocations \(counts); \(said)"
    )
    // Which clients jackd said were late, and the end of its log (a client it never ran
    // again logs a line every cycle), and what jack_rec said.
    let server = device.serverLogLines.suffix(40).joined(separator: "\n")
    let jackRec = (try? String(contentsOfFile: device.recorderLog, encoding: .utf8)) ?? ""
    let differs =
      playedClicks.count != Self.clickFrames.count || heardClicks.count != playedClicks.count
      || delays.isEmpty || !delays.allSatisfy { abs($0 - stated) <= period }
    // Tape's own dropouts are never jackd's: the recorder's overruns (its summary's "…, N
    // overruns"), its play's ("the play had N dropouts", with --play), and the cycles jackd
    // says a tape client was late for.
    let overruns = said.firstMatch(of: /(\d+) overruns/).map { Int($0.1) ?? -1 } ?? -1
    let dropouts = said.firstMatch(of: /the play had (\d+) dropouts/).map { Int($0.1) ?? 1 } ?? 0
    let lateTape = device.serverXrunLines().filter { $0.contains("client = tape.") }.count
    let verdict = device.verdict(
      differs: differs, attempt: attempt,
      playerXruns: overruns < 0 ? -1 : overruns + dropouts + lateTape,
      playerRealtime: !said.contains("no realtime priority"))
    if verdict == .retry {
      print(
        "monitor: jackd logged \(device.serverXruns) xruns of its own (jack_rec's overruns \(device.recorderOverruns)), the recorder none; once more"
      )
      return false
    }
    if case .unjudged(let reason) = verdict {
      print("monitor: not judged: \(reason)")
      return true
    }
    #expect(
      playedClicks.count == Self.clickFrames.count,
      "\(playedClicks); late clients by jackd: \(device.serverXrunClients()); the end of its log: \(server); jack_rec said: \(jackRec)"
    )
    #expect(heardClicks.count == playedClicks.count, "\(heardClicks)")
    #expect(!delays.isEmpty && delays.allSatisfy { abs($0 - stated) <= period }, "\(delays)")
    // (Under load the delay may step by an output period where the monitor found the ring
    // a period short and played silence: still within a capture period of what is stated.)
    // The monitor passes the input through unchanged: each click at the level played, its
    // two channels summed into one port.
    let levels = zip(playedClicks, heardClicks).map { (played[$0], heard[$1]) }
    #expect(
      !levels.isEmpty && levels.allSatisfy { abs($0.1 - 2 * $0.0) < 1e-4 && $0.0 > 0.4 },
      "played and monitored click levels: \(levels)")
    #expect(counts == [0, 0], "mallocs, frees on the device threads")
    return true
  }
}
