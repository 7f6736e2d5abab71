import Foundation
import ReferenceRenders
import Testing

/// `tape compare` against an independent null test: two whole `tape render`s (32-bit float)
/// subtracted by sox (`-m -v 1 a -v -1 b`), decoded by ffmpeg, measured here.
@Suite("tape compare")
struct CompareTests {
  /// A stereo 48 kHz project of noise: t1 (c1, 1–2 s), t2 (c2, 0–3 s), t3 muted (c3, 0.5–2.5 s).
  /// Versions: 1 new, 2 import, 3–5 tracks, 6–8 clips, 9 the mute.
  static func project(in space: Workspace) throws -> String {
    let file = space.path("song.tape")
    try space.tape("new", file)
    try space.tape("import", file, TestAudio.path("noise-stereo-48k-16.flac"))
    for name in ["One", "Two", "Muted"] { try space.tape("track", "add", file, name) }
    try space.tape("clip", "add", file, "t1", "s1", "--at", "1s", "--length", "1s")
    try space.tape("clip", "add", file, "t2", "s1", "--at", "0", "--from", "1s", "--length", "3s")
    try space.tape("clip", "add", file, "t3", "s1", "--at", "0.5s", "--length", "2s")
    try space.tape("track", "set", file, "t3", "--mute")
    return file
  }

  /// The difference A − B of two whole renders, as sox mixes them (interleaved stereo), padded
  /// with silence to the longer.
  static func reference(_ space: Workspace, _ file: String, _ a: Int, _ b: Int) throws -> [Float] {
    let (pathA, pathB, difference) = (
      space.path("a\(a).wav"), space.path("b\(b).wav"), space.path("ref-\(a)-\(b).wav")
    )
    try space.tape("render", file, "--version", "\(a)", "-o", pathA, "--bits", "32f")
    try space.tape("render", file, "--version", "\(b)", "-o", pathB, "--bits", "32f")
    try tool(
      "/usr/bin/sox",
      [
        "-D", "-m", "-v", "1", pathA, "-v", "-1", pathB, "-e", "floating-point", "-b", "32",
        difference,
      ])
    return try ReferenceRender.decode(difference)
  }

  struct Reported {
    var start: Int
    var end: Int
    var peak: Double
    var rms: Double
    var blame: [String]
  }

