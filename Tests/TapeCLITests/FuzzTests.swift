import Foundation
import ReferenceRenders
import Testing
import Timeline
import TimelineStore

/// A seeded generator of `tape` command lines (every subcommand, valid and invalid values for
/// each option, odd paths and environment values) run against a real project, checking after
/// each run what every failure must keep true:
///
/// - the process did not die of a signal, and its exit code is 0 or a documented sysexits code
///   (70, "internal error", counts as a failure of the fuzzer);
/// - a failure printed exactly one line on stderr, starting with `error:` (a play may say
///   `tape play: …` first), and nothing on stdout;
/// - a failed command left the project logically identical (`ls --json`, `history --json`);
/// - every 100 runs and at the end, the store's own check (`tape-testing verify`) passes.
///
/// `TAPE_FUZZ_SEED` replays a run; `TAPE_FUZZ_RUNS` sets how many (CI: 1,500).
extension ManyProcessesTests {
  @Suite("Fuzzing the command line", .timeLimit(.minutes(20)))
  struct FuzzTests {
    /// Run on a thread of its own: two minutes of waiting for processes would otherwise hold
    /// one of the cooperative pool's two threads and starve the async tests meanwhile.
    /// (So nothing in it may record an issue: it returns what it found, and the test checks.)
    @Test func everyFailureIsOneLineAndChangesNothing() async throws {
      let (seed, failures) = try await withCheckedThrowingContinuation {
        (done: CheckedContinuation<(UInt64, [String]), any Error>) in
        Thread.detachNewThread { done.resume(with: Result { try fuzz() }) }
      }
      #expect(failures.isEmpty, "seed \(seed):\n\(failures.joined(separator: "\n"))")
    }

    /// Byte flips in a fresh copy of a project each time (1 to 4 bytes anywhere past the
    /// header's first 100 bytes, or in it now and then), then one command of many: no signal
    /// death, a documented exit code, and a failure is one `error:` line, prints nothing on
    /// stdout and leaves the file byte for byte as it was. `TAPE_FLIP_RUNS` sets how many
    /// (default 300); the seed is `TAPE_FUZZ_SEED`'s; `TAPE_FLIP_KEEP=DIR` keeps each file
    /// that killed a command there.
    @Test func byteFlipsFailInOneLineAndChangeNothing() async throws {
      let (seed, failures) = try await withCheckedThrowingContinuation {
        (done: CheckedContinuation<(UInt64, [String]), any Error>) in
        Thread.detachNewThread { done.resume(with: Result { try flips() }) }
      }
      #expect(failures.isEmpty, "seed \(seed):\n\(failures.joined(separator: "\n"))")
    }

