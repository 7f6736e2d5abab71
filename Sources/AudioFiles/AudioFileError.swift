/// Why an audio file could not be used, with a message that says what to do.
public enum AudioFileError: Error, Sendable, Hashable, CustomStringConvertible {
  case missing(path: String)
  case unreadable(path: String)
  case notAudio(path: String, reason: String)
  case tooManyChannels(path: String, channels: Int)
  case empty(path: String)
  case truncated(path: String, expectedFrames: Int64, readFrames: Int64)
  case io(path: String, detail: String)

  public var description: String {
    switch self {
    case .missing(let path):
      return "\(path) does not exist; check the path"
    case .unreadable(let path):
      return "\(path) cannot be read (permission denied); check its permissions"
    case .notAudio(let path, let reason):
      return
        "\(path) is not an audio file Tape can read (\(reason.lowercased())); use WAV, FLAC, AIFF, Ogg or another format libsndfile reads"
    case .tooManyChannels(let path, let channels):
      return
        "\(path) has \(channels) channels; Tape takes mono or stereo, so mix it down first (for example: sox in.wav out.wav remix 1,3,5 2,4,6)"
    case .empty(let path):
      return "\(path) holds no audio (0 frames); choose a file with sound in it"
    case .truncated(let path, let expected, let read):
      return
        "\(path) is truncated: its header promises \(expected) frames but only \(read) could be read; re-export or re-copy the file"
    case .io(let path, let detail):
      return "could not read \(path): \(detail)"
    }
  }
}
