import Synchronization

/// A single-producer, single-consumer ring of bytes between the capture device thread (which
/// pushes each period it reads) and the writer thread (which pops what came and writes it to
/// the take's file).
///
/// Rule: the device thread never waits for the writer. Why: a capture device that is not read
/// in time overruns and loses what it held; a ring that is full loses the period instead, and
/// says so (``overruns``), so that a slow disk costs the gap it caused and nothing more.
///
/// Held by both threads as a value (addresses, no reference): the storage and the two counters
/// are allocated before the device thread starts and freed by ``deallocate()`` after both end.
struct CaptureRing: @unchecked Sendable, BitwiseCopyable {
  private let storage: UnsafeMutableRawPointer
  /// Bytes the ring holds at most.
  let capacity: Int
  /// Bytes pushed so far, and bytes popped so far (monotonic): what is in the ring is their
  /// difference.
  private let pushed: UnsafeMutablePointer<Atomic<Int>>
  private let popped: UnsafeMutablePointer<Atomic<Int>>
  /// Periods dropped because the ring was full, and their frames.
  private let dropped: UnsafeMutablePointer<Atomic<Int>>
  private let droppedBytes: UnsafeMutablePointer<Atomic<Int>>

  init(capacity: Int) {
    self.capacity = capacity
    storage = .allocate(byteCount: capacity, alignment: 16)
    storage.initializeMemory(as: UInt8.self, repeating: 0, count: capacity)
    pushed = .allocate(capacity: 1)
    pushed.initialize(to: Atomic(0))
    popped = .allocate(capacity: 1)
    popped.initialize(to: Atomic(0))
    dropped = .allocate(capacity: 1)
    dropped.initialize(to: Atomic(0))
    droppedBytes = .allocate(capacity: 1)
    droppedBytes.initialize(to: Atomic(0))
  }

  /// Frees the ring: call once, after both threads have finished with it.
  func deallocate() {
    storage.deallocate()
    for counter in [pushed, popped, dropped, droppedBytes] {
      counter.deinitialize(count: 1)
      counter.deallocate()
    }
  }

  /// The storage, to lock into memory before the device thread starts.
  var memory: (UnsafeRawPointer, Int) { (UnsafeRawPointer(storage), capacity) }

  /// Copies `count` bytes at `bytes` in whole, or drops them all (counted) when there is not
  /// room for them: false then.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  func push(_ bytes: UnsafeRawPointer, count: Int) -> Bool {
    let head = pushed.pointee.load(ordering: .relaxed)
    let tail = popped.pointee.load(ordering: .acquiring)
    guard capacity - (head - tail) >= count else {
      dropped.pointee.add(1, ordering: .relaxed)
      droppedBytes.pointee.add(count, ordering: .relaxed)
      return false
    }
    let start = head % capacity
    let first = min(count, capacity - start)
    Self.copy(storage + start, bytes, first)
    if first < count { Self.copy(storage, bytes + first, count - first) }
    pushed.pointee.store(head + count, ordering: .releasing)
    return true
  }

  /// `memcpy`: a C call the checker cannot see into; it takes no lock and allocates nothing.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inline(__always)
  private static func copy(
    _ destination: UnsafeMutableRawPointer, _ source: UnsafeRawPointer, _ count: Int
  ) {
    _unsafePerformance { destination.copyMemory(from: source, byteCount: count) }
  }

  /// Hands what the ring holds to `body`, in at most two pieces (where it wraps), then frees
  /// it; returns how many bytes. The writer thread only.
  func pop(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Int {
    let tail = popped.pointee.load(ordering: .relaxed)
    let head = pushed.pointee.load(ordering: .acquiring)
    let count = head - tail
    guard count > 0 else { return 0 }
    let start = tail % capacity
    let first = min(count, capacity - start)
    try body(UnsafeRawBufferPointer(start: storage + start, count: first))
    if first < count { try body(UnsafeRawBufferPointer(start: storage, count: count - first)) }
    popped.pointee.store(tail + count, ordering: .releasing)
    return count
  }

  /// Copies up to `count` bytes of what the ring holds into `destination` and frees them;
  /// returns how many (the consumer's side, for a device thread: the monitor's).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  func take(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
    let tail = popped.pointee.load(ordering: .relaxed)
    let head = pushed.pointee.load(ordering: .acquiring)
    let available = min(count, head - tail)
    guard available > 0 else { return 0 }
    let start = tail % capacity
    let first = min(available, capacity - start)
    Self.copy(destination, storage + start, first)
    if first < available { Self.copy(destination + first, storage, available - first) }
    popped.pointee.store(tail + available, ordering: .releasing)
    return available
  }

  /// Periods dropped because the ring was full, and how many bytes they held.
  var overruns: (periods: Int, bytes: Int) {
    (dropped.pointee.load(ordering: .relaxed), droppedBytes.pointee.load(ordering: .relaxed))
  }
}
