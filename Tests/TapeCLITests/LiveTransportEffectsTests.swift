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

/// Follows a capture (interleaved stereo, from its onset) along what was played, frame by frame.
/// A cycle jackd drops (an xrun of its own: environment noise on a loaded machine, see
/// docs/alsa-testing.md) makes the capture go on whole periods (256 frames) later: where the
/// next 64 frames fit what was played that many periods on, the follower goes on from there and
/// counts the periods (``skipped``), which a test then holds to the xruns jackd logged.
struct CaptureFollower {
  let captured: ArraySlice<Float>
  /// Frames what was played is ahead of the capture (dropped periods).
  var lag = 0
  var skipped = 0

  init(_ captured: ArraySlice<Float>) { self.captured = captured }

  /// The first capture frame from `from` (before `until`) that is not `expected` at its place
  /// (nil where nothing should be), past dropped periods; nil if there is none.
  mutating func firstDifference(
    from: Int, until: Int, _ expected: (Int) -> (Float, Float)?
  ) -> Int? {
    func fits(_ frame: Int, _ played: Int) -> Bool {
      let index = captured.startIndex + frame * 2
      guard index + 1 < captured.endIndex, let want = expected(played) else { return false }
      return captured[index] == want.0 && captured[index + 1] == want.1
    }
    var frame = from
    while frame < until {
      if fits(frame, frame + lag) {
        frame += 1
        continue
      }
      let lag = self.lag
      if let periods = (1...8).first(where: { periods in
        (0..<64).allSatisfy { fits(frame + $0, frame + $0 + lag + 256 * periods) }
      }) {
        self.lag += 256 * periods
        skipped += periods
        continue
      }
      return frame
    }
    return nil
  }
}

