import Foundation
import Testing

@testable import Playback

/// ``StreamClock`` keeps the latest looks of its stream (a ring), so that two clocks that
/// did not meet at the start (a slow start) still meet later, and ``RoundTrip`` finds them.
struct StreamClockTests {
  /// A play logging every 5 ms (256 frames at 48 kHz) and a capture logging every 5 ms too,
  /// but 2.5 ms apart for the first 5,000 looks (never within a quarter period, 1.33 ms),
  /// then at the same moments with the capture 3,000 frames behind the timeline.
  @Test func clocksThatMeetOnlyAfterTheirFirst5000LooksStillMeet() {
    let playback = StreamClock()
    let capture = StreamClock()
    let step: UInt64 = 5_333_333
    for index in 0..<5_300 {
      let time = 1_000_000_000 + UInt64(index) * step
      let played = Int64(index) * 256
      playback.log(.init(time: time, position: played + 10_000, delay: 512))
      // Before 5,000, the capture's look is half a period off and its offset disagrees.
      let late: UInt64 = index < 5_000 ? step / 2 : 0
      let captured = Int64(index) * 256 + (index < 5_000 ? 777 : 0)
      capture.log(.init(time: time + late, position: captured + 7_000, delay: 256))
    }
    #expect(playback.logged == 5_300 && capture.logged == 5_300)
    let kept = playback.entries
    #expect(kept.count == StreamClock.capacity)
    // The latest looks, in order: the first kept is look 5,300 − 4,096.
    #expect(kept.first?.position == Int64(5_300 - StreamClock.capacity) * 256 + 10_000)
    #expect(kept.last?.position == Int64(5_299) * 256 + 10_000)
    #expect(zip(kept, kept.dropFirst()).allSatisfy { $0.time < $1.time })
    let trip = RoundTrip.align(
      playback: kept, capture: capture.entries, period: 256, sampleRate: 48_000)
    #expect(
      trip
        == RoundTrip(
          offset: 3_000, playbackDelay: 512, captureDelay: 256, pairs: 300, agreeing: 300))
    // Only the first 4,096 (what the clock kept before) never meet.
    let first = (0..<StreamClock.capacity).map { index in
      StreamClock.Entry(
        time: 1_000_000_000 + UInt64(index) * step + step / 2,
        position: Int64(index) * 256 + 7_777, delay: 256)
    }
    let firstPlayed = (0..<StreamClock.capacity).map { index in
      StreamClock.Entry(
        time: 1_000_000_000 + UInt64(index) * step, position: Int64(index) * 256 + 10_000,
        delay: 512)
    }
    #expect(
      RoundTrip.align(playback: firstPlayed, capture: first, period: 256, sampleRate: 48_000) == nil
    )
  }

  /// A reader copying while the device thread writes gets whole looks in order (each look's
  /// fields written together are read together), never one overwritten under it.
  @Test func aReaderWhileTheWriterLogsSeesWholeLooksInOrder() async {
    let clock = StreamClock()
    let writer = Task.detached {
      for index in 0..<200_000 {
        clock.log(.init(time: UInt64(index), position: Int64(index) * 3, delay: Int64(index) * 5))
      }
    }
    var looks = 0
    while looks < 200 {
      let entries = clock.entries
      for entry in entries {
        #expect(entry.position == Int64(entry.time) * 3 && entry.delay == Int64(entry.time) * 5)
      }
      #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.time + 1 == $1.time })
      looks += 1
      await Task.yield()
    }
    await writer.value
    #expect(clock.entries.count == StreamClock.capacity)
    #expect(clock.entries.last?.time == 199_999)
  }
}
