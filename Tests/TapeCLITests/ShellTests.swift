import Foundation
import Testing

/// `tape shell`, driven through pipes as a script or a controller drives it.
@Suite("tape shell: a line, a version, at once")
struct ShellTests {
  /// A project with a source (s1, 3.1 s of speech), a track t1 and a clip c1 on it (0–1 s).
  static func project(in space: Workspace) throws -> String {
    let song = space.path("song.tape")
    try space.tape("new", song)
    try space.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try space.tape("track", "add", song, "Voice")
    try space.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "1s")
    return song
  }

  /// Each line is answered before the next is written (the shell never waits for the end of
  /// its input), is its own version with its own label, in order, and `tape undo` takes back
  /// the last line alone.
  @Test func eachLineIsAVersionAnsweredAtOnce() throws {
    let space = try Workspace()
    let song = try Self.project(in: space)
    let shell = try ShellProcess(song)
    let lines = [
      "clip set c1 --gain -3dB", "track add Pad --as pad", "clip add @pad s1 --at 2s --length 1s",
      "clip split c1 --at 0.5s", "track set t1 --gain -2 -m 'Quieter voice'",
    ]
    var answers: [String] = []
    for line in lines {
      try shell.send(line)
      answers.append(try shell.readLine())
    }
    let (status, stderr) = try shell.finish()
    #expect(status == 0, "\(stderr)")
    #expect(stderr == "")
    #expect(
      answers == [
        "line 1: v5", "line 2: v6 t2", "line 3: v7 c2", "line 4: v8 c1 c3", "line 5: v9",
      ])
    let history = try #require(
      try parseJSON(space.tape("history", song, "--json").stdout) as? [String: Any])
    let versions = try #require(history["versions"] as? [[String: Any]])
    #expect(
      versions.suffix(5).map { $0["label"] as? String } == [
        "Set c1 gain -3dB", "Add track Pad", "Add s1 to t2 at 2s", "Split c1 at 0.5s",
        "Quieter voice",
      ])
    #expect(versions.suffix(5).map { $0["version"] as? Int } == [5, 6, 7, 8, 9])
    #expect(try space.tape("undo", song).stdout.hasPrefix("undo: back to v8 "))
    #expect(!FileManager.default.fileExists(atPath: song + "-wal"))
  }

  /// A bad line says `error: line N: …` on stderr, changes nothing, and the next lines are
  /// applied; blank lines and comments are skipped (and counted); the exit status is the first
  /// failure's code. The errors are those of `tape batch`, naming the shell.
  @Test func aBadLineChangesNothingAndTheShellGoesOn() throws {
    let space = try Workspace()
    let song = try Self.project(in: space)
    let script = """
      clip set c1 --gain -1dB

      # a comment
      clip set c9 --gain -1dB
      clip set c1 --gain
      ls
      track add X --help
      clip set c1 --gain -1dB
      clip set c1 --gain -2dB   # changes it
      'unclosed
      clip move c1 --to 1s --as moved
      """
    let result = try ShellProcess.run(song, input: script)
    #expect(result.status == 65)
    #expect(result.stdout == "line 1: v5\nline 8: v5\nline 9: v6\n")
    #expect(
      result.stderr == """
        error: line 4: no clip c9 in this project; 'tape ls' lists the clips
        error: line 5: missing value for '--gain'; see: tape clip set --help
        error: line 6: 'ls' is not an editing command; the shell takes clip, track, fx, import, relink, cut, insert, split, paste, master, marker, send
        error: line 7: --help has no place in the shell; run 'tape track add --help' to read the help
        note: line 8: nothing changed; the project stays at version 5
        error: line 10: a ' quote is not closed
        error: line 11: --as moved: this line creates no id to name

        """)
    #expect(try space.head(of: song) == 6)
    // The same errors from a batch, which names itself.
    let batch = try TapeBinary.run(
      URL(fileURLWithPath: "/bin/sh"),
      ["-c", "printf 'ls\\n' | \"$0\" batch \"$1\"", TapeBinary.url.path, song],
      environment: ["NO_COLOR": "1"])
    #expect(
      batch.stderr
        == "error: line 1: 'ls' is not an editing command; a batch takes clip, track, fx, import, relink, cut, insert, split, paste, master, marker, send\n"
    )
  }

  /// `--json`: one object per line that edits, errors included (also said on stderr), the
  /// version the head is at after it, the ids it made, its label (null when no version was
  /// made) and whether it changed anything.
  @Test func jsonIsOneObjectPerLine() throws {
    let space = try Workspace()
    let song = try Self.project(in: space)
    let result = try ShellProcess.run(
      song, input: "clip split c1 --at 0.5s\n\nclip set c2 --gain 0\nclip set c7 --gain -1\n",
      arguments: ["--json"])
    #expect(result.status == 65)
    let objects = result.stdout.split(separator: "\n").map(String.init)
    #expect(
      objects == [
        #"{"line": 1, "version": 5, "ids": ["c1", "c2"], "label": "Split c1 at 0.5s", "changed": true, "error": null}"#,
        #"{"line": 3, "version": 5, "ids": [], "label": null, "changed": false, "error": null}"#,
        #"{"line": 4, "version": 5, "ids": [], "label": null, "changed": false, "error": {"code": 65, "message": "no clip c7 in this project; 'tape ls' lists the clips"}}"#,
      ])
    #expect(result.stderr.contains("error: line 4: no clip c7 in this project"))
  }

  /// `--as NAME` names an id for every later line of the session; a name is given once; a
  /// word `@NAME` that no line named is a marker or a clip's name, as in a batch.
  @Test func namesCarryAcrossLines() throws {
    let space = try Workspace()
    let song = try Self.project(in: space)
    try space.tape("marker", "add", song, "2s", "chorus")
    let shell = try ShellProcess(song)
    try shell.send("track add Drums --as drums")
    #expect(try shell.readLine() == "line 1: v6 t2")
    try shell.send("clip add @drums s1 --at @chorus --length 0.5s --as hit")
    #expect(try shell.readLine() == "line 2: v7 c2")
    try shell.send("clip copy @hit --to 3s --track @drums")
    #expect(try shell.readLine() == "line 3: v8 c3")
    try shell.send("track add Again --as drums")
    try shell.send("clip set @nothing --gain -1")
    try shell.send("clip set c2 --name intro")
    #expect(try shell.readLine() == "line 6: v9")
    try shell.send("clip set @intro --gain -6dB")
    #expect(try shell.readLine() == "line 7: v10")
    let (status, stderr) = try shell.finish()
    #expect(status == 64)
    #expect(
      stderr == """
        error: line 4: @drums is already named by an earlier line
        error: line 5: @nothing is not named by an earlier line (name an id with --as NAME), nor a marker ('tape marker ls' lists them)

        """)
    let listed = try #require(
      try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    let tracks = try #require(listed["tracks"] as? [[String: Any]])
    let clips = try #require(tracks.last?["clips"] as? [[String: Any]])
    #expect(clips.map { $0["id"] as? String } == ["c2", "c3"])
    #expect(clips.map { $0["timelineStart"] as? Int } == [96_000, 144_000])
    #expect(clips.map { $0["gainDB"] as? Double } == [-6, 0])
  }

  /// Another process edits the project between two lines: the shell holds no lock while it
  /// waits (an edit with no patience for a lock at all goes through), and its next line sees
  /// that edit (a nudge from where the other process put the clip).
  @Test func anotherProcessEditsBetweenLines() throws {
    let space = try Workspace()
    let song = try Self.project(in: space)
    let shell = try ShellProcess(song)
    try shell.send("clip set c1 --gain -1dB")
    #expect(try shell.readLine() == "line 1: v5")
    try space.tape(
      ["clip", "move", song, "c1", "--to", "2s"], environment: ["TAPE_BUSY_TIMEOUT": "0"])
    try space.tape(
      ["track", "add", song, "Other"], environment: ["TAPE_BUSY_TIMEOUT": "0"])
    try shell.send("clip move c1 --to +0.5s")
    #expect(try shell.readLine() == "line 2: v8")
    try shell.send("track add Mine")
    #expect(try shell.readLine() == "line 3: v9 t3")
    let (status, stderr) = try shell.finish()
    #expect(status == 0, "\(stderr)")
    let listed = try #require(
      try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    let tracks = try #require(listed["tracks"] as? [[String: Any]])
    #expect(tracks.map { $0["name"] as? String } == ["Voice", "Other", "Mine"])
    let clip = try #require((tracks.first?["clips"] as? [[String: Any]])?.first)
    #expect(clip["timelineStart"] as? Int == 120_000)
    #expect(clip["gainDB"] as? Double == -1)
  }

  /// Ctrl-C, SIGTERM and SIGHUP while the shell waits for a line: it closes the project (no
  /// log is left beside it) and ends with that signal, every line before it committed. The
  /// end of input closes it too, with a last line that has no newline applied.
  @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
  func aSignalClosesTheProject(signal: Int32) throws {
    let space = try Workspace()
    let song = try Self.project(in: space)
    let shell = try ShellProcess(song)
    try shell.send("clip set c1 --gain -4dB")
    #expect(try shell.readLine() == "line 1: v5")
    #expect(FileManager.default.fileExists(atPath: song + "-wal"), "the shell keeps it open")
    kill(shell.process.processIdentifier, signal)
    shell.process.waitUntilExit()
    #expect(shell.process.terminationReason == .uncaughtSignal)
    #expect(shell.process.terminationStatus == signal)
    #expect(!FileManager.default.fileExists(atPath: song + "-wal"))
    #expect(!FileManager.default.fileExists(atPath: song + "-shm"))
    #expect(try space.head(of: song) == 5)
  }

  @Test func theEndOfInputClosesTheProject() throws {
    let space = try Workspace()
    let song = try Self.project(in: space)
    let result = try ShellProcess.run(song, input: "clip set c1 --gain -4dB\ntrack add Last")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "line 1: v5\nline 2: v6 t2\n")
    #expect(!FileManager.default.fileExists(atPath: song + "-wal"))
    let empty = try ShellProcess.run(song, input: "")
    #expect(empty.status == 0 && empty.stdout == "" && empty.stderr == "")
  }

  /// A result that cannot be written (stdout is a full disk) stops the shell with exit 74,
  /// saying the line was committed all the same.
  @Test func aResultThatCannotBeWrittenStopsTheShell() throws {
    let space = try Workspace()
    let song = try Self.project(in: space)
    let result = try TapeBinary.run(
      URL(fileURLWithPath: "/bin/sh"),
      [
        "-c",
        "printf 'clip set c1 --gain -1\\nclip set c1 --gain -2\\n' | \"$0\" shell \"$1\" >/dev/full",
        TapeBinary.url.path, song,
      ], environment: ["NO_COLOR": "1"])
    #expect(result.status == 74)
    #expect(
      result.stderr
        == "error: could not write the result to standard output (No space left on device); line 1 was committed all the same, as version 5\n"
    )
    #expect(try space.head(of: song) == 5)
    #expect(!FileManager.default.fileExists(atPath: song + "-wal"))
  }

  /// The project deleted (or replaced) while the shell has it open: the next line is not
  /// written into the file that is gone; the shell stops, saying so (exit 66).
  @Test func aProjectDeletedUnderTheShellStopsIt() throws {
    let space = try Workspace()
    let song = try Self.project(in: space)
    let shell = try ShellProcess(song)
    try shell.send("clip set c1 --gain -1dB")
    #expect(try shell.readLine() == "line 1: v5")
    try FileManager.default.removeItem(atPath: song)
    try shell.send("clip set c1 --gain -2dB")
    let (status, stderr) = try shell.finish()
    #expect(status == 66)
    #expect(
      stderr
        == "error: \(song) was deleted or replaced while the shell had it open; line 2 and those after it were not applied; start a shell on the new one\n"
    )
  }

  /// A project that cannot be opened is the error of any edit, and no line is read.
  @Test func aMissingProjectIsOneError() throws {
    let space = try Workspace()
    let result = try ShellProcess.run(space.path("nothing.tape"), input: "track add A\n")
    #expect(result.status == 66)
    #expect(result.stdout == "")
    #expect(result.stderr.hasPrefix("error: "), "\(result.stderr)")
  }
}

