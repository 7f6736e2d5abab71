#if canImport(Glibc)
  import Glibc
#endif

/// A folder beside a target that only this process's user may enter, under a random name: for
/// writers that must work by file name (SQLite builds a new project by name) before the result
/// is put in place.
///
/// Nobody else can plant a symlink inside it, so the names chosen there are safe. Its files are
/// removed on a signal (``Termination``) and by ``remove()``; only a `kill -9` between creation
/// and removal can leave the folder behind.
///
/// ```swift
/// let folder = try PrivateFolder(beside: "song.tape")
/// defer { folder.remove() }
/// let database = folder.file("song.tape")   // build it here
/// try folder.publish(database, as: "song.tape")
/// ```
public final class PrivateFolder {
  public let path: String
  private var files: [(path: String, token: Int?)] = []
  private let token: Int?

  /// Creates the folder (mode 0700) in the folder of `target`.
  public init(beside target: String) throws(SafeFileError) {
    let folder = OutputDestination.folder(of: target)
    var template = Array("\(folder)/.\(OutputDestination.name(of: target)).tape-XXXXXX".utf8CString)
    let made = Termination.withoutInterruption { () -> (String, Int?)? in
      let made = template.withUnsafeMutableBufferPointer { buffer in
        buffer.baseAddress.flatMap { mkdtemp($0) }
      }
      return made.map { made in
        let path = String(cString: made)
        return (path, Termination.remember(path))
      }
    }
    guard let made else {
      throw .cannotOpen(path: target, errno: errno)
    }
    (path, token) = made
  }

  deinit {
    remove()
  }

  /// The path of `name` inside the folder; removed with the folder, and on a signal.
  public func file(_ name: String) -> String {
    let file = "\(path)/\(name)"
    let token = Termination.remember(file)
    files.append((file, token))
    return file
  }

  /// Gives `file` the name `target` without replacing anything there: fails with EEXIST when
  /// `target` appeared in the meantime.
  public func publish(_ file: String, as target: String) throws(SafeFileError) {
    guard link(file, target) == 0 else { throw .cannotOpen(path: target, errno: errno) }
  }

  /// Removes every file named through ``file(_:)`` and the folder.
  public func remove() {
    for (file, token) in files {
      unlink(file)
      Termination.forget(token)
    }
    files.removeAll()
    rmdir(path)
    Termination.forget(token)
  }
}
