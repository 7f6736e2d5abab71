internal import CSndfile
import Foundation
import SafeFiles
import Timeline

// Every call into libsndfile goes through this file, which turns its results into
// `AudioFileError`s.

/// An open libsndfile handle for reading; closed on deinit.
final class SndfileReader {
  let handle: OpaquePointer
  let info: SF_INFO
  /// The path as people read it, for messages.
  let path: String

  init(path file: RawPath) throws(AudioFileError) {
    let path = file.description
    self.path = path
    guard let identity = file.withCString({ FileIdentity(cPath: $0) }) else {
      if errno == EACCES { throw .unreadable(path: path) }
      throw .missing(path: path)
    }
    // Opening a FIFO or a terminal for reading would wait for a writer forever.
    guard identity.isRegularFile else {
      let kind =
        identity.isDirectory
        ? "a folder"
        : identity.isFIFO
          ? "a FIFO" : identity.isCharacterDevice ? "a device" : "not a regular file"
      throw .notAFile(path: path, kind: kind)
    }
    guard file.withCString({ access($0, R_OK) }) == 0 else { throw .unreadable(path: path) }
    var info = SF_INFO()
    guard let handle = file.withCString({ sf_open($0, Int32(SFM_READ), &info) }) else {
      let reason = String(cString: sf_strerror(nil))
      throw .notAudio(path: path, reason: reason)
    }
    self.handle = handle
    self.info = info
  }

  deinit {
    sf_close(handle)
  }

  var frames: Int64 { Int64(info.frames) }
  var sampleRate: Int { Int(info.samplerate) }
  var channels: Int { Int(info.channels) }
  /// Whether the file is an MPEG audio stream (MP3), whose frame count libsndfile estimates
  /// unless the file has a LAME/Xing header.
  var isMPEG: Bool { info.format & Int32(SF_FORMAT_TYPEMASK) == Int32(SF_FORMAT_MPEG) }

  /// The container's name as libsndfile knows it ("WAV (Microsoft)", "FLAC (Free Lossless…)").
  var formatName: String {
    var format = SF_FORMAT_INFO()
    format.format = info.format & Int32(SF_FORMAT_TYPEMASK)
    let result = sf_command(
      handle, Int32(SFC_GET_FORMAT_INFO), &format, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
    guard result == 0, let name = format.name else { return "unknown" }
    return String(cString: name)
  }

  /// libsndfile's parse log for this file: it notes headers that promise more data than exists.
  var log: String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = sf_command(handle, Int32(SFC_GET_LOG_INFO), &buffer, Int32(buffer.count))
    guard count > 0 else { return "" }
    return String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Reads up to `frames` interleaved float frames into `buffer`; returns the frames read.
  func readFloats(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
    Int(sf_readf_float(handle, buffer, sf_count_t(frames)))
  }

  /// Whether a read after ``seek(to:)`` gives exactly the frames a read from the start gives
  /// there: PCM containers and FLAC (lossy streams, Ogg and MPEG, start decoding at a packet
  /// and may not).
  var seeksExactly: Bool {
    let major = info.format & Int32(SF_FORMAT_TYPEMASK)
    return [
      SF_FORMAT_WAV, SF_FORMAT_AIFF, SF_FORMAT_AU, SF_FORMAT_W64, SF_FORMAT_CAF, SF_FORMAT_RF64,
      SF_FORMAT_WAVEX, SF_FORMAT_FLAC,
    ].map { Int32($0) }.contains(major)
      && info.format & Int32(SF_FORMAT_SUBMASK) != Int32(SF_FORMAT_VORBIS)
  }

  /// Moves to frame `frame`; false when the file cannot.
  func seek(to frame: Int64) -> Bool {
    sf_seek(handle, sf_count_t(frame), SEEK_SET) == sf_count_t(frame)
  }
}

/// An open libsndfile handle writing to a ``SafeFiles/SafeOutput``: straight to its file, or
/// through virtual I/O for a stream (FLAC and Ogg; libsndfile cannot write WAV or AIFF to a
/// stream, see ``PCMStreamWriter``). Closed by ``close()`` (or on deinit, after a failure).
final class SndfileWriter: SampleWriter {
  private var handle: OpaquePointer?
  private let output: SafeOutput
  /// The virtual I/O state of a stream, kept alive as long as the handle.
  private let stream: StreamState?
  /// Whether the closed file's Ogg serials are to be made reproducible.
  private let isOggFile: Bool
  /// For Opus at a rate it cannot encode: the resampler to 48 kHz and its output buffer.
  private let resampler: SoxrResampler?
  private let resampled: UnsafeMutableBufferPointer<Float>
  /// The rate written when it is not the project's (Opus resampled to 48 kHz), else nil.
  let resampledRate: Int?

