import Atomics

/// A source's decoded audio as the mixer reads it: interleaved float32 at the project rate,
/// in fixed chunks of ``chunkFrames`` frames, each resident in memory or not.
///
/// Rule: the mixer reads only chunks a loader has made resident, through one atomic load of
/// the chunk's address. Why: decoded audio used to be memory-mapped, and a cache file that
/// shrank under the mapping (another process, a full disk, a user) killed the process with
/// SIGBUS; a page that was not in memory stalled the audio thread on a disk read. Now a loader
/// reads the cache with `pread` (a short read is an error message), verifies each chunk's
/// checksum, and publishes it here; the kernel renders a chunk that is not resident as silence
/// and counts it (`RenderPlan/missingFrames`), never blocking.
///
/// The loader decides which chunks are resident (the offline renderer: those the next batch
/// reads; the player: those ahead of the playhead). A chunk is freed by ``evict(_:)``, which
/// the caller may use only when no renderer can be reading it.
///
/// ```swift
/// let audio = SourceAudio(frames: 96_000, channels: 2)
/// let chunk = UnsafeMutablePointer<Float>.allocate(capacity: audio.samplesInChunk(0))
/// // … fill it …
/// audio.publish(chunk, at: 0)
/// ```
public final class SourceAudio: @unchecked Sendable {
  /// log2 of ``chunkFrames``.
  public static var chunkShift: Int { ChunkTable.shift }
  /// Frames per chunk: 65,536 (1.4 s at 48 kHz).
  public static var chunkFrames: Int { 1 << ChunkTable.shift }

  public let frames: Int
  /// 1 or 2.
  public let channels: Int
  public let chunkCount: Int
  /// Where chunk memory goes back to; nil: it was made with `UnsafeMutablePointer.allocate`.
  public let memory: (any ChunkMemory)?
  /// Each chunk's address (0 when not resident), read and written atomically.
  let table: UnsafeMutablePointer<UInt.AtomicRepresentation>

  public init(frames: Int, channels: Int, memory: (any ChunkMemory)? = nil) {
    self.frames = frames
    self.channels = channels
    self.memory = memory
    chunkCount = (frames + Self.chunkFrames - 1) >> Self.chunkShift
    table = .allocate(capacity: max(chunkCount, 1))
    table.initialize(repeating: UInt.AtomicRepresentation(0), count: max(chunkCount, 1))
  }

  /// Audio held whole in memory, every chunk resident: for tests and generated sources.
  public convenience init(interleaved samples: [Float], channels: Int) {
    self.init(frames: samples.count / channels, channels: channels)
    for chunk in 0..<chunkCount {
      let count = samplesInChunk(chunk)
      let buffer = UnsafeMutablePointer<Float>.allocate(capacity: count)
      let first = chunk * Self.chunkFrames * channels
      samples.withUnsafeBufferPointer { all in
        if let base = all.baseAddress { buffer.initialize(from: base + first, count: count) }
      }
      _ = publish(buffer, at: chunk)
    }
  }

  deinit {
    for chunk in 0..<chunkCount { evict(chunk) }
    table.deinitialize(count: max(chunkCount, 1))
    table.deallocate()
  }

  /// Frames in chunk `index` (the last one may be short).
  public func framesInChunk(_ index: Int) -> Int {
    min(Self.chunkFrames, frames - index * Self.chunkFrames)
  }

  /// Samples (frames × channels) in chunk `index`.
  public func samplesInChunk(_ index: Int) -> Int {
    framesInChunk(index) * channels
  }

  /// The chunks holding frames `range` (clamped to the audio).
  public func chunks(covering range: Range<Int>) -> Range<Int> {
    let lower = max(0, range.lowerBound) >> Self.chunkShift
    let upper = (min(frames, range.upperBound) + Self.chunkFrames - 1) >> Self.chunkShift
    return lower..<max(lower, upper)
  }

  /// The chunk's samples when resident.
  public func chunk(_ index: Int) -> UnsafePointer<Float>? {
    ChunkTable.chunk(index, in: table)
  }

  public func isResident(_ index: Int) -> Bool {
    chunk(index) != nil
  }

  /// Makes `samples` (``samplesInChunk(_:)`` floats, from ``memory``, or allocated with
  /// `UnsafeMutablePointer.allocate` when that is nil) chunk `index`; this object now owns it.
  /// Returns false, and gives `samples` back, when the chunk was already resident.
  @discardableResult
  public func publish(_ samples: UnsafeMutablePointer<Float>, at index: Int) -> Bool {
    precondition(index >= 0 && index < chunkCount, "chunk \(index) of \(chunkCount)")
    let slot = UnsafeAtomic<UInt>(at: table + index)
    let desired = UInt(bitPattern: samples)
    // Over nothing, or over the mark of a chunk that could not be read before.
    var exchanged = slot.compareExchange(expected: 0, desired: desired, ordering: .releasing).0
    if !exchanged {
      exchanged =
        slot.compareExchange(
          expected: ChunkTable.unreadable, desired: desired, ordering: .releasing
        ).0
    }
    if !exchanged { release(samples) }
    return exchanged
  }

  /// Marks chunk `index`, not resident, as one its loader could not read: renderers play it
  /// as silence (counted as missing) and a player does not wait for it (``isUnreadable(_:)``).
  /// A later ``publish(_:at:)`` replaces the mark. False when the chunk is resident.
  @discardableResult
  public func markUnreadable(_ index: Int) -> Bool {
    UnsafeAtomic<UInt>(at: table + index).compareExchange(
      expected: 0, desired: ChunkTable.unreadable, ordering: .releasing
    ).exchanged
  }

  public func isUnreadable(_ index: Int) -> Bool {
    UnsafeAtomic<UInt>(at: table + index).load(ordering: .acquiring) == ChunkTable.unreadable
  }

  /// Takes chunk `index` out of the table without freeing it: a player's audio thread may be
  /// reading it this very period, so the caller frees it (``release(_:)``) once that period
  /// is over. Nil when the chunk was not resident (an unreadable mark stays).
  public func detach(_ index: Int) -> UnsafeMutablePointer<Float>? {
    let slot = UnsafeAtomic<UInt>(at: table + index)
    var old = slot.load(ordering: .acquiring)
    while old != 0 && old != ChunkTable.unreadable {
      let (exchanged, found) = slot.compareExchange(
        expected: old, desired: 0, ordering: .acquiringAndReleasing)
      if exchanged { return UnsafeMutablePointer<Float>(bitPattern: old) }
      old = found
    }
    return nil
  }

  /// Frees chunk `index` (and forgets an unreadable mark). Only when no renderer can be
  /// reading it.
  public func evict(_ index: Int) {
    let old = UnsafeAtomic<UInt>(at: table + index).exchange(0, ordering: .acquiringAndReleasing)
    guard old != ChunkTable.unreadable else { return }
    if let chunk = UnsafeMutablePointer<Float>(bitPattern: old) { release(chunk) }
  }

  /// Gives back the memory of a chunk taken out with ``detach(_:)``.
  public func release(_ chunk: UnsafeMutablePointer<Float>) {
    if let memory { memory.release(chunk) } else { chunk.deallocate() }
  }

  /// Every resident chunk's index.
  public var residentChunks: [Int] {
    (0..<chunkCount).filter(isResident)
  }
}

/// Where the memory of resident chunks comes from and goes back to (a loader's pool of
/// pre-faulted pages, say), so chunks read over and over do not cost a page fault per page.
public protocol ChunkMemory: AnyObject, Sendable {
  /// Takes back a chunk's memory.
  func release(_ chunk: UnsafeMutablePointer<Float>)
}
