import Foundation
import Testing

/// A temporary directory with helpers to run `tape` on a project inside it.
final class Workspace {
  let url: URL

  /// A new folder in the temporary directory; with `reachableByOthers`, one that another user
  /// (nobody, in the root-only tests) may enter: mode 755, in `TMPDIR` when every folder above
  /// it lets others through, in /tmp otherwise (`TMPDIR` may be a private folder, and the
  /// umask 077).
  init(reachableByOthers: Bool = false) throws {
    var base = FileManager.default.temporaryDirectory
    if reachableByOthers && !Self.othersMayEnter(base) { base = URL(fileURLWithPath: "/tmp") }
    url = base.appendingPathComponent("tape-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    if reachableByOthers { chmod(url.path, 0o755) }
  }

  /// Whether every folder from / down to `folder` lets other users through (o+x).
  private static func othersMayEnter(_ folder: URL) -> Bool {
    var path = folder.standardizedFileURL.resolvingSymlinksInPath()
    while true {
      var status = stat()
      guard stat(path.path, &status) == 0, status.st_mode & S_IXOTH != 0 else { return false }
      if path.path == "/" { return true }
      path.deleteLastPathComponent()
    }
  }

  /// A copy of `TestAudio/name` in this workspace with `mode` (the checkout's own file may be
  /// unreadable to another user: a clone under /root, or made under umask 077).
  func copyTestAudio(_ name: String, mode: mode_t = 0o644) throws -> String {
    let copy = path(name)
    try FileManager.default.copyItem(atPath: TestAudio.path(name), toPath: copy)
    chmod(copy, mode)
    return copy
  }

  deinit { try? FileManager.default.removeItem(at: url) }

  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Runs `tape` with `arguments`; fails the test when the exit status is not `status`.
  @discardableResult
  func tape(
    _ arguments: String..., status: Int32 = 0, environment: [String: String] = [:],
    sourceLocation: SourceLocation = #_sourceLocation
  )
    throws -> TapeBinary.Result
  {
    try tape(
      arguments, status: status, environment: environment, sourceLocation: sourceLocation)
  }

  /// The same, with the arguments as an array.
  @discardableResult
  func tape(
    _ arguments: [String], status: Int32 = 0, environment: [String: String] = [:],
    sourceLocation: SourceLocation = #_sourceLocation
  )
    throws -> TapeBinary.Result
  {
    let result = try TapeBinary.run(arguments, environment: environment)
    #expect(
      result.status == status,
      "tape \(arguments.joined(separator: " ")) → \(result.status): \(result.stderr)",
      sourceLocation: sourceLocation)
    return result
  }

  /// The version the head of the project `file` is at (`tape history --json`).
  func head(of file: String) throws -> Int {
    try #require(
      try parseJSON(tape("history", file, "--json").stdout) as? [String: Any])["head"]
      as? Int ?? 0
  }

  /// The bytes of a project file and its write-ahead log, to prove a failure changed nothing.
  func fingerprint(_ name: String) throws -> [Data] {
    let main = try Data(contentsOf: url.appendingPathComponent(name))
    let wal = (try? Data(contentsOf: url.appendingPathComponent(name + "-wal"))) ?? Data()
    return [main, wal]
  }
}

enum TestAudio {
  static func path(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../TestAudio/\(name)").standardizedFileURL.path
  }
}

/// `text` as one word for sh or bash, whatever it holds (spaces, quotes, `$`, any letters).
func shellQuoted(_ text: String) -> String {
  "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// Parses JSON text into Foundation values for comparison.
func parseJSON(_ text: String) throws -> Any {
  try JSONSerialization.jsonObject(with: Data(text.utf8))
}
