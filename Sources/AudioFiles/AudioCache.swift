import Foundation
import Logging
public import Mixing
import SafeFiles
import Synchronization
public import Timeline

/// The decoded-audio cache: each source decoded once (and resampled to the project rate with
/// libsoxr at high quality) into a checksummed file (`CacheFileLayout`), read back chunk by
/// chunk with `pread` as renders and playback need it (``CachedSource``).
///
/// Rules:
/// - An entry is keyed by the source's content hash, the project rate and the channel count, so
///   it can never serve another file's audio. Its header and every chunk carry checksums,
///   verified as they are read: a damaged or truncated entry is decoded again, never played.
/// - Before a source is used, its file must still be the audio that was imported. Its identity
///   (device, inode, size, modification and change times) is kept beside the entry, in the
///   cache, not in the project (readers never write the project); when any of it changed, the
///   file is hashed again, and a file whose hash differs is refused (``AudioFileError/sourceChanged(source:path:)``),
///   even when its old audio is cached. `cp -p` and `rsync -t` restore a modification time,
///   never a change time, so a replaced file is always noticed.
/// - Entries are written through ``/SafeFiles/SafeOutput``: complete or not at all.
/// - A project's cache is `song.tape-cache/` beside it; when the project's folder cannot be
///   written, new entries go to the user's cache (`$XDG_CACHE_HOME/tape`, by default
///   `~/.cache/tape`), and existing ones beside the project are still read.
///
/// ```swift
/// let cache = AudioCache(forProject: "song.tape")
/// let decoded = try cache.load(source, projectRate: 48_000)
/// try decoded.makeResident(0)
/// decoded.audio.chunk(0)?[0]
/// ```
public struct AudioCache: Sendable {
  /// Where entries are looked for, in order; new entries go to the first.
  public let directories: [String]
  /// Whether the first directory is the user's cache, whose parents (`~/.cache`) are made as
  /// needed; a project's own cache folder is made only beside an existing project.
  let isUserCache: Bool
  /// The project's own cache folder (`song.tape-cache`) when this cache uses it (it is
  /// trusted); the one folder of a cache made with ``init(directory:projectFolder:)``. Only
  /// entries here may be cleaned: the user's cache is shared by other projects.
  public let projectDirectory: String?
  /// Where the chunks of the sources loaded through this cache live in memory.
  let memory: ChunkPool
  /// Whose cache folders and entries are trusted: this user's and the project file's owner's
  /// (who could change the project itself anyway), and only when nobody else may write them.
  let owners: [UInt32]
  /// The mode of new entries: the project file's, never wider, never writable by others; new
  /// folders get the same with search permission where it may be read.
  let entryMode: mode_t
  /// Polled while a source is hashed or decoded (every MiB read, every 16,384 frames): when it
  /// returns true the work stops within milliseconds, nothing is kept in the cache (an entry
  /// appears only once complete), and ``AudioFileError/decodeStopped(source:)`` is thrown.
  /// A player sets it to its Ctrl-C / SIGTERM / `q` check.
  public var isCancelled: @Sendable () -> Bool = { false }
  /// Told how a decode goes (``DecodeProgress``): when its source's file is being checked,
  /// then after every chunk decoded. Called on the decoding thread.
  public var progress: (@Sendable (DecodeProgress) -> Void)?

  /// A cache in one folder.
  public init(directory: String, projectFolder: RawPath = ".") {
    self.init(directory: directory, projectFolder: projectFolder, memory: ChunkPool())
  }

  /// A cache in one folder whose chunks live in `memory`.
  init(directory: String, projectFolder: RawPath = ".", memory: ChunkPool) {
    directories = [directory]
    projectDirectory = directory
    self.projectFolder = projectFolder
    isUserCache = false
    self.memory = memory
    owners = [geteuid()]
    entryMode = 0o644
  }

