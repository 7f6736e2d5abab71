import Foundation
import ReferenceRenders
import Testing

/// `tape cut`, `insert`, the clip and track copies, `-m`, and `tape batch`, through the real
/// binary, with renders checked against sox.
@Suite("Range edits and batches")
struct RangeAndBatchTests {
  /// Three tracks: on t1 a clip spanning the range and an overlapping one after it; on t2 a
  /// spanning clip with fades outside the range; on t3 a clip inside the range and one after.
  static func project(_ ws: Workspace) throws -> String {
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape(
      "import", song, TestAudio.path("speech-mono-48k-16.wav"),
      TestAudio.path("piano-stereo-44k-24.wav"))
    for name in ["Voice", "Piano", "Bed"] { try ws.tape("track", "add", song, name) }
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "3s", "--gain", "-6")
    try ws.tape(
      "clip", "add", song, "t1", "s1", "--at", "2.5s", "--from", "3s", "--length", "1.5s",
      "--gain", "-6")
    try ws.tape(
      "clip", "add", song, "t2", "s2", "--at", "0.5s", "--length", "3s", "--gain", "-6",
      "--fade-in", "0.2s", "--fade-out", "0.3s", "--curve", "s-curve")
    try ws.tape("clip", "add", song, "t3", "s2", "--at", "1.2s", "--length", "0.6s", "--gain", "-9")
    try ws.tape(
      "clip", "add", song, "t3", "s2", "--at", "2.2s", "--from", "1s", "--length", "1s", "--gain",
      "-9")
    return song
  }

  static func json(_ ws: Workspace, _ arguments: String...) throws -> [String: Any] {
    try #require(try parseJSON(ws.tape(arguments).stdout) as? [String: Any])
  }

  /// The clips of `ls --json` as (id, timelineStart, sourceStart, length) per track.
  static func layout(_ listing: [String: Any]) -> [[String]] {
    (listing["tracks"] as? [[String: Any]] ?? []).map { track in
      (track["clips"] as? [[String: Any]] ?? []).map { clip in
        "\(clip["id"] ?? "") \(clip["timelineStart"] ?? "") \(clip["sourceStart"] ?? "") \(clip["length"] ?? "")"
      }
    }
  }

  static func sox(_ arguments: [String]) throws {
    let result = try TapeBinary.run(URL(fileURLWithPath: "/usr/bin/sox"), arguments)
    guard result.status == 0 else {
      throw ReferenceError(message: "sox \(arguments): \(result.stderr)")
    }
  }

  /// The largest difference between two files' samples, in dBFS (both decoded by ffmpeg).
  static func difference(_ a: String, _ b: String) throws -> Double {
    let (x, y) = (try ReferenceRender.decode(a), try ReferenceRender.decode(b))
    guard x.count == y.count else { return .infinity }
    let peak = zip(x, y).map { abs(Double($0) - Double($1)) }.max() ?? 0
    return peak == 0 ? -.infinity : 20 * log10(peak)
  }

  /// A ripple cut equals the old render with exactly the range's samples removed (sox
  /// `trim` of each side, joined without a crossfade); a plain cut, with silence there; the
  /// layout is as expected; one undo restores everything.
  @Test(arguments: [true, false])
  func aRangeCutRemovesExactlyItsSamples(ripple: Bool) throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    let before = try Self.json(ws, "ls", song, "--json")
    let original = ws.path("original.wav")
    try ws.tape("render", song, "-o", original, "--bits", "32f")

    let cut = try ws.tape(
      ["cut", song, "--from", "1s", "--to", "2s", "--json"] + (ripple ? ["--ripple"] : []))
    let output = try #require(try parseJSON(cut.stdout) as? [String: Any])
    // The spanning clips of t1 and t2 were split: their right parts are c6 and c7.
    #expect(output["ids"] as? [String] == ["c6", "c7"])
    let shift = ripple ? 48_000 : 0
    #expect(
      Self.layout(try Self.json(ws, "ls", song, "--json")) == [
        ["c1 0 0 48000", "c6 \(96_000 - shift) 96000 48000", "c2 \(120_000 - shift) 144000 72000"],
        ["c3 24000 0 24000", "c7 \(96_000 - shift) 72000 72000"],
        ["c5 \(105_600 - shift) 48000 48000"],
      ])

    let edited = ws.path("edited.wav")
    try ws.tape("render", song, "-o", edited, "--bits", "32f")
    let (head, middle, tail, expected) = (
      ws.path("head.wav"), ws.path("middle.wav"), ws.path("tail.wav"), ws.path("expected.wav")
    )
    let float = ["-e", "floating-point", "-b", "32"]
    try Self.sox([original] + float + [head, "trim", "0", "48000s"])
    try Self.sox([original] + float + [tail, "trim", "96000s"])
    if ripple {
      try Self.sox([head, tail] + float + [expected])
    } else {
      try Self.sox(["-n", "-r", "48000", "-c", "2"] + float + [middle, "trim", "0", "48000s"])
      try Self.sox([head, middle, tail] + float + [expected])
    }
    #expect(try Self.difference(edited, expected) < -120)

    // One undo brings back every clip as it was.
    try ws.tape("undo", song)
    var after = try Self.json(ws, "ls", song, "--json")
    var old = before
    after["version"] = nil
    old["version"] = nil
    #expect(Self.layout(after) == Self.layout(old))
    #expect(NSDictionary(dictionary: after).isEqual(to: old))
  }

  /// `--crossfade` fades both new edges; a fade the range cuts through keeps what remains of
  /// its curve (shown by `ls --json`); a crossfade that does not fit is refused with the fix,
  /// and an empty range with its own.
  @Test func cutFadesAndRefusals() throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    // A range that cuts off the end of c3's fade-out (3.2–3.5 s): what remains (3.2–3.3 s)
    // keeps its gains, the last 0.2 s of the curve cut away at its silent end.
    try ws.tape("cut", song, "--from", "3.3s", "--to", "3.6s", "--tracks", "t2")
    let piano = try Self.json(ws, "ls", song, "--json")
    let clips = try #require(
      ((piano["tracks"] as? [[String: Any]])?[1])?["clips"] as? [[String: Any]])
    #expect(clips.count == 1)
    #expect((clips[0]["fadeOut"] as? [String: Any])?["length"] as? Int == 4_800)
    #expect((clips[0]["fadeOut"] as? [String: Any])?["silentCut"] as? Int == 9_600)
    #expect((clips[0]["fadeOut"] as? [String: Any])?["fullCut"] as? Int == 0)
    #expect((clips[0]["fadeIn"] as? [String: Any])?["length"] as? Int == 9_600)

    try ws.tape("cut", song, "--from", "1s", "--to", "1.1s", "--tracks", "t1", "--crossfade", "5ms")
    let voice = try Self.json(ws, "ls", song, "--json")
    let parts = try #require(
      ((voice["tracks"] as? [[String: Any]])?[0])?["clips"] as? [[String: Any]])
    #expect((parts[0]["fadeOut"] as? [String: Any])?["length"] as? Int == 240)
    #expect((parts[1]["fadeIn"] as? [String: Any])?["length"] as? Int == 240)

    let fingerprint = try ws.fingerprint("song.tape")
    let big = try TapeBinary.run(
      ["cut", song, "--from", "0.75s", "--to", "0.8s", "--tracks", "t2", "--crossfade", "0.1s"],
      environment: ["NO_COLOR": "1"])
    #expect(big.status == 65)
    #expect(
      big.stderr
        == "error: a 0.1s fade does not fit at the new end of clip c3 (0.05s is left beside its fade-in); use --crossfade 0.05s or less\n"
    )
    let inverted = try TapeBinary.run(
      ["cut", song, "--from", "2s", "--to", "1s"], environment: ["NO_COLOR": "1"])
    #expect(inverted.status == 64)
    #expect(inverted.stderr == "error: --to 1s must come after --from 2s\n")
    let both = try TapeBinary.run(
      ["cut", song, "--from", "1s", "--to", "2s", "--all", "--tracks", "t1"],
      environment: ["NO_COLOR": "1"])
    #expect(both.status == 64)
    #expect(both.stderr == "error: give --tracks or --all, not both; see: tape cut --help\n")
    #expect(try ws.fingerprint("song.tape") == fingerprint)
  }

  /// insert, clip rm --ripple, clip copy, track move and duplicate, and -m on each.
  @Test func insertCopyReorderAndMessages() throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    let original = ws.path("original.wav")
    try ws.tape("render", song, "-o", original, "--bits", "32f")
    // A gap of 0.5 s at 1 s on every track: the old render with 0.5 s of silence there.
    try ws.tape("insert", song, "--at", "1s", "--length", "0.5s", "-m", "Room to breathe")
    let edited = ws.path("edited.wav")
    try ws.tape("render", song, "-o", edited, "--bits", "32f")
    let float = ["-e", "floating-point", "-b", "32"]
    try Self.sox([original] + float + [ws.path("head.wav"), "trim", "0", "48000s"])
    try Self.sox([original] + float + [ws.path("tail.wav"), "trim", "48000s"])
    try Self.sox(
      ["-n", "-r", "48000", "-c", "2"] + float + [ws.path("gap.wav"), "trim", "0", "24000s"])
    try Self.sox(
      [ws.path("head.wav"), ws.path("gap.wav"), ws.path("tail.wav")] + float + [
        ws.path("expected.wav")
      ])
    #expect(try Self.difference(edited, ws.path("expected.wav")) < -120)
    try ws.tape("undo", song)

    try ws.tape("clip", "remove", song, "c4", "--ripple")
    #expect(
      Self.layout(try Self.json(ws, "ls", song, "--json"))[2] == ["c5 76800 48000 48000"])
    // Ids are never reused: the undone insert took c6 and c7.
    #expect(
      try ws.tape("clip", "copy", song, "c1", "--to", "10s", "--track", "t3").stdout == "c8\n")
    try ws.tape("track", "move", song, "t3", "--to", "1", "--message", "Bed on top")
    let duplicated = try ws.tape("track", "duplicate", song, "t1", "--name", "Voice 2")
    #expect(duplicated.stdout == "t4\nc9\nc10\n")
    let listing = try Self.json(ws, "ls", song, "--json")
    let tracks = try #require(listing["tracks"] as? [[String: Any]])
    #expect(tracks.map { $0["id"] as? String } == ["t3", "t1", "t4", "t2"])
    #expect(tracks[2]["name"] as? String == "Voice 2")
    let history = try Self.json(ws, "history", song, "--json")
    let labels = (history["versions"] as? [[String: Any]] ?? []).compactMap {
      $0["label"] as? String
    }
    #expect(labels.contains("Room to breathe"))
    #expect(labels.contains("Bed on top"))
    #expect(labels.last == "Duplicate track t1")
    let bad = try TapeBinary.run(
      ["track", "move", song, "t1", "--to", "9"], environment: ["NO_COLOR": "1"])
    #expect(bad.status == 64)
    #expect(bad.stderr == "error: --to 9 is not a place in the order; use 1 (the top) to 4\n")
    let emptyMessage = try TapeBinary.run(
      ["clip", "rm", song, "c1", "-m", " "], environment: ["NO_COLOR": "1"])
    #expect(emptyMessage.status == 64)
  }

  /// A 200-line script is one version and one undo step, with ids named across lines; an
  /// error on line 150 applies nothing; a batch reads standard input.
  @Test func aBatchIsOneVersionAndAllOrNothing() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    var lines = ["# 200 edits", "track add Lead --as lead", "track add Echo --gain -6 --as echo"]
    for index in 0..<98 {
      lines.append("clip add @lead s1 --at \(index)s --length 0.5s --as c\(index)")
      lines.append("clip copy @c\(index) --to \(index).5s --track @echo  # the echo")
    }
    lines.append("track set @echo --pan 0.3")
    lines.append("cut --from 10s --to 12s --ripple")
    let script = ws.path("edits.txt")
    try lines.joined(separator: "\n").write(toFile: script, atomically: true, encoding: .utf8)
    let head = try ws.head(of: song)
    let result = try ws.tape("batch", song, script, "--json")
    let output = try #require(try parseJSON(result.stdout) as? [String: Any])
    #expect(output["version"] as? Int == head + 1)
    #expect((output["ids"] as? [String])?.prefix(4) == ["t1", "t2", "c1", "c2"])
    let listing = try Self.json(ws, "ls", song, "--json")
    let tracks = try #require(listing["tracks"] as? [[String: Any]])
    #expect((tracks[0]["clips"] as? [Any])?.count == 96)
    #expect((tracks[1]["clips"] as? [Any])?.count == 96)
    let history = try Self.json(ws, "history", song, "--json")
    #expect(
      (history["versions"] as? [[String: Any]])?.last?["label"] as? String
        == "Batch edits.txt (200 edits)")
    #expect(lines.count == 201)
    try ws.tape("undo", song)
    #expect((try Self.json(ws, "ls", song, "--json")["tracks"] as? [Any])?.isEmpty == true)
    try ws.tape("redo", song)

    // Line 150 names a clip that does not exist: nothing is applied.
    var broken = lines
    broken[149] = "clip move c999 --to 1s --as c73"
    try broken.joined(separator: "\n").write(toFile: script, atomically: true, encoding: .utf8)
    let (ls, history2) = (
      try ws.tape("ls", song, "--json").stdout, try ws.tape("history", song, "--json").stdout
    )
    let failed = try TapeBinary.run(["batch", song, script], environment: ["NO_COLOR": "1"])
    #expect(failed.status == 65)
    #expect(
      failed.stderr == "error: line 150: no clip c999 in this project; 'tape ls' lists the clips\n")
    #expect(failed.stdout.isEmpty)
    #expect(try ws.tape("ls", song, "--json").stdout == ls)
    #expect(try ws.tape("history", song, "--json").stdout == history2)
    let verify = try TapeBinary.run(TapeBinary.testing, ["verify", song])
    #expect(verify.status == 0, "\(verify.stdout)")

    // From standard input, with a label.
    let piped = try TapeBinary.run(
      URL(fileURLWithPath: "/bin/sh"),
      [
        "-c",
        "printf 'track add Pad --as pad\\nclip add @pad s1 --at 0\\n' | \"$0\" batch \"$1\" -m Pad",
        TapeBinary.url.path, song,
      ])
    #expect(piped.status == 0, "\(piped.stderr)")
    #expect(piped.stdout == "t3\nc197\n")
    let labels = try Self.json(ws, "history", song, "--json")
    #expect((labels["versions"] as? [[String: Any]])?.last?["label"] as? String == "Pad")

    // Commands that are not edits are refused by line.
    let render = try TapeBinary.run(
      URL(fileURLWithPath: "/bin/sh"),
      [
        "-c", "printf 'track add X\\n\\nrender -o x.wav\\n' | \"$0\" batch \"$1\"",
        TapeBinary.url.path, song,
      ],
      environment: ["NO_COLOR": "1"])
    #expect(render.status == 64)
    #expect(
      render.stderr
        == "error: line 3: 'render' is not an editing command; a batch takes clip, track, fx, import, relink, cut, insert, split, paste, master, marker, send\n"
    )
  }
}

