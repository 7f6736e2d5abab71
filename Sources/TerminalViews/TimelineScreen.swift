public import Timeline

#if canImport(Glibc)
  import Glibc
#endif

/// A project drawn as text for a terminal: tracks as rows, clips as blocks to scale with their
/// ids and fade ramps, a time ruler and a playhead. Pure: it returns the lines, the caller
/// writes them (so a frame is drawn in one write, and can be measured without a terminal).
///
/// ```
/// v12   head v14   fork: → v13 (branch 1/2, ↑/↓)   "Move c3"
///               0:00      0:02      0:04      0:06      0:08
/// t1 Voice      [/c1=====\]    [c3===]
/// t2 Piano s          [/c2==========\]
/// ```
///
/// ```swift
/// let lines = TimelineScreen.lines(of: project, width: 100, height: 30, span: 480_000,
///                                  header: "v12", footer: "q quit")
/// ```
public enum TimelineScreen {
  /// Columns for a track's id and name.
  public static let nameWidth = 14

  /// The screen's lines (exactly `height` of them, each at most `width` visible columns, ANSI
  /// styles aside): the header, the ruler, one row per track (as many as fit, from
  /// `firstTrack`), the footer. `span` frames of timeline from `start` fill the width; the
  /// playhead, when given, is drawn where it is.
  public static func lines(
    of project: Project, width: Int, height: Int, span: Int64, start: Int64 = 0,
    firstTrack: Int = 0, playhead: Int64? = nil, header: String, footer: String,
    colour: Bool = true
  ) -> [String] {
    // Narrower or shorter than a usable screen: draw the smallest one plainly and cut it.
    let smallest = (width: nameWidth + 10, height: 4)
    if width < smallest.width || height < smallest.height {
      let drawn = lines(
        of: project, width: max(width, smallest.width), height: max(height, smallest.height),
        span: span, start: start, firstTrack: firstTrack, playhead: playhead, header: header,
        footer: footer, colour: false)
      return drawn.prefix(max(1, height)).map { TerminalText.prefix($0, columns: max(1, width)) }
    }
    // A long footer (an error) wraps onto up to three lines rather than lose its end.
    let footerLines = wrap(printable(footer), width, limit: max(1, min(3, height - 3)))
    let columns = width - nameWidth
    let span = max(span, 1)
    let rate = project.sampleRate
    func column(_ frame: Int64) -> Int {
      Int((Double(frame - start) / Double(span) * Double(columns)).rounded(.down))
    }
    var lines: [String] = [fit(printable(header), width)]
    lines.append(ruler(columns: columns, start: start, span: span, rate: rate))
    var rows = height - 2 - footerLines.count
    // The markers under the ruler, on a row of their own where a track row is left after it.
    if !project.markers.isEmpty && rows > 1 {
      lines.append(
        fit("markers", nameWidth - 1) + " " + markerRow(project.markers, columns: columns, column))
      rows -= 1
    }
    // The master's effects next, the same way.
    if !project.masterEffects.isEmpty && rows > 1 {
      lines.append(
        fit("master fx", nameWidth - 1) + " " + fit(chain(project.masterEffects), columns))
      rows -= 1
    }
    let firstTrack = max(0, min(firstTrack, project.tracks.count - 1))
    // The "above" line only where a track row is left after it.
    if firstTrack > 0 && rows > 1 {
      lines.append(fit("… \(firstTrack) tracks above", width))
      rows -= 1
    }
    rows = max(rows, 0)
    let shown = Array(project.tracks.dropFirst(firstTrack))
    let playheadColumn = playhead.map(column)
    let anySolo = project.tracks.contains { $0.isSolo }
    // One row per track, and one more under a track with an envelope where it fits; the last
    // row says how many tracks did not fit.
    var used = 0
    var drawn = 0
    for (offset, track) in shown.enumerated() {
      let reserve = offset < shown.count - 1 ? 1 : 0
      guard used + 1 + reserve <= rows else { break }
      var cells = Array(repeating: Character(" "), count: columns)
      for clip in track.clips {
        let first = column(clip.timelineStart.frames)
        let last = max(first, column(clip.timelineEnd.frames) - 1)
        guard first < columns, last >= 0 else { continue }
        draw(clip, into: &cells, from: first, to: last, perColumn: Double(span) / Double(columns))
      }
      var row = String(cells)
      if let playheadColumn, playheadColumn >= 0, playheadColumn < columns {
        let index = row.index(row.startIndex, offsetBy: playheadColumn)
        let mark = colour ? "\u{1B}[7m\(row[index])\u{1B}[27m" : "|"
        row.replaceSubrange(index...index, with: mark)
      }
      // m: muted; s: soloed (the others are then dimmed).
      let marks = (track.isMuted ? "m" : "") + (track.isSolo ? "s" : "")
      let name =
        fit(
          "\(track.id) \(printable(track.name))\(marks.isEmpty ? "" : " " + marks)", nameWidth - 1)
        + " "
      let dim = colour && (track.isMuted || (anySolo && !track.isSolo))
      lines.append(dim ? "\u{1B}[2m\(name)\(row)\u{1B}[22m" : name + row)
      used += 1
      drawn += 1
      if let envelope = track.envelope, used + 1 + reserve <= rows {
        let curve =
          fit("  gain", nameWidth - 1) + " "
          + envelopeRow(envelope, columns: columns, start: start, span: span)
        lines.append(dim ? "\u{1B}[2m\(curve)\u{1B}[22m" : curve)
        used += 1
      }
      if !track.effects.isEmpty, used + 1 + reserve <= rows {
        let effects = fit("  fx", nameWidth - 1) + " " + fit(chain(track.effects), columns)
        lines.append(dim ? "\u{1B}[2m\(effects)\u{1B}[22m" : effects)
        used += 1
      }
    }
    let below = shown.count - drawn
    if below > 0 && used < rows { lines.append(fit("… \(below) more tracks", width)) }
    if project.tracks.isEmpty { lines.append("(no tracks)") }
    while lines.count < height - footerLines.count { lines.append("") }
    lines += footerLines.map { fit($0, width) }
    return lines
  }