  /// The cache of the project at `path`: beside it, or the user's cache when the project's
  /// folder cannot be written.
  ///
  /// `lockingMemory`: the chunks read are locked into RAM (for a player, whose audio thread
  /// must not wait for a page).
  public init(
    forProject path: String, environment: [String: String]? = nil, lockingMemory: Bool = false
  ) {
    let environment = environment ?? ProcessInfo.processInfo.environment
    memory = ChunkPool(locksMemory: lockingMemory)
    projectFolder = RawPath(path).folder
    let beside = Self.directory(forProject: path)
    let folder = RawPath(path).folder.description
    var info = stat()
    let project = stat(path, &info) == 0 ? info : nil
    owners = [geteuid()] + (project.map { [UInt32($0.st_uid)] } ?? [])
    entryMode = (project.map { mode_t($0.st_mode) } ?? 0o644) & 0o644
    let writable = invitesWriting(
      FileIdentity(path: beside) != nil ? beside : folder.isEmpty ? "." : folder,
      asFolder: true)
    // A cache folder someone else made (in advance, in /tmp), or that others may write (a
    // setgid shared folder, umask 000), may hold audio they chose: never read or written.
    let trusted = FileIdentity(path: beside) == nil || isOwnedSafely(path: beside, owners: owners)
    if !trusted {
      Self.warnOnce(
        "\(beside) is not only yours (another user made it or may write to it), so it is not used; decoded audio goes to \(Self.userDirectory(environment)) instead",
        about: beside, userDirectory: Self.userDirectory(environment))
      directories = [Self.userDirectory(environment)]
    } else if writable {
      directories = [beside]
    } else {
      directories = [Self.userDirectory(environment), beside]
    }
    isUserCache = !writable || !trusted
    projectDirectory = directories.contains(beside) ? beside : nil
  }

  private static let warned = Atomic<Bool>(false)

  /// Says `message` as a warning once: once per process, and once for the folder `path` as it
  /// is now (a marker in the user's cache, named from its path and identity, so a folder made
  /// again, or another one, is said again).
  static func warnOnce(_ message: String, about path: String, userDirectory: String) {
    guard !warned.exchange(true, ordering: .relaxed) else { return }
    var info = stat()
    lstat(path, &info)
    let key = Array(
      "\(path)\n\(FileIdentity(path: path).map(\.description) ?? "")\n\(info.st_uid)".utf8)
    let marker =
      "\(userDirectory)/untrusted-\(String(key.withUnsafeBytes { XXH64.digest($0) }, radix: 16))"
    guard FileIdentity(path: marker) == nil else { return }
    logger.warning("\(message)")
    try? FileManager.default.createDirectory(
      atPath: userDirectory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    _ = FileManager.default.createFile(atPath: marker, contents: Data())
  }

  /// Makes `directory` (a new cache folder: the mode of ``entryMode`` with search permission)
  /// unless it exists, and says whether it may be trusted.
  func prepare(_ directory: String) -> Bool {
    let folderMode = entryMode | ((entryMode & 0o444) >> 2)
    if mkdir(directory, isUserCache ? 0o700 : folderMode) == 0 {
      // The umask may have taken bits away, never added: set exactly what is meant.
      chmod(directory, isUserCache ? 0o700 : folderMode)
    }
    return isOwnedSafely(path: directory, owners: owners)
  }

  /// The folder that sources' relative paths are relative to: the project's.
  public let projectFolder: RawPath

  /// Where `source`'s file is: its path, resolved against the project's folder.
  public func file(of source: Source) -> RawPath {
    source.path.resolved(against: projectFolder)
  }

  /// Debug messages (`TAPE_LOG=debug`, `tape -v`): which files, cache hits, decode times.
  static let logger = Logger(label: "tape.cache")

  /// `s3 /audio/kick.wav` for messages; just the file for a source being imported (id 0).
  static func named(_ source: Source, _ file: RawPath) -> String {
    source.id.rawValue > 0 ? "\(source.id) \(file)" : "\(file)"
  }

  /// `song.tape` → `song.tape-cache`.
  public static func directory(forProject path: String) -> String {
    path + "-cache"
  }

  /// `$XDG_CACHE_HOME/tape`, or `$HOME/.cache/tape`.
  static func userDirectory(_ environment: [String: String]) -> String {
    if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") { return base + "/tape" }
    let home = environment["HOME"] ?? NSHomeDirectory()
    return home + "/.cache/tape"
  }

  /// The file name of `source`'s entry at `projectRate`.
  static func entryName(for source: Source, projectRate: Int) -> String {
    let key = source.contentHash.map { $0.isLetter || $0.isNumber ? $0 : "-" }
    return "\(String(key))-\(projectRate)hz-\(source.channels)ch.f32"
  }

  /// The cache file for `source` at `projectRate` in the first directory.
  public func path(for source: Source, projectRate: Int) -> String {
    "\(directories[0])/\(Self.entryName(for: source, projectRate: projectRate))"
  }

  /// Every file in the cache's folders (a render must not write over one).
  public var files: [String] {
    directories.flatMap { directory in
      ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).map {
        "\(directory)/\($0)"
      }
    }
  }