/// `tape track envelope` and `tape master` through the binary: the render equals a float64
/// model of the definition computed from the decoded source; `ls`, `ls --json`, `diff` and
/// undo show and restore them.
@Suite("Volume automation from the command line")
struct EnvelopeCommandTests {
  /// A mono project with 3 s of speech as clip c1 on track t1 at `gain`.
  static func voice(
    in ws: Workspace, gain: String = "0"
  ) throws -> (song: String, speech: String) {
    let song = ws.path("song.tape")
    try ws.tape("new", song, "--channels", "1")
    let speech = TestAudio.path("speech-mono-48k-16.wav")
    try ws.tape("import", song, speech)
    try ws.tape("track", "add", song, "Voice")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "3s", "--gain", gain)
    return (song, speech)
  }

  @Test func envelopeAndMasterGainRenderAsModelled() throws {
    let ws = try Workspace()
    let (song, speech) = try Self.voice(in: ws, gain: "-3")
    try ws.tape("track", "envelope", song, "t1", "--set", "0.5s:0dB,1.5s:-12dB,2s:-inf,2.5s:-6dB")
    try ws.tape("master", song, "--gain", "-2dB", "-m", "Quieter")
    let out = ws.path("out.wav")
    try ws.tape("render", song, "-o", out, "--bits", "32f")

    let source = try ReferenceRender.decode(speech)
    let points: [(Int64, Double)] = [
      (24_000, 0), (72_000, -12), (96_000, -.infinity), (120_000, -6),
    ]
    let gain = pow(10, -3.0 / 20) * pow(10, -2.0 / 20)
    let rendered = try ReferenceRender.decode(out)
    #expect(rendered.count == 144_000)
    let worst =
      rendered.indices.map { t in
        abs(
          Double(rendered[t]) - Double(source[t]) * gain
            * EnvelopeModel.gain(points.map { ($0.0, $0.1) }, at: Int64(t)))
      }.max() ?? 1
    #expect(20 * log10(worst) < -120, "\(20 * log10(worst)) dBFS")

    let listing = try #require(
      try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    #expect(listing["masterGainDB"] as? Double == -2)
    let track = try #require((listing["tracks"] as? [[String: Any]])?.first)
    let shown = try #require(track["envelope"] as? [[String: Any]])
    #expect(shown.map { $0["frame"] as? Int } == [24_000, 72_000, 96_000, 120_000])
    #expect(shown[2]["gainDB"] is NSNull)
    let text = try ws.tape("ls", song).stdout
    #expect(text.contains("· master -2 dB\n"))
    #expect(
      text.contains(
        "  envelope 0:00.500 0 dB → 0:01.500 -12 dB → 0:02.000 -inf dB → 0:02.500 -6 dB\n"))
    let diff = try ws.tape("diff", song, "4", "6").stdout
    #expect(
      diff
        == "master gain 0 dB → -2 dB\nt1 envelope 0:00.500 0 dB → 0:01.500 -12 dB → 0:02.000 -inf dB → 0:02.500 -6 dB\n"
    )
    try ws.tape("undo", song, "--steps", "2")
    let undone = try ws.tape("ls", song).stdout
    #expect(!undone.contains("envelope") && !undone.contains("master"))
    let refused = try TapeBinary.run(
      ["track", "envelope", song, "t1", "--set", "2s:0,1s:-3"], environment: ["NO_COLOR": "1"])
    #expect(refused.status == 65)
    #expect(
      refused.stderr
        == "error: the envelope points of track t1 must be in time order, each later than the one before; 1s is not\n"
    )
  }
}

