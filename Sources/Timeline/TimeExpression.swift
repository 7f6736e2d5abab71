/// The times a person types for a place on the timeline, read against a project: what every
/// `tape` option that takes a time reads, and what an app's time field can read the same way.
///
/// Rule: a place is any time (`1.5`, `1.5s`, `250ms`, `1:02.5`, `96000f`); an edge of a clip,
/// `c3.start` or `c3.end`, by id or by name (`@verse.end`), with an offset if wanted
/// (`c3.end-100ms`, `@verse.start+2s`); a marker, `@chorus`, with an offset if wanted
/// (`@chorus+2s`); or, where there is a time to be relative to, a nudge from it (`+10ms`,
/// `-1s`). A result before the timeline's start, or past ``TimeValue/maximumFrames``, is refused.
///
/// Why: one reading for every place a time is typed (the command line, a batch line, `tape
/// shell`, an app), so that `@chorus+2s` means one frame wherever it is written.
///
/// What if a marker's name itself reads as a name and an offset (`take-2s`): the whole text
/// after `@` is tried as a name first, so the marker wins; `@drop.end` is a marker named
/// `drop.end` when one exists, else the end of the clip named `drop`.
///
/// ```swift
/// let at = try TimeExpression.position("@chorus+2s", in: project)
/// let nudged = try TimeExpression.position("-10ms", in: project, relativeTo: clip.timelineStart)
/// ```
public enum TimeExpression {
  /// `text` read as a place on the timeline (see ``TimeExpression``). `base` is the time a
  /// nudge (`+10ms`, `-1s`) is relative to, where the option has one (a clip's own start for
  /// a move); `option` names the option in an error (`--at`).
  public static func position(
    _ text: String, in project: Project, relativeTo base: FramePosition? = nil,
    option: String? = nil
  ) throws(TimelineError) -> FramePosition {
    let trimmed = text.trimmingBlanks
    let tooLarge = TimelineError.timeTooLarge(text, sampleRate: project.sampleRate, option: option)
    func time(_ text: Substring) throws(TimelineError) -> Int64 {
      do {
        return try TimeValue(parsing: String(text), sampleRate: project.sampleRate).frames.frames
      } catch .timeTooLarge {
        throw tooLarge
      }
    }
    func offset(_ sign: Character, _ text: Substring) throws(TimelineError) -> Int64 {
      let frames = try time(text)
      return sign == "-" ? -frames : frames
    }
    var position: Int64
    if let edge = clipEdge(trimmed) {
      guard let id = Clip.ID(parsing: String(edge.1)) else {
        throw .notAnID(String(edge.1), entity: Clip.entityName, prefix: Clip.idPrefix)
      }
      guard let (clip, _) = project.clip(id) else { throw .unknownClip(id) }
      position = (edge.2 == "start" ? clip.timelineStart : clip.timelineEnd).frames
      if let sign = edge.3?.first, let time = edge.4 { position += try offset(sign, time) }
    } else if let edge = namedClipEdge(trimmed, project) {
      guard let clip = project.clip(named: String(edge.1)) else {
        throw .unknownClipName(String(edge.1))
      }
      position = (edge.2 == "start" ? clip.timelineStart : clip.timelineEnd).frames
      if let sign = edge.3?.first, let time = edge.4 { position += try offset(sign, time) }
    } else if trimmed.hasPrefix("@") {
      position = try markerPosition(trimmed, project, offset: offset)
    } else if let sign = trimmed.first, sign == "+" || (sign == "-" && base != nil) {
      guard let base else { throw .nudgeWithoutBase(text) }
      position = base.frames + (try offset(sign, trimmed.dropFirst()))
    } else {
      position = try time(Substring(trimmed))
    }
    guard position <= TimeValue.maximumFrames.frames else { throw tooLarge }
    guard position >= 0 else {
      throw .timeBeforeStart(text, frames: FrameCount(-position), sampleRate: project.sampleRate)
    }
    return FramePosition(position)
  }

  /// `text` read as a time into a source (a clip's crop, `clip add --from`): a time from the
  /// source's start, never a place on the timeline (a clip's edge, a marker, a nudge), which
  /// would be taken for one without a word. `option` names the option in an error.
  public static func sourceTime(
    _ text: String, option: String, in project: Project
  ) throws(TimelineError) -> FramePosition {
    let trimmed = text.trimmingBlanks
    if clipEdge(trimmed) != nil || trimmed.hasPrefix("@") || trimmed.hasPrefix("+") {
      throw .timelinePlaceForSourceTime(trimmed, option: option)
    }
    do {
      return FramePosition(
        try TimeValue(parsing: trimmed, sampleRate: project.sampleRate).frames.frames)
    } catch .timeTooLarge(_, let rate, nil) {
      throw .timeTooLarge(trimmed, sampleRate: rate, option: option)
    }
  }

