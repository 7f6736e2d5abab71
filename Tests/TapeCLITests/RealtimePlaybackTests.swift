import Foundation
import ReferenceRenders
import Testing
import Timeline
import TimelineStore

/// CLOCK_MONOTONIC in nanoseconds: the clock `tape play --json` stamps its swaps with.
func monotonicNanoseconds() -> UInt64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// A JACK server on the dummy driver (timer-paced, realtime), a recorder on its capture ports,
/// and a HOME whose ~/.asoundrc defines `jackrec`, ALSA's jack PCM playing into the recorder:
/// real paced playback without a sound card (docs/alsa-testing.md, recipe 2). The server runs at
/// `rate` (48 kHz by default), which is then the only rate `jackrec` takes, in cycles of `period`
/// frames (256 by default; a player's period must be a multiple of it).
final class PacedDevice {
  let home: Workspace
  let name = "tape-\(UInt32.random(in: 0...UInt32.max))"
  let rate: Int
  let period: Int

  /// The JACK cycle of the tests that judge edits heard live by their capture (clicks, and the
  /// render once settled), where the period is not what is tested.
  ///
  /// Why: on this 2-core machine under load, the kernel lets a realtime thread wait longer than
  /// a 256-frame cycle (5.3 ms) now and then, and jackd then drops a cycle of the capture
  /// whoever played into it: measured with a plain `aplay` (SCHED_FIFO 70) into `jack_rec` at a
  /// load of 9–12 (builds beside it), jackd logged xruns in 5 plays of 5 at 256 frames (2 to 28
  /// lines, one dropped cycle heard as a click), in none of 5 at 1,024 (21 ms). Tape's live
  /// tests at 256 failed both of their attempts that way in 4 runs of 9, with the player
  /// counting no xrun of its own. The tests of the period itself (latency, the bit-exact play,
  /// the period's fades) stay at 256.
  static let judgingPeriod = 1_024
  private let server: Process
  private var recorder: Process?
  /// Clients this device started beside the server (``startLoopback()``'s `jack_thru`).
  private var clients: [Process] = []
  let capture: String
  let serverLog: String

  init(rate: Int = 48_000, period: Int = 256) throws {
    self.rate = rate
    self.period = period
    home = try Workspace()
    capture = home.path("capture.wav")
    serverLog = home.path("jackd.log")
    try """
    pcm.jackrec {
      type jack
      playback_ports { 0 jackrec:input1 1 jackrec:input2 }
    }
    """.write(toFile: home.path(".asoundrc"), atomically: true, encoding: .utf8)
    server = Process()
    server.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
    server.arguments = [
      "-R", "-P", "70", "-n", name, "-d", "dummy", "-r", "\(rate)", "-p", "\(period)",
    ]
    server.environment = environment
    // One handle for both streams: two would each write from offset 0 over the other's lines
    // (and hide xruns from ``serverXruns``).
    _ = FileManager.default.createFile(atPath: serverLog, contents: nil)
    let log = FileHandle(forWritingAtPath: serverLog)
    server.standardOutput = log
    server.standardError = log
    try server.run()
    // Ready once a client can list its ports.
    for _ in 0..<50 {
      Thread.sleep(forTimeInterval: 0.1)
      let probe = try TapeBinary.run(
        URL(fileURLWithPath: "/usr/bin/jack_lsp"), [], environment: environment)
      if probe.status == 0 && probe.stdout.contains("system:capture_1") { return }
    }
    throw ReferenceError(
      message: "jackd did not start: \(try String(contentsOfFile: serverLog, encoding: .utf8))")
  }

