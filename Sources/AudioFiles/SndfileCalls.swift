internal import CSndfile
import Foundation

// Every call into libsndfile goes through this file, which turns its results into
// `AudioFileError`s.

/// An open libsndfile handle for reading; closed on deinit.
final class SndfileReader {
  let handle: OpaquePointer
  let info: SF_INFO
  let path: String

  init(path: String) throws(AudioFileError) {
    self.path = path
    guard FileManager.default.fileExists(atPath: path) else { throw .missing(path: path) }
    guard FileManager.default.isReadableFile(atPath: path) else { throw .unreadable(path: path) }
    var info = SF_INFO()
    guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
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
}
