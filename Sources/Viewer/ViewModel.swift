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

  /// A move of the head, as the page animates it: what moved it, what changed, and the places
  /// of the clips that moved at evenly spaced steps of the diff's interpolation (eased:
  /// ``/Timeline/Easing/smooth``), the last step the new places.
  ///
  /// Rule: an update carries what changed (``Changes``), never the whole project, unless the
  /// change is most of it. Why: a project of 100,000 clips is tens of megabytes drawn whole,
  /// and one moved clip should cost the page what one clip costs. What if a page missed an
  /// update (its version is not `from`): it reads the snapshot again and draws that.
  public struct Update: Codable, Sendable, Hashable {
    public var cause: String
    /// The version the changes apply to: the version of the update before.
    public var from: Int64?
    public var version: Int64
    /// The whole new version, when the change is most of the project or its rate changed
    /// (then `changes` is nil).
    public var snapshot: Snapshot?
    public var changes: Changes?
    /// Empty when no clip moved, or more moved than a page animates
    /// (``ViewModel/animatedClipsAtMost``).
    public var steps: [[Place]]
  }

  /// What one move of the head changed, as the page draws it.
  public struct Changes: Codable, Sendable, Hashable {
    public var sampleRate: Int
    /// The end of the last clip or marker, in frames.
    public var end: Int64
    /// How many clips the new version has (a page whose count differs has lost its way, and
    /// reads the snapshot again).
    public var clipCount: Int
    /// Every track's id, in order.
    public var order: [String]
    /// The tracks added or changed, with their settings (their `clips` empty).
    public var tracks: [TrackView]
    public var removedTracks: [String]
    /// The clips added or changed, as they now are.
    public var clips: [ClipView]
    public var removedClips: [String]
    /// Every marker, when one changed; nil when none did.
    public var markers: [MarkerView]?
  }

  /// One entry of the history strip.
  public struct VersionView: Codable, Sendable, Hashable {
    public var version: Int64
    public var parent: Int64?
    public var label: String
    /// Seconds since 1970.
    public var date: Double
  }

  /// The history strip: every version, or the last of the head's line (`earlier` then says
  /// how many of the line come before them, and `total` how many versions there are).
  public struct HistoryView: Codable, Sendable, Hashable {
    public var head: Int64
    public var versions: [VersionView]
    public var earlier: Int?
    public var total: Int?
  }

  /// Steps an animation is sent in.
  public static let animationSteps = 12
  /// The most clips an update animates; a change that moves more is drawn at once.
  public static let animatedClipsAtMost = 2_000

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
    var tracks: [TrackView] = []
    for track in project.tracks {
      var view = Self.settings(track)
      view.clips = track.clips.map { Self.clip($0, on: track.id, peaks[$0.source]) }
      tracks.append(view)
    }
    return Snapshot(
      version: version, sampleRate: project.sampleRate, end: Self.end(of: project),
      tracks: tracks, markers: Self.markers(project))
  }

  /// A store's update as the page animates it; nil for one that moved no head (the first,
  /// which the page gets as its snapshot).
  public func update(_ update: StoreUpdate) -> Update? {
    guard let move = update.moves.last else { return nil }
    let diff = update.diff
    let project = update.project
    var clipCount = 0
    for track in project.tracks { clipCount += track.clips.count }
    var moved: Set<Clip.ID> = []
    for change in diff.clips {
      guard let before = change.before, let after = change.after else { continue }
      if before.track != after.track || before.clip.timelineStart != after.clip.timelineStart
        || before.clip.length != after.clip.length
      {
        moved.insert(change.id)
      }
    }
    var steps: [[Place]] = []
    if !moved.isEmpty && moved.count <= Self.animatedClipsAtMost {
      for step in 1...Self.animationSteps {
        let t = Double(step) / Double(Self.animationSteps)
        let shown = diff.interpolated(at: t, easing: .smooth)
        var places: [Place] = []
        for (id, place) in shown.locate(moved) {
          places.append(
            Place(
              id: id.description, track: place.track.description,
              start: place.clip.timelineStart.frames, length: place.clip.length.frames))
        }
        places.sort { $0.id < $1.id }
        steps.append(places)
      }
    }
    var result = Update(
      cause: move.cause.rawValue, from: update.moves.first?.from, version: update.version,
      snapshot: nil, changes: nil, steps: steps)
    // Most of the project changed (or its rate, which moves every clip): sent whole.
    if diff.formatChanged || diff.clips.count > max(1_000, clipCount / 2) {
      result.snapshot = snapshot(project, version: update.version)
      return result
    }
    var sources: Set<Source.ID> = []
    for change in diff.clips {
      if let after = change.after { sources.insert(after.clip.source) }
    }
    let peaks = waveforms(project, sources: sources)
    var clips: [ClipView] = []
    var removedClips: [String] = []
    for change in diff.clips {
      if let after = change.after {
        clips.append(Self.clip(after.clip, on: after.track, peaks[after.clip.source]))
      } else {
        removedClips.append(change.id.description)
      }
    }
    var tracks: [TrackView] = []
    var removedTracks: [String] = []
    for change in diff.tracks {
      if change.after == nil {
        removedTracks.append(change.id.description)
      } else if let track = project.track(change.id) {
        tracks.append(Self.settings(track))
      }
    }
    var order: [String] = []
    for track in project.tracks { order.append(track.id.description) }
    result.changes = Changes(
      sampleRate: project.sampleRate, end: Self.end(of: project), clipCount: clipCount,
      order: order, tracks: tracks, removedTracks: removedTracks, clips: clips,
      removedClips: removedClips, markers: diff.markers.isEmpty ? nil : Self.markers(project))
    return result
  }

  private static func end(of project: Project) -> Int64 {
    var end = project.timelineEnd
    for marker in project.markers where marker.position > end { end = marker.position }
    return end.frames
  }

  private static func settings(_ track: Track) -> TrackView {
    var envelope: [[Double]] = []
    for point in track.envelope?.points ?? [] {
      envelope.append([Double(point.time.frames), point.decibels])
    }
    return TrackView(
      id: track.id.description, name: track.name, gain: track.gain.decibels, pan: track.pan,
      muted: track.isMuted, solo: track.isSolo, envelope: envelope, clips: [])
  }

  private static func clip(_ clip: Clip, on track: Track.ID, _ peaks: Peaks?) -> ClipView {
    ClipView(
      id: clip.id.description, name: clip.name, track: track.description,
      start: clip.timelineStart.frames, length: clip.length.frames,
      fadeIn: clip.fadeIn.length.frames, fadeOut: clip.fadeOut.length.frames,
      gain: clip.gain.decibels, wave: wave(of: clip, peaks))
  }

  private static func markers(_ project: Project) -> [MarkerView] {
    var markers: [MarkerView] = []
    for marker in project.markers {
      markers.append(
        MarkerView(id: marker.id.description, name: marker.name, at: marker.position.frames))
    }
    return markers
  }

  /// Every version of the history.
  public static func history(_ history: History) -> HistoryView {
    HistoryView(
      head: history.head, versions: history.versions.map(Self.version), earlier: nil, total: nil)
  }

  /// The last versions of the head's line (read without the rest of the history: what the
  /// page shows, instant at a million versions).
  public static func history(_ window: HeadLineWindow) -> HistoryView {
    HistoryView(
      head: window.head, versions: window.entries.map(Self.version), earlier: window.earlier,
      total: window.total)
  }

  private static func version(_ entry: HistoryEntry) -> VersionView {
    VersionView(
      version: entry.version, parent: entry.parent, label: entry.label,
      date: entry.date.timeIntervalSince1970)
  }

  /// The sources' peaks, read once each (a source whose audio cannot be had: none, and it is
  /// not tried again). Reads files, and the first time decodes a source: call it off Swift's
  /// cooperative threads (``ViewServer`` does).
  private func waveforms(_ project: Project) -> [Source.ID: Peaks] {
    var sources: Set<Source.ID> = []
    for track in project.tracks {
      for clip in track.clips { sources.insert(clip.source) }
    }
    return waveforms(project, sources: sources)
  }

  /// The peaks of `sources` of `project` (and of every source read before).
  private func waveforms(_ project: Project, sources: Set<Source.ID>) -> [Source.ID: Peaks] {
    let have = known.withLock { $0 }
    let wanted = sources.subtracting(have.peaks.keys).subtracting(have.failed)
    if wanted.isEmpty { return have.peaks }
    var found: [Source.ID: Peaks] = [:]
    var failed: Set<Source.ID> = []
    for id in wanted {
      guard let source = project.source(id) else { continue }
      do {
        found[id] = try cache.peaks(for: source, projectRate: project.sampleRate)
      } catch .decodeStopped, .cancelled {
        // Stopped, not refused: left for the next look.
      } catch {
        failed.insert(id)
      }
    }
    return known.withLock { known in
      known.peaks.merge(found) { old, _ in old }
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
