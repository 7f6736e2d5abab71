import Foundation
import Testing

extension ProcessHeavyTests.RecordTests {
  /// A looped recording killed (kill -9) in its third pass is recovered as its passes: the
  /// pending note keeps the range, so `--recover` makes the takes a finished loop would (two
  /// whole passes, the third cut short under a second left out or kept as it lasts), aligned:
  /// each, chosen, renders the clicks on their frames.
  @Test func aLoopKilledAndRecoveredKeepsItsPassesAsTakes() throws {
    let device = try Self.pacedLoop()
    let space = try Workspace()
    let song = try Self.clickProject(space)
    // Passes of 2 s from 0.2 s; the note holds the round trip about 0.2 s in: killed 4.5 s
    // later, in the third pass, its part over a second.
    let (said, note) = try Self.killThroughLoop(
      [
        "record", song, "Voice", "--play", "--device", "loop", "--period", "\(device.period)",
        "--from", "9600f", "--to", "105600f", "--loop",
      ], song: song, device: device, environment: ["XDG_CONFIG_HOME": space.path("config")],
      after: 4.5)
    #expect(note["loopStart"] as? Int == 9_600 && note["loopEnd"] as? Int == 105_600, "\(note)")
    let recovered = try space.tape("record", song, "--recover")
    let ids = recovered.stdout.split(separator: "\n").map(String.init)
    #expect(ids.count >= 2, "\(recovered.stdout) \(recovered.stderr) \(said)")
    let groups = try #require(
      try parseJSON(space.tape("take", "ls", song, "t2", "--json").stdout) as? [[String: Any]])
    let takes = try #require(groups.first?["takes"] as? [[String: Any]])
    #expect(takes.compactMap { $0["id"] as? String } == ids)
    #expect(groups.first?["playing"] as? String == ids.last)
    for take in ids {
      try space.tape("take", "use", song, take)
      let (lag, each, peak) = Self.misalignment(try Self.renderedVoice(space, song))
      print("recovered loop, take \(take): lag \(lag), each click \(each), peak \(peak)")
      #expect(peak > 0.4, "take \(take) carried the clicks")
      #expect(abs(lag) <= 1 && each.allSatisfy { abs($0) <= 1 }, "\(take): \(lag), \(each)")
    }
  }
}
