internal import CSoxr

// Every call into libsoxr goes through this file.

/// A streaming libsoxr resampler for interleaved float32, at high quality (SOXR_HQ, 20 bits).
final class SoxrResampler {
  private let handle: soxr_t
  let channels: Int

  init(from inputRate: Int, to outputRate: Int, channels: Int) throws(AudioFileError) {
    var error: soxr_error_t?
    var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
    var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
    let created = soxr_create(
      Double(inputRate), Double(outputRate), UInt32(channels), &error, &io, &quality, nil)
    guard error == nil, let created else {
      throw .resampler(detail: error.map { String(cString: $0) } ?? "soxr_create failed")
    }
    handle = created
    self.channels = channels
  }

  deinit {
    soxr_delete(handle)
  }

  /// Resamples `frames` input frames (or, with `input == nil`, flushes the tail) into `output`,
  /// which holds `capacity` frames; returns (frames consumed, frames produced).
  func process(
    _ input: UnsafePointer<Float>?, frames: Int, into output: UnsafeMutablePointer<Float>,
    capacity: Int
  ) throws(AudioFileError) -> (consumed: Int, produced: Int) {
    var consumed = 0
    var produced = 0
    let error = soxr_process(
      handle, input, input == nil ? 0 : frames, &consumed, output, capacity, &produced)
    if let error { throw .resampler(detail: String(cString: error)) }
    return (consumed, produced)
  }
}
