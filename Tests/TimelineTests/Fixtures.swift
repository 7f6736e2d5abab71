import Foundation
import Timeline

/// Small hand-built projects for the tests. Every value is written out so a failing assertion
/// shows what was expected.
enum Fixture {
  static let rate = 48_000

  static let speech = Source(
    id: Source.ID(1), path: "/audio/speech.wav", contentHash: "h1", sampleRate: 48_000,
    channels: 1, frameCount: 480_000)
  /// A 44.1 kHz stereo source of 10 s: 480 000 frames at the project rate.
  static let guitar = Source(
    id: Source.ID(2), path: "/audio/guitar.flac", contentHash: "h2", sampleRate: 44_100,
    channels: 2, frameCount: 441_000)

  static func clip(
    _ id: Int64, start: Int64, crop: Int64 = 0, length: Int64, source: Int64 = 1,
    fadeIn: Int64 = 0, fadeOut: Int64 = 0, curve: FadeCurve = .linear, gain: Double = 0
  ) -> Clip {
    Clip(
      id: Clip.ID(id), source: Source.ID(source), timelineStart: FramePosition(start),
      sourceRange: FrameRange(start: FramePosition(crop), count: FrameCount(length)),
      gain: Gain(decibels: gain), fadeIn: Fade(length: FrameCount(fadeIn), curve: curve),
      fadeOut: Fade(length: FrameCount(fadeOut), curve: curve))
  }

  static func project(_ clips: [Clip] = [], secondTrack: [Clip] = []) -> Project {
    Project(
      sampleRate: rate, channels: 2, sources: [speech, guitar],
      tracks: [
        Track(id: Track.ID(1), name: "Voice", clips: clips),
        Track(
          id: Track.ID(2), name: "Guitar", gain: Gain(decibels: -3), pan: 0.5, clips: secondTrack),
      ])
  }

  /// What a clip plays, frame by frame: timeline frame → (source frame, gain).
  static func playback(of clips: some Sequence<Clip>) -> [Int64: [SourceSample]] {
    var out: [Int64: [SourceSample]] = [:]
    for clip in clips {
      for i in 0..<clip.length.frames {
        out[clip.timelineStart.frames + i, default: []].append(
          SourceSample(
            source: clip.source, frame: clip.sourceRange.start.frames + i,
            gain: clip.gain.linear * clip.fadeGain(at: i)))
      }
    }
    return out
  }

  /// What `clips` play, as ``playback(of:)``, with the fade gains from the tests' own model:
  /// the documented curve formulas written out here, over the part of each fade's curve that
  /// the clip keeps (frames `silentCut ..< silentCut + length` of `curveLength`), so nothing of
  /// `Fade.gain` is reused.
  static func modelPlayback(of clips: some Sequence<Clip>) -> [Int64: [SourceSample]] {
    func shape(_ curve: FadeCurve, _ x: Double) -> Double {
      switch curve {
      case .linear: x
      case .equalPower: sin(x * Double.pi / 2)
      case .sCurve: (1 - cos(Double.pi * x)) / 2
      case .exponential: (exp2(10 * x) - 1) / 1023
      }
    }
    var out: [Int64: [SourceSample]] = [:]
    for clip in clips {
      let n = clip.length.frames
      for i in 0..<n {
        var gain = clip.gain.linear
        let fadeIn = clip.fadeIn
        if i < fadeIn.length.frames {
          let along = fadeIn.silentCut.frames + i
          gain *= shape(fadeIn.curve, Double(along) / Double(fadeIn.curveLength.frames))
        }
        let fadeOut = clip.fadeOut
        if n - i <= fadeOut.length.frames {
          let along = fadeOut.silentCut.frames + (n - i)
          gain *= shape(fadeOut.curve, Double(along) / Double(fadeOut.curveLength.frames))
        }
        out[clip.timelineStart.frames + i, default: []].append(
          SourceSample(
            source: clip.source, frame: clip.sourceRange.start.frames + i, gain: gain))
      }
    }
    return out
  }

  struct SourceSample: Hashable {
    let source: Source.ID
    let frame: Int64
    let gain: Double
  }
}
