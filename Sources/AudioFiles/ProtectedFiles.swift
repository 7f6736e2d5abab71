import Foundation
public import SafeFiles
public import Timeline

/// The files a write near a project must never replace: the project file, its SQLite side
/// files, every source any of its versions uses, and its decoded-audio cache.
///
/// Rule: an output is refused when it is the same file (by device and inode, whatever its name)
/// as the project file, a source of any version, or a cache file; or when it is named as the
/// project's `-wal`, `-shm` or `-journal` (by the name given and by the file SQLite opens, a
/// symlink resolved), or lies in a cache folder, whether or not that file exists yet: SQLite
/// may create it any moment. What `tape render`, `tape compare -o` and `tape export` check
/// before they write a byte.
///
/// Why: a render written over a source or the project's log destroys what the user saved, and
/// no undo brings it back; a name is not enough to know (a hard link, a symlink, a bind mount).
///
/// What if the output is standard output: it is checked too when it is a file (`1<> song.tape`
/// does not truncate it).
///
/// ```swift
/// let protected = ProtectedFiles(project: store.path, cache: cache) {
///   try store.sourcePathsInHistory()
/// }
/// if let conflict = try protected.conflict(with: try OutputDestination.resolve("mix.wav")) {
///   print("mix.wav is \(conflict.what) (\(conflict.path))")
/// }
/// ```
public struct ProtectedFiles {
  public let project: String
  public let cache: AudioCache
  /// The sources of every version, as stored (relative to the project's folder or absolute):
  /// read only when an existing file is to be written (reading them scans the history).
  public let sources: () throws -> Set<RawPath>

  public init(
    project: String, cache: AudioCache, sources: @escaping () throws -> Set<RawPath>
  ) {
    self.project = project
    self.cache = cache
    self.sources = sources
  }

  /// What `destination` would destroy: what it is ("the project file itself", "a source of
  /// this project"…) and the path that is it; nil when it destroys nothing of the project.
  /// Throws what ``sources`` throws.
  public func conflict(
    with destination: OutputDestination
  ) throws -> (what: String, path: String)? {
    let sidecars = [
      ("-wal", "the project's write-ahead log"), ("-shm", "the project's shared-memory index"),
      ("-journal", "the project's journal"),
    ]
    // The project by the name given and by the file SQLite opens (a symlink resolved), whose
    // side files are named from the resolved name.
    let projects = [Self.resolvedPath(project), Self.realPath(project)].compactMap { $0 }
    if destination.kind == .file {
      let target = Self.resolvedPath(destination.target)
      // The folder by identity, so that a bind mount or another path to it is the same folder.
      let targetFolder = FileIdentity(path: (target as NSString).deletingLastPathComponent)
      let targetName = (target as NSString).lastPathComponent
      for (suffix, what) in sidecars {
        for resolved in projects {
          let projectFolder = FileIdentity(path: (resolved as NSString).deletingLastPathComponent)
          let sameFolder =
            targetFolder.flatMap { folder in projectFolder.map(folder.isSameFile) } ?? false
          if target == resolved + suffix
            || (sameFolder && targetName == (resolved as NSString).lastPathComponent + suffix)
          {
            return (what, (resolved == projects[0] ? project : resolved) + suffix)
          }
        }
      }
      for folder in cache.directories
      where (target as NSString).deletingLastPathComponent == Self.resolvedPath(folder) {
        return ("inside the decoded-audio cache", folder)
      }
    }
    guard let existing = destination.existing, existing.isRegularFile else { return nil }
    var protected: [(path: RawPath, what: String)] = [
      (RawPath(project), "the project file itself")
    ]
    for name in [project] + projects {
      protected += sidecars.map { (RawPath(name + $0.0), $0.1) }
    }
    protected += try sources().sorted().map {
      ($0.resolved(against: cache.projectFolder), "a source of this project")
    }
    protected += cache.files.map { (RawPath($0), "a decoded-audio cache file") }
    for (path, what) in protected {
      guard let identity = path.withCString({ FileIdentity(cPath: $0) }),
        identity.isSameFile(as: existing)
      else { continue }
      return (what, path.description)
    }
    return nil
  }

  /// `path` with every symlink resolved, the file's own included; nil when it does not exist.
  static func realPath(_ path: String) -> String? {
    guard let real = realpath(path, nil) else { return nil }
    defer { free(real) }
    return String(cString: real)
  }

  /// `path` with its folder's symlinks, `.` and `..` resolved (the file itself need not exist).
  static func resolvedPath(_ path: String) -> String {
    let folder = RawPath(path).folder.description
    let name = (path as NSString).lastPathComponent
    guard let real = realpath(folder.isEmpty ? "." : folder, nil) else { return path }
    defer { free(real) }
    return String(cString: real) + "/" + name
  }
}
