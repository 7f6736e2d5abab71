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
