import Foundation
import Testing
import Timeline

@Suite("Clip edits")
struct ClipEditsTests {
  static let layouts: [Clip] = {
    var clips: [Clip] = []
    for length: Int64 in [2, 7, 48] {
      for (fadeIn, fadeOut) in [(0, 0), (1, 0), (0, 1), (3, 2), (length / 2, length - length / 2)]
      where fadeIn + fadeOut <= length {
        for curve in FadeCurve.allCases {
          clips.append(
            Fixture.clip(
              1, start: 1_000, crop: 500, length: length, fadeIn: fadeIn, fadeOut: fadeOut,
              curve: curve, gain: -3))
        }
      }
    }
    return clips
  }()

  /// Every split point of every layout inside the clip splits it into halves that play exactly
  /// what the original played (inside a fade too: each half keeps its part of the curve, the
  /// gains checked against the tests' own fade formulas), and the halves join back into it;
  /// a point outside the clip is refused.
  @Test(arguments: layouts)
  func splitPlaysExactlyWhatTheOriginalPlayed(clip: Clip) throws {
    let original = Fixture.playback(of: [clip])
    for at in (clip.timelineStart.frames - 1)...(clip.timelineEnd.frames + 1) {
      let position = FramePosition(at)
      let leftLength = at - clip.timelineStart.frames
      let rightLength = clip.timelineEnd.frames - at
      if leftLength <= 0 || rightLength <= 0 {
        #expect(
          throws: TimelineError.splitOutsideClip(
            clip: clip.id, at: position, range: clip.timelineRange, sampleRate: 48_000)
        ) {
          try clip.split(at: position, newID: Clip.ID(2), sampleRate: 48_000)
        }
      } else {
        let (left, right) = try clip.split(at: position, newID: Clip.ID(2), sampleRate: 48_000)
        #expect(Fixture.playback(of: [left, right]) == original)
        #expect(Fixture.modelPlayback(of: [left, right]) == Fixture.modelPlayback(of: [clip]))
        // Property: splitting then rejoining gives back the original.
        #expect(try left.joined(with: right) == clip)
        guard leftLength >= clip.fadeIn.length.frames, rightLength >= clip.fadeOut.length.frames
        else {
          // Inside a fade: each half keeps its part of the curve.
          #expect(left.fadeIn.isPartial || right.fadeOut.isPartial)
          continue
        }
        #expect(
          left
            == Clip(
              id: clip.id, source: clip.source, timelineStart: clip.timelineStart,
              sourceRange: FrameRange(start: clip.sourceRange.start, count: FrameCount(leftLength)),
              gain: clip.gain, fadeIn: clip.fadeIn, fadeOut: .none))
        #expect(
          right
            == Clip(
              id: Clip.ID(2), source: clip.source, timelineStart: position,
              sourceRange: FrameRange(
                start: clip.sourceRange.start + FrameCount(leftLength),
                count: FrameCount(rightLength)),
              gain: clip.gain, fadeIn: .none, fadeOut: clip.fadeOut))
      }
    }
  }

  @Test func joinRefusesClipsThatDoNotContinueEachOther() throws {
    let clip = Fixture.clip(1, start: 0, length: 100)
    let (left, right) = try clip.split(at: 40, newID: Clip.ID(2), sampleRate: 48_000)
    #expect(throws: TimelineError.notJoinable(Clip.ID(1), Clip.ID(2))) {
      try left.joined(with: right.moved(to: 41))
    }
    var louder = right
    louder.gain = Gain(decibels: 1)
    #expect(throws: TimelineError.notJoinable(Clip.ID(1), Clip.ID(2))) {
      try left.joined(with: louder)
    }
    #expect(throws: TimelineError.notJoinable(Clip.ID(2), Clip.ID(1))) {
      try right.joined(with: left)
    }
  }

  /// Trimming moves an edge; every frame still inside the clip plays the same source frame.
  @Test(
    arguments: [(-100, 0), (0, 100), (250, 0), (0, -250), (100, -100), (-500, 500)]
      as [(Int64, Int64)])
  func trimKeepsTheAudioInPlace(startShift: Int64, endShift: Int64) throws {
    let clip = Fixture.clip(1, start: 10_000, crop: 2_000, length: 1_000, fadeIn: 50, fadeOut: 60)
    let trimmed = try clip.trimmed(
      start: clip.timelineStart + FrameCount(startShift),
      end: clip.timelineEnd + FrameCount(endShift),
      sampleRate: 48_000)
    #expect(
      trimmed
        == Clip(
          id: clip.id, source: clip.source, timelineStart: FramePosition(10_000 + startShift),
          sourceRange: FrameRange(
            start: FramePosition(2_000 + startShift),
            count: FrameCount(1_000 - startShift + endShift)),
          gain: clip.gain, fadeIn: clip.fadeIn, fadeOut: clip.fadeOut))
    // Each frame plays source frame (timeline frame − 8 000), before and after.
    #expect(trimmed.sourceRange.start.frames - trimmed.timelineStart.frames == -8_000)
  }

  @Test func trimRefusesAnInvertedOrTooShortClip() {
    let clip = Fixture.clip(1, start: 100, length: 100, fadeIn: 30, fadeOut: 30)
    #expect(
      throws: TimelineError.trimInverted(clip: clip.id, start: 200, end: 150, sampleRate: 48_000)
    ) {
      try clip.trimmed(start: 200, end: 150, sampleRate: 48_000)
    }
    #expect(
      throws: TimelineError.fadesOverlap(
        clip: clip.id, fadeIn: 30, fadeOut: 30, clipLength: 50, sampleRate: 48_000)
    ) {
      try clip.trimmed(start: 150, sampleRate: 48_000)
    }
  }

  @Test func moveChangesOnlyThePosition() {
    let clip = Fixture.clip(1, start: 100, crop: 7, length: 100, fadeIn: 30)
    var expected = clip
    expected.timelineStart = 5_000
    #expect(clip.moved(to: 5_000) == expected)
  }

  /// A clip is plain data (no reference to count), so a chunk of clips copies as bytes: a
  /// stored property that holds a reference would make every snapshot copy cost a call and a
  /// reference count per clip. Its name reads back as set, byte for byte; equal names compare
  /// equal; the JSON is what it was when the name was a stored string (the same keys, no
  /// `name` key for none); a printed clip shows its name, not its number.
  @Test func aClipIsPlainDataAndItsNameReadsBack() throws {
    #expect(_isPOD(Clip.self))
    var clip = Clip(
      id: Clip.ID(7), source: Source.ID(2), timelineStart: 10,
      sourceRange: FrameRange(start: 5, count: 20), name: "intro")
    #expect(clip.name == "intro")
    let same = Clip(
      id: Clip.ID(7), source: Source.ID(2), timelineStart: 10,
      sourceRange: FrameRange(start: 5, count: 20), name: String("in") + "tro")
    #expect(same == clip)
    #expect(Set([same, clip]).count == 1)
    clip.name = "outro"
    #expect(clip.name == "outro" && clip != same)
    clip.name = nil
    #expect(clip.name == nil)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let named = String(decoding: try encoder.encode(same), as: UTF8.self)
    #expect(
      named
        == #"{"fadeIn":{"curve":"linear","fullCut":0,"length":0,"silentCut":0},"fadeOut":{"curve":"linear","fullCut":0,"length":0,"silentCut":0},"gain":0,"id":"c7","name":"intro","source":"s2","sourceRange":{"count":20,"start":5},"timelineStart":10}"#
    )
    let unnamed = String(decoding: try encoder.encode(clip), as: UTF8.self)
    #expect(!unnamed.contains("name"))
    #expect(try JSONDecoder().decode(Clip.self, from: Data(named.utf8)) == same)
    #expect(try JSONDecoder().decode(Clip.self, from: Data(unnamed.utf8)) == clip)
    // Two spellings of the same Hangul syllable (one code point, or two jamo): `String`
    // calls them equal, the file stores different bytes, and each clip keeps its own.
    let (composed, jamo) = ("\u{AC00}", "\u{1100}\u{1161}")
    #expect(composed == jamo)
    var first = clip
    first.name = jamo
    var second = clip
    second.name = composed
    #expect(Array(first.name?.utf8 ?? "".utf8) == Array(jamo.utf8))
    #expect(Array(second.name?.utf8 ?? "".utf8) == Array(composed.utf8))
    #expect(first != second)
    #expect(String(describing: same).hasSuffix(#"name: Optional("intro"))"#))
  }
}

