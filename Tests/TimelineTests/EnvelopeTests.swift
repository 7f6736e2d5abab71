import Foundation
import ReferenceRenders
import Testing
import Timeline

@Suite("Envelopes: volume automation")
struct EnvelopeTests {
  static func envelope(_ points: [(Int64, Double)]) -> Envelope {
    Envelope(points: points.map { Envelope.Point(time: FramePosition($0.0), decibels: $0.1) })
  }

  /// 1 to 6 points from frame 0–50 on, 1–60 frames apart: gains from −60 to +6 dB or (one in
  /// four) silence, each segment of a random shape.
  static func randomEnvelope(_ rng: inout SeededGenerator) -> Envelope {
    var time = Int64.random(in: 0...50, using: &rng)
    var points: [Envelope.Point] = []
    for _ in 0..<Int.random(in: 1...6, using: &rng) {
      points.append(
        Envelope.Point(
          time: FramePosition(time),
          decibels: Int.random(in: 0..<4, using: &rng) == 0
            ? -.infinity : Double(Int.random(in: -600...60, using: &rng)) / 10,
          shape: EnvelopeShape.allCases.randomElement(using: &rng)!))
      time += Int64.random(in: 1...60, using: &rng)
    }
    return Envelope(points: points)
  }

  @Test func holdsBeforeAndAfterAndIsExactAtThePoints() {
    let points: [(Int64, Double)] = [(100, -6), (200, 0), (300, -.infinity), (400, -12)]
    let envelope = Self.envelope(points)
    #expect(envelope.gain(at: -5) == pow(10, -6.0 / 20))
    #expect(envelope.gain(at: 100) == pow(10, -6.0 / 20))
    #expect(envelope.gain(at: 200) == 1)
    #expect(envelope.gain(at: 300) == 0)
    #expect(envelope.gain(at: 400) == pow(10, -12.0 / 20))
    #expect(envelope.gain(at: 1_000_000) == pow(10, -12.0 / 20))
    // Halfway in dB between -6 and 0 is -3 dB; halfway to silence is half the amplitude.
    #expect(abs(envelope.gain(at: 150) - pow(10, -3.0 / 20)) < 1e-15)
    #expect(abs(envelope.gain(at: 250) - 0.5) < 1e-15)
    #expect(abs(envelope.gain(at: 350) - pow(10, -12.0 / 20) / 2) < 1e-15)
    for t in stride(from: Int64(0), through: 500, by: 7) {
      #expect(
        abs(envelope.gain(at: t) - EnvelopeModel.gain(points.map { ($0.0, $0.1) }, at: t)) < 1e-12)
    }
  }

  /// Each shape against the model, at every frame of random envelopes; and by hand: a hold
  /// steps at the next point, a linear segment is halfway in amplitude halfway along.
  @Test func shapes() {
    let envelope = Envelope(points: [
      Envelope.Point(time: 0, decibels: -6, shape: .hold),
      Envelope.Point(time: 100, decibels: 0, shape: .linear),
      Envelope.Point(time: 200, decibels: -20, shape: .decibels),
      Envelope.Point(time: 300, decibels: -.infinity),
    ])
    #expect(envelope.gain(at: 99) == pow(10, -6.0 / 20))
    #expect(envelope.gain(at: 100) == 1)
    #expect(abs(envelope.gain(at: 150) - (1 + 0.1) / 2) < 1e-15)
    #expect(abs(envelope.gain(at: 250) - 0.05) < 1e-15)
    var rng = SeededGenerator(seed: 9)
    for _ in 0..<200 {
      let envelope = EnvelopeTests.randomEnvelope(&rng)
      let model = envelope.points.map { ($0.time.frames, $0.decibels, $0.shape.rawValue) }
      for t in Int64(0)...400 {
        let expected = EnvelopeModel.gain(shaped: model, at: t)
        #expect(abs(envelope.gain(at: t) - expected) <= 1e-12 * max(expected, 1e-300), "\(t)")
      }
      #expect(Envelope(storageText: envelope.storageText) == envelope)
    }
  }

  @Test func parsingShapes() throws {
    let rate = 48_000
    let all = try Envelope(parsing: "0s:0dB,1s:-6dB,2s:-inf", shapes: "hold", sampleRate: rate)
    #expect(all.points.map(\.shape) == [.hold, .hold, .decibels])
    let each = try Envelope(
      parsing: "0s:0dB,1s:-6dB,2s:-inf", shapes: "linear, DB", sampleRate: rate)
    #expect(each.points.map(\.shape) == [.linear, .decibels, .decibels])
    #expect(each.storageText == "0:0.0:linear;48000:-6.0;96000:-inf")
    #expect(throws: TimelineError.envelopeShapeCount(given: 3, segments: 2)) {
      try Envelope(parsing: "0s:0dB,1s:-6dB,2s:-inf", shapes: "db,db,db", sampleRate: rate)
    }
    #expect(throws: TimelineError.invalidEnvelopeShape("curvy")) {
      try Envelope(parsing: "0s:0dB,1s:-6dB", shapes: "curvy", sampleRate: rate)
    }
    #expect(Envelope(storageText: "0:0.0:curvy") == nil)
    #expect(Envelope(storageText: "0:0.0:hold:x") == nil)
  }

  @Test func parsingStorageAndValidation() throws {
    let parsed = try Envelope(parsing: "0s:0dB, 1:02.5:-6 dB,70s:-inf", sampleRate: 48_000)
    #expect(parsed == Self.envelope([(0, 0), (3_000_000, -6), (3_360_000, -.infinity)]))
    #expect(Envelope(storageText: parsed.storageText) == parsed)
    let odd = Self.envelope([(0, -0.1 + 0.2), (7, -143.99999)])
    #expect(Envelope(storageText: odd.storageText) == odd)
    #expect(Envelope(storageText: "1:x") == nil)
    #expect(throws: TimelineError.invalidEnvelopePoint("10s")) {
      try Envelope(parsing: "10s", sampleRate: 48_000)
    }
    #expect(throws: TimelineError.self) { try Envelope(parsing: "1s:loud", sampleRate: 48_000) }
    #expect(
      throws: TimelineError.envelopeNotIncreasing(
        track: Track.ID(1), time: FramePosition(100), sampleRate: 48_000)
    ) {
      try Self.envelope([(100, 0), (100, -3)]).validate(track: Track.ID(1), sampleRate: 48_000)
    }
    #expect(throws: TimelineError.emptyEnvelope(track: Track.ID(1))) {
      try Envelope(points: []).validate(track: Track.ID(1), sampleRate: 48_000)
    }
    // Through a commit's validation: a track with a bad envelope is refused.
    var project = Project(sampleRate: 48_000, channels: 2)
    project = try project.applying([.setTrack(Track(id: Track.ID(1), name: "A"))])
    #expect(throws: TimelineError.self) {
      try project.setEnvelope(Track.ID(1), Self.envelope([(5, 0), (1, 0)]))
    }
    let set = try project.applying(project.setEnvelope(Track.ID(1), parsed))
    #expect(set.tracks[0].envelope == parsed)
    let master = try set.applying(set.setMasterGain(Gain(decibels: -3)))
    #expect(master.masterGain == Gain(decibels: -3))
    #expect(throws: TimelineError.self) { try set.setMasterGain(Gain(decibels: 100)) }
  }
}

