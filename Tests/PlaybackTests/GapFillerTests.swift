import Foundation
import Testing

@testable import Playback

/// The recorder's writer fills what a full ring dropped with silence, so that every frame of
/// a take after a gap is at the frame it was captured at: a model capture (frame `n` of
/// channel `c` is `n * 2 + c + 1`, never 0) is pushed through an ``OverrunLog`` and a
/// ``GapFiller`` period by period as the device thread would, some periods dropped, and the
/// take written must be the capture with zeros exactly where the dropped periods were.
@Suite("A take's gaps filled with silence")
struct GapFillerTests {
  static let period = 64
  static let channels = 2
  static let frameBytes = channels * 4

  /// Frame `frame` of the model capture, interleaved.
  static func frame(_ frame: Int) -> [Int32] {
    (0..<channels).map { Int32(frame * channels + $0 + 1) }
  }

  /// Runs a capture of `periods` periods: those in `dropped` the ring drops, a device overrun
  /// comes before those in `overruns` (ALSA lost an unknown stretch: nothing to fill), and the
  /// writer takes what the ring holds after the periods in `pops` (and at the end). Returns
  /// the take and the gaps noted.
  static func take(
    periods: Int, dropped: Set<Int>, overruns: Set<Int> = [], pops: Set<Int>
  ) throws -> (take: [Int32], gaps: [Int64]) {
    let log = OverrunLog.make()
    defer { log.deallocate() }
    final class Sink: @unchecked Sendable { var bytes: [Int32] = [] }
    let sink = Sink()
    var filler = GapFiller(gaps: log, frameBytes: frameBytes) { data in
      sink.bytes += (0..<data.count / 4).map {
        data.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self)
      }
    }
    var ring: [Int32] = []
    var captured: Int64 = 0
    for index in 0..<periods {
      if overruns.contains(index) { log.note(captured, lost: 0) }
      let samples = (0..<period).flatMap { frame(Int(captured) + $0) }
      if dropped.contains(index) {
        log.note(captured, lost: Int64(period))
      } else {
        ring += samples
      }
      captured += Int64(period)
      if pops.contains(index) {
        try ring.withUnsafeBytes { try filler.hand($0) }
        ring = []
      }
    }
    try ring.withUnsafeBytes { try filler.hand($0) }
    try filler.fillGapsHere()
    #expect(filler.frames == captured)
    return (sink.bytes, log.frames)
  }

  /// The model capture with the frames of `dropped` periods zero.
  static func expected(periods: Int, dropped: Set<Int>) -> [Int32] {
    (0..<periods * period).flatMap { frame in
      dropped.contains(frame / period) ? [Int32](repeating: 0, count: channels) : Self.frame(frame)
    }
  }

  @Test func aGapInTheMiddleIsSilenceAndWhatFollowsIsInPlace() throws {
    let (take, gaps) = try Self.take(periods: 10, dropped: [4], pops: [2, 6])
    #expect(take == Self.expected(periods: 10, dropped: [4]))
    #expect(gaps == [4 * Int64(Self.period)])
  }

  /// Periods dropped one after another are one gap, filled whole even when the writer took
  /// what the ring held in the middle of it (the gap still growing then).
  @Test func periodsLostInARowAreOneGapWhereverTheWriterLooks() throws {
    let dropped: Set<Int> = [3, 4, 5]
    for pops in [Set<Int>(), [3], [4], [2, 4, 5], Set(0..<10)] {
      let (take, gaps) = try Self.take(periods: 10, dropped: dropped, pops: pops)
      #expect(take == Self.expected(periods: 10, dropped: dropped), "pops \(pops)")
      #expect(gaps == [3 * Int64(Self.period)], "pops \(pops)")
    }
  }

  @Test func gapsAtTheStartAndTheEndAreFilledToo() throws {
    let dropped: Set<Int> = [0, 1, 8, 9]
    let (take, gaps) = try Self.take(periods: 10, dropped: dropped, pops: [5])
    #expect(take == Self.expected(periods: 10, dropped: dropped))
    #expect(gaps == [0, 8 * Int64(Self.period)])
  }

  /// A device's overrun is a gap of unknown length: marked, nothing filled; one right before
  /// a ring's drop is the same gap, filled by the drop's length.
  @Test func aDevicesOverrunIsMarkedNotFilled() throws {
    let (take, gaps) = try Self.take(
      periods: 10, dropped: [6], overruns: [2, 6], pops: [1, 4, 7])
    #expect(take == Self.expected(periods: 10, dropped: [6]))
    #expect(gaps == [2 * Int64(Self.period), 6 * Int64(Self.period)])
  }

  /// Past ``OverrunLog/capacity`` gaps, a gap is neither kept nor filled, but its frames are
  /// counted (what `tape record` warns of); one that continues the last kept gap still grows it.
  @Test func gapsPastTheLogsCapacityAreCounted() {
    let log = OverrunLog.make()
    defer { log.deallocate() }
    for index in 0..<OverrunLog.capacity { log.note(Int64(index) * 1_000, lost: 10) }
    log.note(Int64(OverrunLog.capacity - 1) * 1_000 + 10, lost: 5)
    log.note(Int64(OverrunLog.capacity) * 1_000, lost: 64)
    log.note(Int64(OverrunLog.capacity) * 1_000 + 500, lost: 0)
    #expect(log.frames.count == OverrunLog.capacity)
    #expect(log.entry(OverrunLog.capacity - 1)?.lost == 15)
    #expect(log.entry(OverrunLog.capacity) == nil)
    #expect(log.unlogged == 64)
  }
}
