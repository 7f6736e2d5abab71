import Foundation
import SafeFiles
import Testing

extension ManyProcessesTests {
  /// A project is one file: whatever process closes it last (a player, a watcher, scrub, a
  /// reader, an editor), however it ends, the file alone holds every committed version, and a
  /// log that is not the file's is never applied to it (issue 43, item 1).
  @Suite("A project stays one file", .timeLimit(.minutes(10)))
  struct OneFileTests {
    /// The project: `s.tape` with a source, track A and a 2-second clip c1 on it (four
    /// versions), `backup.tape` a `cp` of it, and `other.tape` another project (version 2,
    /// the piano imported).
    struct Fixture {
      let space: Workspace
      let file: String
      let backup: String
      let other: String

      init(reachableByOthers: Bool = false) throws {
        space = try Workspace(reachableByOthers: reachableByOthers)
        file = space.path("s.tape")
        backup = space.path("backup.tape")
        other = space.path("other.tape")
        try space.tape("new", file)
        try space.tape("import", file, TestAudio.path("speech-mono-48k-16.wav"))
        try space.tape("track", "add", file, "A")
        try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "2s")
        try cp(file, backup)
        try space.tape("new", other)
        try space.tape("import", other, TestAudio.path("piano-stereo-44k-24.wav"))
      }

      /// The two edits the issue makes while the follower runs: versions 5 and 6.
      func edit() throws {
        try space.tape("clip", "set", file, "c1", "--gain", "-3dB")
        try space.tape("track", "add", file, "B")
      }
    }

    /// What `tape ls --json` says of a project, in a few words: its version, its tracks'
    /// names, each clip's gain, and its sources' file names.
    struct Seen: Equatable, CustomStringConvertible {
      let version: Int
      let tracks: [String]
      let gains: [Double]
      let sources: [String]

      var description: String { "v\(version) tracks \(tracks) gains \(gains) sources \(sources)" }

      static let edited = Seen(
        version: 6, tracks: ["A", "B"], gains: [-3], sources: ["speech-mono-48k-16.wav"])
      static let before = Seen(
        version: 4, tracks: ["A"], gains: [0], sources: ["speech-mono-48k-16.wav"])
      static let other = Seen(
        version: 2, tracks: [], gains: [], sources: ["piano-stereo-44k-24.wav"])
    }

    /// `tape ls FILE --json`, summed up; the whole result too (its stderr says what was set
    /// aside).
    static func seen(_ space: Workspace, _ file: String) throws -> (Seen, TapeBinary.Result) {
      let result = try space.tape("ls", file, "--json")
      let json = try #require(try parseJSON(result.stdout) as? [String: Any])
      let tracks = try #require(json["tracks"] as? [[String: Any]])
      let sources = try #require(json["sources"] as? [[String: Any]])
      return (
        Seen(
          version: try #require(json["version"] as? Int),
          tracks: tracks.compactMap { $0["name"] as? String },
          gains: tracks.flatMap { ($0["clips"] as? [[String: Any]]) ?? [] }
            .compactMap { $0["gainDB"] as? Double },
          sources: sources.compactMap { ($0["path"] as? String)?.split(separator: "/").last }
            .map(String.init)),
        result
      )
    }