@Suite("Envelopes under range edits")
struct EnvelopeRangeTests {
  /// Random envelopes (silent points and every shape among them): a ripple cut keeps every
  /// frame's gain (before the range as it was, after it as it was the range's length later), and
  /// so does an opened gap.
  @Test(arguments: [UInt64(1), 2, 3, 4])
  func cutsAndGapsKeepEveryFramesGain(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    for _ in 0..<200 {
      let envelope = EnvelopeTests.randomEnvelope(&rng)
      let a = Int64.random(in: 0...300, using: &rng)
      let length = Int64.random(in: 1...80, using: &rng)
      let cut = envelope.removing(FrameRange(start: FramePosition(a), count: FrameCount(length)))
      try cut.validate(track: Track.ID(1), sampleRate: 48_000)
      let gap = envelope.opening(at: FramePosition(a), length: FrameCount(length))
      try gap.validate(track: Track.ID(1), sampleRate: 48_000)
      for t in Int64(0)...400 {
        let expected = envelope.gain(at: t < a ? t : t + length)
        #expect(
          abs(cut.gain(at: t) - expected) <= 1e-12 * expected,
          "cut \(envelope.points) at \(a)+\(length), t \(t)")
        if t < a || t >= a + length {
          let before = envelope.gain(at: t < a ? t : t - length)
          #expect(
            abs(gap.gain(at: t) - before) <= 1e-12 * before,
            "gap \(envelope.points) at \(a)+\(length), t \(t)")
        }
      }
    }
  }

  /// An insert then a ripple cut of the gap it opened gives back the envelope it began with,
  /// point for point (the insert's two points, one frame apart, the first at an interpolated
  /// gain such as -4.50003125 dB, stayed), for lines in dB and in amplitude, to and from
  /// silence too.
  @Test(arguments: [EnvelopeShape.decibels, .linear])
  func anInsertCutAgainRestoresTheEnvelope(shape: EnvelopeShape) throws {
    let original = Envelope(points: [
      Envelope.Point(time: 0, decibels: 0, shape: shape),
      Envelope.Point(time: 48_000, decibels: -6, shape: shape),
      Envelope.Point(time: 144_000, decibels: -3, shape: shape),
      Envelope.Point(time: 192_000, decibels: -.infinity, shape: shape),
      Envelope.Point(time: 240_000, decibels: -10),
    ])
    let gaps: [(Int64, Int64)] = [
      (96_000, 72_000), (1, 5), (50_001, 1), (150_000, 48_000), (200_000, 999),
    ]
    for (at, length) in gaps {
      let gap = original.opening(at: FramePosition(at), length: FrameCount(length))
      #expect(gap != original)
      let back = gap.removing(FrameRange(start: FramePosition(at), count: FrameCount(length)))
      // A dB segment to or from silence runs linearly in amplitude, and the insert said so
      // with the linear shape, which stays (the same gains).
      var expected = original
      if shape == .decibels && at > 144_000 {
        expected.points[at > 192_000 ? 3 : 2].shape = .linear
      }
      #expect(back == expected, "at \(at)+\(length): \(back.points)")
    }
  }

  /// A cut inside a segment running to silence adds a point with the gain at the cut, however
  /// far below the least gain a gain may be typed with, so that no frame changes; the points
  /// `ls --json` then shows read back exactly.
  @Test func cutsNearSilenceKeepTheirGain() throws {
    let envelope = Envelope(points: [
      Envelope.Point(time: 0, decibels: 0), Envelope.Point(time: 28_800_000, decibels: -.infinity),
    ])
    let cut = envelope.removing(FrameRange(start: 100, end: 28_799_999))
    try cut.validate(track: Track.ID(1), sampleRate: 48_000)
    #expect(cut.points.last.map { $0.decibels < Gain.minimumDecibels } == true)
    for t in Int64(0)...102 {
      let expected = envelope.gain(at: t < 100 ? t : t + 28_799_899)
      #expect(abs(cut.gain(at: t) - expected) <= 1e-12 * expected, "\(t)")
    }
    let typed = cut.points.map { "\($0.time.frames)f:\($0.decibels)" }.joined(separator: ",")
    let reread = try Envelope(
      parsing: typed, shapes: cut.points.dropLast().map(\.shape.rawValue).joined(separator: ","),
      sampleRate: 48_000)
    #expect(reread == cut)
  }

  /// `clip rm --ripple` moves the envelope with the clips after the hole, so it refuses when a
  /// clip that stays plays on past the hole's start, and says what to do instead.
  @Test func aRippleRemovalRefusesToMoveTheEnvelopeUnderAClipThatStays() throws {
    let project = Project(
      sampleRate: 48_000, channels: 2, sources: [Fixture.speech],
      tracks: [
        Track(
          id: Track.ID(1), name: "A",
          envelope: Envelope(points: [Envelope.Point(time: 0, decibels: 0)]),
          clips: [
            Fixture.clip(1, start: 0, length: 200), Fixture.clip(2, start: 150, length: 100),
            Fixture.clip(3, start: 400, length: 100),
          ])
      ])
    #expect(
      throws: TimelineError.rippleOverlap(
        removed: Clip.ID(2), range: FrameRange(start: 150, end: 250), staying: Clip.ID(1),
        track: Track.ID(1), envelope: true, sampleRate: 48_000)
    ) { try project.removeClip(Clip.ID(2), ripple: true) }
    // Nothing stays past c3's start: it goes, the envelope with it.
    let removed = try project.applying(project.removeClip(Clip.ID(3), ripple: true))
    #expect(removed.tracks[0].clips.map(\.id) == [Clip.ID(1), Clip.ID(2)])
    // Without an envelope c3 would still move under c1 (issue 23, item 3): refused the same.
    var plain = project
    plain.tracks[0].envelope = nil
    #expect(
      throws: TimelineError.rippleOverlap(
        removed: Clip.ID(2), range: FrameRange(start: 150, end: 250), staying: Clip.ID(1),
        track: Track.ID(1), envelope: false, sampleRate: 48_000)
    ) { try plain.removeClip(Clip.ID(2), ripple: true) }
  }

  /// Through the edits: a ripple cut, a gap and a ripple removal move the envelope with the
  /// clips; a cut without ripple leaves it alone.
  @Test func rangeEditsMoveTheEnvelope() throws {
    let envelope = Envelope(points: [
      Envelope.Point(time: 100, decibels: 0), Envelope.Point(time: 500, decibels: -12),
    ])
    let project = Project(
      sampleRate: 48_000, channels: 2, sources: [Fixture.speech],
      tracks: [
        Track(
          id: Track.ID(1), name: "A", envelope: envelope,
          clips: [Fixture.clip(1, start: 0, length: 200), Fixture.clip(2, start: 300, length: 200)])
      ])
    let rippled = try project.applying(
      project.cutRange(FrameRange(start: 200, end: 300), ripple: true) { Clip.ID(9) })
    #expect(rippled.tracks[0].envelope == envelope.removing(FrameRange(start: 200, end: 300)))
    #expect(rippled.tracks[0].envelope?.points.last?.time == 400)
    let plain = try project.applying(
      project.cutRange(FrameRange(start: 200, end: 300), ripple: false) { Clip.ID(9) })
    #expect(plain.tracks[0].envelope == envelope)
    let gap = try project.applying(project.insertGap(at: 250, length: 50) { Clip.ID(9) })
    #expect(gap.tracks[0].envelope?.points.last?.time == 550)
    let removed = try project.applying(project.removeClip(Clip.ID(1), ripple: true))
    #expect(removed.tracks[0].envelope == envelope.removing(FrameRange(start: 0, end: 200)))
  }
}

