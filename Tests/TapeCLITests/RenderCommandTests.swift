import Foundation
import ReferenceRenders
import Testing

/// Runs an external tool, expecting success; returns its stdout and stderr.
@discardableResult
func tool(_ path: String, _ arguments: [String]) throws -> (stdout: String, stderr: String) {
  let result = try TapeBinary.run(URL(fileURLWithPath: path), arguments)
  #expect(result.status == 0, "\(path) \(arguments): \(result.stderr)")
  return (result.stdout, result.stderr)
}

/// An audio file's raw integer samples as sox reads them, full scale ±2^31.
func decodedIntegers(_ path: String) throws -> [Int32] {
  let raw = path + ".s32"
  defer { try? FileManager.default.removeItem(atPath: raw) }
  try tool("/usr/bin/sox", ["-D", path, "-t", "s32", raw])
  let data = try Data(contentsOf: URL(fileURLWithPath: raw))
  return data.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
}

@Suite("tape render")
struct RenderCommandTests {
  /// A two-track project: speech (mono, panned) and piano (stereo, 44.1 kHz), overlapping, faded.
  static func project(in space: Workspace, loud: Bool = false) throws -> String {
    let file = space.path("song.tape")
    try space.tape("new", file)
    try space.tape(
      "import", file, TestAudio.path("speech-mono-48k-16.wav"),
      TestAudio.path("piano-stereo-44k-24.wav"))
    try space.tape("track", "add", file, "Voice", "--pan", "-0.4", "--gain", loud ? "+12" : "-3")
    try space.tape("track", "add", file, "Piano", "--gain", "-6")
    try space.tape(
      "clip", "add", file, "t1", "s1", "--at", "0.5s", "--from", "1s", "--length", "3s",
      "--fade-in", "100ms", "--fade-out", "1s", "--curve", "equal-power")
    try space.tape(
      "clip", "add", file, "t2", "s2", "--at", "0", "--length", "2.5s", "--fade-out", "250ms")
    return file
  }