  /// The source's audio at the project rate, decoding it into the cache first if needed. No
  /// chunk is resident yet: see ``CachedSource/makeResident(_:)``.
  ///
  /// With `progressively`, a source not in the cache is decoded on a thread of its own, and
  /// this returns at once: each chunk can be read as soon as the decode has written it (a
  /// ``CachedSource/makeResident(_:)`` of a chunk not decoded yet waits for it), so a player
  /// starts once the chunks its first seconds need are there instead of after every source
  /// whole. The entry is still complete or not at all: put in place when the decode ends, and
  /// never if the process ends first. The source's file is checked first, as ever (by its
  /// identity, or hashed), before any of its audio is read.
  public func load(
    _ source: Source, projectRate: Int, progressively: Bool = false
  ) throws(AudioFileError) -> CachedSource {
    let expected = CacheFileLayout(
      channels: source.channels, frames: Int(source.frameCount(atRate: projectRate).frames),
      sampleRate: projectRate, contentHash: source.contentHash)
    let name = Self.entryName(for: source, projectRate: projectRate)
    var found: CacheEntry?
    for directory in directories
    where found == nil && isOwnedSafely(path: directory, owners: owners) {
      found = CacheEntry(path: "\(directory)/\(name)", expected: expected, owners: owners)
    }
    if let found {
      remember(try checkSourceFile(source))
      Self.logger.debug(
        "\(Self.named(source, file(of: source))): decoded audio found in the cache (\(found.path))")
      return CachedSource(source: source, projectRate: projectRate, cache: self, entry: found)
    }
    let path = "\(directories[0])/\(name)"
    guard progressively else {
      let identity = try checkSourceFile(source)
      let entry = try timedBuild(source, layout: expected, at: path)
      remember(identity)
      return CachedSource(source: source, projectRate: projectRate, cache: self, entry: entry)
    }
    // Missing, unreadable or resized is said now; a file to hash is hashed on the decoding
    // thread (a long one takes a while), before any of its audio can be read.
    let identity = try quickCheck(source)
    let build = EntryBuild(layout: expected, path: path)
    let cache = self
    Thread.detachNewThread {
      do throws(AudioFileError) {
        if let identity {
          cache.progress?(DecodeProgress(source: source, phase: .checking))
          try cache.hash(source, for: identity)
        }
        let entry = try cache.timedBuild(source, layout: expected, at: path, into: build)
        cache.remember(identity)
        build.finish(.success(entry))
      } catch {
        build.finish(.failure(error))
      }
    }
    return CachedSource(source: source, projectRate: projectRate, cache: self, building: build)
  }

  /// ``build(_:layout:at:into:)``, its time logged.
  func timedBuild(
    _ source: Source, layout: CacheFileLayout, at path: String, into sink: EntryBuild? = nil
  ) throws(AudioFileError) -> CacheEntry {
    let started = DispatchTime.now().uptimeNanoseconds
    let entry = try build(source, layout: layout, at: path, into: sink)
    Self.logger.debug(
      "\(Self.named(source, file(of: source))): decoded into \(entry.path) in \((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000) ms"
    )
    return entry
  }

  // MARK: The source file

  /// A source file's identity record to write beside the cache (once the entry it goes with
  /// exists: a stopped decode leaves no record either).
  struct IdentityRecord {
    let name: String
    let text: String
  }

  /// Checks that `source`'s file is still the audio that was imported: by its identity when
  /// that is unchanged since the last check, else by hashing it again. Returns the identity
  /// to remember (``remember(_:)``) when it was hashed.
  func checkSourceFile(_ source: Source) throws(AudioFileError) -> IdentityRecord? {
    guard let record = try quickCheck(source) else { return nil }
    try hash(source, for: record)
    return record
  }

