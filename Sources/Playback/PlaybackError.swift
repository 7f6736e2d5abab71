/// Why playback could not start or stopped, with what to do about it.
public enum PlaybackError: Error, Sendable, Equatable, CustomStringConvertible {
  case cannotOpen(device: String, reason: String)
  /// The device refused a hardware parameter (`what`), even through the plug layer.
  case cannotConfigure(device: String, what: String, reason: String)
  /// The device does not take the period asked for; `suggestion` is one it would take.
  case periodRefused(device: String, period: Int, suggestion: Int)
  case badPeriod(period: Int, range: ClosedRange<Int>)
  case badPeriods(periods: Int, range: ClosedRange<Int>)
  case write(device: String, reason: String)
  /// The device went away while playing (unplugged, its server stopped).
  case deviceGone(device: String, reason: String)
  /// The device, closed for a stop (Ctrl-Z), did not open again (as it was) on SIGCONT.
  case reopenFailed(device: String, reason: String)
  /// The capture device (`tape record --device`) could not be opened.
  case cannotOpenInput(device: String, reason: String)
  /// The capture device refused a parameter (`what`).
  case inputRefused(device: String, what: String, reason: String)
  /// The capture device went away while recording (what was captured is kept).
  case inputGone(device: String, reason: String)
  /// `tape record --calibrate` heard no clear loopback of its clicks (`reason` says what).
  case calibrationFailed(device: String, reason: String)
  /// The latency store (`latency.json`) could not be read or written.
  case latencyStore(path: String, reason: String)

  public var description: String {
    switch self {
    case .cannotOpen(let device, let reason):
      "cannot open the audio device '\(device)' (\(reason)); check that a sound card is present or choose another with --device (aplay -L lists them)"
    case .cannotConfigure(let device, let what, let reason):
      "the audio device '\(device)' does not take \(what) (\(reason)), even through ALSA's plug layer; try --device default or plughw:0"
    case .periodRefused(let device, let period, let suggestion):
      "the audio device '\(device)' does not take a period of \(period) frames; use --period \(suggestion) (a JACK device takes only multiples of JACK's own period)"
    case .badPeriod(let period, let range):
      "--period \(period) is not a period a device takes; use \(range.lowerBound) to \(range.upperBound) frames (256 is the default)"
    case .badPeriods(let periods, let range):
      "--periods \(periods) is not a buffer a device takes; use \(range.lowerBound) to \(range.upperBound) periods (4 is the default)"
    case .write(let device, let reason):
      "playback on '\(device)' failed (\(reason)); check the device and try again"
    case .deviceGone(let device, let reason):
      "the audio device '\(device)' went away while playing (\(reason)); playback stopped"
    case .cannotOpenInput(let device, let reason):
      "cannot open the capture device '\(device)' (\(reason)); choose another with --device (arecord -L lists them)"
    case .inputRefused(let device, let what, let reason):
      "the capture device '\(device)' does not take \(what) (\(reason)); choose another with --device (arecord -L lists them), or another --channels"
    case .inputGone(let device, let reason):
      "the capture device '\(device)' went away while recording (\(reason)); the recording stopped there"
    case .calibrationFailed(let device, let reason):
      "the round trip of '\(device)' could not be measured (\(reason)); connect its output to its input (a cable, or jack_connect) and run tape record --calibrate again"
    case .latencyStore(let path, let reason):
      "the latency calibrations in \(path) cannot be used (\(reason)); fix or remove the file and run tape record --calibrate again"
    case .reopenFailed(let device, let reason):
      "the audio device '\(device)', closed while the play was stopped, did not open again (\(reason)); playback stopped"
    }
  }
}
