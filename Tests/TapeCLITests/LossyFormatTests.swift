import Foundation
import ReferenceRenders
import Testing

/// MP3 and Opus, out and in, through libsndfile (LAME, libopus, mpg123): the bit rate asked
/// for, tags where the format has them, the same bytes on every render, and imports that
/// decode to what ffmpeg decodes. The tests need ffmpeg and ffprobe and fail without them.
@Suite("MP3 and Opus")
struct LossyFormatTests {
  /// What ffprobe reports of a file: `section.key` for its format, stream and their tags.
  static func probe(_ path: String) throws -> [String: String] {
    let (printed, _) = try tool(
      "/usr/bin/ffprobe",
      [
        "-v", "error", "-show_entries",
        "format=bit_rate,duration:format_tags:stream=sample_rate,bit_rate,codec_name:stream_tags",
        "-of", "flat", path,
      ])
    var values: [String: String] = [:]
    for line in printed.split(separator: "\n") {
      let parts = line.split(separator: "=", maxSplits: 1)
      guard parts.count == 2 else { continue }
      let key = parts[0].replacingOccurrences(of: "streams.stream.0.", with: "stream.")
        .lowercased()
      values[key] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }
    return values
  }

  /// MP3 is written at exactly the constant rate asked for; Opus (variable rate) within 15 %
  /// of it over the file.
  @Test(arguments: [("mp3", 64), ("mp3", 192), ("opus", 48), ("opus", 128)])
  func theBitRateIsTheOneAskedFor(format: String, kbps: Int) throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let out = space.path("mix.\(format)")
    let summary = try LoudnessTests.summary(
      space.tape("render", file, "-o", out, "--bitrate", "\(kbps)", "--json"))
    #expect(summary["bitrateKbps"] as? Int == kbps)
    #expect(summary["format"] as? String == format)
    let probed = try Self.probe(out)
    if format == "mp3" {
      #expect(probed["stream.bit_rate"] == "\(kbps * 1_000)", "\(probed)")
      #expect(probed["stream.codec_name"] == "mp3")
    } else {
      let rate = try #require(probed["format.bit_rate"].flatMap(Double.init))
      #expect(abs(rate / Double(kbps * 1_000) - 1) < 0.15, "\(rate) bit/s for \(kbps) kbit/s")
      #expect(probed["stream.codec_name"] == "opus")
    }
  }

  /// --title and --artist are in every format that can be written to a file (AIFF calls the
  /// artist its author).
  @Test(arguments: ["wav", "flac", "aiff", "ogg", "mp3", "opus"])
  func tagsAreInTheFile(format: String) throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let out = space.path("mix.\(format)")
    try space.tape("render", file, "-o", out, "--title", "Épisode 1: «Tape»", "--artist", "Ann Ó")
    let probed = try Self.probe(out)
    let titles = probed.filter { $0.key.hasSuffix("tags.title") }.map(\.value)
    let artists = probed.filter { $0.key.hasSuffix("tags.artist") || $0.key.hasSuffix("author") }
      .map(\.value)
    #expect(titles == ["Épisode 1: «Tape»"], "\(probed)")
    #expect(artists == ["Ann Ó"], "\(probed)")
  }

  /// MP3 and Opus render to the same bytes twice, a second apart (LAME is deterministic and
  /// writes no time; the Opus stream serial, which libsndfile draws at random, is set from the
  /// pages' contents as for Vorbis).
  @Test(arguments: ["mp3", "opus"])
  func rendersAreByteReproducible(format: String) throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let first = space.path("a.\(format)")
    let second = space.path("b.\(format)")
    try space.tape("render", file, "-o", first, "--loudness", "-18", "--title", "T")
    Thread.sleep(forTimeInterval: 1.1)
    try space.tape("render", file, "-o", second, "--loudness", "-18", "--title", "T")
    let bytes = try Data(contentsOf: URL(fileURLWithPath: first))
    #expect(bytes == (try Data(contentsOf: URL(fileURLWithPath: second))))
    #expect(bytes.count > 10_000)
  }

  /// Opus at 44.1 kHz is resampled (libsoxr) to 48 kHz, which the summary says; the decoded
  /// length is the render's at 48 kHz and the loudness survives the codec to 0.2 LU.
  @Test func opusAt44kIsWrittenAt48k() throws {
    let space = try Workspace()
    let file = try LoudnessTests.project(
      "piano-stereo-44k-24.wav", rate: 44_100, channels: 2, in: space)
    let out = space.path("piano.opus")
    let result = try space.tape("render", file, "-o", out, "--loudness", "-18")
    #expect(result.stdout.hasPrefix("\(out): Opus 96 kbit/s, 48000 Hz (resampled from 44100 Hz)"))
    #expect(try Self.probe(out)["stream.sample_rate"] == "48000")
    let decoded = try ReferenceRender.decode(out)
    let frames = (4 * 44_100 * 48_000 + 44_099) / 44_100
    #expect(decoded.count == 2 * frames)
    #expect(abs(try ReferenceRender.ebur128(out).integrated - -18) < 0.2)
  }

  /// An MP3 or Opus file imports (mpg123 and libopus through libsndfile) to exactly the length
  /// that was encoded (MP3's encoder delay and padding are taken off by the LAME header, Opus's
  /// pre-skip and end trim by the granule positions), with the samples ffmpeg decodes: to
  /// −100 dB for MP3 (float decoders), and for Opus against ffmpeg's libopus decoder (its own
  /// native decoder is a different implementation and differs by up to −36 dB).
  @Test(arguments: ["mp3", "opus"])
  func importsDecodeAsFFmpegDoes(format: String) throws {
    let space = try Workspace()
    let file = try LoudnessTests.project(
      "strings-stereo-48k-float.wav", rate: 48_000, channels: 2, in: space)
    let encoded = space.path("strings.\(format)")
    try space.tape("render", file, "-o", encoded, "--bitrate", "128")
    let back = space.path("back.tape")
    try space.tape("new", back)
    try space.tape("import", back, encoded)
    try space.tape("track", "add", back, "Back")
    try space.tape("clip", "add", back, "t1", "s1", "--at", "0")
    let ours = try LoudnessTests.summary(
      space.tape("render", back, "-o", space.path("back.wav"), "--bits", "32f", "--json"))
    #expect(ours["frames"] as? Int == 3 * 48_000)
    let tape = try ReferenceRender.decode(space.path("back.wav"))
    let raw = space.path("ffmpeg.f32")
    let decoder = format == "opus" ? ["-c:a", "libopus"] : []
    try ReferenceRender.run(
      "/usr/bin/ffmpeg",
      ["-v", "error", "-y"] + decoder + ["-i", encoded, "-c:a", "pcm_f32le", "-f", "f32le", raw])
    let ffmpeg = try ReferenceRender.readFloats(raw)
    #expect(tape.count == ffmpeg.count)
    #expect(maxDifferenceDecibels(tape, ffmpeg) < (format == "mp3" ? -100 : -90))
  }

  /// An MP3 without a LAME/Xing header (ffmpeg's `-write_xing 0`, as sox and streams make
  /// them) has no exact length in it: libsndfile's count is mpg123's estimate from the bit rate
  /// (2,160 frames too many here). It imports at the length that decodes, the encoder delay
  /// and padding included, as ffmpeg decodes it; it was refused as truncated.
  @Test func anMP3WithoutItsHeaderImportsAtTheDecodedLength() throws {
    let space = try Workspace()
    let mp3 = space.path("bare.mp3")
    try ReferenceRender.run(
      "/usr/bin/ffmpeg",
      [
        "-v", "error", "-y", "-i", TestAudio.path("piano-stereo-44k-24.wav"), "-c:a",
        "libmp3lame", "-b:a", "128k", "-write_xing", "0", mp3,
      ])
    let file = space.path("bare.tape")
    try space.tape("new", file, "--rate", "44100")
    try space.tape("import", file, mp3)
    try space.tape("track", "add", file, "Bare")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0")
    let ours = try LoudnessTests.summary(
      space.tape("render", file, "-o", space.path("bare.wav"), "--bits", "32f", "--json"))
    let ffmpeg = try ReferenceRender.decode(mp3)
    #expect(ours["frames"] as? Int == ffmpeg.count / 2)
    #expect(ffmpeg.count / 2 > 4 * 44_100)
    let tape = try ReferenceRender.decode(space.path("bare.wav"))
    #expect(maxDifferenceDecibels(tape, ffmpeg) < -100)
  }

  /// What cannot be done says so, with the fix.
  @Test(arguments: [
    (["-o", "-", "--format", "mp3"], "MP3 cannot be written to standard output"),
    (["-o", "x.mp3", "--bitrate", "100"], "MP3 at 48000 Hz has no 100 kbit/s; use one of 32"),
    (["-o", "x.opus", "--bitrate", "600"], "Opus stereo takes 12 to 512 kbit/s"),
    (["-o", "x.flac", "--bitrate", "128"], "--bitrate is for MP3 and Opus"),
    (["-o", "-", "--format", "wav", "--title", "T"], "a WAV stream has no tags"),
    // A lossy format has no sample format to choose: leave out --bits (it said "use --bits 32f").
    (
      ["-o", "x.mp3", "--bits", "24"],
      "MP3 is lossy and encodes from float: it has no sample format to choose, so leave out --bits"
    ),
  ])
  func refusals(arguments: [String], message: String) throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let refused = try space.tape(
      ["render", file] + arguments, status: 64, environment: ["NO_COLOR": "1"])
    #expect(refused.stderr.hasPrefix("error: \(message)"), "\(refused.stderr)")
    #expect(refused.stdout.isEmpty)
  }
}
