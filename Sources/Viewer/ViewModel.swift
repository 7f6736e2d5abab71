import AudioFiles
import Foundation
import Pictures
import Synchronization
public import Timeline
public import TimelineStore

/// What the page of `tape view` is sent: a version of the project as it draws it, and each move
/// of the head as the animation from where each clip was to where it is.
///
/// Rule: every value a page draws comes from the model (``/Timeline/Project``) and the
/// model's own diff and interpolation (``/Timeline/ProjectDiff/interpolated(at:easing:)``); the
/// page computes no edit of its own.
/// Why: the design's animated-diff notifications exist to move a view; the page is that view,
/// and shows what the engine says, not an imitation of it.
/// What if a clip's source cannot be read: it is drawn without a waveform (an empty `wave`).
public final class ViewModel: Sendable {
  /// One clip as the page draws it (times in frames of the project's rate).
  public struct ClipView: Codable, Sendable, Hashable {
    public var id: String
    public var name: String?
    public var track: String
    public var start: Int64
    public var length: Int64
    public var fadeIn: Int64
    public var fadeOut: Int64
    public var gain: Double
    /// The clip's loudest magnitudes, evenly over its length (0…1, at most 300).
    public var wave: [Float]
  }

  /// One track as the page draws it.
  public struct TrackView: Codable, Sendable, Hashable {
    public var id: String
    public var name: String
    public var gain: Double
    public var pan: Double
    public var muted: Bool
    public var solo: Bool
    /// The volume envelope's points: `[frame, decibels]`.
    public var envelope: [[Double]]
    public var clips: [ClipView]
  }

  public struct MarkerView: Codable, Sendable, Hashable {
    public var id: String
    public var name: String
    public var at: Int64
  }

  /// A version of the project, as the page draws it.
  public struct Snapshot: Codable, Sendable, Hashable {
    public var version: Int64
    public var sampleRate: Int
    /// The end of its last clip or marker, in frames.
    public var end: Int64
    public var tracks: [TrackView]
    public var markers: [MarkerView]
  }

  /// Where a moved clip is at one step of an animation.
  public struct Place: Codable, Sendable, Hashable {
    public var id: String
    public var track: String
    public var start: Int64
    public var length: Int64
  }

  /// A move of the head, as the page animates it: what moved it, the snapshot it ends on, and
  /// the places of the clips that moved at evenly spaced steps of the diff's interpolation
  /// (eased: ``/Timeline/Easing/smooth``), the last step the new places.
  public struct Update: Codable, Sendable, Hashable {
    public var cause: String
    public var from: Int64?
    public var snapshot: Snapshot
    public var steps: [[Place]]
  }

  /// One entry of the history strip.
  public struct VersionView: Codable, Sendable, Hashable {
    public var version: Int64
    public var parent: Int64?
    public var label: String
    /// Seconds since 1970.
    public var date: Double
  }

  public struct HistoryView: Codable, Sendable, Hashable {
    public var head: Int64
    public var versions: [VersionView]
  }

  /// Steps an animation is sent in.
  public static let animationSteps = 12

  private let cache: AudioCache
  /// Each source's peaks once read, and the sources that could not be read (a missing or
  /// changed file: drawn without a waveform, not tried again on every update).
  private let known = Mutex<(peaks: [Source.ID: Peaks], failed: Set<Source.ID>)>(([:], []))

  /// The model of the project at `path` (its cache gives the waveforms).
  public init(projectPath: String) {
    cache = AudioCache(forProject: projectPath)
  }

