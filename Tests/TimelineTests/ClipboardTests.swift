import ReferenceRenders
import Testing
import Timeline

/// Range copy and paste in the model: a paste plays, frame by frame, what the copied range
/// played, and an envelope excerpt put back anywhere keeps every other frame's gain.
@Suite("Range copy and paste")
struct ClipboardTests {
  /// Random clips with fades on two tracks, random ranges, pasted after the end: each track
  /// plays at `position + i` exactly what it played at `range.start + i` (same source frames,
  /// same gains, bit for bit, by the code and by the tests' own fade model), wherever the
  /// range starts and ends, inside fades too (a copied piece keeps its part of a cut fade).
  @Test(arguments: [1, 2, 3, 4] as [UInt64])
  func randomCopiesPasteWhatTheRangePlayed(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    var exact = 0
    for _ in 0..<200 {
      var next: Int64 = 1
      func clips() -> [Clip] {
        (0..<Int.random(in: 0...4, using: &rng)).map { _ in
          let length = Int64.random(in: 20...200, using: &rng)
          let fadeIn = Int64.random(in: 0...(length / 3), using: &rng)
          defer { next += 1 }
          return Fixture.clip(
            next, start: .random(in: 0...400, using: &rng),
            crop: .random(in: 0...1_000, using: &rng),
            length: length, fadeIn: fadeIn, fadeOut: .random(in: 0...(length / 3), using: &rng),
            curve: FadeCurve.allCases.randomElement(using: &rng) ?? .linear,
            gain: .random(in: -12...0, using: &rng))
        }
      }
      let project = Fixture.project(clips(), secondTrack: clips())
      let start = Int64.random(in: 0...500, using: &rng)
      let range = FrameRange(
        start: FramePosition(start), count: FrameCount(.random(in: 1...300, using: &rng)))
      let board = try project.copyRange(range, name: "r")
      let cutsAFade = project.allClips.contains { clip in
        let fades = [
          FrameRange(start: clip.timelineStart, count: clip.fadeIn.length),
          FrameRange(start: clip.timelineEnd - clip.fadeOut.length, end: clip.timelineEnd),
        ]
        return fades.contains { fade in
          [range.start, range.end].contains { $0 > fade.start && $0 < fade.end }
        }
      }
      let position = FramePosition(1_000 + .random(in: 0...100, using: &rng))
      let pasted = try project.applying(
        project.paste(board, at: position, ripple: false) {
          defer { next += 1 }
          return Clip.ID(next)
        })
      if cutsAFade { exact += 1 }
      for (before, after) in zip(project.tracks, pasted.tracks) {
        let old = Fixture.playback(of: before.clips)
        let new = Fixture.playback(of: after.clips)
        let (modelOld, modelNew) = (
          Fixture.modelPlayback(of: before.clips), Fixture.modelPlayback(of: after.clips)
        )
        for i in 0..<range.count.frames {
          #expect(
            Set(new[position.frames + i] ?? []) == Set(old[range.start.frames + i] ?? []),
            "seed \(seed): frame \(i) of \(range) pasted at \(position.frames)")
          #expect(
            Set(modelNew[position.frames + i] ?? [])
              == Set(modelOld[range.start.frames + i] ?? []),
            "seed \(seed): frame \(i) of \(range) pasted at \(position.frames)")
        }
        // The pieces are the only new clips, and nothing else moved.
        #expect(Set(after.clips.filter { $0.timelineStart < position }) == Set(before.clips))
      }
    }
    // Ranges that cut through a fade, checked like the others.
    #expect(exact > 20)
  }

  /// A random envelope's excerpt over a random range, put over another random range of it:
  /// every frame outside keeps its gain, every frame inside has the excerpt's.
  @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
  func anEnvelopeExcerptReplacesExactlyItsRange(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    for _ in 0..<40 {
      var time: Int64 = .random(in: 0...50, using: &rng)
      var points: [Envelope.Point] = []
      for _ in 0..<Int.random(in: 1...6, using: &rng) {
        let decibels: Double =
          Int.random(in: 0..<6, using: &rng) == 0 ? -.infinity : .random(in: -40...6, using: &rng)
        points.append(
          Envelope.Point(
            time: FramePosition(time), decibels: decibels,
            shape: EnvelopeShape.allCases.randomElement(using: &rng) ?? .decibels))
        time += .random(in: 1...120, using: &rng)
      }
      let envelope = Envelope(points: points)
      let source = FrameRange(
        start: FramePosition(.random(in: 0...400, using: &rng)),
        count: FrameCount(.random(in: 1...200, using: &rng)))
      let target = source.movedTo(FramePosition(.random(in: 0...500, using: &rng)))
      let result = envelope.replacing(target, with: envelope.excerpt(source))
      try result.validate(track: Track.ID(1), sampleRate: 48_000)
      for frame in Int64(0)..<900 {
        let expected =
          target.contains(FramePosition(frame))
          ? envelope.gain(at: source.start.frames + frame - target.start.frames)
          : envelope.gain(at: frame)
        let gain = result.gain(at: frame)
        #expect(
          abs(gain - expected) <= 1e-12 * max(1, expected),
          "seed \(seed): \(envelope.storageText) over \(source) at \(target): frame \(frame) \(gain) ≠ \(expected)"
        )
      }
    }
  }

  /// The fade rule at the edges, as a whole value: a fade outside the range goes, one inside
  /// stays, one the range cuts keeps its part of the curve inside the range.
  @Test func fadesAtTheEdges() throws {
    let project = Fixture.project([
      Fixture.clip(1, start: 0, length: 1_000, fadeIn: 100, fadeOut: 100),
      Fixture.clip(2, start: 1_000, crop: 5_000, length: 1_000, fadeIn: 300, fadeOut: 200),
    ])
    let board = try project.copyRange(
      FrameRange(start: 500, end: 1_100), tracks: [Track.ID(1)], name: "edge")
    #expect(
      board
        == Clipboard(
          name: "edge", range: FrameRange(start: 500, end: 1_100),
          tracks: [Clipboard.CopiedTrack(id: Track.ID(1), envelope: nil)],
          pieces: [
            Clipboard.Piece(
              track: Track.ID(1), copiedFrom: Clip.ID(1), source: Source.ID(1), offset: 0,
              sourceRange: FrameRange(start: 500, count: 500), gain: .unity, fadeIn: .none,
              fadeOut: Fade(length: 100)),
            Clipboard.Piece(
              track: Track.ID(1), copiedFrom: Clip.ID(2), source: Source.ID(1), offset: 500,
              sourceRange: FrameRange(start: 5_000, count: 100), gain: .unity,
              fadeIn: Fade(length: 100, fullCut: 200), fadeOut: .none),
          ]))
    #expect(throws: TimelineError.invalidClipboardName("a b")) {
      try project.copyRange(FrameRange(start: 0, count: 1), name: "a b")
    }
  }
}