  /// What ``checkSourceFile(_:)`` finds without reading the file: it is there, readable, of
  /// the size imported, and unchanged since its last check (nil), or it must be hashed (the
  /// identity to remember once it has been).
  func quickCheck(_ source: Source) throws(AudioFileError) -> IdentityRecord? {
    let file = file(of: source)
    guard let identity = file.withCString({ FileIdentity(cPath: $0) }) else {
      if errno == EACCES { throw .unreadable(path: file.description) }
      throw .sourceMissing(source: source.id.description, path: file.description)
    }
    if let recorded = source.contentHash.split(separator: ":").last.flatMap({ Int64($0) }),
      identity.size != recorded || !identity.isRegularFile
    {
      throw .sourceChanged(source: source.id.description, path: file.description)
    }
    let record = Self.identityRecord(source: source, file: file.absolute, identity: identity)
    let name = Self.identityName(for: source, file: file.absolute)
    for directory in directories
    where isOwnedSafely(path: directory, owners: owners)
      && Self.readSmallFile("\(directory)/\(name)", owners: owners) == record
    {
      return nil
    }
    return IdentityRecord(name: name, text: record)
  }

  /// Hashes `source`'s file, whose identity `record` is new or changed: the audio imported, or
  /// ``AudioFileError/sourceChanged(source:path:)``.
  func hash(_ source: Source, for record: IdentityRecord) throws(AudioFileError) {
    let file = file(of: source)
    Self.logger.debug(
      "\(Self.named(source, file)): changed or not seen since its last check; hashing it")
    guard try ContentHash.matches(file, source.contentHash, isCancelled: stopCheck(source))
    else {
      throw .sourceChanged(source: source.id.description, path: file.description)
    }
  }

  /// Writes an identity record; a cache we cannot write only means hashing again next time.
  func remember(_ record: IdentityRecord?) {
    guard let record else { return }
    try? write(Array(record.text.utf8), to: "\(directories[0])/\(record.name)")
  }

  /// A small regular file's text, read without following a symlink or waiting on a FIFO; nil
  /// for anything else.
  static func readSmallFile(_ path: String, owners: [UInt32]) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    guard isOwnedSafely(descriptor: fd, owners: owners),
      let identity = FileIdentity(descriptor: fd), identity.isRegularFile,
      identity.size < 65_536
    else { return nil }
    var bytes = [UInt8](repeating: 0, count: Int(identity.size))
    let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
    guard count == bytes.count else { return nil }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `<content key>-<path key>.source`: one per (audio, path), so two paths holding the same
  /// audio keep their own identities.
  static func identityName(for source: Source, file: RawPath) -> String {
    let key = source.contentHash.map { $0.isLetter || $0.isNumber ? $0 : "-" }
    let pathKey = file.bytes.withUnsafeBytes { XXH64.digest($0) }
    return "\(String(key))-\(String(pathKey, radix: 16)).source"
  }

  static func identityRecord(source: Source, file: RawPath, identity: FileIdentity) -> String {
    "tape source identity 1\n\(file)\n\(source.contentHash)\n\(identity)\n"
  }

  /// Writes `bytes` to `path` through ``SafeOutput`` (creating the cache folder on the way).
  func write(_ bytes: [UInt8], to path: String) throws(AudioFileError) {
    makeUserCacheParents()
    guard prepare(RawPath(path).folder.description) else { return }
    do throws(SafeFileError) {
      let output = try SafeOutput(
        try OutputDestination.resolve(path, creatingFolder: true, ownFile: true))
      fchmod(output.descriptor, entryMode)
      try output.write(bytes)
      try output.commit()
    } catch {
      throw Self.entryFailed(error, at: path)
    }
  }

  /// A cache entry that could not be written: a full disk is said as one, with what to do
  /// about it (an entry has no "output path" to choose, as a render has).
  static func entryFailed(_ error: SafeFileError, at path: String) -> AudioFileError {
    switch error {
    case .write(_, ENOSPC), .cannotOpen(_, ENOSPC), .write(_, EDQUOT), .cannotOpen(_, EDQUOT):
      return .cache(
        path: RawPath(path).folder.description,
        detail:
          "the disk that holds it is full, so decoded audio cannot be kept there; free some space, or set XDG_CACHE_HOME to a folder on another disk"
      )
    default:
      return .output(error)
    }
  }

