internal import CSQLiteSession
import Foundation
internal import GRDB
internal import GRDBSQLite
import SafeFiles

/// Whether a project's write-ahead log belongs to the file beside it.
///
/// Why: SQLite applies whatever `-wal` lies beside a file to that file. A log that a stopped
/// process left (`kill -9`, a crash, a power cut) holds committed versions, and the next open
/// must read them; but when the file was replaced meanwhile (a backup copied back, another
/// project copied over it, `rm` and `tape new`), the log is another file's: applied, it read as
/// a mix (the other project's sources with this one's tracks, no clips, exit 0) or as the
/// restored backup with the very edits it was restored to undo.
///
/// Rule: a write made while no frame of the log waits to be copied into the file (the first
/// commit of every log) sets the file's `user_version`, on page 1, to a token made from the
/// token before and the file's size and modification time as they are then
/// (``stampIfFresh(_:path:)``). A log belongs to the file beside it when its last committed copy
/// of page 1 holds the file's own token (the file's bytes 60–63, read without the log: the
/// stamping commit was copied into the file since), or the token that would be made from it
/// with the file as it is now (nothing wrote the file since the stamp). A checkpoint copies
/// whole commits from the log's start, so a file that Tape wrote after the stamp holds the
/// stamp; a log with no copy of page 1 (an older Tape's) is not judged.
///
/// What if a copy replaced the file: another project's token, or an earlier version's, is not
/// the log's; a `cp` of the very file the log started from has another modification time. The
/// log is then set aside, under a name that says so, never deleted
/// (``checkLog(_:descriptor:writable:)``). Not told apart: a copy that kept its
/// modification time (`cp -p`) of the file exactly as the log started from it, or a copy taken
/// with `cp` while Tape had the project open (`tape backup` gives its copy a token of its own).
enum LogOwnership {
  /// SQLite's locking bytes in the database file (os_unix.c): every connection to a WAL
  /// database holds a read lock on the shared range for as long as it is open.
  static let sharedFirst: Int = 0x4000_0002
  static let sharedSize: Int = 510
  /// glibc's `F_OFD_GETLK` and `F_OFD_SETLK` (Linux, `_GNU_SOURCE`, which Swift's Glibc module
  /// does not define): locks owned by the open file description, so that neither taking nor
  /// dropping one touches the POSIX locks this process's SQLite connections hold.
  static let openFileGetLock: Int32 = 36
  static let openFileSetLock: Int32 = 37

  /// The token a stamp sets after `previous`, for the file as `file` describes it.
  static func token(after previous: UInt32, file: FileIdentity) -> UInt32 {
    var hash = mix(UInt64(previous) &+ 0x9E37_79B9_7F4A_7C15)
    hash = mix(hash ^ UInt64(bitPattern: file.size))
    hash = mix(hash ^ UInt64(bitPattern: file.modificationTime))
    let token = UInt32(truncatingIfNeeded: hash ^ (hash >> 32))
    return token == 0 ? 1 : token
  }

  /// SplitMix64's finalizer.
  private static func mix(_ value: UInt64) -> UInt64 {
    var z = value
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// Inside a write transaction: stamps the file (see the type's Rule) when no frame of the log
  /// waits to be copied into it, so that this commit starts a log, or continues one the file
  /// already holds all of. Costs a look at the log's index otherwise.
  static func stampIfFresh(_ db: Database, path: String) throws {
    guard try String.fetchOne(db.cachedStatement(sql: "PRAGMA journal_mode")) == "wal" else {
      return
    }
    let handle = try connection(db)
    var pointer: UnsafeMutablePointer<sqlite3_file>?
    guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &pointer) == SQLITE_OK,
      let file = pointer, let methods = file.pointee.pMethods, methods.pointee.iVersion >= 2,
      let map = methods.pointee.xShmMap
    else { return }
    // The log's index, which this connection has mapped since its transaction began: the
    // header's mxFrame (bytes 16–19) and the checkpoint's nBackfill (bytes 96–99), in this
    // machine's byte order. This transaction holds the write lock, so mxFrame cannot change;
    // a checkpoint can only raise nBackfill.
    var region: UnsafeMutableRawPointer?
    guard map(file, 0, 32_768, 0, &region) == SQLITE_OK, let region else { return }
    let frames = region.load(fromByteOffset: 16, as: UInt32.self)
    let copied = region.load(fromByteOffset: 96, as: UInt32.self)
    guard frames == copied, let identity = FileIdentity(path: path) else { return }
    let previous = try Int32.fetchOne(db.cachedStatement(sql: "PRAGMA user_version")) ?? 0
    let token = token(after: UInt32(bitPattern: previous), file: identity)
    try db.execute(sql: "PRAGMA user_version = \(Int32(bitPattern: token))")
  }

