import Foundation
import Testing

/// A temporary directory with helpers to run `tape` on a project inside it.
final class Workspace {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "tape-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
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

/// Parses JSON text into Foundation values for comparison.
func parseJSON(_ text: String) throws -> Any {
  try JSONSerialization.jsonObject(with: Data(text.utf8))
}
