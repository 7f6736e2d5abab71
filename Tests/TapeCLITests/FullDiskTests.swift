import Foundation
import SafeFiles
import Testing

/// A small file system of its own (a tmpfs of `megabytes`), mounted on a folder in `space`;
/// unmounted when released. Needs root (and the right to mount).
final class SmallDisk {
  let path: String

  init?(in space: Workspace, megabytes: Int) {
    path = space.path("disk")
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let mounted = try? TapeBinary.run(
      URL(fileURLWithPath: "/bin/mount"),
      ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0755", "tmpfs", path])
    guard mounted?.status == 0 else { return nil }
  }

  deinit {
    _ = try? TapeBinary.run(URL(fileURLWithPath: "/bin/umount"), ["-l", path])
  }

  /// Fills the rest of the disk with a file (`fill`); returns its path.
  @discardableResult
  func fill() throws -> String {
    let fill = path + "/fill"
    _ = try TapeBinary.run(
      URL(fileURLWithPath: "/bin/dd"), ["if=/dev/zero", "of=\(fill)", "bs=4k"])
    return fill
  }

  /// Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN).
  static let canMount: Bool = {
    guard geteuid() == 0, let space = try? Workspace() else { return false }
    return SmallDisk(in: space, megabytes: 1) != nil
  }()
}

/// A full disk under a project (issue 43, item 9): every command says that the disk is full
/// (never that the project is damaged, whose advice would be to restore a backup), changes
/// nothing, and leaves nothing beside the project (a 3-byte `-shm` and an empty `-wal` made
/// every later reader fail the same way until space was freed); `tape new` publishes nothing.
@Suite("A full disk")
struct FullDiskTests {
  @Test(.enabled(if: SmallDisk.canMount, "needs root and the right to mount a tmpfs"))
  func aFullDiskIsSaidAndLeavesNothing() throws {
    let space = try Workspace()
    let disk = try #require(SmallDisk(in: space, megabytes: 4))
    let file = disk.path + "/s.tape"
    try space.tape("new", file)
    try space.tape("import", file, TestAudio.path("speech-mono-48k-16.wav"))
    try space.tape("track", "add", file, "A")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "2s")
    let before = try Data(contentsOf: URL(fileURLWithPath: file))
    let fill = try disk.fill()
    let full = "the disk that holds \(file) is full"
    for arguments in [
      ["track", "add", file, "B"], ["play", file, "--device", "null"], ["undo", file],
      ["clip", "set", file, "c1", "--gain", "-3dB"], ["watch", file, "--count", "1"],
    ] {
      let result = try space.tape(arguments, status: 74, environment: ["NO_COLOR": "1"])
      #expect(result.stderr.hasPrefix("error: \(full) ("), "\(arguments): \(result.stderr)")
      #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
      #expect(
        Set(try FileManager.default.contentsOfDirectory(atPath: disk.path))
          == ["s.tape", "s.tape-cache", "fill"], "\(arguments) left something")
    }
    // Reading works all along; the file is as it was.
    #expect(try space.tape("ls", file).stdout.hasPrefix("version 4 "))
    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
    // A new project on the full disk: nothing appears.
    let made = try space.tape(
      "new", disk.path + "/other.tape", status: 74, environment: ["NO_COLOR": "1"])
    #expect(made.stderr.contains("is full"), "\(made.stderr)")
    #expect(FileIdentity(path: disk.path + "/other.tape") == nil)
    // Space freed: the next edit works.
    try FileManager.default.removeItem(atPath: fill)
    try space.tape("track", "add", file, "B")
    let check = try TapeBinary.run(TapeBinary.testing, ["verify", file])
    #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
  }
}
