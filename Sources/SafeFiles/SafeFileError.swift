#if canImport(Glibc)
  import Glibc
#endif

/// Why an output file could not be written, with what to do about it.
public enum SafeFileError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The output's folder does not exist.
  case folderMissing(path: String, folder: String)
  /// Something on the output's way is not a folder.
  case notAFolder(path: String, folder: String)
  /// The output's folder may not be written by this user.
  case folderNotWritable(path: String, folder: String)
  /// The output's folder cannot be reached (a folder on its way may not be entered).
  case folderNotReachable(path: String, folder: String)
  /// The output's name is longer than file systems take.
  case nameTooLong(path: String, limit: Int)
  /// The output names a folder.
  case isFolder(path: String)
  /// The output is a socket, a block device or something else Tape does not write to.
  case unsupportedKind(path: String, kind: String)
  /// The output exists and is read-only.
  case readOnly(path: String)
  /// A FIFO with no program reading it.
  case noReader(path: String)
  /// A symlink that leads nowhere usable (a loop, or too deep).
  case badSymlink(path: String)
  /// A symlink to a name that is not valid UTF-8 (`link`: readable, `\xE9` for such bytes).
  case symlinkNotUTF8(path: String, link: String)
  /// The operating system refused to open or create the output; `errno` says why.
  case cannotOpen(path: String, errno: Int32)
  /// Writing failed part-way (`errno`: ENOSPC, EIO, …).
  case write(path: String, errno: Int32)
  /// The program reading a stream went away (EPIPE).
  case brokenPipe(path: String)
  /// The finished file could not be given its name.
  case cannotRename(path: String, errno: Int32)
  /// A symlink in a shared sticky folder (`/tmp`) that another user made: not followed, as the
  /// kernel's `fs.protected_symlinks` would not.
  case foreignSymlink(path: String, link: String, owner: String, folder: String)

  /// Standard output's name in messages.
  static func shown(_ path: String) -> String {
    path == "-" ? "standard output" : path
  }

  public var description: String {
    switch self {
    case .folderMissing(let path, let folder):
      return
        "cannot create \(path): the folder \(folder) does not exist; create it with mkdir -p \(folder)"
    case .notAFolder(let path, let folder):
      return "cannot create \(path): \(folder) is not a folder; give an output path inside a folder"
    case .folderNotWritable(let path, let folder):
      return
        "cannot create \(path): the folder \(folder) is not writable; check its permissions or write elsewhere"
    case .folderNotReachable(let path, let folder):
      return
        "cannot create \(path): the folder \(folder) cannot be reached (permission denied); write elsewhere"
    case .nameTooLong(let path, let limit):
      return
        "cannot create \(path): its name is longer than file systems take (\(limit) bytes); choose a shorter name"
    case .isFolder(let path):
      return "-o \(path) is a folder; give a file name such as \(path)/mix.wav"
    case .unsupportedKind(let path, let kind):
      return
        "-o \(path) is \(kind); Tape writes to a regular file, a character device, a FIFO or - (standard output)"
    case .readOnly(let path):
      return "\(path) is read-only; change its mode (chmod u+w) or choose another output"
    case .noReader(let path):
      return
        "no program is reading the FIFO \(path); start its reader first (for example: sox -t wav \(path) out.flac &)"
    case .badSymlink(let path):
      return "\(path) is a symlink that leads nowhere (a loop, or too many links); fix or remove it"
    case .symlinkNotUTF8(let path, let link):
      return
        "\(path) is a symlink to '\(link)', a name that is not valid UTF-8; write to a file with a UTF-8 name"
    case .cannotOpen(let path, let code):
      return "cannot create \(Self.shown(path)): \(String(cString: strerror(code)))"
    case .write(let path, let code):
      let fix =
        code == ENOSPC
        ? "free some space or choose another output path" : "check the disk and try again"
      return "writing \(Self.shown(path)) failed: \(String(cString: strerror(code))); \(fix)"
    case .brokenPipe(let path):
      return
        "the program reading \(Self.shown(path)) stopped reading (broken pipe); the output is incomplete"
    case .foreignSymlink(let path, let link, let owner, let folder):
      return
        "\(path) leads through \(link), a symlink that \(owner) made in the shared folder \(folder); Tape does not follow another user's link there (nor does the kernel's fs.protected_symlinks), so remove it or choose another name"
    case .cannotRename(let path, let code):
      return
        "cannot put the finished file in place as \(path): \(String(cString: strerror(code))); check the folder's permissions"
    }
  }
}
