import Foundation
import Interchange
import Testing
import Timeline
import TimelineStore

/// What an app calls to say a project and its versions (issue 49): the library's words and
/// JSON are what `tape` prints, and the JSON reads back as the values it was made of.
@Suite("The project in JSON and words, from the libraries")
struct LibraryAPITests {
  /// A clip moved and a track renamed in another process: ``DiffWords`` of the two versions,
  /// read through ``TimelineStore``, is `tape diff`'s line and its JSON `tape diff --json`'s;
  /// ``ProjectJSON/project(_:version:folder:missing:)`` is `tape ls --json`.
  @Test func anAppSaysWhatTapePrints() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    try space.tape("clip", "move", file, "c1", "--to", "1s", "--track", "t2")
    try space.tape("track", "set", file, "t1", "--name", #"Lead "vocal""#)
    let store = try TimelineStore.open(at: file, access: .read)
    let head = store.snapshot.version
    let (a, b, diff) = try store.diff(from: head - 2, to: head)
    let words = DiffWords(sampleRate: b.project.sampleRate)
    let lines = words.boundedLines(diff)
    #expect(lines.contains("c1 moved 0:00.500 → 0:01.000, t1 → t2"), "\(lines)")
    #expect(lines.contains(#"t1 renamed "Voice" → "Lead \"vocal\"""#), "\(lines)")
    #expect(
      try space.tape("diff", file, "\(head - 2)", "\(head)").stdout
        == lines.joined(separator: "\n") + "\n")
    let json = JSON.object([
      ("from", .integer(a.version)), ("to", .integer(b.version)),
      ("changes", .array(words.changesJSON(diff))),
    ])
    #expect(
      try space.tape("diff", file, "\(head - 2)", "\(head)", "--json").stdout == json.line + "\n")
    // The JSON holds the values themselves: the move's frames at 48 kHz, as integers.
    let changes =
      try #require(try parseJSON(json.line) as? [String: Any])["changes"] as? [[String: Any]]
    let move = try #require(changes?.first { $0["id"] as? String == "c1" })
    let after = try #require(move["after"] as? [String: Any])
    #expect(after["timelineStart"] as? Int == 48_000 && after["track"] as? String == "t2")

    let folder = RawPath(file).normalized.folder
    let listed = ProjectJSON.project(
      store.snapshot.project, version: head, folder: folder, missing: [])
    #expect(try space.tape("ls", file, "--json").stdout == listed.line + "\n")
  }

  /// `tape ls --json` of a project made by commands is the line docs/reference/json.md
  /// describes, key for key and in its order, every value worked out here: the source's
  /// frames as soxi counts them, 1 s and 10 ms and 0.5 s at 48 kHz.
  @Test func lsJSONIsTheDocumentedLine() throws {
    let space = try Workspace()
    let audio = try space.copyTestAudio("speech-mono-48k-16.wav")
    let file = space.path("song.tape")
    try space.tape("new", file)
    try space.tape("import", file, audio)
    try space.tape("track", "add", file, "Voice")
    try space.tape(
      "clip", "add", file, "t1", "s1", "--at", "0", "--length", "1s", "--fade-in", "10ms")
    try space.tape("clip", "set", file, "c1", "--name", "intro")
    try space.tape("marker", "add", file, "0.5s", "chorus")
    let frames = try tool("/usr/bin/soxi", ["-s", audio]).stdout
      .trimmingCharacters(in: .whitespacesAndNewlines)
    // The file is beside the project: its path is relative to the project's folder, and
    // `absolutePath` is where it is.
    let absolute = URL(fileURLWithPath: audio).resolvingSymlinksInPath().path
    let fadeIn = #"{"length": 480, "curve": "linear", "silentCut": 0, "fullCut": 0}"#
    let fadeOut = #"{"length": 0, "curve": "linear", "silentCut": 0, "fullCut": 0}"#
    let expected =
      #"{"version": 6, "sampleRate": 48000, "channels": 2, "masterGainDB": 0.0, "#
      + #""sources": [{"id": "s1", "path": "speech-mono-48k-16.wav", "sampleRate": 48000, "#
      + #""channels": 1, "#
      + #""frames": \#(frames), "projectFrames": \#(frames), "absolutePath": "\#(absolute)", "#
      + #""missing": false}], "#
      + #""tracks": [{"id": "t1", "name": "Voice", "gainDB": 0.0, "pan": 0.0, "muted": false, "#
      + #""solo": false, "envelope": null, "output": "master", "panAutomation": null, "#
      + #""clips": [{"id": "c1", "source": "s1", "timelineStart": 0, "sourceStart": 0, "#
      + #""length": 48000, "gainDB": 0.0, "fadeIn": \#(fadeIn), "fadeOut": \#(fadeOut), "#
      + #""name": "intro"}], "effects": []}], "#
      + #""masterEffects": [], "markers": [{"id": "m1", "name": "chorus", "frame": 24000}], "#
      + #""sends": [], "takes": []}"#
    let listed = try space.tape("ls", file, "--json").stdout
    #expect(listed == expected + "\n", "\(listed)\n\(expected)")
  }

  /// Clips moved alike are one phrase whose count is grouped by commas (`ProjectWords.grouped`,
  /// by hand: NumberFormatter took the locale's grouping, `5.000` in German where an app sets
  /// one; on Linux Foundation's current locale is en_001 whatever LANG says, so this test
  /// shows the phrase, not the locale).
  @Test func aMovedGroupIsCountedTheSameEverywhere() throws {
    let count = 1_234
    let source = Source(
      id: Source.ID(1), path: "/a.wav", contentHash: "h", sampleRate: 48_000, channels: 1,
      frameCount: FrameCount(Int64(count) * 100))
    func project(shift: Int64) -> Project {
      let clips = (1...count).map { index in
        Clip(
          id: Clip.ID(Int64(index)), source: source.id,
          timelineStart: FramePosition(Int64(index) * 100 + shift),
          sourceRange: FrameRange(start: FramePosition(Int64(index) * 100), count: 100))
      }
      return Project(
        sampleRate: 48_000, channels: 2, sources: [source],
        tracks: [Track(id: Track.ID(1), name: "A", clips: clips)])
    }
    let diff = ProjectDiff(from: project(shift: 0), to: project(shift: 4_800))
    #expect(
      DiffWords(sampleRate: 48_000).boundedLines(diff) == [
        "c1…c1234 (1,234 clips) moved 0.1s right"
      ])
  }

  /// ``JSON/line`` is JSON another parser reads back to the same values: strings with quotes,
  /// backslashes, control characters and letters beyond ASCII; integers as integers (frames
  /// past 2^53 exact); numbers to the last bit; a number JSON cannot hold as null.
  @Test func aLineReadsBackAsItsValues() throws {
    let text = "\"quoted\" \\ back\u{1}slash\nnew line\ttab é 音 🎚"
    let values: [Double] = [0.1, -6.0, 1e-5, 123_456.789, Double(Float(0.3)), -0.0]
    let value = JSON.object([
      ("text", .string(text)), ("frames", .integer(9_007_199_254_740_993)),
      ("numbers", .array(values.map(JSON.number))), ("nan", .number(.nan)),
      ("empty", .object([(String, JSON)]())), ("flags", .array([.bool(true), .null])),
    ])
    let line = value.line
    #expect(!line.contains("\n"))
    let parsed = try #require(try parseJSON(line) as? [String: Any])
    #expect(parsed["text"] as? String == text)
    #expect((parsed["frames"] as? NSNumber)?.int64Value == 9_007_199_254_740_993)
    let numbers = try #require(parsed["numbers"] as? [NSNumber]).map(\.doubleValue)
    #expect(numbers.map(\.bitPattern) == values.map(\.bitPattern))
    #expect(parsed["nan"] is NSNull)
    #expect((parsed["empty"] as? [String: Any])?.isEmpty == true)
    // Keys in the order written (Foundation's writer orders them arbitrarily on Linux).
    #expect(line.hasPrefix(#"{"text": "#) && line.hasSuffix(#""flags": [true, null]}"#))
    // Interchange's own reader takes it back too, as a Double (reading makes no integers).
    #expect(try JSON(parsing: line)["frames"]?.number == 9_007_199_254_740_992)
  }
}
