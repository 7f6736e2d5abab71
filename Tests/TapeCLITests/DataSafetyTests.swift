import Foundation
import ReferenceRenders
import SafeFiles
import Testing

/// Whether this process may `mknod` and change user: the tests that need it say so when skipped.
let isRoot = geteuid() == 0

/// Every name in `folder` and below, with its kind, for "nothing new was left behind".
func listing(_ folder: String) -> [String] {
  guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
  return walker.compactMap { $0 as? String }.sorted()
}

/// Whether a file name is one of SafeOutput's temporary names (`.NAME.tape-<16 hex digits>`,
/// followed since they say whose they are by `-<host>-<pid>`).
func isTemporaryName(_ path: String) -> Bool {
  let name = path.split(separator: "/").last.map(String.init) ?? path
  guard name.hasPrefix("."), let range = name.range(of: ".tape-", options: .backwards) else {
    return false
  }
  let rest = name[range.upperBound...]
  return rest.count == 16 || rest.split(separator: "-").first?.count == 16
}

/// Whether process `pid` has a handler installed for `signal` (`SigCgt` in /proc/PID/status).
func catchesSignal(_ pid: Int32, _ signal: Int32) -> Bool {
  guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
    let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
    let mask = UInt64(
      line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
  else { return false }
  return mask & (1 << UInt64(signal - 1)) != 0
}

/// A project's folder without SQLite's own `-wal` and `-shm`, which are not leftovers.
func listingWithoutLog(_ folder: String) -> [String] {
  listing(folder).filter { !$0.hasSuffix(".tape-wal") && !$0.hasSuffix(".tape-shm") }
}

/// Starts `tape` with `arguments`, its stdout and stderr captured.
func startTape(
  _ arguments: [String], environment: [String: String] = [:], executable: URL = TapeBinary.url,
  errorLog: String? = nil
) throws -> (Process, stdout: Pipe, stderr: Pipe) {
  let process = Process()
  process.executableURL = executable
  process.arguments = arguments
  var env = ProcessInfo.processInfo.environment
  env.merge(environment) { $1 }
  env["NO_COLOR"] = "1"
  process.environment = env
  let out = Pipe()
  let err = Pipe()
  process.standardOutput = out
  if let errorLog {
    // A file, not a pipe, for a process that may say more than a pipe holds before anyone
    // reads it (a plugin's chatter, each time an instance loads: a full pipe blocked its
    // worker thread, and the play with it).
    guard FileManager.default.createFile(atPath: errorLog, contents: nil) else {
      throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errorLog])
    }
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorLog))
  } else {
    process.standardError = err
  }
  try process.run()
  return (process, out, err)
}

/// The suites that start a paced JACK server: one after the other, never beside each other,
/// and run by the test command in a test process of their own (scripts/test.sh).
///
/// Why: Swift Testing runs tests on the cooperative pool, one thread per core (two here); a test
/// that waits for processes holds its thread, and two such suites side by side would hold both,
/// starving every async test (a store subscriber waiting for an update) for as long as they run.
/// Every suite that starts a paced JACK server is one of these (the recordings' too), and each
/// of their test cases takes its turn with any other test that starts one (``OneJACKServerAtATime``).
/// In a process of their own they start at once: behind the other tests in one pool, the first
/// of them (29 s alone) took 217 s (CI of 886db5d), and they are the run's longest chain.
@Suite(.serialized, .oneJACKServerAtATime) struct ProcessHeavyTests {}

/// The suites that run many processes for long without a paced device (the fuzzer's 1,500
/// commands, the data-safety and one-file checks, the scoped edits' comparison): one after
/// the other, beside the other tests, in the test process that does not run
/// ``ProcessHeavyTests``, so that at most one such suite holds a pool thread there. Their test
/// cases take turns with the paced ones too (``OneJACKServerAtATime``): in one process (`swift
/// test` by hand) the two chains would otherwise hold both pool threads at once; in the test
/// command's two processes the turns are each process's own, and they run beside each other.
@Suite(.serialized, .oneJACKServerAtATime) struct ManyProcessesTests {}

extension ManyProcessesTests {
  @Suite("Nothing the user owns is ever destroyed", .timeLimit(.minutes(10)))
  struct DataSafetyTests {
    // MARK: 1. An output that is a source, the project, its log or a cache file

