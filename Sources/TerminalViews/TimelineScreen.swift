public import Timeline

/// A project drawn as text for a terminal: tracks as rows, clips as blocks to scale with their
/// ids and fade ramps, a time ruler and a playhead. Pure: it returns the lines, the caller
/// writes them (so a frame is drawn in one write, and can be measured without a terminal).
///
/// ```
///  v12 "Move c3"                                          head v14 · branch 1/2
///          0:00      0:02      0:04      0:06      0:08
///  t1 Voice [/c1=====\]    [c3===]
///  t2 Piano       [/c2==========\]
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
  /// styles aside): the header, the ruler, one row per track (as many as fit), the footer.
  /// `span` frames of timeline fill the width; the playhead, when given, is drawn where it is.
  public static func lines(
    of project: Project, width: Int, height: Int, span: Int64, playhead: Int64? = nil,
    header: String, footer: String, colour: Bool = true
  ) -> [String] {
    let width = max(width, nameWidth + 10)
    let height = max(height, 4)
    let columns = width - nameWidth
    let span = max(span, 1)
    let rate = project.sampleRate
    func column(_ frame: Int64) -> Int {
      Int((Double(frame) / Double(span) * Double(columns)).rounded(.down))
    }
    var lines: [String] = [fit(header, width)]
    lines.append(ruler(columns: columns, span: span, rate: rate))
    let rows = height - 3
    let playheadColumn = playhead.map(column)
    for track in project.tracks.prefix(rows) {
      var cells = Array(repeating: Character(" "), count: columns)
      for clip in track.clips {
        let first = column(clip.timelineStart.frames)
        guard first < columns else { continue }
        let last = max(first, min(columns - 1, column(clip.timelineEnd.frames) - 1))
        draw(clip, into: &cells, from: first, to: last, span: span, columns: columns)
      }
      var row = String(cells)
      if let playheadColumn, playheadColumn >= 0, playheadColumn < columns {
        let index = row.index(row.startIndex, offsetBy: playheadColumn)
        let mark = colour ? "\u{1B}[7m\(row[index])\u{1B}[27m" : "|"
        row.replaceSubrange(index...index, with: mark)
      }
      var name = fit("\(track.id) \(track.name)", nameWidth - 1) + " "
      if track.isMuted { name = fit("\(track.id) \(track.name) m", nameWidth - 1) + " " }
      let dim =
        colour && (track.isMuted || (project.tracks.contains { $0.isSolo } && !track.isSolo))
      lines.append(dim ? "\u{1B}[2m\(name)\(row)\u{1B}[22m" : name + row)
    }
    if project.tracks.count > rows {
      lines[lines.count - 1] = fit("… \(project.tracks.count - rows + 1) more tracks", width)
    }
    while lines.count < height - 1 { lines.append("") }
    lines.append(fit(footer, width))
    return lines
  }

  /// `[/c3=====\]`: the bracket ends, the fade-in and fade-out ramps, the id where it fits.
  private static func draw(
    _ clip: Clip, into cells: inout [Character], from first: Int, to last: Int, span: Int64,
    columns: Int
  ) {
    let perColumn = Double(span) / Double(columns)
    let fadeIn = Int((Double(clip.fadeIn.length.frames) / perColumn).rounded())
    let fadeOut = Int((Double(clip.fadeOut.length.frames) / perColumn).rounded())
    for index in first...last {
      if index - first < fadeIn {
        cells[index] = "/"
      } else if last - index < fadeOut {
        cells[index] = "\\"
      } else {
        cells[index] = "="
      }
    }
    if last > first {
      cells[first] = "["
      cells[last] = "]"
    } else {
      cells[first] = "|"
    }
    let id = Array(clip.id.description)
    if last - first - 1 >= id.count {
      // Just after the fade-in's ramp (whose first column is the bracket).
      let start = first + max(1, min(fadeIn, last - first - id.count))
      for (offset, character) in id.enumerated() { cells[start + offset] = character }
    }
  }

  /// Time marks every ten columns or so, at round seconds.
  private static func ruler(columns: Int, span: Int64, rate: Int) -> String {
    var cells = Array(repeating: Character(" "), count: columns)
    let seconds = Double(span) / Double(rate)
    let steps = [0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1_800, 3_600]
    let step = steps.first { seconds / $0 <= Double(columns) / 10 } ?? 3_600
    var mark = 0.0
    while mark < seconds {
      let column = Int(mark / seconds * Double(columns))
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
    let text = "\(whole / 60):\(whole % 60 < 10 ? "0" : "")\(whole % 60)"
    return fraction > 0 ? text + ".5" : text
  }

  /// `text` cut to `width` characters (no wrapping).
  static func fit(_ text: String, _ width: Int) -> String {
    text.count <= width
      ? text + String(repeating: " ", count: width - text.count) : String(text.prefix(width))
  }
}
