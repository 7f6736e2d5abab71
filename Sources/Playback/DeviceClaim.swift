import Foundation

/// Which player of this user plays on a device: a lock per device name, held by the process
/// that plays there, and what it plays. A second `tape play` on a device that mixes (JACK,
/// dmix, PulseAudio) was heard over the first without a word; it can now say so.
///
/// The lock is a file of this user's (in `$XDG_RUNTIME_DIR/tape`, else `/tmp/tape-UID`, mode
/// 700) named after the device, `flock`ed while the process lives: it goes with the process,
/// however it ends. Another user's players, and another name for the same card, are not seen.
///
/// ```swift
/// let claim = DeviceClaim(device: "jackrec", playing: "song.tape")
/// if let other = claim.otherPlayer { print("\(other) plays there too") }
/// ```
public final class DeviceClaim: Sendable {
  /// What the process that holds the device said it plays (`pid 1234: song.tape`), when
  /// another holds it; nil when this one does (or no claim could be made).
  public let otherPlayer: String?
  private let descriptor: Int32

  public init(device: String, playing what: String) {
    guard let folder = Self.folder() else {
      descriptor = -1
      otherPlayer = nil
      return
    }
    let name = device.utf8.map { String(format: "%02x", $0) }.joined()
    let path = "\(folder)/device-\(name.prefix(200))"
    let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard opened >= 0 else {
      descriptor = -1
      otherPlayer = nil
      return
    }
    if flock(opened, LOCK_EX | LOCK_NB) == 0 {
      let text = Array("pid \(getpid()): \(what)".utf8)
      _ = ftruncate(opened, 0)
      _ = pwrite(opened, text, text.count, 0)
      descriptor = opened
      otherPlayer = nil
    } else {
      var bytes = [UInt8](repeating: 0, count: 4_096)
      let count = pread(opened, &bytes, bytes.count, 0)
      close(opened)
      descriptor = -1
      otherPlayer =
        count > 0 ? String(decoding: bytes.prefix(count), as: UTF8.self) : "another player"
    }
  }

  deinit {
    if descriptor >= 0 { close(descriptor) }
  }

  /// This user's folder for the claims, made (700) if needed; nil when none can be had.
  private static func folder() -> String? {
    let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap {
      $0.isEmpty ? nil : $0
    }
    let folder = runtime.map { "\($0)/tape" } ?? "/tmp/tape-\(geteuid())"
    if mkdir(folder, 0o700) != 0 && errno != EEXIST { return nil }
    // Only a folder of this user's that nobody else may write: another user could otherwise
    // plant links there (in /tmp).
    var info = stat()
    guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(),
      info.st_mode & 0o022 == 0
    else { return nil }
    return folder
  }
}
