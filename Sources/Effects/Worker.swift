import Atomics
import CLilv
import Foundation

/// A single-producer single-consumer queue of byte messages in preallocated memory: the way
/// the audio thread and a worker thread hand each other LV2 worker requests and responses.
///
/// Each message is a 4-byte size then its bytes, written around the ring. The writer owns
/// `write`, the reader owns `read`; each publishes with release and reads the other's with
/// acquire.
///
/// - Note: Realtime-safe (both ends): no allocation, no locks.
struct ByteRing: @unchecked Sendable {
  let storage: UnsafeMutablePointer<UInt8>
  let capacity: Int
  let write: UnsafeAtomic<Int>
  let read: UnsafeAtomic<Int>

  /// - Parameter capacity: a power of two.
  static func make(capacity: Int) -> ByteRing {
    ByteRing(
      storage: .allocate(capacity: capacity), capacity: capacity, write: .create(0),
      read: .create(0))
  }

  func destroy() {
    storage.deallocate()
    write.destroy()
    read.destroy()
  }

  private func copyIn(_ source: UnsafeRawPointer, count: Int, at position: Int) {
    let start = position & (capacity - 1)
    let first = min(count, capacity - start)
    UnsafeMutableRawPointer(storage + start).copyMemory(from: source, byteCount: first)
    if first < count {
      UnsafeMutableRawPointer(storage).copyMemory(
        from: source + first, byteCount: count - first)
    }
  }

  private func copyOut(_ target: UnsafeMutableRawPointer, count: Int, at position: Int) {
    let start = position & (capacity - 1)
    let first = min(count, capacity - start)
    target.copyMemory(from: storage + start, byteCount: first)
    if first < count { (target + first).copyMemory(from: storage, byteCount: count - first) }
  }

  /// Appends one message; false when the ring has no room for it (the message is dropped).
  func push(_ data: UnsafeRawPointer?, size: Int) -> Bool {
    let head = write.load(ordering: .relaxed)
    let tail = read.load(ordering: .acquiring)
    guard size >= 0, 4 + size <= capacity - (head - tail) else { return false }
    var length = UInt32(size)
    withUnsafeBytes(of: &length) { copyIn($0.baseAddress.unsafelyUnwrapped, count: 4, at: head) }
    if size > 0, let data { copyIn(data, count: size, at: head + 4) }
    write.store(head + 4 + size, ordering: .releasing)
    return true
  }

  /// Takes the next message into `target` (at least `capacity` bytes); its size, or nil when
  /// the ring is empty.
  func pop(into target: UnsafeMutableRawPointer) -> Int? {
    let tail = read.load(ordering: .relaxed)
    let head = write.load(ordering: .acquiring)
    guard head != tail else { return nil }
    var length: UInt32 = 0
    withUnsafeMutableBytes(of: &length) {
      copyOut($0.baseAddress.unsafelyUnwrapped, count: 4, at: tail)
    }
    let size = Int(length)
    copyOut(target, count: size, at: tail + 4)
    read.store(tail + 4 + size, ordering: .releasing)
    return size
  }
}

/// What the audio thread, the plugin's schedule callback and the worker thread share for one
/// instance: raw memory only, so the audio thread touches no reference.
struct WorkerChannel: @unchecked Sendable {
  var requests: ByteRing
  var responses: ByteRing
  var wakeup: UnsafeMutablePointer<sem_t>
  var stopping: UnsafeAtomic<Bool>
  /// How many requests `work` has handled (diagnostics and tests).
  var handled: UnsafeAtomic<Int>
  /// How many requests were scheduled (put in the ring): more than ``handled`` until `work`
  /// has returned for each (a request taken from the ring no longer shows there while `work`
  /// runs, and is not done yet).
  var scheduled: UnsafeAtomic<Int>
  /// Where the audio thread copies a response before handing it to the plugin.
  var responseScratch: UnsafeMutableRawPointer
  /// Where an inline worker copies a request before handing it to `work`.
  var requestScratch: UnsafeMutableRawPointer
  /// `work` runs on the processing thread, right after each run (``WorkerMode/inline``).
  var inline: Bool
  /// The instance `work` runs on; set once it exists, before any request can be made.
  var instance: LV2Instance?
}

/// Where an effect's LV2 Worker runs the plugin's `work`.
public enum WorkerMode: Sendable, Hashable {
  /// On a thread of its own, as LV2 intends: realtime-safe, but when a response reaches the
  /// plugin depends on that thread's timing, so two runs of a worker-using plugin (lsp's
  /// reverbs, for one) may differ.
  case thread
  /// On the processing thread, right after the `run` that scheduled it, its response handed
  /// back before the next: reproducible bit for bit, and not realtime-safe (`work` may load
  /// files or allocate). For offline renders.
  case inline
}

/// A channel's address, sent to the worker thread that owns its reading end.
private struct ChannelAddress: @unchecked Sendable {
  let pointer: UnsafeMutablePointer<WorkerChannel>
}

/// The LV2 Worker extension for one plugin instance: `work:schedule` puts a request in a
/// preallocated ring (realtime-safe) and wakes this non-realtime thread, which calls the
/// plugin's `work`; its responses go back through a second ring, and the audio thread hands
/// them to `work_response` after the next `run`, then calls `end_run`.
final class Worker: @unchecked Sendable {
  /// 64 KiB each way: far more than the small messages plugins send (lsp's are tens of bytes).
  static let ringCapacity = 1 << 16

