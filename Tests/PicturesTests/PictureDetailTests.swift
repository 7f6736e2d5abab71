import Foundation
import Pictures
import ReferenceRenders
import Testing
import Timeline

/// What an editor reads off a picture: marker labels that do not print over each other, clip
/// names, the volume envelope over its track, crossfades drawn as crossfades (not as
/// overlaps), a track's settings whole, and a waveform through 20,000 short clips.
@Suite("Timeline pictures, in detail")
struct PictureDetailTests {
  static let rate = 48_000

  static func clip(
    _ id: Int64, start: Int64, crop: Int64 = 0, length: Int64, fadeIn: Fade = .none,
    fadeOut: Fade = .none, name: String? = nil
  ) -> Clip {
    Clip(
      id: Clip.ID(id), source: Source.ID(1), timelineStart: FramePosition(start),
      sourceRange: FrameRange(start: FramePosition(crop), count: FrameCount(length)),
      fadeIn: fadeIn, fadeOut: fadeOut, name: name)
  }

  static let source = Source(
    id: Source.ID(1), path: "/audio/take.wav", contentHash: "h1", sampleRate: rate, channels: 1,
    frameCount: FrameCount(4_800_000))

  /// A sine's peaks for the source: every column of a clip has a waveform.
  static let peaks: Peaks = {
    var summary = PeakSummarizer(channels: 1)
    summary.add((0..<4_800_000).map { Float(0.5 * sin(Double($0) / 37)) })
    return summary.finished()
  }()

  static func draw(
    _ project: Project, count: Int64 = 480_000, width: Int = 1_200
  ) throws
    -> SVGNode
  {
    let svg = TimelinePicture(
      project: project, range: FrameRange(start: 0, count: FrameCount(count)), width: width,
      title: "detail", peaks: [Source.ID(1): peaks]
    ).svg()
    return try SVGNode.parse(Data(svg.utf8))
  }

