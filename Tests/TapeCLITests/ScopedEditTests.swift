import Foundation
import Testing

/// `clip set`, `rm`, `split`, `move` and `trim` read only the clips they name (a scoped edit),
/// and `undo`, `redo` and `checkout` only what they change;
/// `TAPE_SCOPED_EDITS=0` makes them read the whole project as every other command does. The two must be the same
/// edit: a seeded run of random command lines (valid and invalid: ids and names that exist or
/// not, names taken, fades too long, bad values, ripples) on two copies of one project, one
/// each way, compares after every command its exit status, stdout and stderr, and every few
/// commands every tracked row, the history (each version's label and recorded change), the
/// head, the id counters, the head's journal and `ls --json` of the two files.
/// `TAPE_SCOPED_SEED` replays a run.
extension ManyProcessesTests {
  @Suite("Scoped edits") struct ScopedEditTests {
    @Test func scopedAndWholeProjectEditsMakeTheSameFiles() throws {
      let seed =
        ProcessInfo.processInfo.environment["TAPE_SCOPED_SEED"].flatMap(UInt64.init)
        ?? UInt64.random(in: 1...1_000_000)
      print("scoped edits: seed \(seed) (replay with TAPE_SCOPED_SEED=\(seed))")
      var random = SplitMix(state: seed)
      let space = try Workspace()
      let base = space.path("base.tape")
      let made = try TapeBinary.run(
        TapeBinary.testing, ["fixture", base, "--clips", "40", "--versions", "12"])
      try #require(made.status == 0, "\(made.stderr)")
      let whole = ["TAPE_SCOPED_EDITS": "0"]
      for clip in stride(from: 2, through: 40, by: 4) {
        try space.tape(
          ["clip", "set", base, "c\(clip)", "--name", "name-\(clip)"], environment: whole)
      }
      let files = (scoped: space.path("scoped.tape"), whole: space.path("whole.tape"))
      for file in [files.scoped, files.whole] {
        try FileManager.default.copyItem(atPath: base, toPath: file)
      }
      var scopedRuns = 0
      for step in 0..<90 {
        let arguments = commandLine(&random)
        let ran = try [files.scoped, files.whole].map { file in
          try TapeBinary.run(
            arguments.map { $0 == "FILE" ? file : $0 },
            environment: file == files.whole ? whole : [:])
        }
        let shown = "seed \(seed), step \(step): tape \(arguments.joined(separator: " "))"
        #expect(ran[0].status == ran[1].status, "\(shown): \(ran[0].stderr) \(ran[1].stderr)")
        #expect(ran[0].stdout == ran[1].stdout, "\(shown)")
        #expect(
          ran[0].stderr.replacingOccurrences(of: files.scoped, with: "FILE")
            == ran[1].stderr.replacingOccurrences(of: files.whole, with: "FILE"), "\(shown)")
        if ran[0].status == 0 { scopedRuns += 1 }
        if step % 10 == 9 {
          #expect(try contents(files.scoped) == contents(files.whole), "\(shown)")
        }
      }
      // Both paths made edits and refused some: the run tried what it means to.
      #expect(scopedRuns > 20)
      #expect(try contents(files.scoped) == contents(files.whole))
      let listed = try [files.scoped, files.whole].map { try space.tape("ls", $0, "--json").stdout }
      #expect(listed[0] == listed[1])
      for file in [files.scoped, files.whole] {
        let verified = try TapeBinary.run(TapeBinary.testing, ["verify", file])
        #expect(verified.status == 0, "\(verified.stdout)")
      }
    }

