import Foundation
import Pictures
import ReferenceRenders
import Testing
import Timeline

/// The picture as a value: valid XML whatever the names hold, the same bytes for the same
/// project, fades drawn on their own formulas, clip boxes where the documented geometry puts
/// them, and peaks that are the samples' own extremes.
@Suite("Timeline pictures")
struct TimelinePictureTests {
  static let rate = 48_000

  static func source(_ id: Int64, channels: Int = 1, frames: Int64 = 480_000) -> Source {
    Source(
      id: Source.ID(id), path: "/audio/take \(id).wav", contentHash: "h\(id)", sampleRate: rate,
      channels: channels, frameCount: FrameCount(frames))
  }

  static func clip(
    _ id: Int64, start: Int64, crop: Int64 = 0, length: Int64, source: Int64 = 1,
    fadeIn: Fade = .none, fadeOut: Fade = .none
  ) -> Clip {
    Clip(
      id: Clip.ID(id), source: Source.ID(source), timelineStart: FramePosition(start),
      sourceRange: FrameRange(start: FramePosition(crop), count: FrameCount(length)),
      fadeIn: fadeIn, fadeOut: fadeOut)
  }

  /// Names holding everything XML cannot hold as is: the picture still parses, and shows each
  /// control character as `ls` does.
  @Test func namesHoldingAnythingStillMakeValidXML() throws {
    let awkward = "a\u{7}b\u{0}c\u{1B}[31m<tag attr=\"x\" & 'y'>\u{FFFF}\u{FFFE}\u{85}\t\n🎸 ]]>"
    let project = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source(1)],
      tracks: [
        Track(
          id: Track.ID(1), name: awkward, isMuted: true,
          clips: [Self.clip(1, start: 0, length: 96_000)],
          effects: [Effect(id: Effect.ID(1), plugin: "urn:x/\(awkward)")])
      ],
      markers: [Marker(id: Marker.ID(1), name: awkward, position: 48_000)])
    let svg = TimelinePicture(
      project: project, range: FrameRange(start: 0, count: 192_000), width: 2_000,
      title: awkward, unavailable: [Source.ID(1)]
    ).svg()
    let root = try SVGNode.parse(Data(svg.utf8))
    #expect(root.name == "svg")
    // Each control character (and U+FFFE, U+FFFF) as `\u{…}`, everything else itself.
    let shown =
      "a\\u{7}b\\u{0}c\\u{1B}[31m<tag attr=\"x\" & 'y'>\\u{FFFF}\\u{FFFE}\\u{85}\\u{9}\\u{A}🎸 ]]>"
    #expect(root.first("track")?.attributes["data-name"] == shown)
    #expect(root.first("marker")?.attributes["data-name"] == shown)
    #expect(try #require(root.first("name")).allText.contains("a\\u{7}b\\u{0}c"))
    #expect(try #require(root.first("effects")).allText.contains("<tag"))
  }

  /// The same project and options give the same bytes, and a project built in another order
  /// (the same value) too.
  @Test func theSameInputGivesTheSameBytes() {
    let clips = [
      Self.clip(1, start: 0, length: 96_000, fadeIn: Fade(length: 4_800, curve: .sCurve)),
      Self.clip(2, start: 48_000, length: 96_000),
    ]
    let one = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source(1), Self.source(2)],
      tracks: [Track(id: Track.ID(1), name: "A", clips: clips)])
    let other = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source(2), Self.source(1)],
      tracks: [Track(id: Track.ID(1), name: "A", clips: clips.reversed())])
    var summary = PeakSummarizer(channels: 1)
    summary.add((0..<480_000).map { Float(sin(Double($0) / 100)) })
    let peaks = summary.finished()
    let draw = { (project: Project) in
      TimelinePicture(
        project: project, range: FrameRange(start: 0, count: 200_000), width: 1_000, title: "x",
        peaks: [Source.ID(1): peaks, Source.ID(2): peaks]
      ).svg()
    }
    #expect(draw(one) == draw(one))
    #expect(draw(one) == draw(other))
  }

  /// Each clip's box at `180 + (start − from) · A / count`, `length · A / count` wide, with
  /// `A = width − 192`; clips wholly outside the range are not drawn.
  @Test(arguments: [(0, 240_000, 1_200), (30_000, 100_000, 400), (47_999, 1_000, 16_384)])
  func clipBoxesFollowTheDocumentedGeometry(from: Int64, count: Int64, width: Int) throws {
    let clips = [
      Self.clip(1, start: 0, length: 48_000), Self.clip(2, start: 40_000, length: 100_000),
      Self.clip(3, start: 200_000, length: 1), Self.clip(4, start: 300_000, length: 10),
    ]
    let project = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source(1)],
      tracks: [Track(id: Track.ID(1), name: "A", clips: clips)])
    let root = try SVGNode.parse(
      Data(
        TimelinePicture(
          project: project, range: FrameRange(start: FramePosition(from), count: FrameCount(count)),
          width: width, title: "x"
        ).svg().utf8))
    let area = Double(width - 192)
    let drawn = root.all("clip")
    let expected = clips.filter {
      $0.timelineEnd.frames > from && $0.timelineStart.frames < from + count
    }
    #expect(drawn.map { $0.attributes["data-clip"] } == expected.map { "\($0.id)" })
    for (node, clip) in zip(drawn, expected) {
      let box = try #require(node.first("box"))
      let x = 180 + Double(clip.timelineStart.frames - from) * area / Double(count)
      let boxWidth = Double(clip.length.frames) * area / Double(count)
      #expect(abs((box.number("x") ?? .nan) - x) <= 0.0005, "\(clip.id)")
      #expect(abs((box.number("width") ?? .nan) - boxWidth) <= 0.0005, "\(clip.id)")
    }
  }

  /// Each fade's curve, read back from the picture, is the documented formula of its shape
  /// (written out here, not Tape's function) at the clip frame under each point.
  @Test(arguments: FadeCurve.allCases)
  func fadesAreDrawnAsTheirCurves(curve: FadeCurve) throws {
    let formula: (Double) -> Double =
      switch curve {
      case .linear: { $0 }
      case .equalPower: { sin($0 * Double.pi / 2) }
      case .sCurve: { (1 - cos(Double.pi * $0)) / 2 }
      case .exponential: { (pow(2, 10 * $0) - 1) / 1023 }
      }
    let clip = Self.clip(
      1, start: 24_000, length: 96_000, fadeIn: Fade(length: 30_000, curve: curve),
      fadeOut: Fade(length: 20_000, curve: curve))
    let project = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source(1)],
      tracks: [Track(id: Track.ID(1), name: "A", clips: [clip])])
    let root = try SVGNode.parse(
      Data(
        TimelinePicture(
          project: project, range: FrameRange(start: 0, count: 144_000), width: 1_400, title: "x"
        ).svg().utf8))
    let area = 1_400.0 - 192
    for (kind, length) in [("fade-in", 30_000.0), ("fade-out", 20_000.0)] {
      let path = try #require(root.first(kind))
      #expect(path.attributes["data-curve"] == curve.displayName)
      let points = path.pathPoints
      let box = try #require(root.first("box"))
      // Silence at the bottom of the wave area (the box less 2 px), full level 14 px below
      // the box's top.
      let bottom = (box.number("y") ?? 0) + (box.number("height") ?? 0) - 2
      let top = (box.number("y") ?? 0) + 14
      #expect(points.count >= Int(length * area / 144_000))
      var worst = 0.0
      for point in points {
        let frame = (point.x - 180) * 144_000 / area - 24_000
        let x = kind == "fade-in" ? frame / length : (96_000 - frame) / length
        let gain = (bottom - point.y) / (bottom - top)
        // Positions are written to a thousandth of a pixel: a frame's worth of slack.
        let slope = kind == "fade-in" ? 1.0 : -1.0
        let expected = formula(min(1, max(0, x)))
        let nearby = formula(min(1, max(0, x + slope * 0.0005 * 144_000 / area / length)))
        worst = max(worst, min(abs(gain - expected), abs(gain - nearby)))
      }
      #expect(worst < 0.002, "\(kind) \(curve): off by \(worst)")
    }
  }

  /// Peaks hold each block's own extremes, however the samples arrive.
  @Test func peaksAreEachBlocksExtremes() throws {
    var state: UInt64 = 7
    let frames = 10_000
    let samples = (0..<frames * 2).map { _ -> Float in
      state = state &* 6_364_136_223_846_793_005 &+ 1
      return Float(Int64(state >> 40) - (1 << 23)) / Float(1 << 23)
    }
    var summary = PeakSummarizer(channels: 2)
    var offset = 0
    for piece in [6, 510, 2, 4_000, 30_000] where offset < samples.count {
      let end = min(samples.count, offset + piece)
      summary.add(Array(samples[offset..<end]))
      offset = end
    }
    summary.add(Array(samples[offset...]))
    let peaks = summary.finished()
    #expect(peaks.blockCount == (frames + 255) / 256)
    for (range, _) in [(0..<1, 0), (255..<257, 0), (1_000..<5_000, 0), (9_990..<20_000, 0)] {
      let firstBlock = range.lowerBound / 256 * 256
      let lastBlock = min(frames, (min(range.upperBound, frames) + 255) / 256 * 256)
      let covered = samples[(2 * firstBlock)..<(2 * lastBlock)]
      let extremes = try #require(peaks.extremes(in: range))
      #expect(extremes.minimum == covered.min())
      #expect(extremes.maximum == covered.max())
    }
    #expect(peaks.extremes(in: frames..<frames + 5) == nil)
  }
}