/// The stereo frame `frame` of interleaved `samples`, nil past its end.
func stereoFrame(_ samples: [Float], _ frame: Int) -> (Float, Float)? {
  frame >= 0 && frame * 2 + 1 < samples.count ? (samples[frame * 2], samples[frame * 2 + 1]) : nil
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
  /// The transport and chain changes through effects in `tape play` on the paced JACK device
  /// (docs/alsa-testing.md): loops, seeks, adding, moving, removing and bypassing effects, and
  /// quitting, each compared with renders sample by sample or in 5 ms windows.
  @Suite(
    "Loops, seeks, chain changes and quitting through effects, heard live", .timeLimit(.minutes(10))
  )
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

    /// A loop through an effect is seamless and exactly the loop's length, every pass, over
    /// 100 passes: with an amplifier on the track, `--from 1s --to 1.1s --loop` plays passes
    /// of 4,800 frames, each equal to the render of the range sample for sample (its wrap
    /// faded out over the last 256 frames and in over the first 256 of the next, as without
    /// effects), no drift. Before, each wrap let out the effect's latency of silence (65
    /// frames with the fade-in's first) and restarted at a quarter of full level, and every
    /// pass was 64 frames longer than the last. The audio thread allocates nothing through the
    /// wraps (each starts the chains afresh and feeds them their latency ahead).
    @Test func aLoopThroughAnEffectIsTheRangeEveryPass() throws {
      try Plugins.require(Plugins.amp)
      for attempt in 1...2 {
        let space = try Workspace()
        let (file, _) = try Self.noiseProject(in: space, "loop.tape", amps: 1)
        try space.tape(
          "render", file, "--from", "1s", "--to", "1.1s", "-o", space.path("range.wav"), "--bits",
          "32f")
        let render = try ReferenceRender.decode(space.path("range.wav"))
        let length = render.count / 2
        try #require(length == 4_800)
        let device = try PacedDevice()
        try device.record(seconds: 15)
        var environment = device.environment
        environment["LD_PRELOAD"] = try allocationCounter(in: space)
        environment["TAPE_ALLOC_REPORT"] = space.path("allocations")
        let (player, out, errors) = try startTape(
          [
            "play", file, "--device", "jackrec", "--period", "256", "--json", "--from", "1s",
            "--to", "1.1s", "--loop",
          ], environment: environment)
        Thread.sleep(forTimeInterval: 11.5)
        kill(player.processIdentifier, SIGTERM)
        let (report, _, said) = try playReport(player, out, errors)
        let captured = try device.recorded()
        let start = try #require(onset(captured), "nothing was heard: \(said)")
        let passes = 100
        // What the passes play: the range's render, each pass faded out at its end and (but the
        // first) in at its start.
        func played(_ frame: Int) -> (Float, Float)? {
          guard frame < passes * length, let value = stereoFrame(render, frame % length) else {
            return nil
          }
          let (pass, into) = (frame / length, frame % length)
          var gain: Float = 1
          if pass > 0 && into < 256 { gain = Float(into) / 256 }
          if into >= length - 256 { gain = min(gain, Float(length - 1 - into) / 256) }
          return (value.0 * gain, value.1 * gain)
        }
        var follower = CaptureFollower(captured[(start * 2)...])
        let end = follower.firstDifference(from: 0, until: captured.count / 2 - start, played)
        // Every pass heard as it should be, to the end of the 100th.
        let stopped = (end ?? captured.count / 2 - start) + follower.lag
        let noise = device.serverXruns + device.recorderOverruns
        let verdict = device.verdict(
          differs: stopped < passes * length || follower.skipped > noise, attempt: attempt,
          playerXruns: report["xruns"] as? Int ?? -1,
          playerRealtime: report["realtimePriority"] as? Bool ?? false)
        print(
          "loop through an effect: \(passes) passes of \(length) frames, the capture as played to frame \(stopped) (pass \(stopped / length), frame \(stopped % length)), \(follower.skipped) periods dropped by jackd (its xruns \(noise)), attempt \(attempt)"
        )
        if verdict == .retry { continue }
        #expect(report["xruns"] as? Int == 0)
        let counts = try String(contentsOfFile: space.path("allocations"), encoding: .utf8)
          .split(separator: " ").compactMap {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
          }
        #expect(counts == [0, 0], "the audio thread allocated or freed through the wraps")
        if case .unjudged(let reason) = verdict {
          print("loop through an effect: not judged: \(reason)")
          return
        }
        #expect(
          stopped >= passes * length,
          "pass \(stopped / length) differs from the range's render at its frame \(stopped % length)"
        )
        #expect(follower.skipped <= noise, "the capture skipped more than jackd dropped")
        return
      }
    }

    /// A seek through effects is as clean as one without: `→` while two amplifiers play (and
    /// while none does) fades the place playing out over 256 frames, exactly, and the target
    /// in over the next 256, exactly, then plays on from it sample for sample; `q` then fades
    /// out to silence. Before, after the fade-out the chains let out their latency's worth of
    /// the old place at the fade-in's gains, and the target came in at once at half of full
    /// level: a click. The audio thread allocates nothing for the seek.
    @Test(arguments: [2, 0]) func aSeekThroughEffectsIsAsCleanAsOneWithout(amps: Int) throws {
      try Plugins.require(Plugins.amp)
      for attempt in 1...2 {
        let space = try Workspace()
        let (file, noise) = try Self.noiseProject(in: space, "seek.tape", amps: amps)
        let device = try PacedDevice()
        try device.record(seconds: 7)
        var environment = device.environment
        environment["LD_PRELOAD"] = try allocationCounter(in: space)
        environment["TAPE_ALLOC_REPORT"] = space.path("allocations")
        let assignments = environment.sorted { $0.key < $1.key }.map {
          shellQuoted("\($0.key)=\($0.value)")
        }
        let terminal = try Tmux(width: 200, height: 10)
        defer { terminal.kill() }
        let reportPath = space.path("report.json")
        try terminal.start(
          "env \(assignments.joined(separator: " ")) \(shellQuoted(TapeBinary.url.path)) play \(shellQuoted(file)) --device jackrec --period 256 --json > \(shellQuoted(reportPath)); echo done > \(shellQuoted(space.path("done"))); sleep 60"
        )
        _ = try terminal.waitFor(steady: false) { $0.contains("playing") }
        Thread.sleep(forTimeInterval: 1)
        try terminal.send(["Right"])
        Thread.sleep(forTimeInterval: 1.5)
        try terminal.send(["q"])
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: space.path("done")), Date() < deadline {
          Thread.sleep(forTimeInterval: 0.05)
        }
        let report = try #require(
          try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportPath)))
            as? [String: Any])
        let captured = try device.recorded()
        let start = try #require(onset(captured))
        let heard = captured[(start * 2)...]
        // The seek's fade-out begins where the capture leaves the source (past periods jackd
        // dropped, if it did).
        var follower = CaptureFollower(heard)
        let out = try #require(
          follower.firstDifference(from: 0, until: 4 * 48_000) { stereoFrame(noise, $0) })
        let lag = follower.lag
        var worst: Float = 0
        for k in 0..<256 {
          for channel in 0..<2 {
            let index = (out + k) * 2 + channel
            let expected = noise[index + lag * 2] * Float(255 - k) / 256
            worst = max(worst, abs(heard[heard.startIndex + index] - expected))
          }
        }
        // Where it landed: the target's frames are found in the source, 1,000 frames in.
        let landing = out + 256
        let probe = Array(heard[(heard.startIndex + (landing + 1_000) * 2)...].prefix(128))
        let found = try #require(
          stride(from: 0, to: noise.count - 128, by: 2).first { index in
            noise[index] == probe[0] && Array(noise[index..<index + 128]) == probe
          }, "the capture after the seek is not the source anywhere")
        let target = found / 2 - 1_000
        for k in 0..<256 {
          for channel in 0..<2 {
            let index = (landing + k) * 2 + channel
            let expected = noise[(target + k) * 2 + channel] * Float(k) / 256
            worst = max(worst, abs(heard[heard.startIndex + index] - expected))
          }
        }
        // Then the target plays on, sample for sample, until the quit.
        let after = heard[(heard.startIndex + (landing + 256) * 2)...]
        let alignedSource = Array(noise[((target + 256) * 2)...])
        var playing = CaptureFollower(after)
        let quit = try #require(
          playing.firstDifference(from: 0, until: alignedSource.count / 2) {
            stereoFrame(alignedSource, $0)
          }, "the play did not end before the source did")
        let fade = fadesToSilence(after, Array(alignedSource[(playing.lag * 2)...]), at: quit)
        let dropped = follower.skipped + playing.skipped
        let verdict = device.verdict(
          differs: worst > 1e-7 || fade.worst > 1e-7 || quit < 24_000
            || dropped > device.serverXruns + device.recorderOverruns, attempt: attempt,
          playerXruns: report["xruns"] as? Int ?? -1,
          playerRealtime: report["realtimePriority"] as? Bool ?? false)
        print(
          "seek through \(amps) amplifiers: from frame \(out) to \(target), fades \(worst) from exact, then \(quit) frames exact; \(fade.description); periods dropped by jackd \(dropped) (its xruns \(device.serverXruns)), attempt \(attempt)"
        )
        if verdict == .retry { continue }
        #expect(report["xruns"] as? Int == 0)
        let counts = try String(contentsOfFile: space.path("allocations"), encoding: .utf8)
          .split(separator: " ").compactMap {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
          }
        #expect(counts == [0, 0], "the audio thread allocated or freed")
        if case .unjudged(let reason) = verdict {
          print("seek through effects: not judged: \(reason)")
          return
        }
        #expect(target > out + 4 * 48_000, "the seek did not go 5 s ahead: \(out) → \(target)")
        #expect(worst <= 1e-7, "the seek's fades differ from exact ones by \(worst)")
        #expect(quit >= 24_000, "the target played exactly for only \(quit) frames")
        #expect(fade.worst <= 1e-7, "q: \(fade.description)")
        return
      }
    }

    /// Through moves, an add, its undo, a removal, its undo (a new instance), a bypass and its
    /// undoing, while two amplifiers (or x42's EQ, flat, and an amplifier) play noise or a
    /// 375 Hz tone, the level in every 5 ms window stays within 1 dB of the louder of the
    /// renders of the versions before and after each change (they sound the same here: a
    /// reorder of effects that commute is not heard). Before, each change dipped: −3 to −5 dB
    /// on noise and −17 to −26 dB on the tone for 15 to 20 ms (the chain's delay crossfading
    /// with itself), and a moved or restored EQ −13 dB for 125 ms (its own start-up).
    @Test(arguments: [("amps", "noise"), ("amps", "tone"), ("eq", "noise"), ("eq", "tone")])
    func chainChangesKeepTheLevel(chain: String, signal: String) throws {
      try Plugins.require(Plugins.amp, Plugins.eq)
      for attempt in 1...2 {
        let space = try Workspace()
        let file: String
        if signal == "noise" {
          file = try Self.noiseProject(in: space, "changes.tape", amps: 0).file
        } else {
          file = try sineProject(in: space, hertz: 375)
          // From a quarter period in: the first frame is loud, so the onset is exact.
          try space.tape(
            "clip", "add", file, "t1", "s1", "--at", "0", "--from", "32f", "--length", "11s")
        }
        try space.tape("fx", "add", file, "t1", chain == "eq" ? Plugins.eq : Plugins.amp)
        try space.tape("fx", "add", file, "t1", Plugins.amp)
        let device = try PacedDevice()
        try device.record(seconds: 13)
        let (player, out, errors) = try startTape(
          ["play", file, "--device", "jackrec", "--period", "256", "--json"],
          environment: device.environment)
        Thread.sleep(forTimeInterval: 1.5)
        let changes: [[String]] = [
          ["fx", "move", file, "f2", "--to", "0"], ["fx", "move", file, "f2", "--to", "1"],
          ["fx", "add", file, "t1", Plugins.amp], ["undo", file], ["fx", "rm", file, "f1"],
          ["undo", file], ["fx", "bypass", file, "f2"], ["fx", "bypass", file, "f2", "--on"],
        ]
        for change in changes {
          try space.tape(change)
          Thread.sleep(forTimeInterval: 1)
        }
        kill(player.processIdentifier, SIGINT)
        let (report, swaps, said) = try playReport(player, out, errors)
        let captured = try device.recorded()
        let start = try #require(onset(captured), "nothing was heard: \(said)")
        var renders: [Int: [Float]] = [:]
        for version in Set(swaps.compactMap { $0["version"] as? Int }) {
          let path = space.path("v\(version).wav")
          try space.tape("render", file, "--version", "\(version)", "-o", path, "--bits", "32f")
          renders[version] = try ReferenceRender.decode(path)
        }
        let heard = Array(captured[(start * 2)...])
        // From 1.2 s (the EQ's own start-up glide is over in the renders and the play alike) to
        // the quit's fade. A cycle jackd drops (an xrun of its own, environment noise) skips 256
        // frames of the capture: each window is compared at the lag, a whole number of periods
        // and never less than the last window's, where the capture fits the render best.
        let end = min(
          heard.count / 480 - 20, (swaps.compactMap { $0["frame"] as? Int }.max() ?? 0) / 240 + 100)
        var worst = (below: 0.0, above: 0.0, at: 0)
        var lag = 0
        for window in (57_600 / 240)..<end {
          let frame = window * 240
          let before = swaps.filter { ($0["frame"] as? Int ?? 0) <= frame + 240 }
          let newVersion = before.last?["version"] as? Int ?? 0
          let new = try #require(renders[newVersion])
          let old = try #require(renders[before.dropLast().last?["version"] as? Int ?? newVersion])
          func error(_ lag: Int) -> Double {
            var sum = 0.0
            for index in (frame * 2)..<((frame + 240) * 2) where (index + lag * 2) < new.count {
              let difference = Double(heard[index]) - Double(new[index + lag * 2])
              sum += difference * difference
            }
            return sum
          }
          lag = (0...4).map { lag + $0 * 256 }.min { error($0) < error($1) } ?? lag
          guard (frame + lag + 240) * 2 <= min(new.count, old.count) else { continue }
          let louder = max(
            level(old[((frame + lag) * 2)..<((frame + lag + 240) * 2)]),
            level(new[((frame + lag) * 2)..<((frame + lag + 240) * 2)]))
          let here = level(heard[(frame * 2)..<((frame + 240) * 2)])
          if louder - here > worst.below { worst = (louder - here, worst.above, frame) }
          worst.above = max(worst.above, here - louder)
        }
        let dropped = lag / 256 > device.serverXruns + device.recorderOverruns
        let verdict = device.verdict(
          differs: worst.below > 1 || worst.above > 1 || dropped, attempt: attempt,
          playerXruns: report["xruns"] as? Int ?? -1,
          playerRealtime: report["realtimePriority"] as? Bool ?? false)
        print(
          "chain changes (\(chain), \(signal)): the level at most \(worst.below) dB below the louder render (frame \(worst.at)) and \(worst.above) dB above it, the capture \(lag) frames behind at the end; swaps \(swaps.map { "\($0["cause"] as? String ?? "-")@\($0["frame"] as? Int ?? 0)" }), jackd xruns \(device.serverXruns), attempt \(attempt)"
        )
        if verdict == .retry { continue }
        #expect(report["xruns"] as? Int == 0)
        // Every change was heard: the edits, undos and the refreshes that let instances go.
        #expect(swaps.count >= 1 + changes.count, "\(said)")
        if case .unjudged(let reason) = verdict {
          print("chain changes: not judged: \(reason)")
          return
        }
        #expect(!dropped, "the capture skipped \(lag) frames, more than jackd dropped")
        #expect(worst.below <= 1, "a dip of \(worst.below) dB near frame \(worst.at)")
        #expect(worst.above <= 1, "a swell of \(worst.above) dB")
        return
      }
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
        var follower = CaptureFollower(heard)
        let quit = try #require(
          follower.firstDifference(from: 0, until: 4 * 48_000) { stereoFrame(noise, $0) })
        let fade = fadesToSilence(heard, Array(noise[(follower.lag * 2)...]), at: quit)
        let verdict = device.verdict(
          differs: fade.worst > 1e-7 || quit < 24_000
            || follower.skipped > device.serverXruns + device.recorderOverruns,
          attempt: attempt, playerXruns: xruns, playerRealtime: realtime)
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

/// The RMS of `samples` in dB.
func level(_ samples: ArraySlice<Float>) -> Double {
  let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
  return 10 * log10(max(sum / Double(max(samples.count, 1)), 1e-20))
}
