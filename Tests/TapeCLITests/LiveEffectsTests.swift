import Foundation
import ReferenceRenders
import Testing
import Timeline
import TimelineStore

extension ProcessHeavyTests {
  /// Effects in `tape play` on the paced JACK device (docs/alsa-testing.md).
  @Suite("Effects heard live", .timeLimit(.minutes(10)))
  struct LiveEffectsTests {
    /// A project `name` in `space`: 4 s of hashed noise imported, one track "Noise" with a
    /// 3-second clip of it at 0.
    static func noiseProject(in space: Workspace, _ name: String) throws -> String {
      _ = try writeHashedNoise(space.path("noise.wav"), frames: 48_000 * 4)
      let file = space.path(name)
      try space.tape("new", file)
      try space.tape("import", file, space.path("noise.wav"))
      try space.tape("track", "add", file, "Noise")
      try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "3s")
      return file
    }

    /// A whole play of a project with an EQ and a compressor on its track and a look-ahead
    /// limiter (64 frames of latency) on the master equals its render bit for bit, from the
    /// first frame heard, the effects' tail included: offline = live, latency taken out in
    /// both. After it the play rings on for the second of quiet that ends it (the render ends
    /// where that second begins; the player cannot hear ahead), under -90 dBFS, and no longer.
    @Test func aPlayWithEffectsEqualsItsRender() throws {
      try Plugins.require(Plugins.eq, Plugins.compressor, Plugins.limiter)
      let space = try Workspace()
      let file = try Self.noiseProject(in: space, "fx.tape")
      try space.tape(
        "fx", "add", file, "t1", Plugins.eq, "--set", "sec1=on", "--set", "gain1=-9",
        "--set", "freq1=300")
      try space.tape("fx", "add", file, "t1", Plugins.compressor, "--set", "threshold=-30")
      try space.tape("fx", "add", file, "master", Plugins.limiter, "--set", "threshold=-6")
      try space.tape("render", file, "-o", space.path("render.wav"), "--bits", "32f")
      let render = try ReferenceRender.decode(space.path("render.wav"))
      let quiet = Float(pow(10, -90.0 / 20))
      // Bit for bit through ALSA's file PCM, which keeps the floats (unpaced, a period of 256
      // and one of 1,024).
      for period in ["256", "1024"] {
        let tapped = try playedThroughFilePCM(space, file, period: period)
        #expect(Array(tapped.prefix(render.count)) == render, "period \(period)")
        let after = tapped.dropFirst(render.count)
        #expect(after.allSatisfy { abs($0) < quiet }, "period \(period)")
        // Then the device's buffer of silence.
        let rang = ((after.lastIndex { $0 != 0 } ?? render.count - 1) - render.count) / 2 + 1
        #expect(rang <= 48_000 + 1_024, "period \(period): rang \(rang) frames after the render")
      }
      // Aligned on the first loud sample: the filters' first outputs are tiny (even
      // subnormal), and the capture's first non-zero frame need not be the render's.
      let loud = { (samples: [Float]) in samples.firstIndex { abs($0) > 0.01 }.map { $0 / 2 } }
      let first = try #require(loud(render))
      var attempts = 0
      while true {
        attempts += 1
        let device = try PacedDevice()
        try device.record(seconds: 5)
        let played = try TapeBinary.run(
          ["play", file, "--device", "jackrec", "--period", "256", "--json"],
          environment: device.environment)
        #expect(played.status == 0, "\(played.stderr)")
        let report = try #require(try parseJSON(played.stdout) as? [String: Any])
        let captured = try device.recorded()
        let start = try #require(loud(captured)) - first
        try #require(start >= 0)
        let heard = render
        let body = Array(captured[(start * 2)..<min(captured.count, start * 2 + heard.count)])
        let exact =
          body.count == heard.count && zip(body, heard).allSatisfy { abs($0 - $1) <= 1e-7 }
        let silentAfter = captured[min(captured.count, start * 2 + heard.count)...].allSatisfy {
          abs($0) < quiet
        }
        let verdict = device.verdict(
          differs: !exact || !silentAfter, attempt: attempts,
          playerXruns: report["xruns"] as? Int ?? -1,
          playerRealtime: report["realtimePriority"] as? Bool ?? false)
        if verdict == .retry { continue }
        #expect(report["xruns"] as? Int == 0)
        if case .unjudged(let reason) = verdict {
          print("live effects: not judged: \(reason)")
          return
        }
        let worst = zip(body, heard).map { abs($0 - $1) }.max() ?? 0
        print("live effects: the paced capture differs from the render by at most \(worst)")
        // jack_rec writes 32-bit integer PCM: a float that is not on that grid comes back
        // rounded (the 16-bit noise alone is exact; the effects' output is not on any grid).
        #expect(body.count == heard.count)
        #expect(worst <= 1e-7, "the capture differs from the render by \(worst)")
        #expect(silentAfter)
        return
      }
    }

