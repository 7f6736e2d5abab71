import TerminalViews
import Testing
import Timeline

/// The scrub screen's drawing: clips to scale, their ids and fade ramps, the ruler, the
/// playhead, and never a line wider or a screen taller than the terminal.
@Suite("Timeline screen")
struct TimelineScreenTests {
  /// 10 s over 100 columns (114 with the names): 0.1 s a column.
  let span: Int64 = 480_000

  @Test func clipsAreDrawnToScaleWithTheirFades() {
    // c1: 1 s → 3 s with a 0.5 s fade-in and 0.3 s fade-out; c2 on t2: 5 s → 6 s.
    let project = Fixture.project(
      [Fixture.clip(1, start: 48_000, length: 96_000, fadeIn: 24_000, fadeOut: 14_400)],
      secondTrack: [Fixture.clip(2, start: 240_000, length: 48_000)])
    let lines = TimelineScreen.lines(
      of: project, width: 114, height: 8, span: span, header: "v3", footer: "q quit",
      colour: false)
    #expect(lines.count == 8)
    #expect(lines.allSatisfy { $0.count <= 114 })
    let voice = Array(lines[2])
    let guitar = Array(lines[3])
    #expect(String(voice.prefix(14)) == "t1 Voice      ")
    // Columns 10…29 (1 s to 3 s), bracketed; five columns of fade-in, the id just after them,
    // three of fade-out.
    let clip = String(voice[(14 + 10)...(14 + 29)])
    #expect(clip == #"[////c1==========\\]"#)
    #expect(voice[14 + 9] == " " && (voice.count == 14 + 30 || voice[14 + 30] == " "))
    #expect(String(guitar[(14 + 50)...(14 + 59)]) == "[c2======]")
    // The ruler: 0:00 at the first column, 0:02 twenty columns on.
    let ruler = Array(lines[1])
    #expect(String(ruler[14..<18]) == "0:00")
    #expect(String(ruler[34..<38]) == "0:02")
    #expect(lines[0].hasPrefix("v3") && lines[7].hasPrefix("q quit"))
  }

  /// Markers get a row under the ruler: `▾name` at each one's column (0.1 s a column here),
  /// a later marker's mark cutting the name before it; the tracks move down one row.
  @Test func markersAreDrawnUnderTheRuler() throws {
    let project = try Fixture.project([Fixture.clip(1, start: 48_000, length: 96_000)]).applying([
      .setMarker(Marker(id: Marker.ID(1), name: "chorus", position: 48_000)),
      .setMarker(Marker(id: Marker.ID(2), name: "out", position: 72_000)),
      .setMarker(Marker(id: Marker.ID(3), name: "late", position: 960_000)),
    ])
    let lines = TimelineScreen.lines(
      of: project, width: 114, height: 8, span: span, header: "v3", footer: "q quit",
      colour: false)
    #expect(lines.count == 8)
    #expect(lines.allSatisfy { $0.count <= 114 })
    let row = Array(lines[2])
    #expect(String(row.prefix(14)) == "markers       ")
    #expect(String(row[(14 + 10)..<(14 + 19)]) == "▾chor▾out")
    #expect(row.count == 14 + 19 || row[(14 + 19)...].allSatisfy { $0 == " " })
    #expect(lines[3].hasPrefix("t1 Voice"))
    // Without markers, no row.
    let plain = TimelineScreen.lines(
      of: Fixture.project(), width: 114, height: 8, span: span, header: "v3", footer: "q quit",
      colour: false)
    #expect(plain[2].hasPrefix("t1 Voice"))
  }

