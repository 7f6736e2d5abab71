import Foundation
import Testing

/// The batch language's own parser (Sources/tape/BatchWords.swift) against swift-argument-parser
/// and the command line: each line of a table, valid or not, run as a batch of one line, as the
/// same batch with every line sent to swift-argument-parser (`TAPE_BATCH_PARSER=argument-parser`),
/// and as `tape WORDS` on the command line, each on its own copy of one project.
@Suite("Batch words")
struct BatchWordsTests {
  /// Tracks Voice (t1: c1 at 0–1 s, c2 "verse" at 1–2 s, touching) and Piano (t2: c3 at
  /// 0.5–1.5 s), sources s1 (speech) and s2 (piano), marker m1 "chorus" at 3 s.
  static func project(in folder: URL) throws {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let run = { (arguments: [String]) in
      let result = try TapeBinary.run(arguments, directory: folder)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
    }
    try run(["new", "song.tape"])
    try run(
      [
        "import", "song.tape", TestAudio.path("speech-mono-48k-16.wav"),
        TestAudio.path("piano-stereo-44k-24.wav"),
      ])
    let script = folder.appendingPathComponent("setup.txt")
    try """
    track add Voice
    track add Piano
    clip add t1 s1 --at 0 --length 1s
    clip add t1 s1 --at 1s --from 1s --length 1s --name verse
    clip add t2 s2 --at 0.5s --length 1s
    marker add chorus --at 3s
    """.write(to: script, atomically: true, encoding: .utf8)
    try run(["batch", "song.tape", "setup.txt"])
  }

  /// Lines the command line takes as they are: the batch must make the same project, or fail
  /// with the same exit status and the same error (the batch's has `line 1: ` after `error: `).
  static let lines = [
    // clip add
    "clip add t1 s1 --at 5s",
    "clip add Voice s2 --at 1:02.5 --from 0.5s --length 1s --gain -3dB --fade-in 10ms --fade-out 20ms --curve s-curve --name intro",
    "clip add t1 s1 --at c1.end --to 2s",
    "clip add t2 s1 --length 500ms --at @chorus+1s",
    "clip add t1 s1 --at 5s --bogus 3",
    "clip add t1 s1",
    "clip add t1 --at 5s",
    "clip add t1 s1 --at",
    "clip add t1 s1 --at 5x",
    "clip add t1 s1 --at -1s",
    "clip add t1 s1 --at 5s --gain loud",
    "clip add t1 s1 --at 5s --length 1s --to 2s",
    "clip add t1 s1 extra --at 5s",
    "clip add t9 s1 --at 5s",
    "clip add t1 s9 --at 5s",
    "clip add t1 s1 --at 5s --at 6s",
    "clip add t1 s1 --at=5s --curve linear",
    "clip add t1 s1 --at 5s --curve wobbly",
    "clip add t1 s1 --at 5s --name --json",
    "clip add t1 s1 --at 5s --from c1.start",
    // the other clip edits
    "clip split c1 --at 0.5s",
    "clip split @verse --at +250ms --snap clips",
    "clip split c1 --at 5s",
    "clip copy c1 --to 10s --track t2 --overwrite",
    "clip copy c3 --to c2.end --snap clips",
    "clip copy c3",
    "clip move c1 --to +1s",
    "clip mv c3 --track Voice --to 5s --overwrite",
    "clip move c3 --to 0.95s --snap clips",
    "clip move c99 --to 1s",
    "clip move c1",
    "clip move c1 --snap clips --track t2",
    "clip trim c1 --start 0.1s --end 0.9s",
    "clip trim c2 --end -100ms",
    "clip trim c1",
    "clip slip c2 --by 100ms",
    "clip slip c1 --by -100ms",
    "clip slip c1 --by 0",
    "clip set c1 --gain -6 --fade-in 50ms --fade-out 50ms --fade-in-curve s-curve --fade-out-curve linear --name first",
    "clip set @verse --no-name",
    "clip set c1",
    "clip set c1 --name a --no-name",
    "clip set c1 --fade-in-curve wobbly",
    "clip set c1 --gain",
    "clip crossfade c1 c2 --length 20ms --curve linear",
    "clip crossfade c1 c2",
    "clip crossfade c1 c3 --length 20ms",
    "clip rm c1",
    "clip remove c1 --ripple",
    "clip rm c1 c2",
    "clip rm @nobody",
    "clip rm c1 --ripple --ripple",
    "clip rm",
    // tracks
    "track add Drums --gain -3dB --pan -0.2",
    "track add Bed",
    "track add",
    "track add Bed --pan 3",
    "track set t1 --name Lead --gain -2 --pan 0.5 --mute --solo",
    "track set Voice --unmute --unsolo --output t2",
    "track set t1",
    "track set t1 --mute --unmute",
    "track set t1 --gain -3dB --gain -4dB",
    "track set Drums --gain -3",
    "track move t2 --to 1",
    "track move t1 --to x",
    "track move t1 --to 9",
    "track duplicate t1 --name Double",
    "track rm t2",
    "track remove Voice",
    "track rm t1 --ripple",
    // markers
    "marker move m1 --to +1s",
    "marker move chorus --to 10s",
    "marker move m9 --to 1s",
    "marker rename m1 refrain",
    "marker rename m1",
    // range edits and the master
    "cut --from 0.5s --to 0.7s --ripple",
    "cut --from 0.5s --to 0.7s --tracks t1 --crossfade 5ms --crossfade-curve linear",
    "cut --from 0.2s --to 0.3s --track Voice,Piano --snap clips",
    "cut --from 1s",
    "cut --from 1s --to 2s --tracks t1 --all",
    "cut --from 1s --to 2s --crossfade-curve linear",
    "cut --from 2s --to 1s",
    "insert --at 0.5s --length 1s --all",
    "insert --at 0.5s --length 1s --tracks t2",
    "insert --at 0.5s",
    "split --at 0.75s",
    "split --at 0.75s --tracks t1 --snap 250ms",
    "split --at 0.75s --snap sideways",
    "master --gain -2dB",
    "master --gain loud",
    "master",
    // not taken by the batch's own parser: swift-argument-parser reads them
    "track envelope t1 --set 0s:0,1s:-6",
    "fx add t1 nothing-at-all",
  ]

