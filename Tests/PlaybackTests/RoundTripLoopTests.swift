import Testing

@testable import Playback

/// ``RoundTrip/unwrapped(_:loop:)``: a looping play's clock laid out end to end, so that a
/// capture over several passes aligns with one offset.
struct RoundTripLoopTests {
  @Test func aLoopingPlaysClockIsLaidOutEndToEnd() throws {
    // A loop 1,000–2,000, 256-frame periods, 300 frames in the device: the position sounding
    // is the mixer's less 300, which falls back by about a loop at each wrap.
    let length: Int64 = 1_000
    var mixer: Int64 = 1_000
    var playback: [StreamClock.Entry] = []
    var capture: [StreamClock.Entry] = []
    for step in 0..<40 {
      let time = UInt64(step) * 5_333_333
      playback.append(StreamClock.Entry(time: time, position: mixer - 300, delay: 300))
      capture.append(StreamClock.Entry(time: time, position: Int64(step) * 256 + 40, delay: 0))
      mixer += 256
      if mixer >= 2_000 { mixer -= length }
    }
    let laidOut = RoundTrip.unwrapped(playback, loop: length)
    let expected: [Int64] = (0..<40).map { (step: Int) -> Int64 in 700 + Int64(step) * 256 }
    #expect(laidOut.map(\.position) == expected)
    // One offset for every pair, where the raw clock gives one per pass.
    let trip = try #require(
      RoundTrip.align(playback: laidOut, capture: capture, period: 256, sampleRate: 48_000))
    let offset: Int64 = 700 - 40
    #expect(trip.offset == offset)
    #expect(trip.agreeing == trip.pairs)
    let raw = try #require(
      RoundTrip.align(playback: playback, capture: capture, period: 256, sampleRate: 48_000))
    #expect(raw.agreeing < raw.pairs)
  }
}