    private func flips() throws -> (seed: UInt64, failures: [String]) {
      let environment = ProcessInfo.processInfo.environment
      let seed =
        environment["TAPE_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...1_000_000)
      let runs = environment["TAPE_FLIP_RUNS"].flatMap(Int.init) ?? 300
      print("flips: seed \(seed), \(runs) runs (replay with TAPE_FUZZ_SEED=\(seed))")
      var fuzzer = try Fuzzer(seed: seed)
      // A few more versions, so that history, undo and checkout have rows to trip on.
      for gain in ["-1", "-2", "-3"] {
        _ = try TapeBinary.run(["clip", "set", fuzzer.file, "c1", "--gain", gain])
      }
      let original = try Data(contentsOf: URL(fileURLWithPath: fuzzer.file))
      let damaged = fuzzer.space.path("damaged.tape")
      var failures: [String] = []
      var counts: [Int32: Int] = [:]
      for run in 0..<runs {
        for suffix in ["", "-wal", "-shm"] {
          try? FileManager.default.removeItem(atPath: damaged + suffix)
        }
        var bytes = original
        for _ in 0...fuzzer.next(4) {
          let index = fuzzer.next(10) == 0 ? fuzzer.next(100) : 100 + fuzzer.next(bytes.count - 100)
          bytes[index] ^= UInt8(1 + fuzzer.next(255))
        }
        try bytes.write(to: URL(fileURLWithPath: damaged))
        let arguments = fuzzer.pick([
          "ls", "ls --json", "history", "history --json", "undo", "redo", "checkout 2",
          "checkout 1",
          "diff 1 4", "render -o OUT", "clip set c1 --gain -6", "track add X", "clip rm c2",
          "cut --from 0.1s --to 0.2s", "draw -o PICTURE", "draw 1 4 -o PICTURE",
        ]).split(separator: " ").map(String.init)
        let words = ["clip", "track"].contains(arguments[0]) ? 2 : 1
        let command =
          Array(arguments.prefix(words)) + [damaged]
          + arguments.dropFirst(words).map {
            $0 == "OUT"
              ? fuzzer.space.path("flip.wav")
              : $0 == "PICTURE" ? fuzzer.space.path("flip.svg") : $0
          }
        let result = try TapeBinary.run(
          command, environment: ["NO_COLOR": "1"], directory: fuzzer.space.url, killAfter: 30)
        counts[result.status, default: 0] += 1
        let shown = "run \(run): tape \(fuzzer.shown(command))"
        if result.killedBySignal {
          // The damaged file that killed the command is kept, to replay it by hand, and the
          // command runs once more with Swift's backtracer, so that the failure says where it
          // crashed (a CI run's `tape diff` died of SIGILL once, and its file was gone).
          let keep =
            environment["TAPE_FLIP_KEEP"] ?? (NSTemporaryDirectory() + "tape-flip-failures")
          try? FileManager.default.createDirectory(
            atPath: keep, withIntermediateDirectories: true)
          let kept = keep + "/seed-\(seed)-run-\(run).tape"
          try? bytes.write(to: URL(fileURLWithPath: kept))
          let trace = try Fuzzer.backtrace(of: command, in: fuzzer.space.url)
          failures.append(
            "\(shown) → killed by signal \(result.status): \(result.stderr.prefix(300)); the damaged file is kept as \(kept); \(trace)"
          )
        } else if !Fuzzer.documentedCodes.contains(result.status) {
          failures.append("\(shown) → exit \(result.status): \(result.stderr.prefix(300))")
        } else if result.status != 0 {
          let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
          let now = try Data(contentsOf: URL(fileURLWithPath: damaged))
          let log = (try? Data(contentsOf: URL(fileURLWithPath: damaged + "-wal"))) ?? Data()
          if lines.count != 2 || !lines[0].hasPrefix("error: ") || !lines[1].isEmpty
            || lines[0].unicodeScalars.contains(where: { $0.properties.generalCategory == .control }
            ) || Fuzzer.showsASwiftValue(lines[0])
          {
            failures.append(
              "\(shown) → exit \(result.status) with stderr \(result.stderr.debugDescription.prefix(400))"
            )
          } else if !result.stdout.isEmpty {
            failures.append(
              "\(shown) → exit \(result.status) with stdout \(result.stdout.prefix(200))")
          } else if now != bytes || !log.isEmpty {
            failures.append("\(shown) → exit \(result.status) but the file changed: \(lines[0])")
          }
        }
        if failures.count >= 10 { break }
      }
      print(
        "flips: exit codes \(counts.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " "))"
      )
      return (seed, failures)
    }

    private func fuzz() throws -> (seed: UInt64, failures: [String]) {
      let environment = ProcessInfo.processInfo.environment
      let seed =
        environment["TAPE_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...1_000_000)
      let runs = environment["TAPE_FUZZ_RUNS"].flatMap(Int.init) ?? 1_500
      print("fuzz: seed \(seed), \(runs) runs (replay with TAPE_FUZZ_SEED=\(seed))")
      var fuzzer = try Fuzzer(seed: seed)
      var failures: [String] = []
      var counts: [Int32: Int] = [:]
      for run in 0..<runs {
        let (arguments, extra) = fuzzer.commandLine()
        if let problem = try fuzzer.check(arguments, environment: extra, counts: &counts) {
          failures.append("run \(run): tape \(fuzzer.shown(arguments)) → \(problem)")
          if failures.count >= 10 { break }
        }
        if run % 100 == 99, let problem = try fuzzer.verify() {
          failures.append("after run \(run): \(problem)")
          break
        }
        if run % 300 == 299 { try fuzzer.reset() }
      }
      if failures.isEmpty, let problem = try fuzzer.verify() { failures.append(problem) }
      print(
        "fuzz: exit codes \(counts.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " "))"
      )
      return (seed, failures)
    }
  }
}

/// The generator and the checks; one project in a workspace of its own.
struct Fuzzer {
  var state: UInt64
  let space: Workspace
  let file: String
  /// The project as it is now (``ProjectState``).
  var listing: ProjectState?