    /// While a 100 Hz sine plays through an EQ, another process sets the EQ's gain (a ramp),
    /// bypasses it and turns it back on (crossfades), adds a compressor, moves it before the EQ
    /// and removes it (each crossfades in or out of the chain) and moves the clip (a crossfade of the clips before the EQ):
    /// each change makes the swap it should, none clicks, and the audio thread allocates
    /// nothing. (One retry when jackd itself logged xruns, as docs/alsa-testing.md advises.)
    @Test func effectChangesWhilePlayingNeverClick() throws {
      try Plugins.require(Plugins.eq, Plugins.compressor)
      for attempt in 1...2 {
        let space = try Workspace()
        let file = try sineProject(in: space, hertz: 100)
        try space.tape(
          "clip", "add", file, "t1", "s1", "--at", "0", "--length", "8s", "--fade-in", "50ms",
          "--fade-out", "50ms")
        try space.tape("fx", "add", file, "t1", Plugins.eq, "--set", "gain=0")
        let device = try PacedDevice(period: PacedDevice.judgingPeriod)
        // The changes are timed from the device's opening, not the launch: each must come
        // after the first plan.
        let play = try device.startPlay(file, in: space, recording: 10)
        let store = try TimelineStore.open(at: file)
        let changes: [(String, (Project, inout IDAllocator) throws -> [Command])] = [
          ("gain", { p, _ in try p.setEffect(Effect.ID(1), parameters: ["gain": -12]) }),
          ("bypass", { p, _ in try p.setEffect(Effect.ID(1), bypassed: true) }),
          ("on", { p, _ in try p.setEffect(Effect.ID(1), bypassed: false) }),
          (
            "add",
            { p, ids in
              try p.addEffect(
                Effect(
                  id: ids.newEffectID(), plugin: Plugins.compressor,
                  parameters: ["threshold": -20, "Ratio": 0.5]), to: .track(Track.ID(1)))
            }
          ),
          // The compressor moved before the EQ: a new instance enters there, the old leaves.
          ("move fx", { p, _ in try p.moveEffect(Effect.ID(2), to: 0) }),
          ("rm", { p, _ in try p.removeEffects([Effect.ID(2)]) }),
          ("move", { p, _ in try p.moveClip(Clip.ID(1), to: FramePosition(4_800), track: nil) }),
        ]
        Thread.sleep(forTimeInterval: 1.5)
        for (label, change) in changes {
          try store.commit(label: label) { project, ids in try change(project, &ids) }
          Thread.sleep(forTimeInterval: 0.8)
        }
        try store.close()
        let (report, swaps, said) = try play.finish()
        let captured = try device.recorded()
        // A click is a discontinuity: the second difference of a 100 Hz sine at half scale is
        // at most (2π·100/48000)²·0.5 ≈ 0.0001, a 20 ms ramp adds as little, the corner of a
        // 256-frame dip 0.002); a step of even -50 dBFS shows as 0.003.
        let left = stride(from: 0, to: captured.count, by: 2).map { captured[$0] }
        var bends: [Float] = []
        for index in 1..<max(left.count - 1, 1) {
          let bend: Float = left[index + 1] - 2 * left[index] + left[index - 1]
          bends.append(abs(bend))
        }
        let largest = bends.max() ?? 0
        let limit: Float = 0.003
        let at = bends.firstIndex { $0 > limit }
        let verdict = device.verdict(
          differs: largest > limit, attempt: attempt,
          playerXruns: report["xruns"] as? Int ?? -1,
          playerRealtime: report["realtimePriority"] as? Bool ?? false)
        print(
          "live effects: largest second difference \(largest) (limit \(limit)), swaps \(swaps.map { $0["kind"] ?? "" }), jackd xruns \(device.serverXruns), attempt \(attempt)"
        )
        if verdict == .retry { continue }
        // Effects added and removed crossfade inside the chain (a ramp swap: the clips are the
        // same), and the removed one's instance goes in a refresh once it has left.
        #expect(
          swaps.map { $0["kind"] as? String } == [
            "first", "ramp", "ramp", "ramp", "ramp", "ramp", "ramp", "ramp", "ramp", "crossfade",
          ], "\(said)")
        // After the move (the old instance has left) and after the removal.
        #expect(
          swaps.map { $0["cause"] as? String } == [
            nil, "edit", "edit", "edit", "edit", "edit", "refresh", "edit", "refresh", "edit",
          ])
        #expect(report["xruns"] as? Int == 0)
        let counts = try String(contentsOfFile: play.allocations, encoding: .utf8)
          .split(separator: " ").compactMap {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
          }
        #expect(counts == [0, 0], "the audio thread allocated or freed")
        if case .unjudged(let reason) = verdict {
          print("live effects: not judged: \(reason)")
          return
        }
        #expect(
          largest <= limit,
          "a click: a second difference of \(largest) at capture frame \(String(describing: at))")
        return
      }
    }

    /// While a 100 Hz sine plays through an EQ (f1, −6 dB), another process adds a second EQ
    /// (f2, −12 dB), then removes the first. Each change crossfades one chain into the other,
    /// every instance running once: the capture equals the render of the version playing
    /// before the add; from the add's crossfade on, the render of the version with both, still
    /// aligned (the chains were fed f2's latency ahead as it entered; it used to slip 64 frames
    /// late for the rest of the play); after the removal, the render of the version with f2
    /// alone. A follow-up plan (`refresh`) lets f1's instance go once it has left. No click
    /// anywhere (the second difference of the capture).
    /// (A dip, fading to silence and back, made 5 ms holes here before.) The same from a
    /// project without effects: the first EQ comes (the mixes without buses and with them
    /// crossfade) and goes (its refresh takes the buses away again).
    @Test(arguments: [true, false]) func effectsEnterAndLeaveByCrossfades(
      startsWithEffect: Bool
    )
      throws
    {
      try Plugins.require(Plugins.eq)
      for attempt in 1...2 {
        let space = try Workspace()
        let file = try sineProject(in: space, hertz: 100)
        try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "6s")
        if startsWithEffect {
          try space.tape("fx", "add", file, "t1", Plugins.eq, "--set", "gain=-6")
        }
        let device = try PacedDevice()
        try device.record(seconds: 8)
        let (player, out, errors) = try startTape(
          ["play", file, "--device", "jackrec", "--period", "256", "--json"],
          environment: device.environment)
        // Timed from the device's opening, not the launch: the add must come after the first
        // plan (``PacedDevice/waitForPlayer(seconds:)``).
        try device.waitForPlayer()
        Thread.sleep(forTimeInterval: 1.5)
        try space.tape("fx", "add", file, "t1", Plugins.eq, "--set", "gain=-12")
        Thread.sleep(forTimeInterval: 1.5)
        try space.tape("fx", "rm", file, "f1")
        let (report, swaps, said) = try playReport(player, out, errors)
        let captured = try device.recorded()
        try #require(swaps.count >= 3, "\(swaps)")
        var renders: [[Float]] = []
        for swap in swaps.prefix(3) {
          let path = space.path("v\(swap["version"] as? Int ?? 0).wav")
          try space.tape(
            "render", file, "--version", "\(swap["version"] as? Int ?? 0)", "-o", path, "--bits",
            "32f")
          renders.append(try ReferenceRender.decode(path))
        }
        let added = swaps[1]["frame"] as? Int ?? 0
        let removed = swaps[2]["frame"] as? Int ?? 0
        // The largest difference from `render` (delayed by `lag`) over output frames `range`,
        // the play starting at capture frame `start`.
        func worst(_ render: [Float], lag: Int, _ range: Range<Int>, start: Int) -> Float {
          var worst: Float = 0
          for frame in range where frame - lag >= 0 && (frame - lag) * 2 + 1 < render.count {
            for channel in 0..<2 {
              let heard = captured[(start + frame) * 2 + channel]
              worst = max(worst, abs(heard - render[(frame - lag) * 2 + channel]))
            }
          }
          return worst
        }
        // Where the play starts in the capture: by the onsets, to the frame that fits best (the
        // sine's first samples are too small for 32-bit capture to place them exactly).
        let guess = try #require(onset(captured)) - (try #require(onset(renders[0])))
        let start = try #require(
          ((guess - 8)...(guess + 8)).filter { $0 >= 0 }.min { a, b in
            worst(renders[0], lag: 0, 4_800..<9_600, start: a)
              < worst(renders[0], lag: 0, 4_800..<9_600, start: b)
          })
        let settle = 64 + 960 + 4_800
        let before = worst(renders[0], lag: 0, 0..<added, start: start)
        // fil4 glides its own gain from its default for ~0.8 s after it starts (as it did at
        // the render's start): compared once it has settled.
        let both = worst(renders[1], lag: 0, (added + 48_000)..<removed, start: start)
        let after = worst(
          renders[2], lag: 0, (removed + settle)..<(removed + 48_000), start: start)
        let left = stride(from: start * 2, to: captured.count, by: 2).map { captured[$0] }
        var largest: Float = 0
        var largestAt = 0
        // Between the clip's own edges (it starts and ends without fades: a step in the
        // render too).
        for index in 4_800..<min(288_000 - 4_800, left.count - 1) {
          let bend = abs(left[index + 1] - 2 * left[index] + left[index - 1])
          if bend > largest { (largest, largestAt) = (bend, index) }
        }
        let verdict = device.verdict(
          differs: max(before, both, after) > 1e-6 || largest > 0.003, attempt: attempt,
          playerXruns: report["xruns"] as? Int ?? -1,
          playerRealtime: report["realtimePriority"] as? Bool ?? false)
        print(
          "enter and leave: swaps \(swaps.map { "\($0["kind"] ?? "")/\($0["cause"] ?? "-")" }), capture vs renders \(before), \(both), \(after), largest second difference \(largest) at output frame \(largestAt) (swaps at \(swaps.map { $0["frame"] as? Int ?? 0 })), attempt \(attempt)"
        )
        if verdict == .retry { continue }
        #expect(
          swaps.map { $0["kind"] as? String }
            == (startsWithEffect
              ? ["first", "ramp", "ramp", "ramp"] : ["first", "crossfade", "ramp", "crossfade"]),
          "\(said)")
        #expect(swaps.map { $0["cause"] as? String } == [nil, "edit", "edit", "refresh"])
        if case .unjudged(let reason) = verdict {
          print("enter and leave: not judged: \(reason)")
          return
        }
        #expect(before <= 1e-6, "before the add, the capture differs from its render")
        #expect(both <= 1e-6, "with both EQs, the capture differs from their render")
        #expect(after <= 1e-6, "after the removal, the capture differs from its render")
        #expect(largest <= 0.003, "a click: a second difference of \(largest)")
        return
      }
    }

    /// A reverb's tail goes on through an edit of clips: while a burst's tail rings through a
    /// plate reverb, another process moves a clip that has not played yet. The capture equals
    /// the render of the new version throughout, tail included (a reverb started afresh at the
    /// swap would cut the tail to silence there). The plate is not `lv2:hardRTCapable`: the
    /// play warns of it in one line.
    @Test func aReverbTailGoesOnThroughAClipMove() throws {
      let plate = "http://plugin.org.uk/swh-plugins/plate"
      try #require(
        try Plugins.isInstalled(plate),
        "\(plate) is not installed: apt-get install swh-lv2 (scripts/setup.sh does)")
      for attempt in 1...2 {
        let space = try Workspace()
        _ = try writeHashedNoise(space.path("noise.wav"), frames: 48_000)
        let file = space.path("tail.tape")
        try space.tape("new", file)
        try space.tape("import", file, space.path("noise.wav"))
        try space.tape("track", "add", file, "Room")
        // A 0.3 s burst, and a clip at 3 s that the edit moves to 3.5 s.
        try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "0.3s")
        try space.tape("clip", "add", file, "t1", "s1", "--at", "3s", "--length", "0.3s")
        try space.tape("fx", "add", file, "t1", plate, "--set", "time=6", "--set", "wet=0.8")
        let device = try PacedDevice()
        try device.record(seconds: 6)
        let (player, out, errors) = try startTape(
          ["play", file, "--device", "jackrec", "--period", "256", "--json"],
          environment: device.environment)
        // A second into the play (the burst over, its tail ringing) and well before c2 at 3 s:
        // timed from the device's opening: on a loaded machine the launch alone can take
        // long enough that a move timed from it lands before the first plan (no crossfade to
        // see) or after c2 has begun (the capture is then no version's render).
        try device.waitForPlayer()
        Thread.sleep(forTimeInterval: 1)
        try space.tape("clip", "move", file, "c2", "--to", "3.5s")
        let (report, swaps, said) = try playReport(player, out, errors)
        // To the last clip: the capture (6 s) holds only the start of the plate's tail, which
        // rings on for more than 30 s (a render's whole tail, a play's too).
        try space.tape(
          "render", file, "-o", space.path("new.wav"), "--bits", "32f", "--tail", "0")
        let render = try ReferenceRender.decode(space.path("new.wav"))
        let captured = try device.recorded()
        let loud = { (samples: [Float]) in samples.firstIndex { abs($0) > 0.01 }.map { $0 / 2 } }
        let start = try #require(loud(captured)) - (try #require(loud(render)))
        try #require(start >= 0)
        let body = Array(captured[(start * 2)..<min(captured.count, start * 2 + render.count)])
        let worst = zip(body, render).map { abs($0 - $1) }.max() ?? 1
        // The swap's frame, and the tail's level there (what a reverb restarted would cut).
        let swapFrame = (swaps.last?["frame"] as? Int ?? 0)
        let tail =
          render[(swapFrame * 2)..<min(render.count, swapFrame * 2 + 4_800)]
          .map { abs($0) }.max() ?? 0
        let verdict = device.verdict(
          differs: worst > 1e-6 || body.count != render.count, attempt: attempt,
          playerXruns: report["xruns"] as? Int ?? -1,
          playerRealtime: report["realtimePriority"] as? Bool ?? false)
        print(
          "reverb tail: swaps \(swaps.map { $0["kind"] ?? "" }), tail at the swap \(tail), capture vs render \(worst), attempt \(attempt)"
        )
        if verdict == .retry { continue }
        #expect(swaps.map { $0["kind"] as? String } == ["first", "crossfade"], "\(said)")
        // swh's plate does not say it is safe on an audio thread: the play says so, once.
        #expect(
          said.components(separatedBy: "does not say it is safe on an audio thread").count == 2,
          "\(said)")
        #expect(tail > 0.01, "no tail rang at the swap: the test proves nothing")
        if case .unjudged(let reason) = verdict {
          print("reverb tail: not judged: \(reason)")
          return
        }
        #expect(body.count == render.count)
        #expect(worst <= 1e-6, "the capture differs from the new version's render by \(worst)")
        return
      }
    }

    /// Over 10 s of paced playback with 100 swaps (effect values, bypasses, track gains and
    /// clip moves committed by this process) through three plugins (an EQ and a compressor on
    /// the track, a limiter on the master), the audio thread allocates and frees nothing.
    @Test func theAudioThreadNeverAllocatesWithEffects() throws {
      try Plugins.require(Plugins.eq, Plugins.compressor, Plugins.limiter)
      let space = try Workspace()
      let counter = try allocationCounter(in: space)
      let file = try RenderCommandTests.project(in: space)
      try space.tape("fx", "add", file, "t1", Plugins.eq, "--set", "gain=-3")
      try space.tape("fx", "add", file, "t1", Plugins.compressor)
      try space.tape("fx", "add", file, "master", Plugins.limiter, "--set", "threshold=-3")
      let device = try PacedDevice()
      try device.record(seconds: 2)
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
          switch step % 4 {
          case 0:
            return try project.setEffect(
              Effect.ID(1), parameters: ["gain": -Double(step % 12)])
          case 1: return try project.setEffect(Effect.ID(3), bypassed: step % 8 == 1)
          case 2:
            return try project.setTrack(Track.ID(1), gain: Gain(decibels: -Double(step % 6)))
          default:
            return try project.moveClip(
              Clip.ID(2), to: FramePosition(Int64(step % 10) * 4_800), track: nil)
          }
        }
      }
      try store.close()
      Thread.sleep(forTimeInterval: 0.5)
      kill(player.processIdentifier, SIGINT)
      let output = out.fileHandleForReading.readDataToEndOfFile()
      player.waitUntilExit()
      let report = try #require(
        try JSONSerialization.jsonObject(with: output) as? [String: Any],
        "\(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
      let swaps = try #require(report["swaps"] as? [[String: Any]]).count - 1
      let counts = try String(contentsOfFile: space.path("allocations"), encoding: .utf8)
        .split(separator: " ").compactMap {
          Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
      print("audio thread with effects: \(counts) mallocs/frees over \(swaps) swaps")
      #expect(counts == [0, 0])
      #expect(swaps >= 80, "only \(swaps) of 100 commits were swapped in")
      #expect(report["missingFrames"] as? Int == 0)
    }

    /// Latency in playback: an impulse at 1 s on two tracks, one through a look-ahead limiter
    /// and one dry, is heard at exactly 1 s on both (one impulse of their sum), through ALSA's
    /// file PCM.
    @Test func latencyIsCompensatedInPlayback() throws {
      try Plugins.require(Plugins.limiter)
      let space = try Workspace()
      let file = try FxCommandTests.impulseProject(in: space)
      let heard = try playedThroughFilePCM(space, file, period: "256")
      let loudest = heard.indices.max { abs(heard[$0]) < abs(heard[$1]) } ?? 0
      #expect(loudest / 2 == 48_000, "the impulse is heard at frame \(loudest / 2)")
      #expect(abs(heard[loudest] - 0.5) < 1e-6, "\(heard[loudest])")
    }

    /// `--to` with an effect of latency on the track (the limiter: 128 frames): the play ends
    /// where the render of its range ends, its last 128 frames (the limiter's look-ahead)
    /// included, with and without `--from`, and up to the project's end; it counts the range's
    /// frames, as the same play did before the effect was added.
    @Test(arguments: [
      ["--to", "1s"], ["--from", "0.5s", "--to", "1.75s"], ["--from", "2s", "--to", "3s"],
    ])
    func aPlayToAnEndEqualsTheRenderOfItsRange(range: [String]) throws {
      try Plugins.require(Plugins.limiter)
      let space = try Workspace()
      let file = try Self.noiseProject(in: space, "to.tape")
      let frames = { () throws -> Int? in
        let played = try space.tape(["play", file, "--device", "null", "--json"] + range)
        return try #require(try parseJSON(played.stdout) as? [String: Any])["frames"] as? Int
      }
      let dry = try frames()
      try space.tape("fx", "add", file, "t1", Plugins.limiter, "--set", "threshold=-6")
      try space.tape(["render", file, "-o", space.path("render.wav"), "--bits", "32f"] + range)
      let render = try ReferenceRender.decode(space.path("render.wav"))
      #expect(try frames() == dry)
      #expect(dry == render.count / 2, "\(range)")
      let tapped = try playedThroughFilePCM(space, file, period: "256", arguments: range)
      #expect(tapped.count >= render.count, "\(range)")
      #expect(Array(tapped.prefix(render.count)) == render, "\(range)")
      #expect(tapped.dropFirst(render.count).allSatisfy { $0 == 0 }, "\(range)")
      let text = try space.tape(["play", file, "--device", "null"] + range).stdout
      let seconds = Double(render.count / 2) / 48_000
      let shown = String(
        format: "%d:%06.3f", Int(seconds) / 60, seconds.truncatingRemainder(dividingBy: 60))
      #expect(text.contains("played \(shown) on null"), "\(text)")
    }
  }
}