extension EnvelopeCommandTests {
  /// `--shape`: a hold, a linear and a dB segment render as the model of each shape; `ls` and
  /// `ls --json` name them; a wrong count or name is a usage error that changes nothing.
  @Test func shapedSegmentsRenderAsModelled() throws {
    let ws = try Workspace()
    let (song, speech) = try Self.voice(in: ws)
    try ws.tape(
      "track", "envelope", song, "t1", "--set", "0.5s:-6dB,1s:0dB,2s:-inf,2.5s:-3dB",
      "--shape", "hold,linear,db")
    let out = ws.path("out.wav")
    try ws.tape("render", song, "-o", out, "--bits", "32f")

    let source = try ReferenceRender.decode(speech)
    let points: [(Int64, Double, String)] = [
      (24_000, -6, "hold"), (48_000, 0, "linear"), (96_000, -.infinity, "db"),
      (120_000, -3, "db"),
    ]
    let rendered = try ReferenceRender.decode(out)
    #expect(rendered.count == 144_000)
    let worst =
      rendered.indices.map { t in
        abs(
          Double(rendered[t]) - Double(source[t])
            * EnvelopeModel.gain(shaped: points.map { ($0.0, $0.1, $0.2) }, at: Int64(t)))
      }.max() ?? 1
    #expect(20 * log10(worst) < -120, "\(20 * log10(worst)) dBFS")

    let text = try ws.tape("ls", song).stdout
    #expect(
      text.contains(
        "  envelope 0:00.500 -6 dB hold → 0:01.000 0 dB linear → 0:02.000 -inf dB → 0:02.500 -3 dB\n"
      ))
    let listing = try #require(
      try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    let track = try #require((listing["tracks"] as? [[String: Any]])?.first)
    let shown = try #require(track["envelope"] as? [[String: Any]])
    #expect(shown.map { $0["shape"] as? String } == ["hold", "linear", "db", "db"])

