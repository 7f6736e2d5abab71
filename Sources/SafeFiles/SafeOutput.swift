#if canImport(Glibc)
  import Glibc
#endif

/// Where an output path leads, found before anything is opened or written.
///
/// ```swift
/// let destination = try OutputDestination.resolve("mix.wav")
/// if destination.existing?.isSameFile(as: sourceIdentity) == true { refuse() }
/// ```
public struct OutputDestination: Sendable, Hashable {
  public enum Kind: Sendable, Hashable {
    /// A regular file, or a path where none exists yet: written whole, then put in place.
    case file
    /// A character device (`/dev/null`, a terminal): written straight through.
    case characterDevice
    /// A named pipe: written straight through, once a reader is there.
    case fifo
    /// `-`: this process's standard output, whatever it is.
    case standardOutput
  }

  /// The path as given.
  public let path: String
  /// Where the bytes land: `path` with its symlinks followed (the link itself is kept), or
  /// `-` for standard output.
  public let target: String
  public let kind: Kind
  /// What is there now; nil for a new file.
  public let existing: FileIdentity?
  /// The target's folder, when it does not exist yet and is made as the file is put in place.
  public var folderToCreate: String?

  init(path: String, target: String, kind: Kind, existing: FileIdentity?) {
    self.path = path
    self.target = target
    self.kind = kind
    self.existing = existing
  }

  /// Written as a stream (no seeking, no temporary file): everything but a regular file.
  public var isStream: Bool { kind != .file }

  /// Classifies `path`: `-` is standard output; a symlink is followed to its target (created if
  /// the link dangles); a regular file or a new name in a writable folder is a file; a character
  /// device or FIFO is a stream; anything else is refused.
  ///
  /// With `creatingFolder`, a missing folder (whose own folder exists) is created only when the
  /// file is put in place, so a command stopped before that leaves no empty folder either.
  ///
  /// `ownFile` is for Tape's own files (the decoded-audio cache): nothing at the name is
  /// followed or written through; whatever is there (a symlink someone planted, a FIFO, a
  /// device) is replaced by the new file, as a rename replaces a name.
  /// A file to create at `target` (named `path` to the user), in its folder, or in a folder
  /// made when the file is put in place.
  private static func newFile(
    _ path: String, at target: String, creatingFolder: Bool
  ) throws(SafeFileError) -> OutputDestination {
    let folder = Self.folder(of: target)
    if creatingFolder && FileIdentity(path: folder) == nil {
      try checkFolder(of: folder, for: path)
      var destination = OutputDestination(path: path, target: target, kind: .file, existing: nil)
      destination.folderToCreate = folder
      return destination
    }
    try checkFolder(of: target, for: path)
    return OutputDestination(path: path, target: target, kind: .file, existing: nil)
  }

  public static func resolve(
    _ path: String, creatingFolder: Bool = false, ownFile: Bool = false
  ) throws(SafeFileError) -> OutputDestination {
    // `/dev/stdout` on a pipe or socket links to `pipe:[…]`, which no path opens: it is
    // standard output, as `-` is.
    let standardOutput = FileIdentity(descriptor: STDOUT_FILENO)
    if path == "-"
      || (["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"].contains(path)
        && [UInt32(S_IFIFO), UInt32(S_IFSOCK)].contains(standardOutput?.type))
    {
      return OutputDestination(
        path: path, target: "-", kind: .standardOutput, existing: standardOutput)
    }
    var path = path
    while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
    guard Self.name(of: path).utf8.count <= Self.longestName else {
      throw .nameTooLong(path: path, limit: Self.longestName)
    }
    if ownFile {
      var info = stat()
      let present = lstat(path, &info) == 0
      if present && (UInt32(info.st_mode) & UInt32(S_IFMT)) == UInt32(S_IFDIR) {
        throw .isFolder(path: path)
      }
      return try newFile(path, at: path, creatingFolder: creatingFolder)
    }
    let target = try followingSymlinks(path)
    guard let existing = FileIdentity(path: target) else {
      return try newFile(path, at: target, creatingFolder: creatingFolder)
    }
    switch existing.type {
    case UInt32(S_IFREG):
      try checkFolder(of: target, for: path)
      // A file nobody may write (mode 444) is read-only for root too: it was made so.
      guard access(target, W_OK) == 0, existing.permissions & 0o222 != 0 else {
        throw .readOnly(path: path)
      }
      return OutputDestination(path: path, target: target, kind: .file, existing: existing)
    case UInt32(S_IFCHR):
      return OutputDestination(
        path: path, target: target, kind: .characterDevice, existing: existing)
    case UInt32(S_IFIFO):
      return OutputDestination(path: path, target: target, kind: .fifo, existing: existing)
    case UInt32(S_IFDIR):
      throw .isFolder(path: path)
    case UInt32(S_IFBLK):
      throw .unsupportedKind(path: path, kind: "a block device")
    case UInt32(S_IFSOCK):
      throw .unsupportedKind(path: path, kind: "a socket")
    default:
      throw .unsupportedKind(path: path, kind: "not a regular file")
    }
  }

