import AudioFiles
import Foundation
import Mixing
import ReferenceRenders
import SafeFiles
import Testing
import Timeline

/// Builds test projects from TestAudio with readable clip specs (times in frames).
struct ProjectBuilder {
  var project: Project
  private var nextClip: Int64 = 1

  init(rate: Int = 48_000, channels: Int = 2) {
    project = Project(sampleRate: rate, channels: channels)
  }

  /// Registers a TestAudio file as the next source.
  mutating func source(_ name: String) throws -> Source.ID {
    let info = try AudioProbe.probe(TestAudio.path(name))
    let id = Source.ID(Int64(project.sources.count + 1))
    project.sources.append(
      Source(
        id: id, path: info.path, contentHash: info.contentHash, sampleRate: info.sampleRate,
        channels: info.channels, frameCount: FrameCount(info.frameCount)))
    return id
  }

  mutating func clip(
    _ source: Source.ID, at start: Int64, from cropStart: Int64, length: Int64,
    gain: Double = 0, fadeIn: Fade = .none, fadeOut: Fade = .none
  ) -> Clip {
    defer { nextClip += 1 }
    return Clip(
      id: Clip.ID(nextClip), source: source, timelineStart: FramePosition(start),
      sourceRange: FrameRange(start: FramePosition(cropStart), count: FrameCount(length)),
      gain: Gain(decibels: gain), fadeIn: fadeIn, fadeOut: fadeOut)
  }

  mutating func track(
    gain: Double = 0, pan: Double = 0, muted: Bool = false, solo: Bool = false, _ clips: [Clip]
  ) {
    project.tracks.append(
      Track(
        id: Track.ID(Int64(project.tracks.count + 1)), name: "T\(project.tracks.count + 1)",
        gain: Gain(decibels: gain), pan: pan, isMuted: muted, isSolo: solo, clips: clips))
  }
}

/// A render folder removed at the end of the test.
final class RenderFolder {
  let path: String

  init() throws {
    path =
      FileManager.default.temporaryDirectory.appendingPathComponent(
        "tape-render-\(UUID().uuidString)"
      ).path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  deinit {
    try? FileManager.default.removeItem(atPath: path)
  }
}

@Suite("Renders against sox and ffmpeg")
struct RenderReferenceTests {
  /// −120 dBFS: the agreement the render must reach with both references.
  static let tolerance = -120.0

  /// Overlapping clips on four tracks: mono and stereo sources, linear fades of several lengths
  /// (one clip faded in and out over its whole length), clip and track gains, the constant-power
  /// pan of mono sources and the balance of stereo ones, at several positions.
  static func linearMix() throws -> Project {
    var b = ProjectBuilder()
    let speech = try b.source("speech-mono-48k-16.wav")
    let strings = try b.source("strings-stereo-48k-float.wav")
    let noise = try b.source("noise-stereo-48k-16.flac")
    let front = try b.source("front-center-mono-48k-16.wav")
    let voice = [
      b.clip(speech, at: 0, from: 1_000, length: 96_000, gain: -3, fadeIn: Fade(length: 4_800)),
      b.clip(
        speech, at: 72_000, from: 150_000, length: 100_000, gain: 1.5,
        fadeIn: Fade(length: 24_000), fadeOut: Fade(length: 33_333)),
    ]
    b.track(gain: -2, pan: -0.3, voice)
    b.track(
      gain: -6, pan: 0.7,
      [
        b.clip(strings, at: 10_000, from: 0, length: 140_000, fadeOut: Fade(length: 48_000)),
        b.clip(
          strings, at: 50_000, from: 20_000, length: 60_000, gain: -4.5,
          fadeIn: Fade(length: 30_000), fadeOut: Fade(length: 30_000)),
      ])
    b.track(
      gain: -12, pan: -1,
      [b.clip(noise, at: 30_000, from: 5_000, length: 150_000, gain: 2, fadeIn: Fade(length: 1))])
    b.track(
      gain: -1, pan: 1,
      [b.clip(front, at: 120_000, from: 0, length: 68_545, fadeIn: Fade(length: 480))])
    return b.project
  }

  /// Fixed projects for which both references are exact: see each one's comment.
  static let projects: [(String, @Sendable () throws -> Project)] = [
    ("overlapping clips, linear fades, gains, both pan laws", linearMix),
    ("a muted track, and solo on two of four tracks", mutedAndSoloed),
    ("mono output: mono and stereo sources summed, pan ignored", monoOutput),
    ("a 44.1 kHz source in a 48 kHz project", resampledSource),
    ("equal-power and s-curve fades", sineFades),
  ]

