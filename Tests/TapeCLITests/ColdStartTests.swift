import Foundation
import ReferenceRenders
import Testing

extension ProcessHeavyTests {
  /// A play whose sources are not in the decoded-audio cache yet (a cache removed, a project
  /// moved): it starts once the chunks its first seconds need are decoded, not after every
  /// source whole; a start that takes longer than half a second says what it does; Ctrl-C
  /// meanwhile says that the play stopped (issue 43, item 7).
  @Suite("A cold start", .timeLimit(.minutes(10)))
  struct ColdStartTests {
    /// A 48 kHz project of two tracks over two sources made here, its cache removed:
    /// `noise.wav`, 60 s of hashed noise at the project's rate (its chunks can be decoded on
    /// their own), a clip of it from 0:50; `tone.flac`, a sine at 44.1 kHz (resampled: decoded
    /// from its start), `toneLength` long, a clip of it from `toneFrom`.
    static func coldProject(
      in space: Workspace, toneLength: Int, toneFrom: String
    ) throws -> String {
      _ = try writeHashedNoise(space.path("noise.wav"), frames: 48_000 * 60)
      try tool(
        "/usr/bin/sox",
        [
          "-n", "-r", "44100", "-c", "2", "-b", "16", space.path("tone.flac"), "synth",
          "\(toneLength)", "sine", "331", "vol", "0.25",
        ])
      let file = space.path("cold.tape")
      try space.tape("new", file)
      try space.tape("import", file, space.path("noise.wav"), space.path("tone.flac"))
      try space.tape("track", "add", file, "Noise", "--gain", "-6")
      try space.tape("track", "add", file, "Tone")
      try space.tape(
        "clip", "add", file, "t1", "s1", "--at", "0", "--from", "50s", "--length", "3s")
      try space.tape(
        "clip", "add", file, "t2", "s2", "--at", "0", "--from", toneFrom, "--length", "3s")
      try FileManager.default.removeItem(atPath: file + "-cache")
      return file
    }

    /// The decoded-audio entries in the project's cache.
    static func entries(_ file: String) -> [String] {
      ((try? FileManager.default.contentsOfDirectory(atPath: file + "-cache")) ?? [])
        .filter { $0.hasSuffix(".f32") }
    }

    /// On the paced device, with nothing cached: the capture equals the render, sample for
    /// sample (to the capture's 32-bit rounding), with no frame missing (the noise's chunks at 0:50 decoded on their own, the
    /// resampled tone's as its decode reaches them).
    @Test func aColdPlayIsTheRender() throws {
      let space = try Workspace()
      let file = try Self.coldProject(in: space, toneLength: 30, toneFrom: "20s")
      var attempts = 0
      while true {
        attempts += 1
        try? FileManager.default.removeItem(atPath: file + "-cache")
        let device = try PacedDevice()
        try device.record(seconds: 5)
        let played = try TapeBinary.run(
          ["play", file, "--device", "jackrec", "--period", "256", "--json"],
          environment: device.environment)
        #expect(played.status == 0, "\(played.stderr)")
        let report = try #require(try parseJSON(played.stdout) as? [String: Any])
        let captured = try device.recorded()
        try space.tape("render", file, "-o", space.path("render.wav"), "--bits", "32f")
        let render = try ReferenceRender.decode(space.path("render.wav"))
        let start = try #require(onset(captured))
        let body = Array(captured[(start * 2)..<min(captured.count, start * 2 + render.count)])
        // jack_rec writes 32-bit integers: a float off that grid comes back rounded (by at most
        // 2^-32 here); a chunk missing or misplaced differs by far more.
        let differs =
          body.count != render.count || zip(body, render).contains { abs($0 - $1) > 1e-9 }
        let verdict = device.verdict(
          differs: differs, attempt: attempts,
          playerXruns: report["xruns"] as? Int ?? -1,
          playerRealtime: report["realtimePriority"] as? Bool ?? false)
        if verdict == .retry { continue }
        #expect(report["missingFrames"] as? Int == 0)
        if case .unjudged(let reason) = verdict {
          print("cold play: not judged: \(reason)")
          return
        }
        let first = zip(body, render).enumerated().first { $0.element.0 != $0.element.1 }
          .map { $0.offset / 2 }
        let worst = zip(body, render).map { abs($0 - $1) }.max() ?? 0
        #expect(
          !differs,
          "the cold play is not the render: \(body.count / 2) frames captured, \(render.count / 2) rendered, first difference at frame \(first.map(String.init) ?? "-"), the worst \(worst)"
        )
        return
      }
    }

    /// A start that must decode minutes of a resampled source first (a play from far into
    /// it) says so once, after half a second, on stderr; Ctrl-C then stops it in one line,
    /// ending by the signal, and no cache entry of the unfinished decode is left.
    @Test func aLongStartSaysWhatItDoesAndStops() throws {
      let space = try Workspace()
      let file = try Self.coldProject(in: space, toneLength: 600, toneFrom: "9:50")
      let (player, _, errors) = try startTape(["play", file, "--device", "null", "--to", "2s"])
      var said = ""
      let deadline = Date().addingTimeInterval(60)
      let reader = errors.fileHandleForReading
      while !said.contains("before the first sound"), Date() < deadline, player.isRunning {
        said += String(decoding: reader.availableData, as: UTF8.self)
      }
      #expect(player.isRunning, "the play started or ended already: \(said)")
      kill(player.processIdentifier, SIGINT)
      player.waitUntilExit()
      said += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
      #expect(player.terminationReason == .uncaughtSignal)
      #expect(player.terminationStatus == SIGINT)
      let lines = said.split(separator: "\n", omittingEmptySubsequences: false)
      #expect(lines.count == 3, "\(said)")
      // Which sources it names first depends on which decode reported first.
      #expect(
        lines.first?.wholeMatch(
          of:
            /tape play: decoding (s1 noise\.wav, )?s2 tone\.flac(, s1 noise\.wav)? before the first sound \(not in the decoded-audio cache yet\)/
        ) != nil, "\(said)")
      #expect(
        lines.dropFirst().first
          == "tape play: stopped before the first sound, while decoding; nothing was played")
      // The tone's decode was stopped: no entry of it (the noise's may be whole).
      #expect(Self.entries(file).count <= 1, "\(Self.entries(file))")
    }
  }
}
