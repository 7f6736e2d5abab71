/// A video frame rate that timecode counts in: 24, 25 or 30 frames a second, or NTSC's 29.97
/// (30,000 frames in 1,001 seconds) counted drop-frame, as broadcast EDLs use it.
///
/// Drop-frame timecode keeps step with the clock by skipping the labels `:00` and `:01` at the
/// start of every minute but every tenth (no frame is dropped, only labels), and separates the
/// frames with `;`: `00:01:00;02` follows `00:00:59;29`.
///
/// ```swift
/// let rate = try TimecodeRate(parsing: "29.97")
/// rate.timecode(17_982)             // "00:10:00;00"
/// try rate.frames(parsing: "01:00:00;00")   // 107_892
/// ```
public struct TimecodeRate: Sendable, Hashable, CustomStringConvertible {
  /// Frames a second, rounded: 24, 25 or 30 (also for 29.97).
  public let nominal: Int
  /// Whether this is 29.97 drop-frame.
  public let dropFrame: Bool

  public static let fps24 = TimecodeRate(nominal: 24, dropFrame: false)
  public static let fps25 = TimecodeRate(nominal: 25, dropFrame: false)
  public static let fps30 = TimecodeRate(nominal: 30, dropFrame: false)
  public static let fps2997 = TimecodeRate(nominal: 30, dropFrame: true)

  /// The rates a command takes, as typed.
  public static let accepted = "24, 25, 30 or 29.97 (drop-frame)"

  init(nominal: Int, dropFrame: Bool) {
    self.nominal = nominal
    self.dropFrame = dropFrame
  }

  /// `24`, `25`, `30`, or `29.97` (also `29.97df`); nil for another rate.
  public init?(parsing text: String) {
    switch text.lowercased() {
    case "24": self = .fps24
    case "25": self = .fps25
    case "30": self = .fps30
    case "29.97", "29.97df", "2997": self = .fps2997
    default: return nil
    }
  }

  public var description: String { dropFrame ? "29.97" : String(nominal) }

  /// Frames a second as a fraction: 30000/1001 for 29.97.
  public var framesPerSecond: (numerator: Int64, denominator: Int64) {
    dropFrame ? (30_000, 1_001) : (Int64(nominal), 1)
  }

  /// `frames` samples at `sampleRate` as frames of this rate, rounded to the nearest (halves
  /// up).
  public func frame(ofSample frames: Int64, sampleRate: Int) -> Int64 {
    let (numerator, denominator) = framesPerSecond
    let scale = Int64(sampleRate) * denominator
    return (frames * numerator * 2 + scale) / (scale * 2)
  }

  /// The first sample of video frame `frame` at `sampleRate`, rounded to the nearest.
  public func sample(ofFrame frame: Int64, sampleRate: Int) -> Int64 {
    let (numerator, denominator) = framesPerSecond
    return (frame * Int64(sampleRate) * denominator * 2 + numerator) / (numerator * 2)
  }

  /// `HH:MM:SS:FF` (`HH:MM:SS;FF` drop-frame) for a count of frames from 00:00:00:00.
  public func timecode(_ frames: Int64) -> String {
    let rate = Int64(nominal)
    var label = frames
    if dropFrame {
      // 17,982 frames in ten minutes: 2 labels skipped in each of nine minutes.
      let tens = frames / 17_982
      let rest = frames % 17_982
      label += 18 * tens + (rest < 2 ? 0 : 2 * ((rest - 2) / 1_798))
    }
    let parts = [
      label / (rate * 3600), label / (rate * 60) % 60, label / rate % 60, label % rate,
    ].map { $0 < 10 ? "0\($0)" : "\($0)" }
    return parts[0..<3].joined(separator: ":") + (dropFrame ? ";" : ":") + parts[3]
  }

  /// The frames from 00:00:00:00 to `text` (`HH:MM:SS:FF`; `;` or `.` before the frames too);
  /// nil when it is not a timecode of this rate (frames past the rate, a label drop-frame
  /// skips, minutes or seconds past 59).
  public func frames(parsing text: String) -> Int64? {
    let fields = text.split(
      omittingEmptySubsequences: false, whereSeparator: { ":;.".contains($0) })
    guard fields.count == 4,
      fields.allSatisfy({
        !$0.isEmpty && $0.count <= 3 && $0.allSatisfy { $0.isASCII && $0.isNumber }
      })
    else { return nil }
    let numbers = fields.compactMap { Int64($0) }
    let (hours, minutes, seconds, frame) = (numbers[0], numbers[1], numbers[2], numbers[3])
    guard minutes < 60, seconds < 60, frame < Int64(nominal) else { return nil }
    let rate = Int64(nominal)
    var count = ((hours * 60 + minutes) * 60 + seconds) * rate + frame
    if dropFrame {
      let totalMinutes = hours * 60 + minutes
      if seconds == 0 && frame < 2 && minutes % 10 != 0 { return nil }
      count -= 2 * (totalMinutes - totalMinutes / 10)
    }
    return count
  }
}
