import Foundation
import Testing

@Suite("Every error: one line, its exit code, nothing changed")
struct ErrorPathTests {
  /// A project with two tracks, a source and a 2 s clip with a 0.5 s fade-in.
  static func project(_ ws: Workspace) throws -> String {
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "Voice")
    try ws.tape("track", "add", song, "Other")
    try ws.tape(
      "clip", "add", song, "t1", "s1", "--at", "1s", "--length", "2s", "--fade-in", "0.5s")
    return song
  }

  static let cases: [(arguments: [String], status: Int32, message: String)] = [
    // Past the latest time Tape handles (what clip add refuses, a move cannot reach).
    (
      ["clip", "move", "@", "c1", "--to", "1099511627000f"], 65,
      "error: clip c1 would end past 6362:54:52.245 (1099511627776f), the latest time Tape handles; place it earlier\n"
    ),
    // Too large, wherever it is read: one message naming the option and the largest time
    // (a clock time said "not a time", an offset "past the time limit").
    (
      ["clip", "move", "@", "c1", "--to", "99999:00:00"], 64,
      "error: --to 99999:00:00 is more than 6362:54:52.245 (1099511627776f), the largest time Tape handles; give --to a smaller time\n"
    ),
    (
      ["cut", "@", "--from", "1s", "--to", "c1.end+23000000s"], 64,
      "error: --to c1.end+23000000s is more than 6362:54:52.245 (1099511627776f), the largest time Tape handles; give --to a smaller time\n"
    ),
    (
      ["play", "@", "--from", "9999999999999"], 64,
      "error: --from 9999999999999 is more than 6362:54:52.245 (1099511627776f), the largest time Tape handles; give --from a smaller time\n"
    ),
    (
      ["insert", "@", "--at", "1s", "--length", "23000000s"], 64,
      "error: --length 23000000s is more than 6362:54:52.245 (1099511627776f), the largest time Tape handles; give --length a smaller time\n"
    ),
    // A length that rounds to no frame: the command's own error, not "internal error" (exit
    // 70 before; found by the fuzzer).
    (
      ["clip", "add", "@", "t2", "s1", "--at", "0", "--length", "0.0000001s"], 64,
      "error: the clip would be empty: its end in the source must come after --from\n"
    ),
    // Names that would break every listing.
    (
      ["track", "add", "@", "Lead\nVocal"], 65,
      "error: the track name \"Lead\\u{A}Vocal\" holds a control character (a newline, a tab…); use a name on one line\n"
    ),
    (
      ["track", "set", "@", "t1", "--name", "a\tb"], 65,
      "error: the track name \"a\\u{9}b\" holds a control character (a newline, a tab…); use a name on one line\n"
    ),
    // Impossible edits.
    (
      ["clip", "set", "@", "c1", "--fade-in", "9s"], 65,
      "error: fade-in 9s is longer than clip c1 (2s); use --fade-in 2s or less\n"
    ),
    (
      ["clip", "split", "@", "c1", "--at", "7s"], 65,
      "error: 7s is not inside clip c1, which spans 1s–3s; split strictly between its edges\n"
    ),
    (
      ["clip", "add", "@", "t1", "s1", "--at", "0", "--from", "6s", "--length", "1s"], 65,
      // The suggestion is exact (the source is 307,233 frames: 6.401s would be refused).
      "error: the new clip plays 6s–7s of source s1, which is only 6.401s (307233f) long; end it at 307233f or earlier\n"
    ),
    (
      ["clip", "trim", "@", "c1", "--start", "3s", "--end", "2s"], 65,
      "error: trimming clip c1 to 3s–2s would leave nothing; the start must be before the end\n"
    ),
    (
      ["track", "set", "@", "t1", "--pan", "1.5"], 65,
      "error: pan 1.5 is outside -1…1; use -1 (left), 0 (centre), 1 (right) or a value between\n"
    ),
    (
      ["track", "set", "@", "t1", "--name", " "], 65,
      "error: a track name cannot be empty; give it a name such as \"Drums\"\n"
    ),
    (
      ["undo", "@", "--steps", "99"], 65,
      "error: cannot undo 99 steps: only 4 available; use --steps 4\n"
    ),
    (
      ["redo", "@"], 65,
      "error: nothing to redo; 'tape history' shows the versions you can check out\n"
    ),
    (
      ["checkout", "@", "42"], 65,
      "error: no version 42 in this project; 'tape history' lists the versions\n"
    ),
    // Unknown ids.
    (
      ["clip", "rm", "@", "c9"], 65,
      "error: no clip c9 in this project; 'tape ls' lists the clips\n"
    ),
    (
      ["track", "rm", "@", "t7"], 65,
      "error: no track t7 in this project; 'tape ls' lists the tracks\n"
    ),
    (
      ["clip", "add", "@", "t1", "s4", "--at", "0"], 65,
      "error: no source s4 in this project; 'tape ls' lists the sources\n"
    ),
    (
      ["clip", "move", "@", "c1", "--track", "t9"], 65,
      "error: no track t9 in this project; 'tape ls' lists the tracks\n"
    ),
    (
      ["clip", "rm", "@", "t1"], 64,
      "error: 't1' is not a clip id; clip ids look like c1 ('tape ls' lists them)\n"
    ),
    // Bad times and gains.
    (
      ["clip", "move", "@", "c1", "--to", "soon"], 64,
      "error: 'soon' is not a time; write seconds (1.5 or 1.5s), milliseconds (250ms), a clock (1:02.5 or 01:02:03.250) or frames (96000f)\n"
    ),
    (
      ["clip", "set", "@", "c1", "--gain", "loud"], 64,
      "error: 'loud' is not a gain; write decibels such as -3, -3dB or +2.5dB\n"
    ),
    (
      ["track", "add", "@", "X", "--gain", "+60dB"], 65,
      "error: gain +60 dB is out of range; use a value from -144 to +48 dB\n"
    ),
    // Out of range, said as typed (it said "+48 dB", and "inf dB is not a finite gain").
    (
      ["clip", "set", "@", "c1", "--gain", "+48.0000000001"], 65,
      "error: gain +48.0000000001 dB is out of range; use a value from -144 to +48 dB\n"
    ),
    (
      ["clip", "set", "@", "c1", "--gain", "1e400"], 65,
      "error: gain 1e400 dB is out of range; use a value from -144 to +48 dB\n"
    ),
    // A negative number is a bad value, not "missing value" (the parser took it for an option).
    (
      ["undo", "@", "--steps", "-1"], 64,
      "error: --steps must be 1 or more; see: tape undo --help\n"
    ),
    (
      ["redo", "@", "--steps", "-2"], 64,
      "error: --steps must be 1 or more; see: tape redo --help\n"
    ),
    (
      ["watch", "@", "--count", "-1"], 64,
      "error: --count must be 1 or more; see: tape watch --help\n"
    ),
    (
      ["new", "@", "--rate", "-1"], 65,
      "error: sample rate -1 Hz is not supported; use one of 8000, 11025, 16000, 22050, 32000, 44100, 48000, 88200, 96000, 176400, 192000\n"
    ),
    (
      ["new", "@", "--channels", "-2"], 65,
      "error: -2 output channels are not supported; use 1 (mono) or 2 (stereo)\n"
    ),
    (
      ["render", "@", "-o", "/dev/null", "--format", "wav", "--bits", "-1"], 64,
      "error: '-1' is not a sample format; use --bits 16, 24 or 32f\n"
    ),
    (
      ["render", "@", "-o", "/dev/null", "--format", "mp3", "--bitrate", "-5"], 64,
      "error: --bitrate is in kbit/s and must be positive, such as --bitrate 128; see: tape render --help\n"
    ),
    (
      ["draw", "@", "-o", "/dev/null", "--width", "-5"], 64,
      "error: --width -5 is out of range; give 400 to 16384 pixels; see: tape draw --help\n"
    ),
    (
      ["play", "@", "--period", "-5"], 64,
      "error: --period -5 is not a period a device takes; use 16 to 16384 frames (256 is the default)\n"
    ),
    (
      ["play", "@", "--periods", "-2"], 64,
      "error: --periods -2 is not a buffer a device takes; use 2 to 32 periods (4 is the default)\n"
    ),
    (
      ["history", "prune", "@", "--keep-last", "-1"], 64,
      "error: --keep-last must be 1 or more; see: tape history prune --help\n"
    ),
    (
      ["export", "@", "-o", "/dev/null/x.edl", "--fps", "-1"], 64,
      "error: --fps -1 is not a timecode rate; give 24, 25, 30 or 29.97 (drop-frame); see: tape export --help\n"
    ),
    // A rate that is no whole number and not NTSC's 29.97: the rates it takes, not the
    // parser's "invalid value".
    (
      ["export", "@", "-o", "/dev/null/x.edl", "--fps", "23.976"], 64,
      "error: --fps 23.976 is not a timecode rate; give 24, 25, 30 or 29.97 (drop-frame); see: tape export --help\n"
    ),
    (
      ["checkout", "@", "-1"], 64,
      "error: -1 is not a version: versions are numbered from 1 ('tape history' lists them)\n"
    ),
    (
      ["clip", "set", "@", "c1", "--fade-in-curve", "wobbly"], 64,
      "error: 'wobbly' is not a fade curve; use linear, equal-power, s-curve or exponential\n"
    ),
  ]

  @Test(arguments: cases.indices)
  func failsCleanly(index: Int) throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    let (arguments, status, message) = Self.cases[index]
    let before = try ws.fingerprint("song.tape")
    let lsBefore = try ws.tape("ls", song, "--json").stdout
    let result = try TapeBinary.run(
      arguments.map { $0 == "@" ? song : $0 }, environment: ["NO_COLOR": "1"])
    #expect(result.status == status)
    #expect(result.stderr == message)
    #expect(result.stdout == "")
    #expect(try ws.fingerprint("song.tape") == before)
    #expect(try ws.tape("ls", song, "--json").stdout == lsBefore)
  }

  /// A value that starts with `-` and a letter (`-dash`) was read as bundled short options
  /// (-d -a -s -h): the -h printed the help on stdout and exited 0 with nothing made, so a
  /// script took the help for the new track's id. Such a word is refused, for every command
  /// and in a batch, with the fix: `--` before it, or `=` after its option. Real short
  /// options, negative numbers and `-help` keep working.
  @Test func aValueThatLooksLikeShortOptionsIsRefused() throws {
    let ws = try Workspace()
    let song = ws.path("n.tape")
    try ws.tape("new", song)
    let before = try ws.fingerprint("n.tape")
    let refused: [([String], String)] = [
      (
        ["track", "add", song, "-dash"],
        "error: '-dash' is not an option of tape track add; if it is a value, write '--' before it (and any options before that): tape track add \(song) -- -dash\n"
      ),
      (
        ["marker", "add", song, "1s", "-hook"],
        "error: '-hook' is not an option of tape marker add; if it is a value, write '--' before it (and any options before that): tape marker add \(song) 1s -- -hook\n"
      ),
      (
        ["track", "add", song, "-x"],
        "error: '-x' is not an option of tape track add; if it is a value, write '--' before it (and any options before that): tape track add \(song) -- -x\n"
      ),
      (
        ["track", "add", song, "Voice", "--json", "-dash"],
        "error: '-dash' is not an option of tape track add; if it is a value, write '--' before it (and any options before that): tape track add \(song) Voice --json -- -dash\n"
      ),
      (
        ["track", "add", song, "Voice", "-m", "-hi"],
        "error: '-hi' is not an option of tape track add; if it is the value of -m, join them with '=': -m=-hi; if it is an argument, write '--' before it (and any options before that): tape track add \(song) Voice -m -- -hi\n"
      ),
      // The value of an option that takes one is the parser's to read: it says what is wrong
      // with it (a first version of this check took `--gain -inf` for short options).
      (
        ["track", "add", song, "Voice", "--gain", "-hi"],
        "error: '-hi' is not a gain; write decibels such as -3, -3dB or +2.5dB\n"
      ),
    ]
    for (arguments, message) in refused {
      let result = try TapeBinary.run(arguments, environment: ["NO_COLOR": "1"])
      #expect(result.status == 64, "\(arguments)")
      #expect(result.stdout == "", "\(arguments)")
      #expect(result.stderr == message)
    }
    let script = ws.path("edits.txt")
    try "track add Voice\ntrack add -dash\n".write(
      toFile: script, atomically: true, encoding: .utf8)
    let batch = try TapeBinary.run(["batch", song, script], environment: ["NO_COLOR": "1"])
    #expect(batch.status == 64)
    #expect(batch.stdout == "")
    #expect(
      batch.stderr.contains(
        "'-dash' is not an option of track add; if it is a value, write '--' before it (and any options before that): track add -- -dash"
      ), "\(batch.stderr)")
    #expect(try ws.fingerprint("n.tape") == before)

    // The fixes the messages give work, and so do real short options and negative values.
    #expect(try ws.tape("track", "add", song, "--", "-dash").stdout == "t1\n")
    #expect(try ws.tape("marker", "add", song, "1s", "--", "-hook").stdout == "m1\n")
    #expect(
      try ws.tape("track", "add", song, "X", "--gain", "-3dB", "-m", "label").stdout == "t2\n")
    try ws.tape("track", "set", song, "t2", "--name=-x")
    let listing = try #require(
      try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    let tracks = try #require(listing["tracks"] as? [[String: Any]])
    #expect(tracks.map { $0["name"] as? String } == ["-dash", "-x"])
    let markers = try #require(listing["markers"] as? [[String: Any]])
    #expect(markers.map { $0["name"] as? String } == ["-hook"])
    for help in [
      ["track", "add", "-h"], ["track", "add", "-help"], ["track", "add", song, "--help"],
    ] {
      let result = try ws.tape(help)
      #expect(result.stdout.hasPrefix("OVERVIEW: Add a track"), "\(help)")
    }
  }

  @Test func missingAndNonAudioFilesImportNothing() throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    let before = try ws.fingerprint("song.tape")
    let good = TestAudio.path("piano-stereo-44k-24.wav")
    let expectations: [(String, Int32, String)] = [
      (ws.path("nope.wav"), 66, "error: \(ws.path("nope.wav")) does not exist; check the path\n"),
      (
        TestAudio.path("bad-not-audio.wav"), 65,
        "error: \(TestAudio.path("bad-not-audio.wav")) is not an audio file Tape can read (format not recognised); use WAV, FLAC, AIFF, Ogg or another format libsndfile reads\n"
      ),
      (
        TestAudio.path("bad-six-channels.wav"), 65,
        "error: \(TestAudio.path("bad-six-channels.wav")) has 6 channels; Tape takes mono or stereo, so mix it down first (for example: sox in.wav out.wav remix 1,3,5 2,4,6)\n"
      ),
      (
        TestAudio.path("bad-truncated.wav"), 65,
        "error: \(TestAudio.path("bad-truncated.wav")) is truncated: its header promises 48000 frames but only 24989 could be read; re-export or re-copy the file\n"
      ),
      (
        TestAudio.path("bad-empty.wav"), 65,
        "error: \(TestAudio.path("bad-empty.wav")) holds no audio (0 frames); choose a file with sound in it\n"
      ),
    ]
    for (bad, status, message) in expectations {
      // A good file before the bad one is not imported either.
      let result = try TapeBinary.run(["import", song, good, bad], environment: ["NO_COLOR": "1"])
      #expect(result.status == status)
      #expect(result.stderr == message)
      #expect(result.stdout == "")
      #expect(try ws.fingerprint("song.tape") == before)
    }
  }

  /// What an error suggests is taken as it is: the suggested end of a crop and the suggested
  /// longest fade both work (rounded suggestions used to be refused themselves).
  @Test func suggestionsAreAccepted() throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    let refused = try TapeBinary.run(
      ["clip", "add", song, "t2", "s1", "--at", "0", "--from", "6s", "--length", "1s"],
      environment: ["NO_COLOR": "1"])
    let end = try #require(refused.stderr.firstMatch(of: /end it at (\S+) or earlier/)?.1)
    try ws.tape("clip", "add", song, "t2", "s1", "--at", "0", "--from", "6s", "--to", String(end))
    let fade = try TapeBinary.run(
      ["clip", "set", song, "c1", "--fade-in", "9s"], environment: ["NO_COLOR": "1"])
    let longest = try #require(fade.stderr.firstMatch(of: /use --fade-in (\S+) or less/)?.1)
    try ws.tape("clip", "set", song, "c1", "--fade-in", String(longest))
  }

  /// A cut AIFF (libsndfile reads it as a shorter file without a word) is refused with both
  /// lengths, as a cut WAV is.
  @Test func aTruncatedAIFFIsRefused() throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    let before = try ws.fingerprint("song.tape")
    let whole = try Data(contentsOf: URL(fileURLWithPath: TestAudio.path("tone-mono-44k-24.aiff")))
    let cut = ws.path("cut.aiff")
    try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: cut))
    let frames = try tool("/usr/bin/soxi", ["-s", TestAudio.path("tone-mono-44k-24.aiff")]).stdout
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let result = try TapeBinary.run(["import", song, cut], environment: ["NO_COLOR": "1"])
    #expect(result.status == 65)
    #expect(
      result.stderr.hasPrefix(
        "error: \(cut) is truncated: its header promises \(frames) frames but only "),
      "\(result.stderr)")
    #expect(try ws.fingerprint("song.tape") == before)
  }

  /// A float WAV with a NaN (or an infinity) is refused at import with where the bad sample
  /// is; nothing is imported.
  @Test(arguments: [Float.nan, Float.infinity, -Float.infinity])
  func nonFiniteSamplesAreRefused(bad: Float) throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    let before = try ws.fingerprint("song.tape")
    let file = ws.path("float.wav")
    var samples = (0..<4_800).map { Float(sin(Double($0) * 0.05) * 0.5) }
    samples[2_400] = bad
    try floatWAV(samples).write(to: URL(fileURLWithPath: file))
    let result = try TapeBinary.run(["import", song, file], environment: ["NO_COLOR": "1"])
    #expect(result.status == 65)
    #expect(
      result.stderr
        == "error: \(file) has a NaN or infinite sample at 0:00.050 (frame 2400), which would ruin every mix it is in; export it again from its source without them\n"
    )
    #expect(try ws.fingerprint("song.tape") == before)
    // The same file without it imports.
    samples[2_400] = 0
    try floatWAV(samples).write(to: URL(fileURLWithPath: file))
    try ws.tape("import", song, file)
  }

  /// A mono 48 kHz 32-bit float WAV (format 3) of `samples`.
  private func floatWAV(_ samples: [Float]) -> Data {
    wavFile(format: 3, channels: 1, bits: 32, data: samples.withUnsafeBytes { Data($0) })
  }

  @Test func missingNotAProjectAndCorruptProjects() throws {
    let ws = try Workspace()
    let missing = try TapeBinary.run(["ls", ws.path("none.tape")], environment: ["NO_COLOR": "1"])
    #expect(missing.status == 66)
    #expect(
      missing.stderr
        == "error: no project at \(ws.path("none.tape")); create one with 'tape new \(ws.path("none.tape"))'\n"
    )
    #expect(!FileManager.default.fileExists(atPath: ws.path("none.tape")))

    // A FIFO or a folder named as the project: refused at once (reading a FIFO's header used
    // to wait for a writer forever; found by the fuzzer).
    let fifo = ws.path("fifo.tape")
    mkfifo(fifo, 0o644)
    for target in [fifo, ws.url.path] {
      for command in [["history", target], ["undo", target], ["ls", target, "--json"]] {
        let result = try TapeBinary.run(command, environment: ["NO_COLOR": "1"])
        #expect(result.status == 65, "\(command)")
        #expect(
          result.stderr
            == "error: \(target) is not a Tape project; give the path of a file made by 'tape new'\n"
        )
      }
    }

    let wav = TestAudio.path("speech-mono-48k-16.wav")
    let notProject = try TapeBinary.run(["track", "add", wav, "X"], environment: ["NO_COLOR": "1"])
    #expect(notProject.status == 65)
    #expect(
      notProject.stderr
        == "error: \(wav) is not a Tape project; give the path of a file made by 'tape new'\n")

    let song = try Self.project(ws)
    var bytes = try Data(contentsOf: URL(fileURLWithPath: song))
    for index in 100..<4_096 { bytes[index] = UInt8(truncatingIfNeeded: index &* 31) }
    try bytes.write(to: URL(fileURLWithPath: song))
    let corrupt = try TapeBinary.run(["clip", "rm", song, "c1"], environment: ["NO_COLOR": "1"])
    #expect(corrupt.status == 65)
    #expect(corrupt.stderr.hasPrefix("error: the project file is damaged ("))
    #expect(
      corrupt.stderr.hasSuffix(
        "); restore it from a backup, or see what sqlite3 can save with 'sqlite3 \(song) .recover' (the file was not changed)\n"
      ))
    #expect(corrupt.stderr.split(separator: "\n").count == 1)
    #expect(try Data(contentsOf: URL(fileURLWithPath: song)) == bytes)
  }

  /// A source file its user may not read: import names it and the fix, and changes nothing.
  /// Root reads any file, so when the tests run as root `tape` runs as nobody (setpriv).
  @Test func anUnreadableSourceIsNamed() throws {
    let ws = try Workspace(reachableByOthers: geteuid() == 0)
    let song = try Self.project(ws)
    let locked = ws.path("locked.wav")
    try FileManager.default.copyItem(
      atPath: TestAudio.path("speech-mono-48k-16.wav"), toPath: locked)
    try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: locked)
    var command = [TapeBinary.url.path, "import", song, locked]
    if geteuid() == 0 {
      try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: ws.url.path)
      for name in ["song.tape", "song.tape-wal", "song.tape-shm"]
      where FileManager.default.fileExists(atPath: ws.path(name)) {
        try FileManager.default.setAttributes(
          [.posixPermissions: 0o666], ofItemAtPath: ws.path(name))
      }
      // A copy of the binary in the workspace, in case the checkout is in a folder nobody
      // may enter (a clone under /root, say).
      let binary = ws.path("tape")
      try FileManager.default.copyItem(atPath: TapeBinary.url.path, toPath: binary)
      try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: binary)
      command[0] = binary
      command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
    }
    let before = try ws.fingerprint("song.tape")
    let result = try TapeBinary.run(
      URL(fileURLWithPath: command[0]), Array(command.dropFirst()), environment: ["NO_COLOR": "1"])
    #expect(result.status == 74)
    #expect(
      result.stderr
        == "error: \(locked) cannot be read (permission denied); check its permissions\n")
    #expect(try ws.fingerprint("song.tape") == before)
  }

  @Test func aProjectLockedByAnotherProcessIsBusy() throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    let before = try ws.fingerprint("song.tape")
    let holder = Process()
    holder.executableURL = TapeBinary.testing
    holder.arguments = ["hold-lock", song, "--seconds", "3"]
    let pipe = Pipe()
    holder.standardOutput = pipe
    try holder.run()
    defer { holder.terminate() }
    // Wait until the other process really holds the lock.
    let line = String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
    #expect(line == "locked\n")
    let busy = try TapeBinary.run(
      ["clip", "rm", song, "c1"], environment: ["NO_COLOR": "1", "TAPE_BUSY_TIMEOUT": "0.3"])
    #expect(busy.status == 75)
    #expect(
      busy.stderr
        == "error: project is busy: another tape process is writing to it; try again when it has finished\n"
    )
    holder.waitUntilExit()
    #expect(try ws.fingerprint("song.tape") == before)
    // Once the lock is released the same command succeeds.
    try ws.tape("clip", "rm", song, "c1")
  }

  /// The same with a large move left pending by a killed editor: an edit, an undo and a
  /// one-clip edit each say busy once, and nothing changes. (The close tried to fold the move
  /// too, so each waited for the lock twice and logged a second line, a dated warning.)
  @Test func aProjectLockedWithAMovePendingIsBusyInOneLine() throws {
    let ws = try Workspace()
    let song = try projectWithAMovePending(ws)
    let before = try ws.fingerprint("song.tape")
    let (holder, out, _) = try startTape(
      ["hold-lock", song, "--seconds", "20"], executable: TapeBinary.testing)
    defer {
      kill(holder.processIdentifier, SIGKILL)
      holder.waitUntilExit()
    }
    #expect(String(decoding: out.fileHandleForReading.availableData, as: UTF8.self) == "locked\n")
    for command in [["track", "add", song, "A"], ["undo", song], ["clip", "rm", song, "c1"]] {
      let busy = try TapeBinary.run(
        command, environment: ["NO_COLOR": "1", "TAPE_BUSY_TIMEOUT": "0.3"])
      #expect(busy.status == 75, "\(command)")
      #expect(
        busy.stderr
          == "error: project is busy: another tape process is writing to it; try again when it has finished\n",
        "\(command)")
    }
    #expect(try ws.fingerprint("song.tape") == before)
  }

  /// TAPE_BUSY_TIMEOUT out of range or not a number is one line and exit 64 (it trapped on
  /// nan, inf and 1e10, and a typo was ignored); a valid value works.
  /// Also what `Double(_:)` takes but the documentation does not (hex, blanks, a sign, an
  /// exponent), which were accepted.
  @Test(arguments: ["nan", "inf", "-1", "1e10", "2147484", "abc", "", "0x10", " 5", "+3", "1e1"])
  func aBadBusyTimeoutIsRefused(value: String) throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    let result = try TapeBinary.run(
      ["track", "add", song, "A"], environment: ["TAPE_BUSY_TIMEOUT": value, "NO_COLOR": "1"])
    #expect(result.status == 64)
    #expect(
      result.stderr
        == "error: TAPE_BUSY_TIMEOUT=\(value) is not a number of seconds from 0 to 3600; unset it for the default (5 s)\n"
    )
    let fine = try TapeBinary.run(
      ["track", "add", song, "A"], environment: ["TAPE_BUSY_TIMEOUT": "0.5"])
    #expect(fine.status == 0)
  }

  /// A name with a newline, ESC or BEL (a project, a source, an output) made a multi-line
  /// error or rang the terminal's bell: every message shows it escaped, as `ls` does.
  @Test func controlCharactersInNamesAreEscaped() throws {
    let ws = try Workspace()
    let missing = ws.path("no\nsuch\u{7}.tape")
    let ls = try TapeBinary.run(["ls", missing], environment: ["NO_COLOR": "1"])
    let shown = ws.path("no\\u{A}such\\u{7}.tape")
    #expect(ls.status == 66)
    #expect(ls.stderr == "error: no project at \(shown); create one with 'tape new \(shown)'\n")

    let song = ws.path("song.tape")
    let source = ws.path("my\nsong\u{1B}[2J.wav")
    try FileManager.default.copyItem(
      atPath: TestAudio.path("speech-mono-48k-16.wav"), toPath: source)
    try ws.tape("new", song)
    try ws.tape("import", song, source)
    try ws.tape("track", "add", song, "A")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "1s")
    try FileManager.default.removeItem(atPath: source)
    for command in [
      ["render", song, "-o", ws.path("mix.wav")], ["import", song, ws.path("gone\r.wav")],
      ["render", song, "-o", ws.path("no\u{7}folder/mix.wav")],
    ] {
      let result = try TapeBinary.run(command, environment: ["NO_COLOR": "1"])
      #expect(result.status != 0)
      #expect(result.stderr.hasPrefix("error: "), "\(command)")
      #expect(result.stderr.filter { $0.isNewline }.count == 1, "\(command): \(result.stderr)")
      #expect(
        !result.stderr.dropLast().unicodeScalars.contains {
          $0.properties.generalCategory == .control
        },
        "\(command): \(result.stderr)")
    }
  }

  /// TAPE_LOG with a level swift-log does not know was ignored silently.
  @Test func aBadLogLevelIsRefused() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    let result = try TapeBinary.run(
      ["ls", song], environment: ["TAPE_LOG": "degub", "NO_COLOR": "1"])
    #expect(result.status == 64)
    #expect(
      result.stderr
        == "error: TAPE_LOG=degub is not a log level; use one of trace, debug, info, notice, warning, error, critical, or unset it\n"
    )
    #expect(result.stdout == "")
    let debug = try TapeBinary.run(["track", "add", song, "A"], environment: ["TAPE_LOG": "debug"])
    #expect(debug.status == 0)
    #expect(debug.stderr.contains("debug"))
  }

  @Test func usageErrorsExit64() throws {
    let ws = try Workspace()
    let song = try Self.project(ws)
    let both = try TapeBinary.run([
      "clip", "add", song, "t1", "s1", "--at", "0", "--length", "1", "--to", "2",
    ])
    #expect(both.status == 64)
    #expect(both.stderr.contains("give --length or --to, not both"))
    let nothing = try TapeBinary.run(["track", "set", song, "t1"])
    #expect(nothing.status == 64)
    let exists = try TapeBinary.run(["new", song], environment: ["NO_COLOR": "1"])
    #expect(exists.status == 64)
    #expect(
      exists.stderr == "error: \(song) already exists; choose another name or remove it first\n")
  }

  /// `tape new ""` said SQLite's "unable to open database file", `tape ls ""` "no project at ;
  /// create one with 'tape new '": the path is empty, and the message says so.
  @Test(arguments: ["new", "ls", "undo"])
  func anEmptyProjectPathIsNamed(command: String) throws {
    let result = try TapeBinary.run([command, ""], environment: ["NO_COLOR": "1"])
    #expect(result.status == 64)
    #expect(
      result.stderr
        == "error: the project path is empty; name the project file, such as song.tape; see: tape \(command) --help\n"
    )
    #expect(result.stdout == "")
  }
}