  /// `~/.cache` (or `$XDG_CACHE_HOME`) may not exist yet: it is the user's, made as needed.
  private func makeUserCacheParents() {
    guard isUserCache else { return }
    try? FileManager.default.createDirectory(
      atPath: (directories[0] as NSString).deletingLastPathComponent,
      withIntermediateDirectories: true)
  }

  // MARK: Decoding

  /// A check that throws ``AudioFileError/decodeStopped(source:)`` once ``isCancelled`` says so.
  func stopCheck(_ source: Source) -> () throws(AudioFileError) -> Void {
    let isCancelled = isCancelled
    let id = source.id.description
    return { () throws(AudioFileError) in
      if isCancelled() { throw .decodeStopped(source: id) }
    }
  }

  /// Decodes (and resamples) `source` into a new entry at `path`: written through
  /// ``SafeOutput`` (nothing appears under `path` until it is complete), chunk by chunk, each
  /// chunk's checksum taken as it is written; the header last. Each chunk written is handed
  /// to `sink` (readers of a build in progress).
  ///
  /// The caller has just checked the file (``checkSourceFile(_:)``: hashed, or its identity
  /// unchanged since it was); it is not hashed again here (a cold cache hashed every source
  /// twice before decoding it).
  func build(
    _ source: Source, layout expected: CacheFileLayout, at path: String,
    into sink: EntryBuild? = nil
  ) throws(AudioFileError) -> CacheEntry {
    let file = file(of: source)
    let stopped = stopCheck(source)
    let reader = try SndfileReader(path: file)
    guard reader.channels == source.channels, reader.sampleRate == source.sampleRate else {
      throw .sourceChanged(source: source.id.description, path: file.description)
    }
    makeUserCacheParents()
    let folder = RawPath(path).folder.description
    guard prepare(folder) else {
      if FileIdentity(path: folder) == nil {
        // Not there and not made: a home folder that does not exist (a service's), a
        // read-only one.
        let reason = String(cString: strerror(errno))
        throw .cache(
          path: folder,
          detail: (isUserCache
            ? "the project's folder cannot be written, so its audio is decoded into your own cache, which does not exist and cannot be made (\(reason)); "
            : "it does not exist and cannot be made (\(reason)); ")
            + "set XDG_CACHE_HOME to a folder you can write")
      }
      throw .cache(
        path: folder,
        detail:
          "it is not only yours (another user made it or may write to it), so decoded audio cannot be kept there; remove it, or set XDG_CACHE_HOME to a folder of your own"
      )
    }
    let output: SafeOutput
    do throws(SafeFileError) {
      output = try SafeOutput(
        try OutputDestination.resolve(path, creatingFolder: true, ownFile: true))
      fchmod(output.descriptor, entryMode)
    } catch {
      guard isUserCache else { throw Self.entryFailed(error, at: path) }
      throw .cache(
        path: directories[0],
        detail:
          "the project's folder is read-only, so its audio is decoded into your own cache, and that fails (\(error)); set XDG_CACHE_HOME to a folder you can write"
      )
    }
    var layout = expected
    sink?.started(
      reading: output.descriptor,
      directly: source.sampleRate == expected.sampleRate && reader.seeksExactly)
    let progress = progress
    var writer = ChunkWriter(output: output, layout: layout, path: path) { checksum, frames in
      sink?.wrote(checksum)
      progress?(
        DecodeProgress(
          source: source, phase: .decoding(frames: frames, of: expected.frames)))
    }
    let channels = source.channels
    let chunk = 16_384
    let input = UnsafeMutablePointer<Float>.allocate(capacity: chunk * channels)
    defer { input.deallocate() }
    if source.sampleRate == expected.sampleRate {
      while writer.written < layout.frames {
        try stopped()
        let read = reader.readFloats(into: input, frames: chunk)
        if read <= 0 { break }
        try writer.write(input, frames: read)
      }
    } else {
      let resampler = try SoxrResampler(
        from: source.sampleRate, to: expected.sampleRate, channels: channels)
      let capacity = chunk * (expected.sampleRate / max(source.sampleRate, 1) + 2)
      let resampled = UnsafeMutablePointer<Float>.allocate(capacity: capacity * channels)
      defer { resampled.deallocate() }
      var finished = false
      while !finished && writer.written < layout.frames {
        try stopped()
        let read = reader.readFloats(into: input, frames: chunk)
        var offset = 0
        repeat {
          let (consumed, produced) = try resampler.process(
            read > 0 ? input + offset * channels : nil, frames: read - offset,
            into: resampled, capacity: capacity)
          try writer.write(resampled, frames: produced)
          offset += consumed
          if read <= 0 && produced == 0 { finished = true }
        } while read > 0 && offset < read
      }
    }
    // A resampler's length can differ from round(n · rate / sourceRate) by a frame: pad with
    // silence so the entry is exactly as long as the model says.
    try writer.finish()
    layout.chunkChecksums = writer.checksums
    do throws(SafeFileError) {
      try output.write(layout.encoded(), at: 0)
      try output.commit()
    } catch {
      throw Self.entryFailed(error, at: path)
    }
    guard let entry = CacheEntry(path: path, expected: expected, owners: owners) else {
      throw .cache(
        path: path, detail: "a new entry does not read back as written; check the disk (dmesg)")
    }
    return entry
  }
}