  static func mutedAndSoloed() throws -> Project {
    var project = try linearMix()
    project.tracks[0].isMuted = true
    project.tracks[0].isSolo = true  // muted wins over solo
    project.tracks[1].isSolo = true
    project.tracks[3].isSolo = true
    return project
  }

  static func monoOutput() throws -> Project {
    var project = try linearMix()
    project.channels = 1
    return project
  }

  static func resampledSource() throws -> Project {
    var b = ProjectBuilder()
    let piano = try b.source("piano-stereo-44k-24.wav")
    let tone = try b.source("tone-mono-44k-24.aiff")
    let speech = try b.source("speech-mono-48k-16.wav")
    b.track(
      gain: -3, pan: 0.25,
      [
        b.clip(piano, at: 4_800, from: 12_345, length: 150_000, fadeIn: Fade(length: 9_600)),
        b.clip(
          piano, at: 100_000, from: 0, length: 90_000, gain: -2, fadeOut: Fade(length: 20_000)),
      ])
    b.track(
      gain: -9, pan: -0.5,
      [b.clip(tone, at: 0, from: 1_000, length: 90_000, fadeOut: Fade(length: 2))])
    b.track([b.clip(speech, at: 20_000, from: 40_000, length: 50_000, gain: -6)])
    return b.project
  }

  static func sineFades() throws -> Project {
    var b = ProjectBuilder()
    let strings = try b.source("strings-stereo-48k-float.wav")
    let speech = try b.source("speech-mono-48k-16.wav")
    b.track(
      pan: 0.2,
      [
        b.clip(
          strings, at: 0, from: 0, length: 100_000,
          fadeIn: Fade(length: 24_000, curve: .equalPower),
          fadeOut: Fade(length: 36_000, curve: .sCurve)),
        b.clip(
          strings, at: 80_000, from: 10_000, length: 60_000,
          fadeIn: Fade(length: 30_000, curve: .sCurve),
          fadeOut: Fade(length: 30_000, curve: .equalPower)),
      ])
    b.track(
      gain: -4, pan: -0.6,
      [
        b.clip(
          speech, at: 12_000, from: 50_000, length: 120_000, gain: 3,
          fadeIn: Fade(length: 48_000, curve: .equalPower), fadeOut: Fade(length: 4_800))
      ])
    return b.project
  }

  @Test(arguments: projects.indices)
  func agreesWithSoxAndFFmpeg(index: Int) throws {
    let (name, make) = Self.projects[index]
    let project = try make()
    let folder = try RenderFolder()
    let tape = try tapeRender(project, in: folder.path).samples
    let sox = try ReferenceRender.sox(project, in: folder.path)
    let ffmpeg = try ReferenceRender.ffmpeg(project, in: folder.path)
    let expectedCount = Int(project.timelineEnd.frames) * project.channels
    #expect(tape.count == expectedCount, "\(name)")
    #expect(sox.count == expectedCount, "\(name): sox")
    #expect(ffmpeg.count == expectedCount, "\(name): ffmpeg")
    #expect(maxDifferenceDecibels(tape, sox) < Self.tolerance, "\(name): against sox")
    #expect(maxDifferenceDecibels(tape, ffmpeg) < Self.tolerance, "\(name): against ffmpeg")
    // The projects have real signal everywhere a clip plays: a silent render would fail above
    // only if the references were silent too, so check the level as well.
    #expect(tape.map(abs).max() ?? 0 > 0.05, "\(name)")
  }
}

/// Tape's own render of `project` to 32-bit float, through the decoded cache, the plan and the
/// offline renderer, read back by sox.
func tapeRender(
  _ project: Project, in folder: String, range: FrameRange? = nil
) throws -> (
  samples: [Float], summary: RenderSummary
) {
  let cache = AudioCache(directory: "\(folder)/cache")
  let audio = try cache.sources(for: project)
  let plan = try RenderPlan(project: project, audio: audio.audio)
  let output = "\(folder)/tape-\(UUID().uuidString).wav"
  let summary = try OfflineRenderer.render(
    plan, audio: audio,
    range: range ?? FrameRange(start: 0, count: FrameCount(project.timelineEnd.frames)),
    to: try OutputDestination.resolve(output),
    settings: RenderSettings(format: .wav, sampleFormat: .float32, dither: false))
  return (try ReferenceRender.decode(output), summary)
}
