import Testing
import Timeline

@Suite("Time parsing and formatting")
struct TimeValueTests {
  @Test(arguments: [
    ("1.5", 48_000, 72_000, TimeStyle.seconds(decimals: 1)),
    ("1.5s", 48_000, 72_000, .seconds(decimals: 1)),
    ("2s", 48_000, 96_000, .seconds(decimals: 0)),
    ("0", 48_000, 0, .seconds(decimals: 0)),
    (".5", 44_100, 22_050, .seconds(decimals: 1)),
    ("250ms", 48_000, 12_000, .milliseconds),
    ("250ms", 44_100, 11_025, .milliseconds),
    ("12.5ms", 48_000, 600, .milliseconds),
    ("1:02.5", 48_000, 3_000_000, .clock(hours: false, decimals: 1)),
    ("0:00.001", 48_000, 48, .clock(hours: false, decimals: 3)),
    ("01:02:03.250", 48_000, 178_716_000, .clock(hours: true, decimals: 3)),
    ("10:00", 48_000, 28_800_000, .clock(hours: false, decimals: 0)),
    ("96000f", 48_000, 96_000, .frames),
    ("  3s ", 48_000, 144_000, .seconds(decimals: 0)),
  ])
  func parses(text: String, rate: Int, frames: Int64, style: TimeStyle) throws {
    #expect(
      try TimeValue(parsing: text, sampleRate: rate)
        == TimeValue(frames: FrameCount(frames), style: style))
  }

  /// Fractions convert exactly and round to the nearest frame: 1 ms at 44.1 kHz is 44.1 frames.
  @Test(
    arguments: [
      ("0.001", 44_100, 44), ("0.00102", 44_100, 45), ("1ms", 44_100, 44), ("0.5ms", 48_000, 24),
      ("0.00001", 48_000, 0), ("0.0000105", 48_000, 1), ("0.333333333", 48_000, 16_000),
    ] as [(String, Int, Int64)])
  func roundsToTheNearestFrame(text: String, rate: Int, frames: Int64) throws {
    #expect(try TimeValue(parsing: text, sampleRate: rate).frames == FrameCount(frames))
  }

  @Test(arguments: [
    "", "s", "ms", "-1", "-1s", "1.2.3", "1,5", "abc", "1:60", "1:5:00", "1:2.5", "1:002",
    "1:02:60", "1:2:3:4",
    "1.5f", "f", "1:", ":30", "1h", "1e3", "+1", "1 s", "0x10", "١٢", "1:00:00:00",
    "1.0000000001",
  ])
  func rejects(text: String) {
    #expect(throws: TimelineError.invalidTime(text)) {
      try TimeValue(parsing: text, sampleRate: 48_000)
    }
  }

  /// Times that would overflow positions are refused, not trapped on.
  /// Well-formed but too large, however many digits: "too large", never "not a time" (13
  /// digits, a million minutes, 99999 hours and 20-digit frames were "not a time").
  @Test(arguments: [
    "9223372036854775807f", "1099511627777f", "999999999999", "999999:00", "9999999999999",
    "1000000:00", "99999:00:00", "99999999999999999999f", "999999999999999999.999999999s",
    "999999999999999999ms",
  ])
  func refusesTimesBeyondTheMaximum(text: String) {
    #expect(throws: TimelineError.timeTooLarge(text, sampleRate: 48_000)) {
      try TimeValue(parsing: text, sampleRate: 48_000)
    }
  }

  @Test func acceptsTheMaximum() throws {
    #expect(
      try TimeValue(parsing: "1099511627776f", sampleRate: 48_000).frames == TimeValue.maximumFrames
    )
  }

  @Test func theErrorNamesEveryAcceptedForm() {
    let message = TimelineError.invalidTime("soon").description
    #expect(
      message
        == "'soon' is not a time; write seconds (1.5 or 1.5s), milliseconds (250ms), a clock (1:02.5 or 01:02:03.250) or frames (96000f)"
    )
  }

  @Test(arguments: [
    ("1.5", 48_000), ("1.5s", 44_100), ("250ms", 48_000), ("1:02.5", 48_000),
    ("01:02:03.250", 48_000), ("96000f", 48_000), ("0:00.001", 48_000), ("12.5ms", 48_000),
  ])
  func printsBackInTheStyleItWasTyped(text: String, rate: Int) throws {
    let value = try TimeValue(parsing: text, sampleRate: rate)
    let printed = TimeValue.format(value.frames, sampleRate: rate, style: value.style)
    #expect(try TimeValue(parsing: printed, sampleRate: rate).frames == value.frames)
  }

  @Test(
    arguments: [
      (0, "0:00.000"), (48, "0:00.001"), (72_000, "0:01.500"), (3_000_000, "1:02.500"),
      (172_800_000, "1:00:00.000"), (47, "0:00.001"), (23, "0:00.000"),
      (216_153_600, "1:15:03.200"), (172_799_952, "59:59.999"),
    ] as [(Int64, String)])
  func clockFormat(frames: Int64, expected: String) throws {
    #expect(TimeValue.clock(FrameCount(frames), sampleRate: 48_000) == expected)
    // What is printed is accepted back, to the frame, when it is a whole millisecond.
    if frames % 48 == 0 {
      #expect(try TimeValue(parsing: expected, sampleRate: 48_000).frames.frames == frames)
    }
  }

  @Test(
    arguments: [
      (48_000, TimeStyle.seconds(decimals: 0), "1s"), (72_000, .seconds(decimals: 1), "1.5s"),
      (480, .seconds(decimals: 0), "0.01s"), (12_000, .milliseconds, "250ms"),
      (600, .milliseconds, "12.5ms"), (96_000, .frames, "96000f"),
      (178_716_000, .clock(hours: true, decimals: 3), "01:02:03.250"),
      (3_000_000, .clock(hours: false, decimals: 1), "1:02.500"),
    ] as [(Int64, TimeStyle, String)])
  func formats(frames: Int64, style: TimeStyle, expected: String) {
    #expect(TimeValue.format(FrameCount(frames), sampleRate: 48_000, style: style) == expected)
  }
}
