import SafeFiles

/// Where a render's samples go: a libsndfile file or stream, or Tape's own WAV/AIFF stream.
protocol SampleWriter: AnyObject {
  /// Writes `frames` interleaved frames of 32-bit left-justified integers.
  func write(_ samples: UnsafePointer<Int32>, frames: Int) throws(AudioFileError)
  /// Writes `frames` interleaved float frames as they are (no normalisation, no clipping).
  func write(_ samples: UnsafePointer<Float>, frames: Int) throws(AudioFileError)
  /// Finishes the output (headers, encoder flush) and reports any failure in doing so.
  func close() throws(AudioFileError)
}

/// Writes WAV or AIFF to a stream (a pipe, a FIFO, a device), which libsndfile refuses: it
/// writes the header first and seeks back to fill in the sizes. Here the frame count is known
/// before the first sample, so the header is written once, final, and nothing seeks.
///
/// WAV: `RIFF`/`WAVE` with a `fmt ` chunk (PCM, or IEEE float with a `fact` chunk) and a `data`
/// chunk, little-endian. AIFF: `FORM`/`AIFF` with `COMM` and `SSND`, big-endian; 32-bit float
/// is AIFF-C (`AIFC`, compression `fl32`), as libsndfile writes it.
///
/// ```swift
/// let writer = try PCMStreamWriter(output: stdout, format: .wav, sampleFormat: .int16,
///                                  sampleRate: 48_000, channels: 2, frames: 96_000)
/// ```
final class PCMStreamWriter: SampleWriter {
  private let output: SafeOutput
  private let format: ExportFormat
  private let sampleFormat: SampleFormat
  private let channels: Int
  private let frames: Int64
  private var written: Int64 = 0
  private var bytes: [UInt8] = []

  init(
    output: SafeOutput, format: ExportFormat, sampleFormat: SampleFormat, sampleRate: Int,
    channels: Int, frames: Int64
  ) throws(AudioFileError) {
    precondition(format == .wav || format == .aiff, "only WAV and AIFF are written by Tape itself")
    self.output = output
    self.format = format
    self.sampleFormat = sampleFormat
    self.channels = channels
    self.frames = frames
    let header =
      format == .wav
      ? Self.wavHeader(sampleFormat, sampleRate: sampleRate, channels: channels, frames: frames)
      : Self.aiffHeader(sampleFormat, sampleRate: sampleRate, channels: channels, frames: frames)
    try send(header)
  }

