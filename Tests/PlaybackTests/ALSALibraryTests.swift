import Foundation
import Playback
import Testing

@Suite("ALSA library")
struct ALSALibraryTests {
  /// The linked alsa-lib reports the version Debian's package says is installed.
  @Test func reportsTheInstalledVersion() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/dpkg-query")
    process.arguments = ["-W", "-f=${Version}", "libasound2"]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    process.waitUntilExit()
    let package = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    // "1.2.8-1+b1" → "1.2.8"
    let upstream = package.split(separator: "-").first.map(String.init) ?? ""
    #expect(ALSALibrary.version == upstream)
  }
}
