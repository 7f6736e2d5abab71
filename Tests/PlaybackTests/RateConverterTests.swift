import Foundation
import Testing

@testable import Playback

/// The converter to a device's rate, against analytic signals: a sine comes out as the same
/// sine at the new rate (its pitch exact, its amplitude flat to the passband's ripple), a tone
/// past the lower Nyquist frequency does not come out at all, and every M input frames become
/// exactly L output frames, however the input is cut.
@Suite("Rate converter")
struct RateConverterTests {
  /// The pairs of rates the issue names, both ways, and the factor of 2.
  static let pairs = [
    (44_100, 48_000), (48_000, 44_100), (96_000, 48_000), (44_100, 96_000), (88_200, 48_000),
    (48_000, 96_000), (96_000, 44_100), (48_000, 88_200),
  ]

  /// `frames` output frames of `input` (interleaved, `channels`) converted from `from` to
  /// `to`, pushed in chunks whose sizes cycle through `chunks` (as the device thread pushes
  /// what each period needs), pulled `period` frames at a time.
  static func convert(
    _ input: [Float], channels: Int, from: Int, to: Int, period: Int = 256,
    frames: Int, chunks: [Int]? = nil
  ) throws -> [Float] {
    let design = try #require(RateConversion(from: from, to: to))
    let most = design.inputFrames(forOutputs: period)
    let converter = RateConverter(
      design, channels: channels, maximumInput: most + design.taps / 2 + 1)
    var kernel = converter.start()
    var output = [Float](repeating: 0, count: frames * channels)
    var next = 0
    var chunk = 0
    var done = 0
    while done < frames {
      let count = min(period, frames - done)
      var needed = kernel.inputNeeded(toProduce: count)
      while needed > 0 {
        let size = min(needed, chunks.map { $0[chunk % $0.count] } ?? most)
        chunk += 1
        var block = [Float](repeating: 0, count: size * channels)
        for i in 0..<size * channels where next * channels + i < input.count {
          block[i] = input[next * channels + i]
        }
        block.withUnsafeBufferPointer { kernel.push($0.baseAddress!, frames: size) }
        next += size
        needed -= size
      }
      output.withUnsafeMutableBufferPointer {
        kernel.pull(count, into: $0.baseAddress! + done * channels)
      }
      done += count
    }
    return output
  }

  static func sine(hertz: Double, rate: Int, frames: Int, amplitude: Double = 0.5) -> [Float] {
    (0..<frames).map { Float(amplitude * sin(2 * Double.pi * hertz * Double($0) / Double(rate))) }
  }

  /// A 1 kHz sine and a 19 kHz one (near the passband's end) at each pair of rates: after the
  /// first half filter (whose taps read the silence before the input), every output frame is
  /// the sine at the output rate, sampled at exactly n / rate, to 10⁻⁵ of full scale: pitch
  /// exact, no delay, passband flat, no image or alias of it left above −100 dB.
  @Test(arguments: pairs)
  func aSineComesOutAtTheNewRate(from: Int, to: Int) throws {
    let design = try #require(RateConversion(from: from, to: to))
    for hertz in [1_000.0, 19_000.0] {
      let input = Self.sine(hertz: hertz, rate: from, frames: from / 2)
      let frames = to / 4
      let output = try Self.convert(input, channels: 1, from: from, to: to, frames: frames)
      let expected = Self.sine(hertz: hertz, rate: to, frames: frames)
      let skip = design.taps * to / from + 8
      let worst = zip(output, expected).dropFirst(skip).map { abs($0 - $1) }.max() ?? 1
      print("\(from) → \(to) Hz, \(hertz) Hz sine: largest difference \(worst)")
      #expect(worst < 1e-5, "\(from) → \(to) Hz, \(hertz) Hz sine: largest difference \(worst)")
    }
  }

  /// A tone in the stopband (above the lower rate's Nyquist frequency) going down: what would
  /// alias into the band is at least 100 dB down.
  @Test(arguments: [
    (48_000, 44_100, 22_600.0), (96_000, 48_000, 25_000.0), (96_000, 44_100, 23_000.0),
  ])
  func aToneAboveTheLowerNyquistIsRemoved(from: Int, to: Int, hertz: Double) throws {
    let design = try #require(RateConversion(from: from, to: to))
    let input = Self.sine(hertz: hertz, rate: from, frames: from / 2, amplitude: 1)
    let output = try Self.convert(input, channels: 1, from: from, to: to, frames: to / 4)
    let skip = design.taps * to / from + 8
    let worst = output.dropFirst(skip).map { abs($0) }.max() ?? 1
    print("\(from) → \(to) Hz, \(hertz) Hz tone: largest output \(20 * log10(Double(worst))) dB")
    #expect(worst < 1e-5, "\(from) → \(to): \(hertz) Hz comes out at \(worst)")
  }