    /// Rendering onto any file the project stands on is refused, by identity (a hard link under
    /// another name, a path only an old version used), and every byte stays as it was.
    @Test func aRenderNeverOverwritesWhatTheProjectUses() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      // A source of its own, relinked to a second copy: the first path lives on in history only.
      let old = space.path("old.wav")
      let moved = space.path("moved.wav")
      try FileManager.default.copyItem(atPath: TestAudio.path("tone-mono-44k-24.aiff"), toPath: old)
      try FileManager.default.copyItem(atPath: old, toPath: moved)
      try space.tape("import", file, old)
      try space.tape("relink", file, "s3", moved)
      #expect(link(TestAudio.path("speech-mono-48k-16.wav"), space.path("alias.wav")) == 0)
      let cacheFile = try #require(
        listing(file + "-cache").first { $0.hasSuffix(".f32") }.map { file + "-cache/" + $0 })
      #expect(link(cacheFile, space.path("cache-alias.f32")) == 0)
      try space.tape("track", "add", file, "Open")  // leaves the log present
      let targets: [(output: String, what: String)] = [
        (TestAudio.path("speech-mono-48k-16.wav"), "is a source of this project"),
        (space.path("alias.wav"), "is a source of this project"),
        (old, "is a source of this project"),
        (moved, "is a source of this project"),
        (file, "is the project file itself"),
        (cacheFile, "is inside the decoded-audio cache"),
        (space.path("cache-alias.f32"), "is a decoded-audio cache file"),
      ]
      for (output, what) in targets {
        let before = try Data(contentsOf: URL(fileURLWithPath: output))
        let project = try space.fingerprint("song.tape")
        let result = try TapeBinary.run(
          ["render", file, "-o", output, "--format", "wav"], environment: ["NO_COLOR": "1"])
        #expect(result.status == 64, "\(output): \(result.stderr)")
        #expect(result.stderr.hasPrefix("error: -o \(output) \(what)"), "\(result.stderr)")
        #expect(
          result.stderr.hasSuffix(
            "rendering there would destroy it, so choose another output name\n")
        )
        #expect(result.stdout.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == before)
        #expect(try space.fingerprint("song.tape") == project)
      }
    }

    /// The names SQLite may create beside the project (`-wal`, `-shm`, `-journal`) and the cache
    /// folder are refused whether or not a file is there yet; standard output opened on the
    /// project without truncation (`1<>`) is refused too.
    @Test func aRenderNeverWritesWhereTheProjectWill() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      #expect(!FileManager.default.fileExists(atPath: file + "-wal"))
      for (output, what) in [
        (file + "-wal", "is the project's write-ahead log"),
        (file + "-shm", "is the project's shared-memory index"),
        (file + "-journal", "is the project's journal"),
        (file + "-cache/mine.wav", "is inside the decoded-audio cache"),
        (space.path("./song.tape-wal"), "is the project's write-ahead log"),
      ] {
        let result = try TapeBinary.run(
          ["render", file, "-o", output, "--format", "wav"], environment: ["NO_COLOR": "1"])
        #expect(result.status == 64, "\(output): \(result.stderr)")
        #expect(result.stderr.hasPrefix("error: -o \(output) \(what)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
      }
      let before = try Data(contentsOf: URL(fileURLWithPath: file))
      let overwrite = try TapeBinary.run(
        URL(fileURLWithPath: "/bin/bash"),
        [
          "-c", "exec \"$0\" render \"$1\" -o - --format wav 1<> \"$1\"", TapeBinary.url.path, file,
        ],
        environment: ["NO_COLOR": "1"])
      #expect(overwrite.status == 64)
      #expect(overwrite.stderr.hasPrefix("error: standard output is the project file itself"))
      #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
    }

    /// What someone left in the cache folder (a symlink at an entry's or a record's name, a FIFO,
    /// a folder) is never followed, waited on or written through: renders work, their targets
    /// stay as they were.
    @Test func theCacheFolderCannotBeTurnedAgainstTheUser() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      try space.tape("render", file, "-o", space.path("clean.wav"), "--bits", "32f")
      let cache = file + "-cache"
      let entries = listing(cache)
      let victim = space.path("victim.txt")
      try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
      for name in entries {
        try FileManager.default.removeItem(atPath: "\(cache)/\(name)")
        if name.hasSuffix(".f32") && name.contains("1ch") {
          #expect(mkfifo("\(cache)/\(name)", 0o644) == 0)
        } else {
          try FileManager.default.createSymbolicLink(
            atPath: "\(cache)/\(name)", withDestinationPath: victim)
        }
      }
      try space.tape("render", file, "-o", space.path("again.wav"), "--bits", "32f")
      #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
      #expect(
        try ReferenceRender.decode(space.path("again.wav"))
          == (try ReferenceRender.decode(space.path("clean.wav"))))
      #expect(
        listing(cache).allSatisfy { FileIdentity(path: "\(cache)/\($0)")?.isRegularFile == true })
    }

    /// Importing a FIFO or a folder is refused at once, in one line (a FIFO used to hang).
    @Test func importingWhatIsNotAFileIsRefused() throws {
      let space = try Workspace()
      let file = space.path("song.tape")
      try space.tape("new", file)
      #expect(mkfifo(space.path("pipe.wav"), 0o644) == 0)
      try FileManager.default.createDirectory(
        atPath: space.path("folder.wav"), withIntermediateDirectories: true)
      for (path, kind) in [
        (space.path("pipe.wav"), "a FIFO"), (space.path("folder.wav"), "a folder"),
      ] {
        let result = try TapeBinary.run(["import", file, path], environment: ["NO_COLOR": "1"])
        #expect(result.status == 65)
        #expect(
          result.stderr
            == "error: \(path) is \(kind), not an audio file; give the path of a WAV, FLAC, AIFF or Ogg file\n"
        )
      }
    }

    /// A file nobody may write (mode 444) is not replaced, even by root; a name longer than file
    /// systems take is refused before anything is rendered.
    @Test func readOnlyOutputsAndLongNames() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let locked = space.path("final.wav")
      try Data("master".utf8).write(to: URL(fileURLWithPath: locked))
      chmod(locked, 0o444)
      let refused = try TapeBinary.run(
        ["render", file, "-o", locked], environment: ["NO_COLOR": "1"])
      #expect(refused.status == 74)
      #expect(
        refused.stderr
          == "error: \(locked) is read-only; change its mode (chmod u+w) or choose another output\n"
      )
      #expect(try String(contentsOfFile: locked, encoding: .utf8) == "master")
      let long = space.path(String(repeating: "x", count: 300) + ".wav")
      let tooLong = try TapeBinary.run(
        ["render", file, "-o", long], environment: ["NO_COLOR": "1"])
      #expect(tooLong.status == 74)
      #expect(tooLong.stderr.contains("its name is longer than file systems take (255 bytes)"))
      // A name that fits, but not with a temporary suffix beside it, still works.
      let fits = space.path(String(repeating: "y", count: 240) + ".wav")
      try space.tape("render", file, "-o", fits)
      #expect(FileManager.default.fileExists(atPath: fits))
    }

    /// Readers run while another process edits in a loop: every one succeeds (a busy moment or
    /// a file changed under an immutable read is read again).
    @Test func readersSucceedBesideAnEditingLoop() throws {
      let space = try Workspace()
      let file = space.path("busy.tape")
      try space.tape("new", file)
      let editor = Process()
      editor.executableURL = TapeBinary.testing
      editor.arguments = ["commit-loop", file]
      editor.standardOutput = FileHandle.nullDevice
      editor.standardError = FileHandle.nullDevice
      try editor.run()
      Thread.sleep(forTimeInterval: 0.3)
      defer {
        kill(editor.processIdentifier, SIGKILL)
        editor.waitUntilExit()
      }
      var failures: [String] = []
      var reads = 0
      while reads < 150 {
        for arguments in [
          ["ls", file], ["history", file, "--json"], ["ls", file, "--version", "3"],
        ] {
          let result = try TapeBinary.run(arguments, environment: ["NO_COLOR": "1"])
          reads += 1
          if result.status != 0 { failures.append("\(arguments): \(result.stderr)") }
        }
      }
      #expect(failures.isEmpty, "\(failures.count) of \(reads) reads failed: \(failures.prefix(3))")
      #expect(editor.isRunning, "the editor ran throughout")
    }

    /// Plays (which follow the project) started while other processes edit it, each closing
    /// (folding its log into the file and removing it) as it ends: every play starts. CI once
    /// saw "project is busy" from a `tape play` started as another play quit: a reader that
    /// opens while the last writer removes the log is told busy, and play did not read again
    /// as the read commands do.
    @Test func playsStartBesideEditsThatCloseTheLog() throws {
      let space = try Workspace()
      let file = space.path("busy.tape")
      try space.tape("new", file)
      try space.tape("import", file, try space.copyTestAudio("speech-mono-48k-16.wav"))
      try space.tape("track", "add", file, "A")
      try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "0.1s")
      final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var raised = false
        var isRaised: Bool { lock.withLock { raised } }
        func raise() { lock.withLock { raised = true } }
      }
      let stop = Flag()
      let editing = DispatchGroup()
      // Two editors, so that a log is being removed as often as the machine allows.
      for _ in 0..<2 {
        DispatchQueue.global().async(group: editing) {
          var index = 0
          while !stop.isRaised {
            _ = try? TapeBinary.run(
              ["track", "set", file, "t1", "--gain", "-\(index % 6)"], killAfter: 60)
            index += 1
          }
        }
      }
      defer {
        stop.raise()
        editing.wait()
      }
      var failures: [String] = []
      for _ in 0..<100 {
        let play = try TapeBinary.run(
          ["play", file, "--device", "null"], environment: ["NO_COLOR": "1"], killAfter: 60)
        if play.status != 0 { failures.append(play.stderr) }
      }
      #expect(failures.isEmpty, "\(failures.count) of 100 plays failed: \(failures.prefix(3))")
    }

    // MARK: 2. Devices, FIFOs, standard output and symlinks

    /// A character device stays a device: the render is written into it, never renamed over it.
    @Test(.enabled(if: isRoot, "needs root: mknod of a character device"))
    func aCharacterDeviceStaysADevice() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let device = space.path("null")
      // makedev(1, 3), which Swift does not import: major 1, minor 3 (/dev/null).
      #expect(mknod(device, S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0)
      try space.tape("render", file, "-o", device, "--format", "wav")
      let identity = try #require(FileIdentity(path: device))
      #expect(identity.isCharacterDevice)
      #expect(!listing(space.url.path).contains(where: isTemporaryName))
    }

    /// A FIFO stays a FIFO and its reader receives a stream that decodes to the samples of the
    /// render to a file; with no reader the render fails at once instead of hanging.
    @Test(arguments: ["wav", "aiff", "flac"])
    func aFIFOReceivesTheRender(format: String) throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let fifo = space.path("pipe")
      #expect(mkfifo(fifo, 0o644) == 0)
      let alone = try TapeBinary.run(
        ["render", file, "-o", fifo, "--format", format], environment: ["NO_COLOR": "1"])
      #expect(alone.status == 74)
      #expect(alone.stderr.hasPrefix("error: no program is reading the FIFO \(fifo); start"))

      let received = space.path("received.f32")
      // ffmpeg, as ReferenceRender.decode reads files (sox would pass float through integers).
      let reader = Process()
      reader.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
      reader.arguments = [
        "-v", "error", "-f", format, "-i", fifo, "-c:a", "pcm_f32le", "-f", "f32le", received,
      ]
      try reader.run()
      defer { if reader.isRunning { kill(reader.processIdentifier, SIGKILL) } }
      let bits = format == "flac" ? "24" : "32f"
      // Until the reader has opened its end (a loaded machine may take a while to start it).
      var rendered: TapeBinary.Result
      repeat {
        Thread.sleep(forTimeInterval: 0.1)
        rendered = try TapeBinary.run([
          "render", file, "-o", fifo, "--format", format, "--bits", bits,
        ])
      } while rendered.status == 74 && rendered.stderr.contains("no program is reading")
        && reader.isRunning
      #expect(rendered.status == 0, "\(rendered.stderr)")
      reader.waitUntilExit()
      #expect(reader.terminationStatus == 0)
      #expect(FileIdentity(path: fifo)?.isFIFO == true)
      try space.tape("render", file, "-o", space.path("file.\(format)"), "--bits", bits)
      let streamed = try Data(contentsOf: URL(fileURLWithPath: received)).withUnsafeBytes {
        Array($0.bindMemory(to: Float.self))
      }
      #expect(streamed == (try ReferenceRender.decode(space.path("file.\(format)"))))
    }

    /// `-o -` is standard output: piped into sox it decodes to the render's samples, the summary
    /// goes to stderr, and a reader that stops early ends the render with one line and exit 74.
    @Test(arguments: ["wav", "aiff", "flac", "ogg"])
    func standardOutputIsAStream(format: String) throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let bits = format == "ogg" || format == "flac" ? nil : "32f"
      let script = """
        \(shellQuoted(TapeBinary.url.path)) render \(shellQuoted(file)) -o - --format \(format) \(bits.map { "--bits \($0)" } ?? "") 2>\(shellQuoted(space.path("summary"))) \
          | ffmpeg -v error -f \(format == "ogg" ? "ogg" : format) -i - -c:a pcm_f32le -f f32le \(shellQuoted(space.path("out.f32")))
        """
      try tool("/bin/bash", ["-o", "pipefail", "-c", script])
      let summary = try String(contentsOfFile: space.path("summary"), encoding: .utf8)
      #expect(summary.hasPrefix("-: "))
      #expect(!listing(space.url.path).contains("-"))
      let streamed = try Data(contentsOf: URL(fileURLWithPath: space.path("out.f32")))
        .withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
      try space.tape(
        "render", file, "-o", space.path("file.\(format)"), "--bits",
        bits ?? (format == "flac" ? "24" : "32f"))
      let rendered = try ReferenceRender.decode(space.path("file.\(format)"))
      if format == "ogg" {
        #expect(streamed.count == rendered.count)
      } else {
        #expect(streamed == rendered)
      }

      let cut = try TapeBinary.run(
        URL(fileURLWithPath: "/bin/bash"),
        [
          "-c",
          "\(shellQuoted(TapeBinary.url.path)) render \(shellQuoted(file)) -o - --format \(format) --to 10:00 | head -c 100 >/dev/null; echo ${PIPESTATUS[0]}",
        ], environment: ["NO_COLOR": "1"])
      #expect(cut.stdout == "74\n", "\(cut.stderr)")
      #expect(
        cut.stderr
          == "error: the program reading standard output stopped reading (broken pipe); the output is incomplete\n"
      )
    }

    /// A WAV or AIFF stream (Tape's own writer: `-o -`) holds the samples the file render holds
    /// in every sample format, 16-bit dithered included (the dither is seeded by the block, so
    /// both renders draw the same), its header read by sox as the format and length asked for.
    @Test(arguments: ["wav", "aiff"], ["16", "24", "32f"])
    func aStreamHoldsTheFilesSamples(format: String, bits: String) throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let streamed = space.path("streamed.\(format)")
      try tool(
        "/bin/bash",
        [
          "-c",
          "\(shellQuoted(TapeBinary.url.path)) render \(shellQuoted(file)) -o - --format \(format) --bits \(bits) > \(shellQuoted(streamed)) 2> \(shellQuoted(space.path("said")))",
        ])
      let said = (try? String(contentsOfFile: space.path("said"), encoding: .utf8)) ?? ""
      #expect(said.hasPrefix("-: "), "\(said)")
      let written = space.path("file.\(format)")
      try space.tape("render", file, "-o", written, "--bits", bits)
      let info = try tool("/usr/bin/soxi", [streamed]).stdout
      let precision = bits == "32f" ? "25-bit" : "\(bits)-bit"
      #expect(info.contains("Precision      : \(precision)"), "\(info)")
      #expect(
        try tool("/usr/bin/soxi", ["-s", streamed]).stdout
          == (try tool("/usr/bin/soxi", ["-s", written]).stdout))
      let samples = try ReferenceRender.decode(streamed)
      #expect(!samples.isEmpty && samples.contains { $0 != 0 })
      #expect(samples == (try ReferenceRender.decode(written)))
    }

    /// A symlink is followed: its target is replaced, the link kept.
    @Test func aSymlinkedOutputKeepsItsLink() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      try FileManager.default.createDirectory(
        atPath: space.path("releases"), withIntermediateDirectories: true)
      try Data("old".utf8).write(to: URL(fileURLWithPath: space.path("releases/v3.wav")))
      try FileManager.default.createSymbolicLink(
        atPath: space.path("mix.wav"), withDestinationPath: "releases/v3.wav")
      try space.tape("render", file, "-o", space.path("mix.wav"), "--bits", "32f")
      #expect(
        try FileManager.default.destinationOfSymbolicLink(atPath: space.path("mix.wav"))
          == "releases/v3.wav")
      try space.tape("render", file, "-o", space.path("direct.wav"), "--bits", "32f")
      #expect(
        try ReferenceRender.decode(space.path("releases/v3.wav"))
          == (try ReferenceRender.decode(space.path("direct.wav"))))
    }

    // MARK: 3/4. Unpredictable names; signals leave nothing

    /// Symlinks planted at every name the old code used (`.mix.wav.partial-PID`,
    /// `ENTRY.partial-PID`), for a range of process ids around ours, lead nowhere: their targets
    /// are untouched, with O_TMPFILE and with the fallback of exclusive random names.
    @Test(arguments: [false, true])
    func plantedSymlinksAreNeverFollowed(fallback: Bool) throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let victim = space.path("victim")
      try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
      try FileManager.default.removeItem(atPath: file + "-cache")
      try FileManager.default.createDirectory(
        atPath: file + "-cache", withIntermediateDirectories: true)
      let pid = Int(getpid())
      for candidate in pid..<pid + 400 {
        try? FileManager.default.createSymbolicLink(
          atPath: space.path(".mix.wav.partial-\(candidate)"), withDestinationPath: victim)
      }
      try space.tape(
        "render", file, "-o", space.path("mix.wav"),
        environment: fallback ? ["TAPE_NO_TMPFILE": "1"] : [:])
      #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
      #expect(!listing(space.url.path).contains(where: isTemporaryName))
    }

    /// `kill -9` and SIGTERM at random moments of a long render (with the cache to build) and of
    /// an import leave no new file in the output folder or the cache; SIGTERM's exit status is
    /// the signal's. With the fallback (no O_TMPFILE), SIGTERM still leaves nothing.
    @Test func signalsLeaveNothingBehind() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let long = space.path("long.wav")
      try tool(
        "/usr/bin/sox",
        [
          "-R", "-n", "-r", "44100", "-c", "2", "-b", "24", long, "synth", "240", "pinknoise",
          "vol",
          "0.3",
        ])
      // How long each takes here unsignalled, in a workspace of its own: the random moment
      // falls within the first half of that. (With a release build the 2-hour render of this
      // project or the import can end in under the 0.6 s this waited at most: 3 of 8 rounds
      // had ended before their signal in CI.)
      func span(importing: Bool) throws -> Double {
        let trial = try Workspace()
        let trialFile = try RenderCommandTests.project(in: trial)
        let started = Date()
        let result = try TapeBinary.run(
          importing
            ? ["import", trialFile, long]
            : ["render", trialFile, "-o", trial.path("out.flac"), "--to", "2:00:00"])
        #expect(result.status == 0, "\(result.stderr)")
        return Date().timeIntervalSince(started)
      }
      let importSpan = try span(importing: true)
      let renderSpan = try span(importing: false)
      var rng = SystemRandomNumberGenerator()
      var interrupted = 0
      for round in 0..<8 {
        let signal = round % 2 == 0 ? SIGKILL : SIGTERM
        // The fallback's named file survives only kill -9 (as documented): SIGTERM rounds only.
        let fallback = round >= 6 && signal == SIGTERM
        // Rounds alternate between an import (decoding 4 minutes) and a long render.
        let importing = round % 4 < 2
        if !importing { try? FileManager.default.removeItem(atPath: file + "-cache") }
        let before = listingWithoutLog(space.url.path)
        let arguments =
          importing
          ? ["import", file, long]
          : ["render", file, "-o", space.path("out.flac"), "--to", "2:00:00"]
        let (process, _, errors) = try startTape(
          arguments, environment: fallback ? ["TAPE_NO_TMPFILE": "1"] : [:])
        // The random moment counts from Tape's handler being installed, not from the launch:
        // with the machine loaded (load average 37, four paced tests beside this one), a debug
        // `tape` took longer than 0.6 s to get there, and the SIGTERM's default action ended it
        // without its "interrupted" line.
        let installed = Date(timeIntervalSinceNow: 60)
        while process.isRunning && !catchesSignal(process.processIdentifier, SIGTERM)
          && Date() < installed
        {
          Thread.sleep(forTimeInterval: 0.01)
        }
        let latest = max(0.06, min(0.6, (importing ? importSpan : renderSpan) / 2))
        Thread.sleep(forTimeInterval: Double.random(in: 0.05...latest, using: &rng))
        guard process.isRunning else {
          // It finished first: nothing to interrupt this round.
          process.waitUntilExit()
          continue
        }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        interrupted += 1
        let message = String(
          decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .uncaughtSignal, "round \(round)")
        #expect(process.terminationStatus == signal, "round \(round)")
        if signal == SIGTERM {
          #expect(message.hasPrefix("error: ") && message.contains("interrupted"), "\(message)")
        }
        let after = listingWithoutLog(space.url.path)
        let added = Set(after).subtracting(before)
        // Decoding that finished before the signal leaves its complete cache entry (and the
        // source's identity record): the cache's own content, named only when whole and verified
        // on every read.
        let allowed = added.filter { name in
          name == "song.tape-cache"
            || (name.hasPrefix("song.tape-cache/")
              && (name.hasSuffix(".f32") || name.hasSuffix(".source")))
        }
        for entry in allowed where entry.hasSuffix(".f32") {
          let header = try FileHandle(forReadingFrom: space.url.appendingPathComponent(entry))
            .read(upToCount: 8)
          #expect(header == Data("TAPE-F32".utf8), "round \(round): \(entry) is not whole")
        }
        #expect(added.subtracting(allowed).isEmpty, "round \(round): left \(added)")
        #expect(!after.contains { isTemporaryName($0) || $0.contains("partial") })
        // An identity record only beside the entry it goes with.
        for record in after where record.hasSuffix(".source") {
          let key = (record as NSString).lastPathComponent.split(separator: "-").prefix(3)
            .joined(separator: "-")
          #expect(after.contains { $0.hasSuffix(".f32") && $0.contains(key) }, "lone \(record)")
        }
      }
      #expect(interrupted >= 6, "only \(interrupted) of 8 rounds were still running when signalled")
    }

    // MARK: 5. Standard output that cannot be written

    /// Every command that prints, with stdout on /dev/full: exit 74, one line; an edit is
    /// committed all the same (and the line says so).
    @Test func aFullStandardOutputIsAnError() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let commands: [(arguments: [String], edits: Bool)] = [
        (["track", "add", file, "Extra"], true),
        (["clip", "add", file, "t3", "s1", "--at", "0", "--length", "1s"], true),
        (["clip", "split", file, "c1", "--at", "2s"], true),
        (["import", file, TestAudio.path("tone-mono-44k-24.aiff")], true),
        (["ls", file], false),
        (["ls", file, "--json"], false),
        (["history", file], false),
        (["render", file, "-o", space.path("x.wav")], false),
        (["new", space.path("other.tape"), "--json"], true),
        (["--help"], false),
        (["help", "render"], false),
      ]
      for (arguments, edits) in commands {
        let versions = try space.tape("history", file, "--json").stdout
        let result = try TapeBinary.run(
          URL(fileURLWithPath: "/bin/bash"),
          ["-c", "exec \"$0\" \"$@\" > /dev/full", TapeBinary.url.path] + arguments,
          environment: ["NO_COLOR": "1"])
        #expect(result.status == 74, "\(arguments): \(result.stderr)")
        #expect(
          result.stderr.hasPrefix(
            "error: could not write the result to standard output (No space left on device)"))
        #expect(result.stderr.split(separator: "\n").count == 1)
        if edits && arguments[0] != "new" {
          #expect(result.stderr.contains("the edit itself was committed as version"))
          #expect(try space.tape("history", file, "--json").stdout != versions)
        }
        if arguments[0] == "new" {
          #expect(
            result.stderr.hasSuffix("; \(space.path("other.tape")) was created all the same\n"))
        }
        if arguments[0] == "render" {
          #expect(result.stderr.hasSuffix("; \(space.path("x.wav")) was written all the same\n"))
        }
      }
    }

    /// Messages that cannot be written (stderr on /dev/full, or closed) are lost, never a crash:
    /// each command exits with its own code. (`FileHandle.write` used to trap: SIGILL, 132.)
    @Test func anUnwritableStandardErrorIsNotACrash() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let commands: [(arguments: [String], status: Int32)] = [
        (["ls", space.path("nosuch.tape")], 66),
        (["clip", "move", file, "c99", "--to", "1s"], 65),
        (["render", file, "-o", space.path("x.wav")], 0),
        (["play", file, "--device", "null", "--to", "0.2s"], 0),
        (["play", file, "--device", "no-such-device", "--to", "0.2s"], 74),
      ]
      for redirect in ["2>/dev/full", "2>&-"] {
        for (arguments, status) in commands {
          let result = try TapeBinary.run(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", "exec \"$0\" \"$@\" \(redirect)", TapeBinary.url.path] + arguments)
          #expect(result.status == status, "\(redirect) \(arguments): \(result.status)")
        }
      }
    }

    // MARK: 8. Readers are never blocked

    /// While another process holds the write lock, reading the head and an old version (ls,
    /// history, render) succeeds at once.
    @Test func readersAreNeverBlockedByAWriter() throws {
      let space = try Workspace()
      let file = try RenderCommandTests.project(in: space)
      let (holder, out, _) = try startTape(
        ["hold-lock", file, "--seconds", "20"], executable: TapeBinary.testing)
      defer {
        // SIGKILL: Foundation starts children with SIGTERM blocked.
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
      }
      #expect(String(decoding: out.fileHandleForReading.availableData, as: UTF8.self) == "locked\n")
      let start = ContinuousClock.now
      let environment = ["TAPE_BUSY_TIMEOUT": "30", "NO_COLOR": "1"]
      for arguments in [
        ["ls", file], ["ls", file, "--version", "3"], ["history", file, "--json"],
        ["render", file, "-o", space.path("head.wav")],
        ["render", file, "-o", space.path("old.wav"), "--version", "5", "--to", "1s"],
      ] {
        let result = try TapeBinary.run(arguments, environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
      }
      #expect(ContinuousClock.now - start < .seconds(15))
      #expect(holder.isRunning, "the lock was held throughout")
    }

    // MARK: 9. A read-only project

    /// A project of one 2 s clip, mode 444, in a folder of mode 555 ("leave this as it is"),
    /// with no decoded audio beside it (a reader must not decode into it).
    private func readOnlyProject(in space: Workspace) throws -> (folder: String, file: String) {
      let folder = space.path("locked")
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      let file = folder + "/song.tape"
      try space.tape("new", file)
      // The source beside the project, readable by all (the checkout's may not be).
      let source = folder + "/speech.wav"
      try FileManager.default.copyItem(
        atPath: TestAudio.path("speech-mono-48k-16.wav"), toPath: source)
      chmod(source, 0o644)
      try space.tape("import", file, source)
      try space.tape("track", "add", file, "Voice")
      try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "2s")
      try FileManager.default.removeItem(atPath: file + "-cache")
      try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file)
      try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder)
      return (folder, file)
    }

    /// As nobody: a project owned by root, mode 444, in a folder of mode 555, can be listed,
    /// its history shown and rendered elsewhere, leaving no file in its folder; an edit fails
    /// in one line with exit 77; the owner's next edit works.
    @Test(.enabled(if: isRoot, "needs root: a project owned by root, read as nobody"))
    func aReadOnlyProjectCanBeReadByAnyone() throws {
      let space = try Workspace(reachableByOthers: true)
      let (folder, file) = try readOnlyProject(in: space)
      defer {
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder)
      }
      let before = listing(folder)
      let bytes = try Data(contentsOf: URL(fileURLWithPath: file))

      // nobody's own places: a copy of tape it may run, and a folder for output and cache.
      let elsewhere = space.path("nobody")
      try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
      chown(elsewhere, 65_534, 65_534)
      let binary = elsewhere + "/tape"
      try FileManager.default.copyItem(atPath: TapeBinary.url.path, toPath: binary)
      chmod(binary, 0o755)
      func asNobody(_ arguments: [String]) throws -> TapeBinary.Result {
        try TapeBinary.run(
          URL(fileURLWithPath: "/usr/bin/setpriv"),
          ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments,
          environment: ["NO_COLOR": "1", "HOME": elsewhere, "XDG_CACHE_HOME": elsewhere + "/cache"])
      }
      for arguments in [
        ["ls", file], ["ls", file, "--json"], ["history", file],
        ["render", file, "-o", elsewhere + "/mix.wav"],
      ] {
        let result = try asNobody(arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
      }
      let edit = try asNobody(["track", "add", file, "Mine"])
      #expect(edit.status == 77)
      #expect(edit.stderr.hasPrefix("error: \(file) is read-only: "))
      #expect(edit.stderr.split(separator: "\n").count == 1)
      let undo = try asNobody(["undo", file])
      #expect(undo.status == 77)
      #expect(listing(folder) == before)
      #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == bytes)
      #expect(listing(elsewhere + "/cache/tape").contains { $0.hasSuffix(".f32") })
      // The owner (root) edits as before.
      try space.tape("track", "add", file, "Owner's")
    }

    /// A read-only project's audio goes to the user's cache; when that cannot be made (a
    /// service whose home does not exist), the render says so and names the fix, instead of
    /// calling the missing folder "not only yours" (found by a user trial); with the fix it
    /// renders.
    @Test func aUserCacheThatCannotBeMadeIsSaidSo() throws {
      let space = try Workspace()
      let (folder, file) = try readOnlyProject(in: space)
      defer {
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder)
      }
      // A home that cannot be made, even by root: its parent is a file.
      try Data().write(to: URL(fileURLWithPath: space.path("a-file")))
      let home = space.path("a-file") + "/home"
      let result = try TapeBinary.run(
        ["render", file, "-o", space.path("mix.wav")],
        environment: ["NO_COLOR": "1", "HOME": home, "XDG_CACHE_HOME": ""])
      #expect(result.status == 74)
      #expect(
        result.stderr
          == "error: the decoded-audio cache \(home)/.cache/tape is unusable: the project's folder cannot be written, so its audio is decoded into your own cache, which does not exist and cannot be made (Not a directory); set XDG_CACHE_HOME to a folder you can write\n"
      )
      #expect(FileIdentity(path: space.path("mix.wav")) == nil)
      let fixed = try TapeBinary.run(
        ["render", file, "-o", space.path("mix.wav")],
        environment: ["NO_COLOR": "1", "HOME": home, "XDG_CACHE_HOME": space.path("cache")])
      #expect(fixed.status == 0, "\(fixed.stderr)")
    }

    /// Root passes every permission check, but a project of mode 444 in a folder of mode 555
    /// says nobody meant files to be written there: playing it (which would follow edits
    /// through a log it creates) and rendering it, as root, leave the folder as it was.
    @Test(.enabled(if: isRoot, "needs root"))
    func rootReadingAReadOnlyFolderCreatesNothing() throws {
      let space = try Workspace()
      let (folder, file) = try readOnlyProject(in: space)
      defer {
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder)
      }
      let before = listing(folder)
      let environment = ["XDG_CACHE_HOME": space.path("cache")]
      for arguments in [
        ["play", file, "--device", "null", "--to", "0.2s"], ["ls", file],
        ["render", file, "-o", space.path("mix.wav")],
      ] {
        let result = try TapeBinary.run(arguments, environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        #expect(listing(folder) == before, "\(arguments) wrote into the read-only folder")
      }
      // Following needs the log: watch says why it cannot, as a permission (77).
      let watch = try TapeBinary.run(["watch", file], environment: ["NO_COLOR": "1"])
      #expect(watch.status == 77)
      #expect(watch.stderr.hasPrefix("error: \(file) can only be read here"))
      #expect(listing(folder) == before)
    }
  }
}
