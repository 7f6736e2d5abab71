import Foundation
import Mixing
import ReferenceRenders
import Synchronization
import Testing
import Timeline

@testable import Playback

/// The player's clock on a device at another rate than the project's (a rate converter
/// between them) logs timeline frames: through a paced JACK loopback at 44.1 kHz (the dummy
/// driver; ALSA's `jack` PCM for both directions, the player's output ports joined to the
/// recorder's input ports), a 48 kHz project's clicks are captured at the 44.1 kHz frames the
/// two clocks predict for them: the capture's frame read beside a playback reading, plus the
/// timeline frames from that reading to the click, taken to 44.1 kHz. Never beside another
/// paced JACK server (``OneJACKServerAtATime``).
@Suite(.serialized, .oneJACKServerAtATime)
struct ClockAtAnotherRateTests {
  static let clicks = (0..<8).map { 48_000 + $0 * 4_801 + ($0 * $0 * 97) % 389 }

  @Test func thePlayersClockIsInTimelineFramesOnADeviceAtAnotherRate() throws {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jackd") else {
      Issue.record("needs jackd (scripts/setup.sh installs jackd2)")
      return
    }
    // The player and the recorder run in this process, and ALSA's jack PCM names no server:
    // it takes the one JACK_DEFAULT_SERVER names, else "default". The server is started by
    // that name rather than setenv'd to another (setenv while other tests' threads read the
    // environment to start processes is a race); the other JACK tests' servers have names of
    // their own.
    let name = ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"] ?? "default"
    let server = Process()
    server.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
    // 1,024-frame cycles: the test is about the clock, not the period (docs/alsa-testing.md,
    // item 6: at 256 a loaded machine now and then makes jackd drop a cycle).
    server.arguments = ["-R", "-P", "70", "-n", name, "-d", "dummy", "-r", "44100", "-p", "1024"]
    server.environment = ProcessInfo.processInfo.environment.merging(
      ["JACK_NO_AUDIO_RESERVATION": "1"]) { $1 }
    server.standardOutput = FileHandle.nullDevice
    server.standardError = FileHandle.nullDevice
    try server.run()
    defer {
      kill(server.processIdentifier, SIGTERM)
      server.waitUntilExit()
    }
    func ports() -> [String] {
      let lister = Process()
      lister.executableURL = URL(fileURLWithPath: "/usr/bin/jack_lsp")
      let pipe = Pipe()
      lister.standardOutput = pipe
      lister.standardError = FileHandle.nullDevice
      guard (try? lister.run()) != nil else { return [] }
      let data = pipe.fileHandleForReading.readDataToEndOfFile()
      lister.waitUntilExit()
      return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
    for _ in 0..<100 where !ports().contains("system:capture_1") {
      Thread.sleep(forTimeInterval: 0.05)
    }
    // One clip of one-frame clicks (half scale) at ``clicks``, 4 s.
    var samples = [Float](repeating: 0, count: 48_000 * 4)
    for click in Self.clicks { samples[click] = 0.5 }
    let audio = [Source.ID(1): SourceAudio(interleaved: samples, channels: 1)]
    let project = Project(
      sampleRate: 48_000, channels: 2,
      sources: [
        Source(
          id: Source.ID(1), path: "/clicks", contentHash: "k", sampleRate: 48_000, channels: 1,
          frameCount: FrameCount(Int64(samples.count)))
      ],
      tracks: [
        Track(
          id: Track.ID(1), name: "A",
          clips: [
            Clip(
              id: Clip.ID(1), source: Source.ID(1), timelineStart: 0,
              sourceRange: FrameRange(start: 0, count: FrameCount(Int64(samples.count))))
          ])
      ])
    let player = try LivePlayer(
      LivePlayer.Configuration(
        device: DeviceRequest(name: "jack", period: 1_024), sampleRate: 48_000, channels: 2,
        range: 0..<Int64(samples.count), loop: false),
      compile: { project, version, sequence in
        try RenderPlan(project: project, audio: audio, version: version, sequence: sequence)
      },
      load: { _, _ in })
    try #require(player.deviceRate == 44_100, "the device plays at the server's rate")
    let playClock = StreamClock()
    player.clock = playClock
    let recorder = try Recorder(
      Recorder.Configuration(device: "jack", sampleRate: 44_100, channels: 2, format: .float))
    let captureClock = StreamClock()
    recorder.clock = captureClock
    let captured = Captured()
    try recorder.start(write: { captured.append($0) }, tick: {})
    try player.start(project, version: 1)
    // Join the player's output to the recorder's input (the first click is 1 s in). The
    // server is this test's: every port not the system's is this process's (the jack PCM
    // names its client after the program and the pid, cut to 31 characters, so the pid may
    // not be whole: "TapePackageTests.xctest.P.1811.:out_000").
    var joined = false
    for _ in 0..<200 where !joined {
      let mine = ports().filter { !$0.hasPrefix("system:") && !$0.isEmpty }
      let outputs = mine.filter { $0.contains(".P.") }.sorted()
      let inputs = mine.filter { $0.contains(".C.") }.sorted()
      if outputs.count == 2 && inputs.count == 2 {
        for (from, to) in zip(outputs, inputs) {
          let connect = Process()
          connect.executableURL = URL(fileURLWithPath: "/usr/bin/jack_connect")
          connect.arguments = [from, to]
          try connect.run()
          connect.waitUntilExit()
        }
        joined = true
      } else {
        Thread.sleep(forTimeInterval: 0.01)
      }
    }
    #expect(joined, "ports: \(ports())")
    _ = player.wait()
    Thread.sleep(forTimeInterval: 0.3)
    recorder.stop()
    let report = recorder.wait()
    #expect(report.failure == nil)
    // Channel 0 of the capture; each click's loudest frame (the converter's sinc peaks there).
    let heard = captured.channel0()
    var peaks: [Int] = []
    var index = 0
    while index < heard.count {
      if abs(heard[index]) > 0.2 {
        let window = index..<min(heard.count, index + 40)
        peaks.append(window.max { abs(heard[$0]) < abs(heard[$1]) } ?? index)
        index += 2_000
      } else {
        index += 1
      }
    }
    // The clocks' prediction for each click: from each pair of readings a quarter of a JACK
    // cycle apart or less, the capture frame plus the timeline frames to the click at 44.1 kHz.
    let plays = playClock.entries
    let captures = captureClock.entries
    let window: UInt64 = 1_024 * 1_000_000_000 / 44_100 / 4
    var predictions: [[Double]] = Array(repeating: [], count: Self.clicks.count)
    for entry in plays {
      guard
        let near = captures.min(by: {
          $0.time.distance(to: entry.time).magnitude < $1.time.distance(to: entry.time).magnitude
        }), near.time.distance(to: entry.time).magnitude <= window
      else { continue }
      for (number, click) in Self.clicks.enumerated() {
        predictions[number].append(
          Double(near.position) + Double(Int64(click) - entry.position) * 44_100 / 48_000)
      }
    }
    let predicted = predictions.map { values in
      values.isEmpty ? -1 : values.sorted()[values.count / 2]
    }
    let errors = zip(peaks, predicted).map { Double($0) - $1 }
    print(
      "clock at 44.1 kHz for a 48 kHz project: clicks heard at \(peaks), predicted \(predicted.map { ($0 * 10).rounded() / 10 }), errors \(errors.map { ($0 * 10).rounded() / 10 })"
    )
    #expect(peaks.count == Self.clicks.count, "\(peaks)")
    #expect(!errors.isEmpty && errors.allSatisfy { abs($0) <= 2 }, "\(errors)")
  }
}

/// What the recorder captured, appended by its writer thread, read after it ended.
private final class Captured: @unchecked Sendable {
  private let bytes = Mutex(Data())

  func append(_ buffer: UnsafeRawBufferPointer) {
    bytes.withLock { $0.append(contentsOf: buffer) }
  }

  /// Channel 0 of stereo float frames.
  func channel0() -> [Float] {
    bytes.withLock { data in
      data.withUnsafeBytes { raw in
        let floats = raw.bindMemory(to: Float.self)
        return stride(from: 0, to: floats.count, by: 2).map { floats[$0] }
      }
    }
  }
}
