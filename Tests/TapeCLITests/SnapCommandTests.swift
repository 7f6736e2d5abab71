import Foundation
import ReferenceRenders
import Testing

/// `--snap` on `clip move --to`, `clip split --at` and `cut --from/--to`, through the binary.
@Suite("Snapping from the command line")
struct SnapCommandTests {
  static func clips(_ space: Workspace, _ file: String, _ track: String) throws -> String {
    try space.tape("clip", "ls", file, "--tracks", track, "--frames").stdout
  }

  /// `clip trim --start/--end`, `clip copy --to` and `insert --at` snap too (they refused
  /// `--snap` before); the label says so.
  @Test func trimCopyAndInsertSnap() throws {
    let space = try Workspace()
    let (file, _) = try EditorToolkitTests.project(in: space)
    // t1: c1 0–4 s; t2: c2 1–3 s. c2's end 30 ms short of c1's: snapped onto it.
    try space.tape("clip", "trim", file, "c2", "--end", "3.97s", "--snap", "clips")
    #expect(try Self.clips(space, file, "t2") == "c2\tt2\t48000f\t192000f\ts1\t0f\n")
    try space.tape("clip", "trim", file, "c2", "--start", "1.13s", "--snap", "250ms")
    #expect(try Self.clips(space, file, "t2") == "c2\tt2\t60000f\t192000f\ts1\t12000f\n")
    #expect(
      try space.tape("history", file).stdout.contains("Trim c2 start to 1.13s, snapped to 250ms"))
    // A copy of c1 on t2, 40 ms after c2's end: butted against it.
    #expect(
      try space.tape(
        "clip", "copy", file, "c1", "--to", "4.04s", "--track", "t2", "--snap", "clips"
      )
      .stdout == "c3\n")
    #expect(
      try Self.clips(space, file, "t2")
        == "c2\tt2\t60000f\t192000f\ts1\t12000f\nc3\tt2\t192000f\t384000f\ts1\t48000f\n")
    // A gap at 0.98 s snapped to the 0.5 s grid: at 1 s, on t1 (c1 split there).
    #expect(
      try space.tape(
        "insert", file, "--at", "0.98s", "--length", "1s", "--tracks", "t1", "--snap", "0.5s"
      ).stdout == "c4\n")
    #expect(
      try Self.clips(space, file, "t1")
        == "c1\tt1\t0f\t48000f\ts1\t48000f\nc4\tt1\t96000f\t240000f\ts1\t96000f\n")
    #expect(try space.tape("history", file).stdout.contains("Insert 1s at 0.98s snapped to 0.5s"))
  }

  /// The label says "snapped to" only when a snap moved a time: a time already on the grid,
  /// or with no clip edge near, is labelled as typed (it said "snapped to" all the same).
  @Test func theLabelSaysSnappedOnlyWhenASnapMovedTheTime() throws {
    let space = try Workspace()
    let (file, _) = try EditorToolkitTests.project(in: space)
    try space.tape("clip", "move", file, "c2", "--to", "2s", "--snap", "0.5s")
    try space.tape("clip", "move", file, "c2", "--to", "2.6s", "--snap", "0.5s")
    try space.tape("clip", "split", file, "c1", "--at", "1.5s", "--snap", "clips")
    try space.tape("cut", file, "--from", "0.5s", "--to", "0.98s", "--snap", "0.5s")
    let json = try #require(
      try parseJSON(space.tape("history", file, "--json").stdout) as? [String: Any])
    let labels = try #require(json["versions"] as? [[String: Any]]).map {
      $0["label"] as? String ?? ""
    }
    #expect(
      Array(labels.suffix(4)) == [
        "Move c2 to 2s", "Move c2 to 2.6s, snapped to 0.5s", "Split c1 at 1.5s",
        "Cut 0.5s–0.98s snapped to 0.5s",
      ])
  }

  /// clips: a move within 100 ms of another clip's edge butts against it, farther stays;
  /// a grid: a split and a cut land on its lines.
  @Test func clipEdgesAndGrids() throws {
    let space = try Workspace()
    let (file, _) = try EditorToolkitTests.project(in: space)
    // t1: c1 0–4 s; t2: c2 1–3 s.
    try space.tape("clip", "move", file, "c2", "--to", "4.06s", "--snap", "clips")
    #expect(try Self.clips(space, file, "t2") == "c2\tt2\t192000f\t288000f\ts1\t0f\n")
    try space.tape("clip", "move", file, "c2", "--to", "4.15s", "--snap", "clips")
    #expect(try Self.clips(space, file, "t2") == "c2\tt2\t199200f\t295200f\ts1\t0f\n")
    // Its own edges do not pull it: 50 ms from where it is, it still moves.
    try space.tape("clip", "move", file, "c2", "--to", "+50ms", "--snap", "clips")
    #expect(try Self.clips(space, file, "t2") == "c2\tt2\t201600f\t297600f\ts1\t0f\n")
    let split = try space.tape("clip", "split", file, "c1", "--at", "1.1s", "--snap", "1/4@120bpm")
    #expect(split.stdout == "c1\nc3\n")
    #expect(
      try Self.clips(space, file, "t1")
        == "c1\tt1\t0f\t48000f\ts1\t48000f\nc3\tt1\t48000f\t192000f\ts1\t96000f\n")
    try space.tape(
      "cut", file, "--from", "2.1s", "--to", "+0.3s", "--snap", "250ms", "--tracks", "t1")
    #expect(
      try Self.clips(space, file, "t1")
        == "c1\tt1\t0f\t48000f\ts1\t48000f\nc3\tt1\t48000f\t96000f\ts1\t96000f\nc4\tt1\t120000f\t192000f\ts1\t168000f\n"
    )
    #expect(
      try space.tape("history", file).stdout.contains("Cut 2.1s–+0.3s on t1 snapped to 250ms"))

    // tape split and tape paste take it too.
    #expect(try space.tape("split", file, "--at", "0.3s", "--snap", "0.5s").stdout == "c5\n")
    try space.tape("copy", file, "--from", "0", "--to", "0.5s", "--tracks", "t1", "--as", "a")
    #expect(
      try space.tape("paste", file, "a", "--at", "4.03s", "--snap", "clips").stdout == "c6\n")
    #expect(
      try space.tape("clip", "ls", file, "--from", "4s", "--tracks", "t1", "--frames").stdout
        == "c6\tt1\t192000f\t216000f\ts1\t48000f\n")

    let before = try space.fingerprint("edit.tape")
    for (arguments, message) in [
      (
        ["cut", file, "--from", "0.1s", "--to", "0.2s", "--snap", "1s"],
        "error: --from 0.1s and --to 0.2s snap to the same time (0s); choose a finer --snap or times farther apart"
      ),
      (
        ["clip", "move", file, "c1", "--to", "1s", "--snap", "1/4"],
        "error: '1/4' is not a snap; use clips (the nearest clip edge within 100 ms), zero (the nearest zero crossing within 10 ms) or a grid: a time (500ms, 0.25s, 1200f) or a note at a tempo (1/4@120bpm)"
      ),
      (
        ["clip", "move", file, "c1", "--track", "t2", "--snap", "clips"],
        "error: --snap goes with --to; see: tape clip move --help"
      ),
    ] {
      let result = try space.tape(arguments, status: 64, environment: ["NO_COLOR": "1"])
      #expect(result.stderr == message + "\n")
    }
    #expect(try space.fingerprint("edit.tape") == before)
  }

  /// zero: a split of a 440 Hz sine lands where the mix changes sign (no click at the new
  /// edges), within 10 ms of the time asked, though the time asked is not a crossing.
  @Test func zeroCrossingsOfTheMix() throws {
    let space = try Workspace()
    let (file, _) = try EditorToolkitTests.project(in: space)
    let mix = try EditorToolkitTests.render(space, file, "mix.wav")
    let crossing = { (frame: Int) in
      mix[frame] == 0 || (mix[frame - 1] < 0) != (mix[frame] < 0)
    }
    let asked = 30_000 + 20
    #expect(!crossing(asked))
    let split = try space.tape(
      "clip", "split", file, "c1", "--at", "\(asked)f", "--snap", "zero")
    #expect(split.stdout == "c1\nc3\n")
    let listed = try Self.clips(space, file, "t1")
    let field = try #require(listed.split(separator: "\n").first?.split(separator: "\t")[3])
    let end = try #require(Int(field.dropLast()))
    #expect(crossing(end), "split at \(end)f")
    #expect(abs(end - asked) <= 480)
    // The nearest crossing: none between the time asked and the one chosen.
    #expect((min(end, asked) + 1..<max(end, asked)).allSatisfy { !crossing($0) })
    #expect(try EditorToolkitTests.render(space, file, "after.wav") == mix)
  }
}