/// A `tape shell FILE` process whose standard input and output are pipes this test holds.
final class ShellProcess {
  let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private let errors = Pipe()
  private var buffered: [UInt8] = []

  init(_ project: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
    process.executableURL = TapeBinary.url
    process.arguments = ["shell", project] + arguments
    var env = ProcessInfo.processInfo.environment
    env.merge(environment) { $1 }
    env["NO_COLOR"] = "1"
    process.environment = env
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
  }

  deinit {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
  }

  func send(_ line: String) throws {
    try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
  }

  /// The next line of its stdout, waiting at most `seconds` for it.
  func readLine(within seconds: Double = 20) throws -> String {
    let deadline = Date().addingTimeInterval(seconds)
    let descriptor = output.fileHandleForReading.fileDescriptor
    while true {
      if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
        defer { buffered.removeSubrange(...newline) }
        return String(decoding: buffered[..<newline], as: UTF8.self)
      }
      let left = Int32(max(0, deadline.timeIntervalSinceNow * 1_000))
      var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      guard left > 0, poll(&waiting, 1, left) > 0 else {
        throw ShellTestError(message: "no line from tape shell within \(seconds) s")
      }
      var chunk = [UInt8](repeating: 0, count: 4_096)
      let count = read(descriptor, &chunk, chunk.count)
      guard count > 0 else { throw ShellTestError(message: "tape shell closed its output") }
      buffered += chunk[..<count]
    }
  }

  /// Closes its input and waits for it to end: its exit status and what it said on stderr.
  func finish() throws -> (status: Int32, stderr: String) {
    try input.fileHandleForWriting.close()
    let said = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: said, as: UTF8.self))
  }

  /// `tape shell project ARGUMENTS` with `input` on its standard input, to its end.
  static func run(
    _ project: String, input text: String, arguments: [String] = []
  ) throws -> TapeBinary.Result {
    let shell = try ShellProcess(project, arguments: arguments)
    try shell.input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    try shell.input.fileHandleForWriting.close()
    let out = shell.output.fileHandleForReading.readDataToEndOfFile()
    let err = shell.errors.fileHandleForReading.readDataToEndOfFile()
    shell.process.waitUntilExit()
    return TapeBinary.Result(
      status: shell.process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
      stderr: String(decoding: err, as: UTF8.self))
  }
}

struct ShellTestError: Error, CustomStringConvertible {
  let message: String
  var description: String { message }
}
