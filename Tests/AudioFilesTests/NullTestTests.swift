import AudioFiles
import Foundation
import Mixing
import ReferenceRenders
import SafeFiles
import Testing
import Timeline

/// The null test as an app calls it: two projects in, the differing stretches out, checked
/// against the difference of sox's independent renders of both.
@Suite("NullTest")
struct NullTestTests {
  /// -100 dBFS: above the -120 dB the renders agree with sox to, so sox's renders find the
  /// same stretches.
  static let threshold = pow(10, -100.0 / 20)

  static func compile(
    _ cache: AudioCache
  ) -> (Project) throws -> (
    plan: RenderPlan, audio: ProjectAudio
  ) {
    { project in
      let audio = try cache.sources(for: project)
      return (try RenderPlan(project: project, audio: audio.audio), audio)
    }
  }

  @Test("a track turned down differs where its clips play, blamed on it, as sox's renders do")
  func trackGain() throws {
    let folder = try RenderFolder()
    let a = try RenderReferenceTests.linearMix()
    var b = a
    b.tracks[3].gain = Gain(decibels: -7)
    let cache = AudioCache(directory: "\(folder.path)/cache")
    let test = try NullTest(from: a, to: b, threshold: Self.threshold, compile: Self.compile(cache))
    let difference = "\(folder.path)/difference.wav"
    try test.writeDifference(to: OutputDestination.resolve(difference), format: .wav)
    let result = try test.run()

    // The reference: sox renders both versions; their difference, frame by frame.
    for side in ["a", "b"] {
      try FileManager.default.createDirectory(
        atPath: "\(folder.path)/\(side)", withIntermediateDirectories: true)
    }
    let (soxA, soxB) = (
      try ReferenceRender.sox(a, in: folder.path + "/a"),
      try ReferenceRender.sox(b, in: folder.path + "/b")
    )
    #expect(soxA.count == soxB.count)
    // Stretches of frames above the threshold, joined across 50 ms (2,400 frames) or less of
    // agreement: each with its peak.
    let channels = a.channels
    let frames = soxA.count / channels
    var stretches: [(start: Int, end: Int, peak: Float)] = []
    for frame in 0..<frames {
      var largest: Float = 0
      for channel in 0..<channels {
        let index = frame * channels + channel
        largest = max(largest, abs(soxA[index] - soxB[index]))
      }
      guard Double(largest) > Self.threshold else { continue }
      if let last = stretches.last, frame - (last.end - 1) <= 2_400 {
        stretches[stretches.count - 1] = (last.start, frame + 1, max(last.peak, largest))
      } else {
        stretches.append((frame, frame + 1, largest))
      }
    }
    // The front-centre recording pauses for longer than 50 ms: two stretches.
    #expect(stretches.count == 2)
    #expect(result.ranges.count == stretches.count, "\(result.ranges)")
    for (range, sox) in zip(result.ranges, stretches) {
      // Each end within two frames of sox's, where the level crosses the threshold.
      #expect(abs(range.start - Int64(sox.start)) <= 2, "started at \(range.start), sox \(sox)")
      #expect(abs(range.end - Int64(sox.end)) <= 2, "ended at \(range.end), sox \(sox)")
      #expect(abs(20 * log10(Double(range.peak)) - 20 * log10(Double(sox.peak))) < 0.01)
      #expect(range.blame == ["t4"])
    }
    let range = try #require(result.ranges.first)
    #expect(range.blame == ["t4"])
    // Only track 4's clip was rendered: from 120,000 for 68,545 frames.
    #expect(result.renderedFrames == 68_545)
    #expect(result.projectFrames == Int64(frames))
    #expect(!result.isIdentical && result.rendered)

    // The difference written is sox's difference, to -100 dB.
    let written = try ReferenceRender.decode(difference)
    #expect(written.count == soxA.count)
    let expected = zip(soxA, soxB).map { $0 - $1 }
    #expect(maxDifferenceDecibels(written, expected) < -100)
  }

  @Test("versions whose diff cannot sound are the same without rendering")
  func renamed() throws {
    let folder = try RenderFolder()
    let a = try RenderReferenceTests.linearMix()
    var b = a
    b.tracks[0].name = "Renamed"
    let test = try NullTest(
      from: a, to: b, compile: Self.compile(AudioCache(directory: "\(folder.path)/cache")))
    let result = try test.run()
    #expect(result.changes.isEmpty)
    #expect(result.ranges.isEmpty && result.renderedFrames == 0 && !result.rendered)
    #expect(result.threshold == NullTest.floor)
  }

  @Test("mixes of different formats are refused, naming both")
  func formats() throws {
    let a = try RenderReferenceTests.linearMix()
    var b = a
    b.sampleRate = 44_100
    #expect(
      throws: AudioFileError.mixFormatsDiffer(
        first: "v1", firstRate: 48_000, firstChannels: 2, second: "v2", secondRate: 44_100,
        secondChannels: 2)
    ) {
      try NullTest(from: a, to: b, labels: ("v1", "v2")) { _ in
        Issue.record("compiled a version of a refused test")
        throw AudioFileError.missing(path: "")
      }
    }
  }
}