    let before = try ws.tape("ls", song, "--json").stdout
    for (shapes, message) in [
      (
        "db,db",
        "error: 2 shapes for 3 segments; give one shape for all, or one per segment (a segment runs from one point to the next)\n"
      ),
      ("curvy", "error: 'curvy' is not an envelope shape; use db, linear, hold\n"),
    ] {
      let refused = try TapeBinary.run(
        ["track", "envelope", song, "t1", "--set", "0s:0,1s:-3,2s:0,3s:-1", "--shape", shapes],
        environment: ["NO_COLOR": "1"])
      #expect(refused.status == 64)
      #expect(refused.stderr == message)
    }
    let alone = try TapeBinary.run(
      ["track", "envelope", song, "t1", "--clear", "--shape", "hold"],
      environment: ["NO_COLOR": "1"])
    #expect(alone.status == 64)
    #expect(try ws.tape("ls", song, "--json").stdout == before)
  }
}

/// Found by trying the new commands as a hostile user would.
@Suite("Batches and range edits: odd input")
struct BatchOddInputTests {
  static func sh(_ script: String, _ arguments: [String]) throws -> TapeBinary.Result {
    try TapeBinary.run(
      URL(fileURLWithPath: "/bin/bash"), ["-c", script, TapeBinary.url.path] + arguments,
      environment: ["NO_COLOR": "1"])
  }

