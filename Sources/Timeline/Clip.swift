/// One placement of a source's audio on a track: which frames of the source play, where on the
/// timeline, how loud, and with which fades.
///
/// A clip plays `sourceRange` of its source (the crop, at the project rate) starting at
/// `timelineStart`:
/// `out[timelineStart + i] += source[sourceRange.start + i] · gain · fade(i)` for
/// `0 ≤ i < sourceRange.count`. Clips are immutable values; the edit functions
/// (``split(at:newID:sampleRate:)``, ``trimmed(start:end:sampleRate:)``, ``moved(to:)``…) return
/// new clips.
///
/// ```swift
/// let clip = Clip(id: Clip.ID(1), source: Source.ID(1), timelineStart: 48_000,
///                 sourceRange: FrameRange(start: 0, count: 96_000))
/// clip.timelineRange  // [48000, 144000)
/// ```
public struct Clip: Sendable, Hashable, Codable, Identifiable, IdentifiedEntity, BitwiseCopyable {
  public typealias ID = EntityID<Clip>
  public static let idPrefix = "c"
  public static let entityName = "clip"

  public let id: ID
  public var source: Source.ID
  /// Where the clip's first frame plays on the timeline.
  public var timelineStart: FramePosition
  /// The crop: which frames of the source (at the project rate) the clip plays.
  public var sourceRange: FrameRange
  public var gain: Gain
  public var fadeIn: Fade
  public var fadeOut: Fade
  /// A name the clip can be called by (`@intro` where a clip id is taken), unique in the
  /// project (``validateName(_:)``); nil for none. A copy or a new part of it has none.
  public var name: String? {
    get { ClipName.text(of: nameNumber) }
    set { nameNumber = ClipName.number(of: newValue) }
  }
  /// The name as its number in ``ClipName``'s table (0 for none): what the clip stores, so
  /// that a clip holds no reference and copies as plain bytes.
  private var nameNumber: UInt32

  public init(
    id: ID, source: Source.ID, timelineStart: FramePosition, sourceRange: FrameRange,
    gain: Gain = .unity, fadeIn: Fade = .none, fadeOut: Fade = .none, name: String? = nil
  ) {
    self.id = id
    self.source = source
    self.timelineStart = timelineStart
    self.sourceRange = sourceRange
    self.gain = gain
    self.fadeIn = fadeIn
    self.fadeOut = fadeOut
    self.nameNumber = ClipName.number(of: name)
  }

  /// The most characters a clip's name has.
  public static let maximumNameLength = 64

  /// Refuses a clip name that is not 1–64 letters, digits, `-`, `_` and `.` starting with a
  /// letter or digit (so that `@NAME` reads as one word in a script), or that is written as an
  /// id (`c3`, `12`), which a command would read as one.
  public static func validateName(_ name: String) throws(TimelineError) {
    guard let first = name.unicodeScalars.first, name.count <= maximumNameLength,
      first.properties.isAlphabetic || ("0"..."9").contains(first),
      name.unicodeScalars.allSatisfy({
        $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)
      }), !Marker.looksLikeID(name)
    else { throw .invalidClipName(name) }
  }

  /// The clip's length in frames (the crop's length).
  public var length: FrameCount { sourceRange.count }

  /// The frames the clip covers on the timeline.
  public var timelineRange: FrameRange { FrameRange(start: timelineStart, count: length) }

  /// The first timeline frame after the clip.
  public var timelineEnd: FramePosition { timelineStart + length }
}

extension Clip: CustomReflectable {
  /// The clip as its fields, with its name as text: how `print`, `dump` and a failed test's
  /// message show it (the stored number would show instead).
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "id": id, "source": source, "timelineStart": timelineStart, "sourceRange": sourceRange,
        "gain": gain, "fadeIn": fadeIn, "fadeOut": fadeOut, "name": name as Any,
      ], displayStyle: .struct)
  }
}
