import Foundation
import Testing

/// Rough edges a dialogue editor met: marker names that read as offsets or run on, a negative
/// time given to `marker add`, and the waveform overviews `tape cache` did not list.
@Suite("Marker names, negative times and the cache's peak files")
struct MarkerAndCacheEdgeTests {
  static func project(_ space: Workspace) throws -> String {
    let song = space.path("song.tape")
    try space.tape("new", song)
    try space.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try space.tape("track", "add", song, "Voice")
    try space.tape("clip", "add", song, "Voice", "s1", "--at", "0", "--length", "3s")
    return song
  }

  /// A name ending in what reads as an offset (`x+2s`, `bar-12`) would make `@NAME` mean two
  /// times; one over 100 characters runs on: each refused in one line naming the fix, which
  /// works; nothing changes.
  @Test func markerNamesThatReadAsOffsetsOrRunOnAreRefused() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    try space.tape("marker", "add", song, "x", "--at", "1s")
    let before = try space.fingerprint("song.tape")
    let offset = try space.tape("marker", "add", song, "x+2s", "--at", "2s", status: 65)
    #expect(
      offset.stderr
        == "error: the marker name 'x+2s' ends in '+2s', which reads as an offset (@x+2s would also mean 2s after @x); name it 'x 2s' or 'x_2s'\n"
    )
    let bar = try space.tape("marker", "add", song, "bar-12", "--at", "2s", status: 65)
    #expect(bar.stderr.hasPrefix("error: the marker name 'bar-12' ends in '-12'"))
    let long = String(repeating: "a", count: 101)
    let tooLong = try space.tape("marker", "add", song, long, "--at", "2s", status: 65)
    #expect(
      tooLong.stderr
        == "error: the marker name is 101 characters long; a marker's name has at most 100: shorten it\n"
    )
    let renamed = try space.tape("marker", "rename", song, "x", "x-1", status: 65)
    #expect(renamed.stderr.hasPrefix("error: the marker name 'x-1' ends in '-1'"))
    #expect(try space.fingerprint("song.tape") == before)
    // The fixes named work, and @x+2s means 2 s after x.
    try space.tape("marker", "add", song, "bar 12", "--at", "2s")
    try space.tape("marker", "add", song, String(repeating: "a", count: 100), "--at", "2.5s")
    try space.tape("marker", "add", song, "take-two", "--at", "0.5s")
    let c2 = try space.tape("clip", "add", song, "Voice", "s1", "--at", "@x+2s", "--length", "1s")
    #expect(c2.stdout == "c2\n")
    let clips = try #require(
      try parseJSON(space.tape("clip", "ls", song, "--json").stdout) as? [[String: Any]])
    #expect(clips.last?["timelineStart"] as? Int == 144_000)
  }

  /// `marker add FILE -5s NAME` names the negative time (it said "missing argument", reading
  /// -5s as an option); an option it does not have is still one.
  @Test func aNegativeTimeIsNamed() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    let negative = try space.tape("marker", "add", song, "-5s", "intro", status: 64)
    #expect(negative.stderr == "error: '-5s' is negative; times and lengths are 0 or more\n")
    let unknown = try space.tape("marker", "add", song, "1s", "intro", "--bogus", status: 64)
    #expect(unknown.stderr.hasPrefix("error: unknown option '--bogus'"), "\(unknown.stderr)")
    #expect(try space.tape("marker", "ls", song).stdout == "")
    try space.tape("marker", "add", song, "1s", "intro")
  }

  /// `tape draw` keeps each source's waveform overview in the cache: `tape cache` lists it
  /// (kind "peaks", the source it serves) and counts it, and `--clean` removes one no version
  /// uses once it is old, keeping the one in use.
  @Test func theCacheListsAndCleansPeakFiles() throws {
    let space = try Workspace()
    let song = try Self.project(space)
    try space.tape("draw", song, "-o", space.path("p.svg"))
    let listing = try #require(
      try parseJSON(space.tape("cache", song, "--json").stdout) as? [String: Any])
    let entries = try #require(listing["entries"] as? [[String: Any]])
    let peaks = try #require(entries.first { $0["kind"] as? String == "peaks" })
    #expect(peaks["sources"] as? [String] == ["s1"] && peaks["usedByHead"] as? Bool == true)
    let used = try #require(peaks["path"] as? String)
    #expect(used.hasSuffix(".peaks"))
    // A leftover overview of audio no version has (as a relink leaves).
    let stale = space.path("song.tape-cache/0123456789abcdef-48000hz-1ch-256.peaks")
    try FileManager.default.copyItem(atPath: used, toPath: stale)
    var old = [
      timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0),
    ]
    #expect(utimensat(AT_FDCWD, stale, &old, 0) == 0)
    let text = try space.tape("cache", song).stdout
    #expect(text.contains("\(stale)\tpeaks\t"))
    #expect(text.contains("\tunused\n"))
    #expect(
      text.hasSuffix(
        "4 files (1 audio, 1 identity, 2 peaks), \(try Self.bytes(of: text)) bytes, \(try Self.unused(stale)) unused\n"
      ), "\(text)")
    let cleaned = try #require(
      try parseJSON(space.tape("cache", song, "--clean", "--json").stdout) as? [String: Any])
    #expect((cleaned["removed"] as? [[String: Any]])?.map { $0["path"] as? String } == [stale])
    #expect(!FileManager.default.fileExists(atPath: stale))
    #expect(FileManager.default.fileExists(atPath: used))
  }

  /// The total the listing's lines add up to.
  static func bytes(of text: String) throws -> Int {
    text.split(separator: "\n").compactMap { line -> Int? in
      let fields = line.split(separator: "\t")
      guard fields.count >= 3, fields[2].hasSuffix(" bytes") else { return nil }
      return Int(fields[2].dropLast(6))
    }.reduce(0, +)
  }

  static func unused(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.size] as? NSNumber)?.intValue ?? -1
  }
}
