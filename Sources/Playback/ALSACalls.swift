internal import CALSA

// Every call into ALSA goes through this file. The device thread, transport and plan swaps
// arrive with the playback issue; for now the library is linked and its version reported.

/// Facts about the ALSA library Tape is running against.
public enum ALSALibrary {
  /// The runtime alsa-lib version, such as "1.2.8".
  public static var version: String {
    String(cString: snd_asoundlib_version())
  }
}

/// An open ALSA playback device taking interleaved float32 frames; closed on deinit.
///
/// Blocking writes paced by the device; an underrun (`-EPIPE`) or suspend (`-ESTRPIPE`) is
/// recovered with `snd_pcm_recover` and counted.
final class ALSAOutput {
  private let handle: OpaquePointer
  let device: String
  let channels: Int
  private(set) var underruns = 0

  init(
    device: String, sampleRate: Int, channels: Int, latencyMicroseconds: Int = 100_000
  )
    throws(PlaybackError)
  {
    tape_alsa_silence_library_errors()
    var pcm: OpaquePointer?
    var result = snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, 0)
    guard result >= 0, let pcm else {
      throw .cannotOpen(device: device, reason: String(cString: snd_strerror(result)))
    }
    result = snd_pcm_set_params(
      pcm, SND_PCM_FORMAT_FLOAT_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(channels),
      UInt32(sampleRate), 1, UInt32(latencyMicroseconds))
    guard result >= 0 else {
      snd_pcm_close(pcm)
      throw .cannotConfigure(
        device: device, detail: "\(channels) channels of float32 at \(sampleRate) Hz",
        reason: String(cString: snd_strerror(result)))
    }
    handle = pcm
    self.device = device
    self.channels = channels
  }

  deinit {
    snd_pcm_close(handle)
  }

  /// Writes `frames` frames, waiting for the device as needed.
  func write(_ samples: UnsafePointer<Float>, frames: Int) throws(PlaybackError) {
    var done = 0
    while done < frames {
      let written = snd_pcm_writei(
        handle, samples + done * channels, snd_pcm_uframes_t(frames - done))
      if written >= 0 {
        done += Int(written)
        continue
      }
      let error = Int32(written)
      if error == -EPIPE || error == -ESTRPIPE { underruns += 1 }
      let recovered = snd_pcm_recover(handle, error, 1)
      guard recovered >= 0 else {
        throw .write(device: device, reason: String(cString: snd_strerror(recovered)))
      }
    }
  }

  /// Plays out what is buffered, then returns.
  func drain() {
    snd_pcm_drain(handle)
  }
}