    /// A scoped edit reads the clip it names and nothing more, and says when its commit
    /// returned as every commit does (`tape -v`: the live-edit latency tests read that stamp;
    /// the scoped path once left the line out); `TAPE_SCOPED_EDITS=0` reads the whole project.
    @Test func aScopedEditReadsOneClipAndLogsItsCommit() throws {
      let space = try Workspace()
      let file = space.path("song.tape")
      let made = try TapeBinary.run(
        TapeBinary.testing, ["fixture", file, "--clips", "40", "--versions", "3"])
      try #require(made.status == 0, "\(made.stderr)")
      let scoped = try TapeBinary.run(
        ["clip", "set", file, "c7", "--gain", "-3"], environment: ["TAPE_LOG": "debug"])
      #expect(scoped.status == 0, "\(scoped.stderr)")
      #expect(
        scoped.stderr.contains(
          #/committed version \d+ \(edit; scoped, clips read: 1\) monotonic=\d+/#),
        "\(scoped.stderr)")
      let whole = try TapeBinary.run(
        ["clip", "set", file, "c7", "--gain", "-4"],
        environment: ["TAPE_LOG": "debug", "TAPE_SCOPED_EDITS": "0"])
      #expect(whole.status == 0, "\(whole.stderr)")
      #expect(
        whole.stderr.contains(#/committed version \d+ \(edit\) monotonic=\d+/#), "\(whole.stderr)")
    }

    /// One random command line of `clip set` or `clip rm`, FILE standing for the project.
    private func commandLine(_ random: inout SplitMix) -> [String] {
      func clip() -> String {
        switch random.next(10) {
        case 0: return "c\(41 + random.next(3))"  // no such clip
        case 1: return "@name-\(2 + 4 * random.next(12))"  // named, or a name nobody has
        case 2: return "x\(random.next(3))"  // not an id
        default: return "c\(1 + random.next(40))"
        }
      }
      func time() -> String {
        random.pick([
          "+0.3", "-0.2", "0:02.5", "9", "c\(1 + random.next(44)).start+0.4s", "c7.end",
          "c\(1 + random.next(40)).end-0.5s", "x2.end", "later",
        ])
      }
      var line: [String]
      switch random.next(20) {
      case 16:
        line = ["undo", "FILE"]
        if random.next(2) == 0 { line += ["--steps", "\(1 + random.next(4))"] }
      case 17:
        line = ["redo", "FILE"]
        if random.next(2) == 0 { line += ["--steps", "\(1 + random.next(3))"] }
      case 18:
        line = [
          "checkout", "FILE", random.pick(["\(1 + random.next(40))", "HEAD~2", "v3", "v99"]),
        ]
      case 12:
        line = ["clip", "split", "FILE", clip(), "--at", time()]
      case 13:
        line = ["clip", "move", "FILE", clip(), "--to", time()]
        if random.next(3) == 0 { line += ["--track", "t\(1 + random.next(11))"] }
      case 14:
        line = ["clip", "trim", "FILE", clip(), random.pick(["--start", "--end"]), time()]
      case 15:
        line = ["clip", "move", "FILE", clip(), "--to", time(), "--snap", "clips"]
      case 0, 1:
        line = ["clip", "rm", "FILE", clip()]
        if random.next(4) == 0 { line.append("--ripple") }
      case 2:
        line = ["clip", "set", "FILE", clip(), "--name", "name-\(random.next(50))"]
      case 3:
        line = ["clip", "set", "FILE", clip(), "--no-name"]
      case 4:
        line = ["clip", "set", "FILE", clip(), "--fade-in", random.pick(["0.2", "0", "3s", "-1"])]
      case 5:
        line = [
          "clip", "set", "FILE", clip(), "--fade-out", random.pick(["0.3", "0", "0.9"]),
          "--fade-out-curve", random.pick(["s-curve", "linear", "wobbly"]),
        ]
      default:
        line = [
          "clip", "set", "FILE", clip(), "--gain",
          random.pick(["-3", "-6dB", "+2", "0", "+99", "loud", "-\(random.next(40))"]),
        ]
      }
      switch random.next(6) {
      case 0: line.append("--json")
      case 1: line += ["-m", "step \(random.next(100))"]
      default: break
      }
      return line
    }

    /// Every row a project keeps but the times it was written at: the tracked tables, the
    /// versions, the head, the id counters and the journal of head moves.
    private func contents(_ file: String) throws -> String {
      let tables = [
        "project", "source", "track", "clip", "envelope", "master", "envelope_point", "effect",
        "marker", "clip_detail", "head", "id_sequence", "effect_sequence", "marker_sequence",
      ]
      let queries =
        tables.map { "SELECT '\($0)', * FROM \($0) ORDER BY 2;" } + [
          "SELECT 'version', id, parent, jump, depth, label, coalescingKey, hex(changeset), revision FROM version ORDER BY id;",
          "SELECT 'head_move', seq, fromVersion, toVersion, cause FROM head_move ORDER BY seq;",
        ]
      let result = try TapeBinary.run(
        URL(fileURLWithPath: "/usr/bin/sqlite3"), ["-readonly", file, queries.joined()])
      try #require(result.status == 0, "\(result.stderr)")
      return result.stdout
    }
  }
}

/// A small seeded generator (SplitMix64), so that a run can be replayed.
struct SplitMix {
  var state: UInt64

  mutating func next(_ bound: Int) -> Int {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return Int((z ^ (z >> 31)) % UInt64(bound))
  }

  mutating func pick<T>(_ values: [T]) -> T { values[next(values.count)] }
}