  /// jackd is stopped with SIGTERM so that it removes its shared memory (a SIGKILLed jackd
  /// leaves entries in /dev/shm that stop later servers from starting); SIGKILL only if it
  /// does not go within three seconds.
  deinit {
    // jack_rec and jack_thru are killed: they handle SIGTERM with signal(), and a process
    // this test starts inherits its thread's mask, where the cooperative pool blocks SIGTERM
    // (a SIGTERMed jack_rec recorded on to the end of its -d, a jack_thru never left). The
    // server cleans up after a client it loses. (jackd itself waits for its signals with
    // sigwait, which takes them blocked.)
    for client in [recorder].compactMap({ $0 }) + clients where client.isRunning {
      kill(client.processIdentifier, SIGKILL)
      client.waitUntilExit()
    }
    stop()
    // What clients of a server that died leave behind.
    for name in (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []
    where name.contains(self.name) {
      try? FileManager.default.removeItem(atPath: "/dev/shm/\(name)")
    }
  }

  /// Stops the server (as if it crashed or was shut down under a player).
  func stop() {
    guard server.isRunning else { return }
    kill(server.processIdentifier, SIGTERM)
    for _ in 0..<30 where server.isRunning { Thread.sleep(forTimeInterval: 0.1) }
    if server.isRunning { kill(server.processIdentifier, SIGKILL) }
    server.waitUntilExit()
  }

  var environment: [String: String] {
    [
      "HOME": home.url.path, "JACK_DEFAULT_SERVER": name, "JACK_NO_AUDIO_RESERVATION": "1",
      "NO_COLOR": "1",
    ]
  }

  /// Starts recording `seconds` of `ports` (by default the capture ports, into which `jackrec`
  /// plays) into ``capture``.
  ///
  /// jack_rec's process callback copies each cycle into a ring buffer that its disk thread (not
  /// realtime) writes out; what does not fit is lost ("jackrec failed with N overruns"). Its
  /// default ring (16,384 frames, a third of a second) overflowed while builds and the suite's
  /// other processes kept the disk busy, and a capture lost cycles that Tape had played: the
  /// ring holds the whole recording (plus a second) here, so a stalled disk costs nothing.
  func record(
    seconds: Int, from ports: [String] = ["system:capture_1", "system:capture_2"]
  ) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/jack_rec")
    process.arguments =
      ["-f", capture, "-d", "\(seconds)", "-b", "32", "-B", "\((seconds + 1) * rate)"] + ports
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    _ = FileManager.default.createFile(atPath: recorderLog, contents: nil)
    process.standardError = FileHandle(forWritingAtPath: recorderLog)
    try process.run()
    recorder = process
    // jack_rec's ports exist before the player connects to them (within a minute: a start
    // on a loaded machine may take seconds).
    let deadline = Date(timeIntervalSinceNow: 60)
    while Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
      let ports = try TapeBinary.run(
        URL(fileURLWithPath: "/usr/bin/jack_lsp"), [], environment: environment)
      if ports.stdout.contains("jackrec:input2") { return }
    }
    throw ReferenceError(message: "jack_rec did not start within 60 s")
  }

  /// Waits until a player's ALSA `jack` PCM is connected to the recorder (its device is open,
  /// its first periods on their way), for at most `seconds`. A test that edits "while it plays"
  /// times the edit from here, not from the player's launch: under load a launch takes from a
  /// fraction of a second to several (the process, plugins, the decode before the first sound).
  func waitForPlayer(seconds: Double = 60) throws {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while Date() < deadline {
      // `jack_lsp -c PORT` prints the port, then each port connected to it, indented.
      let ports = try TapeBinary.run(
        URL(fileURLWithPath: "/usr/bin/jack_lsp"), ["-c", "jackrec:input1"],
        environment: environment)
      if ports.stdout.split(separator: "\n").contains(where: { $0.first?.isWhitespace == true }) {
        return
      }
      Thread.sleep(forTimeInterval: 0.05)
    }
    throw ReferenceError(message: "no player connected to jackrec:input1 within \(seconds) s")
  }

  /// A loopback on this server, and `loop`, ALSA's jack PCM for both directions, on it: what
  /// a player plays on `loop` comes back as what a recorder captures from `loop`, in the same
  /// JACK cycle (the client between them, `jack_thru` named `thru`, copies its inputs to its
  /// outputs as it runs, after the player and before the recorder).
  ///
  /// Why: the PCM connects itself to `thru` as it opens, so the loop is whole before the first
  /// sound. A test that joined the player's ports to the recorder's itself (jack_lsp and
  /// jack_connect, polled from another thread) did it 1–2 s late on a loaded machine, and a
  /// calibration that plays its 12 clicks over 2.2 s heard too few of them (CI).
  func startLoopback() throws {
    let thru = Process()
    thru.executableURL = URL(fileURLWithPath: "/usr/bin/jack_thru")
    thru.arguments = ["thru"]
    thru.environment = environment
    thru.standardOutput = FileHandle.nullDevice
    thru.standardError = FileHandle.nullDevice
    try thru.run()
    clients.append(thru)
    try definePCM(
      """
      pcm.loop {
        type jack
        playback_ports { 0 thru:input_1 1 thru:input_2 }
        capture_ports { 0 thru:output_1 1 thru:output_2 }
      }
      """)
    for _ in 0..<600 {
      if try ports().contains("thru:output_2") { return }
      Thread.sleep(forTimeInterval: 0.05)
    }
    throw ReferenceError(message: "jack_thru did not start on \(name)")
  }

  /// Starts one JACK client (Tests/Support/jack-wait-ports.py) that waits for `count` ports
  /// whose names match `regex` (each connected, with `connected`) and stays open until
  /// ``PortWatch/close()``: how a test waits for a process that opens several JACK clients
  /// (`tape record --monitor`, `--play`).
  ///
  /// Why not poll `jack_lsp`: a client that closes while a process opens one of its clients
  /// leaves its synchro in that process's table (libjack of jackd2 1.9.21), and the process's
  /// next client, given the freed refnum, waits on the closed client's futex forever: jackd
  /// logs it "not finished, state = Triggered" every cycle and nothing after it in the graph
  /// runs. The monitor tests hung so in about half their runs with a release `tape`.
  func watchPorts(_ regex: String, count: Int, connected: Bool = false) throws -> PortWatch {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../Support/jack-wait-ports.py").standardizedFileURL.path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [script, regex, "\(count)"] + (connected ? ["--connected"] : [])
    process.environment = environment
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let watch = PortWatch(process: process, input: input, output: output)
    // Its client is open before the caller starts what it waits for.
    try watch.wait(for: "open")
    return watch
  }

  /// Adds an ALSA PCM `definition` to this device's ~/.asoundrc (beside `jackrec`).
  func definePCM(_ definition: String) throws {
    let config = home.path(".asoundrc")
    let text = try String(contentsOfFile: config, encoding: .utf8)
    try (text + "\n" + definition + "\n").write(toFile: config, atomically: true, encoding: .utf8)
  }

  /// Starts `tape play FILE --device jackrec --period P --json` (P this device's period) with
  /// `extra` arguments, the recorder taking `seconds`, and the audio thread's allocations
  /// counted (the LD_PRELOAD counter, into `space`'s `allocations`); returns once the player's
  /// device is open (``waitForPlayer(seconds:)``), the moment a test times its edits from.
  func startPlay(
    _ file: String, in space: Workspace, recording seconds: Int, _ extra: [String] = []
  ) throws -> PacedPlay {
    let counter = try allocationCounter(in: space)
    try record(seconds: seconds)
    var environment = self.environment
    environment["LD_PRELOAD"] = counter
    environment["TAPE_ALLOC_REPORT"] = space.path("allocations")
    let errorLog = space.path("play-\(UUID().uuidString).log")
    let (player, out, _) = try startTape(
      ["play", file, "--device", "jackrec", "--period", "\(period)", "--json"] + extra,
      environment: environment, errorLog: errorLog)
    try waitForPlayer()
    return PacedPlay(
      player: player, out: out, errorLog: errorLog, allocations: space.path("allocations"))
  }

  /// Ends the recording now (SIGKILL: jack_rec would not see a SIGTERM, see `deinit`), its
  /// WAV header unfinished: read ``capture`` with `sox --ignore-length`. What jack_rec's ring
  /// took a second before is in the file (its disk thread writes it as it comes).
  func stopRecording() {
    guard let recorder, recorder.isRunning else { return }
    kill(recorder.processIdentifier, SIGKILL)
    recorder.waitUntilExit()
  }

  /// Waits for the recording to end and returns it as interleaved stereo floats.
  func recorded() throws -> [Float] {
    recorder?.waitUntilExit()
    return try ReferenceRender.decode(capture)
  }

  /// What the last `jack_rec` wrote to stderr.
  var recorderLog: String { home.path("jackrec.log") }

  /// Cycles the last recording lost because `jack_rec`'s disk thread fell behind (it says
  /// "jackrec failed with N overruns." at its end): environment noise like jackd's xruns.
  var recorderOverruns: Int {
    let log = (try? String(contentsOfFile: recorderLog, encoding: .utf8)) ?? ""
    guard let line = log.split(separator: "\n").first(where: { $0.contains(" overruns") })
    else { return 0 }
    return line.split(separator: " ").compactMap { Int($0) }.first ?? 0
  }

  /// Lines where jackd reports an xrun of its own (environment noise on a loaded machine).
  var serverXruns: Int { serverXrunLines().count }

  /// jackd's lines about an xrun, after line `from` of its log.
  func serverXrunLines(after from: Int = 0) -> [Substring] {
    serverLogLines.dropFirst(from).filter { $0.lowercased().contains("xrun") }
  }

  /// jackd's log so far, line by line.
  var serverLogLines: [Substring] {
    ((try? String(contentsOfFile: serverLog, encoding: .utf8)) ?? "").split(separator: "\n")
  }

  /// jackd's xrun lines after line `from` of its log, by the client each says was late
  /// (`client = X was not finished`): `jackrec 12, tape.P.123.0 12`, or `none`. Who was late
  /// tells a stalled player from a stalled recorder or server.
  func serverXrunClients(after from: Int = 0) -> String {
    let lines = serverXrunLines(after: from)
    var counts: [String: Int] = [:]
    for line in lines {
      let client =
        line.firstMatch(of: /client = (\S+)/).map { String($0.1) } ?? String(line.prefix(60))
      counts[client, default: 0] += 1
    }
    if counts.isEmpty { return "none" }
    return counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
      separator: ", ")
  }

  /// Whether jackd got realtime scheduling for its cycles (as a user who may not, it says so
  /// in its log and runs them at normal priority, where a loaded machine makes it skip cycles).
  var serverRealtime: Bool {
    let log = (try? String(contentsOfFile: serverLog, encoding: .utf8)) ?? ""
    return !log.contains("real-time scheduling") && !log.contains("RealTime error")
  }

  /// What a paced test makes of a capture that differs from what was played, after
  /// `attempt` (1 or 2), following docs/alsa-testing.md: a difference with the player's own xruns
  /// is the player's fault, and fails; one that jackd logged xruns for is retried once; if it
  /// happens again and neither jackd nor the player had realtime priority (a user who may not
  /// have it), the capture cannot tell whose dropout it saw and is not judged, saying so; any
  /// other difference fails. jack_rec's own overruns (its disk thread fell behind) count as
  /// jackd's. A device that serves several plays counts only the xruns jackd logged after
  /// `serverXrunsBefore` (what ``serverXruns`` said before this play started).
  func verdict(
    differs: Bool, attempt: Int, playerXruns: Int, playerRealtime: Bool,
    serverXrunsBefore: Int = 0
  ) -> PacedVerdict {
    let xruns = serverXruns - serverXrunsBefore + recorderOverruns
    guard differs, playerXruns == 0, xruns > 0 else { return .judge }
    if attempt == 1 { return .retry }
    guard !serverRealtime && !playerRealtime else { return .judge }
    return .unjudged(
      "jackd, without realtime priority, logged \(xruns) xruns of its own (jack_rec's overruns included) on the second attempt too, and the player counted none: the capture's gap is jackd's; its samples are not compared"
    )
  }
}

