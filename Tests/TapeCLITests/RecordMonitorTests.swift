import Foundation
import Testing

/// `tape record --monitor` on the paced JACK device: a `tape play` of clicks feeds the
/// recorder's capture ports; jack_rec records, side by side, the clicks as played (channel
/// 1) and the recorder's monitor output (channel 2). The monitored clicks are the played
/// ones, later by the latency the summary states, within a capture period.
extension ProcessHeavyTests.RecordTests {
  @Test func theMonitorPlaysTheInputLaterByItsStatedLatency() throws {
    let space = try Workspace()
    let song = try Self.clickProject(space)
    try Self.monitored(
      space: space, clicks: song,
      recorderArguments: [
        "record", song, "Voice", "--device", "mic", "--monitor", "--duration", "12s",
      ])
  }

  /// With --play, the monitor is mixed into the play: an overdub of an empty project (it plays
  /// silence to 12 s) hears the clicks it captures as the monitor without --play does.
  @Test func withPlayTheMonitorIsMixedIntoThePlay() throws {
    let space = try Workspace()
    let clicks = try Self.clickProject(space)
    let empty = space.path("empty.tape")
    try space.tape("new", empty, "--rate", "48000", "--channels", "2")
    try space.tape("track", "add", empty, "Voice")
    try Self.monitored(
      space: space, clicks: clicks,
      recorderArguments: [
        "record", empty, "Voice", "--play", "--to", "12s", "--device", "mic", "--monitor",
      ])
  }

  /// Runs the recorder (`recorderArguments`, monitoring on `mic`) while `tape play` plays the
  /// project `clicks` into its capture ports, jack_rec recording both; checks the monitored
  /// clicks against the played ones and the stated latency.
  static func monitored(space: Workspace, clicks song: String, recorderArguments: [String]) throws {
    let device = try PacedDevice()
    try device.definePCM(
      """
      pcm.src {
        type jack
        playback_ports { 0 jackrec:input1 1 jackrec:input1 }
      }
      pcm.mic {
        type jack
        playback_ports { 0 jackrec:input2 1 jackrec:input2 }
        capture_ports { 0 system:capture_1 1 system:capture_2 }
      }
      """)
    let counter = try allocationCounter(in: space)
    // jack_rec, started first on the silent system ports; the players' ports join it. It
    // records a fixed time: 30 s, where the recorder and the player, each 7 s, may take
    // seconds more to start on a loaded machine (at 12 s, a start 10 s late lost 5 clicks).
    let captured = space.path("heard.wav")
    let rec = Process()
    rec.executableURL = URL(fileURLWithPath: "/usr/bin/jack_rec")
    rec.arguments = [
      "-f", captured, "-d", "30", "-b", "32", "-B", "\(31 * 48_000)", "system:capture_1",
      "system:capture_2",
    ]
    rec.environment = device.environment
    rec.standardOutput = FileHandle.nullDevice
    rec.standardError = FileHandle.nullDevice
    try rec.run()
    defer { if rec.isRunning { kill(rec.processIdentifier, SIGTERM) } }
    for _ in 0..<100 where !(try device.ports()).contains("jackrec:input2") {
      Thread.sleep(forTimeInterval: 0.05)
    }
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
    var inputs: [String] = []
    for _ in 0..<400 where inputs.count < 2 {
      Thread.sleep(forTimeInterval: 0.05)
      inputs = try device.ports(of: recorder.processIdentifier).filter { $0.contains(".C.") }
    }
    try #require(inputs.count == 2, "the recorder's capture ports: \((try? device.ports()) ?? [])")
    // The clicks, played into jackrec:input1 and joined to the recorder's capture.
    let player = Process()
    player.executableURL = TapeBinary.url
    player.arguments = ["play", song, "--device", "src"]
    player.environment = device.environment
    player.standardOutput = FileHandle.nullDevice
    player.standardError = FileHandle.nullDevice
    player.standardInput = FileHandle.nullDevice
    try player.run()
    defer { if player.isRunning { kill(player.processIdentifier, SIGKILL) } }
    var outputs: [String] = []
    for _ in 0..<400 where outputs.count < 2 {
      Thread.sleep(forTimeInterval: 0.01)
      outputs = try device.ports(of: player.processIdentifier).filter { $0.contains(".P.") }
    }
    #expect(outputs.count == 2, "the player's ports: \((try? device.ports()) ?? [])")
    for (from, to) in zip(outputs.sorted(), inputs.sorted()) {
      _ = try TapeBinary.run(
        URL(fileURLWithPath: "/usr/bin/jack_connect"), [from, to], environment: device.environment)
    }
    player.waitUntilExit()
    recorder.waitUntilExit()
    rec.waitUntilExit()
    let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    #expect(recorder.terminationStatus == 0, "\(said)")
    let stated = try #require(
      said.firstMatch(of: /monitored on mic: latency (\d+) frames/).map { Int($0.1) ?? -1 },
      "\(said)")
    let period = try #require(
      said.firstMatch(of: /the capture's period (\d+)/).map { Int($0.1) ?? -1 })
    // Channel 1: the clicks as played; channel 2: as monitored.
    let raw = captured + ".f32"
    try tool("/usr/bin/sox", [captured, "-t", "f32", raw])
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
    #expect(playedClicks.count == Self.clickFrames.count, "\(playedClicks)")
    #expect(heardClicks.count == playedClicks.count, "\(heardClicks)")
    #expect(!delays.isEmpty && delays.allSatisfy { abs($0 - stated) <= period }, "\(delays)")
    // (Under load the delay may step by an output period where the monitor found the ring
    // a period short and played silence: still within a capture period of what is stated.)
    #expect(counts == [0, 0], "mallocs, frees on the device threads")
  }
}
