import Foundation
import Synchronization

/// Calls back when files in a folder change, through Linux's inotify: how a subscriber hears
/// another process's commit at once instead of at the next poll (a commit in WAL mode always
/// writes the project's `-wal`; a checkpoint writes the project file).
///
/// One thread blocks in `poll(2)` on the inotify descriptor (waking every 100 ms to notice
/// ``cancel()``); `changed` runs on that thread for each batch of events about `names`.
final class FolderWatcher: @unchecked Sendable {
  private let descriptor: Int32
  private let flag = Flag()
  private let stopped = DispatchSemaphore(value: 0)

  private final class Flag: Sendable {
    let cancelled = Atomic<Bool>(false)
  }

  /// Watches `folder` for writes to, creation of or renames onto `names`; nil when inotify is
  /// not available (the caller keeps polling).
  init?(folder: String, names: Set<String>, changed: @escaping @Sendable () -> Void) {
    descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    guard descriptor >= 0 else { return nil }
    let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE)
    guard inotify_add_watch(descriptor, folder, mask) >= 0 else {
      close(descriptor)
      return nil
    }
    let descriptor = descriptor
    let flag = flag
    let stopped = stopped
    Thread.detachNewThread {
      var buffer = [UInt8](repeating: 0, count: 16_384)
      while !flag.cancelled.load(ordering: .relaxed) {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&request, 1, 100) > 0 else { continue }
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { continue }
        var offset = 0
        var relevant = false
        buffer.withUnsafeBytes { bytes in
          while offset + MemoryLayout<inotify_event>.size <= count {
            let length = Int(bytes.load(fromByteOffset: offset + 12, as: UInt32.self))
            let start = offset + MemoryLayout<inotify_event>.size
            let name = bytes[start..<min(start + length, count)].prefix { $0 != 0 }
            if names.contains(String(decoding: name, as: UTF8.self)) { relevant = true }
            offset = start + length
          }
        }
        if relevant { changed() }
      }
      stopped.signal()
    }
  }

  /// Stops watching (returns once the thread has ended).
  func cancel() {
    guard !flag.cancelled.exchange(true, ordering: .relaxed) else { return }
    stopped.wait()
    close(descriptor)
  }

  deinit {
    cancel()
  }
}