  /// A chain for people: `f1 fil4#stereo → f2 dpl#stereo (bypassed)`: each effect's id and the
  /// end of its plugin's URI, in the order the sound goes through them.
  public static func chain(_ effects: [Effect], separator: String = " → ") -> String {
    effects.map { effect in
      let uri = effect.plugin
      let short = uri.split(separator: "/").last.map(String.init) ?? uri
      return "\(effect.id) \(printable(short))\(effect.isBypassed ? " (bypassed)" : "")"
    }.joined(separator: separator)
  }

  /// An envelope as a row of block heights, one per column: its gain at the column's first
  /// frame, from ▁ (−60 dB) to █ (+6 dB); a blank where it is silent or below −60 dB.
  static func envelopeRow(
    _ envelope: Envelope, columns: Int, start: Int64, span: Int64
  )
    -> String
  {
    let levels = Array("▁▂▃▄▅▆▇█")
    let segments = envelope.segments()
    return String(
      (0..<columns).map { column -> Character in
        let frame = start + Int64(Double(column) / Double(columns) * Double(span))
        guard let index = EnvelopeSegment.index(of: frame, in: segments) else { return " " }
        let gain = segments[index].gain(at: frame)
        guard gain > 0 else { return " " }
        let decibels = 20 * log10(gain)
        guard decibels >= -60 else { return " " }
        let level = Int(((decibels + 60) / 66 * Double(levels.count)).rounded(.down))
        return levels[min(levels.count - 1, max(0, level))]
      })
  }

  /// `[/c3=====\]`: the bracket ends, the fade-in and fade-out ramps, the id where it fits.
  /// `first` and `last` are the clip's columns, either of them possibly off the screen.
  private static func draw(
    _ clip: Clip, into cells: inout [Character], from first: Int, to last: Int,
    perColumn: Double
  ) {
    let columns = cells.count
    let fadeIn = Int((Double(clip.fadeIn.length.frames) / perColumn).rounded())
    let fadeOut = Int((Double(clip.fadeOut.length.frames) / perColumn).rounded())
    let visible = max(0, first)...min(columns - 1, last)
    for index in visible {
      if index - first < fadeIn {
        cells[index] = "/"
      } else if last - index < fadeOut {
        cells[index] = "\\"
      } else {
        cells[index] = "="
      }
    }
    if last > first {
      if first >= 0 { cells[first] = "[" }
      if last < columns { cells[last] = "]" }
    } else {
      cells[visible.lowerBound] = "|"
    }
    // The id just after the fade-in's ramp (whose first column is the bracket), inside what
    // is visible.
    let id = Array(clip.id.description)
    let innerFirst = visible.lowerBound + (first >= 0 ? 1 : 0)
    let innerLast = visible.upperBound - (last < columns ? 1 : 0)
    guard innerLast - innerFirst + 1 >= id.count else { return }
    let start = min(
      max(first + max(1, min(fadeIn, last - first - id.count)), innerFirst),
      innerLast - id.count + 1)
    for (offset, character) in id.enumerated() { cells[start + offset] = character }
  }