/// Fills a cache file's data area a chunk at a time, taking each chunk's checksum.
private struct ChunkWriter {
  let output: SafeOutput
  let layout: CacheFileLayout
  let path: String
  /// Told each chunk's checksum once it is written, with the frames written so far.
  let wrote: (UInt64, Int) -> Void
  var written = 0
  var checksums: [UInt64] = []
  /// The chunk being filled.
  private var buffer: [Float]

  init(
    output: SafeOutput, layout: CacheFileLayout, path: String,
    wrote: @escaping (UInt64, Int) -> Void
  ) {
    self.output = output
    self.layout = layout
    self.path = path
    self.wrote = wrote
    buffer = []
    buffer.reserveCapacity(SourceAudio.chunkFrames * layout.channels)
  }

  /// Takes up to what the layout holds of `frames` frames.
  mutating func write(_ samples: UnsafePointer<Float>, frames: Int) throws(AudioFileError) {
    var taken = 0
    let wanted = min(frames, layout.frames - written)
    while taken < wanted {
      let room = SourceAudio.chunkFrames - buffer.count / layout.channels
      let count = min(room, wanted - taken)
      buffer.append(
        contentsOf: UnsafeBufferPointer(
          start: samples + taken * layout.channels, count: count * layout.channels))
      taken += count
      written += count
      if buffer.count == SourceAudio.chunkFrames * layout.channels { try flush() }
    }
  }

  /// Pads the last chunk with silence to the layout's length and writes it.
  mutating func finish() throws(AudioFileError) {
    let missing = layout.frames - written
    if missing > 0 {
      let silence = [Float](
        repeating: 0, count: min(missing, SourceAudio.chunkFrames) * layout.channels)
      var left = missing
      while left > 0 {
        let count = min(left, SourceAudio.chunkFrames)
        try silence.withUnsafeBufferPointer { pointer throws(AudioFileError) in
          if let base = pointer.baseAddress { try write(base, frames: count) }
        }
        left -= count
      }
    }
    if !buffer.isEmpty { try flush() }
  }

  private mutating func flush() throws(AudioFileError) {
    let index = checksums.count
    let offset = layout.chunkBytes(index).offset
    do throws(SafeFileError) {
      checksums.append(buffer.withUnsafeBytes { XXH64.digest($0) })
      try output.write(buffer, at: Int64(offset))
    } catch {
      throw AudioCache.entryFailed(error, at: path)
    }
    buffer.removeAll(keepingCapacity: true)
    if let checksum = checksums.last { wrote(checksum, written) }
  }
}

/// An open, verified cache file: its header checked, its length exactly what the header says.
/// Immutable after opening; `pread` needs no lock.
final class CacheEntry: @unchecked Sendable {
  let path: String
  let layout: CacheFileLayout
  let descriptor: Int32