  static func compare(
    _ space: Workspace, _ file: String, _ a: Int, _ b: Int, _ extra: [String] = []
  ) throws -> (json: [String: Any], ranges: [Reported]) {
    let json = try #require(
      try parseJSON(space.tape(["compare", file, "\(a)", "\(b)", "--json"] + extra).stdout)
        as? [String: Any])
    let ranges = try #require(json["ranges"] as? [[String: Any]]).map { range in
      Reported(
        start: range["start"] as? Int ?? -1, end: range["end"] as? Int ?? -1,
        peak: range["peakDBFS"] as? Double ?? .nan, rms: range["rmsDBFS"] as? Double ?? .nan,
        blame: range["blame"] as? [String] ?? [])
    }
    return (json, ranges)
  }

  /// Checks the reported ranges against the reference difference: nothing above the threshold
  /// outside them, each starting and ending on a frame above it, its peak and RMS as measured
  /// here (0.01 dB).
  static func check(
    _ ranges: [Reported], against difference: [Float], threshold: Float = 1.0 / 8_388_608,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let frames = difference.count / 2
    func loud(_ frame: Int) -> Bool {
      max(abs(difference[2 * frame]), abs(difference[2 * frame + 1])) > threshold
    }
    var inside = [Bool](repeating: false, count: frames)
    for range in ranges {
      guard range.start >= 0, range.end <= frames, range.start < range.end else {
        Issue.record("range \(range) is outside the render", sourceLocation: sourceLocation)
        continue
      }
      for frame in range.start..<range.end { inside[frame] = true }
      #expect(loud(range.start) && loud(range.end - 1), sourceLocation: sourceLocation)
      let samples = difference[2 * range.start..<2 * range.end]
      let peak = samples.map { abs(Double($0)) }.max() ?? 0
      let rms = (samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(samples.count))
        .squareRoot()
      #expect(abs(20 * log10(peak) - range.peak) < 0.01, sourceLocation: sourceLocation)
      #expect(abs(20 * log10(rms) - range.rms) < 0.01, sourceLocation: sourceLocation)
    }
    let missed = (0..<frames).filter { !inside[$0] && loud($0) }
    #expect(
      missed.isEmpty, "differences outside the ranges at \(missed.prefix(5))",
      sourceLocation: sourceLocation)
  }

  @Test func identicalVersionsNeedNoRender() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    // A rename and a marker cannot sound; a move and its move back leave nothing to render.
    try space.tape("track", "set", file, "t1", "--name", "Lead")
    try space.tape("marker", "add", file, "1s", "verse")
    try space.tape("clip", "move", file, "c1", "--to", "2s")
    try space.tape("clip", "move", file, "c1", "--to", "1s")
    for (a, b) in [(9, 9), (9, 10), (9, 11), (9, 13)] {
      let (json, ranges) = try Self.compare(space, file, a, b)
      #expect(json["identical"] as? Bool == true)
      #expect(json["rendered"] as? Bool == false)
      #expect(json["renderedFrames"] as? Int == 0)
      #expect(ranges.isEmpty)
      #expect(try Self.reference(space, file, a, b).allSatisfy { $0 == 0 })
    }
    #expect(
      try space.tape("compare", file, "9", "13").stdout
        == "v9 and v13 sound the same: nothing that changed can sound (nothing rendered)\n")
  }

  /// A clip split in two, three times, inside its fades too, is known from the diff to change
  /// no sample: nothing rendered (issue 27 asked for this; it used to render and report "sound
  /// the same"). The independent null test agrees to the last bit: a split renders as the
  /// whole clip did. A split whose part then changes is rendered and blamed.
  @Test func aSplitIsKnownTheSameWithoutRendering() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    try space.tape("clip", "set", file, "c2", "--fade-in", "0.5s", "--fade-out", "0.8s")
    try space.tape("clip", "split", file, "c2", "--at", "1.5s")
    try space.tape("clip", "split", file, "c2", "--at", "0.2s")
    try space.tape("split", file, "--at", "2.5s", "--tracks", "t2")
    let (json, ranges) = try Self.compare(space, file, 10, 13)
    #expect(json["identical"] as? Bool == true)
    #expect(json["rendered"] as? Bool == false)
    #expect(json["renderedFrames"] as? Int == 0)
    #expect(ranges.isEmpty)
    #expect(try Self.reference(space, file, 10, 13).allSatisfy { $0 == 0 })
    #expect(
      try space.tape("compare", file, "10", "13").stdout
        == "v10 and v13 sound the same: nothing that changed can sound (nothing rendered)\n")

    try space.tape("clip", "set", file, "c5", "--gain", "-1dB")
    let (changed, found) = try Self.compare(space, file, 10, 14)
    #expect(changed["identical"] as? Bool == false)
    #expect(changed["rendered"] as? Bool == true)
    #expect(found.map(\.blame).allSatisfy { $0.contains("c5") }, "\(found.map(\.blame))")
    Self.check(found, against: try Self.reference(space, file, 10, 14))
  }

  @Test func aMovedClipDiffersWhereItWasAndWhereItIs() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    try space.tape("clip", "move", file, "c1", "--to", "5s")
    let (json, ranges) = try Self.compare(space, file, 9, 10)
    #expect(json["identical"] as? Bool == false)
    #expect(json["renderedFrames"] as? Int == 96_000)
    #expect(json["projectFrames"] as? Int == 288_000)
    try #require(ranges.count == 2)
    #expect(
      (48_000..<48_010).contains(ranges[0].start) && (95_990...96_000).contains(ranges[0].end))
    #expect(
      (240_000..<240_010).contains(ranges[1].start) && (287_990...288_000).contains(ranges[1].end))
    #expect(ranges.allSatisfy { $0.blame == ["c1"] })
    Self.check(ranges, against: try Self.reference(space, file, 9, 10))
    // Text: one line a range, then the verdict.
    let text = try space.tape("compare", file, "9", "10").stdout.split(separator: "\n")
    #expect(text.count == 3)
    #expect(text[0].hasPrefix("0:01.000–0:02.000  peak ") && text[0].hasSuffix("  c1"))
    #expect(text[2].hasPrefix("v9 and v10 differ in 2 ranges"))
  }

  @Test func aGainChangeAndItsDifferenceFile() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    try space.tape("clip", "set", file, "c2", "--gain", "-6dB")
    let output = space.path("diff.wav")
    let (_, ranges) = try Self.compare(space, file, 9, 10, ["-o", output])
    try #require(ranges.count == 1)
    #expect(ranges[0].blame == ["c2"])
    let reference = try Self.reference(space, file, 9, 10)
    Self.check(ranges, against: reference)
    // The difference signal: exactly the two renders' samples subtracted, and what sox's
    // subtraction gives to its precision (sox reads floats to 25 bits).
    let written = try ReferenceRender.decode(output)
    let (a, b) = (
      try ReferenceRender.decode(space.path("a9.wav")),
      try ReferenceRender.decode(space.path("b10.wav"))
    )
    try #require(written.count == reference.count && a.count == written.count)
    #expect(zip(written, zip(a, b)).allSatisfy { $0 == $1.0 - $1.1 })
    #expect(zip(written, reference).allSatisfy { abs($0 - $1) <= 1.0 / 8_388_608 })
    // Half the clip's level gone: a threshold above the difference's peak finds nothing.
    let above = String(format: "%.1fdB", ranges[0].peak + 0.5)
    let (quiet, none) = try Self.compare(space, file, 9, 10, ["--threshold", above])
    #expect(quiet["identical"] as? Bool == true && none.isEmpty)
  }

  @Test func aChangeOnAMutedTrackCannotSound() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    try space.tape("clip", "move", file, "c3", "--to", "0s")
    try space.tape("clip", "set", file, "c3", "--gain", "-12dB")
    let (json, ranges) = try Self.compare(space, file, 9, 11)
    #expect(json["identical"] as? Bool == true && json["rendered"] as? Bool == false)
    #expect(ranges.isEmpty)
    #expect(try Self.reference(space, file, 9, 11).allSatisfy { $0 == 0 })
    // Unmuting it sounds: its clip, blamed on the track.
    try space.tape("track", "set", file, "t3", "--unmute")
    let (_, unmuted) = try Self.compare(space, file, 11, 12)
    try #require(unmuted.count == 1)
    #expect(unmuted[0].blame == ["t3"])
    Self.check(unmuted, against: try Self.reference(space, file, 11, 12))
  }

  @Test func versionsOnDifferentBranches() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    try space.tape("clip", "move", file, "c1", "--to", "2.5s")  // v10
    try space.tape("undo", file)
    try space.tape("clip", "set", file, "c2", "--gain", "+3dB")  // v11, a branch beside v10
    try space.tape("track", "set", file, "t1", "--pan", "-0.5")  // v12
    let (json, ranges) = try Self.compare(space, file, 10, 12)
    #expect(json["identical"] as? Bool == false)
    #expect(!ranges.isEmpty)
    Self.check(ranges, against: try Self.reference(space, file, 10, 12))
    let blamed = Set(ranges.flatMap(\.blame))
    #expect(blamed.isSubset(of: ["c1", "c2", "t1"]) && blamed.contains("c2"))
    // Neither version became the head.
    #expect(try space.head(of: file) == 12)
  }

  @Test func unknownVersionsAreRefused() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    let unknown = try space.tape("compare", file, "9", "99", status: 65)
    #expect(
      unknown.stderr == "error: no version 99 in this project; 'tape history' lists the versions\n")
    #expect(unknown.stdout.isEmpty)
    // A word is a tag's name, as everywhere a version is taken: none here.
    let word = try space.tape("compare", file, "x", "9", status: 65)
    #expect(word.stderr.hasPrefix("error: no version or tag 'x' in this project"))
    try space.tape("compare", file, "v1", "v9")
    try space.tape("compare", file, "1", "9", "-o", file, status: 64)
    try space.tape("compare", file, "1", "9", "-o", space.path("diff.flac"), status: 64)
  }

  /// What compare relies on: a range rendered alone has the samples a whole render has there.
  @Test func aRangeRendersTheSamplesOfTheWhole() throws {
    let space = try Workspace()
    let file = try Self.project(in: space)
    try space.tape("clip", "set", file, "c1", "--fade-in", "0.3s", "--fade-out", "0.2s")
    try space.tape("track", "envelope", file, "t2", "--set", "0s:0dB,2s:-12dB")
    let whole = space.path("whole.wav")
    let part = space.path("part.wav")
    try space.tape("render", file, "-o", whole, "--bits", "32f")
    try space.tape(
      "render", file, "-o", part, "--bits", "32f", "--from", "17001f", "--to", "100003f")
    let all = try ReferenceRender.decode(whole)
    let range = try ReferenceRender.decode(part)
    #expect(range.count == 2 * (100_003 - 17_001))
    #expect(Array(all[2 * 17_001..<2 * 100_003]) == range)
  }
}