  static let documentedCodes: Set<Int32> = [0, 64, 65, 66, 74, 75, 77]

  /// In a generated argument, stands for the byte 0xE9 alone (Latin-1 é): the argument is then
  /// not UTF-8, and the command runs through bash, which can pass any bytes.
  static let latin1E9 = "\u{E000}"

  init(seed: UInt64) throws {
    state = seed
    space = try Workspace()
    file = space.path("song.tape")
    // Odd things to point paths at: a folder, a FIFO, a device node of our own (never the
    // machine's /dev), a file that is not audio.
    try FileManager.default.createDirectory(
      atPath: space.path("folder"), withIntermediateDirectories: true)
    mkfifo(space.path("fifo"), 0o644)
    if geteuid() == 0 { mknod(space.path("null-device"), S_IFCHR | 0o666, dev_t((1 << 8) | 3)) }
    try Data("not audio".utf8).write(to: URL(fileURLWithPath: space.path("text.wav")))
    // Batch scripts: one that applies, one that fails on its last line.
    try "track add Extra --as x\nclip copy c1 --to 5s --track @x\ncut --from 0.2s --to 0.3s\n"
      .write(toFile: space.path("good.txt"), atomically: true, encoding: .utf8)
    try "track add Extra\nclip move c1 --to 1s\nclip rm c999\n"
      .write(toFile: space.path("bad.txt"), atomically: true, encoding: .utf8)
    // An audio file whose name is not UTF-8 (`caf\xE9.wav`).
    try FileManager.default.copyItem(
      atPath: TestAudio.path("tone-mono-44k-24.aiff"), toPath: space.path("latin1"))
    guard rename(space.path("latin1"), space.path("caf\u{E9}.wav").latin1) == 0 else {
      throw ReferenceError(message: "fuzz setup: cannot make a Latin-1 file name")
    }
    try reset()
  }

  /// A fresh project: two sources, three tracks, a few clips.
  mutating func reset() throws {
    for suffix in ["", "-wal", "-shm"] {
      try? FileManager.default.removeItem(atPath: file + suffix)
    }
    // Throws rather than records an issue: this runs off the test's own task.
    func tape(_ arguments: String...) throws {
      let result = try TapeBinary.run(arguments)
      guard result.status == 0 else {
        throw ReferenceError(message: "fuzz setup: tape \(arguments): \(result.stderr)")
      }
    }
    try tape("new", file)
    try tape(
      "import", file, TestAudio.path("speech-mono-48k-16.wav"),
      TestAudio.path("piano-stereo-44k-24.wav"))
    for name in ["Voice", "Piano", "Bed"] { try tape("track", "add", file, name) }
    try tape("clip", "add", file, "t1", "s1", "--at", "0.5s", "--length", "2s")
    try tape("clip", "add", file, "t2", "s2", "--at", "0", "--length", "1.5s")
    try tape("clip", "add", file, "t3", "s1", "--at", "1s", "--from", "1s", "--length", "1s")
    try tape("marker", "add", file, "1s", "verse")
    listing = try list()
  }

