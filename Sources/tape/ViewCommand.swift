import ArgumentParser
import Foundation
import TimelineStore
import Viewer

struct View: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "view",
    abstract: "Show the timeline in a browser, following every commit from any process.",
    discussion: """
      Serves a page on 127.0.0.1 only and prints its URL (with a random token that every \
      request needs), then opens it in your browser unless --no-open. The page draws the \
      project as 'tape draw' does and follows it as 'tape play' does: every edit, undo, redo \
      or checkout, from any process, slides the clips that moved to their new places. A \
      history strip shows any version (reading only: moving the head stays 'tape checkout'), \
      and a 'tape play' of the same project draws its playhead. The page writes nothing. \
      Until Ctrl-C.
      Example: tape view song.tape
      Example: tape view song.tape --port 8080 --no-open
      """)

  @OptionGroup var project: ProjectArgument
  @Option(
    parsing: .unconditional,
    help: "The port to serve on, on 127.0.0.1 (0, the default: any free one).")
  var port: Int = 0
  @Flag(help: "Print the URL without opening a browser.") var noOpen = false

  func validate() throws {
    guard (0...65_535).contains(port) else {
      throw ValidationError("--port \(port) is not a port; give 1 to 65535, or 0 for any free one")
    }
  }

  func run() throws {
    try reportingErrors {
      let store = try openStore(project.file, access: .follow)
      guard store.canFollow else {
        throw PermissionError(
          message:
            "\(project.file) can only be read here (its mode or its folder's, or a read-only mount), and following its moves needs its log beside it; view it as a user who may write its folder"
        )
      }
      let server = ViewServer(store: store, projectPath: project.file, port: port)
      let done = DispatchSemaphore(value: 0)
      let failure = ErrorBox()
      let (port, open) = (port, !noOpen)
      Task.detached {
        do {
          try await server.run { url in
            print(url)
            try? StandardOutput.flush()
            if open { View.openInBrowser(url) }
          }
        } catch {
          failure.error = error
        }
        done.signal()
      }
      done.wait()
      if let error = failure.error {
        let text = String(describing: error)
        if text.contains("Address already in use") || text.contains("EADDRINUSE") {
          throw UsageError(
            message:
              "port \(port) is already in use on 127.0.0.1; choose another with --port, or --port 0 for any free one"
          )
        }
        throw error
      }
    }
  }

  /// Opens `url` with the desktop's opener (xdg-open), if there is one; quietly nothing if not.
  static func openInBrowser(_ url: String) {
    let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(
      separator: ":")
    guard
      let opener = paths.map({ "\($0)/xdg-open" }).first(where: {
        FileManager.default.isExecutableFile(atPath: $0)
      })
    else { return }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: opener)
    process.arguments = [url]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try? process.run()
  }
}
