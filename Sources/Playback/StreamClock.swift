import Foundation
import Synchronization

/// A device thread's log of where its stream was, and when: after each read or write, the
/// monotonic time, the stream's frame at the converter (the frame being played, or being
/// captured, at that moment) and the frames queued in the device (ALSA's `snd_pcm_delay`).
///
/// Two such logs, one from the player's device thread and one from the recorder's, are what
/// ``RoundTrip/align(playback:capture:period:sampleRate:)`` relates: which capture frame was
/// taken while which timeline frame was heard. Each log is a ring of the last ``capacity``
/// looks, allocated before the threads start and written only by its device thread, so that
/// however late the two clocks first meet (a slow start, a device that stalls before it runs)
/// the latest looks of both are there to meet. Any thread may read it meanwhile
/// (``entries``): the slots are atomics, and a look the writer overwrote during the copy is
/// left out.
///
/// ```swift
/// let clock = StreamClock()
/// player.clock = clock        // before start
/// // … play …
/// _ = player.wait()
/// let entries = clock.entries
/// ```
public final class StreamClock: @unchecked Sendable {
  /// One look at a stream.
  public struct Entry: Sendable, Equatable {
    /// CLOCK_MONOTONIC nanoseconds.
    public var time: UInt64
    /// Playback: the timeline frame sounding (the mixer's position less what the device still
    /// holds); capture: the take's frame being captured (frames read plus what the device
    /// holds).
    public var position: Int64
    /// Frames queued in the device: the latency the device reports.
    public var delay: Int64

    public init(time: UInt64, position: Int64, delay: Int64) {
      self.time = time
      self.position = position
      self.delay = delay
    }
  }

  /// The looks kept: the last 4,096 reads or writes (at 256-frame periods and 48 kHz, 21 s;
  /// at the recorder's 1,024, 87 s), older ones overwritten.
  public static let capacity = 4_096
  /// Slots for one look more than are kept: the one the writer may be writing while a reader
  /// copies.
  static let slotCount = capacity + 1

  let writer: Writer

  public init() {
    let slots = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: Self.slotCount * 3)
    for index in 0..<(Self.slotCount * 3) { (slots + index).initialize(to: Atomic(0)) }
    let count = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: 1)
    count.initialize(to: Atomic(0))
    writer = Writer(slots: slots, count: count)
  }

  deinit {
    writer.slots.deinitialize(count: Self.slotCount * 3)
    writer.slots.deallocate()
    writer.count.deinitialize(count: 1)
    writer.count.deallocate()
  }

  /// Looks logged since the start (those before the last ``capacity`` are gone).
  public var logged: Int { writer.count.pointee.load(ordering: .acquiring) }

  /// The looks kept, oldest first. Any thread, while the device thread runs or after.
  public var entries: [Entry] {
    let total = writer.count.pointee.load(ordering: .acquiring)
    let first = max(0, total - Self.capacity)
    var copied: [Entry] = []
    copied.reserveCapacity(total - first)
    for index in first..<total {
      let slot = writer.slots + (index % Self.slotCount) * 3
      copied.append(
        Entry(
          time: slot[0].load(ordering: .relaxed),
          position: Int64(bitPattern: slot[1].load(ordering: .relaxed)),
          delay: Int64(bitPattern: slot[2].load(ordering: .relaxed))))
    }
    // The writer may since have overwritten the oldest (and be writing over the next one):
    // a look read here that a later one overwrote is seen in the count read after this fence
    // (the writer's fence comes between its last count and the next look's slots).
    atomicMemoryFence(ordering: .acquiring)
    let after = writer.count.pointee.load(ordering: .relaxed)
    let overwritten = max(0, after + 1 - Self.slotCount - first)
    return Array(copied.dropFirst(min(overwritten, copied.count)))
  }

  /// Logs one look, as the device thread does (for a caller that drives a clock itself).
  public func log(_ entry: Entry) {
    writer.log(time: entry.time, position: entry.position, delay: entry.delay)
  }

  /// The log as the device thread holds it: pointers, no reference.
  struct Writer: @unchecked Sendable, BitwiseCopyable {
    /// Three per look: time, position, delay (bit patterns).
    let slots: UnsafeMutablePointer<Atomic<UInt64>>
    /// Looks logged so far (monotonic); the slot of look `n` is `n % slotCount`.
    let count: UnsafeMutablePointer<Atomic<Int>>

    /// Logs one look over the oldest once the ring is full.
    ///
    /// - Note: Realtime-safe: no allocation, no locks.
    @_noLocks
    func log(time: UInt64, position: Int64, delay: Int64) {
      let index = count.pointee.load(ordering: .relaxed)
      // The count so far comes before this look's slots (a reader's look at them).
      atomicMemoryFence(ordering: .releasing)
      let slot = slots + (index % StreamClock.slotCount) * 3
      slot[0].store(time, ordering: .relaxed)
      slot[1].store(UInt64(bitPattern: position), ordering: .relaxed)
      slot[2].store(UInt64(bitPattern: delay), ordering: .relaxed)
      count.pointee.store(index + 1, ordering: .releasing)
    }
  }
}