  /// Lines that work and that the batch's own parser leaves to swift-argument-parser.
  static let leftToArgumentParser: Set = [
    "clip add t1 s1 --at=5s --curve linear", "track envelope t1 --set 0s:0,1s:-6",
    "clip rm c1 --ripple --ripple",
  ]

  /// Lines whose error a batch words otherwise, and what it says: `@NAME` there may be a
  /// name an earlier line gave (`--as`), which the command line has no such thing as.
  static let batchErrors = [
    "clip rm @nobody":
      "error: line 1: @nobody is not named by an earlier line (name an id with --as NAME), nor a marker ('tape marker ls' lists them)\n"
  ]

  /// The same project as `tape ls --json` shows it, but for its version number (a batch's
  /// label and version differ from a command's).
  static func listing(_ folder: URL) throws -> NSDictionary {
    let result = try TapeBinary.run(["ls", "song.tape", "--json"], directory: folder)
    var listing = try #require(try parseJSON(result.stdout) as? [String: Any])
    listing["version"] = nil
    return NSDictionary(dictionary: listing)
  }

  /// Runs `line` as a one-line batch in `folder`, with `environment`, by the debug build
  /// (``TapeBinary/checking``: it checks each line's parse against swift-argument-parser's,
  /// value for value, and stops with an internal error where they differ).
  static func batch(
    _ line: String, in folder: URL, environment: [String: String] = [:]
  ) throws -> TapeBinary.Result {
    try line.write(
      to: folder.appendingPathComponent("line.txt"), atomically: true, encoding: .utf8)
    return try TapeBinary.run(
      TapeBinary.checking, ["batch", "song.tape", "line.txt"],
      environment: environment.merging(["NO_COLOR": "1"]) { $1 },
      directory: folder)
  }