  /// Each marker in view as `▾name` from its column, the name cut where the next one starts.
  static func markerRow(_ markers: [Marker], columns: Int, _ column: (Int64) -> Int) -> String {
    var cells = Array(repeating: Character(" "), count: columns)
    for marker in markers {
      let first = column(marker.position.frames)
      guard first >= 0, first < columns else { continue }
      let label = Array("▾" + printable(marker.name))
      for (offset, character) in label.enumerated() where first + offset < columns {
        cells[first + offset] = character
      }
    }
    return String(cells)
  }

  /// Time marks every ten columns or so, at round seconds.
  private static func ruler(columns: Int, start: Int64, span: Int64, rate: Int) -> String {
    var cells = Array(repeating: Character(" "), count: columns)
    let seconds = Double(span) / Double(rate)
    let from = Double(start) / Double(rate)
    let steps = [0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1_800, 3_600]
    let step = steps.first { seconds / $0 <= Double(columns) / 10 } ?? 3_600
    var mark = (from / step).rounded(.up) * step
    while mark < from + seconds {
      let column = Int((mark - from) / seconds * Double(columns))
      let label = Array(clock(mark))
      if column + label.count <= columns {
        for (offset, character) in label.enumerated() { cells[column + offset] = character }
      }
      mark += step
    }
    return String(repeating: " ", count: nameWidth) + String(cells)
  }

  private static func clock(_ seconds: Double) -> String {
    let whole = Int(seconds)
    let fraction = seconds - Double(whole)
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let (hours, minutes, rest) = (whole / 3_600, whole % 3_600 / 60, whole % 60)
    let text = hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    return fraction > 0 ? text + ".5" : text
  }

  /// `text` with control characters shown as `?`: a name made before they were refused cannot
  /// move the cursor or change the terminal.
  static func printable(_ text: String) -> String {
    String(
      String.UnicodeScalarView(
        text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 }))
  }

  /// `text` in lines of at most `width` columns (a wide character takes two), broken at
  /// spaces where it can, at most `limit` lines (the last one cut).
  static func wrap(_ text: String, _ width: Int, limit: Int) -> [String] {
    var lines: [String] = []
    var rest = Substring(text)
    while !rest.isEmpty && lines.count < limit {
      if TerminalText.width(rest) <= width {
        lines.append(String(rest))
        break
      }
      if lines.count == limit - 1 {
        // The last line, and more than fits: whole words and "…" (a word cut short reads as
        // another: "PgUp/PgDn tracks" as "PgUp/PgDn track" in a 40-column scrub).
        let fits = TerminalText.prefix(rest, columns: max(0, width - 1))
        var words = Substring(fits.lastIndex(of: " ").map { fits[..<$0] } ?? fits[...])
        while words.last == " " { words = words.dropLast() }
        lines.append(words + "…")
        break
      }
      // What fits, and the space just after it (a break there loses nothing).
      let fits = TerminalText.prefix(rest, columns: width).count
      let window = rest.prefix(fits + 1)
      let cut = window.lastIndex(of: " ").map { rest.distance(from: rest.startIndex, to: $0) }
      let length = cut.flatMap { $0 > 0 ? $0 : nil } ?? max(1, fits)
      lines.append(String(rest.prefix(length)))
      rest = rest.dropFirst(length).drop { $0 == " " }
    }
    return lines.isEmpty ? [""] : lines
  }

  /// `text` cut or padded to `width` columns (no wrapping; a wide character takes two).
  static func fit(_ text: String, _ width: Int) -> String {
    TerminalText.fit(text, columns: width)
  }
}
