import Foundation
import Testing

/// `tape record` through real ALSA (docs/alsa-testing.md): the `file` PCM with an `infile`
/// gives a known signal, unpaced, for bit-exact captures; JACK's dummy driver gives a paced
/// device to kill a recorder on at a moment of the test's choosing. One of the process-heavy
/// suites, so never beside another paced JACK server (``OneJACKServerAtATime``).
extension ProcessHeavyTests {
  @Suite("tape record") struct RecordTests {}
}

extension ProcessHeavyTests.RecordTests {
  /// A project with one track, and a HOME whose ~/.asoundrc defines `capture`, the `file` PCM
  /// reading `in.raw`.
  final class Setup {
    let space: Workspace
    let song: String
    let input: String

    init(channels: Int = 2) throws {
      space = try Workspace()
      song = space.path("song.tape")
      input = space.path("in.raw")
      try space.tape("new", song, "--rate", "48000", "--channels", "\(channels)")
      try space.tape("track", "add", song, "Voice")
      try FileManager.default.createDirectory(
        atPath: space.path("home"), withIntermediateDirectories: true)
      try """
      pcm.capture { type file slave.pcm "null" file "/dev/null" infile "\(input)" format "raw" }
      """.write(toFile: space.path("home/.asoundrc"), atomically: true, encoding: .utf8)
    }

    var environment: [String: String] { ["HOME": space.path("home"), "NO_COLOR": "1"] }

    func project() throws -> [String: Any] {
      try #require(try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    }

    func clips() throws -> [[String: Any]] {
      let tracks = try #require(try project()["tracks"] as? [[String: Any]])
      return tracks.flatMap { ($0["clips"] as? [[String: Any]]) ?? [] }
    }

    func sources() throws -> [[String: Any]] {
      try #require(try project()["sources"] as? [[String: Any]])
    }
  }

  /// Deterministic noise on the 16-bit grid, frame 0 loud (docs/alsa-testing.md).
  static func noise(frames: Int, channels: Int, seed: UInt64) -> [Int16] {
    var state = seed
    return (0..<frames * channels).map { index in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let value = Int16(truncatingIfNeeded: state >> 33)
      return index < channels ? 20_000 : value / 2
    }
  }

  /// The WAV header's format tag, bits and data of a take.
  static func wav(_ path: String) throws -> (tag: Int, bits: Int, channels: Int, data: Data) {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    #expect(bytes.count >= 44)
    func little(_ offset: Int, _ count: Int) -> Int {
      bytes[offset..<offset + count].reversed().reduce(0) { $0 << 8 | Int($1) }
    }
    #expect(bytes[36..<40].elementsEqual("data".utf8))
    #expect(little(40, 4) == bytes.count - 44, "the header's data size is the file's")
    return (little(20, 2), little(34, 2), little(22, 2), bytes.subdata(in: 44..<bytes.count))
  }

  @Test func aFloatCaptureIsBitExactAtItsPlaceInOneVersion() throws {
    let setup = try Setup()
    let frames = 48_000
    let samples = Self.noise(frames: frames, channels: 2, seed: 7).map { Float($0) / 32_768 }
    let raw = samples.withUnsafeBytes { Data($0) }
    try raw.write(to: URL(fileURLWithPath: setup.input))
    let before = try setup.space.head(of: setup.song)
    let result = try setup.space.tape(
      [
        "record", setup.song, "Voice", "--at", "1s", "--device", "capture", "--duration",
        "\(frames)f",
      ], environment: setup.environment)
    let clipID = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(clipID.hasPrefix("c"), "stdout: \(result.stdout), stderr: \(result.stderr)")
    #expect(result.stderr.contains("32-bit float"), "\(result.stderr)")
    // Frame 0 is 20,000 / 32,768: −4.3 dBFS; nothing reaches full scale.
    #expect(
      result.stderr.contains("peak -4.3 dBFS, 0 clipped samples, 0 overruns"), "\(result.stderr)")
    #expect(try setup.space.head(of: setup.song) == before + 1, "one version, one undo")
    let clips = try setup.clips()
    #expect(clips.count == 1)
    #expect(clips.first?["id"] as? String == clipID)
    #expect(clips.first?["timelineStart"] as? Int == 48_000)
    #expect(clips.first?["length"] as? Int == frames)
    let source = try #require(try setup.sources().first)
    let path = try #require(source["path"] as? String)
    #expect(path.hasPrefix("song.tape-recordings/take-") && path.hasSuffix(".wav"), "\(path)")
    let take = try Self.wav(setup.space.path(path))
    #expect(take.tag == 3 && take.bits == 32 && take.channels == 2)
    #expect(take.data == raw, "the take's samples are the device's, bit for bit")
    // No note is left: nothing waits to be recovered.
    let listed = try setup.space.tape("ls", setup.song)
    #expect(!listed.stderr.contains("recovered"), "\(listed.stderr)")
    // One undo takes the clip and its source away.
    try setup.space.tape("undo", setup.song)
    #expect(try setup.clips().isEmpty)
    #expect(try setup.sources().isEmpty)
  }