  /// Stereo noise converted in chunks of any size (as periods of the mixer come) equals it
  /// converted in one size, bit for bit: the output depends on the input alone. Each
  /// channel is converted on its own (the left one equals a mono conversion of it).
  @Test func theOutputDoesNotDependOnHowTheInputIsCut() throws {
    var state: UInt64 = 7
    let noise = (0..<(48_000 * 2)).map { _ -> Float in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Float(Int32(truncatingIfNeeded: state >> 32)) / Float(Int32.max) * 0.5
    }
    let whole = try Self.convert(noise, channels: 2, from: 44_100, to: 48_000, frames: 40_000)
    let cut = try Self.convert(
      noise, channels: 2, from: 44_100, to: 48_000, period: 100, frames: 40_000,
      chunks: [1, 7, 64, 3, 100])
    #expect(whole == cut)
    let left = try Self.convert(
      stride(from: 0, to: noise.count, by: 2).map { noise[$0] }, channels: 1, from: 44_100,
      to: 48_000, frames: 40_000)
    #expect(stride(from: 0, to: whole.count, by: 2).map { whole[$0] } == left)
  }

  /// Every M input frames become exactly L output frames: after any number of input frames,
  /// the outputs they account for are ⌈frames × L / M⌉, and the output frames that read them
  /// need just that many (no frame more, none less), over an hour of 44.1 kHz.
  @Test func theDurationIsExact() throws {
    let design = try #require(RateConversion(from: 44_100, to: 48_000))
    #expect(design.up == 160 && design.down == 147)
    let converter = RateConverter(design, channels: 1, maximumInput: 1_024)
    let kernel = converter.start()
    let hour: Int64 = 44_100 * 3_600
    #expect(kernel.outputs(before: hour) == 48_000 * 3_600)
    #expect(kernel.outputs(before: 147) == 160)
    #expect(kernel.outputs(before: 148) == 162)
    #expect(kernel.outputs(before: 1) == 2)
    // The first output frame reads taps / 2 frames after its position (input frame 0).
    #expect(kernel.inputNeeded(toProduce: 1) == design.taps / 2 + 1)
    #expect(kernel.inputNeeded(toProduce: 161) == 147 + design.taps / 2 + 1)
  }

  /// What a player's clock logs on a device at another rate (``DeviceFeed/framesAhead(deviceDelay:)``)
  /// rests on this: the input frame ``RateConverter/Kernel/inputFrame(atOutput:)`` names for
  /// an output frame is where that output's sound came from. An impulse at input frame N
  /// peaks at the output frame whose input frame is N (within one), at 44.1 → 48 kHz and back,
  /// 48 → 96 and 96 → 44.1.
  @Test(arguments: [(44_100, 48_000), (48_000, 44_100), (48_000, 96_000), (96_000, 44_100)])
  func anOutputFrameSoundsTheInputFrameItNames(from: Int, to: Int) throws {
    let design = try #require(RateConversion(from: from, to: to))
    let converter = RateConverter(design, channels: 1, maximumInput: 1_024)
    var kernel = converter.start()
    let impulse = 10_007
    var input = [Float](repeating: 0, count: 1_024)
    var pushed = 0
    var output: [Float] = []
    var chunk = [Float](repeating: 0, count: 256)
    while output.count < 30_000 {
      var needed = kernel.inputNeeded(toProduce: 256)
      while needed > 0 {
        let count = min(needed, 1_024)
        for index in 0..<count { input[index] = pushed + index == impulse ? 1 : 0 }
        input.withUnsafeBufferPointer { kernel.push($0.baseAddress!, frames: count) }
        pushed += count
        needed -= count
      }
      chunk.withUnsafeMutableBufferPointer { kernel.pull(256, into: $0.baseAddress!) }
      output += chunk
    }
    let peak = try #require(output.indices.max { abs(output[$0]) < abs(output[$1]) })
    let named = kernel.inputFrame(atOutput: Int64(peak))
    #expect(abs(named - Int64(impulse)) <= 1, "peak at output \(peak) names input \(named)")
    // Once the device has played everything produced, nothing is ahead of what sounds but
    // what the converter still holds.
    #expect(kernel.inputFrame(atOutput: kernel.produced) <= Int64(pushed))
  }

