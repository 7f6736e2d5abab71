import AudioFiles
import Foundation
import ReferenceRenders
import Testing
import Timeline

/// Silence detection as an app calls it, against the quiet stretches of sox's independent
/// render of the same project.
@Suite("Silence detection")
struct SilenceDetectionTests {
  /// Noise (peaks at -18 dBFS) at 0–1 s, 2–3 s and 3.2–4 s: a 1 s gap and a 0.2 s one.
  static func gapped() throws -> Project {
    var b = ProjectBuilder()
    let noise = try b.source("noise-stereo-48k-16.flac")
    b.track([
      b.clip(noise, at: 0, from: 0, length: 48_000),
      b.clip(noise, at: 96_000, from: 48_000, length: 48_000),
      b.clip(noise, at: 153_600, from: 96_000, length: 38_400),
    ])
    return b.project
  }

  /// The stretches of interleaved `samples` where every channel stays under `below` for at
  /// least `longer` frames: the definition, applied to sox's render.
  static func quiet(_ samples: [Float], channels: Int, below: Float, longer: Int) -> [FrameRange] {
    var ranges: [FrameRange] = []
    var since: Int? = 0
    let frames = samples.count / channels
    for frame in 0...frames {
      let loud =
        frame == frames
        || (0..<channels).contains { abs(samples[frame * channels + $0]) >= below }
      if loud, let start = since {
        if frame - start >= longer {
          ranges.append(
            FrameRange(start: FramePosition(Int64(start)), end: FramePosition(Int64(frame))))
        }
        since = nil
      } else if !loud && since == nil {
        since = frame
      }
    }
    return ranges
  }

  @Test("the quiet stretch between clips, as sox's render has it; a short one is not listed")
  func gaps() throws {
    let folder = try RenderFolder()
    let project = try Self.gapped()
    let below = Float(Gain(decibels: -50).linear)
    let found = try Silence.ranges(
      in: project, cache: AudioCache(directory: "\(folder.path)/cache"), below: below,
      longer: FrameCount(19_200))
    let sox = try ReferenceRender.sox(project, in: folder.path)
    #expect(found == Self.quiet(sox, channels: 2, below: below, longer: 19_200))
    // And where the project puts it: one stretch, about 1 s to 2 s (noise may be under the
    // level for a few frames at the clips' edges); the 0.2 s gap is too short.
    let gap = try #require(found.first)
    #expect(found.count == 1, "\(found)")
    #expect((47_980...48_000).contains(gap.start.frames), "\(gap)")
    #expect((96_000...96_020).contains(gap.end.frames), "\(gap)")
  }

  @Test("one track's stem: the other track's sound does not fill its gap")
  func stem() throws {
    let folder = try RenderFolder()
    var b = ProjectBuilder()
    let noise = try b.source("noise-stereo-48k-16.flac")
    b.track(try Self.gapped().tracks[0].clips.map { $0 })
    b.track([b.clip(noise, at: 0, from: 0, length: 192_000)])
    let project = b.project
    let cache = AudioCache(directory: "\(folder.path)/cache")
    let below = Float(Gain(decibels: -50).linear)
    let mix = try Silence.ranges(
      in: project, cache: cache, below: below, longer: FrameCount(19_200))
    #expect(mix.isEmpty, "\(mix)")
    let alone = try Silence.ranges(
      in: project, cache: cache, track: Track.ID(1), below: below, longer: FrameCount(19_200))
    #expect(alone.count == 1 && (47_980...48_000).contains(alone[0].start.frames), "\(alone)")
  }
}
