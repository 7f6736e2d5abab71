import AudioFiles
import Foundation
import SafeFiles

/// Where a `tape play` of a project says its playhead is, for `tape view` to draw: one record
/// in the project's cache folder (`song.tape-cache/playhead`), rewritten in place as the play
/// goes and removed when it ends.
///
/// Rule: the play writes only this file, never the project; a reader takes a record only from
/// a process that is alive and wrote it within the last two seconds.
/// Why: a play must not write the project it plays (its edits come from others), and a play
/// killed without removing its record must not leave a playhead standing still on every page.
/// What if the cache folder cannot be written (a read-only project folder): the play says
/// nothing, and pages show no playhead.
public final class PlayheadFile: @unchecked Sendable {
  /// A play's position (`frame` nil: no play).
  public struct Position: Codable, Sendable, Hashable {
    public var frame: Int64?
    public var playing: Bool

    public init(frame: Int64?, playing: Bool) {
      self.frame = frame
      self.playing = playing
    }

    public static let stopped = Position(frame: nil, playing: false)
  }

  public let path: String
  private let folder: String
  /// The writer's descriptor (−1: not open, or not writable).
  private var descriptor: Int32 = -1
  private static let recordBytes = 80

  public init(projectPath: String) {
    folder = AudioCache.directory(forProject: projectPath)
    path = folder + "/playhead"
  }

  /// Whether the cache folder is this user's (or root's) and no one else may write into it: a
  /// record another user could write would draw a playhead no play has (the decoded-audio
  /// cache trusts such a folder no more).
  private var folderIsSafe: Bool { isOwnedSafely(path: folder, owners: [geteuid(), 0]) }

  deinit {
    if descriptor >= 0 { close(descriptor) }
  }

  /// The play: `frame` (the project's frames) and whether it is paused, now. Two plays of one
  /// project write the same record in turn (a page shows whichever wrote last), and the first
  /// to end leaves the record to the other.
  public func write(frame: Int64, paused: Bool) {
    if descriptor < 0 {
      guard folderIsSafe else { return }
      descriptor = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
      if descriptor < 0 { return }
    }
    let millis = Int64(Date().timeIntervalSince1970 * 1_000)
    var line = "tape-play \(getpid()) \(frame) \(paused ? 1 : 0) \(millis)"
    line += String(repeating: " ", count: max(0, Self.recordBytes - 1 - line.utf8.count)) + "\n"
    let bytes = Array(line.utf8.prefix(Self.recordBytes))
    _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
  }

  /// The play has ended: its record goes, unless another play has written it since. (One
  /// killed with SIGKILL leaves its record, which readers ignore once it is 2 s old.)
  public func remove() {
    guard descriptor >= 0 else { return }
    close(descriptor)
    descriptor = -1
    if record()?.pid == getpid() { unlink(path) }
  }

  /// The position of a play of the project, or nil when none is playing.
  public func read() -> Position? {
    guard folderIsSafe, let record = record() else { return nil }
    let now = Int64(Date().timeIntervalSince1970 * 1_000)
    guard abs(now - record.millis) < 2_000, kill(record.pid, 0) == 0 || errno == EPERM else {
      return nil
    }
    return Position(frame: record.frame, playing: !record.paused)
  }

  /// The record as written: `tape-play PID FRAME PAUSED MILLIS`, padded.
  private func record() -> (pid: Int32, frame: Int64, paused: Bool, millis: Int64)? {
    let file = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard file >= 0 else { return nil }
    defer { close(file) }
    var buffer = [UInt8](repeating: 0, count: Self.recordBytes)
    let count = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress, $0.count, 0) }
    guard count > 0 else { return nil }
    let words = String(decoding: buffer.prefix(count), as: UTF8.self)
      .split(separator: " ", omittingEmptySubsequences: true)
      .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    guard words.count >= 5, words[0] == "tape-play", let pid = Int32(words[1]),
      let frame = Int64(words[2]), let millis = Int64(words[4])
    else { return nil }
    return (pid, frame, words[3] == "1", millis)
  }
}