  /// `path` with every symlink at its end followed, also when the last one dangles (the file it
  /// names will be created). Symlinks among the folders are left to the kernel.
  static func followingSymlinks(_ path: String) throws(SafeFileError) -> String {
    var current = path
    for _ in 0..<40 {
      var info = stat()
      guard lstat(current, &info) == 0, (UInt32(info.st_mode) & UInt32(S_IFMT)) == UInt32(S_IFLNK)
      else { return current }
      try checkLinkOwner(info, at: current, for: path)
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let count = readlink(current, &buffer, buffer.count - 1)
      guard count > 0 else { throw .badSymlink(path: path) }
      let bytes = buffer.prefix(count).map { UInt8(bitPattern: $0) }
      // Decoding would replace such bytes and name another file: the output would not go
      // where the link points.
      guard let link = String(validating: bytes, as: UTF8.self) else {
        throw .symlinkNotUTF8(path: path, link: Self.readable(bytes))
      }
      if link.hasPrefix("/") {
        current = link
      } else {
        let folder = Self.folder(of: current)
        current = folder == "." && !current.hasPrefix("./") ? link : "\(folder)/\(link)"
      }
    }
    throw .badSymlink(path: path)
  }

  /// Refuses a symlink in a sticky, world-writable folder (`/tmp`) unless this user or the
  /// folder's owner made it: the rule of the kernel's `fs.protected_symlinks`, kept whether the
  /// machine sets it or not. Another user's link there points wherever they like (the victim's
  /// `~/.bashrc`, their project), and following it replaced that file.
  static func checkLinkOwner(
    _ link: stat, at current: String, for path: String
  ) throws(SafeFileError) {
    let folder = Self.folder(of: current)
    var info = stat()
    guard stat(folder, &info) == 0 else { return }
    let mode = UInt32(info.st_mode)
    guard mode & UInt32(S_ISVTX) != 0, mode & UInt32(S_IWOTH) != 0,
      link.st_uid != geteuid(), link.st_uid != info.st_uid
    else { return }
    throw .foreignSymlink(
      path: path, link: current, owner: userName(link.st_uid), folder: folder)
  }

  /// `name (uid N)`, or `uid N` when the user has no name here.
  static func userName(_ uid: uid_t) -> String {
    guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
    return "\(String(cString: name)) (uid \(uid))"
  }

  /// `bytes` as text, each byte that is not UTF-8 written `\xE9`.
  static func readable(_ bytes: [UInt8]) -> String {
    var text = ""
    var index = 0
    while index < bytes.count {
      var end = min(bytes.count, index + 4)
      while end > index, String(validating: bytes[index..<end], as: UTF8.self) == nil { end -= 1 }
      if end > index {
        text += String(decoding: bytes[index..<end], as: UTF8.self)
        index = end
      } else {
        text +=
          "\\x" + String(bytes[index] >> 4, radix: 16, uppercase: true)
          + String(bytes[index] & 15, radix: 16, uppercase: true)
        index += 1
      }
    }
    return text
  }

  /// The folder a path's last component lives in (`.` for a bare name).
  static func folder(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let folder = String(path[..<slash])
    return folder.isEmpty ? "/" : folder
  }

