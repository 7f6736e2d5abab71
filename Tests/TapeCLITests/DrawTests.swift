import Foundation
import ReferenceRenders
import Testing

/// `tape draw`: pictures read back as XML (libxml2, through FoundationXML) and checked against
/// `tape ls --json` and against the audio as sox decodes it; peak files made once and then read;
/// PNGs from rsvg-convert; bad input refused with nothing written.
@Suite("tape draw")
struct DrawTests {
  /// A project of two sources (speech, mono; noise, stereo; both 48 kHz), two tracks, three
  /// clips of which two overlap, a fade and a marker.
  static func project(in space: Workspace) throws -> String {
    let file = space.path("song.tape")
    try space.tape("new", file)
    try space.tape(
      "import", file, TestAudio.path("speech-mono-48k-16.wav"),
      TestAudio.path("noise-stereo-48k-16.flac"))
    try space.tape("track", "add", file, "Voice & <Lead> \"1\"")
    try space.tape("track", "add", file, "Bed")
    try space.tape(
      "clip", "add", file, "t1", "s1", "--at", "0.25s", "--from", "0.3s", "--length", "2s")
    try space.tape(
      "clip", "add", file, "t1", "s1", "--at", "2s", "--from", "3s", "--length", "1.5s", "--gain",
      "-6")
    try space.tape(
      "clip", "add", file, "t2", "s2", "--at", "0", "--length", "3s", "--fade-in", "1s")
    try space.tape("marker", "add", file, "1.5s", "verse")
    return file
  }