    /// No log with frames beside `file`: none, or an empty one.
    static func expectOneFile(_ file: String, sourceLocation: SourceLocation = #_sourceLocation) {
      let log = FileIdentity(path: file + "-wal")
      #expect(
        log == nil || log?.size == 0, "\(file)-wal holds \(log?.size ?? 0) bytes",
        sourceLocation: sourceLocation)
    }

    /// The processes that follow a project and are usually the last to close it.
    enum Follower: String, CaseIterable, CustomTestStringConvertible {
      case play, watch, scrub
      var testDescription: String { rawValue }
    }

    /// How a follower is stopped.
    enum Stop: String, CaseIterable, CustomTestStringConvertible {
      case interrupt, terminate, quitKey, kill
      var testDescription: String { rawValue }
      var signal: Int32? {
        switch self {
        case .interrupt: SIGINT
        case .terminate: SIGTERM
        case .quitKey: nil
        case .kill: SIGKILL
        }
      }
    }

    /// A follower of `file`, started and following (its inotify watch made).
    final class Running {
      let pid: pid_t
      let process: Process?
      let terminal: Tmux?

      init(_ follower: Follower, _ file: String) throws {
        switch follower {
        case .play, .watch:
          let arguments =
            follower == .play ? ["play", file, "--loop", "--device", "null"] : ["watch", file]
          let (process, _, _) = try startTape(arguments)
          self.process = process
          terminal = nil
          pid = process.processIdentifier
        case .scrub:
          let terminal = try Tmux(width: 100, height: 24)
          try terminal.start(
            "\(shellQuoted(TapeBinary.url.path)) scrub \(shellQuoted(file)) --device null; sleep 60"
          )
          self.terminal = terminal
          process = nil
          pid = try Self.waitForProcess(["scrub", file])
        }
        try Self.waitUntilFollowing(pid)
      }

      deinit {
        if isRunning { kill(pid, SIGKILL) }
        terminal?.kill()
      }

      var isRunning: Bool {
        if let process { return process.isRunning }
        return FileManager.default.fileExists(atPath: "/proc/\(pid)")
      }

      /// Stops it as `stop` says and waits for it to end.
      func stop(_ stop: Stop) throws {
        if let signal = stop.signal {
          kill(pid, signal)
        } else if let terminal {
          try terminal.send("q")
        } else {
          // play reads q from a terminal only: Ctrl-C is its quit there.
          kill(pid, SIGINT)
        }
        let deadline = Date().addingTimeInterval(60)
        while isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!isRunning, "still running a minute after \(stop)")
        process?.waitUntilExit()
      }

      /// The pid of the process whose arguments include `words`, waiting up to a minute.
      static func waitForProcess(_ words: [String]) throws -> pid_t {
        let deadline = Date().addingTimeInterval(60)
        repeat {
          for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(name),
              let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
            else { continue }
            let arguments = line.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if arguments.first?.hasSuffix("/tape") == true,
              words.allSatisfy(arguments.contains)
            {
              return pid
            }
          }
          Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        throw TmuxError(message: "no process \(words) started")
      }

      /// Waits until `pid` has its inotify watch (it follows the project's commits), and a
      /// moment more for its first look.
      static func waitUntilFollowing(_ pid: pid_t) throws {
        let deadline = Date().addingTimeInterval(60)
        let files = FileManager.default
        repeat {
          let descriptors = (try? files.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
          if descriptors.contains(where: {
            (try? files.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)"))
              == "anon_inode:inotify"
          }) {
            Thread.sleep(forTimeInterval: 0.3)
            return
          }
          Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        throw TmuxError(message: "process \(pid) never followed the project")
      }
    }

    /// The sequence, line by line, with play, watch and scrub as the last process,
    /// stopped by Ctrl-C, SIGTERM and (scrub) its q key: the edits made meanwhile are in the
    /// file alone; a restored backup reads as the backup; another project copied over reads as
    /// that project.
    @Test(
      arguments: [
        (Follower.play, Stop.interrupt), (.play, .terminate), (.watch, .interrupt),
        (.watch, .terminate), (.scrub, .quitKey), (.scrub, .interrupt), (.scrub, .terminate),
      ])
    func theLastProcessLeavesOneFile(follower: Follower, stop: Stop) throws {
      let fixture = try Fixture()
      let space = fixture.space
      let running = try Running(follower, fixture.file)
      try fixture.edit()
      try running.stop(stop)
      Self.expectOneFile(fixture.file)

      let copy = space.path("c.tape")
      try cp(fixture.file, copy)
      #expect(try Self.seen(space, copy).0 == .edited)

      try cp(fixture.backup, fixture.file)
      let (restored, said) = try Self.seen(space, fixture.file)
      #expect(restored == .before)
      #expect(said.stderr.isEmpty, "\(said.stderr)")

      try cp(fixture.other, fixture.file)
      #expect(try Self.seen(space, fixture.file).0 == .other)
      Self.expectOneFile(fixture.file)
    }

    /// kill -9 of each follower, and of an editor with commits in its log: the next command
    /// has every committed version, and as the last to close the project it leaves it one file.
    @Test(arguments: Follower.allCases)
    func aKilledFollowerLosesNothing(follower: Follower) throws {
      let fixture = try Fixture()
      let running = try Running(follower, fixture.file)
      try fixture.edit()
      try running.stop(.kill)
      #expect(FileIdentity(path: fixture.file + "-wal").map { $0.size > 0 } == true)
      #expect(try Self.seen(fixture.space, fixture.file).0 == .edited)
      Self.expectOneFile(fixture.file)
      let copy = fixture.space.path("c.tape")
      try cp(fixture.file, copy)
      #expect(try Self.seen(fixture.space, copy).0 == .edited)
    }

    @Test func aKilledEditorLosesNothing() throws {
      let space = try Workspace()
      let file = space.path("loop.tape")
      try space.tape("new", file)
      let acknowledged = try CrashRound.run(song: file, killAfter: .milliseconds(1_500))
      let commits = acknowledged.filter { $0.hasPrefix("commit ") }.compactMap {
        Int($0.dropFirst(7))
      }
      #expect(!commits.isEmpty, "\(acknowledged)")
      #expect(FileIdentity(path: file + "-wal").map { $0.size > 0 } == true)
      // The next command, a reader, has every acknowledged commit, and is the last to close it.
      func versions(_ file: String) throws -> (head: Int, versions: Set<Int>) {
        let history = try #require(
          try parseJSON(space.tape("history", file, "--json").stdout) as? [String: Any])
        let versions = try #require(history["versions"] as? [[String: Any]])
        return (
          try #require(history["head"] as? Int), Set(versions.compactMap { $0["version"] as? Int })
        )
      }
      let seen = try versions(file)
      #expect(Set(commits).isSubset(of: seen.versions))
      Self.expectOneFile(file)
      let copy = space.path("copy.tape")
      try cp(file, copy)
      let copied = try versions(copy)
      #expect(copied.head == seen.head && copied.versions == seen.versions)
      let check = try TapeBinary.run(TapeBinary.testing, ["verify", copy])
      #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    /// A command that follows nothing, stopped by a signal while a log with frames lies beside
    /// the project (a player killed earlier left it): as the last to close the project, it
    /// leaves it one file. The render writes into a pipe that is never read, so it blocks there.
    @Test(arguments: [SIGINT, SIGTERM])
    func aReaderStoppedBySignalLeavesOneFile(signal: Int32) throws {
      let fixture = try Fixture()
      let running = try Running(.play, fixture.file)
      try fixture.edit()
      try running.stop(.kill)
      #expect(FileIdentity(path: fixture.file + "-wal").map { $0.size > 0 } == true)
      let pipe = fixture.space.path("pipe.wav")
      #expect(mkfifo(pipe, 0o644) == 0)
      let reader = open(pipe, O_RDONLY | O_NONBLOCK)
      defer { close(reader) }
      let (render, _, errors) = try startTape(
        ["render", fixture.file, "-o", pipe, "--format", "wav", "--bits", "32f"])
      // Blocked: the pipe is full.
      var waiting: Int32 = 0
      let deadline = Date().addingTimeInterval(60)
      while waiting < 60_000, render.isRunning, Date() < deadline {
        _ = ioctl(reader, UInt(FIONREAD), &waiting)
        Thread.sleep(forTimeInterval: 0.02)
      }
      #expect(render.isRunning)
      kill(render.processIdentifier, signal)
      render.waitUntilExit()
      #expect(render.terminationReason == .uncaughtSignal)
      #expect(render.terminationStatus == signal)
      let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      #expect(said.hasSuffix("error: render interrupted; \(pipe) was not written\n"), "\(said)")
      Self.expectOneFile(fixture.file)
      let copy = fixture.space.path("c.tape")
      try cp(fixture.file, copy)
      #expect(try Self.seen(fixture.space, copy).0 == .edited)
    }

    /// A log that a killed player left, beside a file that was replaced while no process had
    /// it open, is never applied: set aside under a name that says so (its bytes kept), said
    /// in one line, and the project reads as the file now there. Replaced by a `cp` of the
    /// backup (the very file the log started from), by another project, by `mv`, and by `rm`
    /// and `tape new`.
    @Test(arguments: ["backup", "other", "moved", "new"])
    func aLogOfAnotherFileIsSetAside(how: String) throws {
      let fixture = try Fixture()
      let space = fixture.space
      let running = try Running(.play, fixture.file)
      try fixture.edit()
      try running.stop(.kill)
      let log = try Data(contentsOf: URL(fileURLWithPath: fixture.file + "-wal"))
      #expect(!log.isEmpty)
      let expected: Seen
      switch how {
      case "backup":
        try cp(fixture.backup, fixture.file)
        expected = .before
      case "other":
        try cp(fixture.other, fixture.file)
        expected = .other
      case "moved":
        // A copy of the backup, moved over the file.
        let copy = space.path("copy.tape")
        try cp(fixture.backup, copy)
        #expect(rename(copy, fixture.file) == 0)
        expected = .before
      default:
        try FileManager.default.removeItem(atPath: fixture.file)
        let made = try space.tape("new", fixture.file)
        #expect(made.stderr.contains("s.tape-wal was written for another file"), "\(made.stderr)")
        expected = Seen(version: 1, tracks: [], gains: [], sources: [])
      }
      let (seen, result) = try Self.seen(space, fixture.file)
      #expect(seen == expected)
      let aside = try #require(
        try FileManager.default.contentsOfDirectory(atPath: space.url.path)
          .first { $0.hasPrefix("s.tape-wal.unapplied-") })
      #expect(try Data(contentsOf: URL(fileURLWithPath: space.path(aside))) == log)
      if how != "new" {
        #expect(
          result.stderr
            == "note: s.tape-wal was written for another file: \(fixture.file) was replaced while no tape process had it open; the log was set aside, unapplied, as \(aside), and \(fixture.file) reads as the file now there\n"
        )
      }
      #expect(FileIdentity(path: fixture.file + "-shm") == nil)
      // Said once: the next command finds nothing to say.
      #expect(try Self.seen(space, fixture.file).1.stderr.isEmpty)
      try space.tape("track", "add", fixture.file, "Next")
      #expect(try Self.seen(space, fixture.file).0.version == expected.version + 1)
    }

    /// Where the project's folder may not be written (a reader as nobody), a log its owner's
    /// killed player left is read (the edits are there) and neither folded nor set aside, in
    /// silence; a log of another file there is refused in one line, and nothing changes.
    @Test(.enabled(if: isRoot, "needs root: a project owned by root, read as nobody"))
    func aReaderThatCannotWriteChangesNothing() throws {
      let fixture = try Fixture(reachableByOthers: true)
      let space = fixture.space
      let running = try Running(.play, fixture.file)
      try fixture.edit()
      try running.stop(.kill)
      for name in ["s.tape", "s.tape-wal", "s.tape-shm"] { chmod(space.path(name), 0o644) }
      let binary = try copyForNobody(space)
      func listAsNobody() throws -> TapeBinary.Result {
        try TapeBinary.run(
          URL(fileURLWithPath: "/usr/bin/setpriv"),
          ["--reuid=65534", "--regid=65534", "--clear-groups", binary, "ls", fixture.file],
          environment: ["NO_COLOR": "1", "XDG_CACHE_HOME": space.path("nobody-cache")])
      }
      let before = listing(space.url.path)
      let bytes = try space.fingerprint("s.tape")
      let read = try listAsNobody()
      #expect(read.status == 0, "\(read.stderr)")
      #expect(read.stderr.isEmpty, "\(read.stderr)")
      #expect(read.stdout.hasPrefix("version 6 "))
      #expect(listing(space.url.path) == before)
      #expect(try space.fingerprint("s.tape") == bytes)

      try cp(fixture.other, fixture.file)
      let replaced = try space.fingerprint("s.tape")
      let refused = try listAsNobody()
      #expect(refused.status != 0)
      #expect(
        refused.stderr
          == "error: cannot read \(fixture.file): its log s.tape-wal was written for another file (\(fixture.file) was replaced while no tape process had it open), so it is not applied; its owner can run any tape command on it to set the log aside, or move \(fixture.file)-wal away\n"
      )
      #expect(listing(space.url.path) == before)
      #expect(try space.fingerprint("s.tape") == replaced)
    }

    /// `tape backup` while a player follows the project and another process edits it: the
    /// copy holds every version committed when it began, passes the store's own check, reads
    /// on its own (one file), and is never written over an existing file. Restored over the
    /// original after a kill left a log, the log is not applied to it.
    @Test func aBackupIsAConsistentCopyOfAnOpenProject() throws {
      let fixture = try Fixture()
      let space = fixture.space
      let running = try Running(.play, fixture.file)
      try fixture.edit()
      let copy = space.path("saved.tape")
      let made = try space.tape("backup", fixture.file, copy, "--json")
      let report = try #require(try parseJSON(made.stdout) as? [String: Any])
      #expect(report["version"] as? Int == 6)
      #expect(report["backup"] as? String == copy)
      #expect((report["bytes"] as? Int) == FileIdentity(path: copy).map { Int($0.size) })
      Self.expectOneFile(copy)
      #expect(FileIdentity(path: copy + "-shm") == nil)
      #expect(try Self.seen(space, copy).0 == .edited)
      let check = try TapeBinary.run(TapeBinary.testing, ["verify", copy])
      #expect(check.status == 0, "\(check.stdout)\(check.stderr)")

      // Never over an existing file.
      let bytes = try Data(contentsOf: URL(fileURLWithPath: fixture.backup))
      let refused = try space.tape("backup", fixture.file, fixture.backup, status: 64)
      #expect(
        refused.stderr
          == "error: \(fixture.backup) already exists; choose another name or remove it first\n")
      #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.backup)) == bytes)

      // More edits, a kill: the log holds versions 7 and 8. The backup put back is read as
      // itself, version 6.
      try space.tape("track", "add", fixture.file, "C")
      try space.tape("track", "add", fixture.file, "D")
      try running.stop(.kill)
      try cp(copy, fixture.file)
      let (restored, said) = try Self.seen(space, fixture.file)
      #expect(restored == .edited)
      #expect(said.stderr.hasPrefix("note: s.tape-wal was written for another file"))
    }
  }
}

/// `cp FROM TO`, as a user copies a file: over an existing one in place, with the time of the
/// copy as its modification time.
func cp(_ from: String, _ to: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
  let result = try TapeBinary.run(URL(fileURLWithPath: "/bin/cp"), [from, to])
  #expect(result.status == 0, "cp: \(result.stderr)", sourceLocation: sourceLocation)
}

/// A copy of `tape` that nobody (uid 65534) may run, in `space` (the checkout may be in a
/// folder nobody may enter).
func copyForNobody(_ space: Workspace) throws -> String {
  let binary = space.path("tape-for-nobody")
  try FileManager.default.copyItem(atPath: TapeBinary.url.path, toPath: binary)
  chmod(binary, 0o755)
  return binary
}