@Suite("Fade shapes")
struct FadeShapeTests {
  @Test(arguments: FadeCurve.allCases)
  func curvesRunFromSilenceToFullAndRiseMonotonically(curve: FadeCurve) {
    #expect(curve.shape(0) == 0)
    #expect(abs(curve.shape(1) - 1) < 1e-15)
    var previous = -1.0
    for step in 0...1_000 {
      let value = curve.shape(Double(step) / 1_000)
      #expect(value >= previous)
      previous = value
    }
  }

  @Test func linearFadesMatchTheDocumentedRamp() {
    let clip = Fixture.clip(1, start: 0, length: 10, fadeIn: 4, fadeOut: 5)
    let gains = (0..<10).map { clip.fadeGain(at: Int64($0)) }
    #expect(gains == [0, 0.25, 0.5, 0.75, 1, 1, 0.8, 0.6, 0.4, 0.2])
  }

  /// An equal-power crossfade of uncorrelated signals keeps constant power: in² + out² = 1.
  @Test func equalPowerIsConstantPower() {
    for step in 0...100 {
      let x = Double(step) / 100
      let fadeIn = FadeCurve.equalPower.shape(x)
      let fadeOut = FadeCurve.equalPower.shape(1 - x)
      #expect(abs(fadeIn * fadeIn + fadeOut * fadeOut - 1) < 1e-12)
    }
  }

  /// An s-curve crossfade keeps constant amplitude: in + out = 1.
  @Test func sCurveIsConstantAmplitude() {
    for step in 0...100 {
      let x = Double(step) / 100
      #expect(abs(FadeCurve.sCurve.shape(x) + FadeCurve.sCurve.shape(1 - x) - 1) < 1e-12)
    }
  }

  @Test(arguments: [
    ("linear", FadeCurve.linear as FadeCurve?), ("equal-power", .equalPower),
    ("equalPower", .equalPower),
    ("s-curve", .sCurve), ("SCurve", .sCurve), ("exp", .exponential), ("exponential", .exponential),
    ("log", nil), ("", nil),
  ])
  func curveNamesParse(text: String, expected: FadeCurve?) {
    #expect(FadeCurve(parsing: text) == expected)
  }
}
