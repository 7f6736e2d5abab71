import Foundation

/// A take being recorded, noted beside it before the first frame is captured: where it is to
/// land (its track and timeline frame), so that a recorder that dies (`kill -9`, a power cut)
/// leaves what `tape record --recover` needs to add it as it would have been.
///
/// The note is `take-….wav.pending` (JSON) in the recordings folder, written durably (a
/// temporary file synced, renamed, the folder synced). The recorder holds an exclusive `flock`
/// on it while it records: a note nobody holds is a take that waits to be recovered; one held
/// is a recording in progress (the lock goes with the process, however it ends).
///
/// ```swift
/// let hold = try PendingTake(take: "take-1.wav", track: 2, timelineStart: 96_000,
///   sampleRate: 48_000, channels: 1).write(in: folder)
/// // … record …
/// hold.release()  // the take was added
/// ```
public struct PendingTake: Sendable, Hashable, Codable {
  /// The take's file name in the recordings folder.
  public var take: String
  /// The raw id of the track it lands on, and the frame it starts at.
  public var track: Int64
  public var timelineStart: Int64
  public var sampleRate: Int
  public var channels: Int
  /// An overdub's round trip, once its two clocks met while recording: the timeline frame
  /// heard while the take's frame 0 was captured (``timelineStart`` is then the take's
  /// compensated place); nil before they met, and for a take made without `--play`.
  public var roundTrip: Int64?
  /// A punch's range (`--punch-in`, `--punch-out`), timeline frames: only it is kept.
  public var punchStart: Int64?
  public var punchEnd: Int64?
  /// Where the take has gaps (overruns: periods the device or the ring lost), as take
  /// frames: each becomes a marker on the timeline when the take is added.
  public var overruns: [Int64]?
  /// A looped recording's range (`--loop` with `--from`, `--to`), timeline frames: each pass
  /// over it is a take of the range.
  public var loopStart: Int64?
  public var loopEnd: Int64?

  public init(
    take: String, track: Int64, timelineStart: Int64, sampleRate: Int, channels: Int,
    roundTrip: Int64? = nil, punch: Range<Int64>? = nil, overruns: [Int64] = [],
    loop: Range<Int64>? = nil
  ) {
    self.take = take
    self.track = track
    self.timelineStart = timelineStart
    self.sampleRate = sampleRate
    self.channels = channels
    self.roundTrip = roundTrip
    punchStart = punch?.lowerBound
    punchEnd = punch?.upperBound
    self.overruns = overruns.isEmpty ? nil : overruns
    loopStart = loop?.lowerBound
    loopEnd = loop?.upperBound
  }

  /// The looped range, when the take is a loop's passes.
  public var loop: Range<Int64>? {
    guard let loopStart, let loopEnd, loopStart < loopEnd else { return nil }
    return loopStart..<loopEnd
  }

  /// The punch's range, when the take is a punch.
  public var punch: Range<Int64>? {
    guard let punchStart, let punchEnd, punchStart < punchEnd else { return nil }
    return punchStart..<punchEnd
  }

  /// The recordings folder of the project file `project`: `song.tape-recordings` beside it.
  public static func folder(forProject project: String) -> String {
    project + "-recordings"
  }

  static let suffix = ".pending"

  /// The note held open and locked by the recorder; ``release()`` removes it.
  public final class Hold: @unchecked Sendable {
    public let path: String
    private var descriptor: Int32

    init(path: String, descriptor: Int32) {
      self.path = path
      self.descriptor = descriptor
    }

    deinit {
      if descriptor >= 0 { close(descriptor) }
    }

    /// Replaces the note with `note`, durably, without ever letting go of it: the new note is
    /// written beside it, synced and locked, then renamed over it (a reader sees the old note
    /// or the new one, whole, and always held). Throws, the old note kept, when it cannot.
    public func rewrite(_ note: PendingTake) throws(AudioFileError) {
      let folder = (path as NSString).deletingLastPathComponent
      let (temporary, text) = try note.encoded(for: path, in: folder)
      let opened = try PendingTake.writeLocked(text, to: temporary, for: path)
      guard rename(temporary, path) == 0 else {
        let reason = TakeFile.errorText()
        close(opened)
        unlink(temporary)
        throw .takeWrite(path: path, reason: reason)
      }
      PendingTake.syncFolder(folder)
      if descriptor >= 0 { close(descriptor) }
      descriptor = opened
    }

    /// Removes the note (its take was added, or holds nothing) and lets go of it.
    public func release() {
      unlink(path)
      if descriptor >= 0 { close(descriptor) }
      descriptor = -1
    }
  }

  /// Writes this note durably into `folder` (made if need be) and locks it; throws when it
  /// cannot, before anything is captured.
  public func write(in folder: String) throws(AudioFileError) -> Hold {
    if mkdir(folder, 0o755) != 0 && errno != EEXIST {
      throw .takeWrite(path: folder, reason: TakeFile.errorText())
    }
    try Self.checkFolder(folder)
    let path = "\(folder)/\(take)\(Self.suffix)"
    let (temporary, text) = try encoded(for: path, in: folder)
    let descriptor = try Self.writeLocked(text, to: temporary, for: path)
    guard rename(temporary, path) == 0 else {
      let reason = TakeFile.errorText()
      close(descriptor)
      unlink(temporary)
      throw .takeWrite(path: path, reason: reason)
    }
    Self.syncFolder(folder)
    return Hold(path: path, descriptor: descriptor)
  }

