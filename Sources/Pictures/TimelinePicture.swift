public import Timeline

#if canImport(Glibc)
  import Glibc
#endif

/// A picture of a project's timeline as SVG: a ruler with times, one lane per track (its name,
/// gain, pan, mute and solo, effects), each clip a box to scale with its id and its waveform,
/// fades drawn as their curves, overlaps marked, markers; or two versions, with the clips that
/// were added, removed, moved or changed marked.
///
/// Geometry (documented in the README, relied on by scripts and tests): the picture is
/// ``width`` pixels wide; the timeline occupies `x = 180 … width − 12`, so with
/// `A = width − 192` pixels for `range`, timeline frame `f` is at
/// `x = 180 + (f − range.start) · A / range.count`. Pixel column `k` (`0 ≤ k < A`) covers the
/// frames `range.start + ⌊k · count / A⌋ ..< range.start + ⌊(k + 1) · count / A⌋` (at least one),
/// and a clip's waveform there is the smallest and largest sample, times the clip's gain, of
/// the peak blocks its source frames in that column touch (``Peaks/extremes(in:)``), all
/// channels together.
///
/// The same inputs give the same bytes: nothing depends on the time, the machine or a
/// dictionary's order.
///
/// ```swift
/// let picture = TimelinePicture(
///   project: project, range: FrameRange(start: 0, count: 480_000), width: 1200,
///   title: "song.tape · version 12", peaks: peaks)
/// let svg = picture.svg()
/// ```
public struct TimelinePicture: Sendable {
  /// Two versions to compare: the picture shows ``TimelinePicture/project`` (the newer) and
  /// marks what differs from `before`.
  public struct Comparison: Sendable {
    public var before: Project
    public var diff: ProjectDiff

    public init(before: Project, diff: ProjectDiff) {
      self.before = before
      self.diff = diff
    }
  }

  /// Where the timeline starts, in pixels from the left: the track headers are left of it.
  public static let timelineLeft = 180
  /// The margin right of the timeline, in pixels.
  public static let rightMargin = 12
  /// The narrowest picture drawn, and the widest.
  public static let widths = 400...16_384

  public var project: Project
  /// The frames drawn; not empty.
  public var range: FrameRange
  public var width: Int
  /// The first line of the picture (the project's name, the version).
  public var title: String
  /// The waveform overview of each source whose clips show one.
  public var peaks: [Source.ID: Peaks]
  /// Sources whose audio could not be read: their clips are drawn without a waveform, saying so.
  public var unavailable: Set<Source.ID>
  public var comparison: Comparison?

  public init(
    project: Project, range: FrameRange, width: Int, title: String,
    peaks: [Source.ID: Peaks] = [:], unavailable: Set<Source.ID> = [],
    comparison: Comparison? = nil
  ) {
    precondition(!range.isEmpty && Self.widths.contains(width))
    self.project = project
    self.range = range
    self.width = width
    self.title = title
    self.peaks = peaks
    self.unavailable = unavailable
    self.comparison = comparison
  }

  /// The picture, as a complete SVG document.
  public func svg() -> String {
    var drawing = Drawing(picture: self)
    return drawing.document()
  }
}

/// One drawing of a ``TimelinePicture``: its geometry and the text being written.
private struct Drawing {
  let picture: TimelinePicture
  let project: Project
  let rate: Int
  let from: Int64
  let span: Int64
  /// Pixels of timeline.
  let area: Int
  let left: Double
  /// The clip changes of the comparison, by clip.
  let changes: [Clip.ID: ProjectDiff.ClipChange]
  /// The marker band's labels (``markerLayout()``).
  var markerLabels: [MarkerLabel] = []
  var out = ""

  // Vertical layout, in pixels.
  static let titleHeight = 26.0
  static let markerBand = 18.0
  static let rulerHeight = 24.0
  static let laneHeight = 72.0
  static let laneGap = 4.0
  static let labelBand = 14.0
  static let legendHeight = 30.0

  static let palette = [
    "#4e79a7", "#59a14f", "#b07aa1", "#9c755f", "#76b7b2", "#e15759", "#f28e2b", "#8a8a2a",
  ]
  static let silentColour = "#9a9a9a"
  static let envelopeColour = "#d4a017"
  /// A pan lane's, a send envelope's and an effect parameter's lines.
  static let panColour = "#8e44ad"
  static let sendColour = "#17becf"
  static let automationColour = "#e377c2"
  static let crossfadeColour = "#1f77b4"
  /// Clips narrower than this many pixels are drawn together (``drawDense(_:top:colour:)``).
  static let denseWidth = 2.0
  static let statusColours = [
    "added": "#2ca02c", "removed": "#d62728", "moved": "#1f77b4", "changed": "#ff8c00",
  ]

