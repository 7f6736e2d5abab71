public import SafeFiles
import Timeline

/// Why an audio file could not be used, with a message that says what to do.
public enum AudioFileError: Error, Sendable, Hashable, CustomStringConvertible {
  case missing(path: String)
  /// A folder, FIFO, device or socket where an audio file was expected.
  case notAFile(path: String, kind: String)
  case unreadable(path: String)
  case notAudio(path: String, reason: String)
  case tooManyChannels(path: String, channels: Int)
  case empty(path: String)
  case truncated(path: String, expectedFrames: Int64, readFrames: Int64)
  /// A NaN or infinite sample (in a float file) at `frame`.
  case nonFiniteSample(path: String, frame: Int64, sampleRate: Int)
  case io(path: String, detail: String)
  /// A project's source file is no longer where the project says.
  case sourceMissing(source: String, path: String)
  /// A project's source file is there but is not the audio that was imported.
  case sourceChanged(source: String, path: String)
  case resampler(detail: String)
  case cache(path: String, detail: String)
  /// The render's output file (or its temporary) could not be created; `detail` says why and
  /// what to do.
  case cannotCreate(path: String, detail: String)
  /// Writing the render's output failed part-way (disk full, I/O error).
  case write(path: String, detail: String)
  /// The container cannot hold the requested sample format.
  case unsupportedOutput(format: String, detail: String)
  /// The render would hold more audio than the container's size fields can describe.
  case tooLong(format: String, bytes: Int64, limit: Int64)
  /// The render was interrupted; nothing was written under the output's name.
  case cancelled(path: String)
  /// Hashing or decoding a source was stopped (Ctrl-C, `q`); nothing of it was kept.
  case decodeStopped(source: String)
  /// The output could not be opened, written or put in place (see ``/SafeFiles/SafeFileError``).
  case output(SafeFileError)
  /// A recording's take (or its note of what is pending) could not be written or repaired.
  case takeWrite(path: String, reason: String)
  /// A recordings folder someone else could change under the recorder (a symbolic link, owned
  /// by another user, or writable by others): no take is written or recovered there. `fix`
  /// says what makes it safe.
  case unsafeRecordingsFolder(path: String, reason: String, fix: String)
  /// The disk holding a recording's take is full: the take stopped there.
  case diskFull(path: String)
  /// Two mixes of different rates or channel counts, which a null test cannot subtract (each
  /// side named as the caller names it, such as `v12`).
  /// A loudness target or true-peak ceiling a render cannot meet as asked: the message says by
  /// how much and the fixes (``LoudnessTarget/normalise(_:range:preroll:tail:settings:mix:compile:progress:)``),
  /// their commands naming the project `FILE`.
  case loudnessRefused(String)
  case mixFormatsDiffer(
    first: String, firstRate: Int, firstChannels: Int, second: String, secondRate: Int,
    secondChannels: Int)

  public var description: String {
    switch self {
    case .diskFull(let path):
      return
        "the disk holding \(path) is full; free some space there (or record onto another disk), then record again"
    case .unsafeRecordingsFolder(let path, let reason, let fix):
      return
        "the recordings folder \(path) \(reason); a take is written and recovered only in a folder no one else may change: \(fix)"
    case .takeWrite(let path, let reason):
      return
        "the take \(path) could not be written (\(reason)); free some space or check the folder's permissions, then record again"
    case .missing(let path):
      return "\(path) does not exist; check the path"
    case .notAFile(let path, let kind):
      return "\(path) is \(kind), not an audio file; give the path of a WAV, FLAC, AIFF or Ogg file"
    case .unreadable(let path):
      return "\(path) cannot be read (permission denied); check its permissions"
    case .notAudio(let path, let reason):
      // libsndfile's reasons end in a full stop ("Format not recognised."), which read as
      // "(format not recognised.)" inside the sentence.
      var shown = reason.lowercased()
      while shown.hasSuffix(".") { shown.removeLast() }
      return
        "\(path) is not an audio file Tape can read (\(shown)); use WAV, FLAC, AIFF, Ogg or another format libsndfile reads"
    case .tooManyChannels(let path, let channels):
      return
        "\(path) has \(channels) channels; Tape takes mono or stereo, so mix it down first (for example: sox in.wav out.wav remix 1,3,5 2,4,6)"
    case .empty(let path):
      return "\(path) holds no audio (0 frames); choose a file with sound in it"
    case .nonFiniteSample(let path, let frame, let rate):
      return
        "\(path) has a NaN or infinite sample at \(TimeValue.clock(FrameCount(frame), sampleRate: rate)) (frame \(frame)), which would ruin every mix it is in; export it again from its source without them"
    case .truncated(let path, let expected, let read):
      return
        "\(path) is truncated: its header promises \(expected) frames but only \(read) could be read; re-export or re-copy the file"
    case .io(let path, let detail):
      return "could not read \(path): \(detail)"
    case .sourceMissing(let source, let path):
      return
        "source \(source) is missing: \(path) does not exist; put it back or point the project at its new place with 'tape relink FILE \(source) PATH'"
    case .sourceChanged(let source, let path):
      return
        "source \(source) has changed: \(path) is not the audio that was imported; restore the original or relink with 'tape relink FILE \(source) PATH --force'"
    case .resampler(let detail):
      return "resampling failed: \(detail)"
    case .cannotCreate(let path, let detail):
      return
        "cannot create \(path): \(detail)"
    case .write(let path, let detail):
      return "writing \(path) failed: \(detail); free some space or choose another output path"
    case .unsupportedOutput(let format, let detail):
      return "\(format) cannot store \(detail); choose another --bits or --format"
    case .tooLong(let format, let bytes, let limit):
      return
        "the render would be \(bytes / 1_048_576) MiB of audio but a \(format) file holds at most \(limit / 1_048_576) MiB; render to .flac, use fewer --bits, or split it with --from/--to"
    case .cancelled(let path):
      return "render interrupted; \(path) was not written"
    case .decodeStopped(let source):
      return "decoding source \(source) was stopped; nothing of it was kept in the cache"
    case .output(let error):
      return error.description
    case .cache(let path, let detail):
      return "the decoded-audio cache \(path) is unusable: \(detail)"
    case .loudnessRefused(let message):
      return message
    case .mixFormatsDiffer(let first, let rate, let channels, let second, let rate2, let channels2):
      return
        "\(first) is \(rate) Hz \(channels) ch and \(second) \(rate2) Hz \(channels2) ch: mixes of different formats cannot be subtracted"
    }
  }
}
