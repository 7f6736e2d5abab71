import Foundation
import Mixing
import Timeline

/// A written file measured as a listener gets it: decoded, then metered.
///
/// Why: a lossy encoder changes the level. LAME at 128 kbit/s takes about 0.45 LU off a mix's
/// integrated loudness and its band limit and quantisation move the true peak by tenths of a
/// dB either way, so the numbers of the mix that went into an MP3 or Opus encoder are not those
/// of the file that comes out. A target (`--loudness`, `--true-peak`) is a promise about the
/// file: it is checked on what the file decodes to.
///
/// The file is decoded by libsndfile (mpg123 for MP3, libopus for Opus, at the file's own rate)
/// and measured as a render measures its mix: ``/Mixing/LoudnessMeter`` (BS.1770-4 gating) and
/// the 4× `TruePeakMeter`, never less than the sample peak.
///
/// ```swift
/// let delivered = try DeliveredAudio(measuring: "episode.mp3")
/// delivered.loudness          // −16.02 LUFS
/// delivered.truePeakDecibels  // −1.13 dBTP
/// ```
public struct DeliveredAudio: Sendable, Equatable {
  /// Integrated loudness in LUFS (`-infinity` for silence).
  public var loudness: Double
  /// The largest absolute decoded sample (1.0 = 0 dBFS).
  public var peak: Double
  /// The 4× oversampled true peak (1.0 = 0 dBTP), never less than ``peak``.
  public var truePeak: Double
  /// The decoded frames and their rate (the file's: Opus decodes at 48 kHz).
  public var frames: Int64
  public var sampleRate: Int

  public var truePeakDecibels: Double { 20 * log10(truePeak) }
  public var peakDecibels: Double { 20 * log10(peak) }

  public init(loudness: Double, peak: Double, truePeak: Double, frames: Int64, sampleRate: Int) {
    self.loudness = loudness
    self.peak = peak
    self.truePeak = truePeak
    self.frames = frames
    self.sampleRate = sampleRate
  }

  /// Decodes the file at `path` whole and measures it.
  public init(measuring path: String) throws(AudioFileError) {
    let reader = try SndfileReader(path: RawPath(path))
    let channels = reader.channels
    let blockFrames = 16_384
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * channels)
    defer { buffer.deallocate() }
    var meter = LoudnessMeter(sampleRate: reader.sampleRate, channels: channels)
    var meters: [TruePeakMeter] = []
    for _ in 0..<channels {
      meters.append(try TruePeakMeter(sampleRate: reader.sampleRate, channels: 1))
    }
    var peak: Float = 0
    var frames: Int64 = 0
    while case let count = reader.readFloats(into: buffer, frames: blockFrames), count > 0 {
      meter.process(buffer, frames: count)
      for (channel, truePeak) in meters.enumerated() {
        try truePeak.process(buffer, frames: count, channel: channel, of: channels)
      }
      peak = max(peak, Peak.of(buffer, count: count * channels))
      frames += Int64(count)
    }
    for truePeak in meters { try truePeak.finish() }
    self.init(
      loudness: meter.integratedLoudness, peak: Double(peak),
      truePeak: Double(max(peak, meters.map(\.peak).max() ?? 0)), frames: frames,
      sampleRate: reader.sampleRate)
  }
}

/// A loudness target for a delivered file, met by measuring what an encoder made and adjusting.
///
/// Why: the gain a mix needs is known exactly from the mix
/// (``OfflineRenderer/measure(_:audio:range:gain:preroll:tail:progress:isCancelled:)``), but a
/// lossy encoder moves the loudness by a fraction of a LU that depends on the programme and the
/// rate. As ffmpeg's two-pass `loudnorm`, one measure-and-adjust pass closes it: encode at the
/// mix's gain, decode and measure, correct the gain by what is still off, encode again. The
/// encoder is close to linear in the gain, so the second file lands within a few hundredths of
/// a LU; ``passes`` bounds the tries when it does not.
///
/// The rule: the file delivered is one of the files measured (an encode at the same gain is the
/// same bytes), so what the summary says of it is what was measured, never a prediction.
///
/// ```swift
/// let target = LoudnessTarget(loudness: -16, ceiling: -1)
/// let found = try target.search(from: mixGain) { gain in
///   try DeliveredAudio(measuring: encodeTrial(at: gain))
/// }
/// found.meetsTarget  // within 0.1 LU, and under the ceiling
/// ```
public struct LoudnessTarget: Sendable, Equatable {
  /// The integrated loudness to reach, in LUFS; nil to check the ceiling only.
  public var loudness: Double?
  /// The most the delivered true peak may reach, in dBTP.
  public var ceiling: Double
  /// How far from ``loudness`` a delivered file may be, in LU.
  public var tolerance: Double
  /// The most files encoded to find the gain (the first at the mix's gain).
  public var passes: Int

  /// How far under the ceiling a delivered true peak must stay, in dB: the most the 4× meter
  /// reads under ffmpeg's `ebur128=peak=true` (192 kHz) on full-band noise, 0.017 dB (see
  /// `TruePeakMeterTests`), so that a file Tape passes passes ffmpeg's check too.
  public static let truePeakMargin = 0.02

  public init(loudness: Double?, ceiling: Double, tolerance: Double = 0.1, passes: Int = 3) {
    self.loudness = loudness
    self.ceiling = ceiling
    self.tolerance = tolerance
    self.passes = passes
  }

  /// What a search found: the last gain tried and its file's measurements.
  public struct Found: Sendable, Equatable {
    /// The gain in dB the delivered file is encoded with.
    public var gain: Double
    public var delivered: DeliveredAudio
    /// Files encoded to find it.
    public var passes: Int
    /// Whether the file is within the tolerance of the loudness (or there is none).
    public var meetsLoudness: Bool
    /// Whether its true peak is under the ceiling by ``LoudnessTarget/truePeakMargin`` at least.
    public var meetsCeiling: Bool
    public var meetsTarget: Bool { meetsLoudness && meetsCeiling }
  }

  /// Encodes at `gain` (dB), measures the file (`trial`), and moves the gain by what the
  /// loudness is still off, until within the tolerance or ``passes`` files were made. A
  /// ceiling-only target makes one file.
  public func search<Failure: Error>(
    from gain: Double, trial: (Double) throws(Failure) -> DeliveredAudio
  ) throws(Failure) -> Found {
    var gain = gain
    var passes = 0
    while true {
      let delivered = try trial(gain)
      passes += 1
      let off = loudness.map { $0 - delivered.loudness } ?? 0
      let meets = !off.isFinite || abs(off) <= tolerance
      if meets || passes >= max(1, self.passes) {
        return Found(
          gain: gain, delivered: delivered, passes: passes, meetsLoudness: meets,
          meetsCeiling: delivered.truePeakDecibels <= ceiling - Self.truePeakMargin)
      }
      gain += off
    }
  }
}
