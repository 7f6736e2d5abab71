public import Mixing
public import Timeline

/// The decoded audio of the sources a project plays, and the one way its chunks reach memory.
///
/// ```swift
/// let decoded = try AudioCache(forProject: "song.tape").sources(for: project)
/// let plan = try RenderPlan(project: project, audio: decoded.audio)
/// try decoded.makeResident(plan, range: 0..<16_384)
/// ```
public final class ProjectAudio: @unchecked Sendable {
  /// Every source an audible clip plays.
  public let sources: [Source.ID: CachedSource]
  private let byAudio: [ObjectIdentifier: CachedSource]

  init(sources: [Source.ID: CachedSource]) {
    self.sources = sources
    byAudio = Dictionary(
      uniqueKeysWithValues: sources.values.map { (ObjectIdentifier($0.audio), $0) })
  }

  /// What a ``Mixing/RenderPlan`` is compiled from.
  public var audio: [Source.ID: SourceAudio] { sources.mapValues(\.audio) }

  /// Reads into memory every chunk `plan` reads in the timeline frames `range`.
  public func makeResident(_ plan: RenderPlan, range: Range<Int64>) throws(AudioFileError) {
    try plan.chunksRead(in: range) { audio, chunk throws(AudioFileError) in
      try byAudio[ObjectIdentifier(audio)]?.makeResident(chunk)
    }
  }
}

extension AudioCache {
  /// The decoded audio of every source an audible clip of `project` plays, decoding what is not
  /// cached yet; the map a ``Mixing/RenderPlan`` is compiled from.
  ///
  /// Sources only muted (or unsoloed) tracks use are not loaded, so a missing file there does
  /// not stop a render.
  public func sources(for project: Project) throws(AudioFileError) -> ProjectAudio {
    var loaded: [Source.ID: CachedSource] = [:]
    for track in project.audibleTracks {
      for clip in track.clips where loaded[clip.source] == nil {
        guard let source = project.source(clip.source) else { continue }
        loaded[source.id] = try load(source, projectRate: project.sampleRate)
      }
    }
    return ProjectAudio(sources: loaded)
  }
}