  let channel: UnsafeMutablePointer<WorkerChannel>
  let schedule: UnsafeMutablePointer<LV2_Worker_Schedule>
  private let finished = DispatchSemaphore(value: 0)
  private var started = false

  init(mode: WorkerMode) {
    let wakeup = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    sem_init(wakeup, 0, 0)
    channel = .allocate(capacity: 1)
    channel.initialize(
      to: WorkerChannel(
        requests: .make(capacity: Self.ringCapacity),
        responses: .make(capacity: Self.ringCapacity), wakeup: wakeup, stopping: .create(false),
        handled: .create(0), scheduled: .create(0),
        responseScratch: .allocate(byteCount: Self.ringCapacity, alignment: 16),
        requestScratch: .allocate(byteCount: Self.ringCapacity, alignment: 16),
        inline: mode == .inline, instance: nil))
    schedule = makeWorkerSchedule(channel)
  }

  /// Starts the thread once `instance` exists.
  func start(_ instance: LV2Instance) {
    channel.pointee.instance = instance
    guard !channel.pointee.inline else { return }
    started = true
    let channel = ChannelAddress(pointer: self.channel)
    let finished = self.finished
    let thread = Thread {
      let channel = channel.pointer
      let buffer = UnsafeMutableRawPointer.allocate(byteCount: Worker.ringCapacity, alignment: 16)
      defer { buffer.deallocate() }
      while true {
        while sem_wait(channel.pointee.wakeup) != 0 && errno == EINTR {}
        if channel.pointee.stopping.load(ordering: .acquiring) { break }
        while let size = channel.pointee.requests.pop(into: buffer) {
          channel.pointee.instance?.work(size: size, data: buffer, channel: channel)
          channel.pointee.handled.wrappingIncrement(ordering: .releasing)
        }
      }
      finished.signal()
    }
    thread.name = "tape-lv2-worker"
    thread.start()
  }

  /// Stops the thread (waiting for a `work` in progress to return). Call before the instance
  /// is freed.
  func stop() {
    guard started else { return }
    started = false
    channel.pointee.stopping.store(true, ordering: .releasing)
    sem_post(channel.pointee.wakeup)
    finished.wait()
  }

  deinit {
    stop()
    channel.pointee.requests.destroy()
    channel.pointee.responses.destroy()
    channel.pointee.stopping.destroy()
    channel.pointee.handled.destroy()
    channel.pointee.scheduled.destroy()
    channel.pointee.responseScratch.deallocate()
    channel.pointee.requestScratch.deallocate()
    sem_destroy(channel.pointee.wakeup)
    channel.pointee.wakeup.deallocate()
    channel.deinitialize(count: 1)
    channel.deallocate()
    schedule.deallocate()
  }
}

/// Realtime-safe: hands every response the worker made to the plugin, then ends the run.
@_noLocks
func deliverWorkerResponses(
  _ channel: UnsafeMutablePointer<WorkerChannel>, to instance: LV2Instance
) {
  if channel.pointee.inline {
    let request = channel.pointee.requestScratch
    while let size = channel.pointee.requests.pop(into: request) {
      instance.work(size: size, data: request, channel: channel)
      channel.pointee.handled.wrappingIncrement(ordering: .relaxed)
    }
  }
  let scratch = channel.pointee.responseScratch
  while let size = channel.pointee.responses.pop(into: scratch) {
    instance.workResponse(size: size, data: scratch)
  }
  instance.endRun()
}

/// Appends every message waiting in `messages` (atoms: header and body) to the atom sequence
/// in `slot` of each of `instances` instances (`stride` atom buffers of `capacity` bytes
/// each), as an event at frame 0: how `patch:Set` messages reach a plugin's control input.
///
/// - Note: Realtime-safe: no allocation, no locks.
@_noLocks
func deliverMessages(
  _ messages: ByteRing, scratch: UnsafeMutableRawPointer, atoms: UnsafeMutableRawPointer,
  slot: Int, stride: Int, instances: Int, capacity: Int
) {
  while let size = messages.pop(into: scratch) {
    for instance in 0..<instances {
      appendEvent(
        scratch, size: size, to: atoms + (instance * stride + slot) * capacity,
        capacity: capacity)
    }
  }
}

/// Appends an event at frame 0 holding the atom `atom` (`size` bytes: its header and body) to
/// the atom sequence at `sequence`, when it fits in `capacity` bytes.
///
/// - Note: Realtime-safe: no allocation, no locks.
@_noLocks
private func appendEvent(
  _ atom: UnsafeRawPointer, size: Int, to sequence: UnsafeMutableRawPointer, capacity: Int
) {
  let header = sequence.assumingMemoryBound(to: UInt32.self)
  let used = 8 + Int(header[0])
  let padded = (8 + size + 7) & ~7
  guard used + padded <= capacity else { return }
  let event = sequence + used
  event.storeBytes(of: Int64(0), as: Int64.self)
  (event + 8).copyMemory(from: atom, byteCount: size)
  var byte = 8 + size
  while byte < padded {
    event.storeBytes(of: UInt8(0), toByteOffset: byte, as: UInt8.self)
    byte += 1
  }
  header[0] += UInt32(padded)
}