  /// The note's JSON, and the temporary file it is written to before it is renamed to `path`.
  func encoded(for path: String, in folder: String) throws(AudioFileError) -> (String, Data) {
    do {
      return ("\(folder)/.\(take)\(Self.suffix).tmp", try JSONEncoder().encode(self))
    } catch {
      throw .takeWrite(path: path, reason: "\(error)")
    }
  }

  /// Writes `text` into `temporary`, synced and locked; returns its open descriptor. A file
  /// already there (a crash's leftover) is replaced, never written through: created anew,
  /// never following a symbolic link.
  static func writeLocked(
    _ text: Data, to temporary: String, for path: String
  ) throws(AudioFileError) -> Int32 {
    unlink(temporary)
    let descriptor = open(
      temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw .takeWrite(path: path, reason: TakeFile.errorText()) }
    let wrote = text.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    guard wrote == text.count, fsync(descriptor) == 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0
    else {
      let reason = wrote < 0 || wrote == text.count ? TakeFile.errorText() : "the disk is full"
      close(descriptor)
      unlink(temporary)
      throw .takeWrite(path: path, reason: reason)
    }
    return descriptor
  }

  /// A note found in a recordings folder: the take it names and whether a recorder still
  /// records it (holds its lock).
  public struct Found: Sendable {
    public var note: PendingTake
    public var notePath: String
    public var takePath: String
    public var recording: Bool
  }

  /// Refuses `folder` (which exists) unless only this user can change what is in it: a real
  /// folder, not a symbolic link, owned by the effective user (root's own folder when root
  /// records, and no other), that neither its group nor others may write. Another user who
  /// made the folder, or may write in it, could link a take's name to any file of the
  /// recorder's (the recorder would write over it) or plant a note that `--recover` would
  /// follow.
  public static func checkFolder(_ folder: String) throws(AudioFileError) {
    var info = stat()
    guard lstat(folder, &info) == 0 else {
      throw .takeWrite(path: folder, reason: TakeFile.errorText())
    }
    try checkFolder(folder, info)
  }

  /// ``checkFolder(_:)`` on what `lstat` said of `folder`.
  static func checkFolder(_ folder: String, _ info: stat) throws(AudioFileError) {
    let kind = UInt32(info.st_mode) & UInt32(S_IFMT)
    let quoted = "'\(folder)'"
    if kind == UInt32(S_IFLNK) {
      throw .unsafeRecordingsFolder(
        path: folder, reason: "is a symbolic link",
        fix: "remove the link (rm \(quoted)) and run it again; tape makes the folder itself")
    }
    guard kind == UInt32(S_IFDIR) else {
      throw .unsafeRecordingsFolder(
        path: folder, reason: "is not a folder",
        fix: "move it away (mv \(quoted) elsewhere) and run it again")
    }
    let me = geteuid()
    guard info.st_uid == me else {
      throw .unsafeRecordingsFolder(
        path: folder, reason: "belongs to another user (uid \(info.st_uid))",
        fix:
          "have its owner move it away (mv \(quoted) elsewhere), or keep the project in a folder of your own"
      )
    }
    guard UInt32(info.st_mode) & 0o022 == 0 else {
      throw .unsafeRecordingsFolder(
        path: folder, reason: "may be written by its group or by others",
        fix: "chmod go-w \(quoted), then run it again")
    }
  }

  /// The notes in `folder` (none when it does not exist), oldest take name first; throws when
  /// the folder is one no take may be recovered from (``checkFolder(_:)``).
  public static func all(in folder: String) throws(AudioFileError) -> [Found] {
    // Most projects have no recordings folder: one system call says so.
    var info = stat()
    guard lstat(folder, &info) == 0 else { return [] }
    try checkFolder(folder, info)
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
      return []
    }
    return names.filter { $0.hasSuffix(suffix) && !$0.hasPrefix(".") }.sorted().compactMap {
      name in
      let path = "\(folder)/\(name)"
      guard let data = FileManager.default.contents(atPath: path),
        let note = try? JSONDecoder().decode(PendingTake.self, from: data),
        // A take is a file of this folder, named by its recorder: never a path elsewhere.
        !note.take.contains("/"), !note.take.hasPrefix(".")
      else { return nil }
      return Found(
        note: note, notePath: path, takePath: "\(folder)/\(note.take)",
        recording: isHeld(path))
    }
  }

  /// Whether a recorder holds the note at `path` (its lock cannot be had).
  static func isHeld(_ path: String) -> Bool {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    return flock(descriptor, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
  }

  static func syncFolder(_ folder: String) {
    let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    fsync(descriptor)
    close(descriptor)
  }

  /// Syncs the recordings folder (a new take's name is on the disk before it is relied on).
  public static func syncFolder(of take: String) {
    syncFolder((take as NSString).deletingLastPathComponent)
  }
}
