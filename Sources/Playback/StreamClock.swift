import Foundation

/// A device thread's log of where its stream was, and when: after each read or write, the
/// monotonic time, the stream's frame at the converter (the frame being played, or being
/// captured, at that moment) and the frames queued in the device (ALSA's `snd_pcm_delay`).
///
/// Two such logs, one from the player's device thread and one from the recorder's, are what
/// ``RoundTrip/align(playback:capture:period:sampleRate:)`` relates: which capture frame was taken
/// while
/// which timeline frame was heard. The logs are fixed arrays, allocated before the threads
/// start, written only by their device thread (the first ``capacity`` entries), and read only
/// after that thread has ended.
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
  }

  /// The entries kept: the first 4,096 reads or writes (at 256-frame periods and 48 kHz, 21 s;
  /// what the alignment needs is in the first second).
  public static let capacity = 4_096

  let writer: Writer

  public init() {
    writer = Writer(
      entries: .allocate(capacity: Self.capacity), count: .allocate(capacity: 1))
    writer.entries.initialize(
      repeating: Entry(time: 0, position: 0, delay: 0), count: Self.capacity)
    writer.count.initialize(to: 0)
  }

  deinit {
    writer.entries.deallocate()
    writer.count.deallocate()
  }

  /// What was logged, oldest first. Read after the device thread ended.
  public var entries: [Entry] {
    Array(UnsafeBufferPointer(start: writer.entries, count: writer.count.pointee))
  }

  /// The log as the device thread holds it: pointers, no reference.
  struct Writer: @unchecked Sendable, BitwiseCopyable {
    let entries: UnsafeMutablePointer<Entry>
    let count: UnsafeMutablePointer<Int>

    /// Logs one look; nothing once the log is full.
    ///
    /// - Note: Realtime-safe: no allocation, no locks.
    @_noLocks
    func log(time: UInt64, position: Int64, delay: Int64) {
      let index = count.pointee
      guard index < StreamClock.capacity else { return }
      entries[index] = Entry(time: time, position: position, delay: delay)
      count.pointee = index + 1
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
