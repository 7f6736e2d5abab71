/// The containers `tape render` writes, through libsndfile.
public enum ExportFormat: String, Sendable, CaseIterable, CustomStringConvertible {
  case wav, flac, aiff, ogg

  /// The format a file name's extension asks for (`mix.wav`, `mix.FLAC`, `mix.aif`, `mix.oga`).
  public init?(pathExtension: String) {
    switch pathExtension.lowercased() {
    case "wav", "wave": self = .wav
    case "flac": self = .flac
    case "aiff", "aif": self = .aiff
    case "ogg", "oga": self = .ogg
    default: return nil
    }
  }

  public var description: String {
    switch self {
    case .wav: "WAV"
    case .flac: "FLAC"
    case .aiff: "AIFF"
    case .ogg: "Ogg Vorbis"
    }
  }

  /// What the format stores when `--bits` is not given: 24-bit for the PCM containers; Ogg
  /// Vorbis is lossy and encodes from float.
  public var defaultSampleFormat: SampleFormat {
    self == .ogg ? .float32 : .int24
  }

  /// The most audio data the container's 32-bit size fields can describe; nil when unlimited.
  public var maximumDataBytes: Int64? {
    switch self {
    case .wav, .aiff: Int64(UInt32.max) - 1_024
    case .flac, .ogg: nil
    }
  }

  /// The sample formats the container can hold.
  public var sampleFormats: [SampleFormat] {
    switch self {
    case .wav, .aiff: [.int16, .int24, .float32]
    case .flac: [.int16, .int24]
    case .ogg: [.float32]
    }
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