  func write(_ samples: UnsafePointer<Int32>, frames: Int) throws(AudioFileError) {
    let count = frames * channels
    let bigEndian = format == .aiff
    let sample = sampleFormat
    try encode(count * sample.bytes) { out in
      switch sample {
      case .int16:
        for i in 0..<count {
          let value = UInt16(bitPattern: Int16(truncatingIfNeeded: samples[i] >> 16))
          out.storeBytes(
            of: bigEndian ? value.bigEndian : value.littleEndian, toByteOffset: i * 2,
            as: UInt16.self)
        }
      case .int24:
        for i in 0..<count {
          let value = UInt32(bitPattern: samples[i]) >> 8
          let (low, middle, high) = (
            UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value >> 16)
          )
          out.storeBytes(of: bigEndian ? high : low, toByteOffset: i * 3, as: UInt8.self)
          out.storeBytes(of: middle, toByteOffset: i * 3 + 1, as: UInt8.self)
          out.storeBytes(of: bigEndian ? low : high, toByteOffset: i * 3 + 2, as: UInt8.self)
        }
      case .float32:
        preconditionFailure("integer samples for a float output")
      }
    }
    written += Int64(frames)
  }

  func write(_ samples: UnsafePointer<Float>, frames: Int) throws(AudioFileError) {
    let count = frames * channels
    let bigEndian = format == .aiff
    try encode(count * 4) { out in
      for i in 0..<count {
        let value = samples[i].bitPattern
        out.storeBytes(
          of: bigEndian ? value.bigEndian : value.littleEndian, toByteOffset: i * 4,
          as: UInt32.self)
      }
    }
    written += Int64(frames)
  }

  /// Lets `fill` write `count` bytes into the writer's buffer (grown, never shrunk: a
  /// render's blocks reuse it), then sends them. Nothing is allocated per sample: a stream
  /// render costs what a file render does (it took five times as long when each sample was
  /// appended as an array of its bytes).
  private func encode(
    _ count: Int, _ fill: (UnsafeMutableRawPointer) -> Void
  ) throws(AudioFileError) {
    if bytes.count < count { bytes = [UInt8](repeating: 0, count: count) }
    let result = bytes.withUnsafeMutableBytes { buffer -> Result<Void, SafeFileError> in
      guard let base = buffer.baseAddress else { return .success(()) }
      fill(base)
      return Result { () throws(SafeFileError) in
        try output.write(UnsafeRawBufferPointer(start: base, count: count))
      }
    }
    do throws(SafeFileError) {
      try result.get()
    } catch {
      throw .output(error)
    }
  }

  func close() throws(AudioFileError) {
    precondition(written == frames, "a stream's header promised \(frames) frames, \(written) came")
    let dataBytes = frames * Int64(channels * sampleFormat.bytes)
    // RIFF and IFF chunks are padded to an even length.
    if dataBytes % 2 == 1 { try send([0]) }
  }

  private func send(_ bytes: [UInt8]) throws(AudioFileError) {
    do throws(SafeFileError) {
      try output.write(bytes)
    } catch {
      throw .output(error)
    }
  }

  // MARK: Headers

  static func wavHeader(
    _ sampleFormat: SampleFormat, sampleRate: Int, channels: Int, frames: Int64
  ) -> [UInt8] {
    let bytesPerSample = sampleFormat.bytes
    let dataBytes = UInt32(frames * Int64(channels * bytesPerSample))
    let isFloat = sampleFormat == .float32
    // Non-PCM formats carry cbSize in `fmt ` and a `fact` chunk with the frame count.
    let formatChunk: [UInt8] =
      littleEndian(UInt16(isFloat ? 3 : 1)) + littleEndian(UInt16(channels))
      + littleEndian(UInt32(sampleRate))
      + littleEndian(UInt32(sampleRate * channels * bytesPerSample))
      + littleEndian(UInt16(channels * bytesPerSample)) + littleEndian(UInt16(bytesPerSample * 8))
      + (isFloat ? littleEndian(UInt16(0)) : [])
    let factChunk: [UInt8] =
      isFloat ? Array("fact".utf8) + littleEndian(UInt32(4)) + littleEndian(UInt32(frames)) : []
    let pad = UInt32(dataBytes % 2)
    let riffSize = UInt32(4 + 8 + formatChunk.count + factChunk.count + 8) + dataBytes + pad
    return Array("RIFF".utf8) + littleEndian(riffSize) + Array("WAVE".utf8)
      + Array("fmt ".utf8) + littleEndian(UInt32(formatChunk.count)) + formatChunk + factChunk
      + Array("data".utf8) + littleEndian(dataBytes)
  }

  static func aiffHeader(
    _ sampleFormat: SampleFormat, sampleRate: Int, channels: Int, frames: Int64
  ) -> [UInt8] {
    let isFloat = sampleFormat == .float32
    let dataBytes = UInt32(frames * Int64(channels * sampleFormat.bytes))
    // AIFF-C's COMM adds the compression type and an (empty, padded) Pascal-string name.
    let common: [UInt8] =
      bigEndian(UInt16(channels)) + bigEndian(UInt32(frames))
      + bigEndian(UInt16(sampleFormat.bytes * 8)) + extended(Double(sampleRate))
      + (isFloat ? Array("fl32".utf8) + [0, 0] : [])
    let version: [UInt8] =
      isFloat ? Array("FVER".utf8) + bigEndian(UInt32(4)) + bigEndian(UInt32(0xA280_5140)) : []
    let soundSize = 8 + dataBytes
    let pad = UInt32(dataBytes % 2)
    let formSize = UInt32(4 + version.count + 8 + common.count + 8) + soundSize + pad
    return Array("FORM".utf8) + bigEndian(formSize) + Array((isFloat ? "AIFC" : "AIFF").utf8)
      + version + Array("COMM".utf8) + bigEndian(UInt32(common.count)) + common
      + Array("SSND".utf8) + bigEndian(soundSize) + bigEndian(UInt32(0)) + bigEndian(UInt32(0))
  }

  /// An 80-bit IEEE 754 extended-precision number, big-endian (AIFF's sample rate).
  static func extended(_ value: Double) -> [UInt8] {
    guard value > 0 else { return Array(repeating: 0, count: 10) }
    let exponent = Int(value.exponent)
    let mantissa = UInt64(value.significandBitPattern | (1 << 52)) << 11
    return bigEndian(UInt16(16_383 + exponent)) + bigEndian(mantissa)
  }

  static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    (0..<T.bitWidth / 8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
  }

  static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    littleEndian(value).reversed()
  }
}
