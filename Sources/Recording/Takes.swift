public import AudioFiles
import Foundation
public import Timeline
public import TimelineStore

/// Recorded takes joining a project: naming a new take's file, and adding finished or
/// recovered takes (``/AudioFiles/PendingTake`` notes and their files) as clips, punches or a
/// loop's takes, their gaps marked, in one version.
///
/// ```swift
/// let added = try Takes.add(
///   [(note: note, path: "song.tape-recordings/\(note.take)")], to: store, file: "song.tape",
///   label: "Recover \(note.take)")
/// print(added.clips)  // [c7]
/// ```
public enum Takes {
  /// Where a take's gap (an overrun: audio the recorder lost) went.
  public enum Gap: Sendable, Hashable {
    /// Marked on the timeline: the marker `name` (`overrun1`, …) at the frame `position`.
    case marked(name: String, position: Int64)
    /// In a loop's take that does not play (`pass`, counted from 1), where it would land at
    /// `position`: said, not marked.
    case inUnplayedPass(take: String, pass: Int, position: Int64)
  }

  /// What ``add(_:to:file:label:)`` made.
  public struct Added: Sendable, Hashable {
    /// The version that added the takes.
    public var version: Int64
    /// The clips made, in the order of the takes.
    public var clips: [Clip.ID]
    /// The takes' gaps: those marked first, then those in takes that do not play.
    public var gaps: [Gap]
  }

  /// A new take's file name, `take-20261206-083012-3f2a.wav`: when it began (UTC), and a
  /// random tail.
  public static func newName() -> String {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    let stamp = String(
      format: "%04d%02d%02d-%02d%02d%02d", parts.tm_year + 1_900, parts.tm_mon + 1,
      parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec)
    return "take-\(stamp)-\(String(format: "%04x", UInt16.random(in: 0...UInt16.max))).wav"
  }

  /// Adds each take (its note and the take file's path) to the project `file` open in
  /// `store`, in one version labelled `label`: the take as a source (probed, its content
  /// identity computed, decoded into the project's cache), and where its note says it lands
  /// one clip, or only its punch crossfaded (10 ms) into what was there, or one take per pass
  /// of its loop (the last playing); and a marker `overrunN` where each of its gaps lands on
  /// what plays.
  ///
  /// - Throws: what probing a take or the edit throws (a take that is not audio, an edit
  ///   the project refuses); nothing is added then.
  public static func add(
    _ takes: [(note: PendingTake, path: String)], to store: TimelineStore, file: String,
    label: String
  ) throws -> Added {
    var sources: [(PendingTake, AudioFileInfo)] = []
    let cache = AudioCache(forProject: file)
    let rate = store.snapshot.project.sampleRate
    for (note, path) in takes {
      let info = try AudioProbe.probe(RawPath(path))
      _ = try cache.load(
        Source(
          id: Source.ID(0), path: info.path, contentHash: info.contentHash,
          sampleRate: info.sampleRate, channels: info.channels,
          frameCount: FrameCount(info.frameCount)),
        projectRate: rate)
      sources.append((note, info))
    }
    var clips: [Clip.ID] = []
    var markers: [Gap] = []
    var keptGaps: [Gap] = []
    let result = try store.edit(label: label) { project, ids in
      var changed = project
      var commands: [Command] = []
      clips = []
      markers = []
      keptGaps = []
      for (note, info) in sources {
        let source = Source(
          id: ids.newSourceID(), path: info.path.stored(inProject: file),
          contentHash: info.contentHash, sampleRate: info.sampleRate, channels: info.channels,
          frameCount: FrameCount(info.frameCount))
        var made: [Command] = [.setSource(source)]
        changed = try changed.applying(made)
        // A loop's passes: each a take of the range, from its stretch of the one capture.
        let loop = note.loop.map {
          FrameRange(start: FramePosition($0.lowerBound), end: FramePosition($0.upperBound))
        }
        let passes = loop.map {
          Take.passes(
            landing: note.timelineStart, range: $0, captured: info.frameCount,
            minimumPartial: Int64(rate))
        }
        // The gaps that land on the timeline (a punch keeps only its own range; a loop, the
        // pass that plays: a gap in a kept take is said, not marked), as markers numbered
        // after the project's own overrunN.
        let kept =
          note.punch.map {
            ($0.lowerBound - Int64(rate / 200))..<($0.upperBound + Int64(rate / 200))
          }
          ?? note.timelineStart..<(note.timelineStart + Int64(info.frameCount) + 1)
        for gap in note.overruns ?? [] {
          var position = note.timelineStart + gap
          if let passes {
            guard let placed = Take.place(gap: gap, in: passes) else { continue }
            position = placed.position.frames
            guard placed.pass == passes.count - 1 else {
              keptGaps.append(
                .inUnplayedPass(take: note.take, pass: placed.pass + 1, position: position))
              continue
            }
          } else if !kept.contains(position) {
            continue
          }
          guard position >= 0 else { continue }
          var number = 1
          while changed.marker(named: "overrun\(number)") != nil { number += 1 }
          let marker = try changed.addMarker(
            ids.newMarkerID(), named: "overrun\(number)", at: FramePosition(position))
          changed = try changed.applying(marker)
          commands += marker
          markers.append(.marked(name: "overrun\(number)", position: position))
        }
        if let punch = note.punch.map({
          FrameRange(start: FramePosition($0.lowerBound), end: FramePosition($0.upperBound))
        }) {
          // Only the punched range, crossfaded (10 ms) into what was there.
          let punched = try changed.punch(
            source: source.id, track: Track.ID(note.track),
            takeStart: FramePosition(note.timelineStart), range: punch,
            crossfade: FrameCount(Int64(rate / 100)), clip: ids.newClipID()
          ) { ids.newClipID() }
          changed = try changed.applying(punched)
          commands += made + punched
          clips += punched.compactMap {
            if case .setClip(let clip, _) = $0, clip.source == source.id {
              return clip.id
            }
            return nil
          }
          continue
        }
        if let loop, let passes {
          // One take per pass over the range, all from the one capture: the last plays.
          let clipsMade = passes.map { pass in
            Clip(
              id: ids.newClipID(), source: source.id, timelineStart: pass.timelineStart,
              sourceRange: pass.sourceRange)
          }
          made += try changed.addingTakes(clipsMade, track: Track.ID(note.track), range: loop)
          changed = try changed.applying(Array(made.dropFirst()))
          commands += made
          clips += clipsMade.map(\.id)
          continue
        }
        let clip = ids.newClipID()
        // A take aligned to before the timeline's start (an overdub from 0 whose round trip
        // reaches back past it) keeps what lands from frame 0 on.
        made += try changed.addClip(
          clip, source: source.id, track: Track.ID(note.track),
          at: FramePosition(max(0, note.timelineStart)),
          sourceStart: FramePosition(max(0, -note.timelineStart)))
        changed = try changed.applying(Array(made.dropFirst()))
        commands += made
        clips.append(clip)
      }
      return commands
    }
    return Added(version: result.version, clips: clips, gaps: markers + keptGaps)
  }

}
