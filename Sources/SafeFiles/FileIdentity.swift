#if canImport(Glibc)
  import Glibc
#endif

/// What a path names on disk, from `stat(2)`: enough to tell two names of one file apart from
/// two files, and to notice that a file was replaced or rewritten.
///
/// Two paths name the same file when their ``device`` and ``inode`` are equal (``isSameFile(as:)``),
/// whatever their spelling: hard links, symlinks, `..` and bind mounts included. Any write,
/// replacement, `chmod` or `touch` changes ``changeTime``, which no user tool can set back (`cp -p`
/// and `rsync -t` restore the modification time, never the change time).
///
/// ```swift
/// if let output = FileIdentity(path: "mix.wav"), let source = FileIdentity(path: "a.wav"),
///   output.isSameFile(as: source) { … }
/// ```
public struct FileIdentity: Sendable, Hashable, CustomStringConvertible {
  public let device: UInt64
  public let inode: UInt64
  public let size: Int64
  /// Nanoseconds since 1970.
  public let modificationTime: Int64
  /// Nanoseconds since 1970: when the file's data or metadata last changed.
  public let changeTime: Int64
  /// The `S_IFMT` bits of `st_mode`.
  public let type: UInt32
  /// The permission bits of `st_mode`.
  public let permissions: UInt32

  /// The identity of what `path` names, following symlinks; nil when it cannot be stat'ed.
  public init?(path: String) {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    self.init(info)
  }

  /// The identity of what the C string `path` names (bytes, as the kernel takes them),
  /// following symlinks; nil when it cannot be stat'ed.
  public init?(cPath path: UnsafePointer<CChar>) {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    self.init(info)
  }

  /// The identity of an open file.
  public init?(descriptor: Int32) {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return nil }
    self.init(info)
  }

  /// Parses ``description`` back.
  public init?(parsing text: Substring) {
    let fields = text.split(separator: " ").compactMap { Int64($0) }
    guard fields.count == 7 else { return nil }
    device = UInt64(bitPattern: fields[0])
    inode = UInt64(bitPattern: fields[1])
    size = fields[2]
    modificationTime = fields[3]
    changeTime = fields[4]
    type = UInt32(truncatingIfNeeded: fields[5])
    permissions = UInt32(truncatingIfNeeded: fields[6])
  }

  init(_ info: stat) {
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
    size = Int64(info.st_size)
    modificationTime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    changeTime = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
    type = UInt32(info.st_mode) & UInt32(S_IFMT)
    permissions = UInt32(info.st_mode) & 0o7777
  }

  /// Both name one file: same device, same inode.
  public func isSameFile(as other: FileIdentity) -> Bool {
    device == other.device && inode == other.inode
  }

  /// Whether the file's content may differ from when `other` was taken: same file, same size,
  /// same modification and change times, or not.
  public func isUnchanged(since other: FileIdentity) -> Bool {
    isSameFile(as: other) && size == other.size && modificationTime == other.modificationTime
      && changeTime == other.changeTime
  }

  public var isRegularFile: Bool { type == UInt32(S_IFREG) }
  public var isDirectory: Bool { type == UInt32(S_IFDIR) }
  public var isCharacterDevice: Bool { type == UInt32(S_IFCHR) }
  public var isFIFO: Bool { type == UInt32(S_IFIFO) }

  /// `device inode size mtime ctime type permissions`, one line of integers.
  public var description: String {
    "\(Int64(bitPattern: device)) \(Int64(bitPattern: inode)) \(size) \(modificationTime) \(changeTime) \(type) \(permissions)"
  }
}

/// Whether Tape may write `path` (a file, or a folder to create files in) and someone meant it
/// to be written: `access` allows it and a write permission bit is set.
///
/// Rule: a command that only reads creates a file only where this holds. Why: root passes every
/// `access` check, so a project of mode 444 in a folder of mode 555 (someone's way of saying
/// "leave this as it is") would otherwise get a log and a cache beside it when root plays it.
public func invitesWriting(_ path: String, asFolder: Bool = false) -> Bool {
  var info = stat()
  return access(path, asFolder ? W_OK | X_OK : W_OK) == 0 && stat(path, &info) == 0
    && info.st_mode & 0o222 != 0
}

/// Whether the file open as `descriptor` is owned by one of `owners` and writable by nobody
/// else (no group or other write bit): what a cache may trust. Its checksums protect against
/// damage, not against a forger who may write the file and recompute them.
public func isOwnedSafely(descriptor: Int32, owners: [UInt32]) -> Bool {
  var info = stat()
  guard fstat(descriptor, &info) == 0 else { return false }
  return owners.contains(UInt32(info.st_uid)) && UInt32(info.st_mode) & 0o022 == 0
}

/// The same for `path`, which must not be a symlink.
public func isOwnedSafely(path: String, owners: [UInt32]) -> Bool {
  var info = stat()
  guard lstat(path, &info) == 0, UInt32(info.st_mode) & UInt32(S_IFMT) != UInt32(S_IFLNK) else {
    return false
  }
  return owners.contains(UInt32(info.st_uid)) && UInt32(info.st_mode) & 0o022 == 0
}