/// The round trip of a play and a capture that run together: where on the timeline a take's
/// frame 0 was heard, from the two streams' ``StreamClock`` logs.
///
/// The player logs which timeline frame sounds at the converter at a moment (the mixer's
/// position less the frames the device still holds: the playback latency ALSA reports); the
/// recorder logs which take frame is being captured (frames read plus those the device holds:
/// the capture latency). Entries of the two logs taken within a quarter of a period of each
/// other give `timeline − take`: the timeline frame heard while the take's frame 0 was
/// captured. Devices whose positions move together (two streams of JACK's ALSA plugin, whose
/// positions both step once per JACK cycle; a card's linked streams) give the same value for
/// nearly every pair, and the most common one is taken: exact to the frame. What the logs
/// cannot see (converters, cables, JACK's own port latencies) is the device's extra latency,
/// which ``LatencyCalibration`` measures.
public struct RoundTrip: Sendable, Equatable {
  /// The timeline frame heard while the take's frame 0 was captured (before any calibration).
  public var offset: Int64
  /// The median playback and capture latency the devices reported, in frames.
  public var playbackDelay: Int64
  public var captureDelay: Int64
  /// Pairs of entries the offset was taken from, and how many of them gave it.
  public var pairs: Int
  public var agreeing: Int

  /// Where the take's frame 0 lands on the timeline: the frame heard while it was captured,
  /// less the device's `extraFrames` of round trip that ALSA does not report (the take was
  /// played that much earlier than it was captured), moved by `at − from` when the take is
  /// to land elsewhere than where it was played (`--at` beside `--from`).
  public func timelineStart(extraFrames: Int64, at: Int64, from: Int64) -> Int64 {
    offset - extraFrames + (at - from)
  }

  /// A looping play's log as if the loop were laid out end to end: each time the position
  /// falls back by more than half the loop (`length` frames), the loop wrapped, and every
  /// later position gets one more `length`. Then the timeline frame of pass `k` reads as
  /// `frame + k · length`, and the alignment of a recording made over all the passes is one
  /// offset again (each pass's take starts a loop's length later in the capture).
  public static func unwrapped(
    _ entries: [StreamClock.Entry], loop length: Int64
  )
    -> [StreamClock.Entry]
  {
    var layout = LoopLayout(length: length)
    return entries.map { entry in
      var laidOut = entry
      laidOut.position = layout.laidOut(entry.position)
      return laidOut
    }
  }

  /// Relates the two logs; nil when they hold no pair of entries close enough in time.
  /// `period` (frames at `sampleRate`) bounds "close enough" (a quarter of it).
  public static func align(
    playback: [StreamClock.Entry], capture: [StreamClock.Entry], period: Int, sampleRate: Int
  ) -> RoundTrip? {
    guard !playback.isEmpty, !capture.isEmpty else { return nil }
    // The first entries are the devices starting; a period in, both run.
    let window = UInt64(Double(period) / Double(sampleRate) * 1e9 / 4)
    var offsets: [Int64] = []
    var captureIndex = 0
    for entry in playback {
      while captureIndex + 1 < capture.count
        && capture[captureIndex + 1].time <= entry.time
      {
        captureIndex += 1
      }
      var nearest = capture[captureIndex]
      if captureIndex + 1 < capture.count {
        let next = capture[captureIndex + 1]
        if next.time.distance(to: entry.time).magnitude
          < nearest.time.distance(to: entry.time).magnitude
        {
          nearest = next
        }
      }
      guard nearest.time.distance(to: entry.time).magnitude <= window else { continue }
      offsets.append(entry.position - nearest.position)
    }
    guard !offsets.isEmpty else { return nil }
    var counts: [Int64: Int] = [:]
    for offset in offsets { counts[offset, default: 0] += 1 }
    // The most common; of equals, the smallest (stable).
    let best = counts.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }
    guard let best else { return nil }
    func median(_ values: [Int64]) -> Int64 {
      let sorted = values.sorted()
      return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
    return RoundTrip(
      offset: best.key, playbackDelay: median(playback.map(\.delay)),
      captureDelay: median(capture.map(\.delay)), pairs: offsets.count, agreeing: best.value)
  }
}

/// A looping play's positions laid out end to end, one at a time (``RoundTrip/unwrapped(_:loop:)``
/// over a whole log; ``LivePlayer/clock`` as its device thread logs): each time the position
/// falls back by more than half the loop (`length` frames), the loop wrapped, and every later
/// position gets one more `length`. Allocation-free, for the device thread.
public struct LoopLayout: Sendable {
  public let length: Int64
  private var wraps: Int64 = 0
  private var last: Int64?

  public init(length: Int64) {
    self.length = length
  }

  /// `position` laid out: plus `length` for every wrap seen so far, this one included.
  public mutating func laidOut(_ position: Int64) -> Int64 {
    guard length > 0 else { return position }
    if let last, position < last - length / 2 { wraps += 1 }
    last = position
    return position + wraps * length
  }
}
