import Foundation
import ReferenceRenders
import Testing

/// libsndfile, soxr, libcrypto, lilv and ALSA are loaded when a command first calls them
/// (CLazyLibraries, scripts/lazy-libraries.py), not at every start: a command that reads no
/// audio loads none of them, and one that does loads what it calls and works.
@Suite struct LazyLibraryTests {
  static let lazy: Set = [
    "libsndfile.so.1", "libsoxr.so.0", "libcrypto.so.3", "liblilv-0.so.0", "libasound.so.2",
  ]

  /// The libraries of ``lazy`` the dynamic loader loaded while `tape arguments` ran
  /// (`LD_DEBUG=files` lists every object it loads, at start and by dlopen).
  func loaded(_ ws: Workspace, _ arguments: String...) throws -> Set<String> {
    let result = try ws.tape(arguments, environment: ["LD_DEBUG": "files"])
    // "     12345:\tfile=libsndfile.so.1 [0];  dynamically loaded by /…/tape [0]"
    let names = result.stderr.split(separator: "\n").compactMap { line -> String? in
      guard let start = line.range(of: "file=") else { return nil }
      return String(line[start.upperBound...].prefix(while: { $0 != " " && $0 != "[" }))
    }
    // Any program loads libc: proof that LD_DEBUG reached the loader.
    #expect(names.contains("libc.so.6"), "\(arguments): \(result.stderr.prefix(400))")
    return Set(names).intersection(Self.lazy)
  }

  /// A project of one speech clip on one track (`clip` options added to the clip's).
  func oneClip(_ ws: Workspace, _ clip: String...) throws -> String {
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "A")
    try ws.tape(["clip", "add", song, "t1", "s1", "--at", "0"] + clip)
    return song
  }

  @Test func commandsThatReadNoAudioLoadNone() throws {
    let ws = try Workspace()
    let song = try oneClip(ws)
    #expect(try loaded(ws, "--help") == [])
    #expect(try loaded(ws, "ls", song) == [])
    #expect(try loaded(ws, "clip", "set", song, "c1", "--gain", "-2") == [])
    #expect(try loaded(ws, "undo", song) == [])
    #expect(try loaded(ws, "history", song) == [])
    #expect(try ws.tape("ls", song, "--json").stdout.contains("\"c1\""))
  }

  @Test func commandsThatReadAudioLoadWhatTheyCall() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    // Importing decodes the file (libsndfile) and hashes its bytes (libcrypto).
    let imported = try loaded(ws, "import", song, TestAudio.path("speech-mono-48k-16.wav"))
    #expect(imported.isSuperset(of: ["libsndfile.so.1", "libcrypto.so.3"]))
    // A 44.1 kHz source in a 48 kHz project is resampled (soxr), on import or at the render.
    let resampled = try loaded(ws, "import", song, TestAudio.path("piano-stereo-44k-24.wav"))
    try ws.tape("track", "add", song, "A")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "1s")
    try ws.tape("clip", "add", song, "t1", "s2", "--at", "1s", "--length", "1s")
    let mix = ws.path("mix.wav")
    let rendered = try loaded(ws, "render", song, "-o", mix, "--format", "wav")
    #expect(rendered.contains("libsndfile.so.1"))
    #expect(resampled.union(rendered).contains("libsoxr.so.0"))
    // The render is a real one: a RIFF/WAVE file of a second of 48 kHz audio or more.
    let bytes = try Data(contentsOf: URL(fileURLWithPath: mix))
    #expect(bytes.count > 48_000 && bytes.prefix(4) == Data("RIFF".utf8))
    #expect(try loaded(ws, "fx", "plugins").contains("liblilv-0.so.0"))
  }

  /// The stubs stay inside the binary. A release `tape` exports its symbols, and exported
  /// stubs took the libraries' calls of their own functions: ALSA, which finds itself with
  /// `dladdr(snd_dlopen)`, opened the tape binary as libasound and then no device at all, not
  /// even `null` (every release build since the libraries were made lazy). Debug builds now
  /// export their symbols too (Package.swift), so this and every `--device null` test run the
  /// binary as it ships.
  @Test func theStubsAreNotExportedAndADeviceOpens() throws {
    let symbols = try ReferenceRender.run(
      "/usr/bin/env", ["nm", "-D", "--defined-only", TapeBinary.url.path])
    // The binary exports symbols (its Swift ones), so the list would show the stubs.
    #expect(symbols.contains("$s"), "nm listed no exported symbol: \(symbols.prefix(200))")
    let exported = symbols.split(separator: "\n").compactMap { $0.split(separator: " ").last }
      .filter { name in ["snd_", "sf_", "soxr_", "lilv_", "EVP_"].contains { name.hasPrefix($0) } }
    #expect(exported.count == 0, "\(exported.count) stubs exported: \(exported.prefix(5))")

    let ws = try Workspace()
    let song = try oneClip(ws, "--length", "0.2s")
    try ws.tape("play", song, "--device", "null")
  }
}

/// A library that cannot be loaded when a command first calls it: one `error:` line naming the
/// Debian package, exit 69, and the project unchanged. The loader looks in `LD_LIBRARY_PATH`
/// first, so an empty file there under the library's SONAME stands in for a missing or broken
/// installation, root or not.
@Suite struct MissingLibraryTests {
  @Test(arguments: [
    ("libsoxr.so.0", "libsoxr0", "piano-stereo-44k-24.wav"),
    ("libsndfile.so.1", "libsndfile1", "speech-mono-48k-16.wav"),
  ])
  func aMissingLibraryNamesItsPackageAndChangesNothing(
    soname: String, package: String, source: String
  ) throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("track", "add", song, "A")
    let broken = ws.path("broken-libraries")
    try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: true)
    try Data().write(to: URL(fileURLWithPath: broken + "/" + soname))
    let before = try Data(contentsOf: URL(fileURLWithPath: song))
    let listing = try ws.tape("ls", song, "--json").stdout
    let history = try ws.tape("history", song).stdout
    let result = try ws.tape(
      ["import", song, TestAudio.path(source)], status: 69,
      environment: ["LD_LIBRARY_PATH": broken])
    #expect(result.stderr.hasPrefix("error: cannot load \(soname) ("), "\(result.stderr)")
    #expect(result.stderr.hasSuffix("; install the Debian package \(package)\n"))
    #expect(result.stderr.split(separator: "\n").count == 1)
    #expect(result.stdout.isEmpty)
    #expect(try Data(contentsOf: URL(fileURLWithPath: song)) == before)
    #expect(try ws.tape("history", song).stdout == history)
    // What needs no audio library still works beside the broken one.
    let listed = try ws.tape(["ls", song, "--json"], environment: ["LD_LIBRARY_PATH": broken])
    #expect(listed.stdout == listing)
  }
}
