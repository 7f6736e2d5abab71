import AudioFiles
import Foundation
import Pictures
import ReferenceRenders
import Testing
import Timeline

/// The waveforms of a stretch of a project, as `tape draw` and an app's view read them.
@Suite("Peaks of a project")
struct ProjectPeaksTests {
  @Test(
    "every source a clip in the stretch plays, its extremes as ffmpeg decodes it; a missing file listed, not thrown"
  )
  func peaks() throws {
    let folder = try RenderFolder()
    var b = ProjectBuilder()
    let speech = try b.source("speech-mono-48k-16.wav")
    let noise = try b.source("noise-stereo-48k-16.flac")
    let front = try b.source("front-center-mono-48k-16.wav")
    b.track([
      b.clip(speech, at: 0, from: 0, length: 48_000),
      b.clip(front, at: 500_000, from: 0, length: 48_000),
    ])
    b.track([b.clip(noise, at: 24_000, from: 0, length: 48_000)])
    // A copy of the noise whose file goes: its clip is in the stretch too.
    let copy = "\(folder.path)/gone.flac"
    try FileManager.default.copyItem(
      atPath: TestAudio.path("noise-stereo-48k-16.flac"), toPath: copy)
    let gone = Source.ID(9)
    let original = b.project.sources[1]
    b.project.sources.append(
      Source(
        id: gone, path: RawPath(copy), contentHash: original.contentHash,
        sampleRate: original.sampleRate, channels: original.channels,
        frameCount: original.frameCount))
    b.track([b.clip(gone, at: 0, from: 0, length: 1_000)])
    try FileManager.default.removeItem(atPath: copy)

    let cache = AudioCache(directory: "\(folder.path)/cache")
    let found = try cache.peaks(
      of: b.project, in: FrameRange(start: .zero, end: FramePosition(96_000)))
    // The front-centre clip starts after the stretch: not read.
    #expect(Set(found.peaks.keys) == [speech, noise])
    #expect(found.unavailable.map(\.source) == [gone])
    #expect(found.unavailable.first.map { "\($0.error)" }?.contains("is missing") == true)
    // The speech's extremes over its first second, as ffmpeg decodes the file.
    let decoded = try ReferenceRender.decode(TestAudio.path("speech-mono-48k-16.wav"))
    let first = decoded.prefix(48_000)
    let extremes = try #require(found.peaks[speech]?.extremes(in: 0..<48_000))
    #expect(extremes.minimum == first.min() && extremes.maximum == first.max())
  }
}