  /// What a batch prints on stderr, as the command line prints it: without `line 1: `.
  static func unnumbered(_ stderr: String) -> String {
    stderr.replacing("error: line 1: ", with: "error: ").replacing(
      "note: line 1: ", with: "note: ")
  }

  @Test(arguments: lines)
  func aLineDoesInABatchWhatItDoesOnTheCommandLine(_ line: String) throws {
    let ws = try Workspace()
    let base = ws.url.appendingPathComponent("base")
    try Self.project(in: base)
    let folders = ["fast", "slow", "cli"].map { ws.url.appendingPathComponent($0) }
    for folder in folders { try FileManager.default.copyItem(at: base, to: folder) }
    let before = try Self.listing(base)

    let fast = try Self.batch(line, in: folders[0])
    let slow = try Self.batch(
      line, in: folders[1], environment: ["TAPE_BATCH_PARSER": "argument-parser"])
    // The batch's own parser and swift-argument-parser: the same in every byte.
    #expect(fast.status == slow.status, "\(line): \(fast.stderr) / \(slow.stderr)")
    #expect(fast.stdout == slow.stdout, "\(line)")
    #expect(fast.stderr == slow.stderr, "\(line)")
    #expect(try Self.listing(folders[0]) == Self.listing(folders[1]), "\(line)")
    #expect(!fast.stderr.contains("internal error"), "\(line): \(fast.stderr)")
    // A line that works, the batch's own parser reads (but those it leaves on purpose).
    if fast.status == 0 && !Self.leftToArgumentParser.contains(line) {
      let own = try Self.batch(line, in: base, environment: ["TAPE_BATCH_PARSER": "own"])
      #expect(own.status == 0, "\(line): \(own.stderr)")
    }

    // The command line: the same status, the same error and the same project.
    if let message = Self.batchErrors[line] {
      #expect(fast.stderr == message)
      return
    }
    var words = line.split(separator: " ").map(String.init)
    words.insert("song.tape", at: ["clip", "track", "marker", "fx"].contains(words[0]) ? 2 : 1)
    let cli = try TapeBinary.run(words, environment: ["NO_COLOR": "1"], directory: folders[2])
    #expect(fast.status == cli.status, "\(line): \(fast.stderr) / \(cli.stderr)")
    #expect(Self.unnumbered(fast.stderr) == cli.stderr, "\(line)")
    let after = try Self.listing(folders[0])
    #expect(try after == Self.listing(folders[2]), "\(line)")
    // Whether the line changed the project is whether it succeeded.
    #expect((after != before) == (fast.status == 0), "\(line)")
  }

  /// Lines the command line reads otherwise (`--json` prints JSON there; a batch prints its
  /// own output once): the batch's own parser against swift-argument-parser only.
  @Test(arguments: [
    "clip add t1 s1 --at 5s --json",
    "track set t1 --gain -1 --json",
    "clip add t1 s1 --at 5s --json --json",
    "clip rm c1 -m Gone",
    "clip add t1 s1 --at 5s -- extra",
  ])
  func aLineReadsAsSwiftArgumentParserReadsIt(_ line: String) throws {
    let ws = try Workspace()
    let base = ws.url.appendingPathComponent("base")
    try Self.project(in: base)
    let folders = ["fast", "slow"].map { ws.url.appendingPathComponent($0) }
    for folder in folders { try FileManager.default.copyItem(at: base, to: folder) }
    let fast = try Self.batch(line, in: folders[0])
    let slow = try Self.batch(
      line, in: folders[1], environment: ["TAPE_BATCH_PARSER": "argument-parser"])
    #expect(fast.status == slow.status, "\(line): \(fast.stderr) / \(slow.stderr)")
    #expect(fast.stdout == slow.stdout, "\(line)")
    #expect(fast.stderr == slow.stderr, "\(line)")
    #expect(try Self.listing(folders[0]) == Self.listing(folders[1]), "\(line)")
  }
}
