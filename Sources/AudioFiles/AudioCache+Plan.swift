public import Mixing
public import Timeline

extension AudioCache {
  /// The decoded audio of every source an audible clip of `project` plays, decoding what is not
  /// cached yet; the map a ``Mixing/RenderPlan`` is compiled from.
  ///
  /// Sources only muted (or unsoloed) tracks use are not loaded, so a missing file there does
  /// not stop a render.
  ///
  /// ```swift
  /// let plan = try RenderPlan(project: project, audio: try cache.sourceAudio(for: project))
  /// ```
  public func sourceAudio(for project: Project) throws(AudioFileError) -> [Source.ID: SourceAudio] {
    var audio: [Source.ID: SourceAudio] = [:]
    for track in project.audibleTracks {
      for clip in track.clips where audio[clip.source] == nil {
        guard let source = project.source(clip.source) else { continue }
        let decoded = try load(source, projectRate: project.sampleRate)
        audio[source.id] = SourceAudio(
          samples: decoded.samples.baseAddress, frames: decoded.frames,
          channels: decoded.channels, owner: decoded)
      }
    }
    return audio
  }
}