  @Test func scriptsFromPipesWithMarksAndHelp() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    // Process substitution is a pipe; a byte-order mark is not part of the first word.
    let piped = try Self.sh(#""$0" batch "$1" <(printf '\xef\xbb\xbftrack add A\n')"#, [song])
    #expect(piped.status == 0, "\(piped.stderr)")
    #expect(piped.stdout == "t1\n")
    // Help has no place in a script; it says where to read it.
    let help = try Self.sh(#"printf 'track add X --help\n' | "$0" batch "$1""#, [song])
    #expect(help.status == 64)
    #expect(
      help.stderr
        == "error: line 1: --help has no place in a batch; run 'tape track add --help' to read the help\n"
    )
    // A long word reads in linear time and a huge message is cut to its start and end.
    let words = String(repeating: "B ", count: 20_000)
    let long = try Self.sh(#"printf 'track add Z %s\n' "$2" | "$0" batch "$1""#, [song, words])
    #expect(long.status == 64)
    #expect(long.stderr.count < 1_100)
    #expect(
      long.stderr.hasPrefix("error: line 1: ")
        && long.stderr.hasSuffix("see: tape track add --help\n"))
    // A negative place is the command's own message, not the parser's.
    let move = try TapeBinary.run(
      ["track", "move", song, "t1", "--to", "-1"], environment: ["NO_COLOR": "1"])
    #expect(move.stderr == "error: --to -1 is not a place in the order; use 1 (the top) to 1\n")
    let label = try TapeBinary.run(
      ["track", "add", song, "Y", "-m", String(repeating: "x", count: 501)],
      environment: ["NO_COLOR": "1"])
    #expect(label.status == 64)
  }