  @Test func a16BitCaptureStays16BitAndLandsAfterTheLastClip() throws {
    let setup = try Setup(channels: 1)
    let frames = 24_000
    var samples = Self.noise(frames: frames, channels: 1, seed: 11)
    // Two samples at full scale: the summary counts them as clipped.
    samples[100] = .max
    samples[200] = .min
    let raw = samples.withUnsafeBytes { Data($0) }
    try raw.write(to: URL(fileURLWithPath: setup.input))
    let first = try setup.space.tape(
      [
        "record", setup.song, "Voice", "--at", "0.5s", "--device", "capture", "--format", "s16",
        "--channels", "1", "--duration", "\(frames)f", "--json",
      ], environment: setup.environment)
    #expect(first.stderr.contains("16-bit"), "\(first.stderr)")
    #expect(
      first.stderr.contains("peak 0.0 dBFS, 2 clipped samples, 0 overruns"), "\(first.stderr)")
    let output = try #require(try parseJSON(first.stdout) as? [String: Any])
    #expect((output["ids"] as? [String])?.count == 1, "\(first.stdout)")
    // Without --at: at the end of the track's last clip.
    try setup.space.tape(
      [
        "record", setup.song, "Voice", "--device", "capture", "--format", "s16", "--channels",
        "1", "--duration", "\(frames)f",
      ], environment: setup.environment)
    let clips = try setup.clips().sorted {
      ($0["timelineStart"] as? Int ?? 0) < ($1["timelineStart"] as? Int ?? 0)
    }
    #expect(clips.map { $0["timelineStart"] as? Int } == [24_000, 48_000])
    for source in try setup.sources() {
      let take = try Self.wav(setup.space.path(try #require(source["path"] as? String)))
      #expect(take.tag == 1 && take.bits == 16 && take.channels == 1)
      #expect(take.data == raw)
    }
  }

  @Test func anUnknownDeviceOrTrackChangesNothing() throws {
    let setup = try Setup()
    try Data(count: 4_800).write(to: URL(fileURLWithPath: setup.input))
    let before = try setup.space.fingerprint("song.tape")
    let device = try setup.space.tape(
      ["record", setup.song, "Voice", "--device", "nosuch", "--duration", "1s"], status: 74,
      environment: setup.environment)
    let lines = device.stderr.split(separator: "\n")
    #expect(lines.count == 1, "\(device.stderr)")
    #expect(device.stderr.contains("--device") && device.stderr.contains("arecord -L"))
    #expect(device.stdout.isEmpty)
    let track = try setup.space.tape(
      ["record", setup.song, "t9", "--device", "capture", "--duration", "1s"], status: 65,
      environment: setup.environment)
    #expect(track.stderr.contains("t9"), "\(track.stderr)")
    #expect(try setup.space.fingerprint("song.tape") == before)
    let folder = setup.space.path("song.tape-recordings")
    let left = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    #expect(left.isEmpty, "nothing captured: \(left)")
  }

  /// A JACK server on the dummy driver (paced, silent capture ports), and `jackcap`, ALSA's
  /// jack PCM reading them.
  static func pacedCapture() throws -> PacedDevice {
    let device = try PacedDevice()
    try device.definePCM(
      """
      pcm.jackcap {
        type jack
        capture_ports { 0 system:capture_1 1 system:capture_2 }
      }
      """)
    return device
  }

  /// Starts `tape record` on `jackcap`; returns it once it says it records, and when.
  static func startRecording(
    _ space: Workspace, _ song: String, device: PacedDevice, log: String,
    environment extra: [String: String] = [:]
  ) throws -> (Process, Date) {
    let process = Process()
    process.executableURL = TapeBinary.url
    process.arguments = ["record", song, "Voice", "--at", "2s", "--device", "jackcap"]
    var environment = ProcessInfo.processInfo.environment
    environment.merge(device.environment) { $1 }
    environment.merge(extra) { $1 }
    process.environment = environment
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    process.standardError = FileHandle(forWritingAtPath: log)
    _ = FileManager.default.createFile(atPath: log + ".out", contents: nil)
    process.standardOutput = FileHandle(forWritingAtPath: log + ".out")
    process.standardInput = FileHandle.nullDevice
    try process.run()
    for _ in 0..<200 {
      let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
      if said.contains("tape record: recording") { return (process, Date()) }
      if !process.isRunning { break }
      Thread.sleep(forTimeInterval: 0.02)
    }
    process.terminate()
    throw RecordTestError(
      message:
        "tape record did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")"
    )
  }

