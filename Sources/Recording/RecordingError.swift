/// What went wrong in a recording that this module, not a device or a file, refuses.
///
/// ```swift
/// do {
///   _ = try Overdub(store: store, file: "song.tape", project: project, range: 0..<48_000,
///                   request: DeviceRequest(name: "hw:1"))
/// } catch let error as RecordingError {
///   print(error)  // --play: the device 'hw:1' does not play 44100 Hz, …
/// }
/// ```
public enum RecordingError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The device played to does not play the project's rate, `sampleRate`: an overdub's take is
  /// aligned to the play only at one rate.
  case deviceRate(device: String, sampleRate: Int)

  public var description: String {
    switch self {
    case .deviceRate(let device, let sampleRate):
      "--play: the device '\(device)' does not play \(sampleRate) Hz, the project's rate, and a take is aligned only at one rate; choose another with --output"
    }
  }
}