  /// `command` run again with Swift's backtracer (the static runtime's, beside the `swift`
  /// on PATH): the crashed thread's first frames, or why there are none.
  static func backtrace(of command: [String], in directory: URL) throws -> String {
    let swift = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
      .map { "\($0)/swift" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    guard let swift else { return "no swift on PATH, so no backtrace" }
    let real = URL(fileURLWithPath: swift).resolvingSymlinksInPath()
    let helper = real.deletingLastPathComponent()
      .appendingPathComponent("../libexec/swift/linux/swift-backtrace-static").standardizedFileURL
      .path
    guard FileManager.default.isExecutableFile(atPath: helper) else {
      return "no \(helper), so no backtrace"
    }
    let again = try TapeBinary.run(
      command,
      environment: [
        "NO_COLOR": "1",
        "SWIFT_BACKTRACE": "enable=yes,interactive=no,color=no,swift-backtrace=\(helper)",
      ], directory: directory, killAfter: 60)
    guard again.killedBySignal else {
      return "run again it did not crash (exit \(again.status))"
    }
    let lines = again.stderr.split(separator: "\n")
    guard let crashed = lines.firstIndex(where: { $0.contains(" crashed:") }) else {
      return "run again it crashed too, with no backtrace: \(again.stderr.prefix(300))"
    }
    let head = lines.prefix { !$0.hasPrefix("Thread 0") }.prefix(3)
    return "run again: " + (head + lines[crashed...].prefix(16)).joined(separator: "\n")
  }

  mutating func next(_ bound: Int) -> Int {
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return Int((state >> 33) % UInt64(bound))
  }

  mutating func pick<Option>(_ options: [Option]) -> Option { options[next(options.count)] }

  /// Sometimes a valid value, sometimes one of many invalid ones.
  mutating func time() -> String {
    pick([
      "1s", "0", "1.5", "250ms", "0:01.5", "00:00:02.250", "96000f", "2", "0.001s", "10s",
      "-1s", "1e10", "nan", "", "abc", "99999999999999", "1:60", "inf", "1099511627777f", "--",
      "0.0000001s", "3:", ":3", "1:2:3:4", "١", "@verse", "@verse+250ms", "@verse-2s", "@",
      "@nosuch", "@verse+x",
    ])
  }
  mutating func marker() -> String { pick(["m1", "m2", "m9", "verse", "@verse", "c1", "", "m0"]) }
  mutating func markerName() -> String {
    pick(["chorus", "verse", "m3", "12", "@x", "bridge two", "", " pad", "a\nb", "t\u{7}"])
  }
  mutating func clip() -> String {
    pick(["c1", "c2", "c3", "c4", "c99", "c0", "x1", "", "t1", "c-1"])
  }
  /// A clipboard name: mostly `x` (which a copy makes and a paste then finds), sometimes one
  /// never copied or one that is not a name.
  mutating func clipboard() -> String {
    pick(["x", "x", "x", "y", "", "a/b", "-x", "ü", String(repeating: "n", count: 65)])
  }
  mutating func snap() -> String {
    pick(["clips", "zero", "250ms", "1/4@120bpm", "1/3@97.5bpm", "x", "0", "1/0@1bpm", "", "-1s"])
  }
  mutating func track() -> String { pick(["t1", "t2", "t3", "t9", "t0", "c1", "", "T1"]) }
  mutating func source() -> String { pick(["s1", "s2", "s9", "t1", ""]) }
  mutating func gain() -> String {
    pick(["-3", "+2.5dB", "-6dB", "0", "-inf", "nan", "1000", "-200", "", "abc", "-3 dB", "inf"])
  }
  mutating func pan() -> String { pick(["0", "-1", "1", "0.5", "1.5", "nan", "", "L"]) }
  mutating func curve() -> String {
    pick(["linear", "equal-power", "s-curve", "exponential", "log", "", "LINEAR"])
  }
  mutating func version() -> String { pick(["1", "2", "3", "5", "999", "0", "-1", "abc", ""]) }
  mutating func name() -> String {
    pick([
      "Lead", "", " ", "Drums & Bass", "a\nb", "x\ty", "ü", "Dr\(Self.latin1E9)ms",
      "\u{1B}[31mred", "bell\u{7}",
    ])
  }
  mutating func audioPath() -> String {
    pick([
      TestAudio.path("tone-mono-44k-24.aiff"), TestAudio.path("bad-truncated.wav"),
      TestAudio.path("bad-not-audio.wav"), TestAudio.path("bad-six-channels.wav"),
      TestAudio.path("bad-empty.wav"), space.path("missing.wav"), space.path("folder"),
      space.path("fifo"), space.path("text.wav"), file, "", space.path("null-device"),
      space.path("caf\(Self.latin1E9).wav"), space.path("gon\(Self.latin1E9).wav"),
      space.path("no\nsuch.wav"), space.path("esc\u{1B}[2J.wav"),
    ])
  }
  mutating func outputPath() -> String {
    pick([
      space.path("out.wav"), space.path("out.flac"), space.path("out.aiff"), space.path("out.mp9"),
      space.path("folder"), file, file + "-wal", TestAudio.path("speech-mono-48k-16.wav"),
      space.path("fifo"), space.path("no/such/dir/out.wav"), space.path("null-device"), "",
      space.path("out\(Self.latin1E9).wav"), space.path("no\u{7}such/out.wav"),
      space.path("out\nput.wav"),
    ])
  }

  /// Where `tape draw` writes: mostly pictures, sometimes a path it must refuse.
  mutating func pictureOutputPath() -> String {
    pick([
      space.path("out.svg"), space.path("out.png"), space.path("OUT.SVG"), space.path("out.jpg"),
      space.path("folder"), space.path("folder.svg"), file, space.path("fifo"), "", "-",
      space.path("no/such/dir/out.svg"), space.path("out\(Self.latin1E9).svg"),
      space.path(".svg"), space.path("out\nput.png"),
    ])
  }

  /// One command line and extra environment.
  mutating func commandLine() -> ([String], [String: String]) {
    var arguments: [String]
    switch next(42) {
    case 0:
      arguments = ["track", "add", file, name()] + maybe(["--gain", gain()], ["--pan", pan()])
    case 1:
      arguments =
        ["track", "set", file, track()]
        + maybe(
          ["--name", name()], ["--gain", gain()], ["--pan", pan()], [pick(["--mute", "--unmute"])],
          [pick(["--solo", "--unsolo"])])
    case 2: arguments = ["track", "rm", file, track()]
    case 3:
      arguments =
        ["clip", "add", file, track(), source(), "--at", time()]
        + maybe(
          ["--from", time()], ["--length", time()], ["--to", time()], ["--gain", gain()],
          ["--fade-in", time()], ["--fade-out", time()], ["--curve", curve()])
    case 4:
      arguments = ["clip", "split", file, clip(), "--at", time()] + maybe(["--snap", snap()])
    case 5:
      arguments =
        ["clip", "move", file, clip()]
        + maybe(["--to", time()], ["--track", track()], ["--snap", snap()])
    case 6:
      arguments = ["clip", "trim", file, clip()] + maybe(["--start", time()], ["--end", time()])
    case 7:
      arguments =
        ["clip", "set", file, clip()]
        + maybe(
          ["--gain", gain()], ["--fade-in", time()], ["--fade-out", time()],
          ["--fade-in-curve", curve()], ["--fade-out-curve", curve()])
    case 8: arguments = ["clip", "rm", file, clip()]
    case 9:
      arguments = ["undo", file] + maybe(["--steps", pick(["1", "2", "0", "-1", "999", "x"])])
    case 10: arguments = ["redo", file] + maybe(["--steps", pick(["1", "3", "0", "x"])])
    case 11: arguments = ["checkout", file, version()]
    case 12: arguments = ["import", file, audioPath()]
    case 13:
      arguments =
        next(4) == 0
        ? ["relink", file, "--folder", pick([space.path("folder"), space.url.path, file, "x"])]
        : ["relink", file, source(), audioPath()] + maybe(["--force"])
    case 14: arguments = ["ls", file] + maybe(["--json"], ["--frames"], ["--version", version()])
    case 15:
      arguments =
        ["history", file]
        + maybe(["--json"], ["--all"], ["--limit", pick(["1", "3", "0", "-1", "x"])])
    case 40:
      arguments =
        ["log", file]
        + maybe([pick(["c1", "c2", "t1", "t3", "s1", "m1", "f1", "c99", "x1", "", "v1"])])
        + maybe(["--all"], ["--json"], ["--frames"], ["--limit", pick(["1", "0", "x"])])
    case 41:
      arguments =
        ["compare", file, version(), pick([version(), "v1", "x", "-1"])]
        + maybe(
          ["--json"], ["--threshold", pick(["-90dB", "-60", "3dB", "x", ""])],
          ["-o", pick([outputPath(), space.path("diff.aiff"), "-"])], ["--frames"])
    case 16: arguments = ["diff", file, version(), version()] + maybe(["--json"])
    case 17:
      arguments =
        ["render", file, "-o", outputPath()]
        + maybe(
          ["--from", time()], ["--to", time()], ["--bits", pick(["16", "24", "32f", "8", ""])],
          ["--version", version()], ["--format", pick(["wav", "flac", "ogg", "mp3"])],
          ["--tracks", pick(["t1", "t1,t2", "t9", ""])], ["--no-master-gain"])
    case 18:
      arguments =
        [
          "play", file, "--device", pick(["null", "no-such-device"]), "--to", pick(["0.05s", "0"]),
        ]
        + maybe(["--from", time()], ["--period", pick(["256", "7", "0", "x"])], ["--json"])
    case 19: arguments = ["watch", file, "--count", pick(["0", "-1", "x"])]
    case 22:
      arguments =
        ["track", "envelope", file, track()]
        + (next(4) == 0
          ? ["--clear"]
          : [
            "--set",
            pick([
              "0s:0dB,1s:-6", "\(time()):\(gain())", "1s:0,0.5s:-3", "", "2s:-inf,3s:-inf", "x",
              "0s:-inf,1s:0,2s:-12,3s:-inf",
            ]),
          ])
        + maybe(["--shape", pick(["hold", "linear", "db,hold,linear", "DB", "linear,", "", "x"])])
        + pointEdit()
    case 23: arguments = ["master", file, "--gain", gain()]
    case 24:
      arguments =
        ["cut", file, "--from", time(), "--to", time()]
        + maybe(
          ["--ripple"], ["--crossfade", time()], ["--crossfade-curve", curve()],
          ["--tracks", pick(["t1", "t1,t2", "t9", ""])], ["--snap", snap()])
    case 27:
      arguments =
        ["clip", "crossfade", file, clip(), clip(), "--length", time()]
        + maybe(["--curve", curve()])
    case 28:
      arguments =
        ["split", file, "--at", pick([time(), "c1.end", "c2.start+0.1s", "c9.end", "+1s"])]
        + maybe(["--tracks", pick(["t1", "t1,t2", "t9", ""])], ["--snap", snap()])
    case 29:
      arguments = [
        "clip", "slip", file, clip(), "--by", pick([time(), "-" + time(), "+1s", "--"]),
      ]
    case 31:
      arguments =
        ["silences", file]
        + maybe(
          ["--below", gain()], ["--longer", time()], ["--track", track()], ["--cut"],
          ["--ripple"], ["--pad", time()], ["--json"])
    case 30:
      arguments =
        ["clip", "ls", file]
        + maybe(
          ["--from", time()], ["--to", pick([time(), "+1s", "c1.end"])], ["--tracks", "t2"],
          ["--json"], ["--frames"])
    case 25:
      arguments =
        ["insert", file, "--at", time(), "--length", time()]
        + maybe(["--tracks", pick(["t2", "t3,t1", "x"])])
    case 26:
      arguments =
        [
          "batch", file,
          pick([
            space.path("good.txt"), space.path("bad.txt"), space.path("missing.txt"),
            space.path("folder"), "-",
          ]),
        ]
        + maybe(["-m", pick(["Batch", "", "a\nb"])], ["--json"])
    case 21:
      arguments =
        next(2) == 0
        ? ["fx", "plugins"] + maybe(["--search", pick(["limiter", "", "ÜBER", "#", "x42"])])
          + maybe(["--json"])
        : [
          "fx", "info", pick(["http://gareus.org/oss/lv2/dpl#stereo", "dpl", "", file, "http://"]),
        ]
          + maybe(["--json"])
    case 32:
      switch next(5) {
      case 0: arguments = ["marker", "add", file, time(), markerName()]
      case 1: arguments = ["marker", "move", file, marker(), "--to", pick([time(), "+1s", "-1s"])]
      case 2: arguments = ["marker", "rename", file, marker(), markerName()]
      case 3: arguments = ["marker", "rm", file, marker()] + maybe([marker()])
      default: arguments = ["marker", "ls", file] + maybe(["--json"], ["--frames"])
      }
    case 33:
      arguments =
        next(5) == 0
        ? ["copy", file]
          + pick([
            ["--list"], ["--list", "--json"], ["--delete", clipboard()], ["--list", "--as", "x"],
          ])
        : [
          "copy", file, "--from", time(), "--to", pick([time(), "+1s", "c1.end"]), "--as",
          clipboard(),
        ]
          + maybe(["--tracks", pick(["t1", "t1,t2", "t9", ""])], ["--json"])
    case 34:
      arguments =
        ["paste", file, clipboard(), "--at", pick([time(), "c1.end", "+1s"])]
        + maybe(
          ["--tracks", pick(["t1", "t1,t2,t3", "t3,t2,t1", "t1,t1,t2", "t9", ""])], ["--ripple"],
          ["--json"], ["--snap", snap()])
    case 35:
      arguments =
        ["draw", file]
        + (next(4) == 0 ? [version(), version()] : [])
        + ["-o", pictureOutputPath()]
        + maybe(
          ["--from", time()], ["--to", pick([time(), "+1s", "c1.end", "@verse"])],
          ["--width", pick(["400", "1200", "399", "0", "-5", "x", "16385", "900"])],
          ["--version", version()])
    case 36:
      arguments =
        next(3) == 0
        ? [
          "import-otio", pick([space.path("out.otio"), space.path("missing.otio"), file, ""]),
          pick([space.path("imported.tape"), file]),
        ] + maybe(["--rate", pick(["44100", "7", "x"])], ["--json"])
        : [
          "export", file, "-o",
          pick([space.path("out.otio"), space.path("out.edl"), space.path("out.txt"), ""]),
        ]
          + maybe(["--fps", pick(["24", "25", "29", "x"])], ["--version", version()])
    case 37:
      let tag = pick(["mix", "mix", "take-2", "v2", "12", "", "-x", "a b", "ü", "t\n2"])
      arguments =
        switch next(4) {
        case 0: ["tag", file, tag]
        case 1: ["tag", file, version(), tag]
        case 2: ["tag", file, "--list"]
        default: ["tag", file, "--delete", tag]
        }
      arguments += maybe(["--json"])
    case 38:
      arguments =
        ["history", "prune", file]
        + pick([
          ["--keep-last", pick(["1", "3", "50", "0", "-2", "x"])],
          ["--before", pick(["2020-01-01", "2999-01-01", "yesterday", ""])], ["--branches"], [],
          ["--keep-last", "2", "--before", "2020-01-01"],
        ])
        + maybe(["--dry-run"], ["--drop-tags"], ["--json"])
    case 39: arguments = ["cache", file] + maybe(["--clean"], ["--json"])
    case 20:
      arguments = [
        pick(["new", "ls", "history", "undo", "render"]),
        pick([file, space.path("folder"), audioPath()]),
      ]
    default:
      arguments = [pick(["frob", "--nope", "clip", "track", "help", "--version", "scrub"])]
    }
    // Now and then, replace one argument with something the parser must refuse.
    if next(12) == 0, arguments.count > 1 {
      arguments[1 + next(arguments.count - 1)] = pick(["--", "-x", "", "--json=1", "c1"])
    }
    var environment: [String: String] = ["NO_COLOR": "1"]
    if next(15) == 0 {
      environment["TAPE_BUSY_TIMEOUT"] = pick(["nan", "inf", "-1", "1e10", "2147484", "", "0.2"])
    }
    return (arguments, environment)
  }

  /// Now and then a point edit of an envelope (--add, --remove, --move) beside the rest.
  mutating func pointEdit() -> [String] {
    switch next(6) {
    case 0: ["--add", pick(["1s:-6dB", "\(time()):\(gain())", "0:0,1s:-inf", "x"])]
    case 1: ["--remove", pick(["1s", time(), "0s,1s", ""])]
    case 2: ["--move", time(), "--to", pick([time(), "+10ms", "-1s"])]
    default: []
    }
  }

  /// Each of `options` with probability one half, flattened.
  mutating func maybe(_ options: [String]...) -> [String] {
    options.flatMap { next(2) == 0 ? $0 : [] }
  }

  func shown(_ arguments: [String]) -> String {
    arguments.map { $0.isEmpty || $0.contains(" ") || $0.contains("\n") ? "'\($0)'" : $0 }
      .joined(separator: " ").replacingOccurrences(of: space.url.path, with: "$WS")
      .replacingOccurrences(of: Self.latin1E9, with: "\\xE9")
  }

  /// What `ls --json` and `history --json` show of the project, read in this process from
  /// the store those commands read (two `tape` processes a run made the fuzzer's 1,500 runs
  /// cost 4,500 processes): the head and its whole project, the history and its tags, and
  /// whether each source's file is there. A project the store cannot open throws, which ends
  /// the run with that error.
  struct ProjectState: Equatable {
    let head: StoreSnapshot
    let history: History
    let tags: [VersionTag]
    let missing: [Bool]
  }

  func list() throws -> ProjectState {
    let store = try TimelineStore.open(at: file, access: .read)
    let folder = RawPath(file).folder
    return ProjectState(
      head: store.snapshot, history: try store.history(), tags: try store.tags(),
      missing: store.snapshot.project.sources.map { source in
        var status = stat()
        return source.path.resolved(against: folder).withCString { stat($0, &status) } != 0
      })
  }

  /// Runs one command line and returns what is wrong, if anything.
  mutating func check(
    _ arguments: [String], environment: [String: String], counts: inout [Int32: Int]
  ) throws -> String? {
    // In its own folder: a relative name it makes up (`tape new c1`) lands there, not in the
    // checkout. A watch that was wrongly accepted would run forever: it is stopped.
    let result =
      arguments.contains { $0.contains(Self.latin1E9) }
      ? try TapeBinary.run(
        URL(fileURLWithPath: "/bin/bash"),
        [
          "-c", "exec \"$0\" " + arguments.map(Self.bashQuoted).joined(separator: " "),
          TapeBinary.url.path,
        ],
        environment: environment, directory: space.url, killAfter: 30)
      : try TapeBinary.run(
        arguments, environment: environment, directory: space.url, killAfter: 30)
    let stderr = result.stderr
    if result.killedBySignal {
      return "killed by signal \(result.status): \(stderr.prefix(300))"
    }
    let status = result.status
    counts[status, default: 0] += 1
    guard Self.documentedCodes.contains(status) else {
      return "exit \(status): \(stderr.prefix(300))"
    }
    if status == 0 {
      // An EDL's timecode rounds edits to frames, and says so.
      let rounded = arguments.first == "export" && stderr.contains("rounded to the nearest")
      if stderr.contains("error:") || (stderr.contains("warning") && !rounded) {
        return "succeeded but said: \(stderr.prefix(300))"
      }
      listing = try list()
      return nil
    }
    let lines = stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    let said = lines.filter { !$0.hasPrefix("tape play: ") }
    guard said.count == 1, said[0].hasPrefix("error: "),
      !said[0].unicodeScalars.contains(where: { $0.properties.generalCategory == .control }),
      !Self.showsASwiftValue(said[0])
    else {
      return "exit \(status) with stderr \(stderr.debugDescription.prefix(400))"
    }
    guard result.stdout.isEmpty || arguments.first == "play" else {
      return "exit \(status) with stdout \(result.stdout.prefix(200))"
    }
    let now = try list()
    guard now == listing else { return "exit \(status) but the project changed: \(said[0])" }
    return nil
  }

  /// Whether a message shows a Swift value as the language prints one (`usageError(message:
  /// "…")`, `Optional("x")`, `StoreError.busy`) instead of words for people.
  static func showsASwiftValue(_ line: Substring) -> Bool {
    line.contains(/\b[A-Za-z]+\((?:[a-z][A-Za-z]*: |")/)
      || line.contains(/\b(?:Store|Timeline|AudioFile|Playback|Effect|Mixing)Error\./)
  }

  /// `argument` for bash as `$'…'`, ``latin1E9`` as the byte 0xE9, every other byte escaped.
  static func bashQuoted(_ argument: String) -> String {
    let parts = argument.components(separatedBy: latin1E9).map { part in
      part.utf8.map { "\\x" + String($0, radix: 16) }.joined()
    }
    return "$'" + parts.joined(separator: "\\xe9") + "'"
  }

  /// The store's own check of the file and its history.
  func verify() throws -> String? {
    let result = try TapeBinary.run(TapeBinary.testing, ["verify", file])
    guard result.status == 0,
      let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        as? [String: Any],
      report["integrity"] as? String == "ok", report["foreignKeyViolations"] as? Int == 0,
      report["undoToFirstVersionWorks"] as? Bool == true
    else { return "tape-testing verify: \(result.stdout) \(result.stderr)" }
    return nil
  }
}

extension String {
  /// This text's characters as Latin-1 bytes, for a file name that is not UTF-8.
  fileprivate var latin1: [CChar] {
    unicodeScalars.map { CChar(bitPattern: UInt8(truncatingIfNeeded: $0.value)) } + [0]
  }
}
