import ArgumentParser
import Foundation
import Playback
import SafeFiles
import Timeline
import TimelineStore

struct Demo: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "demo",
    abstract: "Build, edit, render and play a demo project, showing each command it runs.",
    discussion: """
      Cuts speech, piano, strings and a noise bed from TestAudio/ into a project in DIR, with \
      splits, moves, trims, fades of several curves, gains and pans; undoes, redoes, jumps back \
      in history and returns; renders DIR/mix.wav and plays it when an audio device opens.
      Example: tape demo /tmp/tape-demo
      """)

  @Argument(help: "Where to build the demo (created if needed).") var directory = "tape-demo"
  @Option(help: "The folder of test audio (default: TestAudio/ of this checkout).") var audio:
    String?
  @Flag(help: "Do not try to play the mix.") var noPlay = false
  @Option(help: "The ALSA device to play on.") var device = "default"

  func validate() throws {
    try RawArguments.requireUTF8Path(directory, "demo folder")
    if let audio { try RawArguments.requireUTF8Path(audio, "audio folder") }
  }

  func run() throws {
    Interrupt.install()
    try reportingErrors {
      let audioFolder = try findTestAudio()
      let folder = URL(fileURLWithPath: directory).standardizedFileURL.path
      try prepare(folder)
      let script = DemoScript(
        project: "\(folder)/demo.tape", mix: "\(folder)/mix.wav", audio: audioFolder)
      try script.run(play: noPlay ? nil : device)
      print(
        """

        The demo is in \(folder):
          demo.tape        the project (timeline and its whole undo history)
          mix.wav          the render
        Try next:
          tape ls \(script.project)
          tape clip move \(script.project) c2 --to 5s && tape render \(script.project) -o \(script.mix)
          tape undo \(script.project) --steps 3 && tape history \(script.project)
          tape play \(script.project)
        """)
    }
  }

  /// `TestAudio/` next to the current folder or above the `tape` binary (a build folder).
  private func findTestAudio() throws -> String {
    var candidates: [String] = []
    if let audio { candidates.append(audio) }
    candidates.append(FileManager.default.currentDirectoryPath + "/TestAudio")
    var binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    for _ in 0..<5 {
      binary.deleteLastPathComponent()
      candidates.append(binary.path + "/TestAudio")
    }
    let needed = "speech-mono-48k-16.wav"
    if let found = candidates.first(where: {
      FileManager.default.fileExists(atPath: "\($0)/\(needed)")
    }) {
      return URL(fileURLWithPath: found).standardizedFileURL.path
    }
    throw UsageError(
      message:
        audio.map { "\($0) holds no \(needed); pass --audio the repository's TestAudio folder" }
        ?? "cannot find the demo audio (TestAudio/); run tape demo from the repository, or pass --audio PATH/TO/TestAudio"
    )
  }

  /// Creates the folder; replaces only a previous demo's own files in it.
  private func prepare(_ folder: String) throws {
    do {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    } catch {
      throw UsageError(
        message: "cannot create \(folder) (\(error.localizedDescription)); choose another DIR")
    }
    let previous = ["demo.tape", "demo.tape-wal", "demo.tape-shm", "mix.wav"]
      .map { "\(folder)/\($0)" }
      .filter { FileManager.default.fileExists(atPath: $0) }
    if !previous.isEmpty {
      FileManager.default.writeErrorLine("replacing the previous demo in \(folder)")
      for path in previous { try FileManager.default.removeItem(atPath: path) }
    }
  }
}

/// The demo's commands, run in this process through the same parser a shell would use, each
/// shown before its output.
struct DemoScript {
  let project: String
  let mix: String
  let audio: String