  struct RecordTestError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
  }

  /// SIGTERM keeps the take; the capture thread allocates and frees nothing meanwhile (the
  /// LD_PRELOAD counter the player's tests use).
  @Test func sigtermKeepsTheTakeAndTheCaptureThreadNeverAllocates() throws {
    let device = try Self.pacedCapture()
    let space = try Workspace()
    let counter = try allocationCounter(in: space)
    let song = space.path("song.tape")
    try space.tape("new", song, "--rate", "48000", "--channels", "2")
    try space.tape("track", "add", song, "Voice")
    let log = space.path("record.log")
    let (process, started) = try Self.startRecording(
      space, song, device: device, log: log,
      environment: ["LD_PRELOAD": counter, "TAPE_ALLOC_REPORT": space.path("allocations")])
    Thread.sleep(forTimeInterval: 1.5)
    kill(process.processIdentifier, SIGTERM)
    let elapsed = Date().timeIntervalSince(started)
    process.waitUntilExit()
    #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM)
    let printed = try String(contentsOfFile: log + ".out", encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    #expect(printed.hasPrefix("c"), "\(said)")
    let listed = try space.tape("ls", song, "--json")
    #expect(!listed.stderr.contains("waits to be recovered"))
    let clips = try #require(
      (try parseJSON(listed.stdout) as? [String: Any])?["tracks"] as? [[String: Any]]
    ).flatMap { ($0["clips"] as? [[String: Any]]) ?? [] }
    let clip = try #require(clips.first)
    #expect(clip["id"] as? String == printed)
    let seconds = Double(clip["length"] as? Int ?? 0) / 48_000
    #expect(seconds > elapsed - 0.5 && seconds <= elapsed + 0.2, "\(elapsed) s → \(seconds) s")
    let counts = try String(contentsOfFile: space.path("allocations"), encoding: .utf8)
      .split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    print(
      "record SIGTERM: \(elapsed) s recording, \(seconds) s kept; capture thread allocations \(counts)"
    )
    #expect(counts == [0, 0], "mallocs, frees on the capture thread")
  }

  /// A JACK server that dies under a recording ends it within the stall limit (2 s of no
  /// audio), keeping what was captured, with one warning naming the device: it never hangs.
  @Test func aDeviceThatGoesAwayEndsTheTakeAndKeepsIt() throws {
    let device = try Self.pacedCapture()
    let space = try Workspace()
    let song = space.path("song.tape")
    try space.tape("new", song, "--rate", "48000", "--channels", "2")
    try space.tape("track", "add", song, "Voice")
    let log = space.path("record.log")
    let (process, started) = try Self.startRecording(space, song, device: device, log: log)
    Thread.sleep(forTimeInterval: 1)
    device.stop()
    let stopped = Date().timeIntervalSince(started)
    for _ in 0..<150 where process.isRunning { Thread.sleep(forTimeInterval: 0.1) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(said)")
    #expect(said.contains("went away while recording"), "\(said)")
    let printed = try String(contentsOfFile: log + ".out", encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let clips = try #require(
      (try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])?["tracks"]
        as? [[String: Any]]
    ).flatMap { ($0["clips"] as? [[String: Any]]) ?? [] }
    let clip = try #require(clips.first, "\(said)")
    #expect(clip["id"] as? String == printed)
    let seconds = Double(clip["length"] as? Int ?? 0) / 48_000
    #expect(seconds > 0.5 && seconds <= stopped + 0.2, "stopped at \(stopped) s, kept \(seconds) s")
  }
}