@Suite("Envelopes keep no redundant points")
struct EnvelopeCompactionTests {
  /// 2 to 8 points, 1–6 frames apart (so one-frame segments are common), gains from a set of
  /// three (so equal neighbours are common) or silence, each segment of a random shape.
  static func repetitiveEnvelope(_ rng: inout SeededGenerator) -> Envelope {
    var time = Int64.random(in: 0...5, using: &rng)
    var points: [Envelope.Point] = []
    for _ in 0..<Int.random(in: 2...8, using: &rng) {
      points.append(
        Envelope.Point(
          time: FramePosition(time),
          decibels: [-.infinity, -6, -2, -2, 0].randomElement(using: &rng)!,
          shape: EnvelopeShape.allCases.randomElement(using: &rng)!))
      time += Int64.random(in: 1...6, using: &rng)
    }
    return Envelope(points: points)
  }

  /// Every frame's gain is bit for bit what it was, the float64 model of the compacted points
  /// agrees, and compacting again changes nothing.
  @Test(arguments: [UInt64(1), 2, 3])
  func compactionKeepsEveryFramesGainExactly(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    var dropped = 0
    for _ in 0..<500 {
      let envelope = Self.repetitiveEnvelope(&rng)
      let compact = envelope.compacted()
      try compact.validate(track: Track.ID(1), sampleRate: 48_000)
      #expect(compact.compacted() == compact, "\(envelope.points)")
      dropped += envelope.points.count - compact.points.count
      let model = compact.points.map { ($0.time.frames, $0.decibels, $0.shape.rawValue) }
      for t in Int64(-2)...60 {
        #expect(compact.gain(at: t) == envelope.gain(at: t), "\(envelope.points) at \(t)")
        let expected = EnvelopeModel.gain(shaped: model, at: t)
        #expect(abs(compact.gain(at: t) - expected) <= 1e-12 * max(expected, 1e-300))
      }
    }
    #expect(dropped > 300)
  }

