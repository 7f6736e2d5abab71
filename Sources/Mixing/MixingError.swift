public import Timeline

/// Why a snapshot could not be compiled into a render plan.
public enum MixingError: Error, Sendable, Equatable, CustomStringConvertible {
  public static func == (a: MixingError, b: MixingError) -> Bool { a.description == b.description }

  /// A clip's source has no decoded audio in the map the plan was compiled with.
  case noAudio(source: Source.ID, clip: Clip.ID)
  /// A clip's crop reaches past the end of its source's decoded audio.
  case cropBeyondAudio(clip: Clip.ID, cropEnd: Int64, audioFrames: Int)
  /// The decoded audio has a channel count the mixer does not handle (only 1 and 2).
  case unsupportedChannels(source: Source.ID, channels: Int)
  /// Effects whose plugins are not installed here (their ids and URIs).
  case pluginsMissing([(Effect.ID, String)])
  /// Effects whose installed plugins Tape cannot run (their ids, URIs and why), and those
  /// whose plugins are not installed: all named in one line.
  case pluginsUnusable([(Effect.ID, String, String)], missing: [(Effect.ID, String)])
  /// Effects that cannot give their plugin the file it needs (none set, or missing), each
  /// with one line saying why and what to do.
  case effectFiles([String])
  /// A plugin could not be started.
  case effectFailed(Effect.ID, plugin: String, reason: String)
  /// A project with effects was compiled without an ``EffectRack``.
  case effectsNeedRack
  /// A chain's latency is longer than the rack can align.
  case latencyTooLong(frames: Int, most: Int)

  public var description: String {
    switch self {
    case .noAudio(let source, let clip):
      "clip \(clip) plays source \(source), which has no decoded audio; re-import it or run 'tape relink'"
    case .cropBeyondAudio(let clip, let cropEnd, let audioFrames):
      "clip \(clip) plays up to frame \(cropEnd) but its source's decoded audio has only \(audioFrames) frames; trim the clip with 'tape clip trim' or relink the right file"
    case .unsupportedChannels(let source, let channels):
      "source \(source) has \(channels) channels; only mono and stereo sources can be mixed"
    case .pluginsMissing(let effects):
      "the LV2 plugin\(effects.count == 1 ? " is" : "s are") not installed here: "
        + effects.map { "\($0.1) (\($0.0))" }.joined(separator: ", ")
        + "; install \(effects.count == 1 ? "it" : "them"), or add --bypass-missing to play without \(effects.count == 1 ? "that effect" : "those effects")"
    case .pluginsUnusable(let unusable, let missing):
      "Tape cannot run the plugin\(unusable.count == 1 ? "" : "s") of "
        + unusable.map { "\($0.0) (\($0.1): it \($0.2))" }.joined(separator: ", ")
        + (missing.isEmpty
          ? ""
          : ", and the plugin\(missing.count == 1 ? " is" : "s are") not installed of "
            + missing.map { "\($0.0) (\($0.1))" }.joined(separator: ", "))
        + "; remove \(unusable.count + missing.count == 1 ? "it" : "them") with 'tape fx rm FILE "
        + (unusable.map(\.0) + missing.map(\.0)).sorted().map(\.description).joined(separator: " ")
        + "', or add --bypass-missing to play without \(unusable.count + missing.count == 1 ? "that effect" : "those effects")"
    case .effectFiles(let problems):
      problems.joined(separator: "; ")
    case .effectFailed(let id, let plugin, let reason):
      "effect \(id) (\(plugin)) could not start: \(reason)"
    case .effectsNeedRack:
      "this project has effects or routing, which need an effect rack to render"
    case .latencyTooLong(let frames, let most):
      "the effects delay the sound by \(frames) frames, more than the \(most) Tape can align; remove or bypass the effect with the longest look-ahead"
    }
  }
}
