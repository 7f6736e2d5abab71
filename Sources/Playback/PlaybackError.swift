/// Why playback could not start or stopped, with what to do about it.
public enum PlaybackError: Error, Sendable, Equatable, CustomStringConvertible {
  case cannotOpen(device: String, reason: String)
  case cannotConfigure(device: String, detail: String, reason: String)
  case write(device: String, reason: String)

  public var description: String {
    switch self {
    case .cannotOpen(let device, let reason):
      "cannot open the audio device '\(device)' (\(reason)); check that a sound card is present or choose another with --device (aplay -L lists them)"
    case .cannotConfigure(let device, let detail, let reason):
      "the audio device '\(device)' does not take \(detail) (\(reason)); try --device default or plughw:0"
    case .write(let device, let reason):
      "playback on '\(device)' failed (\(reason)); check the device and try again"
    }
  }
}
