/// Why a timeline value or edit is invalid, with a message that says how to fix it.
///
/// Every case carries the values needed to explain itself; times are shown in seconds at the
/// project rate, in a form the command line accepts, so a hint can be typed back as is.
public enum TimelineError: Error, Sendable, Hashable, CustomStringConvertible {
  public enum FadeEnd: String, Sendable, Hashable {
    case fadeIn = "fade-in"
    case fadeOut = "fade-out"
  }

  case invalidTime(String)
  /// A time past ``TimeValue/maximumFrames``, as typed; `option` is the option it was given
  /// to, where the command line knows it (`--to`).
  case timeTooLarge(String, sampleRate: Int, option: String? = nil)
  case invalidGain(String)
  case invalidPan(String)
  case gainOutOfRange(what: String, decibels: Double)
  /// A gain typed on the command line, outside the range; `given` is the text as typed.
  case gainTypedOutOfRange(String)
  case panOutOfRange(track: Track.ID?, pan: Double)
  case unsupportedSampleRate(Int)
  case unsupportedChannelCount(Int)
  case unknownSource(Source.ID)
  case unknownTrack(Track.ID)
  case unknownClip(Clip.ID)
  case duplicateID(String)
  case emptyTrackName
  case pastTheTimeLimit(clip: Clip.ID, limit: FrameCount, sampleRate: Int)
  case controlCharacterInName(String)
  case invalidSource(Source.ID, reason: String)
  case nonPositiveLength(clip: Clip.ID)
  case negativeTimelineStart(clip: Clip.ID, start: FramePosition, sampleRate: Int)
  case cropOutsideSource(
    clip: Clip.ID, crop: FrameRange, source: Source.ID, sourceLength: FrameCount, sampleRate: Int)
  case fadeLongerThanClip(
    clip: Clip.ID, end: FadeEnd, fade: FrameCount, clipLength: FrameCount, sampleRate: Int)
  case fadesOverlap(
    clip: Clip.ID, fadeIn: FrameCount, fadeOut: FrameCount, clipLength: FrameCount, sampleRate: Int)
  case negativeFade(clip: Clip.ID, end: FadeEnd)
  case splitOutsideClip(clip: Clip.ID, at: FramePosition, range: FrameRange, sampleRate: Int)
  case trimInverted(clip: Clip.ID, start: FramePosition, end: FramePosition, sampleRate: Int)
  case sourceInUse(Source.ID, clips: [Clip.ID])
  case trackOrderMismatch
  case notJoinable(Clip.ID, Clip.ID)
  case emptyRange(FrameRange, sampleRate: Int)
  case emptyGap
  /// `envelope` names the envelope's owner as messages say it: `t1`, `f2 gain`, `pan of t1`.
  case noEnvelopePoint(
    envelope: String, time: FramePosition, points: [FramePosition], sampleRate: Int)
  case envelopePointWouldPass(
    envelope: String, from: FramePosition, to: FramePosition, other: FramePosition,
    sampleRate: Int)
  /// An automation lane's shape that is not `linear` or `hold`.
  case invalidAutomationShape(String)
  /// An automation value or lane refused, with the whole message (the port's range, a step
  /// port's `hold`).
  case invalidAutomation(String)
  case slipOutsideSource(clip: Clip.ID, offset: Int64, most: Int64, sampleRate: Int)
  case emptyClip
  case emptyEnvelope(track: Track.ID)
  case envelopeTimeOutOfRange(track: Track.ID, time: FramePosition, sampleRate: Int)
  case envelopeNotIncreasing(track: Track.ID, time: FramePosition, sampleRate: Int)
  case invalidEnvelopePoint(String)
  case invalidEnvelopeShape(String)
  case envelopeShapeInPoint(String)
  case rippleOverlap(
    removed: Clip.ID, range: FrameRange, staying: Clip.ID, track: Track.ID, envelope: Bool,
    sampleRate: Int)
  case envelopeShapeCount(given: Int, segments: Int)
  case envelopeShapeCountForAddedPoints(given: Int, points: Int)
  case edgeFadeDoesNotFit(
    clip: Clip.ID, end: FadeEnd, fade: FrameCount, room: FrameCount, otherFade: FrameCount,
    sampleRate: Int)
  case edgeFadesDoNotFit([EdgeFadeMisfit], sampleRate: Int)
  case crossfadeCurve(FadeCurve)
  case crossfadeDoesNotFit(clip: Clip.ID, crossfade: FrameCount, room: FrameCount, sampleRate: Int)
  case notAdjacent(
    left: Clip.ID, leftEnd: FramePosition, right: Clip.ID, rightStart: FramePosition,
    sameTrack: Bool, sampleRate: Int)
  case unknownEffect(Effect.ID)
  case invalidEffect(Effect.ID, reason: String)
  case effectPositionOutOfRange(Effect.ID, position: Int, chainLength: Int)
  case unknownMarker(Marker.ID)
  case unknownSend(Send.ID)
  /// An output or send that would feed a track into itself: the tracks along the loop, its
  /// first again at the end.
  case routingLoop([Track.ID])
  case duplicateMarkerName(String, existing: Marker.ID)
  case invalidMarkerName(String, reason: Marker.NameProblem)
  case negativeMarkerPosition(Marker.ID, position: FramePosition, sampleRate: Int)
  case invalidClipboardName(String)
  case invalidClipName(String)
  case duplicateClipName(String, existing: Clip.ID)
  case unknownClipName(String)
  case clipboardTrackCount(name: String, copied: [Track.ID], given: Int)
  case clipboardTrackGone(name: String, track: Track.ID)
  case clipboardSourceGone(name: String, source: Source.ID)
  case trackNamedTwice(Track.ID)
  /// No clipboard of this name; `pasting` when a paste asked for it (the message then says a
  /// clipboard cannot be pasted into another project).
  case unknownClipboard(String, known: [String], pasting: Bool = true)
  case invalidSnap(String)
  /// A punch (`tape record --punch-in/--punch-out`) reaching past the take recorded.
  case punchOutsideTake(punch: FrameRange, take: FrameRange, sampleRate: Int)
  /// `tape take use` given a clip that is no take (it plays, in no take group).
  case notATake(Clip.ID, track: Track.ID)
  /// `tape take use` while the take that plays was split or cut inside its range: choosing
  /// would swap one part and leave the others playing over the chosen take.
  case takeInParts(playing: Clip.ID, parts: [Clip.ID])
  /// Text given for an id of `entity` (`clip`, prefix `c`) that is no such id.
  case notAnID(String, entity: String, prefix: String)
  /// A nudge (`+10ms`, `-1s`) where there is no time to nudge from (``TimeExpression``).
  case nudgeWithoutBase(String)
  /// A place typed that comes to before the timeline's start, by `frames`.
  case timeBeforeStart(String, frames: FrameCount, sampleRate: Int)
  /// `@` alone, where a marker's name was wanted.
  case noMarkerNamed
  /// `@NAME` (as `given`) where no marker is named `name`; `nearest` is the name meant by a
  /// typo, if one is close.
  case unknownMarkerName(String, given: String, nearest: String?, projectHasMarkers: Bool)
  /// A place on the timeline (a clip's edge, a marker, a nudge) given for a time into a source.
  case timelinePlaceForSourceTime(String, option: String)