  /// `project` at `version` as the page draws it.
  public func snapshot(_ project: Project, version: Int64) -> Snapshot {
    let peaks = waveforms(project)
    let ends = [project.timelineEnd] + project.markers.map(\.position)
    return Snapshot(
      version: version, sampleRate: project.sampleRate, end: (ends.max() ?? .zero).frames,
      tracks: project.tracks.map { track in
        TrackView(
          id: track.id.description, name: track.name, gain: track.gain.decibels, pan: track.pan,
          muted: track.isMuted, solo: track.isSolo,
          envelope: (track.envelope?.points ?? []).map { [Double($0.time.frames), $0.decibels] },
          clips: track.clips.map { clip in
            ClipView(
              id: clip.id.description, name: clip.name, track: track.id.description,
              start: clip.timelineStart.frames, length: clip.length.frames,
              fadeIn: clip.fadeIn.length.frames, fadeOut: clip.fadeOut.length.frames,
              gain: clip.gain.decibels, wave: Self.wave(of: clip, peaks[clip.source]))
          })
      },
      markers: project.markers.map {
        MarkerView(id: $0.id.description, name: $0.name, at: $0.position.frames)
      })
  }

  /// A store's update as the page animates it; nil for one that moved no head (the first,
  /// which the page gets as its snapshot).
  public func update(_ update: StoreUpdate) -> Update? {
    guard let move = update.moves.last else { return nil }
    let moved = Set(
      update.diff.clips.filter { change in
        guard let before = change.before, let after = change.after else { return false }
        return before.track != after.track || before.clip.timelineStart != after.clip.timelineStart
          || before.clip.length != after.clip.length
      }.map(\.id))
    var steps: [[Place]] = []
    if !moved.isEmpty {
      for step in 1...Self.animationSteps {
        let t = Double(step) / Double(Self.animationSteps)
        let shown = update.diff.interpolated(at: t, easing: .smooth)
        var places: [Place] = []
        for track in shown.tracks {
          for clip in track.clips where moved.contains(clip.id) {
            places.append(
              Place(
                id: clip.id.description, track: track.id.description,
                start: clip.timelineStart.frames, length: clip.length.frames))
          }
        }
        steps.append(places)
      }
    }
    return Update(
      cause: move.cause.rawValue, from: update.moves.first?.from,
      snapshot: snapshot(update.project, version: update.version), steps: steps)
  }

  /// The history strip's entries.
  public static func history(_ history: History) -> HistoryView {
    HistoryView(
      head: history.head,
      versions: history.versions.map {
        VersionView(
          version: $0.version, parent: $0.parent, label: $0.label,
          date: $0.date.timeIntervalSince1970)
      })
  }

  /// The sources' peaks, read once each (a source whose audio cannot be had: none, and it is
  /// not tried again). Reads files, and the first time decodes a source: call it off Swift's
  /// cooperative threads (``ViewServer`` does).
  private func waveforms(_ project: Project) -> [Source.ID: Peaks] {
    let have = known.withLock { $0 }
    let wanted = Set(project.tracks.flatMap { $0.clips.map(\.source) })
    if wanted.isSubset(of: Set(have.peaks.keys).union(have.failed)) { return have.peaks }
    let everything = FrameRange(start: .zero, count: FrameCount(max(project.timelineEnd.frames, 1)))
    let found = try? cache.peaks(of: project, in: everything)
    return known.withLock { known in
      known.peaks.merge(found?.peaks ?? [:]) { old, _ in old }
      // A reading stopped or refused as a whole: every source not had is left for later.
      let failed = found.map { Set($0.unavailable.map(\.source)) } ?? []
      known.failed.formUnion(failed)
      return known.peaks
    }
  }

  /// The clip's loudest magnitudes in up to 300 even steps (one per 1,024 frames or more).
  static func wave(of clip: Clip, _ peaks: Peaks?) -> [Float] {
    guard let peaks, clip.length.frames > 0 else { return [] }
    let length = Int(clip.length.frames)
    let count = min(300, max(2, length / 1_024))
    let start = Int(clip.sourceRange.start.frames)
    return (0..<count).map { index in
      let from = start + length * index / count
      let to = max(from + 1, start + length * (index + 1) / count)
      guard let (low, high) = peaks.extremes(in: from..<to) else { return 0 }
      return (min(1, max(abs(low), abs(high))) * 1_000).rounded() / 1_000
    }
  }
}
