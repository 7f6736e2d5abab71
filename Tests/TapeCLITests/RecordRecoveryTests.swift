import Foundation
import Testing

/// What a recording keeps when it goes wrong: an overdub or a punch killed (`kill -9`) and
/// recovered lands where a finished one would; an overrun of the capture ring is a marker;
/// a full disk stops the take and keeps it.
extension ProcessHeavyTests.RecordTests {
  /// Starts `tape record` with `arguments` on the paced loop, waits until its pending note holds
  /// the round trip (the two clocks met) and `seconds` have passed since, then kills it
  /// (SIGKILL). Returns what it said and the note as it was.
  static func killThroughLoop(
    _ arguments: [String], song: String, device: PacedDevice, environment extra: [String: String],
    after seconds: Double
  ) throws -> (said: String, note: [String: Any]) {
    let process = Process()
    process.executableURL = TapeBinary.url
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment.merge(device.environment) { $1 }
    environment.merge(extra) { $1 }
    process.environment = environment
    let log = song + ".record.log"
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    process.standardError = FileHandle(forWritingAtPath: log)
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    let folder = song + "-recordings"
    var note: [String: Any]?
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline && process.isRunning && note == nil {
      Thread.sleep(forTimeInterval: 0.02)
      let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
      for name in names where name.hasSuffix(".pending") && !name.hasPrefix(".") {
        if let data = FileManager.default.contents(atPath: "\(folder)/\(name)"),
          let parsed = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
          parsed["roundTrip"] != nil
        {
          note = parsed
        }
      }
    }
    let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    let found = try #require(note, "the note never held the round trip: \(said)")
    #expect(process.isRunning, "the recording was still going: \(said)")
    Thread.sleep(forTimeInterval: seconds)
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    return (said, found)
  }

