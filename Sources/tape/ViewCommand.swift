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
      let store = try openStoreToFollow(project.file, verb: "view")
      let server = ViewServer(store: store, projectPath: project.file, port: port)
      let done = DispatchSemaphore(value: 0)
      let failure = ErrorBox()
      let (port, open) = (port, !noOpen)
      let opened = OpenedPage()
      Task.detached {
        do {
          try await server.run { url in
            print(url)
            try? StandardOutput.flush()
            if open { opened.folder = View.openInBrowser(url) }
          }
        } catch {
          failure.error = error
        }
        done.signal()
      }
      done.wait()
      if let folder = opened.folder { try? FileManager.default.removeItem(atPath: folder) }
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

  /// Opens `url` with the desktop's opener (xdg-open), if there is one (quietly nothing if
  /// not), through a page only this user may read that sends the browser on to `url`: the
  /// token never appears on a command line, which every user of the machine may read
  /// (/proc/PID/cmdline). Returns the folder holding that page, to remove when done.
  static func openInBrowser(_ url: String) -> String? {
    let environment = ProcessInfo.processInfo.environment
    let paths = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    guard
      let opener = paths.map({ "\($0)/xdg-open" }).first(where: {
        FileManager.default.isExecutableFile(atPath: $0)
      })
    else { return nil }
    var base = environment["XDG_RUNTIME_DIR"] ?? ""
    if !base.hasPrefix("/") || !FileManager.default.fileExists(atPath: base) {
      base = NSTemporaryDirectory()
    }
    var template = Array((base + "/tape-view-XXXXXX").utf8CString)
    // mkdtemp makes the folder with mode 700.
    let folder: String? = template.withUnsafeMutableBufferPointer { buffer in
      guard let base = buffer.baseAddress, let made = mkdtemp(base) else { return nil }
      return String(cString: made)
    }
    guard let folder else { return nil }
    let page = folder + "/open.html"
    let text =
      "<!doctype html><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"0; url=\(url)\">"
      + "<a href=\"\(url)\">tape view</a>\n"
    guard
      FileManager.default.createFile(
        atPath: page, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
    else {
      try? FileManager.default.removeItem(atPath: folder)
      return nil
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: opener)
    process.arguments = [page]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try? process.run()
    return folder
  }
}

/// The folder of the page `tape view` opened the browser with, set once the server listens.
private final class OpenedPage: @unchecked Sendable {
  var folder: String?
}
