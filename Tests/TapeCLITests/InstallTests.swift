import Foundation
import Testing

/// `scripts/install.sh` (issue 45): into a prefix, and into a packager's DESTDIR, it installs
/// `bin/tape`, a manual page per command (generated from the argument parser: `man` renders
/// each) and the bash, zsh and fish completions (bash loads its script); `--uninstall` removes
/// exactly what it installed, and leaves what was there before.
@Suite("scripts/install.sh")
struct InstallTests {
  static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../scripts/install.sh").standardizedFileURL.path

  static func install(
    _ arguments: [String], environment: [String: String] = [:]
  ) throws
    -> TapeBinary.Result
  {
    try TapeBinary.run(
      URL(fileURLWithPath: "/bin/bash"), [script] + arguments, environment: environment)
  }

  /// Every command's path (`["clip", "move"]`), as the parser lists them.
  static func commands() throws -> [[String]] {
    let dump = try TapeBinary.run(["--experimental-dump-help"])
    let root = try #require(
      (try parseJSON(dump.stdout) as? [String: Any])?["command"] as? [String: Any])
    var paths: [[String]] = []
    func walk(_ path: [String], _ command: [String: Any]) {
      paths.append(path)
      for sub in command["subcommands"] as? [[String: Any]] ?? [] {
        guard let name = sub["commandName"] as? String, name != "help" else { continue }
        walk(path + [name], sub)
      }
    }
    walk([], root)
    return paths
  }

  @Test func installsAndUninstallsExactly() throws {
    let space = try Workspace()
    let prefix = space.path("prefix")
    // Something of the user's in a folder the install shares: it stays.
    let theirs = prefix + "/share/man/man1/theirs.1"
    try FileManager.default.createDirectory(
      atPath: prefix + "/share/man/man1", withIntermediateDirectories: true)
    try Data("theirs".utf8).write(to: URL(fileURLWithPath: theirs))
    let installed = try Self.install(["--prefix", prefix, "--binary", TapeBinary.url.path])
    #expect(installed.status == 0, "\(installed.stderr)")
    let version = try TapeBinary.run(URL(fileURLWithPath: prefix + "/bin/tape"), ["--version"])
    #expect(version.stdout == "0.1.0\n")
    // A page per command, each rendered by man with its name and synopsis.
    let commands = try Self.commands()
    #expect(commands.count > 60)
    for path in commands {
      let name = (["tape"] + path).joined(separator: "-")
      let page = prefix + "/share/man/man1/\(name).1"
      let shown = try TapeBinary.run(
        URL(fileURLWithPath: "/usr/bin/man"), ["-P", "cat", "-l", page],
        environment: ["MANWIDTH": "80"])
      #expect(shown.status == 0, "\(name): \(shown.stderr)")
      #expect(shown.stdout.contains("NAME") && shown.stdout.contains(name), "\(name)")
      #expect(shown.stdout.contains("EXIT STATUS"), "\(name)")
    }
    let bash = try TapeBinary.run(
      URL(fileURLWithPath: "/bin/bash"),
      [
        "-c", "source \"$0\" && complete -p tape",
        prefix + "/share/bash-completion/completions/tape",
      ])
    #expect(bash.status == 0 && bash.stdout.contains("_tape"), "\(bash.stderr)")
    for file in ["share/zsh/site-functions/_tape", "share/fish/vendor_completions.d/tape.fish"] {
      #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file)")
    }

    let removed = try Self.install(["--prefix", prefix, "--uninstall"])
    #expect(removed.status == 0, "\(removed.stderr)")
    #expect(listing(prefix) == ["share", "share/man", "share/man/man1", "share/man/man1/theirs.1"])
    let again = try Self.install(["--prefix", prefix, "--uninstall"])
    #expect(again.status == 66)
  }

  /// A packager's DESTDIR: the files go under it, the list says the prefix's paths.
  @Test func honoursDestdir() throws {
    let space = try Workspace()
    let destination = space.path("package")
    let environment = ["DESTDIR": destination]
    let installed = try Self.install(
      ["--prefix", "/opt/tape", "--binary", TapeBinary.url.path], environment: environment)
    #expect(installed.status == 0, "\(installed.stderr)")
    #expect(FileManager.default.isExecutableFile(atPath: destination + "/opt/tape/bin/tape"))
    let list = try String(
      contentsOfFile: destination + "/opt/tape/share/tape/installed-files", encoding: .utf8)
    #expect(list.contains("file /opt/tape/bin/tape\n"))
    #expect(!list.contains(destination))
    let removed = try Self.install(
      ["--prefix", "/opt/tape", "--uninstall"], environment: environment)
    #expect(removed.status == 0, "\(removed.stderr)")
    #expect(listing(destination).isEmpty)
  }
}