  /// `text` (trimmed) read as a clip's edge, `c3.end-100ms`: the clip id, the edge, and the
  /// offset's sign and time if any.
  public static func clipEdge(
    _ text: String
  ) -> Regex<(Substring, Substring, Substring, Substring?, Substring?)>.Match? {
    // A regex literal is compiled anew each time it is evaluated: a third of a batch's clip
    // adds went to compiling these two for times like `70s`, which cannot match.
    guard text.first == "c", mayNameAnEdge(text) else { return nil }
    return text.wholeMatch(of: /(c[0-9]+)\.(start|end)(?:([+-])(.+))?/)
  }

  /// Whether `text` holds `.start` or `.end`, as every clip edge does (a quick test before a
  /// regex that would cost far more).
  public static func mayNameAnEdge(_ text: String) -> Bool {
    text.utf8.contains(UInt8(ascii: ".")) && (text.contains(".start") || text.contains(".end"))
  }

  /// `text` (trimmed) read as a named clip's edge, `@verse.end-100ms`: the clip's name, the
  /// edge, and the offset's sign and time if any; nil when it is no such form, or when a
  /// marker is called by the text after `@` (`@drop.end`), or by it up to the offset
  /// (`@drop.end+1s`): markers are read first, as a marker's name that reads as an offset is.
  public static func namedClipEdge(
    _ text: String, _ project: Project
  ) -> Regex<(Substring, Substring, Substring, Substring?, Substring?)>.Match? {
    guard text.first == "@", mayNameAnEdge(text),
      let edge = text.wholeMatch(of: /@(.+)\.(start|end)(?:([+-])(.+))?/),
      project.marker(named: String(text.dropFirst())) == nil,
      project.marker(named: "\(edge.1).\(edge.2)") == nil
    else { return nil }
    return edge
  }

  /// The frame `@NAME`, `@NAME+TIME` or `@NAME-TIME` names: the marker's position, offset.
  /// The whole text after `@` is tried as a name first, then each split at a `+` or `-` (the
  /// last first) whose right side is a time.
  static func markerPosition(
    _ text: String, _ project: Project,
    offset: (Character, Substring) throws(TimelineError) -> Int64
  ) throws(TimelineError) -> Int64 {
    let body = text.dropFirst()
    guard !body.isEmpty else { throw .noMarkerNamed }
    if let marker = project.marker(named: String(body)) { return marker.position.frames }
    var split = body.endIndex
    var wanted = String(body)
    while let sign = body[..<split].lastIndex(where: { $0 == "+" || $0 == "-" }) {
      split = sign
      let name = String(body[..<sign])
      let time = body[body.index(after: sign)...]
      guard let first = time.first, first.isASCII, first.isNumber else { continue }
      if let marker = project.marker(named: name) {
        return marker.position.frames + (try offset(body[sign], time))
      }
      if (try? TimeValue(parsing: String(time), sampleRate: project.sampleRate)) != nil {
        wanted = name
      }
    }
    throw .unknownMarkerName(
      wanted, given: text,
      nearest: NameSuggestion.nearest(to: wanted, in: project.markers.map(\.name)),
      projectHasMarkers: !project.markers.isEmpty)
  }
}

/// The name meant by a typo: the closest of the names there are, when it is close enough.
///
/// Rule: the Damerau–Levenshtein distance (a swap of neighbours counts one), case ignored; a
/// name is suggested only within a third of the typed name's length (2 at least).
///
/// ```swift
/// NameSuggestion.nearest(to: "chrous", in: ["intro", "chorus"])  // "chorus"
/// ```
public enum NameSuggestion {
  /// The candidate closest to `name` by edit distance, when it is close enough to be a typo.
  public static func nearest(to name: String, in candidates: [String]) -> String? {
    let target = name.lowercased()
    var best: (String, Int)?
    for candidate in candidates {
      let distance = editDistance(target, candidate.lowercased())
      if distance < (best?.1 ?? Int.max) { best = (candidate, distance) }
    }
    guard let best, best.1 <= max(2, target.count / 3) else { return nil }
    return best.0
  }

  /// The Damerau–Levenshtein distance of two words (a swap of neighbours counts one).
  public static func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { rows[i][0] = i }
    for j in 0...b.count { rows[0][j] = j }
    for i in stride(from: 1, through: a.count, by: 1) {
      for j in stride(from: 1, through: b.count, by: 1) {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
        }
      }
    }
    return rows[a.count][b.count]
  }
}