  init(
    output: SafeOutput, format: ExportFormat, sampleFormat: SampleFormat, sampleRate: Int,
    channels: Int, encoding: EncoderSettings = EncoderSettings()
  )
    throws(AudioFileError)
  {
    self.output = output
    isOggFile = (format == .ogg || format == .opus) && !output.destination.isStream
    if format == .mp3 && output.destination.isStream {
      // LAME's gapless header (encoder delay and padding) is written last, at the start of
      // the file: without it a decoder plays extra silence at both ends.
      throw .unsupportedOutput(
        format: format.description,
        detail: "to a stream (its length header is written last); write to a file")
    }
    // Opus encodes at 48, 24, 16, 12 or 8 kHz only (libopus itself works at 48 kHz), MP3 at
    // 8 to 48 kHz: another rate is resampled to 48 kHz.
    let fileRate = format.fileSampleRate(for: sampleRate)
    if fileRate != sampleRate {
      resampler = try SoxrResampler(from: sampleRate, to: fileRate, channels: channels)
      resampledRate = fileRate
      resampled = .allocate(capacity: 8_192 * channels)
    } else {
      resampler = nil
      resampledRate = nil
      resampled = .allocate(capacity: 0)
    }
    var info = SF_INFO()
    info.samplerate = Int32(fileRate)
    info.channels = Int32(channels)
    info.format = format.sndfileFormat(sampleFormat)
    guard sf_format_check(&info) != 0 else {
      throw .unsupportedOutput(
        format: format.rawValue, detail: "\(sampleFormat) at \(sampleRate) Hz")
    }
    let handle: OpaquePointer?
    if output.destination.isStream {
      let state = StreamState(output: output)
      stream = state
      var callbacks = SF_VIRTUAL_IO(
        get_filelen: { _ in -1 },
        seek: { offset, whence, context in
          // Only "where am I" and "go where I am" can be honoured on a stream.
          guard let context else { return -1 }
          let state = Unmanaged<StreamState>.fromOpaque(context).takeUnretainedValue()
          let target = whence == SEEK_CUR ? state.position + offset : offset
          return whence != SEEK_END && target == state.position ? state.position : -1
        },
        read: { _, _, _ in 0 },
        write: { bytes, count, context in
          guard let context else { return 0 }
          return Unmanaged<StreamState>.fromOpaque(context).takeUnretainedValue()
            .write(bytes, count: count)
        },
        tell: { context in
          guard let context else { return -1 }
          return Unmanaged<StreamState>.fromOpaque(context).takeUnretainedValue().position
        })
      handle = sf_open_virtual(
        &callbacks, Int32(SFM_WRITE), &info, Unmanaged.passUnretained(state).toOpaque())
    } else {
      stream = nil
      handle = sf_open_fd(output.descriptor, Int32(SFM_WRITE), &info, 0)
    }
    guard let handle else {
      throw .cannotCreate(
        path: output.destination.path, detail: String(cString: sf_strerror(nil)))
    }
    self.handle = handle
    // No PEAK chunk: it carries the time of writing, so the same project would never render
    // to the same bytes (and the summary reports the peak anyway).
    sf_command(handle, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
    if format == .ogg {
      // Vorbis quality 0…1; 0.6 is about 190 kbit/s for stereo at 48 kHz.
      var quality = 0.6
      sf_command(
        handle, Int32(SFC_SET_VBR_ENCODING_QUALITY), &quality, Int32(MemoryLayout<Double>.size))
    }
    if let kbps = encoding.bitrate ?? format.defaultBitrate(sampleRate: fileRate),
      let level = Self.compressionLevel(
        kbps: kbps, format: format, rate: fileRate, channels: channels)
    {
      if format == .mp3 {
        var mode = Int32(SF_BITRATE_MODE_CONSTANT)
        sf_command(handle, Int32(SFC_SET_BITRATE_MODE), &mode, Int32(MemoryLayout<Int32>.size))
      }
      var level = level
      let accepted = sf_command(
        handle, Int32(SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size))
      guard accepted == SF_TRUE else {
        throw .unsupportedOutput(format: format.description, detail: "\(kbps) kbit/s")
      }
    }
    for (kind, text) in [(SF_STR_TITLE, encoding.title), (SF_STR_ARTIST, encoding.artist)] {
      guard let text else { continue }
      guard sf_set_string(handle, Int32(kind), text) == 0 else {
        throw .cannotCreate(
          path: output.destination.path,
          detail:
            "the \(format) file cannot hold the tag '\(text)': \(String(cString: sf_strerror(handle)))"
        )
      }
    }
  }

  /// libsndfile's compression level (0 best … 1 smallest) that asks its encoder for `kbps`.
  ///
  /// libsndfile maps the level linearly onto a bit rate and truncates: LAME at constant rate
  /// gets `320 − level × 288` kbit/s from 32 kHz (MPEG-1; 160 − level × 152 from 16 kHz,
  /// 64 − level × 56 below), and libopus `((1 − level) × 250 000 + 6 000) × channels` bit/s.
  /// Half a unit more than asked is inverted, so the truncation lands on the value itself.
  static func compressionLevel(kbps: Int, format: ExportFormat, rate: Int, channels: Int) -> Double?
  {
    let level: Double
    switch format {
    case .mp3:
      let (top, bottom) =
        rate >= 32_000 ? (320.0, 32.0) : rate >= 16_000 ? (160.0, 8.0) : (64.0, 8.0)
      level = (top - (Double(kbps) + 0.5)) / (top - bottom)
    case .opus:
      let perChannel = Double(kbps) * 1_000 / Double(channels)
      level = 1 - (perChannel + 0.5 - 6_000) / 250_000
    default: return nil
    }
    return min(1, max(0, level))
  }

  deinit {
    if let handle { sf_close(handle) }
    resampled.deallocate()
  }

  func write(_ samples: UnsafePointer<Int32>, frames: Int) throws(AudioFileError) {
    guard let handle else { return }
    let written = sf_writef_int(handle, samples, sf_count_t(frames))
    guard written == frames else { throw writeError(handle) }
    startWriteback()
  }

  func write(_ samples: UnsafePointer<Float>, frames: Int) throws(AudioFileError) {
    guard let handle else { return }
    if let resampler {
      try resample(resampler, samples, frames: frames, handle: handle)
      return
    }
    let written = sf_writef_float(handle, samples, sf_count_t(frames))
    guard written == frames else { throw writeError(handle) }
    startWriteback()
  }

  /// Starts writing what is in the page cache to disk, without waiting (a file only): the
  /// commit's `fsync` then finds most of the file written back already, instead of all of it
  /// waiting while nothing else is left to do. Nothing is promised by this call (the `fsync`
  /// still is what makes the file durable), so its result is ignored.
  private func startWriteback() {
    guard stream == nil else { return }
    _ = Writeback.start?(output.descriptor, 0, 0, Writeback.write)
  }

  /// Passes `frames` frames (nil: the resampler's tail) through the resampler to the file.
  private func resample(
    _ resampler: SoxrResampler, _ samples: UnsafePointer<Float>?, frames: Int,
    handle: OpaquePointer
  ) throws(AudioFileError) {
    guard let buffer = resampled.baseAddress else { return }
    let capacity = resampled.count / resampler.channels
    var done = 0
    while true {
      let input = samples.map { $0 + done * resampler.channels }
      let (consumed, produced) = try resampler.process(
        input, frames: frames - done, into: buffer, capacity: capacity)
      done += consumed
      if produced > 0 {
        let written = sf_writef_float(handle, buffer, sf_count_t(produced))
        guard written == produced else { throw writeError(handle) }
      }
      if samples == nil ? produced == 0 : done >= frames && produced < capacity { return }
    }
  }

  func close() throws(AudioFileError) {
    guard let handle else { return }
    if let resampler {
      try resample(resampler, nil, frames: 0, handle: handle)
    }
    self.handle = nil
    let result = sf_close(handle)
    if let failure = stream?.failure { throw .output(failure) }
    guard result == 0 else {
      throw .write(path: output.destination.path, detail: String(cString: sf_error_number(result)))
    }
    if isOggFile { try OggSerials.makeReproducible(output.descriptor) }
  }

  private func writeError(_ handle: OpaquePointer) -> AudioFileError {
    if let failure = stream?.failure { return .output(failure) }
    let reason = String(cString: sf_strerror(handle))
    return .write(
      path: output.destination.path, detail: errno == ENOSPC ? "no space left on device" : reason)
  }

  /// What the virtual I/O callbacks of a stream share: the output, the bytes written so far,
  /// and the first failure (libsndfile reports only "fewer bytes written").
  private final class StreamState {
    let output: SafeOutput
    var position: sf_count_t = 0
    var failure: SafeFileError?

    init(output: SafeOutput) {
      self.output = output
    }

    func write(_ bytes: UnsafeRawPointer?, count: sf_count_t) -> sf_count_t {
      guard failure == nil, let bytes else { return 0 }
      do {
        try output.write(UnsafeRawBufferPointer(start: bytes, count: Int(count)))
      } catch {
        failure = error
        return 0
      }
      position += count
      return count
    }
  }
}

/// Linux's `sync_file_range`, which Swift's Glibc module does not declare (it is a GNU
/// extension): looked up once in the C library; nil where there is none.
enum Writeback {
  typealias Function = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32
  /// `SYNC_FILE_RANGE_WRITE`: start writing the dirty pages of the range, without waiting.
  static let write: UInt32 = 2
  static let start: Function? = {
    guard let symbol = dlsym(nil, "sync_file_range") else {
      return nil
    }
    return unsafeBitCast(symbol, to: Function.self)
  }()
}

extension ExportFormat {
  fileprivate func sndfileFormat(_ sampleFormat: SampleFormat) -> Int32 {
    let container: Int32
    switch self {
    case .wav: container = Int32(SF_FORMAT_WAV)
    case .flac: container = Int32(SF_FORMAT_FLAC)
    case .aiff: container = Int32(SF_FORMAT_AIFF)
    case .ogg: return Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
    case .mp3: return Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III)
    case .opus: return Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS)
    }
    switch sampleFormat {
    case .int16: return container | Int32(SF_FORMAT_PCM_16)
    case .int24: return container | Int32(SF_FORMAT_PCM_24)
    case .float32: return container | Int32(SF_FORMAT_FLOAT)
    }
  }
}