  /// A track with effects gets a row under it naming its chain in order (`f1 fil4#stereo →
  /// f2 darc#stereo (bypassed)`), and the master's effects a row under the ruler; when rows
  /// run short the effects row goes first, and every screen still fits.
  @Test func effectsAreDrawnUnderTheirTracks() throws {
    let eq = "http://gareus.org/oss/lv2/fil4#stereo"
    let compressor = "http://gareus.org/oss/lv2/darc#stereo"
    let limiter = "http://gareus.org/oss/lv2/dpl#stereo"
    let project = try Fixture.project(
      [Fixture.clip(1, start: 48_000, length: 96_000)],
      secondTrack: [Fixture.clip(2, start: 240_000, length: 48_000)]
    ).applying([
      .setEffects(
        [
          Effect(id: Effect.ID(1), plugin: eq),
          Effect(id: Effect.ID(2), plugin: compressor, isBypassed: true),
        ], on: .track(Track.ID(1))),
      .setEffects([Effect(id: Effect.ID(3), plugin: limiter)], on: .master),
    ])
    let lines = TimelineScreen.lines(
      of: project, width: 114, height: 9, span: span, header: "v3", footer: "q quit",
      colour: false)
    #expect(lines.count == 9)
    #expect(lines.allSatisfy { $0.count <= 114 })
    func trimmed(_ line: String) -> String {
      String(line.reversed().drop { $0 == " " }.reversed())
    }
    #expect(trimmed(lines[2]) == "master fx     f3 dpl#stereo")
    #expect(lines[3].hasPrefix("t1 Voice"))
    #expect(trimmed(lines[4]) == "  fx          f1 fil4#stereo → f2 darc#stereo (bypassed)")
    #expect(lines[5].hasPrefix("t2 "))
    // Short of rows: the tracks keep theirs, the effects row goes.
    let short = TimelineScreen.lines(
      of: project, width: 114, height: 6, span: span, header: "v3", footer: "q quit",
      colour: false)
    #expect(short.count == 6)
    #expect(short.contains { $0.hasPrefix("t1 Voice") } && short.contains { $0.hasPrefix("t2 ") })
    #expect(!short.contains { $0.hasPrefix("  fx") })
    // A narrow screen cuts the chain, never a line too wide.
    let narrow = TimelineScreen.lines(
      of: project, width: 30, height: 9, span: span, header: "v3", footer: "q quit",
      colour: false)
    #expect(narrow.allSatisfy { $0.count <= 30 })
  }

  /// A track with volume automation gets a row under it: block heights of its gain, ▁ at
  /// −60 dB to █ at +6 dB, blank where it is silent; when rows run short the envelope row goes
  /// first, and every screen still fits.
  @Test func envelopesAreDrawnUnderTheirTracks() {
    var project = Fixture.project(
      [Fixture.clip(1, start: 0, length: 480_000)],
      secondTrack: [Fixture.clip(2, start: 240_000, length: 48_000)])
    // +6 dB for 2 s, then down to silence at 4 s (linear in amplitude), silent after.
    project.tracks[0].envelope = Envelope(points: [
      Envelope.Point(time: 96_000, decibels: 6),
      Envelope.Point(time: 192_000, decibels: -.infinity),
    ])
    let lines = TimelineScreen.lines(
      of: project, width: 114, height: 8, span: span, header: "v3", footer: "q quit",
      colour: false)
    #expect(lines.count == 8)
    let gain = Array(lines[3])
    #expect(String(gain.prefix(14)) == "  gain        ")
    #expect(String(gain[14..<34]) == String(repeating: "█", count: 20))
    // Silent from 4 s (column 40) on.
    #expect(gain[14 + 39] != " " && gain[14 + 40] == " " && gain[14 + 60] == " ")
    // Falling: each column no higher than the one before.
    let blocks = Array("▁▂▃▄▅▆▇█ ")
    let heights = (20..<40).map { blocks.firstIndex(of: gain[14 + $0]) ?? 0 }
    #expect(zip(heights, heights.dropFirst()).allSatisfy { $0 >= $1 || $1 == 8 })
    #expect(lines[4].hasPrefix("t2 Guitar"))
    // Two rows for tracks: both tracks, and no room for the envelope's row.
    let short = TimelineScreen.lines(
      of: project, width: 60, height: 5, span: span, header: "v3", footer: "q",
      colour: false)
    #expect(short[2].hasPrefix("t1 Voice") && short[3].hasPrefix("t2 Guitar"))
    // One row: t1 does not fit beside the line that says what is left.
    let shorter = TimelineScreen.lines(
      of: project, width: 60, height: 4, span: span, header: "v3", footer: "q",
      colour: false)
    #expect(shorter[2].hasPrefix("… 2 more tracks"))
  }

