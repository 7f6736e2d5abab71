import Foundation
import ReferenceRenders
import Testing

/// An editor's toolkit from the shell: times relative to a clip or nudged, split across
/// tracks, slip, and clips selected by time.
@Suite("Editing toolkit")
struct EditorToolkitTests {
  /// Two tracks over a 6 s mono 440 Hz sine: t1 plays source 1–5 s from 0, t2 source 0–2 s
  /// from 1 s.
  static func project(in space: Workspace) throws -> (file: String, sine: String) {
    let sine = try CrossfadeRenderTests.sineWave(in: space)
    let file = space.path("edit.tape")
    try space.tape("new", file, "--channels", "1")
    try space.tape("import", file, sine)
    try space.tape("track", "add", file, "A")
    try space.tape("track", "add", file, "B")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--from", "1s", "--length", "4s")
    try space.tape("clip", "add", file, "t2", "s1", "--at", "1s", "--length", "2s")
    return (file, sine)
  }

  static func render(_ space: Workspace, _ file: String, _ name: String) throws -> [Float] {
    try space.tape("render", file, "-o", space.path(name), "--bits", "32f")
    return try ReferenceRender.decode(space.path(name))
  }

  /// Clip edges and nudges wherever a timeline time is taken, and what is refused.
  @Test func relativeAndNamedTimes() throws {
    let space = try Workspace()
    let (file, _) = try Self.project(in: space)
    func start(_ clip: String) throws -> Int {
      let clips = try #require(
        parseJSON(space.tape("clip", "ls", file, "--json").stdout) as? [[String: Any]])
      return try #require(clips.first { $0["id"] as? String == clip }?["timelineStart"] as? Int)
    }
    try space.tape("clip", "move", file, "c2", "--to", "+10ms")
    #expect(try start("c2") == 48_480)
    try space.tape("clip", "move", file, "c2", "--to", "-10ms")
    #expect(try start("c2") == 48_000)
    try space.tape("clip", "move", file, "c2", "--to", "c1.end")
    #expect(try start("c2") == 192_000)
    try space.tape("clip", "move", file, "c2", "--to", "c1.start+1s")
    #expect(try start("c2") == 48_000)
    // trim --end nudges from the clip's end; cut --to from --from.
    try space.tape("clip", "trim", file, "c2", "--end", "-100ms")
    let listed = try space.tape("clip", "ls", file, "--tracks", "t2", "--frames").stdout
    #expect(listed == "c2\tt2\t48000f\t139200f\ts1\t0f\n")
    let cut = try space.tape("cut", file, "--from", "c2.start", "--to", "+0.5s", "--tracks", "t1")
    #expect(cut.stdout == "c3\n")
    #expect(
      try space.tape("clip", "ls", file, "--tracks", "t1", "--frames").stdout
        == "c1\tt1\t0f\t48000f\ts1\t48000f\nc3\tt1\t72000f\t192000f\ts1\t120000f\n")

    let before = try space.fingerprint("edit.tape")
    let early = try space.tape(
      "clip", "move", file, "c2", "--to", "c1.start-1s", status: 64, environment: ["NO_COLOR": "1"])
    #expect(
      early.stderr
        == "error: 'c1.start-1s' comes to 1s before the timeline's start; times are 0 or later\n")
    let nothing = try space.tape(
      "clip", "add", file, "t1", "s1", "--at", "+1s", status: 64, environment: ["NO_COLOR": "1"])
    #expect(
      nothing.stderr.hasPrefix("error: '+1s' is a nudge, and this option has no time to nudge from")
    )
    let missing = try space.tape(
      "clip", "move", file, "c2", "--to", "c9.end", status: 65, environment: ["NO_COLOR": "1"])
    #expect(missing.stderr.hasPrefix("error: no clip c9"))
    #expect(try space.fingerprint("edit.tape") == before)
  }

  /// `tape split --at` cuts every clip under the time (the right parts' ids printed, track by
  /// track) and the mix does not change by a sample; `--tracks` limits it.
  @Test func splitAcrossTracksKeepsTheMix() throws {
    let space = try Workspace()
    let (file, _) = try Self.project(in: space)
    let before = try Self.render(space, file, "before.wav")
    let split = try space.tape("split", file, "--at", "1.3s")
    #expect(split.stdout == "c3\nc4\n")
    #expect(try Self.render(space, file, "after.wav") == before)
    #expect(try space.tape("split", file, "--at", "2.5s", "--tracks", "t2").stdout == "c5\n")
    #expect(
      try space.tape("clip", "ls", file, "--from", "2.5s", "--frames").stdout
        == "c3\tt1\t62400f\t192000f\ts1\t110400f\nc5\tt2\t120000f\t144000f\ts1\t72000f\n")
  }

  /// `clip slip` plays other audio in the same place: the render is sox's own trim of the
  /// source at the new offset, padded to where the clip starts; a slip past the source is
  /// refused with the most that fits, and nothing changes.
  @Test func slipMovesTheAudioInsideTheClip() throws {
    let space = try Workspace()
    let (file, sine) = try Self.project(in: space)
    try space.tape("clip", "rm", file, "c2")
    try space.tape("clip", "slip", file, "c1", "--by", "-120ms")
    let rendered = try Self.render(space, file, "slip.wav")
    let reference = space.path("reference.wav")
    try tool(
      "/usr/bin/sox", [sine, "-e", "floating-point", "-b", "32", reference, "trim", "0.88", "4"])
    let expected = try ReferenceRender.decode(reference)
    #expect(rendered.count == expected.count)
    let worst = zip(rendered, expected).map { abs($0 - $1) }.max() ?? 1
    #expect(worst < 1e-6, "largest difference from sox's trim: \(worst)")

    let before = try space.fingerprint("edit.tape")
    let refused = try space.tape(
      "clip", "slip", file, "c1", "--by", "-1s", status: 65, environment: ["NO_COLOR": "1"])
    #expect(
      refused.stderr
        == "error: slipping c1 by -1s would read before the start of its source; slip by -0.88s at most\n"
    )
    let none = try space.tape(
      "clip", "slip", file, "c1", "--by", "0", status: 64, environment: ["NO_COLOR": "1"])
    #expect(none.stderr.hasPrefix("error: --by 0 moves nothing"))
    #expect(try space.fingerprint("edit.tape") == before)
  }

  /// Envelope points one at a time: --add (a point at an existing time replaces it), --move
  /// (keeps gain and shape, cannot pass a neighbour), --remove (the last one removes the
  /// envelope), each one version; what is refused names the points there are.
  /// `clip add --from` and `--to` are times in the source: a clip's edge or a marker (places
  /// on the timeline) is refused, naming the option, instead of being taken as a source offset
  /// without a word (found by a user trial); a plain time still works.
  @Test func clipAddTakesSourceTimes() throws {
    let space = try Workspace()
    let (file, _) = try Self.project(in: space)
    try space.tape("marker", "add", file, "2s", "verse")
    let before = try space.fingerprint("edit.tape")
    for (option, value) in [
      ("--from", "c1.end"), ("--from", "@verse"), ("--to", "c2.start+1s"), ("--from", "+1s"),
    ] {
      let refused = try space.tape(
        "clip", "add", file, "t2", "s1", "--at", "8s", option, value, status: 64,
        environment: ["NO_COLOR": "1"])
      #expect(
        refused.stderr
          == "error: \(option) \(value) names a place on the timeline, but \(option) is a time in the source (from its start): give one, such as 2.5s or 1:02.5\n"
      )
    }
    let negative = try space.tape(
      "clip", "add", file, "t2", "s1", "--at", "8s", "--from", "-1s", status: 64,
      environment: ["NO_COLOR": "1"])
    #expect(
      negative.stderr
        == "error: '-1s' is negative; times and lengths are 0 or more\n")
    #expect(try space.fingerprint("edit.tape") == before)
    try space.tape("clip", "add", file, "t2", "s1", "--at", "8s", "--from", "0.5s", "--to", "1.5s")
  }

  /// A point added with a shape keeps it: `--add 1s:-6dB --shape hold` between two points
  /// renders as the same envelope set whole (`--shape db,hold`), also for several added points
  /// with one shape each; a count of shapes that fits neither form is refused (found by a user:
  /// a single added point lost its shape, and the render followed the dB ramp).
  @Test func anAddedPointKeepsItsShape() throws {
    let space = try Workspace()
    let (file, _) = try Self.project(in: space)
    try space.tape("track", "envelope", file, "t1", "--set", "0s:0dB,2s:-12dB")
    try space.tape("track", "envelope", file, "t1", "--add", "1s:-6dB", "--shape", "hold")
    let added = try Self.render(space, file, "added.wav")
    try space.tape(
      "track", "envelope", file, "t1", "--set", "0s:0dB,1s:-6dB,2s:-12dB", "--shape", "db,hold")
    let whole = try Self.render(space, file, "whole.wav")
    let largestDifference = zip(added, whole).map { abs($0 - $1) }.max() ?? 0
    #expect(
      added.count == whole.count && largestDifference == 0,
      "\(added.count) and \(whole.count) samples, largest difference \(largestDifference)")
    let listing = try space.tape("ls", file).stdout
    #expect(listing.contains("0:01.000 -6 dB hold → 0:02.000 -12 dB"), "\(listing)")

    // Several points, one shape each; the point that ends up last shapes nothing.
    try space.tape("track", "envelope", file, "t1", "--set", "0s:0dB,4s:-12dB")
    try space.tape(
      "track", "envelope", file, "t1", "--add", "1s:-3dB,2s:-6dB,5s:-1dB", "--shape",
      "linear,hold,hold")
    let shapes =
      try #require(
        (parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])?["tracks"]
          as? [[String: Any]])[0]["envelope"] as? [[String: Any]]
    #expect(shapes?.map { $0["shape"] as? String } == ["db", "linear", "hold", "db", "db"])
    let before = try space.fingerprint("edit.tape")
    let refused = try space.tape(
      "track", "envelope", file, "t1", "--add", "1.5s:-3dB,2.5s:-6dB", "--shape", "db,hold,hold",
      status: 64, environment: ["NO_COLOR": "1"])
    #expect(
      refused.stderr
        == "error: 3 shapes for 2 added points; give one shape for all, or one per point (each shapes the segment it starts)\n"
    )
    #expect(try space.fingerprint("edit.tape") == before)
  }

  @Test func envelopePointsOneAtATime() throws {
    let space = try Workspace()
    let (file, _) = try Self.project(in: space)
    func points() throws -> [String] {
      let listing = try #require(
        parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
      let tracks = try #require(listing["tracks"] as? [[String: Any]])
      let envelope = tracks[0]["envelope"] as? [[String: Any]] ?? []
      return envelope.map { "\($0["frame"] ?? "")/\($0["gainDB"] ?? "-inf")/\($0["shape"] ?? "")" }
    }
    try space.tape("track", "envelope", file, "t1", "--add", "1s:-6dB")
    #expect(try points() == ["48000/-6.0/db"])
    try space.tape("track", "envelope", file, "t1", "--add", "0s:0dB,2s:-12dB", "--shape", "hold")
    #expect(try points() == ["0/0.0/hold", "48000/-6.0/db", "96000/-12.0/db"])
    try space.tape("track", "envelope", file, "t1", "--add", "1s:-3dB")
    #expect(try points() == ["0/0.0/hold", "48000/-3.0/db", "96000/-12.0/db"])
    try space.tape("track", "envelope", file, "t1", "--move", "1s", "--to", "+250ms")
    #expect(try points() == ["0/0.0/hold", "60000/-3.0/db", "96000/-12.0/db"])
    try space.tape("track", "envelope", file, "t1", "--remove", "0s,2s")
    #expect(try points() == ["60000/-3.0/db"])

    let before = try space.fingerprint("edit.tape")
    let missing = try space.tape(
      "track", "envelope", file, "t1", "--remove", "1s", status: 65, environment: ["NO_COLOR": "1"])
    #expect(missing.stderr == "error: t1 has no envelope point at 1s; its points are at 1.25s\n")
    try space.tape("track", "envelope", file, "t1", "--add", "3s:0dB")
    let past = try space.tape(
      "track", "envelope", file, "t1", "--move", "1.25s", "--to", "3s", status: 65,
      environment: ["NO_COLOR": "1"])
    #expect(
      past.stderr
        == "error: moving the point of t1 at 1.25s to 3s would pass or land on its point at 3s; points keep their order: remove that one first, or move it too\n"
    )
    let none = try space.tape(
      "track", "envelope", file, "t2", "--move", "1s", "--to", "2s", status: 65,
      environment: ["NO_COLOR": "1"])
    #expect(none.stderr == "error: t2 has no envelope; give it points with --add or --set\n")
    #expect(try space.fingerprint("edit.tape") != before)  // the --add above, and only it
    try space.tape("track", "envelope", file, "t1", "--remove", "1.25s,3s")
    #expect(try points() == [])
  }
}