  init(picture: TimelinePicture) {
    self.picture = picture
    project = picture.project
    rate = picture.project.sampleRate
    from = picture.range.start.frames
    span = picture.range.count.frames
    area = picture.width - TimelinePicture.timelineLeft - TimelinePicture.rightMargin
    left = Double(TimelinePicture.timelineLeft)
    changes = Dictionary(
      (picture.comparison?.diff.clips ?? []).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    markerLabels = markerLayout()
  }

  // MARK: Geometry

  /// The x of timeline frame `frame`.
  func x(_ frame: Int64) -> Double {
    left + Double(frame - from) * Double(area) / Double(span)
  }

  /// The frames pixel column `column` covers (at least one).
  func columnFrames(_ column: Int) -> Range<Int64> {
    let start = from + Int64(column) * span / Int64(area)
    let end = from + Int64(column + 1) * span / Int64(area)
    return start..<max(end, start + 1)
  }

  /// The columns that frames `range` (timeline) falls in, clamped to the picture.
  func columns(of range: Range<Int64>) -> Range<Int> {
    guard range.upperBound > from, range.lowerBound < from + span else { return 0..<0 }
    // The first column whose frames reach past range.lowerBound; the last that starts before
    // range.upperBound. Found from the floor formula, then nudged (it is exact up to one).
    func column(containing frame: Int64) -> Int {
      var guess = Int(
        min(Int64(area - 1), max(0, (frame - from) * Int64(area) / span)))
      while guess > 0 && columnFrames(guess).lowerBound > frame { guess -= 1 }
      while guess < area - 1 && columnFrames(guess + 1).lowerBound <= frame { guess += 1 }
      return guess
    }
    let first = column(containing: max(range.lowerBound, from))
    let last = column(containing: min(range.upperBound, from + span) - 1)
    return first..<(last + 1)
  }

  var hasMarkers: Bool { !project.markers.isEmpty || comparison?.before.markers.isEmpty == false }
  var comparison: TimelinePicture.Comparison? { picture.comparison }

  var rulerTop: Double {
    let rows = Double(max(1, (markerLabels.map(\.row).max() ?? 0) + 1))
    return Self.titleHeight + (hasMarkers ? Self.markerBand + 12 * (rows - 1) : 0)
  }
  var lanesTop: Double { rulerTop + Self.rulerHeight + 4 }
  func laneTop(_ index: Int) -> Double {
    lanesTop + Double(index) * (Self.laneHeight + Self.laneGap)
  }

  /// The lanes drawn: every track of the project, then (comparing) the tracks only the older
  /// version has.
  var lanes: [(track: Track, removed: Bool)] {
    var lanes = project.tracks.map { (track: $0, removed: false) }
    if let comparison {
      let present = Set(project.tracks.map(\.id))
      lanes += comparison.before.tracks.filter { !present.contains($0.id) }.map {
        (track: $0, removed: true)
      }
    }
    return lanes
  }

  var lanesBottom: Double { laneTop(max(lanes.count, 1)) - Self.laneGap }
  var height: Double { lanesBottom + 8 + (comparison == nil ? 0 : Self.legendHeight) }

  // MARK: Writing

  mutating func line(_ text: String) {
    out += text
    out += "\n"
  }

  func n(_ value: Double) -> String { SVGText.number(value) }
  func n(_ value: Int) -> String { "\(value)" }
  func text(_ value: String) -> String { SVGText.escaped(value) }

  func clock(_ frames: Int64) -> String {
    TimeValue.clock(FrameCount(frames), sampleRate: rate)
  }

  mutating func document() -> String {
    let width = picture.width
    let height = height
    line("<?xml version='1.0' encoding='UTF-8'?>")
    line(
      "<svg xmlns='http://www.w3.org/2000/svg' width='\(width)' height='\(n(height))' viewBox='0 0 \(width) \(n(height))' font-family='DejaVu Sans, Verdana, sans-serif' font-size='11' data-from='\(from)' data-to='\(from + span)' data-sample-rate='\(rate)' data-timeline-left='\(TimelinePicture.timelineLeft)' data-timeline-width='\(area)'>"
    )
    var heading = "\(picture.title) · \(clock(from))–\(clock(from + span)) · \(rate) Hz"
    if project.masterGain != .unity { heading += " · master \(project.masterGain)" }
    if !project.masterEffects.isEmpty {
      heading += " · master fx " + Self.chain(project.masterEffects)
    }
    line("<title>\(text(heading))</title>")
    line("<defs>")
    line(
      "<clipPath id='timeline'><rect x='\(n(left))' y='0' width='\(area)' height='\(n(height))'/></clipPath>"
    )
    line(
      "<clipPath id='headers'><rect x='0' y='0' width='\(n(left - 8))' height='\(n(height))'/></clipPath>"
    )
    line(
      "<pattern id='overlap-hatch' width='8' height='8' patternUnits='userSpaceOnUse' patternTransform='rotate(45)'><rect x='0' y='0' width='3' height='8' fill='#ff7f0e' fill-opacity='0.55'/></pattern>"
    )
    line(
      "<marker id='arrow' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='7' markerHeight='7' orient='auto'><path d='M0 0L10 5L0 10Z' fill='#1f77b4'/></marker>"
    )
    line("</defs>")
    line(
      "<rect class='background' x='0' y='0' width='\(width)' height='\(n(height))' fill='#ffffff'/>"
    )
    line(
      "<text class='title' x='8' y='17' font-size='13' font-weight='bold' fill='#222222'>\(text(SVGText.truncated(heading, toCharacters: SVGText.characters(fitting: Double(width) - 16, size: 13))))</text>"
    )
    ruler()
    for (index, lane) in lanes.enumerated() {
      self.lane(lane.track, index: index, removed: lane.removed)
    }
    if lanes.isEmpty {
      line(
        "<text class='empty' x='\(n(left + 8))' y='\(n(laneTop(0) + 30))' fill='#666666'>no tracks: add one with tape track add</text>"
      )
    }
    markers()
    if comparison != nil {
      moveArrows()
      legend()
    }
    line("</svg>")
    return out
  }

  // MARK: Ruler and markers

  /// Label steps in milliseconds, each with how many minor ticks divide it.
  static let steps: [(milliseconds: Int64, divisions: Int64)] = [
    (1, 5), (2, 4), (5, 5), (10, 5), (20, 4), (50, 5), (100, 5), (200, 4), (500, 5),
    (1_000, 5), (2_000, 4), (5_000, 5), (10_000, 5), (15_000, 3), (30_000, 3), (60_000, 4),
    (120_000, 4), (300_000, 5), (600_000, 5), (900_000, 3), (1_800_000, 3), (3_600_000, 4),
    (7_200_000, 4), (21_600_000, 6), (43_200_000, 4), (86_400_000, 4),
  ]

  /// The label step: the first whose labels stand at least 80 pixels apart.
  var step: (milliseconds: Int64, divisions: Int64) {
    let pixelsPerMillisecond = Double(rate) / 1_000 * Double(area) / Double(span)
    for step in Self.steps where Double(step.milliseconds) * pixelsPerMillisecond >= 80 {
      return step
    }
    let day = Self.steps[Self.steps.count - 1].milliseconds
    let days = Int64((80 / (Double(day) * pixelsPerMillisecond)).rounded(.up))
    return (day * max(days, 1), 4)
  }

  /// `1:05`, `1:05.5`, `1:05.25`, `1:05.125`, `2:01:05`: as many decimals as the step needs.
  static func tickLabel(_ milliseconds: Int64, step: Int64) -> String {
    let decimals = step % 1_000 == 0 ? 0 : step % 100 == 0 ? 1 : step % 10 == 0 ? 2 : 3
    let seconds = milliseconds / 1_000
    let pad = { (value: Int64) in value < 10 ? "0\(value)" : "\(value)" }
    var label =
      seconds >= 3_600
      ? "\(seconds / 3_600):\(pad(seconds / 60 % 60)):\(pad(seconds % 60))"
      : "\(seconds / 60):\(pad(seconds % 60))"
    if decimals > 0 {
      let fraction = String(String(milliseconds % 1_000 + 1_000).dropFirst().prefix(decimals))
      label += "." + fraction
    }
    return label
  }

  mutating func ruler() {
    let top = rulerTop
    let bottom = top + Self.rulerHeight
    line("<g class='ruler'>")
    line(
      "<rect x='\(n(left))' y='\(n(top))' width='\(area)' height='\(n(Self.rulerHeight))' fill='#eeeeee'/>"
    )
    let step = step
    // In microseconds, so that a minor tick of a 1 ms step is not 0.
    let major = step.milliseconds * 1_000
    let minor = major / step.divisions
    let secondsPerFrame = 1 / Double(rate)
    let first = (Double(from) * secondsPerFrame * 1_000_000 / Double(minor)).rounded(.up)
    var microseconds = Int64(first) * minor
    var ticks = ""
    var grid = ""
    var labels: [(Double, String)] = []
    while true {
      let frame = Double(microseconds) / 1_000_000 * Double(rate)
      let position = left + (frame - Double(from)) * Double(area) / Double(span)
      if position > left + Double(area) + 0.001 { break }
      if position >= left - 0.001 {
        let isMajor = microseconds % major == 0
        ticks += "M\(n(position)) \(n(bottom))V\(n(bottom - (isMajor ? 9 : 4)))"
        if isMajor {
          grid += "M\(n(position)) \(n(lanesTop))V\(n(lanesBottom))"
          labels.append(
            (position, Self.tickLabel(microseconds / 1_000, step: step.milliseconds)))
        }
      }
      microseconds += minor
    }
    line("<path class='grid' d='\(grid)' stroke='#e4e4e4' stroke-width='1' fill='none'/>")
    line("<path class='ticks' d='\(ticks)' stroke='#555555' stroke-width='1' fill='none'/>")
    for (position, label) in labels
    where position + 3 + Double(label.count) * 10 * 0.62 <= Double(picture.width) {
      line(
        "<text class='tick' x='\(n(position + 3))' y='\(n(top + 12))' font-size='10' fill='#333333'>\(text(label))</text>"
      )
    }
    line("</g>")
  }

  /// One label of the marker band: the markers it names (those within a pixel of each
  /// other share one), where, on which row, and its text.
  struct MarkerLabel {
    var markers: [Marker]
    var position: Double
    var row: Int
    var text: String
  }

  /// The most rows of marker labels; a label that fits in none is cut short in the row that
  /// frees first, to end before the next label there.
  static let markerRows = 4

  /// The marker labels laid out so that none prints over another: each on the first row where
  /// the last label has ended (rows added as needed, up to ``markerRows``), else cut short.
  func markerLayout() -> [MarkerLabel] {
    let shown = project.markers.sorted(by: Marker.timelineOrder).filter {
      $0.position.frames >= from && $0.position.frames <= from + span
    }
    var groups: [(position: Double, markers: [Marker])] = []
    for marker in shown {
      let position = x(marker.position.frames)
      if let last = groups.last, position - last.position < 1 {
        groups[groups.count - 1].markers.append(marker)
      } else {
        groups.append((position, [marker]))
      }
    }
    let right = Double(picture.width) - 2
    let advance = 10 * 0.62
    var labels: [MarkerLabel] = []
    var ends: [Double] = []
    var last: [Int] = []
    for group in groups {
      let start = group.position + 7
      let text = group.markers.map { "\($0.id) \($0.name)" }.joined(separator: ", ")
      let width = Double(text.count) * advance
      let full = SVGText.truncated(
        text, toCharacters: SVGText.characters(fitting: right - start, size: 10))
      if let row = ends.firstIndex(where: { $0 + 4 <= start }) {
        ends[row] = start + Double(full.count) * advance
        last[row] = labels.count
        labels.append(
          MarkerLabel(markers: group.markers, position: group.position, row: row, text: full))
      } else if ends.count < Self.markerRows {
        ends.append(start + min(width, right - start))
        last.append(labels.count)
        labels.append(
          MarkerLabel(
            markers: group.markers, position: group.position, row: ends.count - 1, text: full))
      } else {
        // Every row is taken here: the row that frees first gives its last label up to this
        // one's start (cut short, with "…"), and this one takes the row.
        let row = ends.indices.min { ends[$0] < ends[$1] } ?? 0
        let previous = labels[last[row]]
        let room = SVGText.characters(fitting: start - 4 - (previous.position + 7), size: 10)
        labels[last[row]].text = SVGText.truncated(previous.text, toCharacters: room)
        ends[row] = start + Double(full.count) * advance
        last[row] = labels.count
        labels.append(
          MarkerLabel(markers: group.markers, position: group.position, row: row, text: full))
      }
    }
    return labels
  }

  mutating func markers() {
    guard hasMarkers else { return }
    let top = Self.titleHeight
    line("<g class='markers'>")
    for label in markerLabels {
      markerLabel(
        label.markers, position: label.position, top: top, row: label.row, text: label.text)
    }
    line("</g>")
  }

  /// One marker group's flags and dashed lines, and its label on `row`.
  mutating func markerLabel(
    _ markers: [Marker], position: Double, top: Double, row: Int, text shown: String
  ) {
    for (index, marker) in markers.enumerated() {
      line(
        "<g class='marker' data-marker='\(marker.id)' data-name='\(text(marker.name))' data-position='\(marker.position.frames)'>"
      )
      line(
        "<path d='M\(n(position - 5)) \(n(top + 2))H\(n(position + 5))L\(n(position)) \(n(top + 10))Z' fill='#c2185b'/>"
      )
      line(
        "<path d='M\(n(position)) \(n(top + 10))V\(n(lanesBottom))' stroke='#c2185b' stroke-width='1' stroke-dasharray='4 3' fill='none'/>"
      )
      if index == 0 && !shown.isEmpty {
        line(
          "<text class='marker-label' data-row='\(row)' x='\(n(position + 7))' y='\(n(top + 11 + 12 * Double(row)))' font-size='10' fill='#c2185b'>\(text(shown))</text>"
        )
      }
      line("</g>")
    }
  }

  // MARK: Lanes

  /// Whether `track` is heard: not muted, and soloed when any track is.
  func isAudible(_ track: Track, in project: Project) -> Bool {
    project.audibleTracks.contains { $0.id == track.id }
  }

  /// `f1 fil4#stereo · f2 dpl#stereo (bypassed)`: each effect's id and the end of its URI, as
  /// `tape ls` says them.
  static func chain(_ effects: [Effect]) -> String {
    effects.map { effect in
      let short = effect.plugin.split(separator: "/").last.map(String.init) ?? effect.plugin
      return
        "\(effect.id) \(short)\(effect.isBypassed ? " (bypassed)" : "")\(effect.sidechain.map { " ← \($0)" } ?? "")"
    }.joined(separator: " · ")
  }

  static func pan(_ pan: Double) -> String {
    if pan == 0 { return "C" }
    let percent = Int((abs(pan) * 100).rounded())
    return pan < 0 ? "L\(percent)" : "R\(percent)"
  }

  /// How a track changed between the versions compared, if it did.
  func trackStatus(_ track: Track, removed: Bool) -> String? {
    guard let comparison else { return nil }
    if removed { return "removed" }
    guard let change = comparison.diff.tracks.first(where: { $0.id == track.id }) else {
      return nil
    }
    if change.before == nil { return "added" }
    // A track that only moved in the order is not said to change.
    var before = change.before
    before?.index = change.after?.index ?? 0
    return before == change.after ? nil : "changed"
  }

  mutating func lane(_ track: Track, index: Int, removed: Bool) {
    let top = laneTop(index)
    let source = removed ? (comparison?.before ?? project) : project
    let audible = !removed && isAudible(track, in: source)
    let colour =
      audible ? Self.palette[index % Self.palette.count] : Self.silentColour
    let status = trackStatus(track, removed: removed)
    line(
      "<g class='track\(status.map { " " + $0 } ?? "")' data-track='\(track.id)' data-name='\(text(track.name))' data-muted='\(track.isMuted)' data-solo='\(track.isSolo)'>"
    )
    line(
      "<rect class='lane' x='0' y='\(n(top))' width='\(picture.width)' height='\(n(Self.laneHeight))' fill='\(index % 2 == 0 ? "#f7f7f7" : "#f0f0f0")'/>"
    )
    line(
      "<rect class='header' x='0' y='\(n(top))' width='\(n(left - 4))' height='\(n(Self.laneHeight))' fill='#e8e8e8'/>"
    )
    line(
      "<rect x='0' y='\(n(top))' width='4' height='\(n(Self.laneHeight))' fill='\(colour)'/>"
    )
    // The header: name; gain, pan and badges; effects.
    line("<g clip-path='url(#headers)'>")
    let nameRoom = SVGText.characters(fitting: left - 74, size: 12)
    line(
      "<text class='name' x='10' y='\(n(top + 17))' font-size='12' font-weight='bold' fill='#222222'><tspan fill='#777777' font-weight='normal'>\(track.id)</tspan><tspan dx='5'>\(text(SVGText.truncated(track.name, toCharacters: nameRoom)))</tspan></text>"
    )
    // Where it goes, when not the master, and what it sends (the envelope has its own line).
    var settings = "gain \(track.gain) · pan \(Self.pan(track.pan))"
    if let output = track.output { settings += " · → \(output)" }
    let sent = source.sends.filter { $0.from == track.id }.map(\.to.description)
    if !sent.isEmpty { settings += " · sends → " + sent.joined(separator: ", ") }
    line(
      "<text class='settings' x='10' y='\(n(top + 34))' font-size='10' fill='#444444'>\(text(SVGText.truncated(settings, toCharacters: SVGText.characters(fitting: left - 18, size: 10))))</text>"
    )
    badge("M", on: track.isMuted, colour: "#d62728", x: left - 46, y: top + 5, kind: "mute")
    badge("S", on: track.isSolo, colour: "#e6b800", x: left - 26, y: top + 5, kind: "solo")
    if !track.effects.isEmpty {
      let chain = Self.chain(track.effects)
      line(
        "<text class='effects' x='10' y='\(n(top + 51))' font-size='10' fill='#555555'>\(text(SVGText.truncated("fx " + chain, toCharacters: SVGText.characters(fitting: left - 18, size: 10))))</text>"
      )
    }
    if let status {
      line(
        "<text class='status' x='10' y='\(n(top + 66))' font-size='10' font-weight='bold' fill='\(Self.statusColours[status] ?? "#000000")'>track \(status)</text>"
      )
    } else if track.envelope != nil || !laneNames(track, sends: source.sends).isEmpty {
      var note = ""
      if let envelope = track.envelope {
        let count = envelope.points.count
        note = "envelope · \(count) point\(count == 1 ? "" : "s")"
      }
      let lanes = laneNames(track, sends: source.sends)
      if !lanes.isEmpty {
        note += (note.isEmpty ? "" : " · ") + "lanes " + lanes.joined(separator: ", ")
      }
      line(
        "<text class='envelope-note' x='10' y='\(n(top + 66))' font-size='10' fill='\(track.envelope == nil ? Self.automationColour : Self.envelopeColour)'>\(text(SVGText.truncated(note, toCharacters: SVGText.characters(fitting: left - 18, size: 10))))</text>"
      )
    }
    line("</g>")
    // The timeline part.
    line("<g clip-path='url(#timeline)'>")
    if removed {
      // A clip of a removed track may live on elsewhere: then it moved.
      let kept = Set(project.tracks.flatMap(\.clips).map(\.id))
      for clip in track.clips where visible(clip) {
        ghost(clip, top: top, kind: kept.contains(clip.id) ? "moved" : "removed")
      }
    } else {
      // The overlaps' hatching under the clips (it shows through their boxes, and leaves
      // their labels and outlines readable), a band over them.
      let overlapping = overlaps(track)
      drawOverlaps(overlapping, top: top, band: false)
      // Clips under two pixels wide that crowd each other (another within a column) are drawn
      // together: their waveform as one, over the stretches they fill (each clip's box and
      // label would only make a solid block). A narrow clip alone keeps its box.
      let dense = crowded(track.clips.filter(visible))
      for clip in track.clips where visible(clip) && !dense.ids.contains(clip.id) {
        draw(clip, top: top, colour: colour)
      }
      let denseClips = dense.clips
      if !denseClips.isEmpty { drawDense(denseClips, top: top, colour: colour) }
      drawOverlaps(overlapping, top: top, band: true)
      drawCrossfades(track, top: top)
      if let envelope = track.envelope { drawEnvelope(envelope, track: track.id, top: top) }
      drawLanes(track, sends: source.sends, top: top)
      if let comparison {
        // Where the clips that left this lane were: removed ones, and moved ones' old places.
        for change in comparison.diff.clips {
          guard let before = change.before, before.track == track.id, visible(before.clip) else {
            continue
          }
          if change.after == nil {
            ghost(before.clip, top: top, kind: "removed")
          } else if change.isMove {
            ghost(before.clip, top: top, kind: "moved")
          }
        }
      }
    }
    line("</g>")
    line("</g>")
  }

  mutating func badge(
    _ letter: String, on: Bool, colour: String, x: Double, y: Double, kind: String
  ) {
    line(
      "<g class='badge \(kind)\(on ? " on" : "")'><rect x='\(n(x))' y='\(n(y))' width='16' height='14' rx='2' fill='\(on ? colour : "none")' stroke='\(on ? colour : "#aaaaaa")'/><text x='\(n(x + 8))' y='\(n(y + 11))' font-size='10' font-weight='bold' text-anchor='middle' fill='\(on ? "#ffffff" : "#aaaaaa")'>\(letter)</text></g>"
    )
  }

  func visible(_ clip: Clip) -> Bool {
    clip.timelineEnd.frames > from && clip.timelineStart.frames < from + span
  }

  /// How a clip of the newer version differs from the older, if it does.
  func clipStatus(_ clip: Clip) -> [String] {
    guard let change = changes[clip.id] else { return [] }
    guard let before = change.before, let after = change.after else { return ["added"] }
    var status: [String] = []
    if change.isMove { status.append("moved") }
    if before.clip.moved(to: after.clip.timelineStart) != after.clip { status.append("changed") }
    return status
  }

  /// A clip's box top and height in a lane whose top is `top`.
  func box(top: Double) -> (top: Double, height: Double) {
    (top + 2, Self.laneHeight - 4)
  }

  mutating func draw(_ clip: Clip, top laneTop: Double, colour: String) {
    let status = clipStatus(clip)
    let (top, height) = box(top: laneTop)
    let start = x(clip.timelineStart.frames)
    let width = Double(clip.length.frames) * Double(area) / Double(span)
    let stroke =
      status.first.flatMap { Self.statusColours[$0] }
      ?? (colour == Self.silentColour ? "#606060" : colour)
    line(
      "<g class='clip\(status.map { " " + $0 }.joined())' data-clip='\(clip.id)'\(clip.name.map { " data-name='\(text($0))'" } ?? "") data-source='\(clip.source)' data-start='\(clip.timelineStart.frames)' data-length='\(clip.length.frames)'>"
    )
    line(
      "<rect class='box' x='\(n(start))' y='\(n(top))' width='\(n(width))' height='\(n(height))' rx='3' fill='\(colour)' fill-opacity='0.28' stroke='\(stroke)' stroke-width='\(status.isEmpty ? 1 : 2.5)'/>"
    )
    let waveTop = top + Self.labelBand
    let waveBottom = top + height - 2
    if let peaks = picture.peaks[clip.source] {
      waveform(
        clip, peaks: peaks, top: waveTop, bottom: waveBottom, left: start, right: start + width,
        colour: colour)
    }
    fade(clip, end: .fadeIn, top: waveTop, bottom: waveBottom)
    fade(clip, end: .fadeOut, top: waveTop, bottom: waveBottom)
    // The label, where the box shows.
    let shownLeft = max(start, left)
    let shownRight = min(start + width, left + Double(area))
    var label = "\(clip.id)"
    if let name = clip.name { label += " @\(name)" }
    if let source = project.source(clip.source) {
      label += " · \(source.path.lastComponent)"
    }
    if clip.gain != .unity { label += " · \(clip.gain)" }
    if picture.unavailable.contains(clip.source) { label += " · no waveform: source unreadable" }
    if !status.isEmpty { label += " · \(status.joined(separator: ", "))" }
    let room = SVGText.characters(fitting: shownRight - shownLeft - 6, size: 10)
    let shown = SVGText.truncated(label, toCharacters: room)
    if !shown.isEmpty {
      line(
        "<text class='label' x='\(n(shownLeft + 3))' y='\(n(top + 11))' font-size='10' fill='#1a1a1a'>\(text(shown))</text>"
      )
    }
    line("</g>")
  }

  /// The waveform: a filled outline through each column's largest sample, left to right, and
  /// back through its smallest, one point per column; `data-first-column` names the column of
  /// the first point, `data-top` and `data-bottom` where +1 and −1 are (0 halfway).
  mutating func waveform(
    _ clip: Clip, peaks: Peaks, top: Double, bottom: Double, left boxLeft: Double,
    right boxRight: Double, colour: String
  ) {
    let middle = (top + bottom) / 2
    let half = (bottom - top) / 2
    let gain = Float(clip.gain.linear)
    let clipStart = clip.timelineStart.frames
    let clipEnd = clip.timelineEnd.frames
    var points: [(x: Double, high: Double, low: Double)] = []
    var first: Int?
    for column in columns(of: clipStart..<clipEnd) {
      let frames = columnFrames(column)
      let start = max(frames.lowerBound, clipStart)
      let end = min(frames.upperBound, clipEnd)
      guard start < end else { continue }
      let source = clip.sourceRange.start.frames - clipStart
      guard
        let extremes = peaks.extremes(in: Int(start + source)..<Int(end + source))
      else { continue }
      if first == nil { first = column }
      let clamp = { (value: Float) in Double(max(-1, min(1, value * gain))) }
      let center = min(max(left + Double(column) + 0.5, boxLeft), boxRight)
      points.append(
        (center, middle - clamp(extremes.maximum) * half, middle - clamp(extremes.minimum) * half))
    }
    guard let first, !points.isEmpty else { return }
    var path = ""
    for (index, point) in points.enumerated() {
      path += "\(index == 0 ? "M" : "L")\(n(point.x)) \(n(point.high))"
    }
    for point in points.reversed() {
      path += "L\(n(point.x)) \(n(point.low))"
    }
    path += "Z"
    line(
      "<path class='wave' data-first-column='\(first)' data-columns='\(points.count)' data-top='\(n(top))' data-bottom='\(n(bottom))' d='\(path)' fill='\(colour)' fill-opacity='0.85' stroke='\(colour)' stroke-width='0.6'/>"
    )
  }

  enum FadeEnd { case fadeIn, fadeOut }

  /// A fade as its curve: the model's own gain function (``Fade/gain(at:length:fadeIn:inCurve:fadeOut:outCurve:)``)
  /// sampled at least once a pixel, from silence at the bottom of the wave area to full level at
  /// its top, with the part above the curve (what the fade takes away) shaded.
  mutating func fade(_ clip: Clip, end: FadeEnd, top: Double, bottom: Double) {
    let fade = end == .fadeIn ? clip.fadeIn : clip.fadeOut
    let length = fade.length.frames
    guard length > 0 else { return }
    let clipLength = clip.length.frames
    let first = end == .fadeIn ? 0 : clipLength - length
    let pixels = Double(length) * Double(area) / Double(span)
    let segments = Int64(min(max(pixels.rounded(.up), 2), 4_096))
    var curve = ""
    for step in 0...segments {
      let frame = first + length * step / segments
      let gain =
        end == .fadeIn
        ? Fade.gain(
          at: frame, length: clipLength, fadeIn: length, inCurve: fade.curve, fadeOut: 0,
          outCurve: .linear)
        : Fade.gain(
          at: frame, length: clipLength, fadeIn: 0, inCurve: .linear, fadeOut: length,
          outCurve: fade.curve)
      let point = "\(n(x(clip.timelineStart.frames + frame))) \(n(bottom - gain * (bottom - top)))"
      curve += (step == 0 ? "M" : "L") + point
    }
    let startX = n(x(clip.timelineStart.frames + first))
    let endX = n(x(clip.timelineStart.frames + first + length))
    let kind = end == .fadeIn ? "fade-in" : "fade-out"
    line(
      "<path class='\(kind)-shade' d='\(curve)L\(endX) \(n(top))L\(startX) \(n(top))Z' fill='#000000' fill-opacity='0.16'/>"
    )
    line(
      "<path class='\(kind)' data-frames='\(length)' data-curve='\(fade.curve.displayName)' d='\(curve)' fill='none' stroke='#202020' stroke-width='1.2'/>"
    )
  }

  /// Every stretch of `track` where two or more clips play at once, in order, but for the
  /// crossfades (``crossfades(_:)``): two clips that crossfade count as one there.
  func overlaps(_ track: Track) -> [Range<Int64>] {
    var edges: [(frame: Int64, delta: Int)] = []
    for clip in track.clips where clip.length.frames > 0 {
      edges.append((clip.timelineStart.frames, 1))
      edges.append((clip.timelineEnd.frames, -1))
    }
    for stretch in crossfades(track) {
      edges.append((stretch.lowerBound, -1))
      edges.append((stretch.upperBound, 1))
    }
    edges.sort { ($0.frame, $0.delta) < ($1.frame, $1.delta) }
    var playing = 0
    var began: Int64?
    var stretches: [Range<Int64>] = []
    for edge in edges {
      playing += edge.delta
      if playing >= 2 && began == nil {
        began = edge.frame
      } else if playing < 2, let start = began {
        if edge.frame > start { stretches.append(start..<edge.frame) }
        began = nil
      }
    }
    return stretches
  }

  /// The stretches where two clips of `track` crossfade (``Timeline/Clip/crossfades(into:)``):
  /// each clip with the next to start after it, in timeline order.
  func crossfades(_ track: Track) -> [Range<Int64>] {
    let clips = track.clips.sorted(by: Clip.timelineOrder)
    var stretches: [Range<Int64>] = []
    for (index, clip) in clips.enumerated() {
      for later in clips[(index + 1)...] {
        guard later.timelineStart < clip.timelineEnd else { break }
        if clip.crossfades(into: later) {
          stretches.append(later.timelineStart.frames..<clip.timelineEnd.frames)
        }
      }
    }
    return stretches
  }

  /// Marks each crossfade of `track`: a thin band along the bottom of the lane, in the
  /// colour of neither warning nor change.
  mutating func drawCrossfades(_ track: Track, top laneTop: Double) {
    let (top, height) = box(top: laneTop)
    for stretch in crossfades(track)
    where stretch.upperBound > from && stretch.lowerBound < from + span {
      let start = x(stretch.lowerBound)
      let width = Double(stretch.count) * Double(area) / Double(span)
      line(
        "<rect class='crossfade' data-start='\(stretch.lowerBound)' data-length='\(stretch.count)' x='\(n(start))' y='\(n(top + height - 3))' width='\(n(width))' height='3' fill='\(Self.crossfadeColour)'/>"
      )
    }
  }

  /// The volume envelope over its track's lane: 0 dB at the top of the wave area, −60 dB and
  /// below at its bottom (``envelopeY(_:top:bottom:)``), sampled at least once a pixel with
  /// the model's own gain function (``Timeline/Envelope/gain(at:)``), a dot at each point.
  mutating func drawEnvelope(_ envelope: Envelope, track: Track.ID, top laneTop: Double) {
    let (boxTop, height) = box(top: laneTop)
    let top = boxTop + Self.labelBand
    let bottom = boxTop + height - 2
    var path = ""
    for column in 0...area {
      let frame = from + Int64((Double(column) * Double(span) / Double(area)).rounded(.down))
      let y = Self.envelopeY(envelope.gain(at: min(frame, from + span)), top: top, bottom: bottom)
      path += "\(column == 0 ? "M" : "L")\(n(left + Double(column))) \(n(y))"
    }
    line(
      "<path class='envelope' data-track='\(track)' data-points='\(envelope.points.count)' data-top='\(n(top))' data-bottom='\(n(bottom))' d='\(path)' fill='none' stroke='\(Self.envelopeColour)' stroke-width='1.5'/>"
    )
    for point in envelope.points
    where point.time.frames >= from && point.time.frames <= from + span {
      let y = Self.envelopeY(point.amplitude, top: top, bottom: bottom)
      line(
        "<circle class='envelope-point' data-frame='\(point.time.frames)' cx='\(n(x(point.time.frames)))' cy='\(n(y))' r='2.5' fill='\(Self.envelopeColour)'/>"
      )
    }
  }

  /// The names of `track`'s automation lanes besides its volume envelope, as its header lists
  /// them: `pan`, each send's envelope (`n1`), each automated effect parameter (`f1 cr`).
  func laneNames(_ track: Track, sends: [Send]) -> [String] {
    (track.panEnvelope == nil ? [] : ["pan"])
      + sends.filter { $0.from == track.id && $0.envelope != nil }.map(\.id.description)
      + track.effects.flatMap { effect in
        effect.automation.keys.sorted().map { "\(effect.id) \($0)" }
      }
  }

  /// The automation lanes of `track` over its lane, each drawn as the volume envelope is (a
  /// line sampled once a pixel with the model's own function, a dot at each point): the pan
  /// lane (``panColour``: left at the top of the wave area, centre in the middle, right at its
  /// bottom), each send's envelope (``sendColour``: in dB as the volume envelope), each
  /// automated effect parameter (``automationColour``: from its lowest point at the bottom to
  /// its highest at the top; a flat lane in the middle).
  mutating func drawLanes(_ track: Track, sends: [Send], top laneTop: Double) {
    let (boxTop, height) = box(top: laneTop)
    let top = boxTop + Self.labelBand
    let bottom = boxTop + height - 2
    if let lane = track.panEnvelope {
      drawLane(
        "pan-lane", data: "data-track='\(track.id)'", colour: Self.panColour,
        frames: lane.points.map(\.time.frames), top: top, bottom: bottom
      ) { (min(max(lane.value(at: $0), -1), 1) + 1) / 2 }
    }
    for send in sends where send.from == track.id {
      guard let envelope = send.envelope else { continue }
      drawLane(
        "send-envelope", data: "data-send='\(send.id)'", colour: Self.sendColour,
        frames: envelope.points.map(\.time.frames), top: top, bottom: bottom
      ) { (Self.envelopeY(envelope.gain(at: $0), top: 0, bottom: 1)) }
    }
    for effect in track.effects {
      for (symbol, lane) in effect.automation.sorted(by: { $0.key < $1.key }) {
        let values = lane.points.map(\.value)
        let (low, high) = (values.min() ?? 0, values.max() ?? 0)
        drawLane(
          "automation", data: "data-effect='\(effect.id)' data-symbol='\(text(symbol))'",
          colour: Self.automationColour, frames: lane.points.map(\.time.frames), top: top,
          bottom: bottom
        ) { high > low ? (high - lane.value(at: $0)) / (high - low) : 0.5 }
      }
    }
  }

  /// One lane: a line at `share(frame)` of the way from `top` to `bottom`, sampled once a
  /// pixel, a dot at each of `frames` in view.
  mutating func drawLane(
    _ kind: String, data: String, colour: String, frames: [Int64], top: Double, bottom: Double,
    share: (Int64) -> Double
  ) {
    func y(_ frame: Int64) -> Double { top + share(frame) * (bottom - top) }
    var path = ""
    for column in 0...area {
      let frame = from + Int64((Double(column) * Double(span) / Double(area)).rounded(.down))
      path +=
        "\(column == 0 ? "M" : "L")\(n(left + Double(column))) \(n(y(min(frame, from + span))))"
    }
    line(
      "<path class='\(kind)' \(data) data-points='\(frames.count)' data-top='\(n(top))' data-bottom='\(n(bottom))' d='\(path)' fill='none' stroke='\(colour)' stroke-width='1.5' stroke-dasharray='4 2'/>"
    )
    for frame in frames where frame >= from && frame <= from + span {
      line(
        "<circle class='\(kind)-point' data-frame='\(frame)' cx='\(n(x(frame)))' cy='\(n(y(frame)))' r='2' fill='\(colour)'/>"
      )
    }
  }

  /// Where a gain (linear) is drawn: 0 dB (and above) at `top`, −60 dB (and below) at `bottom`,
  /// linear in dB between.
  static func envelopeY(_ gain: Double, top: Double, bottom: Double) -> Double {
    let decibels = gain > 0 ? 20 * log10(gain) : -.infinity
    let share = min(max(-decibels / 60, 0), 1)
    return top + share * (bottom - top)
  }

  /// The clips of `clips` under ``denseWidth`` pixels wide whose columns touch another such
  /// clip's (within one column), in timeline order: those drawn together.
  func crowded(_ clips: [Clip]) -> (clips: [Clip], ids: Set<Clip.ID>) {
    let pixelsPerFrame = Double(area) / Double(span)
    let narrow = clips.filter { Double($0.length.frames) * pixelsPerFrame < Self.denseWidth }
      .sorted(by: Clip.timelineOrder)
    let spans = narrow.map { columns(of: $0.timelineStart.frames..<$0.timelineEnd.frames) }
    var crowded: [Clip] = []
    for (index, clip) in narrow.enumerated() {
      let mine = spans[index]
      let touches = { (other: Int) in
        other >= 0 && other < spans.count
          && spans[other].lowerBound <= mine.upperBound
          && mine.lowerBound <= spans[other].upperBound
      }
      if touches(index - 1) || touches(index + 1) { crowded.append(clip) }
    }
    return (crowded, Set(crowded.map(\.id)))
  }

  /// Clips too narrow to draw one by one (``denseWidth``): each an element of its own for
  /// scripts (`class='clip dense'`), drawn as one waveform, each column's extremes over every
  /// such clip in it, over a band for each stretch they fill.
  mutating func drawDense(_ clips: [Clip], top laneTop: Double, colour: String) {
    let (top, height) = box(top: laneTop)
    let waveTop = top + Self.labelBand
    let waveBottom = top + height - 2
    var low = [Float](repeating: .infinity, count: area)
    var high = [Float](repeating: -.infinity, count: area)
    var runs: [Range<Int>] = []
    for clip in clips {
      line(
        "<g class='clip dense' data-clip='\(clip.id)'\(clip.name.map { " data-name='\(text($0))'" } ?? "") data-source='\(clip.source)' data-start='\(clip.timelineStart.frames)' data-length='\(clip.length.frames)'/>"
      )
      let clipStart = clip.timelineStart.frames
      let clipEnd = clip.timelineEnd.frames
      let covered = columns(of: clipStart..<clipEnd)
      if let last = runs.last, covered.lowerBound <= last.upperBound {
        runs[runs.count - 1] = last.lowerBound..<max(last.upperBound, covered.upperBound)
      } else if !covered.isEmpty {
        runs.append(covered)
      }
      guard let peaks = picture.peaks[clip.source] else { continue }
      let gain = Float(clip.gain.linear)
      let offset = clip.sourceRange.start.frames - clipStart
      for column in covered {
        let frames = columnFrames(column)
        let start = max(frames.lowerBound, clipStart)
        let end = min(frames.upperBound, clipEnd)
        guard start < end,
          let extremes = peaks.extremes(in: Int(start + offset)..<Int(end + offset))
        else { continue }
        low[column] = min(low[column], max(-1, min(1, extremes.minimum * gain)))
        high[column] = max(high[column], max(-1, min(1, extremes.maximum * gain)))
      }
    }
    for run in runs {
      line(
        "<rect class='dense-band' x='\(n(left + Double(run.lowerBound)))' y='\(n(top))' width='\(run.count)' height='\(n(height))' fill='\(colour)' fill-opacity='0.18'/>"
      )
    }
    let middle = (waveTop + waveBottom) / 2
    let half = (waveBottom - waveTop) / 2
    // One outline per stretch of columns that have a waveform.
    var column = 0
    while column < area {
      guard high[column] >= low[column] else {
        column += 1
        continue
      }
      let first = column
      while column < area && high[column] >= low[column] { column += 1 }
      var path = ""
      for index in first..<column {
        path +=
          "\(index == first ? "M" : "L")\(n(left + Double(index) + 0.5)) \(n(middle - Double(high[index]) * half))"
      }
      for index in (first..<column).reversed() {
        path += "L\(n(left + Double(index) + 0.5)) \(n(middle - Double(low[index]) * half))"
      }
      line(
        "<path class='wave dense' data-first-column='\(first)' data-columns='\(column - first)' data-top='\(n(waveTop))' data-bottom='\(n(waveBottom))' d='\(path)Z' fill='\(colour)' fill-opacity='0.85' stroke='\(colour)' stroke-width='0.6'/>"
      )
    }
  }

  /// Marks `stretches`: hatched (`band` false), or a band along the bottom of the lane.
  mutating func drawOverlaps(_ stretches: [Range<Int64>], top laneTop: Double, band: Bool) {
    let (top, height) = box(top: laneTop)
    for stretch in stretches
    where stretch.upperBound > from && stretch.lowerBound < from + span {
      let start = x(stretch.lowerBound)
      let width = Double(stretch.count) * Double(area) / Double(span)
      if band {
        line(
          "<rect class='overlap-band' x='\(n(start))' y='\(n(top + height - 4))' width='\(n(width))' height='4' fill='#ff7f0e'/>"
        )
      } else {
        line(
          "<rect class='overlap' data-start='\(stretch.lowerBound)' data-length='\(stretch.count)' x='\(n(start))' y='\(n(top))' width='\(n(width))' height='\(n(height))' fill='url(#overlap-hatch)'/>"
        )
      }
    }
  }

  // MARK: Comparing

  /// Where a clip of the older version was: a dashed outline.
  mutating func ghost(_ clip: Clip, top laneTop: Double, kind: String) {
    let (top, height) = box(top: laneTop)
    let start = x(clip.timelineStart.frames)
    let width = Double(clip.length.frames) * Double(area) / Double(span)
    let colour = Self.statusColours[kind] ?? "#000000"
    line(
      "<g class='ghost \(kind)' data-clip='\(clip.id)' data-start='\(clip.timelineStart.frames)' data-length='\(clip.length.frames)'>"
    )
    line(
      "<rect class='box' x='\(n(start))' y='\(n(top))' width='\(n(width))' height='\(n(height))' rx='3' fill='\(colour)' fill-opacity='0.06' stroke='\(colour)' stroke-width='1.5' stroke-dasharray='5 3'/>"
    )
    let shownLeft = max(start, left)
    let shownRight = min(start + width, left + Double(area))
    let label = kind == "removed" ? "\(clip.id) removed" : "\(clip.id) was here"
    let shown = SVGText.truncated(
      label, toCharacters: SVGText.characters(fitting: shownRight - shownLeft - 6, size: 10))
    if !shown.isEmpty {
      line(
        "<text class='label' x='\(n(shownLeft + 3))' y='\(n(top + height - 6))' font-size='10' fill='\(colour)'>\(text(shown))</text>"
      )
    }
    line("</g>")
  }

  /// An arrow from each moved clip's old place to its new one.
  mutating func moveArrows() {
    guard let comparison else { return }
    let index = Dictionary(
      uniqueKeysWithValues: lanes.enumerated().map { ($1.track.id, $0) })
    var arrows = ""
    for change in comparison.diff.clips where change.isMove {
      guard let before = change.before, let after = change.after,
        let from = index[before.track], let to = index[after.track],
        visible(before.clip) || visible(after.clip)
      else { continue }
      let (_, height) = box(top: 0)
      let startX = x(before.clip.timelineStart.frames)
      let endX = x(after.clip.timelineStart.frames)
      let startY = box(top: laneTop(from)).top + height / 2
      let endY = box(top: laneTop(to)).top + height / 2
      arrows +=
        "<path class='move' data-clip='\(change.id)' d='M\(n(startX)) \(n(startY))L\(n(endX)) \(n(endY))' stroke='#1f77b4' stroke-width='2' fill='none' marker-end='url(#arrow)'/>"
        + "\n"
    }
    guard !arrows.isEmpty else { return }
    line("<g class='moves' clip-path='url(#timeline)'>")
    out += arrows
    line("</g>")
  }

  mutating func legend() {
    guard let comparison else { return }
    var counts: [String: Int] = [:]
    for change in comparison.diff.clips {
      if change.before == nil {
        counts["added", default: 0] += 1
      } else if change.after == nil {
        counts["removed", default: 0] += 1
      } else {
        if change.isMove { counts["moved", default: 0] += 1 }
        if let before = change.before, let after = change.after,
          before.clip.moved(to: after.clip.timelineStart) != after.clip
        {
          counts["changed", default: 0] += 1
        }
      }
    }
    let top = lanesBottom + 10
    line("<g class='legend'>")
    var position = 10.0
    for kind in ["added", "removed", "moved", "changed"] {
      let colour = Self.statusColours[kind] ?? "#000000"
      let dashed = kind == "removed" || kind == "moved"
      line(
        "<rect x='\(n(position))' y='\(n(top))' width='22' height='12' rx='2' fill='\(colour)' fill-opacity='0.15' stroke='\(colour)' stroke-width='2'\(dashed ? " stroke-dasharray='4 2'" : "")/>"
      )
      let words = "\(counts[kind] ?? 0) \(kind)"
      line(
        "<text class='count' data-kind='\(kind)' data-count='\(counts[kind] ?? 0)' x='\(n(position + 28))' y='\(n(top + 10))' font-size='11' fill='#222222'>\(words)</text>"
      )
      position += 130
    }
    line("</g>")
  }
}
