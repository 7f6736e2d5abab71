import Foundation
public import Mixing
import Synchronization

/// Memory for resident chunks of decoded audio: carved from slabs of anonymous memory and
/// recycled when a chunk is evicted.
///
/// Why: a chunk allocated with `malloc` (above its mmap threshold) is fresh memory each time,
/// and touching fresh memory costs a page fault and a zeroed page per 4 KiB; a recycled chunk
/// costs none, so a render or a player working through a long project touches fresh memory only
/// up to the most it ever holds at once. (Transparent huge pages, `MADV_HUGEPAGE`, were tried:
/// one fault per 2 MiB, but the kernel's compaction for them stalled a render by up to a second
/// on this machine, so they are not asked for.)
///
/// Thread-safe. A chunk of any source fits a slot of its channel count's size class.
public final class ChunkPool: ChunkMemory, @unchecked Sendable {
  /// 32 MiB: 64 stereo or 128 mono chunks.
  static let slabBytes = 32 << 20

  /// Addresses as integers: they are plain values that cross threads with the lock.
  private struct State {
    /// Free slots by size in floats (65,536 × channels).
    var free: [Int: [Int]] = [:]
    /// Which size class a slot belongs to, by address; negative for ordinary memory.
    var sizeOf: [Int: Int] = [:]
    /// Every slab: its mapping and length, unmapped when the pool goes.
    var slabs: [(address: Int, length: Int)] = []
  }

  private let state = Mutex(State())
  /// Whether new slabs are locked into RAM (a player's: its audio thread reads them).
  private let locksMemory: Bool
  /// Locks memory: 0, or an error number (`mlock`; a test's stand-in).
  private let lock: @Sendable (UnsafeRawPointer?, Int) -> Int32
  private let firstLockFailure = Mutex<Int32?>(nil)

  public convenience init(locksMemory: Bool = false) {
    self.init(locksMemory: locksMemory) { mlock($0, $1) == 0 ? 0 : errno }
  }

  init(locksMemory: Bool, lock: @escaping @Sendable (UnsafeRawPointer?, Int) -> Int32) {
    self.locksMemory = locksMemory
    self.lock = lock
  }

  /// The error number of the first slab that could not be locked into RAM (RLIMIT_MEMLOCK),
  /// nil while every one was.
  public var lockFailure: Int32? { firstLockFailure.withLock { $0 } }

  deinit {
    state.withLock { state in
      for (address, length) in state.slabs {
        munmap(UnsafeMutableRawPointer(bitPattern: address), length)
      }
    }
  }

  /// Memory for one chunk of `channels` channels (``/Mixing/SourceAudio/chunkFrames`` frames).
  public func chunk(channels: Int) -> UnsafeMutablePointer<Float> {
    let floats = SourceAudio.chunkFrames * channels
    let address = state.withLock { state -> Int? in
      if let slot = state.free[floats]?.popLast() { return slot }
      guard let slab = Self.mapSlab() else { return nil }
      if locksMemory {
        // Best effort: without the privilege (RLIMIT_MEMLOCK) the pages are merely resident,
        // and the first failure is kept for the player to say.
        let code = lock(UnsafeRawPointer(bitPattern: slab.mapping), slab.length)
        if code != 0 { firstLockFailure.withLock { $0 = $0 ?? code } }
      }
      state.slabs.append((slab.mapping, slab.length))
      let slots = Self.slabBytes / (floats * 4)
      for index in 0..<slots {
        let slot = slab.aligned + index * floats * 4
        state.sizeOf[slot] = floats
        if index > 0 { state.free[floats, default: []].append(slot) }
      }
      return slab.aligned
    }
    if let address, let slot = UnsafeMutablePointer<Float>(bitPattern: address) { return slot }
    // No slab to be had: ordinary memory, which release() also recognises.
    let slot = UnsafeMutablePointer<Float>.allocate(capacity: floats)
    state.withLock { $0.sizeOf[Int(bitPattern: slot)] = -floats }
    return slot
  }

  public func release(_ chunk: UnsafeMutablePointer<Float>) {
    let address = Int(bitPattern: chunk)
    let ordinary = state.withLock { state -> Bool in
      guard let size = state.sizeOf[address] else { return false }
      if size < 0 {
        state.sizeOf[address] = nil
        return true
      }
      state.free[size, default: []].append(address)
      return false
    }
    if ordinary { chunk.deallocate() }
  }

  /// A new slab (page-aligned, as every mapping is).
  private static func mapSlab() -> (mapping: Int, length: Int, aligned: Int)? {
    guard
      let mapping = mmap(
        nil, slabBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
      mapping != MAP_FAILED
    else { return nil }
    return (Int(bitPattern: mapping), slabBytes, Int(bitPattern: mapping))
  }
}
