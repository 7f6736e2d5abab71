import Foundation
public import Mixing
import Synchronization
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

  /// What a ``/Mixing/RenderPlan`` is compiled from.
  public var audio: [Source.ID: SourceAudio] { sources.mapValues(\.audio) }

  /// Reads into memory every chunk `plan` reads in the timeline frames `range`.
  ///
  /// The chunks not resident yet are read on two threads (each chunk read, verified and
  /// published as ``CachedSource/makeResident(_:)`` does): at the start of a render almost
  /// every chunk a batch needs is new, and one thread reading them held the render up.
  /// When several chunks fail, the error is the first one's in the plan's order.
  public func makeResident(_ plan: RenderPlan, range: Range<Int64>) throws(AudioFileError) {
    var wanted: [(source: CachedSource, chunk: Int)] = []
    var listed = Set<ChunkKey>()
    plan.chunksRead(in: range) { audio, chunk in
      guard !audio.isResident(chunk), let source = byAudio[ObjectIdentifier(audio)],
        listed.insert(ChunkKey(audio: ObjectIdentifier(audio), chunk: chunk)).inserted
      else { return }
      wanted.append((source, chunk))
    }
    guard wanted.count > 1 else {
      for (source, chunk) in wanted { try source.makeResident(chunk) }
      return
    }
    let failures = Mutex<[(index: Int, error: AudioFileError)]>([])
    let list = wanted
    DispatchQueue.concurrentPerform(iterations: Self.readers) { reader in
      for index in stride(from: reader, to: list.count, by: Self.readers) {
        do throws(AudioFileError) {
          try list[index].source.makeResident(list[index].chunk)
        } catch {
          failures.withLock { $0.append((index, error)) }
          return
        }
      }
    }
    if let first = failures.withLock({ $0.min { $0.index < $1.index } }) { throw first.error }
  }

  /// Threads reading chunks at once (the machine Tape is measured on has two cores).
  static let readers = 2

  private struct ChunkKey: Hashable {
    let audio: ObjectIdentifier
    let chunk: Int
  }
}

extension AudioCache {
  /// The decoded audio of every source an audible clip of `project` plays, decoding what is not
  /// cached yet; the map a ``/Mixing/RenderPlan`` is compiled from.
  ///
  /// Sources only muted (or unsoloed) tracks use are not loaded, so a missing file there does
  /// not stop a render.
  public func sources(for project: Project) throws(AudioFileError) -> ProjectAudio {
    var loaded: [Source.ID: CachedSource] = [:]
    for track in project.mixedTracks {
      for clip in track.clips where loaded[clip.source] == nil {
        guard let source = project.source(clip.source) else { continue }
        loaded[source.id] = try load(source, projectRate: project.sampleRate)
      }
    }
    return ProjectAudio(sources: loaded)
  }
}

/// Decoded audio for a player: each source loaded once and kept while the play lasts, so every
/// plan compiled from any version shares the same ``/Mixing/SourceAudio`` objects (and their
/// memory), and gains can ramp from one plan to the next.
///
/// A source that is not in the cache yet is decoded progressively
/// (``AudioCache/load(_:projectRate:progressively:)``): its chunks are there as the decode
/// reaches them, so a play starts after the seconds it needs first, not after every source
/// whole.
///
/// Every call checks the sources it is asked for again (cheaply: their file identity), so a
/// source that changed while playing is an error for the version that needs it, while
/// versions already compiled play on. A source whose file was deleted after its decoded audio
/// was opened plays on from that audio, in every later version too, and is said once
/// (``takeNotices()``); one never opened is an error.
///
/// ```swift
/// let library = AudioLibrary(cache: AudioCache(forProject: "song.tape"))
/// let plan = try RenderPlan(project: project, audio: try library.audio(for: project))
/// ```
public final class AudioLibrary: @unchecked Sendable {
  private let cache: AudioCache
  private let loaded = Mutex<[String: CachedSource]>([:])
  private let byAudio = Mutex<[ObjectIdentifier: CachedSource]>([:])
  /// Sources whose file went away after they were opened (said once each), and what to say.
  private let gone = Mutex<(keys: Set<String>, notices: [String])>(([], []))

  public init(cache: AudioCache) {
    self.cache = cache
  }

  /// The audio of every source a clip of `project` plays: all of those of audible tracks
  /// (an error when one cannot be had), and those of silent tracks that can be had (so a
  /// player can ramp them in).
  public func audio(for project: Project) throws(AudioFileError) -> [Source.ID: SourceAudio] {
    let audible = Set(project.mixedTracks.map(\.id))
    var audio: [Source.ID: SourceAudio] = [:]
    for track in project.tracks {
      for clip in track.clips where audio[clip.source] == nil {
        guard let source = project.source(clip.source) else { continue }
        do {
          audio[source.id] = try self.source(source, rate: project.sampleRate).audio
        } catch  where !audible.contains(track.id) {
          continue
        }
      }
    }
    return audio
  }

  /// What to tell the user since the last call: each source whose file went away while its
  /// decoded audio plays on, once; and, once, that decoded audio could not be locked into RAM.
  public func takeNotices() -> [String] {
    let failure = cache.memory.lockFailure
    return gone.withLock { gone in
      if let failure, gone.keys.insert("\u{0}lock").inserted {
        gone.notices.append(
          "could not lock the decoded audio into RAM: \(String(cString: strerror(failure))); a page fault may cause a dropout. Raise the limit (ulimit -l, or memlock in /etc/security/limits.conf)"
        )
      }
      defer { gone.notices.removeAll() }
      return gone.notices
    }
  }

  /// Reads chunk `chunk` of `audio` (which came from this library) into memory.
  public func makeResident(_ audio: SourceAudio, _ chunk: Int) throws(AudioFileError) {
    try byAudio.withLock { $0[ObjectIdentifier(audio)] }?.makeResident(chunk)
  }

  private func source(_ source: Source, rate: Int) throws(AudioFileError) -> CachedSource {
    let key = "\(source.id) \(source.contentHash) \(rate) \(source.path)"
    if let known = loaded.withLock({ $0[key] }) {
      do {
        cache.remember(try cache.checkSourceFile(source))
      } catch .sourceMissing(let id, let path) {
        // Its decoded audio is open (and its cache file stays): play on from it.
        gone.withLock { gone in
          guard gone.keys.insert(key).inserted else { return }
          gone.notices.append(
            "source \(id)'s file \(path) is gone; playing on from its decoded audio (restore the file, or relink it with 'tape relink', before the next play or render)"
          )
        }
      }
      return known
    }
    // A source not decoded yet decodes on a thread of its own, and the play starts once the
    // chunks it needs first are there (the loader waits for later ones as they come).
    let new = try cache.load(source, projectRate: rate, progressively: true)
    loaded.withLock { $0[key] = new }
    byAudio.withLock { $0[ObjectIdentifier(new.audio)] = new }
    return new
  }
}
