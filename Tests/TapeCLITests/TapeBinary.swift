import Foundation

/// Runs the built `tape` binary and captures what it printed.
///
/// The binary is the one SwiftPM built next to the test bundle (the test target depends on the
/// `tape` target, so it is always fresh); `TAPE_BINARY` overrides it.
enum TapeBinary {
  struct Result {
    let status: Int32
    let stdout: String
    let stderr: String
    /// Whether `status` is the signal that killed it rather than an exit code.
    var killedBySignal = false
  }

  static var url: URL {
    if let override = ProcessInfo.processInfo.environment["TAPE_BINARY"] {
      return URL(fileURLWithPath: override)
    }
    return built("tape")
  }

  /// The debug `tape` built beside the tests, whatever `TAPE_BINARY` says: the build whose
  /// `#if DEBUG` self-checks run (the quick-command table against the command tree, each batch
  /// line against swift-argument-parser's parse, value for value). The tests of those checks
  /// run it; the rest run ``url`` (the test command's release build).
  static var checking: URL { built("tape") }

  /// `tape-testing` (Tests/TestingTool): a commit loop to kill, a held write lock, the store's
  /// own check.
  static var testing: URL { built("tape-testing") }

  /// An executable of this package, beside the test bundle.
  private static func built(_ name: String) -> URL {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent(name)
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
      directory.deleteLastPathComponent()
    }
    return URL(fileURLWithPath: ".build/debug/\(name)")
  }

  static func run(
    _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil,
    killAfter seconds: Double? = nil
  ) throws -> Result {
    try run(url, arguments, environment: environment, directory: directory, killAfter: seconds)
  }

  /// Runs any program with `arguments`, its environment this process's plus `environment`,
  /// in `directory` (this process's by default), stdin empty; killed after `seconds` if given.
  static func run(
    _ executable: URL, _ arguments: [String], environment: [String: String] = [:],
    directory: URL? = nil, killAfter seconds: Double? = nil
  )
    throws -> Result
  {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env.merge(environment) { $1 }
    process.environment = env
    if let directory { process.currentDirectoryURL = directory }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let watchdog = DispatchWorkItem {
      if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
    if let seconds {
      DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    watchdog.cancel()
    return Result(
      status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
      stderr: String(decoding: errData, as: UTF8.self),
      killedBySignal: process.terminationReason == .uncaughtSignal)
  }
}
