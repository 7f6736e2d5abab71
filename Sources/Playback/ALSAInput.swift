internal import CALSA
import Foundation

// The capture side of ALSACalls.swift: every ALSA call of a recording goes through this file.

/// How a capture device's samples are stored: a take keeps them as they came (a 16-bit device
/// gives a 16-bit take; float stays float).
public enum CaptureFormat: String, Sendable, CaseIterable {
  case s16, s24, s32, float

  /// Bytes of one sample as the device delivers it (24-bit is packed in 3 bytes).
  public var bytesPerSample: Int {
    switch self {
    case .s16: 2
    case .s24: 3
    case .s32, .float: 4
    }
  }

  public var bitsPerSample: Int { bytesPerSample * 8 }
  public var isFloat: Bool { self == .float }

  /// As the user names it: "16-bit", "float".
  public var described: String { isFloat ? "32-bit float" : "\(bitsPerSample)-bit" }

  var alsa: snd_pcm_format_t {
    switch self {
    case .s16: SND_PCM_FORMAT_S16_LE
    case .s24: SND_PCM_FORMAT_S24_3LE
    case .s32: SND_PCM_FORMAT_S32_LE
    case .float: SND_PCM_FORMAT_FLOAT_LE
    }
  }

  /// The order a device's formats are chosen in when none is asked for: the widest first, so
  /// that nothing the converter delivers is cut.
  static let preference: [CaptureFormat] = [.float, .s32, .s24, .s16]
}

/// An open ALSA capture device: interleaved frames in ``format`` at exactly the rate asked
/// for (a recording is never resampled), closed on deinit.
final class ALSAInput {
  private let handle: OpaquePointer
  let name: String
  let channels: Int
  let format: CaptureFormat
  let period: Int
  let bufferFrames: Int
  let rate: Int

  /// Opens `name` for `channels` at `sampleRate`, in `format` or (nil) the widest format it
  /// takes (``CaptureFormat/preference``).
  init(
    name: String, sampleRate: Int, channels: Int, format wanted: CaptureFormat?, period: Int,
    periods: Int
  ) throws(PlaybackError) {
    tape_alsa_silence_library_errors()
    _ = JackMessages.silenced
    var pcm: OpaquePointer?
    // Non-blocking: the device thread waits in snd_pcm_wait with a timeout, so a device that
    // stops giving audio (a JACK server that died) is noticed instead of blocking forever.
    let flags = Int32(SND_PCM_NO_AUTO_RESAMPLE) | Int32(SND_PCM_NONBLOCK)
    let opened = snd_pcm_open(&pcm, name, SND_PCM_STREAM_CAPTURE, flags)
    guard opened >= 0, let pcm else {
      throw .cannotOpenInput(
        device: name, reason: JackMessages.explanation ?? String(cString: snd_strerror(opened)))
    }
    var parameters: OpaquePointer?
    snd_pcm_hw_params_malloc(&parameters)
    defer { snd_pcm_hw_params_free(parameters) }
    func check(_ result: Int32, _ what: String) throws(PlaybackError) {
      guard result >= 0 else {
        snd_pcm_close(pcm)
        throw .inputRefused(
          device: name, what: what, reason: String(cString: snd_strerror(result)))
      }
    }
    try check(snd_pcm_hw_params_any(pcm, parameters), "any configuration")
    try check(
      snd_pcm_hw_params_set_access(pcm, parameters, SND_PCM_ACCESS_RW_INTERLEAVED),
      "interleaved access")
    let candidates = wanted.map { [$0] } ?? CaptureFormat.preference
    guard
      let chosen = candidates.first(where: {
        snd_pcm_hw_params_test_format(pcm, parameters, $0.alsa) == 0
      })
    else {
      snd_pcm_close(pcm)
      throw .inputRefused(
        device: name, what: wanted.map { "\($0.described) samples" } ?? "a linear PCM format",
        reason: "not among its formats")
    }
    try check(snd_pcm_hw_params_set_format(pcm, parameters, chosen.alsa), chosen.described)
    try check(
      snd_pcm_hw_params_set_channels(pcm, parameters, UInt32(channels)),
      channels == 1 ? "1 channel" : "\(channels) channels")
    try check(
      snd_pcm_hw_params_set_rate(pcm, parameters, UInt32(sampleRate), 0), "\(sampleRate) Hz")
    var granted = snd_pcm_uframes_t(period)
    var direction: Int32 = 0
    try check(
      snd_pcm_hw_params_set_period_size_near(pcm, parameters, &granted, &direction), "the period")
    var buffer = granted * snd_pcm_uframes_t(periods)
    try check(snd_pcm_hw_params_set_buffer_size_near(pcm, parameters, &buffer), "the buffer")
    try check(snd_pcm_hw_params(pcm, parameters), "the configuration")
    snd_pcm_hw_params_get_period_size(parameters, &granted, &direction)
    snd_pcm_hw_params_get_buffer_size(parameters, &buffer)
    handle = pcm
    self.name = name
    self.channels = channels
    self.format = chosen
    self.period = Int(granted)
    bufferFrames = Int(buffer)
    rate = sampleRate
  }

