import Foundation
import ReferenceRenders
import Testing

/// `tape silences`: the quiet stretches of a mix, found as the tests' own scan of the render
/// finds them, and cut out with a pad, leaving exactly the rest of the render.
@Suite("Strip silence")
struct SilenceTests {
  /// The frames where every channel of `samples` (interleaved stereo) stays below `level` for
  /// at least `frames`, as [start, end) pairs: the tests' own scan.
  static func quiet(_ samples: [Float], below level: Float, atLeast frames: Int) -> [[Int]] {
    var ranges: [[Int]] = []
    var start: Int? = 0
    let count = samples.count / 2
    for frame in 0...count {
      let loud =
        frame < count && (abs(samples[2 * frame]) >= level || abs(samples[2 * frame + 1]) >= level)
      if frame == count || loud {
        if let begun = start, frame - begun >= frames { ranges.append([begun, frame]) }
        start = nil
      } else if start == nil {
        start = frame
      }
    }
    return ranges
  }

  @Test func silencesAreFoundAndCutWithAPad() throws {
    let space = try Workspace()
    let file = space.path("talk.tape")
    try space.tape("new", file)
    try space.tape("import", file, TestAudio.path("noise-stereo-48k-16.flac"))
    try space.tape("track", "add", file, "A")
    try space.tape("track", "add", file, "B")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "1s")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "2s", "--from", "1s", "--length", "1s")
    try space.tape("clip", "add", file, "t2", "s1", "--at", "3.5s", "--length", "0.5s")
    try space.tape("render", file, "-o", space.path("before.wav"), "--bits", "32f")
    let before = try ReferenceRender.decode(space.path("before.wav"))

    // The listing is the scan of the render: -50 dB, 400 ms.
    let level = Float(pow(10, -50.0 / 20))
    let expected = Self.quiet(before, below: level, atLeast: 19_200)
    #expect(expected.count == 2, "\(expected)")
    let listed = try #require(
      parseJSON(space.tape("silences", file, "--json").stdout) as? [[String: Int]])
    #expect(listed.map { [$0["start"] ?? -1, $0["end"] ?? -1] } == expected)
    let text = try space.tape("silences", file, "--frames").stdout
    #expect(text.hasPrefix("\(expected[0][0])f\t\(expected[0][1])f\t"))

    // Cut with a 100 ms pad and ripple: the render is the old one without those frames.
    try space.tape("silences", file, "--cut", "--ripple", "--pad", "100ms")
    try space.tape("render", file, "-o", space.path("after.wav"), "--bits", "32f")
    let after = try ReferenceRender.decode(space.path("after.wav"))
    var spliced = before
    for range in expected.reversed() {
      let (start, end) = (range[0] + 4_800, range[1] - 4_800)
      spliced.removeSubrange((2 * start)..<(2 * end))
    }
    #expect(after.count == spliced.count)
    #expect(after == spliced, "the render after the cut is not the old one without the silences")
    #expect(try space.tape("silences", file, "--json").stdout == "[]\n")

    // One track's stem: t2 is quiet but for its clip.
    let stem = try #require(
      parseJSON(space.tape("silences", file, "--track", "t2", "--json").stdout)
        as? [[String: Int]])
    #expect(stem.first?["start"] == 0)
    let refused = try space.tape(
      "silences", file, "--ripple", status: 64, environment: ["NO_COLOR": "1"])
    #expect(refused.stderr.hasPrefix("error: --ripple goes with --cut"))
  }
}
