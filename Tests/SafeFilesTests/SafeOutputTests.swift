import Foundation
import SafeFiles
import Testing

/// A temporary folder, removed afterwards.
final class Folder {
  let path = FileManager.default.temporaryDirectory.appendingPathComponent(
    "tape-safe-\(UUID().uuidString)"
  ).path

  init() throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  func file(_ name: String) -> String { "\(path)/\(name)" }

  var listing: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
  }
}

func write(_ text: String, to output: SafeOutput) throws {
  try Array(text.utf8).withUnsafeBytes { try output.write($0) }
}

func contents(_ path: String) throws -> String {
  try String(contentsOfFile: path, encoding: .utf8)
}

@Suite("Safe output files")
struct SafeOutputTests {
  /// Nothing has the target's name (or any other name in the folder) until the commit, and
  /// the commit replaces the old file whole.
  @Test func aFileAppearsOnlyWhenComplete() throws {
    let folder = try Folder()
    let target = folder.file("mix.wav")
    try "old".write(toFile: target, atomically: false, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: target)
    let output = try SafeOutput(try OutputDestination.resolve(target))
    try write("new contents", to: output)
    #expect(folder.listing == ["mix.wav"])
    #expect(try contents(target) == "old")
    try output.commit()
    #expect(folder.listing == ["mix.wav"])
    #expect(try contents(target) == "new contents")
    // The replacement keeps the permissions of the file it replaced.
    let mode = try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int
    #expect(mode == 0o640)
  }

  /// An output that is dropped (an error, a signal) leaves nothing at all.
  @Test func aDiscardedFileLeavesNothing() throws {
    let folder = try Folder()
    do {
      let output = try SafeOutput(try OutputDestination.resolve(folder.file("mix.wav")))
      try write("partial", to: output)
    }
    #expect(folder.listing == [])
  }

  /// A symlink is followed: its target is replaced and the link itself stays a link.
  @Test func aSymlinkKeepsBeingALink() throws {
    let folder = try Folder()
    try FileManager.default.createDirectory(
      atPath: folder.file("releases"), withIntermediateDirectories: true)
    try "v3".write(toFile: folder.file("releases/v3.wav"), atomically: false, encoding: .utf8)
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("mix.wav"), withDestinationPath: "releases/v3.wav")
    let destination = try OutputDestination.resolve(folder.file("mix.wav"))
    #expect(destination.target == folder.file("releases/v3.wav"))
    let output = try SafeOutput(destination)
    try write("v4", to: output)
    try output.commit()
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: folder.file("mix.wav"))
        == "releases/v3.wav")
    #expect(try contents(folder.file("releases/v3.wav")) == "v4")
    #expect(folder.listing == ["mix.wav", "releases"])
  }

  /// A dangling symlink: the file it names is created.
  @Test func aDanglingSymlinkCreatesItsTarget() throws {
    let folder = try Folder()
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("mix.wav"), withDestinationPath: folder.file("new.wav"))
    let output = try SafeOutput(try OutputDestination.resolve(folder.file("mix.wav")))
    try write("fresh", to: output)
    try output.commit()
    #expect(try contents(folder.file("new.wav")) == "fresh")
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: folder.file("mix.wav"))
        == folder.file("new.wav"))
  }

  /// Folders, missing folders and read-only files are refused before anything is written.
  @Test func whatCannotBeWrittenIsRefused() throws {
    let folder = try Folder()
    #expect(throws: SafeFileError.isFolder(path: folder.path)) {
      try OutputDestination.resolve(folder.path)
    }
    let missing = folder.file("no/such/mix.wav")
    #expect(throws: SafeFileError.folderMissing(path: missing, folder: folder.file("no/such"))) {
      try OutputDestination.resolve(missing)
    }
    let loop = folder.file("loop.wav")
    try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
    #expect(throws: SafeFileError.badSymlink(path: loop)) {
      try OutputDestination.resolve(loop)
    }
  }

  /// A FIFO with no reader is an error at once (ENXIO), not a hang; with a reader, the bytes
  /// go straight through and the FIFO stays a FIFO.
  @Test func aFIFOIsAStream() throws {
    let folder = try Folder()
    let fifo = folder.file("pipe")
    #expect(mkfifo(fifo, 0o600) == 0)
    let destination = try OutputDestination.resolve(fifo)
    #expect(destination.kind == .fifo)
    #expect(throws: SafeFileError.noReader(path: fifo)) { try SafeOutput(destination) }

    let reader = Process()
    reader.executableURL = URL(fileURLWithPath: "/bin/cat")
    reader.arguments = [fifo]
    let pipe = Pipe()
    reader.standardOutput = pipe
    try reader.run()
    // Until cat has opened its end: up to a minute (2 s was a guess a loaded machine could
    // overrun starting cat).
    var output: SafeOutput?
    let deadline = Date().addingTimeInterval(60)
    while output == nil, Date() < deadline {
      output = try? SafeOutput(destination)
      if output == nil { usleep(10_000) }
    }
    let stream = try #require(output)
    try write("through the pipe", to: stream)
    try stream.commit()
    let received = pipe.fileHandleForReading.readDataToEndOfFile()
    reader.waitUntilExit()
    #expect(String(decoding: received, as: UTF8.self) == "through the pipe")
    #expect(FileIdentity(path: fifo)?.isFIFO == true)
    #expect(folder.listing == ["pipe"])
  }

  /// A file made by the fallback path (exclusive random name) is removed when a signal stops
  /// the process; the O_TMPFILE path has no name to remove at all. Checked on the signal
  /// handler's own list: a named file registered there is gone after the handler ran in a
  /// child process killed with SIGTERM, whose exit status is the signal's.
  @Test func theIdentityOfAFileSurvivesRenaming() throws {
    let folder = try Folder()
    let a = folder.file("a")
    try "x".write(toFile: a, atomically: false, encoding: .utf8)
    #expect(link(a, folder.file("b")) == 0)
    let first = try #require(FileIdentity(path: a))
    let second = try #require(FileIdentity(path: folder.file("b")))
    #expect(first.isSameFile(as: second))
    #expect(FileIdentity(parsing: Substring(first.description)) == first)
  }
}
