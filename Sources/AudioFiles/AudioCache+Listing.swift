public import Foundation
import SafeFiles
public import Timeline

/// One file of a project's decoded-audio cache, as `tape cache` lists it.
public struct CacheListing: Sendable, Hashable {
  public enum Kind: String, Sendable, Hashable, CaseIterable {
    /// A source decoded at the project rate (`<hash>-<rate>hz-<channels>ch.f32`).
    case audio
    /// A source file's identity record (`<hash>-<path key>.source`).
    case identity
    /// A source's waveform overview at the project rate, what `tape draw` reads
    /// (`<hash>-<rate>hz-<channels>ch-256.peaks`).
    case peaks
  }

  public let path: String
  public let kind: Kind
  public let bytes: Int64
  public let modified: Date
  /// The sources (of any version) this entry serves; empty when none does any more.
  public let sources: [Source.ID]
  /// Those sources as the versions have them (a relinked source has one value per file): the
  /// values whose audio (by content hash) or whose file's identity this entry is.
  public let users: [Source]
  /// In the project's own cache folder (`song.tape-cache/`), not the user's shared one.
  public let isProjectFolder: Bool
}

extension AudioCache {
  /// How long a new entry no version uses is left alone by ``clean(_:now:)``: an import or a
  /// render decodes a source into the cache before its project holds the source.
  public static let cleanGracePeriod: TimeInterval = 600

  /// The entries of this cache that belong to `sources` (every source of every version, with
  /// the project's rate), and in the project's own folder also those that belong to none.
  ///
  /// The user's cache (`~/.cache/tape`) is shared by every project there, so only the entries
  /// of `sources` are listed from it. Files that are not entries (a file being written, a
  /// marker), symlinks and files not owned safely (``/SafeFiles/isOwnedSafely(path:owners:)``)
  /// are left out.
  public func entries(for sources: [Source], projectRate: Int) -> [CacheListing] {
    var owners: [String: [Source]] = [:]
    for source in sources {
      owners[Self.entryName(for: source, projectRate: projectRate), default: []].append(source)
      owners[Self.peakName(for: source, projectRate: projectRate), default: []].append(source)
      // Named as ``checkSourceFile(_:)`` names the record: by the file's absolute path.
      owners[Self.identityName(for: source, file: file(of: source).absolute), default: []]
        .append(source)
    }
    var found: [CacheListing] = []
    var seen = Set<String>()
    for directory in directories where seen.insert(directory).inserted {
      let own = directory == projectDirectory
      let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
      for name in names.sorted() {
        let kind: CacheListing.Kind
        if name.hasSuffix(".f32") {
          kind = .audio
        } else if name.hasSuffix(".source") {
          kind = .identity
        } else if name.hasSuffix(".peaks") {
          kind = .peaks
        } else {
          continue
        }
        let users = owners[name] ?? []
        guard own || !users.isEmpty, !name.hasPrefix(".") else { continue }
        let path = "\(directory)/\(name)"
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
          isOwnedSafely(path: path, owners: self.owners)
        else { continue }
        found.append(
          CacheListing(
            path: path, kind: kind, bytes: Int64(info.st_size),
            modified: Date(
              timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec)
                / 1e9),
            sources: Set(users.map(\.id)).sorted { $0.rawValue < $1.rawValue }, users: users,
            isProjectFolder: own))
      }
    }
    return found
  }

  /// Removes the entries of `entries` that no source uses, from the project's own folder only,
  /// and never one that is in use: one a process has open (a player reading it), or one
  /// younger than ``cleanGracePeriod``. Returns those removed and those kept because in use.
  public func clean(
    _ entries: [CacheListing], now: Date = Date()
  ) -> (removed: [CacheListing], inUse: [CacheListing]) {
    let candidates = entries.filter { $0.sources.isEmpty && $0.isProjectFolder }
    guard !candidates.isEmpty else { return ([], []) }
    let open = Self.filesOpenByAnyProcess()
    var removed: [CacheListing] = []
    var inUse: [CacheListing] = []
    for entry in candidates {
      let resolved = URL(fileURLWithPath: entry.path).resolvingSymlinksInPath().path
      if open.contains(resolved) || open.contains(entry.path)
        || now.timeIntervalSince(entry.modified) < Self.cleanGracePeriod
      {
        inUse.append(entry)
        continue
      }
      if unlink(entry.path) == 0 { removed.append(entry) }
    }
    return (removed, inUse)
  }

  /// The files any process this user may look at holds open (`/proc/PID/fd`).
  static func filesOpenByAnyProcess() -> Set<String> {
    var open = Set<String>()
    let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    for pid in processes where pid.allSatisfy(\.isNumber) {
      let folder = "/proc/\(pid)/fd"
      for fd in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
        if let target = try? FileManager.default.destinationOfSymbolicLink(
          atPath: "\(folder)/\(fd)")
        {
          open.insert(target)
        }
      }
    }
    return open
  }
}