/// A `tape play` started by ``PacedDevice/startPlay(_:in:recording:_:)``.
struct PacedPlay {
  let player: Process
  let out: Pipe
  /// Where the play's stderr goes (a file: see ``startTape(_:environment:executable:errorLog:)``).
  let errorLog: String
  /// The LD_PRELOAD counter's report: mallocs and frees on the audio thread.
  let allocations: String

  /// Waits for the play to end (it must end with status 0): its `--json` report, the swaps in
  /// it and what it said on stderr.
  func finish() throws -> (report: [String: Any], swaps: [[String: Any]], said: String) {
    let result = try playReport(player, out, errorLog: errorLog)
    #expect(player.terminationStatus == 0, "\(result.said)")
    return result
  }
}

/// A JACK client waiting for ports (``PacedDevice/watchPorts(_:count:connected:)``).
///
/// Sendable unchecked: one thread waits (it alone reads the output and keeps what it said),
/// another may close (it alone writes the input); both only read the immutable process.
final class PortWatch: @unchecked Sendable {
  private let process: Process
  private let input: Pipe
  private let output: Pipe
  /// What the watcher printed so far (read by the thread that waits).
  private var said = Data()

  init(process: Process, input: Pipe, output: Pipe) {
    self.process = process
    self.input = input
    self.output = output
  }

  /// Returns once the ports are there; throws what the watcher said if it gave up (60 s), if
  /// `alive` turns false first (the process that was to open them ended), or after 90 s.
  func wait(while alive: () -> Bool = { true }) throws {
    try wait(for: "ready", while: alive)
  }

  /// Reads the watcher's output until the line `word`.
  func wait(for word: String, while alive: () -> Bool = { true }) throws {
    let descriptor = output.fileHandleForReading.fileDescriptor
    let deadline = Date(timeIntervalSinceNow: 90)
    while true {
      var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      if poll(&ready, 1, 50) > 0 {
        let chunk = output.fileHandleForReading.availableData
        said.append(chunk)
        let text = String(decoding: said, as: UTF8.self)
        if text.split(separator: "\n").contains(Substring(word)) { return }
        if chunk.isEmpty {
          throw ReferenceError(message: "the port watcher gave up: \(text)")
        }
      }
      if !alive() || Date() > deadline {
        let text = String(decoding: said, as: UTF8.self)
        throw ReferenceError(
          message:
            "\(Date() > deadline ? "no \(word) from the watcher in 90 s" : "what was to open the ports ended first"); it said: \(text)"
        )
      }
    }
  }