  /// Opens and checks the entry at `path`; nil when there is none or it is not exactly the
  /// audio `expected` describes (another version, damaged, truncated).
  init?(path: String, expected: CacheFileLayout, owners: [UInt32]) {
    // Never a symlink, never waiting on a FIFO someone left there: a regular file or nothing,
    // and only one nobody else may have written.
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard fd >= 0 else { return nil }
    guard FileIdentity(descriptor: fd)?.isRegularFile == true,
      isOwnedSafely(descriptor: fd, owners: owners)
    else {
      close(fd)
      return nil
    }
    var header = [UInt8](repeating: 0, count: expected.dataOffset)
    let read = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
    guard read == header.count, let layout = CacheFileLayout(decoding: header),
      layout.channels == expected.channels, layout.frames == expected.frames,
      layout.sampleRate == expected.sampleRate, layout.contentHash == expected.storedContentHash,
      let identity = FileIdentity(descriptor: fd), identity.size == Int64(layout.fileBytes)
    else {
      close(fd)
      return nil
    }
    self.path = path
    self.layout = layout
    descriptor = fd
  }

  deinit {
    close(descriptor)
  }

  /// Reads chunk `index` into `buffer` (``SourceAudio/samplesInChunk(_:)`` floats) and checks
  /// it; false when the file is shorter than its header says or the checksum differs.
  func read(_ index: Int, into buffer: UnsafeMutablePointer<Float>) -> Bool {
    let (offset, count) = layout.chunkBytes(index)
    var done = 0
    while done < count {
      let read = pread(
        descriptor, UnsafeMutableRawPointer(buffer) + done, count - done, off_t(offset + done))
      if read < 0 && errno == EINTR { continue }
      guard read > 0 else { return false }
      done += read
    }
    return XXH64.digest(UnsafeRawBufferPointer(start: buffer, count: count))
      == layout.chunkChecksums[index]
  }
}

/// One source's decoded audio, read from its cache entry into memory chunk by chunk.
///
/// ``audio`` is what render plans point at; ``makeResident(_:)`` reads a chunk (with `pread`,
/// verified against its checksum) and publishes it there. A chunk that fails its check, or a
/// file that became shorter, makes the source be decoded again, once; a second failure is an
/// error naming the cache file. Thread-safe: chunks are read in parallel; replacing a damaged
/// entry is done by one reader while the others wait.
public final class CachedSource: @unchecked Sendable {
  public let source: Source
  public let audio: SourceAudio
  private let projectRate: Int
  private let cache: AudioCache
  /// The entry read, once there is one: a build in progress has none yet.
  private let entry: Mutex<(current: CacheEntry?, rebuilt: Bool)>
  /// The decode in progress that chunks are read from until its entry is in place
  /// (``AudioCache/load(_:projectRate:progressively:)``).
  private let building: Mutex<EntryBuild?>

  init(source: Source, projectRate: Int, cache: AudioCache, entry: CacheEntry) {
    self.source = source
    self.projectRate = projectRate
    self.cache = cache
    audio = SourceAudio(
      frames: entry.layout.frames, channels: entry.layout.channels, memory: cache.memory)
    self.entry = Mutex((entry, false))
    building = Mutex(nil)
  }

  init(source: Source, projectRate: Int, cache: AudioCache, building build: EntryBuild) {
    self.source = source
    self.projectRate = projectRate
    self.cache = cache
    audio = SourceAudio(
      frames: build.layout.frames, channels: build.layout.channels, memory: cache.memory)
    entry = Mutex((nil, false))
    building = Mutex(build)
  }

  /// The cache file this source reads (or will, once its decode has ended).
  public var path: String {
    entry.withLock { $0.current?.path } ?? building.withLock { $0?.path } ?? ""
  }

  /// Waits for a decode in progress to end, and throws its error: so that a caller that needs
  /// the whole source (a render of it all) is told at once of a decode that failed.
  public func waitUntilDecoded() throws(AudioFileError) {
    guard let build = building.withLock({ $0 }) else { return }
    let entry = try build.waitUntilFinished()
    adopt(entry)
  }

  /// The decode ended with `entry`: read from it from now on.
  private func adopt(_ new: CacheEntry) {
    entry.withLock { if $0.current == nil { $0.current = new } }
    building.withLock { $0 = nil }
  }