  /// The last component of a path.
  static func name(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return path }
    return String(path[path.index(after: slash)...])
  }

  /// The longest file name Linux file systems take, in bytes (`NAME_MAX`).
  public static let longestName = 255

  private static func checkFolder(of target: String, for path: String) throws(SafeFileError) {
    let folder = Self.folder(of: target)
    guard let identity = FileIdentity(path: folder) else {
      if errno == EACCES { throw .folderNotReachable(path: path, folder: folder) }
      throw .folderMissing(path: path, folder: folder)
    }
    guard identity.isDirectory else { throw .notAFolder(path: path, folder: folder) }
    guard access(folder, W_OK | X_OK) == 0 else {
      throw .folderNotWritable(path: path, folder: folder)
    }
  }
}

/// How Tape writes a file: the one place that creates, replaces and streams output.
///
/// Rules (the renderer, the decoded-audio cache and every other writer go through here):
/// - A regular file, or a new path, is written to an unnamed file in the target's folder
///   (Linux `O_TMPFILE`) and named only when complete: linked under a random name created
///   exclusively beside the target, then renamed over it. Readers see the old file or the whole
///   new one; a process stopped at any moment, even by `kill -9`, leaves nothing behind. The
///   new file keeps the permissions of the file it replaces.
/// - Where the file system has no `O_TMPFILE` (NFS, CIFS, vfat, older overlayfs), the file is
///   created under a random name with `O_EXCL | O_NOFOLLOW` (as `mkstemp` does), removed on
///   failure and on SIGINT, SIGTERM and SIGHUP (``Termination``); a `kill -9` there can leave
///   that one file.
/// - A symlink is followed and its target replaced; the link stays.
/// - A character device, a FIFO and `-` (standard output) are written straight through as a
///   stream. A FIFO is opened with `O_NONBLOCK` first, so one without a reader is an error
///   (ENXIO), not a hang. A reader that goes away is ``SafeFileError/brokenPipe(path:)``.
/// - Nothing is ever opened through a name another user could have planted: no predictable
///   temporary names, no following of a symlink at a temporary name.
///
/// `TAPE_NO_TMPFILE=1` in the environment takes the fallback path everywhere, so tests can show
/// that it is safe too.
///
/// ```swift
/// let output = try SafeOutput(try OutputDestination.resolve("mix.wav"))
/// try output.write(bytes)
/// try output.commit()  // mix.wav appears, complete
/// ```
public final class SafeOutput {
  public let destination: OutputDestination
  /// Where to write. For a file: an unnamed (or randomly named) file in the target's folder.
  public let descriptor: Int32
  /// The fallback's random name, while it exists.
  private var temporaryName: String?
  private var cleanupToken: Int?
  private var finished = false

  /// Opens `destination` for writing (see the rules above). Nothing appears under the target's
  /// name until ``commit()``.
  public init(_ destination: OutputDestination) throws(SafeFileError) {
    self.destination = destination
    switch destination.kind {
    case .standardOutput:
      descriptor = STDOUT_FILENO
    case .characterDevice:
      let fd = open(destination.target, O_WRONLY | O_CLOEXEC | O_NOCTTY)
      guard fd >= 0 else { throw .cannotOpen(path: destination.path, errno: errno) }
      descriptor = fd
    case .fifo:
      let fd = open(destination.target, O_WRONLY | O_CLOEXEC | O_NONBLOCK)
      guard fd >= 0 else {
        throw errno == ENXIO
          ? .noReader(path: destination.path) : .cannotOpen(path: destination.path, errno: errno)
      }
      // Blocking from now on: the reader paces us.
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
      descriptor = fd
    case .file:
      Self.removeStaleTemporaries(beside: destination.target)
      // In the folder to create's parent until then: the same file system, so it links across.
      let folder = OutputDestination.folder(of: destination.folderToCreate ?? destination.target)
      var fd: Int32 = -1
      if getenv("TAPE_NO_TMPFILE") == nil {
        fd = open(folder, Self.temporaryFile | O_RDWR | O_CLOEXEC, 0o666)
      } else {
        errno = EOPNOTSUPP
      }
      if fd < 0 && [EOPNOTSUPP, EISDIR, EINVAL, ENOENT].contains(errno) {
        // No O_TMPFILE here: an exclusively created random name, removed on a signal.
        for _ in 0..<16 {
          let name = Self.randomName(beside: destination.folderToCreate ?? destination.target)
          let (opened, token) = Termination.withoutInterruption {
            let opened = open(name, O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR | O_CLOEXEC, 0o666)
            return (opened, opened >= 0 ? Termination.remember(name) : nil)
          }
          fd = opened
          if fd >= 0 {
            temporaryName = name
            cleanupToken = token
            break
          }
          if errno != EEXIST { break }
        }
      }
      guard fd >= 0 else { throw .cannotOpen(path: destination.path, errno: errno) }
      if let existing = destination.existing {
        _ = fchmod(fd, mode_t(existing.permissions))
      }
      descriptor = fd
    }
  }