  func run(play device: String?) throws {
    let p = project
    let file = { (name: String) in "\(self.audio)/\(name)" }
    section("A project and its sources")
    try tape("new", p)
    try tape(
      "import", p, file("speech-mono-48k-16.wav"), file("piano-stereo-44k-24.wav"),
      file("strings-stereo-48k-float.wav"), file("noise-stereo-48k-16.flac"))
    section("Tracks: gain and pan")
    try tape("track", "add", p, "Voice", "--gain", "-1dB", "--pan", "-0.15")
    try tape("track", "add", p, "Piano", "--gain", "-5dB", "--pan", "0.4")
    try tape("track", "add", p, "Strings", "--gain", "-9dB", "--pan", "-0.5")
    try tape("track", "add", p, "Noise bed", "--gain", "-30dB")
    section("Clips: cut, split, move, trim, fade, gain")
    try tape(
      "clip", "add", p, "t1", "s1", "--at", "0.5s", "--length", "6s", "--fade-in", "20ms",
      "--fade-out", "300ms")
    try tape("clip", "split", p, "c1", "--at", "3.6s")
    try tape("clip", "move", p, "c2", "--to", "4.2s")
    try tape(
      "clip", "add", p, "t2", "s2", "--at", "0", "--length", "4s", "--fade-in", "1s",
      "--fade-out", "1.5s", "--curve", "equal-power")
    try tape(
      "clip", "add", p, "t2", "s2", "--at", "3s", "--from", "0.5s", "--length", "3.5s",
      "--fade-in", "1.5s", "--fade-out", "2s", "--curve", "equal-power")
    try tape(
      "clip", "add", p, "t3", "s3", "--at", "1.5s", "--length", "3s", "--fade-in", "1.5s",
      "--fade-out", "1s", "--curve", "s-curve")
    try tape("clip", "trim", p, "c5", "--end", "4.2s")
    try tape(
      "clip", "add", p, "t4", "s4", "--at", "0", "--length", "4s", "--fade-in", "2s")
    try tape("clip", "add", p, "t4", "s4", "--at", "4s", "--length", "3.2s", "--fade-out", "1s")
    try tape("clip", "set", p, "c3", "--gain", "-2dB")
    section("History: undo, redo, jump back and return")
    try tape("clip", "set", p, "c2", "--gain", "+2dB")
    try tape("undo", p)
    try tape("redo", p)
    let head = try TimelineStore.open(at: p).snapshot.version
    try tape("checkout", p, "\(head - 6)")
    try tape("checkout", p, "\(head)")
    section("The timeline")
    try tape("ls", p)
    section("The history tree")
    try tape("history", p)
    section("Render")
    try tape("render", p, "-o", mix)
    if let device {
      section("Play")
      let format = try TimelineStore.open(at: p).snapshot.project
      if let problem = LivePlayer.check(
        device: device, sampleRate: format.sampleRate, channels: format.channels)
      {
        print("not played: \(problem); listen to \(mix) instead")
      } else {
        try tape("play", p, "--device", device)
      }
    }
  }

  private func section(_ title: String) {
    let bold = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    print(bold ? "\n\u{1B}[1m== \(title)\u{1B}[0m" : "\n== \(title)")
  }

  /// Shows `tape ARGS` and runs it; a failure stops the demo with that command's error.
  private func tape(_ arguments: String...) throws {
    // Paths are shown relative to the current folder, as a person would type them.
    let here = FileManager.default.currentDirectoryPath + "/"
    let shown = arguments.map { argument in
      let relative = argument.hasPrefix(here) ? String(argument.dropFirst(here.count)) : argument
      return relative.contains(" ") ? "'\(relative)'" : relative
    }.joined(separator: " ")
    print("$ tape \(shown)")
    fflush(nil)
    var command = try Tape.parseAsRoot(arguments)
    try command.run()
    // Closed now, as the command's own process would close them: a project left open by every
    // step would keep its log beside it (not in the file) until the demo ended.
    StoresClosedAtExit.closeAll()
    fflush(nil)
  }
}

extension FileManager {
  func writeErrorLine(_ line: String) {
    writeOut((line + "\n"))
  }
}
