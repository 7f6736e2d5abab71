import Foundation
import Testing

@testable import Playback

/// The code the audio thread runs is in memory before it runs: a path it first takes minutes
/// into a play (a swap of a kind not seen before) must not be a disk read. Without it, the audio
/// thread took a major page fault after the page cache was dropped (CI, 1 run in many).
@Suite("Code the audio thread runs")
struct CodeLockTests {
  /// One mapping of /proc/self/smaps: its path, permissions and sizes in kB.
  struct Mapping {
    var path: String
    var permissions: String
    var size = 0
    var rss = 0
    /// VmFlags has `lo`: the kernel keeps every page of it in memory. (smaps's `Locked:` is a
    /// proportional share, less than the size for pages other processes map too.)
    var locked = false
  }

  static func mappings() throws -> [Mapping] {
    // Read to the end: /proc files have no size, and one read may return part of it.
    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps"))
    defer { try? handle.close() }
    let text = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    var mappings: [Mapping] = []
    for line in text.split(separator: "\n") {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      if let first = fields.first, first.contains("-"), fields.count >= 5,
        first.allSatisfy({ $0.isHexDigit || $0 == "-" })
      {
        mappings.append(
          Mapping(
            path: fields.count >= 6 ? fields[5...].joined(separator: " ") : "",
            permissions: String(fields[1])))
      } else if fields.first == "VmFlags:", !mappings.isEmpty {
        mappings[mappings.count - 1].locked = fields.contains("lo")
      } else if fields.count >= 2, let value = Int(fields[1]), !mappings.isEmpty {
        switch fields[0] {
        case "Size:": mappings[mappings.count - 1].size = value
        case "Rss:": mappings[mappings.count - 1].rss = value
        default: break
        }
      }
    }
    return mappings
  }

  /// The kB of `name`'s executable mappings: their size, resident and locked.
  static func code(of name: (String) -> Bool) throws -> (size: Int, rss: Int, locked: Int) {
    let code = try mappings().filter { name($0.path) && $0.permissions.contains("x") }
    return (
      code.map(\.size).reduce(0, +), code.map(\.rss).reduce(0, +),
      code.filter(\.locked).map(\.size).reduce(0, +)
    )
  }

  @Test func theProgramAndTheRuntimesAreInMemory() throws {
    RealtimeThread.lockCode()
    // Locked as root or under an unlimited RLIMIT_MEMLOCK; else brought in, not locked.
    let unlimited = RealtimeThread.mayLockCode
    let program = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    for (name, matches) in [
      ("the program", { (path: String) in path == program }),
      ("libswiftCore", { (path: String) in path.hasSuffix("/libswiftCore.so") }),
      ("libc", { (path: String) in path.hasSuffix("/libc.so.6") }),
    ] {
      let code = try Self.code(of: matches)
      print(
        "code lock: \(name): \(code.size) kB, \(code.rss) kB resident, \(code.locked) kB locked")
      #expect(code.size > 0, "\(name) is not mapped")
      #expect(code.rss == code.size, "\(name): \(code.rss) of \(code.size) kB resident")
      if unlimited {
        #expect(code.locked == code.size, "\(name): \(code.locked) of \(code.size) kB locked")
      }
    }
    // What never runs on the audio thread stays out: Foundation's internationalisation (ICU).
    if unlimited {
      let icu = try Self.code(of: { $0.contains("FoundationInternationalization") })
      #expect(icu.locked == 0)
    }
  }
}