  /// Four markers within 60 ms, two at the same frame: one label for those two, and each
  /// label ends (at 10 px type, 0.62 em a character at most) before the next begins.
  @Test func markerLabelsDoNotPrintOverEachOther() throws {
    let project = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source],
      tracks: [Track(id: Track.ID(1), name: "A", clips: [Self.clip(1, start: 0, length: 96_000)])],
      markers: [
        Marker(id: Marker.ID(1), name: "verse", position: 48_000),
        Marker(id: Marker.ID(2), name: "outro", position: 48_000),
        Marker(id: Marker.ID(3), name: "chorus with a long name", position: 50_400),
        Marker(id: Marker.ID(4), name: "bridge", position: 52_800),
        Marker(id: Marker.ID(5), name: "end", position: 400_000),
      ])
    let root = try Self.draw(project)
    #expect(root.all("marker").count == 5)
    let labels = root.all("marker-label")
    #expect(labels.count == 4)
    #expect(labels.first?.allText.hasPrefix("m1 verse, m2 outro") == true)
    // Too close for one row: the labels take three, each whole, none running into the next
    // of its row.
    #expect(Set(labels.map { $0.attributes["data-row"] ?? "" }) == ["0", "1", "2"])
    for row in ["0", "1", "2"] {
      let inRow = labels.filter { $0.attributes["data-row"] == row }
      for (label, next) in zip(inRow, inRow.dropFirst()) {
        let x = try #require(label.number("x"))
        let end = x + Double(label.allText.count) * 10 * 0.62
        #expect(
          end <= (next.number("x") ?? 0) - 2, "'\(label.allText)' runs into '\(next.allText)'")
      }
    }
    #expect(
      labels.map(\.allText) == [
        "m1 verse, m2 outro", "m3 chorus with a long name", "m4 bridge", "m5 end",
      ])
  }

  /// A named clip says its name (`c1 @intro`) and carries it for scripts.
  @Test func clipNamesAreDrawn() throws {
    let project = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source],
      tracks: [
        Track(
          id: Track.ID(1), name: "A",
          clips: [Self.clip(1, start: 0, length: 240_000, name: "intro")])
      ])
    let root = try Self.draw(project)
    let clip = try #require(root.first("clip"))
    #expect(clip.attributes["data-name"] == "intro")
    #expect(try #require(clip.first("label")).allText.hasPrefix("c1 @intro · take.wav"))
  }

  /// The envelope is a line over its track: 0 dB at the top of the wave area, −60 dB and
  /// below at its bottom, linear in dB between; a dot at each point; the header says how many.
  @Test func theEnvelopeIsDrawnOverItsTrack() throws {
    let envelope = Envelope(points: [
      Envelope.Point(time: .zero, decibels: 0),
      Envelope.Point(time: FramePosition(96_000), decibels: -6),
      Envelope.Point(time: FramePosition(192_000), decibels: -30),
      Envelope.Point(time: FramePosition(288_000), decibels: -.infinity),
    ])
    let project = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source],
      tracks: [
        Track(
          id: Track.ID(1), name: "A", envelope: envelope,
          clips: [Self.clip(1, start: 0, length: 480_000)])
      ])
    let root = try Self.draw(project)
    let line = try #require(root.first("envelope"))
    let top = try #require(line.number("data-top"))
    let bottom = try #require(line.number("data-bottom"))
    #expect(bottom - top > 40)
    let dots = root.all("envelope-point")
    #expect(dots.map { $0.attributes["data-frame"] ?? "" } == ["0", "96000", "192000", "288000"])
    let expected = [0.0, 6.0 / 60, 30.0 / 60, 1.0].map { top + $0 * (bottom - top) }
    for (dot, y) in zip(dots, expected) {
      #expect(abs((dot.number("cy") ?? .nan) - y) < 0.01)
    }
    // The line passes through the points: at x of 96,000 frames it is at −6 dB.
    let x96 = 180 + 96_000.0 * 1_008 / 480_000
    let near = line.pathPoints.min { abs($0.x - x96) < abs($1.x - x96) }
    #expect(abs((near?.y ?? .nan) - expected[1]) < 0.5)
    #expect(root.first("envelope-note")?.allText == "envelope · 4 points")
  }

  /// A pan lane, a send's envelope and an effect parameter's lane are lines over their track
  /// as the envelope is, each a dot at each point: the pan from left (the top of the wave
  /// area) through the centre (its middle) to right (its bottom); the send's envelope in dB
  /// as the volume envelope (−30 dB half way down); the effect parameter from its lowest
  /// point (bottom) to its highest (top). The header names the lanes, and the effects say
  /// their side chain (`f1 sc ← t2`).
  @Test func lanesAndSideChainsAreDrawnOverTheirTrack() throws {
    let curve = { (points: [(Int64, Double)]) in
      Envelope(points: points.map { Envelope.Point(time: FramePosition($0.0), decibels: $0.1) })
    }
    let effect = Effect(
      id: Effect.ID(1), plugin: "http://example.org/plugins/sc",
      sidechain: Track.ID(2),
      automation: ["cr": ParameterEnvelope(curve: curve([(0, 1), (192_000, 10)]))])
    let project = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source],
      tracks: [
        Track(
          id: Track.ID(1), name: "A", clips: [Self.clip(1, start: 0, length: 480_000)],
          effects: [effect],
          panEnvelope: ParameterEnvelope(curve: curve([(0, -1), (192_000, 1)]))),
        Track(id: Track.ID(2), name: "B"),
      ],
      sends: [
        Send(
          id: Send.ID(1), from: Track.ID(1), to: Track.ID(2),
          envelope: curve([(96_000, 0), (288_000, -30)]))
      ])
    let root = try Self.draw(project)
    let x = { (frame: Double) in 180 + frame * 1_008 / 480_000 }
    let lanes: [(String, [String], [(Double, Double)])] = [
      ("pan-lane", ["0", "192000"], [(0.0, 0.0), (96_000, 0.5), (192_000, 1), (400_000, 1)]),
      ("send-envelope", ["96000", "288000"], [(0, 0), (96_000, 0), (288_000, 0.5)]),
      ("automation", ["0", "192000"], [(0, 1), (96_000, 0.5), (192_000, 0)]),
    ]
    for (kind, points, checks) in lanes {
      let line = try #require(root.first(kind), "\(kind)")
      let top = try #require(line.number("data-top"))
      let bottom = try #require(line.number("data-bottom"))
      #expect(bottom - top > 40)
      #expect(root.all("\(kind)-point").map { $0.attributes["data-frame"] ?? "" } == points)
      for (frame, share) in checks {
        let near = line.pathPoints.min { abs($0.x - x(frame)) < abs($1.x - x(frame)) }
        let expected = top + share * (bottom - top)
        #expect(
          abs((near?.y ?? .nan) - expected) < 0.6,
          "\(kind) at \(frame): \(near?.y ?? .nan) for \(expected)")
      }
    }
    #expect(root.first("automation")?.attributes["data-symbol"] == "cr")
    #expect(root.first("send-envelope")?.attributes["data-send"] == "n1")
    #expect(root.first("envelope-note")?.allText == "lanes pan, n1, f1 cr")
    #expect(root.first("effects")?.allText == "fx f1 sc ← t2")
  }

  /// Two clips crossfaded as `clip crossfade` makes them: a crossfade mark, not an overlap;
  /// a third clip laid over them by mistake still is one.
  @Test func aCrossfadeIsDrawnAsOne() throws {
    let fade = Fade(length: 24_000, curve: .equalPower)
    let crossfaded = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source],
      tracks: [
        Track(
          id: Track.ID(1), name: "A",
          clips: [
            Self.clip(1, start: 0, length: 96_000, fadeOut: fade),
            Self.clip(2, start: 72_000, crop: 200_000, length: 96_000, fadeIn: fade),
          ])
      ])
    let root = try Self.draw(crossfaded)
    #expect(root.all("overlap").isEmpty)
    let mark = try #require(root.first("crossfade"))
    #expect(mark.attributes["data-start"] == "72000" && mark.attributes["data-length"] == "24000")

    var layered = crossfaded
    layered.tracks[0].clips = ClipList(
      crossfaded.tracks[0].clips + [Self.clip(3, start: 80_000, crop: 300_000, length: 4_800)])
    let overlaps = try Self.draw(layered).all("overlap")
    #expect(overlaps.map { $0.attributes["data-start"] ?? "" } == ["80000"])
  }

  /// A track's gain and pan are not cut short at the default width, however long they are.
  @Test func aTracksSettingsAreWhole() throws {
    let project = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source],
      tracks: [
        Track(
          id: Track.ID(1), name: "A", gain: Gain(decibels: -12.5), pan: -1,
          envelope: Envelope(points: [Envelope.Point(time: .zero, decibels: -3)]),
          clips: [Self.clip(1, start: 0, length: 96_000)])
      ])
    let root = try Self.draw(project)
    #expect(root.first("settings")?.allText == "gain -12.5 dB · pan L100")
  }

  /// 20,000 clips of 12 ms each over 4 minutes: each is an element, and the lane shows one
  /// waveform through them (not a block of boxes), nearly every column of it.
  @Test func manyShortClipsStillShowAWaveform() throws {
    let clips = (0..<20_000).map { index in
      Self.clip(Int64(index + 1), start: Int64(index) * 576, crop: Int64(index) * 100, length: 576)
    }
    let project = Project(
      sampleRate: Self.rate, channels: 2, sources: [Self.source],
      tracks: [Track(id: Track.ID(1), name: "A", clips: ClipList(clips))])
    let root = try Self.draw(project, count: 11_520_000)
    #expect(root.all("clip").count == 20_000)
    #expect(root.all("box").isEmpty)
    let waves = root.all("wave")
    #expect(waves.count == 1)
    let wave = try #require(waves.first)
    #expect((wave.number("data-columns") ?? 0) >= 1_000)
    // The sine's extremes, ±0.5: the outline reaches a quarter of the wave area's height
    // either side of its middle.
    let top = try #require(wave.number("data-top"))
    let bottom = try #require(wave.number("data-bottom"))
    let heights = wave.pathPoints.map(\.y)
    let middle = (top + bottom) / 2
    #expect(abs((heights.min() ?? 0) - (middle - (bottom - top) / 4)) < 1)
    #expect(abs((heights.max() ?? 0) - (middle + (bottom - top) / 4)) < 1)
  }
}