  @Test func anOverdubKilledAndRecoveredLandsWhereAFinishedOneDoes() throws {
    let device = try Self.pacedLoop()
    let space = try Workspace()
    let song = try Self.clickProject(space)
    // Killed 2.5 s after the clocks met (about 0.2 s into the play): every click (the last
    // at 2.03 s) is in the take, and written (the header is refreshed every half second).
    let (said, note) = try Self.killThroughLoop(
      ["record", song, "Voice", "--play", "--device", "loop", "--to", "20s"], song: song,
      device: device, environment: ["XDG_CONFIG_HOME": space.path("config")], after: 2.5)
    let recovered = try space.tape("record", song, "--recover")
    #expect(recovered.stdout.hasPrefix("c2"), "\(recovered.stderr)")
    #expect(
      recovered.stderr.contains("aligned by the round trip measured while it recorded"),
      "\(recovered.stderr)")
    let (lag, each, peak) = Self.misalignment(try Self.renderedVoice(space, song))
    print(
      "overdub killed and recovered: note \(note), lag \(lag), each click \(each), peak \(peak); \(recovered.stderr)"
    )
    #expect(peak > 0.4, "the loop carried the clicks: \(said)")
    #expect(abs(lag) <= 1 && each.allSatisfy { abs($0) <= 1 }, "lag \(lag), clicks \(each)")
  }

  @Test func aPunchKilledAndRecoveredIsPunched() throws {
    let device = try Self.pacedLoop()
    let space = try Workspace()
    let (song, held, carried) = try Self.punchProject(space)
    let before = try Self.renderedVoice(space, song)
    // Play from 0 (the punch's pre-roll) to 20 s; killed 3 s after the clocks met, past the
    // punch-out (2.5 s) and its crossfade.
    let (said, note) = try Self.killThroughLoop(
      [
        "record", song, "Voice", "--play", "--device", "loop", "--punch-in", "1.5s",
        "--punch-out", "2.5s", "--to", "20s",
      ], song: song, device: device, environment: ["XDG_CONFIG_HOME": space.path("config")],
      after: 3)
    #expect(note["punchStart"] as? Int == 72_000 && note["punchEnd"] as? Int == 120_000)
    let recovered = try space.tape("record", song, "--recover")
    #expect(recovered.stderr.contains("only its punch kept"), "\(recovered.stderr)")
    let worst = try Self.punchErrors(held: held, carried: carried, space, song)
    let lag = Self.misalignment(try Self.renderedVoice(space, song)).lag
    print(
      "punch killed and recovered: worst error \(worst), lag \(lag), jackd xruns \(device.serverXruns); note \(note); \(recovered.stderr); as it recorded: \(said)"
    )
    #expect(worst.inside <= 1e-6 && worst.outside <= 1e-6, "\(worst); \(said)")
    #expect(worst.fades <= 1e-6, "\(worst)")
    try space.tape("undo", song)
    #expect(try Self.renderedVoice(space, song) == before)
  }

  /// The test hook TAPE_TEST_WRITER_WAITS=1 keeps the writer from writing until the capture
  /// ends: 10 s captured through an 8 s ring keep exactly the first 8 s (384,000 frames, 375
  /// periods of 1,024), the rest dropped, one gap at take frame 384,000: a marker `overrun1`
  /// there on the timeline, in the take's version, and the take 10 s long, silence where the
  /// ring dropped (``GapFillerTests`` fill gaps in the middle of a take).
  @Test func aRingOverrunIsAMarkerWhereItsGapLands() throws {
    let setup = try Setup()
    let frames = 480_000
    let samples = Self.noise(frames: frames, channels: 2, seed: 5).map { Float($0) / 32_768 }
    let raw = samples.withUnsafeBytes { Data($0) }
    try raw.write(to: URL(fileURLWithPath: setup.input))
    var environment = setup.environment
    environment["TAPE_TEST_WRITER_WAITS"] = "1"
    let before = try setup.space.head(of: setup.song)
    let result = try setup.space.tape(
      ["record", setup.song, "Voice", "--at", "1s", "--device", "capture", "--duration", "10s"],
      environment: environment)
    print("ring overrun: \(result.stderr)")
    #expect(result.stderr.contains("94 overruns"), "\(result.stderr)")
    #expect(
      result.stderr.contains(
        "94 periods (2.000 s) were dropped because the disk was late: the take holds silence in their place"
      ), "\(result.stderr)")
    #expect(result.stderr.contains("recorded 10.000 s"), "\(result.stderr)")
    #expect(result.stderr.contains("marked overrun1"), "\(result.stderr)")
    #expect(try setup.space.head(of: setup.song) == before + 1, "one version")
    let clips = try setup.clips()
    #expect(clips.count == 1 && clips.first?["length"] as? Int == 480_000)
    let markers = try #require(try setup.project()["markers"] as? [[String: Any]])
    #expect(markers.count == 1)
    #expect(markers.first?["name"] as? String == "overrun1")
    #expect(markers.first?["frame"] as? Int == 48_000 + 384_000, "\(markers)")
    let path = try #require(try setup.sources().first?["path"] as? String)
    let take = try Self.wav(setup.space.path(path))
    #expect(
      take.data == raw.prefix(384_000 * 8) + Data(count: 96_000 * 8),
      "the take is the first 8 s, bit for bit, then 2 s of silence")
    try setup.space.tape("undo", setup.song)
    #expect((try setup.project()["markers"] as? [[String: Any]] ?? []).isEmpty)
  }

  /// A take on a 2 MiB tmpfs (mounted here: the test needs root and the right to mount, as
  /// FullDiskTests do, and is skipped, saying so, without them) stops when the
  /// disk fills, keeps every whole frame it wrote, says so in one line, and is added once
  /// there is room: at once when there was room to add it, else by `--recover` after the
  /// disk is grown (`mount -o remount,size=…`).
  @Test(.enabled(if: SmallDisk.canMount, "needs root and the right to mount a tmpfs"))
  func aFullDiskStopsTheTakeAndKeepsIt() throws {
    let setup = try Setup()
    let disk = setup.space.path("disk")
    try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
    _ = try tool("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", disk])
    defer { _ = try? tool("/bin/umount", ["-l", disk]) }
    let song = disk + "/song.tape"
    try setup.space.tape("new", song, "--rate", "48000", "--channels", "2")
    try setup.space.tape("track", "add", song, "Voice")
    let frames = 480_000
    let samples = Self.noise(frames: frames, channels: 2, seed: 9).map { Float($0) / 32_768 }
    let raw = samples.withUnsafeBytes { Data($0) }
    try raw.write(to: URL(fileURLWithPath: setup.input))
    let result = try TapeBinary.run(
      ["record", song, "Voice", "--device", "capture", "--duration", "10s"],
      environment: setup.environment)
    print("full disk: status \(result.status); \(result.stderr)")
    let lines = result.stderr.split(separator: "\n").filter { $0.contains("disk filled up") }
    #expect(lines.count == 1, "\(result.stderr)")
    let added = result.status == 0
    if added {
      #expect(result.stdout.hasPrefix("c"), "\(result.stdout)")
      #expect(lines.first?.contains("was added as it is") == true)
    } else {
      #expect(result.status == 74, "\(result.stderr)")
      #expect(lines.first?.contains("'tape record \(song) --recover'") == true, "\(lines)")
      #expect(result.stdout.isEmpty)
      _ = try tool("/bin/mount", ["-o", "remount,size=64m", disk])
      let recovered = try setup.space.tape("record", song, "--recover")
      #expect(recovered.stdout.hasPrefix("c"), "\(recovered.stderr)")
    }
    let listed = try #require(
      try parseJSON(setup.space.tape("ls", song, "--json").stdout) as? [String: Any])
    let clips = try #require(listed["tracks"] as? [[String: Any]]).flatMap {
      ($0["clips"] as? [[String: Any]]) ?? []
    }
    let length = try #require(clips.first?["length"] as? Int)
    let path = try #require((listed["sources"] as? [[String: Any]])?.first?["path"] as? String)
    let take = try Self.wav(disk + "/" + path)
    print(
      "full disk: \(added ? "added at once" : "recovered after the disk grew"), \(length) frames kept"
    )
    #expect(length > 48_000 && length < frames, "\(length)")
    #expect(take.data == raw.prefix(length * 8), "every frame written, bit for bit")
  }
}