  /// `diff --json` (and `watch --json`, which shares it) lists a master gain change.
  @Test func masterGainChangesAreInTheJSON() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("master", song, "--gain", "-3dB")
    let diff = try #require(
      try parseJSON(ws.tape("diff", song, "1", "2", "--json").stdout) as? [String: Any])
    let changes = try #require(diff["changes"] as? [[String: Any]])
    #expect(changes.count == 1)
    #expect(changes[0]["kind"] as? String == "master")
    #expect(changes[0]["words"] as? String == "master gain 0 dB → -3 dB")
    #expect((changes[0]["after"] as? [String: Any])?["gainDB"] as? Double == -3)
  }
}

@Suite("Diagnostics")
struct VerboseTests {
  /// An edit that changes nothing succeeds without a version, and says so on stderr.
  @Test func anEditThatChangesNothingSaysSo() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("track", "add", song, "A", "--gain", "-3")
    let same = try ws.tape("track", "set", song, "t1", "--gain", "-3")
    #expect(same.stdout.isEmpty)
    #expect(same.stderr == "note: nothing changed; the project stays at version 2\n")
    let cut = try ws.tape("cut", song, "--from", "1s", "--to", "2s", "--ripple")
    #expect(cut.stderr == "note: nothing changed; the project stays at version 2\n")
    #expect(try ws.head(of: song) == 2)
  }

  /// `tape -v COMMAND` logs on stderr which audio files are read and whether the decoded cache
  /// had them; stdout is what it always is.
  @Test func verboseNamesFilesAndCacheHits() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    let speech = TestAudio.path("speech-mono-48k-16.wav")
    let imported = try ws.tape("-v", "import", song, speech)
    #expect(imported.stdout == "s1\n")
    #expect(imported.stderr.contains("[AudioFiles] \(speech): decoded into "))
    try ws.tape("track", "add", song, "V")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "0.5s")
    let render = try ws.tape("-v", "render", song, "-o", ws.path("out.wav"))
    #expect(render.stderr.contains("debug tape.cache"))
    #expect(render.stderr.contains("s1 \(speech): decoded audio found in the cache"))
    #expect(render.stdout.hasPrefix("\(ws.path("out.wav")): WAV 24-bit"))
    let quiet = try ws.tape("render", song, "-o", ws.path("out.wav"))
    #expect(quiet.stderr.isEmpty)
  }
}