  /// The filters' figures, as the README states them.
  @Test func theFiltersAreAsDocumented() throws {
    let up = try #require(RateConversion(from: 44_100, to: 48_000))
    #expect(up.passband.rounded() == 19_999 && up.stopband == 22_050 && up.attenuation == 110)
    let down = try #require(RateConversion(from: 96_000, to: 48_000))
    #expect(down.passband == 20_000 && down.stopband == 24_000 && down.up == 1 && down.down == 2)
    #expect(RateConversion(from: 48_000, to: 48_000) == nil)
    // 11,025 → 192,000 Hz needs 2,560 phases; 44,100 → 44,101 would need 44,101.
    #expect(RateConversion(from: 11_025, to: 192_000) != nil)
    #expect(RateConversion(from: 44_100, to: 44_101) == nil)
  }
}

/// The dropouts a device does not report, as the device thread finds them around its writes.
@Suite("Dropout watch")
struct DropoutWatchTests {
  /// A device of 1,024 frames of buffer, periods of 256, at 48 kHz: the limit is 1,280
  /// frames, 26.67 ms.
  static func watch() -> DropoutWatch {
    DropoutWatch(bufferFrames: 1_024, period: 256, rate: 48_000, continued: 0)
  }

  static let ms: UInt64 = 1_000_000

  /// One write of a paced device: its room before, how long it took, and the SIGCONTs
  /// counted when it ended.
  static func write(
    _ watch: inout DropoutWatch, at start: UInt64, room: Int, taking: UInt64 = 0,
    continued: Int = 0
  ) -> Int {
    watch.begin(at: start)
    let skipped = watch.skip(room: room)
    watch.end(at: start + taking, continued: continued, playing: true)
    return skipped
  }

  @Test func aPacedPlayCountsNothing() {
    var watch = Self.watch()
    var now: UInt64 = 1_000 * Self.ms
    for _ in 0..<100 {
      #expect(Self.write(&watch, at: now, room: 256, taking: 5 * Self.ms) == 0)
      now += 5 * Self.ms + 300_000
    }
    #expect(watch.paced && watch.dropouts == 0)
  }

  /// More room than the buffer: the device read past the end; the write skips to where it
  /// reads, and one dropout is counted.
  @Test func aBufferRunPastEmptyIsOne() {
    var watch = Self.watch()
    _ = Self.write(&watch, at: Self.ms, room: 256)
    #expect(Self.write(&watch, at: 10 * Self.ms, room: 1_100) == 76)
    #expect(watch.dropouts == 1)
  }

  /// Late by more than the buffer and a period between two writes: one, whatever the room
  /// says (the JACK plugin's position wraps at the buffer); late by less: none.
  @Test func aLateThreadIsOne() {
    var watch = Self.watch()
    _ = Self.write(&watch, at: Self.ms, room: 256)
    _ = Self.write(&watch, at: 26 * Self.ms, room: 512)
    #expect(watch.dropouts == 0)
    _ = Self.write(&watch, at: 330 * Self.ms, room: 300)
    #expect(watch.dropouts == 1)
  }

  /// A write that waited long because the device stalled on its own (a JACK server's own
  /// xrun) is not the player's dropout; one during which the process was stopped and
  /// continued (SIGSTOP: its JACK client stopped too) is, once, however many causes it has.
  @Test func aStoppedProcessIsOneAndAStalledServerNone() {
    var watch = Self.watch()
    _ = Self.write(&watch, at: Self.ms, room: 256)
    _ = Self.write(&watch, at: 2 * Self.ms, room: 0, taking: 300 * Self.ms)
    #expect(watch.dropouts == 0)
    _ = Self.write(&watch, at: 303 * Self.ms, room: 256, taking: 300 * Self.ms, continued: 1)
    #expect(watch.dropouts == 1)
    _ = Self.write(&watch, at: 900 * Self.ms, room: 2_000, taking: 300 * Self.ms, continued: 2)
    #expect(watch.dropouts == 2)
    _ = Self.write(&watch, at: 1_201 * Self.ms, room: 256, continued: 2)
    #expect(watch.dropouts == 2)
  }

  /// A device that never paces (ALSA's `null`: always the whole buffer free) is never judged
  /// by the clock, and a device opened again (after SIGCONT) starts afresh.
  @Test func anUnpacedDeviceAndAReopenedOne() {
    var watch = Self.watch()
    _ = Self.write(&watch, at: Self.ms, room: 1_024)
    _ = Self.write(&watch, at: 900 * Self.ms, room: 1_024, taking: 900 * Self.ms)
    #expect(!watch.paced && watch.dropouts == 0)
    var paced = Self.watch()
    _ = Self.write(&paced, at: Self.ms, room: 256)
    paced.restart(continued: 1)
    _ = Self.write(&paced, at: 5_000 * Self.ms, room: 1_024, continued: 1)
    #expect(paced.dropouts == 0)
  }
}