  /// Reads chunk `index` into memory, unless it is resident already.
  public func makeResident(_ index: Int) throws(AudioFileError) {
    if audio.isResident(index) { return }
    let buffer = cache.memory.chunk(channels: audio.channels)
    do {
      try read(index, into: buffer)
    } catch {
      cache.memory.release(buffer)
      throw error
    }
    audio.publish(buffer, at: index)
  }

  /// Reads chunk `index` (``SourceAudio/samplesInChunk(_:)`` floats) into `buffer`, verified
  /// against its checksum, without making it resident: for a pass over the whole source (its
  /// peaks) that must not keep it all in memory.
  func read(_ index: Int, into buffer: UnsafeMutablePointer<Float>) throws(AudioFileError) {
    if let build = building.withLock({ $0 }) {
      switch try build.read(index, into: buffer, stopped: cache.stopCheck(source)) {
      case .read: return
      case .finished(let entry): adopt(entry)
      case .decodeDirectly: return try decodeDirectly(index, into: buffer)
      }
    }
    // Reading needs no lock (an entry is immutable, `pread` has no shared position), so
    // chunks of one source are read in parallel; the lock is taken only to replace a
    // damaged entry, once.
    guard let reading = entry.withLock({ $0.current }) else {
      throw .cache(path: path, detail: "its decode ended without an entry")
    }
    if reading.read(index, into: buffer) { return }
    let result: Result<Void, AudioFileError> = entry.withLock { state in
      guard let current = state.current else {
        return .failure(.cache(path: reading.path, detail: "its entry went away"))
      }
      if current !== reading {
        // Another reader replaced the entry meanwhile: read from the new one, once.
        return current.read(index, into: buffer)
          ? .success(())
          : .failure(
            .cache(
              path: current.path,
              detail:
                "chunk \(index) is damaged even after decoding the source again; check the disk (dmesg)"
            ))
      }
      guard !state.rebuilt else {
        return .failure(
          .cache(
            path: current.path,
            detail:
              "chunk \(index) is damaged even after decoding the source again; check the disk (dmesg)"
          ))
      }
      // Damaged, or shortened under us: decode again into a new entry and read from that.
      do throws(AudioFileError) {
        let path = cache.path(for: source, projectRate: projectRate)
        let identity = try cache.checkSourceFile(source)
        let rebuilt = try cache.build(source, layout: current.layout, at: path)
        state.current = rebuilt
        cache.remember(identity)
        state.rebuilt = true
        return rebuilt.read(index, into: buffer)
          ? .success(())
          : .failure(
            .cache(
              path: rebuilt.path,
              detail: "chunk \(index) does not read back as written; check the disk (dmesg)"))
      } catch {
        return .failure(error)
      }
    }
    if case .failure(let error) = result { throw error }
  }

  /// Decodes chunk `index` straight from the source's file, for a build that has not reached
  /// it (a play starting far into a long source): the frames a decode from the start gives
  /// there, at a file whose rate is the project's and that seeks exactly, and silence past its
  /// end, as the entry has.
  private func decodeDirectly(
    _ index: Int, into buffer: UnsafeMutablePointer<Float>
  ) throws(AudioFileError) {
    let file = cache.file(of: source)
    let reader = try SndfileReader(path: file)
    guard reader.sampleRate == projectRate, reader.channels == audio.channels,
      reader.seek(to: Int64(index * SourceAudio.chunkFrames))
    else {
      throw .sourceChanged(source: source.id.description, path: file.description)
    }
    let frames = audio.framesInChunk(index)
    var done = 0
    while done < frames {
      try cache.stopCheck(source)()
      let read = reader.readFloats(into: buffer + done * audio.channels, frames: frames - done)
      if read <= 0 { break }
      done += read
    }
    (buffer + done * audio.channels).update(repeating: 0, count: (frames - done) * audio.channels)
  }

  /// Every sample, interleaved (reads every chunk).
  public func samples() throws(AudioFileError) -> [Float] {
    var all: [Float] = []
    all.reserveCapacity(audio.frames * audio.channels)
    for index in 0..<audio.chunkCount {
      try makeResident(index)
      if let chunk = audio.chunk(index) {
        all.append(
          contentsOf: UnsafeBufferPointer(start: chunk, count: audio.samplesInChunk(index)))
      }
    }
    return all
  }
}
