import Foundation
import Testing

/// `tape record --loop` through the paced JACK loopback (as the overdub tests), and `tape take
/// ls/use` on what it keeps: one take per pass, each pass's clicks where they belong, and the
/// choice of take rendered, undone and redone.
extension ProcessHeavyTests.RecordTests {
  /// The loop: 0.2 s–2.2 s of ``clickProject(_:)`` (its clicks are 1.0–2.03 s, away from the
  /// wrap's fades), 96,000 frames.
  static let loopRange = 9_600..<105_600

  /// The take file's channel 0 from `start`, `count` frames, as floats (sox reads it).
  static func takeFrames(
    _ space: Workspace, _ path: String, start: Int, count: Int
  ) throws
    -> [Float]
  {
    let raw = space.path("take-\(start).f32")
    try tool(
      "/usr/bin/sox", [path, "-t", "f32", raw, "trim", "\(start)s", "\(count)s", "remix", "1"])
    let data = try Data(contentsOf: URL(fileURLWithPath: raw))
    return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
  }

  /// Three passes over a 2 s range give three takes of one capture, the last playing; each
  /// take is its pass's stretch of the capture (consecutive, a range long) with the clicks at
  /// their frames; `take use` renders the chosen take's frames of the capture, and undo and
  /// redo see the choice.
  @Test func aLoopOfThreePassesKeepsThreeTakesAndTakeUseChoosesWhatPlays() throws {
    // Its subject is the passes and the choice, not the period (docs/alsa-testing.md).
    let device = try Self.pacedLoop()
    let space = try Workspace()
    let song = try Self.clickProject(space)
    let before = try space.head(of: song)
    // 3 passes and 0.5 s, less the round trip: the part of a fourth pass, under a second, is
    // not a take.
    let result = try Self.recordThroughLoop(
      [
        "record", song, "Voice", "--play", "--device", "loop", "--period", "\(device.period)",
        "--from", "9600f", "--to", "105600f", "--loop", "--duration", "6.5s",
      ], device: device, environment: ["XDG_CONFIG_HOME": space.path("config")])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.split(separator: "\n") == ["c2", "c3", "c4"], "\(result.stdout)")
    #expect(result.stderr.contains("3 takes (c2 c3 c4); c4 plays"), "\(result.stderr)")
    #expect(try space.head(of: song) == before + 1, "one version")

    let listed = try space.tape("take", "ls", song, "Voice", "--json")
    let groups = try #require(try parseJSON(listed.stdout) as? [[String: Any]])
    #expect(groups.count == 1)
    let group = try #require(groups.first)
    #expect(group["track"] as? String == "t2")
    #expect(group["start"] as? Int == Self.loopRange.lowerBound)
    #expect(group["length"] as? Int == Self.loopRange.count)
    #expect(group["playing"] as? String == "c4")
    let takes = try #require(group["takes"] as? [[String: Any]])
    #expect(takes.map { $0["id"] as? String } == ["c2", "c3", "c4"])
    #expect(takes.map { $0["take"] as? Int } == [1, 2, 3])
    #expect(takes.map { $0["playing"] as? Bool } == [false, false, true])
    #expect(Set(takes.compactMap { $0["source"] as? String }) == ["s2"])
    #expect(takes.allSatisfy { $0["length"] as? Int == Self.loopRange.count })
    #expect(takes.allSatisfy { $0["timelineStart"] as? Int == Self.loopRange.lowerBound })
    let starts = takes.compactMap { $0["sourceStart"] as? Int }
    #expect(starts.count == 3)
    // Consecutive passes of the one capture: each starts a range after the one before, the
    // first where the range's start was heard, within a second of the capture's start (the
    // clicks below show it is the frame).
    #expect(starts == starts.map { _ in starts[0] }.enumerated().map { $1 + $0 * 96_000 })
    #expect((0..<48_000).contains(starts[0]), "\(starts)")