  public var description: String {
    switch self {
    case .notAnID(let text, let entity, let prefix):
      return
        "'\(text)' is not a \(entity) id; \(entity) ids look like \(prefix)1 ('tape ls' lists them)"
    case .nudgeWithoutBase(let text):
      return
        "'\(text)' is a nudge, and this option has no time to nudge from; give a time (1.5s, 1:02.5) or a clip's edge (c3.end, c3.start+2s)"
    case .timeBeforeStart(let text, let frames, let rate):
      return
        "'\(text)' comes to \(TimeValue.seconds(frames, sampleRate: rate)) before the timeline's start; times are 0 or later"
    case .noMarkerNamed:
      return "'@' names no marker; write @NAME ('tape marker ls' lists them)"
    case .unknownMarkerName(let name, let given, let nearest, let hasMarkers):
      let what = "\(given): no marker '\(name)'"
      guard hasMarkers else {
        return "\(what); this project has no markers yet (tape marker add FILE TIME NAME)"
      }
      return what + (nearest.map { "; did you mean '\($0)'?" } ?? "")
        + " ('tape marker ls' lists them)"
    case .timelinePlaceForSourceTime(let text, let option):
      return
        "\(option) \(text) names a place on the timeline, but \(option) is a time in the source (from its start): give one, such as 2.5s or 1:02.5"
    case .invalidTime(let text) where text.trimmingPrefix(" ").hasPrefix("-"):
      return "'\(text)' is negative; times and lengths are 0 or more"
    case .invalidTime(let text):
      return
        "'\(text)' is not a time; write seconds (1.5 or 1.5s), milliseconds (250ms), a clock (1:02.5 or 01:02:03.250) or frames (96000f)"
    case .timeTooLarge(let text, let rate, let option):
      let limit = TimeValue.maximumFrames
      return
        "\(option.map { "\($0) \(text)" } ?? "'\(text)'") is more than \(TimeValue.clock(limit, sampleRate: rate)) (\(limit.frames)f), the largest time Tape handles; give \(option ?? "it") a smaller time"
    case .invalidGain(let text):
      return "'\(text)' is not a gain; write decibels such as -3, -3dB or +2.5dB"
    case .invalidPan(let text):
      return
        "'\(text)' is not a pan position; write a number from -1 (left) through 0 (centre) to 1 (right)"
    case .gainOutOfRange(let what, let dB):
      if !dB.isFinite {
        return
          "\(what) \(dB) dB is not a finite gain; use a value from \(formatDecimal(Gain.minimumDecibels)) to +\(formatDecimal(Gain.maximumDecibels)) dB (mute the track to silence it)"
      }
      return
        "\(what) \(Gain(decibels: dB)) is out of range; use a value from \(formatDecimal(Gain.minimumDecibels)) to +\(formatDecimal(Gain.maximumDecibels)) dB"
    case .gainTypedOutOfRange(let given):
      var number = Substring(given)
      if number.lowercased().hasSuffix("db") { number = number.dropLast(2) }
      return
        "gain \(number.trimmingBlanks) dB is out of range; use a value from \(formatDecimal(Gain.minimumDecibels)) to +\(formatDecimal(Gain.maximumDecibels)) dB"
    case .panOutOfRange(let track, let pan):
      let whose = track.map { "pan of track \($0)" } ?? "pan"
      return
        "\(whose) \(pan) is outside -1…1; use -1 (left), 0 (centre), 1 (right) or a value between"
    case .unsupportedSampleRate(let rate):
      return "sample rate \(rate) Hz is not supported; use one of "
        + Project.supportedSampleRates.map(String.init).joined(separator: ", ")
    case .unsupportedChannelCount(let n):
      return "\(n) output channels are not supported; use 1 (mono) or 2 (stereo)"
    case .unknownSource(let id):
      return "no source \(id) in this project; 'tape ls' lists the sources"
    case .unknownTrack(let id):
      return "no track \(id) in this project; 'tape ls' lists the tracks"
    case .unknownClip(let id):
      return "no clip \(id) in this project; 'tape ls' lists the clips"
    case .unknownEffect(let id):
      return "no effect \(id) in this project; 'tape fx ls' lists the effects"
    case .invalidEffect(let id, let reason):
      return "effect \(id) is not valid: \(reason)"
    case .effectPositionOutOfRange(_, let position, let length):
      // For an effect being added (whose id is new) or moved: its places, without naming an
      // option (add takes --at, move --to).
      return
        "position \(position) is outside the chain: its places run from 0 (first) to \(max(length - 1, 0)); give one of those"
    case .unknownSend(let id):
      return "no send \(id) in this project; 'tape send ls' lists the sends"
    case .routingLoop(let loop):
      let path = loop.map(\.description).joined(separator: " → ")
      let first = loop.first.map(\.description) ?? "the track"
      return
        "\(path) is a loop: \(first) would feed itself; route to a track that does not lead back to \(first) (or to the master, --output master), or remove the send that closes the loop"
    case .unknownMarker(let id):
      return "no marker \(id) in this project; 'tape marker ls' lists the markers"
    case .duplicateMarkerName(let name, let existing):
      return
        "marker \(existing) is already named '\(name)'; marker names are unique (rename it with 'tape marker rename FILE \(existing) NAME', or choose another name)"
    case .invalidMarkerName(let name, let reason):
      switch reason {
      case .blank: return "a marker's name cannot be empty; give it a word such as chorus"
      case .controlCharacter:
        let shown = name.unicodeScalars.map { scalar in
          scalar.properties.generalCategory == .control
            ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
        }.joined()
        return
          "the marker name \"\(shown)\" holds a control character (a newline, a tab…); use a name on one line"
      case .blanksAround:
        return "the marker name '\(name)' starts or ends with a blank; write it without them"
      case .idForm:
        return
          "'\(name)' looks like an id (m1, c3, 12); a marker's name must not, so that @NAME never means an id: use a word such as chorus or bar 12"
      case .at:
        return
          "the marker name '\(name)' starts with @; name it without the @ (it is written @NAME where a time is taken)"
      case .readsAsOffset(let suffix):
        let base = name.dropLast(suffix.count)
        let shown = "\(base) \(suffix.dropFirst())"
        return
          "the marker name '\(name)' ends in '\(suffix)', which reads as an offset (@\(name) would also mean \(suffix.dropFirst()) \(suffix.first == "-" ? "before" : "after") @\(base)); name it '\(shown)' or '\(base)_\(suffix.dropFirst())'"
      case .tooLong(let count):
        return
          "the marker name is \(count) characters long; a marker's name has at most \(Marker.maximumNameLength): shorten it"
      }
    case .negativeMarkerPosition(let id, let position, let rate):
      return
        "marker \(id) would be at \(TimeValue.seconds(FrameCount(position.frames), sampleRate: rate)), before the timeline's start; times are 0 or later"
    case .duplicateID(let id):
      return "\(id) is already used in this project; every id must be unique"
    case .controlCharacterInName(let name):
      let shown = name.unicodeScalars.map { scalar in
        scalar.properties.generalCategory == .control
          ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
      }.joined()
      return
        "the track name \"\(shown)\" holds a control character (a newline, a tab…); use a name on one line"
    case .pastTheTimeLimit(let clip, let limit, let rate):
      return
        "clip \(clip) would end past \(TimeValue.clock(limit, sampleRate: rate)) (\(limit.frames)f), the latest time Tape handles; place it earlier"
    case .emptyTrackName:
      return "a track name cannot be empty; give it a name such as \"Drums\""
    case .invalidSource(let id, let reason):
      return "source \(id) is invalid: \(reason)"
    case .nonPositiveLength(let clip):
      return "clip \(clip) would be empty; a clip must be at least one frame long"
    case .negativeTimelineStart(let clip, let start, let rate):
      return
        "clip \(clip) would start at \(TimeValue.seconds(FrameCount(start.frames), sampleRate: rate)), before the timeline starts; use a position of 0 or later"
    case .cropOutsideSource(let clip, let crop, let source, let length, let rate):
      let s = { (p: FramePosition) in TimeValue.seconds(FrameCount(p.frames), sampleRate: rate) }
      if crop.start < .zero {
        return
          "clip \(clip) would start \(TimeValue.seconds(FrameCount(-crop.start.frames), sampleRate: rate)) before the beginning of source \(source); start it at or after the source's first frame"
      }
      return
        "clip \(clip) plays \(s(crop.start))–\(s(crop.end)) of source \(source), which is only \(TimeValue.seconds(length, sampleRate: rate))\(TimeValue.exact(length, sampleRate: rate).hasSuffix("f") ? " (\(length.frames)f)" : "") long; end it at \(TimeValue.exact(length, sampleRate: rate)) or earlier"
    case .fadeLongerThanClip(let clip, let end, let fade, let length, let rate):
      let flag = end == .fadeIn ? "--fade-in" : "--fade-out"
      return
        "\(end.rawValue) \(TimeValue.seconds(fade, sampleRate: rate)) is longer than clip \(clip) (\(TimeValue.seconds(length, sampleRate: rate))); use \(flag) \(TimeValue.exact(length, sampleRate: rate)) or less"
    case .fadesOverlap(let clip, let fadeIn, let fadeOut, let length, let rate):
      let s = { (n: FrameCount) in TimeValue.seconds(n, sampleRate: rate) }
      return
        "fade-in \(s(fadeIn)) and fade-out \(s(fadeOut)) together are longer than clip \(clip) (\(s(length))); shorten them so they add up to \(s(length)) or less"
    case .negativeFade(let clip, let end):
      return "\(end.rawValue) of clip \(clip) cannot be negative; use 0 for no fade"
    case .splitOutsideClip(let clip, let at, let range, let rate):
      let s = { (p: FramePosition) in TimeValue.seconds(FrameCount(p.frames), sampleRate: rate) }
      return
        "\(s(at)) is not inside clip \(clip), which spans \(s(range.start))–\(s(range.end)); split strictly between its edges"
    case .trimInverted(let clip, let start, let end, let rate):
      let s = { (p: FramePosition) in TimeValue.seconds(FrameCount(p.frames), sampleRate: rate) }
      return
        "trimming clip \(clip) to \(s(start))–\(s(end)) would leave nothing; the start must be before the end"
    case .sourceInUse(let source, let clips):
      let list = clips.prefix(5).map(\.description).joined(separator: ", ")
      return
        "source \(source) is still used by clip\(clips.count == 1 ? "" : "s") \(list)\(clips.count > 5 ? ", …" : ""); remove those clips first"
    case .trackOrderMismatch:
      return "a new track order must list every track of the project exactly once"
    case .emptyEnvelope(let track):
      return "the envelope of track \(track) has no points; give TIME:GAIN pairs, or --clear it"
    case .envelopeTimeOutOfRange(let track, let time, let rate):
      return
        "an envelope point of track \(track) at \(TimeValue.seconds(FrameCount(time.frames), sampleRate: rate)) is outside the timeline; use times from 0 to the latest time Tape handles"
    case .envelopeNotIncreasing(let track, let time, let rate):
      return
        "the envelope points of track \(track) must be in time order, each later than the one before; \(TimeValue.seconds(FrameCount(time.frames), sampleRate: rate)) is not"
    case .invalidEnvelopePoint(let text):
      return
        "'\(text)' is not an envelope point; write TIME:GAIN, for example 10s:-6dB or 12s:-inf"
    case .invalidAutomationShape(let text):
      return "'\(text)' is not an automation shape; use linear or hold"
    case .invalidAutomation(let message):
      return message
    case .invalidEnvelopeShape(let text):
      let names = EnvelopeShape.allCases.map(\.rawValue).joined(separator: ", ")
      return "'\(text)' is not an envelope shape; use \(names)"
    case .envelopeShapeCount(let given, let segments):
      return
        "\(given) shapes for \(segments) segment\(segments == 1 ? "" : "s"); give one shape for all, or one per segment (a segment runs from one point to the next)"
    case .envelopeShapeCountForAddedPoints(let given, let points):
      return
        "\(given) shapes for \(points) added point\(points == 1 ? "" : "s"); give one shape for all, or one per point (each shapes the segment it starts)"
    case .envelopeShapeInPoint(let text):
      return "'\(text)' is not an envelope point; write TIME:GAIN and give shapes with --shape"
    case .rippleOverlap(let removed, let range, let staying, let track, let envelope, let rate):
      let exact = { (p: FramePosition) in TimeValue.exact(FrameCount(p.frames), sampleRate: rate) }
      return
        "\(staying) overlaps \(removed) and would stay where it is while the clips after \(removed)\(envelope ? " and the envelope of \(track)" : "") moved left under it; remove \(removed) without --ripple, or cut its time, which cuts \(staying) too: tape cut FILE --from \(exact(range.start)) --to \(exact(range.end)) --tracks \(track) --ripple"
    case .emptyClip:
      return "the clip would be empty: its end in the source must come after --from"
    case .slipOutsideSource(let clip, let offset, let most, let rate):
      let signed = { (n: Int64) in
        (n < 0 ? "-" : "") + TimeValue.exact(FrameCount(abs(n)), sampleRate: rate)
      }
      let side = offset < 0 ? "before the start" : "past the end"
      guard most != 0 else {
        return
          "slipping \(clip) by \(signed(offset)) would read \(side) of its source, and it already plays up to that end; slip the other way"
      }
      return
        "slipping \(clip) by \(signed(offset)) would read \(side) of its source; slip by \(signed(most)) at most"
    case .noEnvelopePoint(let track, let time, let points, let rate):
      let exact = { (p: FramePosition) in TimeValue.exact(FrameCount(p.frames), sampleRate: rate) }
      guard !points.isEmpty else {
        return "\(track) has no envelope; give it points with --add or --set"
      }
      return
        "\(track) has no envelope point at \(exact(time)); its points are at \(points.map(exact).joined(separator: ", "))"
    case .envelopePointWouldPass(let track, let from, let to, let other, let rate):
      let exact = { (p: FramePosition) in TimeValue.exact(FrameCount(p.frames), sampleRate: rate) }
      return
        "moving the point of \(track) at \(exact(from)) to \(exact(to)) would pass or land on its point at \(exact(other)); points keep their order: remove that one first, or move it too"
    case .emptyGap:
      return "a gap of no time inserts nothing; give --length more than 0"
    case .emptyRange(let range, let rate):
      let s = { (p: FramePosition) in TimeValue.seconds(FrameCount(p.frames), sampleRate: rate) }
      return
        "the range \(s(range.start))–\(s(range.end)) is empty; --to must come after --from (or --length be more than 0)"
    case .crossfadeCurve(let curve):
      return
        "a crossfade needs two curves that add up to a steady level, and \(curve.displayName) has no partner; use equal-power (two different recordings), linear or s-curve (the same recording either side)"
    case .crossfadeDoesNotFit(let clip, let crossfade, let room, let rate):
      let seconds = { (n: FrameCount) in TimeValue.seconds(n, sampleRate: rate) }
      guard room > .zero else {
        return
          "a \(seconds(crossfade)) crossfade does not fit clip \(clip): its other fade fills it; shorten that fade first"
      }
      return
        "a \(seconds(crossfade)) crossfade does not fit clip \(clip) beside its other fade; make it \(TimeValue.exact(room, sampleRate: rate)) or shorter"
    case .notAdjacent(let left, let leftEnd, let right, let rightStart, let sameTrack, let rate):
      let exact = { (p: FramePosition) in TimeValue.exact(FrameCount(p.frames), sampleRate: rate) }
      guard sameTrack else {
        return
          "\(left) and \(right) are on different tracks; a crossfade joins two clips of one track (move one with tape clip move … --track)"
      }
      if left == right {
        return
          "\(left) is named twice; a crossfade joins two clips of one track, the first ending where the second starts"
      }
      if rightStart < leftEnd {
        // Overlapping (a crossfade made before), or named in the wrong order: moving the
        // second clip would shift its audio; trimming the first keeps both in place.
        return
          "\(left) ends at \(exact(leftEnd)), after \(right) starts at \(exact(rightStart)); a crossfade joins clips that touch: trim \(left) to end there first (tape clip trim FILE \(left) --end \(exact(rightStart))), or, if \(right) comes first, name it first (tape clip crossfade FILE \(right) \(left) …)"
      }
      return
        "\(left) ends at \(exact(leftEnd)) and \(right) starts at \(exact(rightStart)); a crossfade joins clips that touch: move \(right) to \(exact(leftEnd)) first (tape clip move FILE \(right) --to \(exact(leftEnd)))"
    case .edgeFadeDoesNotFit(let clip, let end, let fade, let room, let otherFade, let rate):
      let edge = end == .fadeIn ? "start" : "end"
      let other = end == .fadeIn ? "fade-out" : "fade-in"
      let seconds = { (n: FrameCount) in TimeValue.seconds(n, sampleRate: rate) }
      guard room > .zero else {
        return
          "a \(seconds(fade)) fade does not fit at the new \(edge) of clip \(clip): its \(other) fills what is left of it; cut without --crossfade, or elsewhere"
      }
      let left =
        otherFade > .zero
        ? "\(seconds(room)) is left beside its \(other)"
        : "it is \(seconds(room)) long after the cut"
      return
        "a \(seconds(fade)) fade does not fit at the new \(edge) of clip \(clip) (\(left)); use --crossfade \(TimeValue.exact(room, sampleRate: rate)) or less"
    case .edgeFadesDoNotFit(let misfits, let rate):
      let seconds = { (n: FrameCount) in TimeValue.seconds(n, sampleRate: rate) }
      let each = misfits.map { misfit in
        "\(misfit.clip) (at its new \(misfit.end == .fadeIn ? "start" : "end"), \(seconds(misfit.room)) left)"
      }
      let room = misfits.map(\.room).min() ?? .zero
      let fix =
        room > .zero
        ? "use --crossfade \(TimeValue.exact(room, sampleRate: rate)) or less"
        : "cut without --crossfade, or elsewhere"
      return
        "a \(seconds(misfits[0].fade)) fade does not fit beside the other fade of \(misfits.count) clips: \(each.joined(separator: ", ")); \(fix)"
    case .invalidClipName(let name):
      return
        "'\(name)' is not a clip name; use 1 to \(Clip.maximumNameLength) letters, digits, '-', '_' and '.', starting with a letter or digit, and not an id's form such as c3"
    case .duplicateClipName(let name, let existing):
      return
        "clip \(existing) is already named '\(name)'; clip names are unique (rename it with 'tape clip set FILE \(existing) --name NAME', or choose another name)"
    case .unknownClipName(let name):
      return "no clip is named '\(name)'; 'tape ls' shows the clips' names"
    case .invalidClipboardName(let name):
      return
        "'\(name)' is not a clipboard name; use 1 to \(Clipboard.maximumNameLength) letters, digits, '-', '_' and '.', starting with a letter or digit"
    case .clipboardTrackCount(let name, let copied, let given):
      let list = copied.map(\.description).joined(separator: ",")
      return
        "clipboard \(name) holds \(copied.count) track\(copied.count == 1 ? "" : "s") (\(list)) and --tracks names \(given); name \(copied.count), in that order (the first takes what was copied from \(copied.first?.description ?? "it"))"
    case .clipboardTrackGone(let name, let track):
      return
        "clipboard \(name) was copied from track \(track), which is no longer in the project; paste it onto other tracks with --tracks"
    case .clipboardSourceGone(let name, let source):
      return
        "clipboard \(name) plays audio of source \(source), which is no longer in the project; import the file again and copy the range again"
    case .unknownClipboard(let name, let known, let pasting):
      let list =
        known.isEmpty
        ? "it has none"
        : "it has \(known.joined(separator: ", ")); 'tape copy FILE --list' lists them"
      guard pasting else { return "no clipboard \(name) in this project (\(list))" }
      return
        "no clipboard \(name) in this project (\(list)); a clipboard belongs to the project it was copied in: pasting into another project is not supported"
    case .takeInParts(let playing, let parts):
      let list = parts.map(\.description).joined(separator: ", ")
      return
        "take \(playing) plays in parts (\(list) \(parts.count == 1 ? "was" : "were") split or cut from it); choosing another would leave \(parts.count == 1 ? "it" : "them") playing over it: remove \(list) (tape clip rm FILE \(list)) or undo the split first"
    case .notATake(let id, let track):
      return
        "clip \(id) is no take (it was not recorded with --loop); 'tape take ls FILE \(track)' lists the takes of its track"
    case .punchOutsideTake(let punch, let take, let rate):
      let clock = { (position: FramePosition) in
        TimeValue.clock(FrameCount(position.frames), sampleRate: rate)
      }
      return
        "the punch \(clock(punch.start))–\(clock(punch.end)) (its crossfades included) reaches past the take, recorded for \(clock(take.start))–\(clock(take.end)); play from earlier with --from, or to later with --to"
    case .invalidSnap(let text):
      return
        "'\(text)' is not a snap; use clips (the nearest clip edge within 100 ms), zero (the nearest zero crossing within 10 ms) or a grid: a time (500ms, 0.25s, 1200f) or a note at a tempo (1/4@120bpm)"
    case .trackNamedTwice(let track):
      return "\(track) is named twice in --tracks; name each track once"
    case .notJoinable(let left, let right):
      return
        "clips \(left) and \(right) cannot be joined; the second must continue the first in the same source, on the timeline, with the same gain and no fade between them"
    }
  }
}