  /// By hand: flat runs lose their inner points and a first or last point that repeats its
  /// neighbour; a step of two points one frame apart after a hold is one point; a ramp keeps
  /// its points.
  @Test func whatGoes() {
    func points(_ envelope: Envelope) -> [String] {
      envelope.points.map { "\($0.time.frames):\($0.decibels):\($0.shape.rawValue)" }
    }
    let flat = Envelope(points: [
      Envelope.Point(time: 0, decibels: -2), Envelope.Point(time: 100, decibels: -2),
      Envelope.Point(time: 200, decibels: -2), Envelope.Point(time: 300, decibels: -6),
      Envelope.Point(time: 400, decibels: -6),
    ])
    #expect(points(flat.compacted()) == ["200:-2.0:db", "300:-6.0:db"])
    let step = Envelope(points: [
      Envelope.Point(time: 0, decibels: -8), Envelope.Point(time: 50, decibels: -2, shape: .linear),
      Envelope.Point(time: 99, decibels: -2, shape: .linear),
      Envelope.Point(time: 100, decibels: -6, shape: .decibels),
      Envelope.Point(time: 200, decibels: 0),
    ])
    #expect(
      points(step.compacted()) == ["0:-8.0:db", "50:-2.0:hold", "100:-6.0:db", "200:0.0:db"])
    let ramp = Envelope(points: [
      Envelope.Point(time: 0, decibels: -2), Envelope.Point(time: 100, decibels: -4),
      Envelope.Point(time: 200, decibels: -6),
    ])
    #expect(ramp.compacted() == ramp)
    let holdStep = Envelope(points: [
      Envelope.Point(time: 0, decibels: -2, shape: .hold),
      Envelope.Point(time: 100, decibels: -6, shape: .hold),
    ])
    #expect(holdStep.compacted().points.count == 2)
  }

  /// The case: ripple cuts where the gain is flat add no points (they used to add two
  /// each, never merged), and a chain of cuts anywhere keeps every frame's gain: bit for bit
  /// on the plateaus, within the model's 1e-12 on the ramps.
  @Test func rippleCutsOnPlateausAddNoPoints() throws {
    var text: [String] = ["0f:-20"]
    for (i, gain) in [-2.0, -6, -3, -9, -4].enumerated() {
      text += ["\(60_000 * i + 400)f:\(gain)", "\(60_000 * i + 56_000)f:\(gain)"]
    }
    text.append("300000f:-1")
    let original = try Envelope(parsing: text.joined(separator: ","), sampleRate: 48_000)
    #expect(original.compacted() == original)
    var envelope = original
    // Where each frame of the cut envelope was in the original.
    var cuts: [(start: Int64, length: Int64)] = []
    func source(_ t: Int64) -> Int64 {
      cuts.reversed().reduce(t) { t, cut in t < cut.start ? t : t + cut.length }
    }
    var rng = SeededGenerator(seed: 23)
    for _ in 0..<40 {
      // A cut inside the first plateau that is left, so never on a ramp.
      let start = Int64.random(in: 500...2_000, using: &rng)
      let length = Int64.random(in: 1...300, using: &rng)
      let before = envelope.points.count
      envelope = envelope.removing(
        FrameRange(start: FramePosition(start), count: FrameCount(length)))
      cuts.append((start, length))
      #expect(envelope.points.count == before)
    }
    for t in stride(from: Int64(0), through: 300_000, by: 7) {
      #expect(envelope.gain(at: t) == original.gain(at: source(t)), "\(t)")
    }
    // Anywhere: ramps keep the two points a cut needs, plateaus none.
    for _ in 0..<60 {
      let start = Int64.random(in: 0...200_000, using: &rng)
      let length = Int64.random(in: 1...600, using: &rng)
      envelope = envelope.removing(
        FrameRange(start: FramePosition(start), count: FrameCount(length)))
      cuts.append((start, length))
      try envelope.validate(track: Track.ID(1), sampleRate: 48_000)
    }
    for t in stride(from: Int64(0), through: 240_000, by: 3) {
      let expected = original.gain(at: source(t))
      #expect(abs(envelope.gain(at: t) - expected) <= 1e-12 * expected, "\(t)")
    }
    #expect(envelope.points.count <= 12 + 2 * 60)
  }
}