    let text = try space.tape("take", "ls", song, "t2").stdout
    #expect(
      text.hasPrefix("0:00.200–0:02.200 on t2: 3 takes, take 3 (c4) plays\n  c2    take 1"),
      "\(text)")
    #expect(text.contains("\n* c4    take 3"), "\(text)")
    #expect(
      try space.tape("ls", song).stdout.contains(
        "takes 0:00.200–0:02.200 on t2: c4 plays, c2 c3 kept"))

    let sources = try #require(
      try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    let path = try #require(
      (sources["sources"] as? [[String: Any]])?.first { $0["id"] as? String == "s2" }?["path"]
        as? String)
    let takeFile = path.hasPrefix("/") ? path : space.path(path)
    let range = Self.loopRange
    // Each take, made to play: its pass's clicks where they belong, and the render is its
    // stretch of the capture.
    var renders: [[Float]] = []
    for (index, take) in ["c2", "c3", "c4"].enumerated() {
      do {
        let used = try space.tape("take", "use", song, take)
        #expect(used.stdout == "\(take)\n", "\(used.stderr)")
      }
      let rendered = try Self.renderedVoice(space, song)
      let (lag, each, peak) = Self.misalignment(rendered)
      print("take \(take): lag \(lag), each click \(each), peak \(peak)")
      #expect(peak > 0.4, "take \(take) carried the clicks")
      #expect(abs(lag) <= 1 && each.allSatisfy { abs($0) <= 1 }, "\(take): \(lag), \(each)")
      let expected = try Self.takeFrames(
        space, takeFile, start: starts[index], count: range.count)
      let played = Array(rendered[range])
      let worst = zip(played, expected).map { abs($0 - $1) }.max() ?? 1
      #expect(expected.count == range.count && worst < 1e-6, "\(take): off by \(worst)")
      renders.append(rendered)
    }
    // Undo goes back to c3, redo forward to c4 again (c4 was chosen last).
    try space.tape("undo", song)
    #expect(try Self.renderedVoice(space, song) == renders[1])
    let undone = try parseJSON(space.tape("take", "ls", song, "t2", "--json").stdout)
    #expect((undone as? [[String: Any]])?.first?["playing"] as? String == "c3")
    try space.tape("redo", song)
    #expect(try Self.renderedVoice(space, song) == renders[2])

    // A take that plays already, a clip that is no take, and no clip: one line, nothing
    // changed.
    let head = try space.head(of: song)
    let again = try space.tape("take", "use", song, "c4")
    #expect(again.stderr.contains("take c4 plays already"), "\(again.stderr)")
    let notTake = try TapeBinary.run(["take", "use", song, "c1"])
    #expect(notTake.status != 0)
    #expect(
      notTake.stderr
        == "error: clip c1 is no take (it was not recorded with --loop); 'tape take ls \(song) t1' lists the takes of its track\n",
      "\(notTake.stderr)")
    #expect(try TapeBinary.run(["take", "use", song, "c99"]).status != 0)
    #expect(try space.head(of: song) == head)

    // The source of the kept takes stays known: a prune of the history keeps it.
    try space.tape("history", "prune", song, "--keep-last", "1")
    #expect(FileManager.default.fileExists(atPath: takeFile))
    #expect(try space.tape("take", "ls", song, "t2", "--json").stdout.contains("\"c2\""))
  }

  @Test func loopNeedsARangeAndRefusesAPunch() throws {
    let space = try Workspace()
    let song = try Self.clickProject(space)
    let head = try space.head(of: song)
    let bare = try TapeBinary.run(["record", song, "Voice", "--play", "--from", "1s", "--loop"])
    #expect(bare.status != 0)
    #expect(bare.stderr.contains("--loop records one take per pass over a range"), "\(bare.stderr)")
    let punch = try TapeBinary.run(
      [
        "record", song, "Voice", "--play", "--from", "1s", "--to", "3s", "--loop", "--punch-in",
        "1.5s", "--punch-out", "2s",
      ])
    #expect(punch.status != 0)
    #expect(punch.stderr.contains("do not go together"), "\(punch.stderr)")
    // Passes placed elsewhere than the range they were heard over would each be off by the
    // difference (found by review): refused.
    let elsewhere = try TapeBinary.run(
      ["record", song, "Voice", "--play", "--from", "1s", "--to", "3s", "--loop", "--at", "5s"])
    #expect(elsewhere.status == 64, "\(elsewhere.stderr)")
    #expect(elsewhere.stderr.contains("leave out --at"), "\(elsewhere.stderr)")
    #expect(try space.head(of: song) == head)
  }
}
