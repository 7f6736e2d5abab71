import AudioFiles
import Foundation
import Mixing
import ReferenceRenders
import SafeFiles
import Testing
import Timeline

/// Loudness normalisation as an app calls it: the gain found, a file rendered with it, and
/// ffmpeg's ebur128 measuring that file independently.
@Suite("Loudness normalisation")
struct LoudnessNormalizationTests {
  static let settings = RenderSettings(format: .wav, sampleFormat: .float32, dither: false)

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

  /// Renders `project` with `gain` (dB) to a float WAV in `folder`; returns its path.
  static func render(
    _ project: Project, gain: Double, cache: AudioCache, folder: String
  ) throws
    -> String
  {
    let path = "\(folder)/normalised-\(gain).wav"
    let (plan, audio) = try compile(cache)(project)
    var settings = Self.settings
    settings.gain = pow(10, gain / 20)
    _ = try OfflineRenderer.render(
      plan, audio: audio, range: FrameRange(start: .zero, end: project.timelineEnd),
      to: OutputDestination.resolve(path), settings: settings)
    return path
  }

  @Test("normalised to -16 LUFS: ffmpeg's ebur128 reads -16 of the file, under the ceiling")
  func target() throws {
    let folder = try RenderFolder()
    let project = try RenderReferenceTests.linearMix()
    let cache = AudioCache(directory: "\(folder.path)/cache")
    var passes: Set<LoudnessNormalization.Pass> = []
    let found = try LoudnessTarget(loudness: -16, ceiling: -1).normalise(
      project, range: FrameRange(start: .zero, end: project.timelineEnd), tail: .none,
      settings: Self.settings, compile: Self.compile(cache)
    ) { pass, _ in passes.insert(pass) }
    #expect(passes == [.measuring])
    #expect(found.target == -16 && found.ceiling == -1)
    #expect(abs(found.gain - (-16 - found.measured)) < 1e-9)
    let path = try Self.render(project, gain: found.gain, cache: cache, folder: folder.path)
    let measured = try ReferenceRender.ebur128(path)
    #expect(abs(measured.integrated - -16) <= 0.1, "\(measured)")
    #expect(measured.truePeak <= -1, "\(measured)")
    // And the mix before the gain, as ffmpeg measures it.
    let plain = try ReferenceRender.ebur128(
      try Self.render(project, gain: 0, cache: cache, folder: folder.path))
    #expect(abs(plain.integrated - found.measured) <= 0.1, "\(plain) against \(found.measured)")
  }

  /// A ceiling the target cannot meet is refused, naming the loudest target that fits; that
  /// target, asked for, passes, and ffmpeg reads the file under the ceiling.
  @Test("over the ceiling: refused with a lower target that passes when asked for")
  func refused() throws {
    let folder = try RenderFolder()
    let project = try RenderReferenceTests.linearMix()
    let cache = AudioCache(directory: "\(folder.path)/cache")
    let range = FrameRange(start: .zero, end: project.timelineEnd)
    var message = ""
    do {
      _ = try LoudnessTarget(loudness: -10, ceiling: -12).normalise(
        project, range: range, tail: .none, settings: Self.settings,
        compile: Self.compile(cache))
      Issue.record("a -10 LUFS target under a -12 dBTP ceiling was not refused")
    } catch AudioFileError.loudnessRefused(let text) {
      message = text
    }
    #expect(message.hasPrefix("at -10 LUFS (a gain of "), "\(message)")
    #expect(message.contains("over the -12 dBTP ceiling"), "\(message)")
    let aim = try #require(
      message.firstMatch(of: /aim lower, at --loudness (-?[0-9.]+)LUFS/).flatMap {
        Double($0.1)
      }, "\(message)")
    let found = try LoudnessTarget(loudness: aim, ceiling: -12).normalise(
      project, range: range, tail: .none, settings: Self.settings, compile: Self.compile(cache))
    let measured = try ReferenceRender.ebur128(
      try Self.render(project, gain: found.gain, cache: cache, folder: folder.path))
    #expect(abs(measured.integrated - aim) <= 0.1, "\(measured)")
    #expect(measured.truePeak <= -12 + 0.05, "\(measured)")
  }

  @Test("a silent mix has no loudness to bring to a target")
  func silent() throws {
    let folder = try RenderFolder()
    var project = try RenderReferenceTests.linearMix()
    for index in project.tracks.indices { project.tracks[index].gain = Gain(decibels: -120) }
    #expect(
      throws: AudioFileError.loudnessRefused(
        "the mix is silent (below the -70 LUFS gate of BS.1770), so it has no loudness to bring to -16 LUFS; drop --loudness"
      )
    ) {
      try LoudnessTarget(loudness: -16, ceiling: -1).normalise(
        project, range: FrameRange(start: .zero, end: project.timelineEnd), tail: .none,
        settings: Self.settings,
        compile: Self.compile(AudioCache(directory: "\(folder.path)/cache")))
    }
  }
}