  /// Before a project is opened by a process that has no connection to it yet, and after the
  /// last of its connections closed: when a `-wal` lies beside it and no other process has the
  /// project open, removes it with its index if it holds no frame, and checks that it belongs
  /// to the file otherwise (see the type's Rule). One that does not is renamed `NAME-wal.unapplied-DATE`
  /// (and the log's index removed) where `writable`; the line saying so is returned. Where the
  /// file is read-only here, such a log is refused: nothing can be changed.
  ///
  /// `descriptor` is the file's, opened for writing where `writable`: the check holds an
  /// exclusive lock on SQLite's shared range through it, so no process can open the project
  /// meanwhile (they wait, as for any lock), and one that has it open keeps the check away.
  static func checkLog(
    _ path: String, descriptor: Int32, writable: Bool
  ) throws(StoreError) -> String? {
    let log = path + "-wal"
    guard let identity = FileIdentity(path: log) else { return nil }
    // A log too short to hold a frame holds nothing: with its index (a 3-byte `-shm` that a
    // full disk left), it is removed, so that readers read the file alone (through them, on a
    // disk still full, SQLite read "malformed" pages) and a writer starts a log of its own.
    let empty = identity.size < WriteAheadLog.headerSize + 24 + 512
    guard !empty || writable else { return nil }
    var lock = flock()
    lock.l_type = Int16(F_WRLCK)
    lock.l_whence = Int16(SEEK_SET)
    lock.l_start = sharedFirst
    lock.l_len = sharedSize
    if writable {
      guard fcntl(descriptor, openFileSetLock, &lock) == 0 else { return nil }
    } else {
      guard fcntl(descriptor, openFileGetLock, &lock) == 0, lock.l_type == Int16(F_UNLCK) else {
        return nil
      }
    }
    defer {
      if writable {
        lock.l_type = Int16(F_UNLCK)
        _ = fcntl(descriptor, openFileSetLock, &lock)
      }
    }
    if empty {
      unlink(log)
      unlink(path + "-shm")
      return nil
    }
    guard let logged = WriteAheadLog.lastCommittedToken(log),
      let file = FileIdentity(descriptor: descriptor)
    else { return nil }
    var bytes = [UInt8](repeating: 0, count: 4)
    guard pread(descriptor, &bytes, 4, 60) == 4 else { return nil }
    let own = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    if own == logged || token(after: own, file: file) == logged { return nil }
    let name = (log as NSString).lastPathComponent
    guard writable else {
      throw .cannotRead(
        path: path,
        reason:
          "its log \(name) was written for another file (\(path) was replaced while no tape process had it open), so it is not applied; its owner can run any tape command on it to set the log aside, or move \(log) away"
      )
    }
    let aside = log + ".unapplied-" + stamp(Date())
    guard rename(log, aside) == 0 else {
      throw .io(detail: "cannot set aside \(log): \(String(cString: strerror(errno)))")
    }
    unlink(path + "-shm")
    return
      "\(name) was written for another file: \(path) was replaced while no tape process had it open; the log was set aside, unapplied, as \((aside as NSString).lastPathComponent), and \(path) reads as the file now there"
  }

  /// `20261206-011905`, local time.
  private static func stamp(_ date: Date) -> String {
    var time = time_t(date.timeIntervalSince1970)
    var parts = tm()
    localtime_r(&time, &parts)
    return String(
      format: "%04d%02d%02d-%02d%02d%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
      parts.tm_hour, parts.tm_min, parts.tm_sec)
  }
}

/// SQLite's write-ahead log, read without SQLite (https://sqlite.org/fileformat2.html#walformat):
/// a 32-byte header, then frames of a 24-byte header and a page, each checksummed over all
/// before it.
enum WriteAheadLog {
  static let headerSize: Int64 = 32

  /// The token (`user_version`, bytes 60–63 of page 1) in the last copy of page 1 that a
  /// committed transaction of the log wrote: nil when no valid committed frame holds page 1.
  /// Frames count as SQLite counts them: from the start, while their salts are the header's and
  /// their checksums hold, up to the last that ends a transaction.
  static func lastCommittedToken(_ path: String) -> UInt32? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var header = [UInt8](repeating: 0, count: Int(headerSize))
    guard pread(descriptor, &header, header.count, 0) == header.count else { return nil }
    let magic = bigEndian(header, 0)
    guard magic & ~1 == 0x377F_0682 else { return nil }
    let bigEndianSums = magic & 1 == 1
    let pageSize = Int(bigEndian(header, 8))
    guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else { return nil }
    var sums = checksum(header[0..<24], bigEndian: bigEndianSums, from: (0, 0))
    guard sums == (bigEndian(header, 24), bigEndian(header, 28)) else { return nil }
    let salts = header[16..<24]
    var frame = [UInt8](repeating: 0, count: 24 + pageSize)
    var offset = off_t(headerSize)
    var pending: UInt32?
    var committed: UInt32?
    while pread(descriptor, &frame, frame.count, offset) == frame.count {
      offset += off_t(frame.count)
      guard frame[8..<16].elementsEqual(salts), bigEndian(frame, 0) != 0 else { break }
      sums = checksum(frame[0..<8], bigEndian: bigEndianSums, from: sums)
      sums = checksum(frame[24...], bigEndian: bigEndianSums, from: sums)
      guard sums == (bigEndian(frame, 16), bigEndian(frame, 20)) else { break }
      if bigEndian(frame, 0) == 1 { pending = bigEndian(frame, 24 + 60) }
      if bigEndian(frame, 4) != 0 { committed = pending }
    }
    return committed
  }

  private static func bigEndian(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8
      | UInt32(bytes[at + 3])
  }

  /// SQLite's `walChecksumBytes`: over 32-bit words in the byte order the log's magic names.
  private static func checksum(
    _ bytes: ArraySlice<UInt8>, bigEndian: Bool, from start: (UInt32, UInt32)
  ) -> (UInt32, UInt32) {
    var (s1, s2) = start
    bytes.withUnsafeBytes { raw in
      let count = raw.count / 8
      for index in 0..<count {
        var a = raw.loadUnaligned(fromByteOffset: index * 8, as: UInt32.self)
        var b = raw.loadUnaligned(fromByteOffset: index * 8 + 4, as: UInt32.self)
        if bigEndian {
          a = UInt32(bigEndian: a)
          b = UInt32(bigEndian: b)
        } else {
          a = UInt32(littleEndian: a)
          b = UInt32(littleEndian: b)
        }
        s1 = s1 &+ a &+ s2
        s2 = s2 &+ b &+ s1
      }
    }
    return (s1, s2)
  }
}