  deinit {
    snd_pcm_close(handle)
  }

  /// The open device as the device thread holds it: a handle, no reference.
  struct PCM: @unchecked Sendable, BitwiseCopyable {
    let handle: OpaquePointer
  }

  var device: PCM { PCM(handle: handle) }

  /// Starts the capture (frames are taken from now on).
  func start() throws(PlaybackError) {
    let started = snd_pcm_start(handle)
    guard started >= 0 else {
      throw .inputRefused(
        device: name, what: "being started", reason: String(cString: snd_strerror(started)))
    }
  }

  /// Frames captured but not yet read (ALSA's `snd_pcm_delay`; 0 when it cannot say): the
  /// capture latency the device reports. Allocates nothing.
  static func delay(_ pcm: PCM) -> Int64 {
    var delay = snd_pcm_sframes_t(0)
    return snd_pcm_delay(pcm.handle, &delay) >= 0 ? Int64(delay) : 0
  }

  /// What one read came to.
  enum ReadResult {
    case read(Int)
    /// Nothing came within ``waitSliceMilliseconds``.
    case idle
    /// The device overran (the thread was late) and was restarted; nothing was read.
    case overrun
    case failed(Int32)
  }

  /// One wait for audio (ms); ``stallMilliseconds`` of them in a row is a device that stopped.
  static let waitSliceMilliseconds: Int32 = 100
  static let stallMilliseconds: Int32 = 2_000

  /// Reads up to `frames` frames into `buffer`, or waits up to ``waitSliceMilliseconds`` for
  /// some: the one blocking call of the capture thread, by design outside the realtime
  /// annotations. Allocates nothing.
  static func read(_ pcm: PCM, into buffer: UnsafeMutableRawPointer, frames: Int) -> ReadResult {
    let got = snd_pcm_readi(pcm.handle, buffer, snd_pcm_uframes_t(frames))
    if got > 0 { return .read(Int(got)) }
    var error = Int32(got)
    if error == 0 || error == -EAGAIN {
      let ready = snd_pcm_wait(pcm.handle, waitSliceMilliseconds)
      if ready == 0 { return .idle }
      if ready > 0 { return .read(0) }
      error = ready
    }
    if error == -EPIPE || error == -ESTRPIPE {
      let recovered = snd_pcm_recover(pcm.handle, error, 1)
      guard recovered >= 0 else { return .failed(recovered) }
      _ = snd_pcm_start(pcm.handle)
      return .overrun
    }
    return .failed(error)
  }

  /// The error a device that gave no audio for ``stallMilliseconds`` stands for.
  var stalled: PlaybackError {
    .inputGone(
      device: name,
      reason:
        "it gave no audio for \(Self.stallMilliseconds / 1_000) s; its server may have stopped")
  }

  /// The error a failed read's code stands for.
  func failure(_ code: Int32) -> PlaybackError {
    .inputGone(device: name, reason: String(cString: snd_strerror(code)))
  }

  /// Stops the capture, dropping what the device holds but has not been read.
  func drop() {
    snd_pcm_drop(handle)
  }
}