/// What undo and redo print after a large edit.
@Suite("Bounded undo lines")
struct BoundedUndoLineTests {
  /// A ripple cut that moves 380 clips on two tracks and a 40-point envelope: undo and redo
  /// print one short line naming the moved clips as one phrase and the envelope by its point
  /// counts (it used to name every clip and point); `--json` keeps every change.
  @Test func undoOfARippleCutIsOneShortLine() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    var script = ["track add A", "track add B"]
    for track in ["t1", "t2"] {
      for i in 0..<200 {
        script.append("clip add \(track) s1 --at \(i * 200)ms --length 100ms")
      }
    }
    let points = (0..<40).map { "\($0)s:\($0 % 2 == 0 ? -6 : -3)dB" }.joined(separator: ",")
    script.append("track envelope t1 --set \(points)")
    let file = ws.path("build.txt")
    try script.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
    try ws.tape("batch", song, file)
    try ws.tape("cut", song, "--from", "2.05s", "--to", "2.1s", "--ripple")
    let undo = try ws.tape("undo", song).stdout
    #expect(undo.split(separator: "\n").count == 1)
    #expect(undo.utf8.count < 300, "\(undo.utf8.count) bytes: \(undo)")
    #expect(undo.contains("c12…c400 (378 clips) moved 0.05s right"), "\(undo)")
    #expect(undo.contains("t1 envelope of 40 points (was 42)"), "\(undo)")
    let redo = try ws.tape("redo", song).stdout
    #expect(redo.contains("c12…c400 (378 clips) moved 0.05s left"), "\(redo)")
    try ws.tape("undo", song)
    let json = try #require(
      try parseJSON(ws.tape("redo", song, "--json").stdout) as? [String: Any])
    #expect((json["changes"] as? [Any])?.count == 378 + 2 + 1)

    // diff and watch say it as briefly (they printed a line per clip); their JSON keeps all.
    let head = try ws.head(of: song)
    let diff = try ws.tape("diff", song, "\(head - 1)", "\(head)").stdout
    #expect(diff.split(separator: "\n").count <= 6, "\(diff)")
    #expect(diff.utf8.count < 400, "\(diff.utf8.count) bytes: \(diff)")
    #expect(diff.contains("c12…c400 (378 clips) moved 0.05s left"), "\(diff)")
    let diffJSON = try #require(
      try parseJSON(ws.tape("diff", song, "\(head - 1)", "\(head)", "--json").stdout)
        as? [String: Any])
    #expect((diffJSON["changes"] as? [Any])?.count == 378 + 2 + 1)
    let (watcher, output, _) = try startTape(["watch", song, "--count", "1"])
    try waitUntilWatching(song)
    try ws.tape("undo", song)
    watcher.waitUntilExit()
    let line = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(line.split(separator: "\n").count == 1)
    #expect(line.utf8.count < 400, "\(line.utf8.count) bytes: \(line)")
    #expect(line.contains("c12…c400 (378 clips) moved 0.05s right"), "\(line)")
  }
}
