import Foundation
import ReferenceRenders
import Testing

/// Effect file parameters end to end (issue 44): x42's IR convolver given an impulse response
/// with `--file` renders the convolution an independent reference computes; the file is kept
/// relative to the project, relinked, undone and redone; a missing one is refused naming it
/// and the fix.
@Suite("Effect files", .serialized)
struct EffectFileTests {
  static let convolver = "http://gareus.org/oss/lv2/zeroconvolv#CfgMono"

  /// A project in `space` of speech, 1 s, on a mono track, with its impulse response made by
  /// sox (5 ms of decaying noise, float) in `irs/`, inside the project's folder.
  private func project(_ space: Workspace) throws -> (file: String, ir: String) {
    let file = space.path("conv.tape")
    try space.tape("new", file, "--channels", "1")
    try space.tape("import", file, try space.copyTestAudio("speech-mono-48k-16.wav"))
    try space.tape("track", "add", file, "A")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "1s")
    try FileManager.default.createDirectory(
      atPath: space.path("irs"), withIntermediateDirectories: true)
    let ir = space.path("irs/room.wav")
    try ReferenceRender.run(
      "/usr/bin/sox",
      [
        "-R", "-n", "-r", "48000", "-c", "1", "-b", "32", "-e", "floating-point", ir, "synth",
        "0.005",
        "whitenoise", "fade", "q", "0", "0.005", "0.005", "vol", "0.1",
      ])
    return (file, ir)
  }

  /// Direct convolution in Double: `signal` ∗ `ir`, as long as `signal`.
  private func convolved(_ signal: [Float], _ ir: [Float]) -> [Double] {
    var out = [Double](repeating: 0, count: signal.count)
    for n in signal.indices {
      var sum = 0.0
      for k in 0..<min(ir.count, n + 1) { sum += Double(ir[k]) * Double(signal[n - k]) }
      out[n] = sum
    }
    return out
  }

  /// The render through the convolver equals the dry render convolved with the impulse
  /// response (a direct sum in Double, independent of the plugin's partitioned FFT), from the
  /// first sample: the plugin had the file before it ran. Tolerance 1e-5: float32
  /// accumulation over 240 taps of a signal under 1 (the plugin convolves in float; its FFT
  /// rounding is of the order of 1e-7 per tap), far under the 1e-1 a missing or shifted IR
  /// gives.
  @Test func aConvolutionEqualsTheDirectSumOfTheImpulseResponse() throws {
    try Plugins.require(Self.convolver)
    let space = try Workspace()
    let (file, ir) = try project(space)
    try space.tape("render", file, "-o", space.path("dry.wav"), "--bits", "32f", "--tail", "0")
    #expect(
      try space.tape("fx", "add", file, "t1", Self.convolver, "--file", "ir=\(ir)")
        .stdout.hasSuffix("f1\n"))
    try space.tape("render", file, "-o", space.path("wet.wav"), "--bits", "32f", "--tail", "0")
    let dry = try ReferenceRender.decode(space.path("dry.wav"))
    let wet = try ReferenceRender.decode(space.path("wet.wav"))
    let response = try ReferenceRender.decode(ir)
    #expect(response.count == 240)
    let reference = convolved(dry, response)
    #expect(wet.count == reference.count)
    let error = zip(wet, reference).map { abs(Double($0) - $1) }.max() ?? .infinity
    let level = reference.map(abs).max() ?? 0
    #expect(level > 0.01, "the reference is not silence")
    #expect(error < 1e-5, "largest difference \(error)")
    // The first samples too: 64 frames in, where a late file would still be silence.
    #expect(zip(wet.prefix(64), reference.prefix(64)).allSatisfy { abs(Double($0) - $1) < 1e-5 })
  }

  /// What a plugin prints with printf (x42's convolver: "SF rate: …" and its partitions, as it
  /// loads the file) goes to stderr, never into Tape's standard output: `fx add --json` is one
  /// JSON document, and a render to `-o -` is a WAV file of the same samples as the render to a
  /// file. Before, the
  /// lines came first on stdout (and would have been written into the audio).
  @Test func whatAPluginPrintsStaysOutOfStandardOutput() throws {
    try Plugins.require(Self.convolver)
    let space = try Workspace()
    let (file, ir) = try project(space)
    let added = try space.tape(
      "fx", "add", file, "t1", Self.convolver, "--file", "ir=\(ir)", "--json")
    #expect(added.stderr.contains("SF rate"), "the plugin printed nothing: nothing is shown")
    // lilv 0.24 warned of each file's absolute path as Tape checked the plugin held it.
    #expect(!added.stderr.contains("Writing absolute path"), "\(added.stderr)")
    #expect(!added.stdout.contains("SF rate"), "\(added.stdout)")
    #expect(try parseJSON(added.stdout) is [String: Any], "\(added.stdout)")
    try space.tape("render", file, "-o", space.path("file.wav"), "--bits", "32f", "--tail", "0")
    let piped = try TapeBinary.run(
      URL(fileURLWithPath: "/bin/sh"),
      [
        "-c", "\"$0\" render \"$1\" -o - --format wav --bits 32f --tail 0 > \"$2\"",
        TapeBinary.url.path, file, space.path("piped.wav"),
      ])
    #expect(piped.status == 0, "\(piped.stderr)")
    #expect(piped.stderr.contains("SF rate"), "\(piped.stderr)")
    let streamed = try Data(contentsOf: URL(fileURLWithPath: space.path("piped.wav")))
    #expect(
      streamed.prefix(4) == Data("RIFF".utf8),
      "\(String(decoding: streamed.prefix(40), as: UTF8.self))")
    #expect(
      try ReferenceRender.decode(space.path("piped.wav"))
        == ReferenceRender.decode(space.path("file.wav")))
  }

  /// `tape play` starts a convolver whose impulse response takes a while to load (a second of
  /// stereo noise): the player's instances load it on their worker threads, and the start
  /// waits until they have. Before, a request a worker had taken from its ring no longer
  /// showed, so the start took the worker for idle while it loaded, and refused the effect:
  /// "did not take the file" (exit 65).
  @Test func aPlayStartsWithAnImpulseResponseThatTakesAWhileToLoad() throws {
    try Plugins.require(Self.convolver)
    let space = try Workspace()
    let (file, _) = try project(space)
    let long = space.path("irs/hall.wav")
    try ReferenceRender.run(
      "/usr/bin/sox",
      [
        "-R", "-n", "-r", "48000", "-c", "2", "-b", "32", "-e", "floating-point", long, "synth",
        "1", "whitenoise", "fade", "q", "0", "1", "0.9", "vol", "0.01",
      ])
    try space.tape("fx", "add", file, "t1", Self.convolver, "--file", "ir=\(long)")
    for _ in 0..<3 { try space.tape("play", file, "--device", "null", "--to", "0.5s") }
  }

  /// The file is kept relative to the project (the folder moved elsewhere renders the same);
  /// listed by `fx ls` and `--json`; a missing one is refused naming the file and relink,
  /// nothing written; relink to the moved file works; undo and redo restore each.
  @Test func theFileIsKeptLikeASourceRelinkedAndUndone() throws {
    try Plugins.require(Self.convolver)
    let space = try Workspace()
    let (file, ir) = try project(space)
    try space.tape("fx", "add", file, "t1", Self.convolver, "--file", "ir=\(ir)")
    let listed = try space.tape("fx", "ls", file).stdout
    #expect(listed.contains("\n    file ir=irs/room.wav\n"), "\(listed)")
    let json = try space.tape("fx", "ls", file, "--json").stdout
    #expect(
      json.contains("\"files\": {\"ir\": {\"path\": \"irs/room.wav\", \"contentHash\": \"sha256:"),
      "\(json)")
    try space.tape("render", file, "-o", space.path("first.wav"), "--bits", "32f")

    // The whole folder moved: the same render.
    let moved = space.path("moved")
    try FileManager.default.createDirectory(atPath: moved, withIntermediateDirectories: true)
    for name in ["conv.tape", "irs", "speech-mono-48k-16.wav"] {
      try FileManager.default.moveItem(atPath: space.path(name), toPath: moved + "/" + name)
    }
    let movedFile = moved + "/conv.tape"
    try space.tape("render", movedFile, "-o", space.path("second.wav"), "--bits", "32f")
    #expect(
      try ReferenceRender.decode(space.path("first.wav"))
        == ReferenceRender.decode(space.path("second.wav")))

    // The impulse response moved away: refused in one line, naming it and the fix.
    try FileManager.default.createDirectory(
      atPath: space.path("elsewhere"), withIntermediateDirectories: true)
    try FileManager.default.moveItem(
      atPath: moved + "/irs/room.wav", toPath: space.path("elsewhere/room.wav"))
    let refused = try space.tape("render", movedFile, "-o", space.path("third.wav"), status: 65)
    #expect(
      refused.stderr
        == "error: the file of effect f1's ir, \(moved)/irs/room.wav, is missing; put it back, or point the effect at its new place with 'tape relink \(movedFile) f1 PATH' (a file of other content: 'tape fx set \(movedFile) f1 --file ir=PATH')\n"
    )
    #expect(!FileManager.default.fileExists(atPath: space.path("third.wav")))
    let before = try space.tape("log", movedFile).stdout
    try space.tape("relink", movedFile, "f1", space.path("elsewhere/room.wav"))
    try space.tape("render", movedFile, "-o", space.path("fourth.wav"), "--bits", "32f")
    #expect(
      try ReferenceRender.decode(space.path("first.wav"))
        == ReferenceRender.decode(space.path("fourth.wav")))
    #expect(
      try space.tape("fx", "ls", movedFile).stdout.contains(
        "    file ir=\(space.path("elsewhere/room.wav"))\n"))
    try space.tape("undo", movedFile)
    #expect(try space.tape("log", movedFile).stdout == before)
    #expect(
      try space.tape("fx", "ls", movedFile).stdout.contains(
        "    file ir=irs/room.wav  (missing: 'tape relink \(movedFile) f1 PATH')\n"))
    try space.tape("redo", movedFile)
    #expect(
      try space.tape("fx", "ls", movedFile).stdout.contains(
        "    file ir=\(space.path("elsewhere/room.wav"))\n"))
  }

  /// `--file` with a file that does not exist is refused naming it and what to give, and the
  /// project is not changed; a key the plugin has not is refused naming the one it has.
  @Test func aMissingFileOrUnknownKeyIsRefusedAndNothingChanges() throws {
    try Plugins.require(Self.convolver)
    let space = try Workspace()
    let (file, ir) = try project(space)
    try space.tape("fx", "add", file, "t1", Self.convolver)
    let before = try space.fingerprint("conv.tape")
    let missing = try space.tape("fx", "set", file, "f1", "--file", "ir=hall.wav", status: 66)
    #expect(
      missing.stderr
        == "error: the file hall.wav for ir (Impulse Response) does not exist; give the path of an audio file: --file ir=PATH\n"
    )
    let key = try space.tape("fx", "set", file, "f1", "--file", "impulse=\(ir)", status: 64)
    #expect(
      key.stderr
        == "error: \(Self.convolver) has no file parameter 'impulse'; its file parameters are 'ir' (--file ir=PATH)\n"
    )
    #expect(try space.fingerprint("conv.tape") == before)
  }
}