  /// The clips of `tape ls --json`: id → (track, start, length, source start, gain dB, source).
  static func clips(_ space: Workspace, _ file: String) throws -> [String: Listed] {
    let listing = try #require(
      try parseJSON(space.tape("ls", file, "--json").stdout) as? [String: Any])
    var clips: [String: Listed] = [:]
    for track in try #require(listing["tracks"] as? [[String: Any]]) {
      for clip in try #require(track["clips"] as? [[String: Any]]) {
        clips[try #require(clip["id"] as? String)] = Listed(
          track: try #require(track["id"] as? String),
          start: try #require(clip["timelineStart"] as? Int),
          length: try #require(clip["length"] as? Int),
          sourceStart: try #require(clip["sourceStart"] as? Int),
          gainDB: try #require(clip["gainDB"] as? Double),
          source: try #require(clip["source"] as? String))
      }
    }
    return clips
  }

  struct Listed {
    let track: String
    let start: Int
    let length: Int
    let sourceStart: Int
    let gainDB: Double
    let source: String
  }

  /// Every clip `ls --json` lists in the range is a box at `180 + (start − from) · A / count`,
  /// `length · A / count` wide (`A = width − 192`), in its track's lane; the others are not
  /// drawn; the overlap and the marker are where they are.
  @Test func clipBoxesAreWhereTheTimelineHasThem() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let svg = space.path("a.svg")
    let result = try space.tape(
      "draw", file, "-o", svg, "--width", "1000", "--from", "@verse-1s", "--to", "+2.7s")
    #expect(result.stdout.hasPrefix("\(svg): svg, 1000 px wide, 2 tracks, 3 clips"))
    let root = try SVGNode.parse(file: svg)
    #expect(root.attributes["width"] == "1000")
    let (from, count, area) = (24_000.0, 129_600.0, 808.0)
    let listed = try Self.clips(space, file)
    #expect(listed.count == 3)
    let drawn = root.all("clip")
    #expect(Set(drawn.compactMap { $0.attributes["data-clip"] }) == Set(listed.keys))
    for node in drawn {
      let id = try #require(node.attributes["data-clip"])
      let clip = try #require(listed[id])
      let box = try #require(node.first("box"))
      let x = 180 + (Double(clip.start) - from) * area / count
      #expect(abs((box.number("x") ?? .nan) - x) <= 0.0005, "\(id) x")
      #expect(
        abs((box.number("width") ?? .nan) - Double(clip.length) * area / count) <= 0.0005,
        "\(id) width")
      #expect(node.parent?.parent?.attributes["data-track"] == clip.track, "\(id) lane")
    }
    // c1 [12000, 108000) and c2 [96000, 168000) overlap on t1.
    let overlap = try #require(root.first("overlap"))
    #expect(overlap.attributes["data-start"] == "96000")
    #expect(overlap.attributes["data-length"] == "12000")
    #expect(abs((overlap.number("x") ?? .nan) - (180 + (96_000 - from) * area / count)) <= 0.0005)
    let marker = try #require(root.first("marker"))
    #expect(marker.attributes["data-name"] == "verse")
    #expect(marker.attributes["data-position"] == "72000")
    #expect(root.first("track")?.attributes["data-name"] == "Voice & <Lead> \"1\"")
    // A range after c1 and c3 end: only c2.
    try space.tape("draw", file, "-o", svg, "--from", "c3.end", "--to", "3.5s")
    let later = try SVGNode.parse(file: svg).all("clip").compactMap {
      $0.attributes["data-clip"]
    }
    #expect(later == ["c2"])
  }

  /// Each waveform point is the smallest or largest sample, times the clip's gain, of the
  /// 256-frame blocks of its source (as sox decodes it) that the pixel column's frames touch.
  @Test func waveformsAreTheAudiosMinimaAndMaxima() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let svg = space.path("wave.svg")
    try space.tape("draw", file, "-o", svg, "--width", "700", "--from", "0.1s", "--to", "3.4s")
    let root = try SVGNode.parse(file: svg)
    let listed = try Self.clips(space, file)
    var decoded: [String: (samples: [Float], channels: Int)] = [:]
    for (id, path, channels) in [
      ("s1", TestAudio.path("speech-mono-48k-16.wav"), 1),
      ("s2", TestAudio.path("noise-stereo-48k-16.flac"), 2),
    ] {
      let raw = space.path("\(id).f32")
      try ReferenceRender.run(
        "/usr/bin/sox", [path, "-t", "raw", "-e", "floating-point", "-b", "32", raw])
      decoded[id] = (try ReferenceRender.readFloats(raw), channels)
    }
    let (from, count, area) = (4_800, 158_400, 508)
    var checked = 0
    for node in root.all("clip") {
      let id = try #require(node.attributes["data-clip"])
      let clip = try #require(listed[id])
      let (samples, channels) = try #require(decoded[clip.source])
      let wave = try #require(node.first("wave"), "\(id) has no waveform")
      let first = try #require(wave.number("data-first-column").map(Int.init))
      let columns = try #require(wave.number("data-columns").map(Int.init))
      let top = try #require(wave.number("data-top"))
      let bottom = try #require(wave.number("data-bottom"))
      let points = wave.pathPoints
      #expect(points.count == 2 * columns)
      let gain = pow(10, clip.gainDB / 20)
      var expectedColumns: [Int] = []
      for column in 0..<area {
        let start = from + column * count / area
        let end = max(from + (column + 1) * count / area, start + 1)
        let a = max(start, clip.start)
        let b = min(end, clip.start + clip.length)
        guard a < b else { continue }
        expectedColumns.append(column)
        let sourceFrom = a - clip.start + clip.sourceStart
        let sourceTo = b - clip.start + clip.sourceStart
        let blockFrom = sourceFrom / 256 * 256
        let blockTo = min((sourceTo + 255) / 256 * 256, samples.count / channels)
        let block = samples[(blockFrom * channels)..<(blockTo * channels)]
        let high = Double(try #require(block.max())) * gain
        let low = Double(try #require(block.min())) * gain
        let index = column - first
        guard index >= 0, index < columns else { continue }
        let y = { (value: Double) in
          (top + bottom) / 2 - min(1, max(-1, value)) * (bottom - top) / 2
        }
        #expect(abs(points[index].y - y(high)) <= 0.0015, "\(id) column \(column) max")
        #expect(
          abs(points[2 * columns - 1 - index].y - y(low)) <= 0.0015, "\(id) column \(column) min")
        checked += 1
      }
      #expect(expectedColumns.first == first && expectedColumns.count == columns, "\(id)")
    }
    #expect(checked > 600)
  }

  /// The peak file: made on the first drawing, beside the decoded audio; read by the next one
  /// (the decoded audio removed, it is not made again: no decode, and the peak file is the same
  /// file, untouched); a damaged one or one others may write is made again, not trusted.
  @Test func peakFilesAreMadeOnceThenRead() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let cache = file + "-cache"
    let svg = space.path("p.svg")
    let first = try space.tape("-v", "draw", file, "-o", svg)
    #expect(first.stderr.contains("peaks computed into"))
    func files(_ suffix: String) throws -> [String] {
      try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasSuffix(suffix) }
        .sorted().map { cache + "/" + $0 }
    }
    let peaks = try files(".peaks")
    #expect(peaks.count == 2)
    func identity(_ path: String) -> [Int] {
      var info = stat()
      stat(path, &info)
      return [
        Int(info.st_ino), info.st_mtim.tv_sec, info.st_mtim.tv_nsec, Int(info.st_mode & 0o777),
      ]
    }
    let before = peaks.map(identity)
    let original = try peaks.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
    for decoded in try files(".f32") { try FileManager.default.removeItem(atPath: decoded) }
    let second = try space.tape("-v", "draw", file, "-o", svg, "--width", "800", "--to", "2s")
    #expect(second.stderr.components(separatedBy: "peaks found in the cache").count == 3)
    #expect(!second.stderr.contains("decoded into"))
    #expect(try files(".f32").isEmpty, "the audio was decoded again")
    #expect(peaks.map(identity) == before)

    // A damaged peak file is computed again, to the same bytes.
    var damaged = original[0]
    damaged[damaged.count - 3] ^= 0x40
    try damaged.write(to: URL(fileURLWithPath: peaks[0]))
    chmod(peaks[0], 0o644)
    let third = try space.tape("-v", "draw", file, "-o", svg)
    #expect(third.stderr.contains("peaks computed into"))
    #expect(try Data(contentsOf: URL(fileURLWithPath: peaks[0])) == original[0])

    // One that others may write is not trusted either (anyone could have made it up).
    chmod(peaks[1], 0o666)
    let fourth = try space.tape("-v", "draw", file, "-o", svg)
    #expect(fourth.stderr.contains("peaks computed into"))
    #expect(identity(peaks[1])[3] & 0o022 == 0)
    #expect(try Data(contentsOf: URL(fileURLWithPath: peaks[1])) == original[1])
  }

  /// `-o x.png`: a PNG (its signature, and its header's width) of the width asked for, the
  /// height of the SVG drawn with the same options; without rsvg-convert, an error that says
  /// how to get it, and no file.
  @Test func pngsAreTheSVGRenderedAtItsWidth() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let png = space.path("t.png")
    try space.tape("draw", file, "-o", png, "--width", "640")
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: png)))
    #expect(Array(bytes.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    #expect(String(decoding: bytes[12..<16], as: UTF8.self) == "IHDR")
    let number = { (offset: Int) in bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
    #expect(number(16) == 640)
    try space.tape("draw", file, "-o", space.path("t.svg"), "--width", "640")
    let height = try #require(SVGNode.parse(file: space.path("t.svg")).number("height"))
    #expect(Double(number(20)) == height.rounded(.up))

    let missing = space.path("none.png")
    let refused = try space.tape(
      "draw", file, "-o", missing, status: 66,
      environment: ["PATH": space.path("empty"), "NO_COLOR": "1"])
    #expect(refused.stderr.hasPrefix("error: a PNG is rendered by rsvg-convert"))
    #expect(refused.stderr.contains("apt-get install librsvg2-bin"))
    #expect(refused.stdout.isEmpty)
    #expect(!FileManager.default.fileExists(atPath: missing))
  }

  /// Bad input: one `error:` line, its exit code, nothing on stdout, and no picture written or
  /// changed.
  @Test func badInputIsRefusedAndNothingIsWritten() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let existing = space.path("old.svg")
    try Data("old".utf8).write(to: URL(fileURLWithPath: existing))
    let locked = space.path("locked.svg")
    try Data("locked".utf8).write(to: URL(fileURLWithPath: locked))
    chmod(locked, 0o444)
    let cases: [([String], Int32, String)] = [
      (["--version", "99", "-o", existing], 65, "no version 99"),
      (["1", "99", "-o", existing], 65, "no version 99"),
      (["3", "-o", existing], 64, "give two versions"),
      (["--from", "3s", "--to", "1s", "-o", existing], 64, "is not before --to"),
      (["--from", "@verse", "--to", "@verse", "-o", existing], 64, "is not before --to"),
      (["--from", "9s", "-o", existing], 64, "past the end"),
      (["--from", "@chorus", "-o", existing], 64, "chorus"),
      (["--width", "399", "-o", existing], 64, "--width 399 is out of range"),
      (["-o", space.path("a.jpg")], 64, "end the name in .svg or .png"),
      (["-o", space.path("no/such/folder/a.svg")], 74, "does not exist"),
      (["-o", existing + "/a.svg"], 74, "is not a folder"),
      (["-o", locked], 74, "read-only"),
    ]
    for (arguments, status, message) in cases {
      let result = try space.tape(
        ["draw", file] + arguments, status: status, environment: ["NO_COLOR": "1"])
      let lines = result.stderr.split(separator: "\n")
      #expect(lines.count == 1 && lines[0].hasPrefix("error: "), "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
      #expect(result.stdout.isEmpty)
    }
    #expect(try String(contentsOfFile: existing, encoding: .utf8) == "old")
    #expect(try String(contentsOfFile: locked, encoding: .utf8) == "locked")
    let made = try FileManager.default.contentsOfDirectory(atPath: space.url.path)
    #expect(!made.contains { $0.hasSuffix(".jpg") || $0 == "no" }, "\(made)")
  }

  /// Two versions: the newer drawn, each clip `tape diff` lists marked as it changed (added,
  /// removed and moved ones' old places as dashed outlines), and the legend counting them.
  @Test func twoVersionsAreDrawnWithTheirDifferencesMarked() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let before = try space.head(of: file)
    try space.tape("clip", "move", file, "c1", "--to", "4s", "--track", "t2")
    try space.tape("clip", "rm", file, "c2")
    try space.tape("clip", "set", file, "c3", "--gain", "-3")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "5s", "--length", "1s")
    let after = try space.head(of: file)
    let svg = space.path("diff.svg")
    try space.tape("draw", file, "\(before)", "\(after)", "-o", svg)
    let root = try SVGNode.parse(file: svg)
    let marked = { (kind: String, name: String) in
      root.all(kind).filter { $0.classes.contains(name) }.compactMap {
        $0.attributes["data-clip"]
      }
    }
    #expect(marked("clip", "moved") == ["c1"])
    #expect(marked("clip", "changed") == ["c3"])
    #expect(marked("clip", "added") == ["c4"])
    #expect(marked("ghost", "removed") == ["c2"])
    #expect(marked("ghost", "moved") == ["c1"])
    #expect(root.first("ghost")?.parent?.parent?.attributes["data-track"] == "t1")
    #expect(
      root.all("ghost").first { $0.classes.contains("moved") }?.attributes["data-start"] == "12000")
    let counts = Dictionary(
      uniqueKeysWithValues: root.all("count").compactMap { node in
        node.attributes["data-kind"].map { ($0, node.attributes["data-count"] ?? "") }
      })
    #expect(counts == ["added": "1", "removed": "1", "moved": "1", "changed": "1"])
    // What `tape diff` says changed is what is marked.
    let diff = try #require(
      try parseJSON(space.tape("diff", file, "\(before)", "\(after)", "--json").stdout)
        as? [String: Any])
    let changes = try #require(diff["changes"] as? [[String: Any]])
    let clipIDs = Set(
      changes.compactMap { $0["id"] as? String }.filter { $0.hasPrefix("c") })
    #expect(clipIDs == ["c1", "c2", "c3", "c4"])
  }

  /// The same project drawn twice is the same bytes; a source whose file went away is drawn
  /// without its waveform, saying so, rather than failing.
  @Test func drawingsAreStableAndSurviveAMissingSource() throws {
    let space = try Workspace()
    let file = space.path("song.tape")
    let audio = try space.copyTestAudio("speech-mono-48k-16.wav")
    try space.tape("new", file)
    try space.tape("import", file, audio)
    try space.tape("track", "add", file, "A")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "1s")
    let one = space.path("one.svg")
    let two = space.path("two.svg")
    try space.tape("draw", file, "-o", one)
    try space.tape("draw", file, "-o", two)
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: one)) == Data(contentsOf: URL(fileURLWithPath: two))
    )
    try FileManager.default.removeItem(atPath: audio)
    let result = try space.tape("draw", file, "-o", two, environment: ["NO_COLOR": "1"])
    #expect(result.stderr.hasPrefix("note: s1 is drawn without its waveform"), "\(result.stderr)")
    let clip = try #require(SVGNode.parse(file: two).first("clip"))
    #expect(clip.first("wave") == nil)
    #expect(clip.allText.contains("no waveform"))
  }
}