/// What `tape play FILE --period PERIOD` sends to ALSA's file PCM (unpaced, the floats as they
/// were played), read back as interleaved floats: a `tap` device in a home of its own.
func playedThroughFilePCM(
  _ space: Workspace, _ file: String, period: String, arguments: [String] = []
) throws -> [Float] {
  let home = space.path("home-\(period)")
  try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
  let raw = space.path("tap-\(period).raw")
  try "pcm.tap { type file slave.pcm \"null\" file \"\(raw)\" format \"raw\" }\n".write(
    toFile: home + "/.asoundrc", atomically: true, encoding: .utf8)
  try space.tape(
    ["play", file, "--device", "tap", "--period", period] + arguments,
    environment: ["HOME": home])
  return try ReferenceRender.readFloats(raw)
}

/// What a `tape play --json` started by ``startTape(_:environment:executable:)`` reported once
/// it ended: its JSON, its swaps, and what it said on stderr.
func playReport(
  _ player: Process, _ out: Pipe, _ errors: Pipe
) throws -> (report: [String: Any], swaps: [[String: Any]], said: String) {
  let output = out.fileHandleForReading.readDataToEndOfFile()
  player.waitUntilExit()
  let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  return try playReport(output, said: said)
}

/// ``playReport(_:_:_:)`` for a play whose stderr went to the file `errorLog`.
func playReport(
  _ player: Process, _ out: Pipe, errorLog: String
) throws -> (report: [String: Any], swaps: [[String: Any]], said: String) {
  let output = out.fileHandleForReading.readDataToEndOfFile()
  player.waitUntilExit()
  let said = String(
    decoding: try Data(contentsOf: URL(fileURLWithPath: errorLog)), as: UTF8.self)
  return try playReport(output, said: said)
}

/// The `--json` report `output` of a play that said `said` on stderr, and its swaps.
func playReport(
  _ output: Data, said: String
) throws -> (report: [String: Any], swaps: [[String: Any]], said: String) {
  let report = try #require(
    try JSONSerialization.jsonObject(with: output) as? [String: Any], "\(said)")
  return (report, try #require(report["swaps"] as? [[String: Any]]), said)
}
