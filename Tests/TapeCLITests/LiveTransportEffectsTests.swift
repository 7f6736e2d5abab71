import Foundation
import ReferenceRenders
import Testing

extension Plugins {
  /// swh's amplifier (swh-lv2): at 0 dB the identity, 64 frames late (Tape's FIFO).
  static let amp = "http://plugin.org.uk/swh-plugins/amp"
}

/// What the capture of a paced play says about one stretch of it.
struct CaptureCheck {
  /// The largest difference from what was expected.
  var worst: Float = 0
  var description = ""
}

/// The frame where `captured` (interleaved stereo, aligned so that frame 0 is the source's frame
/// 0) first differs from `source`, from `from` on; nil if it never does before `until`.
func firstDifference(
  _ captured: ArraySlice<Float>, _ source: [Float], from: Int = 0, until: Int
) -> Int? {
  let base = captured.startIndex
  return (from..<until).first { frame in
    frame * 2 + 1 >= source.count || base + frame * 2 + 1 >= captured.endIndex
      || captured[base + frame * 2] != source[frame * 2]
      || captured[base + frame * 2 + 1] != source[frame * 2 + 1]
  }
}

/// Checks that `captured` (aligned on the source) fades out from frame `at` over 256 frames,
/// `source` × 255/256 … 0/256, exactly, and is silent from there to its end (a quit).
func fadesToSilence(_ captured: ArraySlice<Float>, _ source: [Float], at: Int) -> CaptureCheck {
  var check = CaptureCheck()
  let base = captured.startIndex
  for k in 0..<256 {
    for channel in 0..<2 {
      let index = (at + k) * 2 + channel
      guard base + index < captured.endIndex, index < source.count else { break }
      let expected = source[index] * Float(255 - k) / 256
      check.worst = max(check.worst, abs(captured[base + index] - expected))
    }
  }
  let after = captured[min(captured.endIndex, base + (at + 256) * 2)...]
  let loud = after.firstIndex { $0 != 0 }
  if let loud { check.worst = max(check.worst, abs(captured[loud])) }
  check.description =
    "fade-out from frame \(at): \(check.worst) from the exact fade\(loud.map { ", sound after it at frame \(($0 - base) / 2)" } ?? "")"
  return check
}

extension ProcessHeavyTests {
  /// Quitting `tape play` on the paced JACK device (ALSA-TESTING.md), the capture compared
  /// with the source sample by sample.
  @Suite("Quitting heard live", .timeLimit(.minutes(10)))
  struct LiveTransportEffectsTests {
    /// A project of 12 s of hashed noise (s1), one track with an 11 s clip of it at 0, and
    /// `amps` amplifiers at 0 dB on the track; returns its path and the noise's samples.
    static func noiseProject(
      in space: Workspace, _ name: String, amps: Int
    ) throws -> (file: String, noise: [Float]) {
      let noise = try writeHashedNoise(space.path("noise.wav"), frames: 48_000 * 12)
      let file = space.path(name)
      try space.tape("new", file)
      try space.tape("import", file, space.path("noise.wav"))
      try space.tape("track", "add", file, "Noise")
      try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "11s")
      for _ in 0..<amps { try space.tape("fx", "add", file, "t1", Plugins.amp) }
      return (file, noise)
    }

    /// Quitting fades out: `q` (on the terminal), Ctrl-C (SIGINT) and SIGTERM while noise plays
    /// through an amplifier end in the 256-frame fade-out of what was playing, exactly, then
    /// silence; the process ends as before (`q`: the summary and exit 0; a signal: the summary,
    /// then that signal). Before, the capture stopped dead on a sample at full level.
    @Test(arguments: ["q", "SIGINT", "SIGTERM"]) func quittingFadesOut(how: String) throws {
      try Plugins.require(Plugins.amp)
      for attempt in 1...2 {
        let space = try Workspace()
        let (file, noise) = try Self.noiseProject(in: space, "quit.tape", amps: 1)
        let device = try PacedDevice()
        try device.record(seconds: 5)
        var xruns = -1
        var realtime = false
        if how == "q" {
          let assignments = device.environment.sorted { $0.key < $1.key }.map {
            shellQuoted("\($0.key)=\($0.value)")
          }
          let terminal = try Tmux(width: 200, height: 10)
          defer { terminal.kill() }
          let reportPath = space.path("report.json")
          try terminal.start(
            "env \(assignments.joined(separator: " ")) \(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device jackrec --period 256 --json > \(shellQuoted(reportPath)); echo $? > \(shellQuoted(space.path("done"))); sleep 60"
          )
          _ = try terminal.waitFor(steady: false) { $0.contains("playing") }
          Thread.sleep(forTimeInterval: 1.5)
          try terminal.send(["q"])
          let deadline = Date().addingTimeInterval(10)
          while !FileManager.default.fileExists(atPath: space.path("done")), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
          }
          let status = try String(contentsOfFile: space.path("done"), encoding: .utf8)
          #expect(status.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
          let report = try #require(
            try JSONSerialization.jsonObject(
              with: Data(contentsOf: URL(fileURLWithPath: reportPath))) as? [String: Any])
          (xruns, realtime) = (
            report["xruns"] as? Int ?? -1, report["realtimePriority"] as? Bool ?? false
          )
        } else {
          let signal = how == "SIGINT" ? SIGINT : SIGTERM
          let (player, out, errors) = try startTape(
            ["play", file, "--device", "jackrec", "--period", "256", "--json"],
            environment: device.environment)
          Thread.sleep(forTimeInterval: 2)
          kill(player.processIdentifier, signal)
          let (report, _, _) = try playReport(player, out, errors)
          #expect(player.terminationReason == .uncaughtSignal && player.terminationStatus == signal)
          (xruns, realtime) = (
            report["xruns"] as? Int ?? -1, report["realtimePriority"] as? Bool ?? false
          )
        }
        let captured = try device.recorded()
        let start = try #require(onset(captured))
        let heard = captured[(start * 2)...]
        let quit = try #require(firstDifference(heard, noise, until: 4 * 48_000))
        let fade = fadesToSilence(heard, noise, at: quit)
        let verdict = device.verdict(
          differs: fade.worst > 1e-7 || quit < 24_000, attempt: attempt, playerXruns: xruns,
          playerRealtime: realtime)
        print(
          "quit by \(how): \(quit) frames exact, then \(fade.description); jackd xruns \(device.serverXruns), attempt \(attempt)"
        )
        if verdict == .retry { continue }
        #expect(xruns == 0)
        if case .unjudged(let reason) = verdict {
          print("quit by \(how): not judged: \(reason)")
          return
        }
        #expect(quit >= 24_000, "the play left the source after \(quit) frames, before the quit")
        #expect(fade.worst <= 1e-7, "\(how): \(fade.description)")
        return
      }
    }
  }
}