  deinit {
    discard()
  }

  /// Writes all of `bytes` at the current position, retrying short writes and interruptions.
  public func write(_ bytes: UnsafeRawBufferPointer) throws(SafeFileError) {
    guard var address = bytes.baseAddress else { return }
    var remaining = bytes.count
    while remaining > 0 {
      let written = Glibc.write(descriptor, address, remaining)
      if written < 0 {
        if errno == EINTR { continue }
        throw errno == EPIPE
          ? .brokenPipe(path: destination.path) : .write(path: destination.path, errno: errno)
      }
      address += written
      remaining -= written
    }
  }

  /// Writes all of `values`' bytes at the current position.
  public func write<Element: BitwiseCopyable>(_ values: [Element]) throws(SafeFileError) {
    try values.withUnsafeBytes { bytes in
      Result { () throws(SafeFileError) in try write(bytes) }
    }.get()
  }

  /// Writes all of `values`' bytes at `offset` (a file only: streams cannot seek).
  public func write<Element: BitwiseCopyable>(
    _ values: [Element], at offset: Int64
  ) throws(SafeFileError) {
    try values.withUnsafeBytes { bytes in
      Result { () throws(SafeFileError) in try write(bytes, at: offset) }
    }.get()
  }

  /// Writes all of `bytes` at `offset` (a file only: streams cannot seek).
  public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SafeFileError) {
    guard var address = bytes.baseAddress else { return }
    var remaining = bytes.count
    var position = offset
    while remaining > 0 {
      let written = pwrite(descriptor, address, remaining, off_t(position))
      if written < 0 {
        if errno == EINTR { continue }
        throw .write(path: destination.path, errno: errno)
      }
      address += written
      remaining -= written
      position += Int64(written)
    }
  }

  /// Finishes the output. A file is flushed to disk and put in place under the target's name,
  /// replacing what was there; a stream is closed (standard output is left open).
  public func commit() throws(SafeFileError) {
    guard !finished else { return }
    guard destination.kind == .file else {
      finished = true
      if destination.kind != .standardOutput { close(descriptor) }
      return
    }
    guard fsync(descriptor) == 0 else { throw .write(path: destination.path, errno: errno) }
    let target = destination.target
    if let folder = destination.folderToCreate, mkdir(folder, 0o777) != 0, errno != EEXIST {
      throw .cannotOpen(path: folder, errno: errno)
    }
    let named: String
    if let temporaryName {
      named = temporaryName
    } else {
      named = try linkUnderRandomName()
    }
    guard rename(named, target) == 0 else {
      let code = errno
      unlink(named)
      temporaryName = nil
      Termination.forget(cleanupToken)
      cleanupToken = nil
      throw .cannotRename(path: destination.path, errno: code)
    }
    temporaryName = nil
    Termination.forget(cleanupToken)
    cleanupToken = nil
    finished = true
    close(descriptor)
    // The rename itself must survive a power loss too.
    let folder = open(OutputDestination.folder(of: target), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if folder >= 0 {
      fsync(folder)
      close(folder)
    }
  }

  /// Abandons the output: an unnamed file vanishes, a fallback name is removed, a stream is
  /// closed. Called by `deinit` for anything not committed.
  public func discard() {
    guard !finished else { return }
    finished = true
    if let temporaryName { unlink(temporaryName) }
    temporaryName = nil
    Termination.forget(cleanupToken)
    cleanupToken = nil
    if destination.kind != .standardOutput { close(descriptor) }
  }

  /// Gives the unnamed file a random name beside the target (never an existing one: `linkat`
  /// does not replace), through `/proc/self/fd` as open(2) describes; `AT_EMPTY_PATH` where
  /// `/proc` is not mounted (it needs CAP_DAC_READ_SEARCH).
  private func linkUnderRandomName() throws(SafeFileError) -> String {
    var code: Int32 = 0
    for _ in 0..<16 {
      let name = Self.randomName(beside: destination.target)
      let token = Termination.withoutInterruption { () -> Int?? in
        guard
          linkat(AT_FDCWD, "/proc/self/fd/\(descriptor)", AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0
            || (errno == ENOENT && linkat(descriptor, "", AT_FDCWD, name, Self.emptyPath) == 0)
        else { return nil }
        return .some(Termination.remember(name))
      }
      if let token {
        temporaryName = name
        cleanupToken = token
        return name
      }
      code = errno
      if code != EEXIST { break }
    }
    throw .cannotRename(path: destination.path, errno: code)
  }

  /// `folder/.name.tape-<16 random hex digits>-<host>-<pid>`, or `folder/.tape-…` when the
  /// name is too long to carry (a file system takes 255 bytes at most). The host (8 hex digits
  /// of a hash of its name) and the process id say whose it is, so that a later writer can
  /// tell one that a `kill -9` left (``removeStaleTemporaries(beside:)``).
  static func randomName(beside target: String) -> String {
    let folder = OutputDestination.folder(of: target)
    let name = OutputDestination.name(of: target)
    let suffix =
      ".tape-\(hex(UInt64.random(in: .min ... .max), digits: 16))-\(hostMark)-\(getpid())"
    let prefix =
      name.utf8.count + suffix.utf8.count + 1 <= OutputDestination.longestName
      ? ".\(name)" : ""
    return "\(folder)/\(prefix)\(suffix)"
  }

  /// Removes the temporary names beside `target` that a writer on this host, of this user,
  /// left when it was killed (`kill -9` between naming its file and renaming it): a regular
  /// file named as ``randomName(beside:)`` names them, whose process is gone. Another user's,
  /// another host's, or a running process's are left alone.
  static func removeStaleTemporaries(beside target: String) {
    let folder = OutputDestination.folder(of: target)
    let prefixes = [".\(OutputDestination.name(of: target)).tape-", ".tape-"]
    guard let directory = opendir(folder) else { return }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
        String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
      }
      guard let prefix = prefixes.first(where: { name.hasPrefix($0) }) else { continue }
      let fields = name.dropFirst(prefix.count).split(separator: "-")
      guard fields.count == 3, fields[0].count == 16, fields[1] == hostMark,
        let pid = Int32(fields[2]), pid > 0, pid != getpid(),
        kill(pid, 0) != 0, errno == ESRCH
      else { continue }
      let path = "\(folder)/\(name)"
      var info = stat()
      guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid()
      else { continue }
      unlink(path)
    }
  }

  /// 8 hex digits of an FNV-1a hash of this host's name.
  static let hostMark: String = {
    var name = [CChar](repeating: 0, count: 256)
    gethostname(&name, name.count - 1)
    var hash: UInt32 = 0x811C_9DC5
    for byte in name.prefix(while: { $0 != 0 }) {
      hash = (hash ^ UInt32(UInt8(bitPattern: byte))) &* 0x0100_0193
    }
    return hex(UInt64(hash), digits: 8)
  }()

  private static func hex(_ value: UInt64, digits: Int) -> String {
    let text = String(value, radix: 16)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
  }

  /// `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`), a macro Swift does not import.
  static let temporaryFile: Int32 = 0o20_000_000 | O_DIRECTORY
  /// `AT_EMPTY_PATH`.
  static let emptyPath: Int32 = 0x1000
}
