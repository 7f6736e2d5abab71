/// The containers `tape render` writes, through libsndfile (which links LAME for MP3 and
/// libopus for Opus).
public enum ExportFormat: String, Sendable, CaseIterable, CustomStringConvertible {
  case wav, flac, aiff, ogg, mp3, opus

  /// The format a file name's extension asks for (`mix.wav`, `mix.FLAC`, `mix.aif`, `mix.oga`).
  public init?(pathExtension: String) {
    switch pathExtension.lowercased() {
    case "wav", "wave": self = .wav
    case "flac": self = .flac
    case "aiff", "aif": self = .aiff
    case "ogg", "oga": self = .ogg
    case "mp3": self = .mp3
    case "opus": self = .opus
    default: return nil
    }
  }

  public var description: String {
    switch self {
    case .wav: "WAV"
    case .flac: "FLAC"
    case .aiff: "AIFF"
    case .ogg: "Ogg Vorbis"
    case .mp3: "MP3"
    case .opus: "Opus"
    }
  }

  /// Whether the format is a lossy codec encoded from float (Vorbis, MP3, Opus).
  public var isLossy: Bool {
    switch self {
    case .wav, .flac, .aiff: false
    case .ogg, .mp3, .opus: true
    }
  }

  /// Whether the format takes a bit rate (`--bitrate`): MP3 and Opus. Vorbis is encoded at a
  /// quality instead, the PCM formats have none.
  public var takesBitrate: Bool { self == .mp3 || self == .opus }

  /// The bit rate in kbit/s written at `sampleRate` when none is asked for: 128 for MP3
  /// (constant, LAME's own default and the usual podcast rate; 64 and 32 at the lower MPEG-2
  /// and 2.5 rates, their ceilings being 160 and 64), 96 for Opus (its recommended rate for
  /// stereo music); nil for formats without a bit rate.
  public func defaultBitrate(sampleRate: Int) -> Int? {
    switch self {
    case .mp3: sampleRate >= 32_000 ? 128 : sampleRate >= 16_000 ? 64 : 32
    case .opus: 96
    default: nil
    }
  }

  /// The bit rates (kbit/s, for the whole stream) the encoder can be asked for: MP3's standard
  /// constant rates for the MPEG version the sample rate implies; for Opus, 6 to 256 kbit/s per
  /// channel (what libsndfile passes on to libopus). Empty for formats without a bit rate.
  public func bitrates(sampleRate: Int, channels: Int) -> ClosedRange<Int>? {
    switch self {
    case .mp3:
      if sampleRate >= 32_000 { return 32...320 }
      return sampleRate >= 16_000 ? 8...160 : 8...64
    case .opus: return (6 * channels)...(256 * channels)
    default: return nil
    }
  }

  /// The MP3 bit rates LAME writes at constant rate for `sampleRate` (MPEG-1 from 32 kHz,
  /// MPEG-2 from 16 kHz, MPEG-2.5 below).
  public static func mp3Bitrates(sampleRate: Int) -> [Int] {
    if sampleRate >= 32_000 {
      return [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    }
    let mpeg2 = [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
    return sampleRate >= 16_000 ? mpeg2 : mpeg2.filter { $0 <= 64 }
  }

  /// The rates Opus encodes at; another project rate is resampled to 48 kHz on the way out.
  public static let opusSampleRates: Set<Int> = [8_000, 12_000, 16_000, 24_000, 48_000]
  /// The rates MP3 (MPEG-1, 2 and 2.5 layer III) holds; another is resampled to 48 kHz.
  public static let mp3SampleRates: Set<Int> = [
    8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000,
  ]

  /// The rate a project at `sampleRate` is written at: its own, except for a rate Opus or MP3
  /// cannot encode, which is resampled (libsoxr) to 48 kHz.
  public func fileSampleRate(for sampleRate: Int) -> Int {
    switch self {
    case .opus where !Self.opusSampleRates.contains(sampleRate): 48_000
    case .mp3 where !Self.mp3SampleRates.contains(sampleRate): 48_000
    default: sampleRate
    }
  }

  /// What the format stores when `--bits` is not given: 24-bit for the PCM containers; Ogg
  /// Vorbis is lossy and encodes from float.
  public var defaultSampleFormat: SampleFormat {
    isLossy ? .float32 : .int24
  }

  /// The most audio data the container's 32-bit size fields can describe; nil when unlimited.
  public var maximumDataBytes: Int64? {
    switch self {
    case .wav, .aiff: Int64(UInt32.max) - 1_024
    case .flac, .ogg, .mp3, .opus: nil
    }
  }

  /// The sample formats the container can hold.
  public var sampleFormats: [SampleFormat] {
    switch self {
    case .wav, .aiff: [.int16, .int24, .float32]
    case .flac: [.int16, .int24]
    case .ogg, .mp3, .opus: [.float32]
    }
  }
}

/// What a render asks of the encoder beyond the samples: a bit rate for MP3 and Opus, and tags.
///
/// Tags go where the format has them: WAV (LIST INFO), AIFF (NAME, AUTH), FLAC, Ogg Vorbis and
/// Opus (Vorbis comments) and MP3 (ID3v2). A WAV or AIFF written to a stream has no tags (its
/// header is Tape's own, see `PCMStreamWriter`); `tape render` refuses tags there.
public struct EncoderSettings: Sendable, Equatable {
  /// kbit/s for the whole stream (MP3: constant bit rate; Opus: its variable-rate target); nil
  /// for the format's default.
  public var bitrate: Int?
  public var title: String?
  public var artist: String?

  public init(bitrate: Int? = nil, title: String? = nil, artist: String? = nil) {
    self.bitrate = bitrate
    self.title = title
    self.artist = artist
  }
}

/// The sample format written: 16- or 24-bit integers, or 32-bit float.
public enum SampleFormat: String, Sendable, CaseIterable, CustomStringConvertible {
  case int16 = "16"
  case int24 = "24"
  case float32 = "32f"

  /// Bytes per sample as stored.
  public var bytes: Int {
    switch self {
    case .int16: 2
    case .int24: 3
    case .float32: 4
    }
  }

  /// Bits per sample for integer formats; nil for float.
  public var integerBits: Int? {
    switch self {
    case .int16: 16
    case .int24: 24
    case .float32: nil
    }
  }

  public var description: String {
    switch self {
    case .int16: "16-bit"
    case .int24: "24-bit"
    case .float32: "32-bit float"
    }
  }
}
