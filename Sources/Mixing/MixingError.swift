public import Timeline

/// Why a snapshot could not be compiled into a render plan.
public enum MixingError: Error, Sendable, Equatable, CustomStringConvertible {
  /// A clip's source has no decoded audio in the map the plan was compiled with.
  case noAudio(source: Source.ID, clip: Clip.ID)
  /// A clip's crop reaches past the end of its source's decoded audio.
  case cropBeyondAudio(clip: Clip.ID, cropEnd: Int64, audioFrames: Int)
  /// The decoded audio has a channel count the mixer does not handle (only 1 and 2).
  case unsupportedChannels(source: Source.ID, channels: Int)

  public var description: String {
    switch self {
    case .noAudio(let source, let clip):
      "clip \(clip) plays source \(source), which has no decoded audio; re-import it or run 'tape relink'"
    case .cropBeyondAudio(let clip, let cropEnd, let audioFrames):
      "clip \(clip) plays up to frame \(cropEnd) but its source's decoded audio has only \(audioFrames) frames; trim the clip with 'tape clip trim' or relink the right file"
    case .unsupportedChannels(let source, let channels):
      "source \(source) has \(channels) channels; only mono and stereo sources can be mixed"
    }
  }
}