  /// The same project renders to the same bytes, a second apart too: no PEAK chunk (which
  /// carries the time of writing) in float WAV or AIFF; FLAC and integer formats as well; Ogg
  /// with its stream serial set from its contents (libsndfile takes it from the clock).
  /// `-o /dev/stdout` with standard output a pipe links to `pipe:[…]`: it was "cannot create
  /// /dev/stdout" (exit 74); it is standard output, as `-o -` is. `-o song.tape-cache`
  /// suggested `song.tape-cache/mix.wav`, which is then refused as inside the cache.
  @Test func devStdoutAndTheCacheFolder() throws {
    let ws = try Workspace()
    let song = try Self.project(in: ws)
    let dash = try ws.tape("render", song, "-o", "-", "--format", "wav")
    for name in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"] {
      let piped = try ws.tape("render", song, "-o", name, "--format", "wav")
      // Compared as a flag: a failure would print both (binary) outputs.
      let same = piped.stdout == dash.stdout
      #expect(same, "\(name): \(piped.status) \(piped.stderr)")
      #expect(piped.stderr.hasPrefix("\(name): WAV 24-bit"), "\(name)")
    }
    for name in [song + "-cache", song + "-cache/"] {
      let cache = try TapeBinary.run(["render", song, "-o", name], environment: ["NO_COLOR": "1"])
      #expect(cache.status == 64)
      #expect(
        cache.stderr
          == "error: -o \(name) is the project's decoded-audio cache; give a file name outside it, such as mix.wav\n"
      )
    }
  }

  /// The progress bar fits the terminal: at 10 columns its 50-character line wrapped, and
  /// each redraw left a copy of it on a new line. In tmux windows 10 and 40 columns wide,
  /// every screen taken while a long render runs holds one line, narrower than the window.
  @Test(arguments: [10, 40])
  func theProgressBarFitsTheTerminal(columns: Int) throws {
    let ws = try Workspace()
    let song = try Self.project(in: ws)
    let tmux = try Tmux(width: columns, height: 12)
    defer { tmux.kill() }
    // The summary goes to a file: the screen holds the bar alone. An hour into /dev/null:
    // long enough to watch with a release build (half an hour of this project took 2.0 s;
    // five minutes into a file, as before, was two screens in CI), and no such file on disk.
    try tmux.start(
      "\(shellQuoted(TapeBinary.url.path)) render \(shellQuoted(song)) -o /dev/null --format wav --to 60:00 --bits 32f > \(shellQuoted(ws.path("summary"))); touch \(shellQuoted(ws.path("done"))); sleep 30"
    )
    var screens = 0
    let deadline = Date().addingTimeInterval(60)
    // Twenty screens of the bar are enough to judge (a debug build's render would go on).
    while Date() < deadline, screens < 20, !FileManager.default.fileExists(atPath: ws.path("done"))
    {
      let screen = try tmux.capture()
      let lines = screen.split(separator: "\n")
      #expect(lines.count <= 1, "\(columns) columns:\n\(screen)")
      #expect(lines.allSatisfy { $0.count < columns }, "\(columns) columns:\n\(screen)")
      if screen.contains("%") { screens += 1 }
      Thread.sleep(forTimeInterval: 0.1)
    }
    #expect(screens >= 3, "the bar was seen on \(screens) screens")
  }

  /// The guard on the project's `-wal`, `-shm` and `-journal` compared names built from the
  /// path given: through a symlinked project path (SQLite names the side files from the file
  /// it resolves) or a bind mount of its folder, a render wrote the project's journal or log,
  /// and the next edit deleted it (or the project became unreadable). Compared by the
  /// resolved name and by the folder's identity now.
  @Test func theProjectsSideFilesCannotBeReachedByAnotherName() throws {
    let ws = try Workspace()
    try FileManager.default.createDirectory(
      atPath: ws.path("real"), withIntermediateDirectories: true)
    let song = ws.path("real/song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "A")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0")
    let link = ws.path("link.tape")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: song)
    var cases = [(link, "real/song.tape-journal"), (link, "real/song.tape-wal")]
    let bind = ws.path("bind")
    var mounted = false
    if isRoot {
      try FileManager.default.createDirectory(atPath: bind, withIntermediateDirectories: true)
      mounted =
        try TapeBinary.run(URL(fileURLWithPath: "/bin/mount"), ["--bind", ws.path("real"), bind])
        .status == 0
    }
    defer {
      if mounted { _ = try? TapeBinary.run(URL(fileURLWithPath: "/bin/umount"), [bind]) }
    }
    if mounted {
      cases += [
        (song, "bind/song.tape-wal"), (link, "bind/song.tape-shm"),
        (song, "bind/song.tape-journal"),
      ]
    }
    let before = try ws.fingerprint("real/song.tape")
    for (project, output) in cases {
      let result = try TapeBinary.run(
        ["render", project, "-o", ws.path(output), "--format", "wav"],
        environment: ["NO_COLOR": "1"])
      #expect(result.status == 64, "\(output)")
      #expect(
        result.stderr.hasPrefix("error: -o \(ws.path(output)) is the project's "),
        "\(result.stderr)")
      #expect(
        result.stderr.hasSuffix(
          "; rendering there would destroy it, so choose another output name\n"))
      #expect(listing(ws.path("real")).filter { !$0.hasPrefix("song.tape-cache") } == ["song.tape"])
    }
    #expect(try ws.fingerprint("real/song.tape") == before)
    try ws.tape("track", "add", song, "B")
    #expect(try ws.tape("ls", link).stdout.contains("t2 B"))
  }

  /// A float source of ±3e38 at +48 dB mixes to ±infinity (and their sum to NaN): the file
  /// got them, and the summary said `"peakDBFS": null` (silence). They are written as silence,
  /// counted as clipped, and the summary says how many and where the first is.
  @Test(arguments: ["32f", "24"])
  func nonFiniteSamplesNeverReachTheFile(bits: String) throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    let huge = ws.path("huge.wav")
    // 1 s at 0.25, then 0.5 s alternating ±3e38.
    let samples =
      [Float](repeating: 0.25, count: 48_000) + (0..<24_000).map { $0 % 2 == 0 ? 3e38 : -3e38 }
    try wavFile(format: 3, channels: 1, bits: 32, data: samples.withUnsafeBytes { Data($0) })
      .write(to: URL(fileURLWithPath: huge))
    try ws.tape("new", song, "--channels", "1")
    try ws.tape("import", song, huge)
    try ws.tape("track", "add", song, "Loud")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0.5s", "--gain", "+48")
    let mix = ws.path("mix.wav")
    let summary = try #require(
      try parseJSON(ws.tape("render", song, "-o", mix, "--bits", bits, "--json").stdout)
        as? [String: Any])
    #expect(summary["nonFiniteSamples"] as? Int == 24_000)
    #expect(summary["clippedSamples"] as? Int == 24_000 + (bits == "24" ? 48_000 : 0))
    #expect(summary["firstNonFiniteSeconds"] as? Double == 1.5)
    let peak = try #require(summary["peakDBFS"] as? Double)
    #expect(abs(peak - 20 * log10(0.25 * pow(10, 48 / 20))) < 0.01)
    let text = try ws.tape("render", song, "-o", mix, "--bits", bits).stdout
    #expect(
      text.contains(
        "clipped    \(bits == "24" ? 72_000 : 24_000) samples (24000 not finite, the first at 0:01.500, written as silence: lower a gain)\n"
      ))
    let bytes = try Data(contentsOf: URL(fileURLWithPath: mix))
    let data = try #require(bytes.range(of: Data("data".utf8)))
    let body = bytes[(data.upperBound + 4)...]
    if bits == "32f" {
      let floats = body.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
      #expect(floats.count == 96_000)
      #expect(floats.allSatisfy { $0.isFinite })
      #expect(floats[72_000...].allSatisfy { $0 == 0 })
    } else {
      #expect(try decodedIntegers(mix)[72_000...].allSatisfy { $0 == 0 })
    }
  }

  @Test func rendersAreByteReproducible() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    for (name, bits) in [
      ("a.wav", "32f"), ("a.aiff", "32f"), ("a.wav", "24"), ("a.flac", "16"), ("a.ogg", "32f"),
    ] {
      let first = space.path("1-" + name)
      let second = space.path("2-" + name)
      try space.tape("render", file, "-o", first, "--bits", bits)
      Thread.sleep(forTimeInterval: 1.1)
      try space.tape("render", file, "-o", second, "--bits", bits)
      let bytes = try Data(contentsOf: URL(fileURLWithPath: first))
      #expect(bytes == (try Data(contentsOf: URL(fileURLWithPath: second))), "\(name) \(bits)")
      #expect(bytes.range(of: Data("PEAK".utf8)) == nil, "\(name) \(bits) has a PEAK chunk")
    }
    // The rewritten Ogg pages (one serial, fresh checksums) decode whole through libogg, which
    // drops any page whose checksum is wrong.
    try tool("/usr/bin/sox", [space.path("1-a.ogg"), "-t", "f32", space.path("ogg.f32")])
    let decoded = try FileManager.default.attributesOfItem(atPath: space.path("ogg.f32"))[.size]
    #expect(decoded as? Int == 168_000 * 2 * 4)
  }

  /// The summary reports what the file holds: its length, its peak, and the loudness ffmpeg's
  /// ebur128 filter measures in it.
  @Test func summaryDescribesTheFile() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let out = space.path("mix.wav")
    let result = try space.tape("render", file, "-o", out, "--bits", "32f", "--json")
    let summary = try #require(try parseJSON(result.stdout) as? [String: Any])
    let samples = try ReferenceRender.decode(out)
    #expect(summary["frames"] as? Int == 48_000 * 7 / 2)
    #expect(samples.count == 2 * 48_000 * 7 / 2)
    #expect(summary["channels"] as? Int == 2)
    #expect(summary["format"] as? String == "wav")
    #expect(summary["bits"] as? String == "32f")
    #expect(summary["clippedSamples"] as? Int == 0)
    let peak = Double(samples.map(abs).max() ?? 0)
    #expect(abs((summary["peakDBFS"] as? Double ?? 0) - 20 * log10(peak)) < 0.01)
    let reference = try ReferenceRender.integratedLoudness(out)
    let loudness = try #require(summary["loudnessLUFS"] as? Double)
    #expect(abs(loudness - reference) < 0.1, "\(loudness) LUFS vs ffmpeg \(reference)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: space.url.path)
        .allSatisfy { !$0.contains("partial") })
  }

  /// Integer output is the float render rounded (ties upward) and clamped: equal to that formula
  /// applied to the float render, never wrapped, and the clipped samples counted. sox's own
  /// conversion of the float render agrees except, by one step, at near-ties (sox rounds twice,
  /// through 32 bits).
  @Test(arguments: ["16", "24"])
  func integerOutputIsRoundedAndClamped(bits: String) throws {
    let space = try Workspace()
    let file = try Self.project(in: space, loud: true)
    let float = space.path("float.wav")
    try space.tape("render", file, "-o", float, "--bits", "32f")
    let ours = space.path("ours.wav")
    let result = try space.tape(
      "render", file, "-o", ours, "--bits", bits, "--dither", "none", "--json")
    let scale = bits == "16" ? 32_768.0 : 8_388_608.0
    let shift = bits == "16" ? 16 : 8
    let floats = try ReferenceRender.decode(float)
    let expected = floats.map {
      Int(min(scale - 1, max(-scale, (Double($0) * scale + 0.5).rounded(.down))))
    }
    let written = try decodedIntegers(ours).map { Int($0 >> Int32(shift)) }
    #expect(written == expected)
    let over = floats.filter {
      let q = (Double($0) * scale + 0.5).rounded(.down)
      return q > scale - 1 || q < -scale
    }.count
    #expect(over > 100)
    let summary = try #require(try parseJSON(result.stdout) as? [String: Any])
    #expect(summary["clippedSamples"] as? Int == over)

    let reference = space.path("sox.wav")
    try tool("/usr/bin/sox", ["-D", float, "-b", bits, reference])
    let sox = try decodedIntegers(reference).map { Int($0 >> Int32(shift)) }
    for (index, (a, b)) in zip(written, sox).enumerated() where a != b {
      let fraction = (Double(floats[index]) * scale).magnitude.truncatingRemainder(dividingBy: 1)
      #expect(abs(a - b) == 1 && abs(fraction - 0.5) < 0.01, "sample \(index): \(a) vs sox \(b)")
    }
  }

  /// 16-bit output is TPDF-dithered by default: within one LSB of the undithered rounding,
  /// different from it, and the same bytes on every render.
  @Test func sixteenBitIsDitheredReproducibly() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    try space.tape("render", file, "-o", space.path("a.wav"), "--bits", "16")
    try space.tape("render", file, "-o", space.path("b.wav"), "--bits", "16")
    try space.tape(
      "render", file, "-o", space.path("plain.wav"), "--bits", "16", "--dither", "none")
    let a = try decodedIntegers(space.path("a.wav")).map { Int($0 >> 16) }
    let plain = try decodedIntegers(space.path("plain.wav")).map { Int($0 >> 16) }
    #expect(
      try Data(contentsOf: space.url.appendingPathComponent("a.wav"))
        == (try Data(contentsOf: space.url.appendingPathComponent("b.wav"))))
    #expect(a != plain)
    #expect(zip(a, plain).allSatisfy { abs($0 - $1) <= 1 })
  }

  /// --from/--to render exactly that stretch of the timeline; every container reads back.
  @Test func rangesAndFormats() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let whole = try ReferenceRender.decode(
      space.path("whole.wav").also {
        try space.tape("render", file, "-o", $0, "--bits", "32f")
      })
    let part = try ReferenceRender.decode(
      space.path("part.wav").also {
        try space.tape("render", file, "-o", $0, "--bits", "32f", "--from", "1s", "--to", "2.5s")
      })
    #expect(part == Array(whole[(2 * 48_000)..<(2 * 120_000)]))
    let beyond = try ReferenceRender.decode(
      space.path("beyond.wav").also {
        try space.tape("render", file, "-o", $0, "--bits", "32f", "--to", "5s")
      })
    #expect(beyond.count == 2 * 240_000)
    #expect(beyond[whole.count...].allSatisfy { $0 == 0 })
    for name in ["mix.flac", "mix.aiff", "mix.ogg"] {
      try space.tape("render", file, "-o", space.path(name))
      #expect(try ReferenceRender.decode(space.path(name)).count == whole.count, "\(name)")
    }
    try space.tape("render", file, "-o", space.path("mix.out"), "--format", "flac")
    let info = try tool("/usr/bin/soxi", ["-t", space.path("mix.out")]).stdout
    #expect(info.contains("flac"))
  }

  /// --version renders a past version and leaves the head where it was.
  @Test func rendersAPastVersion() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    try space.tape("clip", "rm", file, "c2")
    let head = try space.tape("ls", file, "--json").stdout
    let past = try ReferenceRender.decode(
      space.path("past.wav").also {
        try space.tape("render", file, "-o", $0, "--bits", "32f", "--version", "6")
      })
    let now = try ReferenceRender.decode(
      space.path("now.wav").also {
        try space.tape("render", file, "-o", $0, "--bits", "32f")
      })
    #expect(past.count == 2 * 168_000)
    #expect(now.count == 2 * 168_000)
    #expect(past != now)
    #expect(try space.tape("ls", file, "--json").stdout == head)
  }

  /// Every refusal names the fix, exits with its code, writes no file and leaves the project
  /// byte-for-byte unchanged.
  @Test(arguments: [
    (
      ["-o", "missing-folder/mix.wav"], Int32(74),
      "missing-folder does not exist; create it with mkdir -p"
    ),
    (["-o", "mix.mp9"], 64, "name it .wav, .flac, .aiff, .ogg, .mp3 or .opus"),
    (["-o", "mix.flac", "--bits", "32f"], 64, "use --bits 16 or 24"),
    (["-o", "mix.ogg", "--bits", "16"], 64, "has no sample format to choose, so leave out --bits"),
    (["-o", "mix.wav", "--bits", "12"], 64, "use --bits 16, 24 or 32f"),
    (["-o", "mix.wav", "--bits", "32f", "--dither", "tpdf"], 64, "drop --dither"),
    (["-o", "mix.wav", "--from", "3s", "--to", "2s"], 64, "give --to after --from"),
    (["-o", "mix.wav", "--from", "9s"], 64, "is past the end of the project (0:03.500)"),
    (["-o", "mix.wav", "--to", "48000", "--frames"], 64, "write 48000f for frames"),
    (["-o", "mix.wav", "--from", "0.5", "--frames"], 64, "write 0.5s to say so"),
    (["-o", "mix.wav", "--version", "99"], 65, "99"),
    (["-o", "song.tape"], 64, "is the project file itself"),
    (["-o", "."], 64, "is a folder"),
    (["-o", "long.wav", "--to", "7:00:00", "--bits", "32f"], 64, "render to .flac"),
  ])
  func refusals(arguments: [String], status: Int32, fix: String) throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let before = try space.fingerprint("song.tape")
    let listing = try FileManager.default.contentsOfDirectory(atPath: space.url.path).sorted()
    var resolved = arguments
    resolved[1] = space.path(arguments[1])
    let result = try TapeBinary.run(["render", file] + resolved)
    #expect(result.status == status, "\(result.stderr)")
    #expect(result.stderr.hasPrefix("error: ") && result.stderr.contains(fix), "\(result.stderr)")
    #expect(result.stdout.isEmpty)
    #expect(try space.fingerprint("song.tape") == before)
    #expect(try FileManager.default.contentsOfDirectory(atPath: space.url.path).sorted() == listing)
  }

  /// An empty project has nothing to render unless --to asks for silence.
  @Test func anEmptyProjectNeedsTo() throws {
    let space = try Workspace()
    let file = space.path("empty.tape")
    try space.tape("new", file)
    let result = try space.tape("render", file, "-o", space.path("x.wav"), status: 65)
    #expect(result.stderr.contains("the project has no clips; add one with 'tape clip add'"))
    try space.tape("render", file, "-o", space.path("x.wav"), "--to", "1s")
    #expect(try ReferenceRender.decode(space.path("x.wav")) == [Float](repeating: 0, count: 96_000))
  }

  /// Ctrl-C stops a long render: one line, the process dies of SIGINT (what a shell reports as
  /// 130), and neither the output nor a temporary file remains.
  @Test func anInterruptedRenderLeavesNothing() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let process = Process()
    process.executableURL = TapeBinary.url
    process.arguments = ["render", file, "-o", space.path("long.flac"), "--to", "3:00:00"]
    process.standardOutput = FileHandle.nullDevice
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    Thread.sleep(forTimeInterval: 0.5)
    #expect(process.isRunning, "the render should still be running; make it longer")
    // Ask again while it runs (a signal that arrived before the handler was installed would be
    // lost if the test runner ignores SIGINT); never leave a runaway render behind.
    for _ in 0..<40 where process.isRunning {
      process.interrupt()
      Thread.sleep(forTimeInterval: 0.25)
    }
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      Issue.record("the render did not stop on SIGINT")
    }
    let message = String(
      decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationReason == .uncaughtSignal)
    #expect(process.terminationStatus == SIGINT)
    #expect(message == "error: render interrupted; \(space.path("long.flac")) was not written\n")
    let left = try FileManager.default.contentsOfDirectory(atPath: space.url.path)
    #expect(!left.contains { $0.contains("long.flac") }, "\(left)")
  }
}

extension String {
  /// Runs `body` with the string and returns the string: `path.also { write($0) }`.
  func also(_ body: (String) throws -> Void) rethrows -> String {
    try body(self)
    return self
  }
}