  /// Closes the watcher's client (once the processes it waited for have opened all theirs).
  func close() {
    guard process.isRunning else { return }
    try? input.fileHandleForWriting.close()
    for _ in 0..<100 where process.isRunning { Thread.sleep(forTimeInterval: 0.02) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
  }

  deinit { close() }
}

/// See ``PacedDevice/verdict(differs:attempt:playerXruns:playerRealtime:serverXrunsBefore:)``.
enum PacedVerdict: Equatable {
  case judge
  case retry
  case unjudged(String)
}

/// The LD_PRELOAD allocation counter (Tests/Support/audio-thread-mallocs.c) built into
/// `space`: it counts mallocs and frees on the audio thread alone.
func allocationCounter(in space: Workspace) throws -> String {
  let counter = space.path("audio-thread-mallocs.so")
  try tool(
    "/usr/bin/cc",
    [
      "-shared", "-fPIC", "-O2", "-o", counter,
      URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Support/audio-thread-mallocs.c").standardizedFileURL.path,
    ])
  return counter
}

/// A project of one track, "Sine" (t1), over s1: 12 s of a mono 48 kHz sine at half scale
/// made by sox; clips are the caller's.
func sineProject(in space: Workspace, hertz: Int) throws -> String {
  let sine = space.path("sine.wav")
  try tool(
    "/usr/bin/sox",
    [
      "-n", "-r", "48000", "-c", "1", "-b", "16", sine, "synth", "12", "sine", "\(hertz)",
      "vol", "0.5",
    ])
  let file = space.path("sine.tape")
  try space.tape("new", file)
  try space.tape("import", file, sine)
  try space.tape("track", "add", file, "Sine")
  return file
}

/// ``sineProject(in:hertz:)`` with its sine (100 Hz) on t1 for 9 s from 0, faded in and out
/// over 50 ms: what the live-edit tests play while another process edits.
func liveEditProject(in space: Workspace) throws -> String {
  let file = try sineProject(in: space, hertz: 100)
  try space.tape(
    "clip", "add", file, "t1", "s1", "--at", "0", "--length", "9s", "--fade-in", "50ms",
    "--fade-out", "50ms")
  return file
}

/// The frame where `samples` (interleaved stereo) first has sound.
func onset(_ samples: [Float]) -> Int? {
  stride(from: 0, to: samples.count, by: 2).first { samples[$0] != 0 || samples[$0 + 1] != 0 }
    .map { $0 / 2 }
}

/// A 48 kHz WAV file: format 1 (integer PCM) or 3 (float), the sample bytes in `data`.
func wavFile(format: UInt16, channels: UInt16, bits: UInt16, data: Data) -> Data {
  var file = Data("RIFF".utf8)
  func append<T: FixedWidthInteger>(_ value: T) {
    withUnsafeBytes(of: value.littleEndian) { file.append(contentsOf: $0) }
  }
  let frameBytes = UInt32(channels) * UInt32(bits / 8)
  append(UInt32(36 + data.count))
  file.append(contentsOf: Data("WAVEfmt ".utf8))
  append(UInt32(16))
  append(format)
  append(channels)
  append(UInt32(48_000))
  append(UInt32(48_000) * frameBytes)
  append(UInt16(frameBytes))
  append(bits)
  file.append(contentsOf: Data("data".utf8))
  append(UInt32(data.count))
  file.append(data)
  return file
}

/// Writes a 16-bit stereo WAV of hashed noise on the 16-bit grid (k/32768), every frame's
/// first sample non-zero: float → 32-bit PCM → float is then exact, and a dropped or repeated
/// period cannot hide.
func writeHashedNoise(_ path: String, frames: Int) throws -> [Float] {
  var samples: [Int16] = []
  var state: UInt64 = 0x5441_5045
  for _ in 0..<frames * 2 {
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    var value = Int16(truncatingIfNeeded: Int64(state >> 33) % 24_000 - 12_000)
    if value == 0 { value = 1 }
    samples.append(value)
  }
  let data = samples.withUnsafeBytes { Data($0) }
  try wavFile(format: 1, channels: 2, bits: 16, data: data).write(to: URL(fileURLWithPath: path))
  return samples.map { Float($0) / 32_768 }
}

extension ProcessHeavyTests {
  @Suite("Realtime playback on real ALSA", .timeLimit(.minutes(10)))
  struct RealtimePlaybackTests {
    /// Paced by JACK's dummy driver through the `jackrec` device directly: 5 s of hashed noise
    /// arrive bit for bit after the onset, then silence, and the player counted no xrun. (One
    /// retry when jackd itself reported xruns, as docs/alsa-testing.md advises.)
    @Test func aPacedPlayIsBitExact() throws {
      let space = try Workspace()
      let noise = try writeHashedNoise(space.path("noise.wav"), frames: 48_000 * 6)
      let file = space.path("noise.tape")
      try space.tape("new", file)
      try space.tape("import", file, space.path("noise.wav"))
      try space.tape("track", "add", file, "Noise")
      try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "5s")
      var attempts = 0
      while true {
        attempts += 1
        let device = try PacedDevice()
        try device.record(seconds: 7)
        let played = try TapeBinary.run(
          ["play", file, "--device", "jackrec", "--period", "256", "--json"],
          environment: device.environment)
        #expect(played.status == 0, "\(played.stderr)")
        let report = try #require(try parseJSON(played.stdout) as? [String: Any])
        let captured = try device.recorded()
        let start = try #require(onset(captured))
        let body = Array(captured[(start * 2)..<min(captured.count, (start + 240_000) * 2)])
        let exact = body == Array(noise.prefix(480_000))
        let silentAfter = captured[min(captured.count, (start + 240_000) * 2)...].allSatisfy {
          $0 == 0
        }
        let realtime = report["realtimePriority"] as? Bool ?? false
        let verdict = device.verdict(
          differs: !exact || !silentAfter, attempt: attempts,
          playerXruns: report["xruns"] as? Int ?? -1, playerRealtime: realtime)
        if verdict == .retry {
          print("paced play: jackd reported \(device.serverXruns) xruns of its own; retrying once")
          continue
        }
        #expect(report["xruns"] as? Int == 0, "the player itself missed periods")
        // 4 periods, or at normal priority enough for 80 ms (15 × 256 at 48 kHz).
        #expect(report["period"] as? Int == 256)
        #expect(report["bufferFrames"] as? Int == (realtime ? 1_024 : 3_840))
        #expect(report["missingFrames"] as? Int == 0)
        if case .unjudged(let reason) = verdict {
          print("paced play: not judged: \(reason)")
          return
        }
        #expect(exact, "the capture after its onset is not the source, bit for bit")
        #expect(
          silentAfter,
          "sound after the end at capture frame \(String(describing: captured[((start + 240_000) * 2)...].firstIndex { $0 != 0 }.map { $0 / 2 - start })) of \(captured.count / 2 - start)"
        )
        print(
          "paced play: exact over 240000 frames, jackd xruns \(device.serverXruns), attempts \(attempts)"
        )
        return
      }
    }