  /// Any clip at any zoom and scroll (clips a column wide, half off either edge, beyond the
  /// screen), any track page and any terminal size, with a short or a wrapped footer, draws
  /// exactly the screen's lines within its width. (A track page in 4 rows used to trap.)
  @Test func everyClipAtEveryZoomFits() {
    var state: UInt64 = 3
    func next(_ bound: Int64) -> Int64 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int64((state >> 33) % UInt64(bound))
    }
    for _ in 0..<2_000 {
      let start = next(480_000)
      let length = 1 + next(200_000)
      let fade = next(length / 2 + 1)
      let project = Fixture.project([
        Fixture.clip(17, start: start, length: length, fadeIn: fade, fadeOut: fade)
      ])
      let width = 10 + Int(next(120))
      let height = 1 + Int(next(12))
      let lines = TimelineScreen.lines(
        of: project, width: width, height: height, span: 1 + next(960_000),
        start: next(480_000), firstTrack: Int(next(3)), header: "v1",
        footer: next(2) == 0 ? "keys" : String(repeating: "a long error ", count: 20),
        colour: false)
      #expect(lines.allSatisfy { $0.count <= width })
      #expect(lines.count == height)
    }
  }

  @Test func thePlayheadAndANarrowShortTerminal() {
    let project = Fixture.project(
      [Fixture.clip(1, start: 0, length: 480_000)],
      secondTrack: [Fixture.clip(2, start: 0, length: 48_000)])
    let lines = TimelineScreen.lines(
      of: project, width: 114, height: 8, span: span, playhead: 240_000, header: "",
      footer: "", colour: false)
    #expect(Array(lines[2])[14 + 50] == "|")
    // Too short for both tracks: the last row says how many are not shown.
    let short = TimelineScreen.lines(
      of: project, width: 40, height: 4, span: span, header: "a long header that is cut",
      footer: "", colour: false)
    #expect(short.count == 4)
    #expect(short.allSatisfy { $0.count <= 40 })
    // One row for tracks: it says both are not shown rather than show one without a word.
    #expect(short[2].hasPrefix("… 2 more tracks"))
  }

  /// Wide characters (CJK: two columns each) are measured in columns: a track name keeps the
  /// clips in their columns under the ruler, and a header or footer of them never takes more
  /// than the width (a line that wraps pushes the screen off the terminal).
  @Test func wideCharactersAreMeasuredInColumns() {
    var project = Fixture.project(
      [Fixture.clip(1, start: 48_000, length: 96_000)],
      secondTrack: [Fixture.clip(2, start: 240_000, length: 48_000)])
    project.tracks[0].name = "人声人声人声人声"
    let wide = String(repeating: "声", count: 80)
    let lines = TimelineScreen.lines(
      of: project, width: 114, height: 8, span: span, header: "v3 \"\(wide)\"",
      footer: wide, colour: false)
    #expect(lines.count == 8)
    for line in lines {
      #expect(TerminalText.width(line) <= 114, "\(line)")
    }
    // The name takes its 14 columns (a wide character that would straddle them left out), and
    // c1 starts at column 10 of the timeline as on the ruler.
    #expect(lines[2].hasPrefix("t1 人声人声人 "))
    #expect(TerminalText.width(lines[2].prefix { $0 != "[" }) == 14 + 10)
    #expect(TerminalText.width(lines[0]) == 114)
    #expect(TerminalText.width("声部 1") == 6 && TerminalText.prefix("声部 1", columns: 3) == "声")
  }

  /// A footer that does not fit in its lines ends with whole words and "…": never with a word
  /// cut short, which reads as another (scrub's keys at 40 columns said "PgUp/PgDn track").
  @Test(arguments: [30, 40, 57, 80])
  func aFooterCutShortEndsWithWholeWords(width: Int) {
    let keys =
      "←/→ versions  ↑/↓ branch  space play/pause  enter checkout  q quit  +/- zoom  </> scroll  0 all  PgUp/PgDn tracks"
    let lines = TimelineScreen.lines(
      of: Fixture.project([Fixture.clip(1, start: 0, length: 48_000)]), width: width,
      height: 12, span: span, header: "v3", footer: keys, colour: false)
    let footer = lines.suffix(3).map { String($0.reversed().drop { $0 == " " }.reversed()) }
    for line in footer { #expect(TerminalText.width(line) <= width, "\(line)") }
    let words = Set(keys.split(separator: " ").map(String.init))
    let shown = footer.joined(separator: " ").split(separator: " ").map(String.init)
    if footer.last?.hasSuffix("…") == true {
      let cut = shown.dropLast().map { $0 } + [String(shown.last?.dropLast() ?? "")]
      #expect(cut.allSatisfy { $0.isEmpty || words.contains($0) }, "\(footer)")
    } else {
      #expect(shown == keys.split(separator: " ").map(String.init), "\(footer)")
    }
  }
}