    /// While `tape play` plays a 100 Hz sine on the paced device, another process sets a gain,
    /// moves the clip and undoes the move. The capture equals the offline render of each version
    /// between the swaps `--json` reports, and the specified ramp (20 ms) or equal-gain
    /// crossfade (256 frames) at each, to float rounding. The delay from each commit returning
    /// to the first frame rendered from the new plan is measured and printed.
    ///
    /// A difference is told apart by its cause: the player's own xruns (`--json`) must be 0; a
    /// gap that jackd logged as its own xrun (a loaded machine, no realtime priority for the
    /// server) is retried once and both runs reported; any other difference fails.
    @Test func editsFromAnotherProcessAreHeardLive() throws {
      let space = try Workspace()
      let file = try sineProject(in: space, hertz: 100)
      // From frame 120, a quarter period in: the first frame is loud, so the onset is exact.
      try space.tape(
        "clip", "add", file, "t1", "s1", "--at", "0", "--from", "120f", "--length", "8s")
      let start = try space.head(of: file)
      for attempt in 1...2 {
        let outcome = try playWithLiveEdits(file, in: space)
        let verdict = outcome.device.verdict(
          differs: outcome.worst >= 1e-6, attempt: attempt, playerXruns: outcome.playerXruns,
          playerRealtime: outcome.playerRealtime)
        if verdict == .retry {
          print(
            "live edits: largest difference \(outcome.worst) with \(outcome.device.serverXruns) xruns logged by jackd (the player counted none); retrying once"
          )
          try space.tape("checkout", file, "\(start)")
          continue
        }
        #expect(
          outcome.playerXruns == 0,
          "tape play itself missed \(outcome.playerXruns) periods (its xrun count)")
        if case .unjudged(let reason) = verdict {
          print("live edits: not judged: \(reason)")
          return
        }
        #expect(
          outcome.worst < 1e-6,
          "largest difference \(outcome.worst): \(outcome.device.serverXruns) xruns logged by jackd, \(outcome.playerXruns) by the player, attempt \(attempt)"
        )
        return
      }
    }

    /// One paced play of `file` while another process sets a gain, moves the clip and undoes
    /// the move: the largest difference from the expected capture, and both sides' xruns.
    private func playWithLiveEdits(
      _ file: String, in space: Workspace
    ) throws -> (worst: Float, playerXruns: Int, playerRealtime: Bool, device: PacedDevice) {
      let first = try Int64(space.head(of: file))
      let device = try PacedDevice()
      try device.record(seconds: 11)
      let (player, out, errors) = try startTape(
        ["play", file, "--device", "jackrec", "--json"], environment: device.environment)
      var returned: [UInt64] = []
      for edit in [
        ["clip", "set", file, "c1", "--gain", "-12dB"],
        ["clip", "move", file, "c1", "--to", "0.25s"],
        ["undo", file],
      ] {
        Thread.sleep(forTimeInterval: 1.8)
        // The store logs when its commit returned (CLOCK_MONOTONIC, as the player's stamps).
        let result = try TapeBinary.run(edit, environment: ["TAPE_LOG": "debug"])
        #expect(result.status == 0, "\(edit): \(result.stderr)")
        let stamp = result.stderr.components(separatedBy: "monotonic=").last.map {
          String($0.prefix { $0.isNumber })
        }
        returned.append(try #require(stamp.flatMap { UInt64($0) }, "\(result.stderr)"))
      }
      let output = out.fileHandleForReading.readDataToEndOfFile()
      player.waitUntilExit()
      #expect(
        player.terminationStatus == 0,
        "\(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
      let report = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
      let swaps = try #require(report["swaps"] as? [[String: Any]])
      #expect(swaps.map { $0["kind"] as? String } == ["first", "ramp", "crossfade", "crossfade"])
      #expect(swaps.map { $0["cause"] as? String } == [nil, "edit", "edit", "undo"])
      let versions = swaps.compactMap { ($0["version"] as? Int).map(Int64.init) }
      #expect(versions.first == first)

      // Each version's offline render, as the play's frames see them (it starts at 0).
      let renders = try versions.map { version in
        try ReferenceRender.decode(
          space.path("v\(version).wav").also {
            try space.tape(
              "render", file, "-o", $0, "--bits", "32f", "--version", "\(version)", "--to", "10s")
          })
      }
      let captured = try device.recorded()
      let start = try #require(onset(captured))
      let frames = Int(try #require(report["frames"] as? Int))
      var worst: Float = 0
      var segment = 0
      for frame in 0..<frames {
        while segment + 1 < swaps.count, frame >= swaps[segment + 1]["frame"] as? Int ?? .max {
          segment += 1
        }
        let swapFrame = swaps[segment]["frame"] as? Int ?? 0
        let length = swaps[segment]["length"] as? Int ?? 0
        let w = length == 0 ? 1 : min(1, Float(frame - swapFrame) / Float(length))
        let old = renders[max(0, segment - 1)]
        let new = renders[segment]
        for channel in 0..<2 {
          let i = frame * 2 + channel
          let expected = old[i] * (1 - w) + new[i] * w
          worst = max(worst, abs(captured[start * 2 + i] - expected))
        }
      }
      let delays = zip(swaps.dropFirst(), returned).map { swap, returned in
        Double(
          Int64(bitPattern: (swap["renderedAt"] as? Int).map { UInt64($0) } ?? 0)
            - Int64(bitPattern: returned)) / 1e6
      }
      let xruns = report["xruns"] as? Int ?? -1
      print(
        "live edits: largest difference from the expected capture \(worst); commit → first new frame rendered: \(delays.map { String(format: "%.1f ms", $0) }.joined(separator: ", ")); xruns: player \(xruns), jackd \(device.serverXruns); buffer \(report["bufferFrames"] ?? 0) frames"
      )
      #expect(delays.allSatisfy { $0 < 500 })
      return (worst, xruns, report["realtimePriority"] as? Bool ?? false, device)
    }

    /// Over 10 s of paced playback with 100 swaps (gain changes and moves committed by this
    /// process through the store), then a stop (SIGTSTP: the device closed) and SIGCONT (opened
    /// again), the audio thread allocates and frees nothing (an LD_PRELOAD counter armed only on
    /// that thread, off while the device is closed), and, after the page cache was dropped,
    /// takes no major page fault. On a 48 kHz device, and on a 44.1 kHz one, to which Tape
    /// converts the 48 kHz project.
    @Test(arguments: [48_000, 44_100])
    func theAudioThreadNeverAllocates(deviceRate: Int) throws {
      let space = try Workspace()
      let counter = try allocationCounter(in: space)
      let file = try RenderCommandTests.project(in: space)
      try space.tape("clip", "set", file, "c2", "--gain", "-1dB")
      let dropped = FileManager.default.isWritableFile(atPath: "/proc/sys/vm/drop_caches")
      if dropped {
        sync()
        try "3\n".write(toFile: "/proc/sys/vm/drop_caches", atomically: false, encoding: .utf8)
      } else {
        print(
          "audio thread test: cannot drop the page cache here (not root); faults are still counted")
      }
      let device = try PacedDevice(rate: deviceRate)
      // Until after the stop: the device (the recorder's ports) opens again on SIGCONT.
      try device.record(seconds: 16)
      var environment = device.environment
      environment["LD_PRELOAD"] = counter
      environment["TAPE_ALLOC_REPORT"] = space.path("allocations")
      let (player, out, errors) = try startTape(
        ["play", file, "--device", "jackrec", "--json", "--to", "10s", "--loop"],
        environment: environment)
      let store = try TimelineStore.open(at: file)
      for step in 0..<100 {
        Thread.sleep(forTimeInterval: 0.085)
        try store.commit(label: "Step \(step)") { project, _ in
          if step % 2 == 0 {
            return try project.setTrack(Track.ID(1), gain: Gain(decibels: -Double(step % 12)))
          }
          return try project.moveClip(
            Clip.ID(2), to: FramePosition(Int64(step % 10) * 4_800), track: nil)
        }
      }
      try store.close()
      kill(player.processIdentifier, SIGTSTP)
      for _ in 0..<100 where processState(player.processIdentifier) != "T" {
        Thread.sleep(forTimeInterval: 0.02)
      }
      kill(player.processIdentifier, SIGCONT)
      Thread.sleep(forTimeInterval: 1)
      kill(player.processIdentifier, SIGINT)
      let output = out.fileHandleForReading.readDataToEndOfFile()
      player.waitUntilExit()
      #expect(
        player.terminationReason == .uncaughtSignal && player.terminationStatus == SIGINT,
        "\(player.terminationReason == .exit ? "exit" : "signal") \(player.terminationStatus): \(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))"
      )
      let report = try #require(
        try JSONSerialization.jsonObject(with: output) as? [String: Any],
        "\(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
      let swaps = try #require(report["swaps"] as? [[String: Any]]).count - 1
      let counts = try String(contentsOfFile: space.path("allocations"), encoding: .utf8)
        .split(separator: " ").compactMap {
          Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
      let faults = try #require(report["audioThreadPageFaults"] as? [String: Any])
      print(
        "audio thread on a \(deviceRate) Hz device: \(counts[0]) mallocs, \(counts[1]) frees over \(report["frames"] ?? 0) frames and \(swaps) swaps, \(report["suspensions"] ?? 0) stop; page faults \(faults), cache dropped: \(dropped)"
      )
      #expect(counts == [0, 0])
      #expect(report["suspensions"] as? Int == 1)
      #expect(report["deviceRate"] as? Int == deviceRate)
      #expect(
        (report["rateConversion"] as? [String: Any])?["to"] as? Int
          == (deviceRate == 48_000 ? nil : deviceRate))
      #expect(swaps >= 80, "only \(swaps) of 100 commits were swapped in")
      #expect(faults["major"] as? Int == 0)
      #expect(report["missingFrames"] as? Int == 0)
    }

    /// The same through the transport, from the keys on a terminal: pauses and resumes (one
    /// pair within a fade), seeks both ways (two within a fade), a seek and a pause together,
    /// loop wraps. The audio thread allocates and frees nothing, and no audio is missing.
    @Test func theTransportNeverAllocates() throws {
      let space = try Workspace()
      let counter = try allocationCounter(in: space)
      let file = try RenderCommandTests.project(in: space)
      let device = try PacedDevice()
      try device.record(seconds: 2)
      var environment = device.environment
      environment["LD_PRELOAD"] = counter
      environment["TAPE_ALLOC_REPORT"] = space.path("allocations")
      let assignments = environment.sorted { $0.key < $1.key }.map {
        shellQuoted("\($0.key)=\($0.value)")
      }
      let terminal = try Tmux(width: 200, height: 10)
      defer { terminal.kill() }
      let report = space.path("report.json")
      try terminal.start(
        "env \(assignments.joined(separator: " ")) \(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device jackrec --json --to 3s --loop > \(shellQuoted(report)); echo done > \(shellQuoted(space.path("done"))); sleep 60"
      )
      _ = try terminal.waitFor(steady: false) { $0.contains("playing") }
      for keys in [
        ["Space"], ["Space"], ["Space", "Space"], ["Right"], ["Left", "Left"], ["Right", "Space"],
        ["Space"], ["Left"],
      ] {
        Thread.sleep(forTimeInterval: 0.3)
        try terminal.send(keys)
      }
      // Two loop wraps.
      Thread.sleep(forTimeInterval: 4)
      try terminal.send(["q"])
      let deadline = Date().addingTimeInterval(10)
      while !FileManager.default.fileExists(atPath: space.path("done")), Date() < deadline {
        Thread.sleep(forTimeInterval: 0.05)
      }
      let played = try #require(
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report)))
          as? [String: Any])
      let counts = try String(contentsOfFile: space.path("allocations"), encoding: .utf8)
        .split(separator: " ").compactMap {
          Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
      #expect(counts == [0, 0])
      #expect((played["frames"] as? Int ?? 0) > 3 * 48_000)
      #expect(played["missingFrames"] as? Int == 0)
      #expect((played["audioThreadPageFaults"] as? [String: Any])?["major"] as? Int == 0)
    }

    /// What the audio thread asks of the kernel while it plays (strace, between the two
    /// page-fault counts that bracket its loop): the PCM's write and its poll (the JACK
    /// plugin's poll and the read of its wake-up descriptor), the clock, and the bounded wait
    /// for the loader. No memory mapping, no file opened or read, nothing else.
    @Test func theAudioThreadMakesOnlyItsOwnSystemCalls() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let device = try PacedDevice()
      try device.record(seconds: 4)
      let traces = space.path("trace")
      try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
      let traced = try TapeBinary.run(
        URL(fileURLWithPath: "/usr/bin/strace"),
        [
          "-f", "-ff", "-o", "\(traces)/t", TapeBinary.url.path, "play", file, "--device",
          "jackrec", "--to", "2s", "--json",
        ], environment: device.environment)
      #expect(traced.status == 0, "\(traced.stderr)")
      // The device thread is the one that counts its page faults (getrusage RUSAGE_THREAD).
      let threads = try FileManager.default.contentsOfDirectory(atPath: traces).map {
        try String(contentsOfFile: "\(traces)/\($0)", encoding: .utf8)
      }.filter { $0.contains("getrusage(RUSAGE_THREAD") }
      #expect(threads.count == 1)
      let lines = try #require(threads.first).split(separator: "\n")
      let bracket = lines.indices.filter { lines[$0].hasPrefix("getrusage(RUSAGE_THREAD") }
      #expect(bracket.count == 2)
      let loop = lines[(bracket[0] + 1)..<bracket[1]]
      let names = Set(loop.map { String($0.prefix { $0 != "(" }) })
      let allowed: Set = [
        "poll", "ppoll", "read", "write", "writev", "ioctl", "clock_gettime", "clock_nanosleep",
        "nanosleep", "futex",
      ]
      #expect(names.isSubset(of: allowed), "\(names.subtracting(allowed))")
      #expect(names.contains("poll") || names.contains("ppoll"))
      // Reads only of what it polls (the PCM's descriptor), never of a file.
      func descriptor(_ line: Substring, after prefix: String) -> Substring? {
        guard line.hasPrefix(prefix) else { return nil }
        return line.dropFirst(prefix.count).prefix { $0.isNumber }
      }
      let polled = Set(loop.compactMap { descriptor($0, after: "poll([{fd=") })
      let read = Set(loop.compactMap { descriptor($0, after: "read(") })
      #expect(read.isSubset(of: polled), "read \(read), polled \(polled)")
    }

    /// `tape scrub` playing when its device goes away: the footer says why, the header no
    /// longer says playing.
    @Test func scrubSaysTheDeviceWentAway() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let head = try space.head(of: file)
      let device = try PacedDevice()
      try device.record(seconds: 2)
      let assignments = device.environment.sorted { $0.key < $1.key }.map {
        shellQuoted("\($0.key)=\($0.value)")
      }
      let terminal = try Tmux(width: 200, height: 24)
      defer { terminal.kill() }
      // (The JACK library's own lines on stderr, once its server is gone, go to a file.)
      try terminal.start(
        "env \(assignments.joined(separator: " ")) \(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)) --device jackrec 2> \(shellQuoted(space.path("stderr"))); sleep 60"
      )
      _ = try terminal.waitFor { $0.hasPrefix("v\(head) ") }
      try terminal.send("Space")
      _ = try terminal.waitFor(steady: false) { $0.contains("playing") }
      device.stop()
      let screen = try terminal.waitFor(steady: false) {
        $0.contains("went away while playing")
      }
      let header = screen.split(separator: "\n").first ?? ""
      #expect(header.hasPrefix("v\(head) ") && !header.contains("playing"), "\(screen)")
      try terminal.send("q")
    }

    /// A chunk of decoded audio made unreadable while playing (its cache entry damaged, its
    /// source file gone, so decoding again cannot mend it): one line says so, the play goes on
    /// with every other chunk and track, and the device thread does not wait for it (no
    /// underrun).
    @Test func anUnreadableChunkWhilePlaying() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let long = space.path("long.wav")
      _ = try tool(
        "/usr/bin/sox",
        [
          "-R", "-n", "-r", "48000", "-c", "1", "-b", "16", long, "synth", "20", "whitenoise",
          "vol",
          "0.3",
        ])
      try space.tape("import", file, long)
      try space.tape("track", "add", file, "Long")
      try space.tape("clip", "add", file, "t3", "s3", "--at", "0", "--length", "9s")
      try space.tape("clip", "move", file, "c1", "--to", "5s")
      let device = try PacedDevice()
      try device.record(seconds: 10)
      let (player, out, errors) = try startTape(
        ["-v", "play", file, "--device", "jackrec", "--json", "--to", "8s"],
        environment: device.environment)
      // Once s3's decoded audio is open (its first chunks are read next), chunk 4 (5.5 s on,
      // read from 2.5 s of play) is damaged and the source deleted.
      var log = ""
      while !log.contains("s3 \(long)") {
        let data = errors.fileHandleForReading.availableData
        guard !data.isEmpty else { break }
        log += String(decoding: data, as: UTF8.self)
      }
      let folder = file + "-cache"
      let entries = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
        $0.hasSuffix("-1ch.f32")
      }
      let entry = try #require(
        entries.max {
          (try? FileManager.default.attributesOfItem(atPath: "\(folder)/\($0)")[.size] as? Int)
            ?? 0
            < (try? FileManager.default.attributesOfItem(atPath: "\(folder)/\($1)")[.size]
              as? Int) ?? 0
        })
      let handle = try #require(FileHandle(forUpdatingAtPath: "\(folder)/\(entry)"))
      try handle.seek(toOffset: UInt64(4_096 + 4 * 65_536 * 4 + 1_000))
      try handle.write(contentsOf: Data(repeating: 0x5A, count: 64))
      try handle.close()
      try FileManager.default.removeItem(atPath: long)
      let output = out.fileHandleForReading.readDataToEndOfFile()
      log += String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      player.waitUntilExit()
      #expect(player.terminationStatus == 0, "\(log)")
      let said = log.split(separator: "\n").filter {
        $0.contains("playing on, silent where it cannot be read")
      }
      #expect(said.count == 1, "\(log)")
      let report = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
      #expect(report["xruns"] as? Int == 0)
      // Chunk 4's 65,536 frames of s3 are silent; every other frame played.
      #expect(report["missingFrames"] as? Int == 65_536)
      #expect(report["frames"] as? Int == 8 * 48_000)
    }

    /// Errors: each one line, its exit code.
    @Test func playbackErrors() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let tap = try ALSATap()
      let tiny = try TapeBinary.run(["play", file, "--period", "7"], environment: tap.environment)
      #expect(tiny.status == 64)
      #expect(
        tiny.stderr
          == "error: --period 7 is not a period a device takes; use 16 to 16384 frames (256 is the default)\n"
      )
      let missing = try TapeBinary.run(["play", file, "--device", "nowhere"])
      #expect(missing.status == 74)
      #expect(missing.stderr.hasPrefix("error: cannot open the audio device 'nowhere'"))
      #expect(missing.stderr.split(separator: "\n").count == 1)

      let empty = space.path("empty.tape")
      try space.tape("new", empty)
      let nothing = try TapeBinary.run(
        ["play", empty, "--device", "tap"], environment: tap.environment)
      #expect(nothing.status == 65)
      #expect(nothing.stderr.contains("the project has no clips"))

      // JACK takes only multiples of its own period: the message says which period to ask for.
      let device = try PacedDevice()
      let refused = try TapeBinary.run(
        ["play", file, "--device", "jackrec", "--period", "100"], environment: device.environment)
      #expect(refused.status == 74)
      #expect(
        refused.stderr.hasPrefix(
          "error: the audio device 'jackrec' does not take a period of 100 frames; use --period "))
      #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")

      // A JACK device whose server is not running: one line in Tape's words, none of the five
      // libjack prints on its own ("Cannot connect to server socket…").
      var elsewhere = device.environment
      elsewhere["JACK_DEFAULT_SERVER"] = "tape-none-\(UInt32.random(in: 0...UInt32.max))"
      elsewhere["JACK_NO_START_SERVER"] = "1"
      let noServer = try TapeBinary.run(
        ["play", file, "--device", "jackrec"], environment: elsewhere)
      #expect(noServer.status == 74)
      #expect(
        noServer.stderr.hasPrefix(
          "error: cannot open the audio device 'jackrec' (its JACK server is not running; start jackd, or check JACK_DEFAULT_SERVER)"
        ), "\(noServer.stderr)")
      #expect(noServer.stderr.split(separator: "\n").count == 1, "\(noServer.stderr)")
    }

    /// `--loop` outlives a project that becomes empty: removing its only clip from another
    /// process fades it out and the play goes on in silence; the undo brings the clip back into
    /// the same play. (It used to end the play, exit 0, without a word.) SIGHUP ends it with
    /// the summary, as SIGINT and SIGTERM do.
    @Test func aLoopOutlivesAnEmptyProject() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let device = try PacedDevice()
      try device.record(seconds: 6)
      let (player, out, errors) = try startTape(
        ["play", file, "--device", "jackrec", "--loop", "--json"], environment: device.environment)
      Thread.sleep(forTimeInterval: 1)
      let clips =
        try #require(
          try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])["tracks"]
        as? [[String: Any]]
      for track in clips ?? [] {
        for clip in track["clips"] as? [[String: Any]] ?? [] {
          try space.tape("clip", "rm", file, clip["id"] as? String ?? "")
        }
      }
      Thread.sleep(forTimeInterval: 1.5)
      #expect(player.isRunning, "the play ended when the project became empty")
      try space.tape("checkout", file, "\(try space.head(of: file) - 2)")
      Thread.sleep(forTimeInterval: 1)
      #expect(player.isRunning)
      // The terminal going away (SIGHUP) stops it like Ctrl-C: the summary, then that signal.
      kill(player.processIdentifier, SIGHUP)
      let output = out.fileHandleForReading.readDataToEndOfFile()
      player.waitUntilExit()
      #expect(player.terminationReason == .uncaughtSignal && player.terminationStatus == SIGHUP)
      let stderr = String(
        decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      let report = try #require(
        try JSONSerialization.jsonObject(with: output) as? [String: Any], "\(stderr)")
      let swaps = try #require(report["swaps"] as? [[String: Any]])
      #expect(swaps.map { $0["cause"] as? String } == [nil, "edit", "edit", "checkout"])
      #expect(swaps.dropFirst().allSatisfy { $0["kind"] as? String == "crossfade" })
    }

    /// A device that goes away while playing (its JACK server stops): playback ends within a
    /// few seconds, with one line and exit 74, not a hang; the device thread allocates nothing
    /// on its way out either (it built the error's message there: one malloc, seen by a CI
    /// run's monitor test under load).
    @Test func aDeviceThatGoesAwayEndsThePlay() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let device = try PacedDevice()
      try device.record(seconds: 30)
      var environment = device.environment
      environment["LD_PRELOAD"] = try allocationCounter(in: space)
      environment["TAPE_ALLOC_REPORT"] = space.path("allocations")
      let (player, _, errors) = try startTape(
        ["play", file, "--device", "jackrec", "--loop"], environment: environment)
      Thread.sleep(forTimeInterval: 1.5)
      let stopped = ContinuousClock.now
      device.stop()
      for _ in 0..<100 where player.isRunning { Thread.sleep(forTimeInterval: 0.1) }
      if player.isRunning { kill(player.processIdentifier, SIGKILL) }
      player.waitUntilExit()
      let messages = String(
        decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      #expect(player.terminationReason == .exit && player.terminationStatus == 74, "\(messages)")
      #expect(
        messages.contains(
          "error: the audio device 'jackrec' went away while playing (it took no audio for 2 s; its server may have stopped); playback stopped"
        ), "\(messages)")
      #expect(ContinuousClock.now - stopped < .seconds(8))
      let counts = try String(contentsOfFile: space.path("allocations"), encoding: .utf8)
      #expect(counts == "0 0\n", "mallocs, frees on the device thread")
    }

    /// A device that does not take float32 (ALSA's `linear` plugin over 16-bit) is played
    /// through the plug layer, and says so; the project locked by a writer plays all the same.
    @Test func conversionAndALockedProject() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let tap = try ALSATap()
      try """
      pcm.s16 {
        type linear
        slave { pcm "null" format S16_LE }
      }
      """.write(toFile: tap.home.path(".asoundrc"), atomically: true, encoding: .utf8)
      let (holder, out, _) = try startTape(
        ["hold-lock", file, "--seconds", "30"], executable: TapeBinary.testing)
      defer {
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
      }
      #expect(String(decoding: out.fileHandleForReading.availableData, as: UTF8.self) == "locked\n")
      let played = try TapeBinary.run(
        ["play", file, "--device", "s16", "--json"], environment: tap.environment)
      #expect(played.status == 0, "\(played.stderr)")
      let report = try #require(try parseJSON(played.stdout) as? [String: Any])
      #expect(report["viaPlug"] as? Bool == true)
      #expect(report["frames"] as? Int == 168_000)
    }

    /// A source that goes missing while the project plays: the version that needs it is not
    /// played, one line says so, and the play goes on with the version it has.
    @Test func aMissingSourceWhilePlaying() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let extra = space.path("extra.wav")
      try FileManager.default.copyItem(
        atPath: TestAudio.path("tone-mono-44k-24.aiff"), toPath: extra)
      try space.tape("import", file, extra)
      let device = try PacedDevice()
      try device.record(seconds: 6)
      let (player, out, errors) = try startTape(
        ["play", file, "--device", "jackrec", "--json"], environment: device.environment)
      Thread.sleep(forTimeInterval: 1)
      try FileManager.default.removeItem(atPath: extra)
      try space.tape("clip", "add", file, "t1", "s3", "--at", "2s", "--length", "0.5s")
      let output = out.fileHandleForReading.readDataToEndOfFile()
      player.waitUntilExit()
      let messages = String(
        decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      #expect(player.terminationStatus == 0, "\(messages)")
      #expect(messages.contains("cannot be played (source s3 is missing"), "\(messages)")
      let report = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
      #expect((report["swaps"] as? [[String: Any]])?.count == 1)
      #expect(report["frames"] as? Int == 168_000)
    }
  }
}
