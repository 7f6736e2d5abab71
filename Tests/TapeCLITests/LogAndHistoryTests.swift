import Foundation
import Testing

/// `tape log FILE ID` (the versions that changed one thing, from the recorded changes) and
/// `tape history`'s limit.
@Suite("tape log and tape history --limit")
struct LogAndHistoryTests {
  struct Field: Equatable, CustomStringConvertible {
    var name: String
    var before: String
    var after: String
    var description: String { "\(name) \(before) → \(after)" }
  }

  struct Version: Equatable, CustomStringConvertible {
    var version: Int
    var change: String
    var onHeadLine: Bool
    var fields: [Field]
    var description: String { "v\(version) \(change) \(onHeadLine) \(fields)" }
  }

  static func text(_ value: Any?) -> String {
    switch value {
    case let value as String: value
    case let value as NSNumber:
      // 0.0 and 0 alike: JSON does not tell them apart.
      value.doubleValue == value.doubleValue.rounded()
        ? "\(Int(value.doubleValue))" : "\(value.doubleValue)"
    default: "null"
    }
  }

  static func log(
    _ space: Workspace, _ file: String, _ id: String, all: Bool = false
  ) throws
    -> [Version]
  {
    let json = try #require(
      try parseJSON(space.tape(["log", file, id, "--json"] + (all ? ["--all"] : [])).stdout)
        as? [String: Any])
    #expect(json["id"] as? String == id)
    return try #require(json["versions"] as? [[String: Any]]).map { version in
      Version(
        version: version["version"] as? Int ?? 0, change: version["change"] as? String ?? "",
        onHeadLine: version["onHeadLine"] as? Bool ?? false,
        fields: (version["fields"] as? [[String: Any]] ?? []).map {
          Field(
            name: $0["field"] as? String ?? "", before: text($0["before"]),
            after: text($0["after"]))
        })
    }
  }

  @Test func aClipSplitMovedTrimmedUndoneAndRedone() throws {
    let space = try Workspace()
    let file = space.path("song.tape")
    try space.tape("new", file)
    try space.tape("import", file, TestAudio.path("noise-stereo-48k-16.flac"))
    try space.tape("track", "add", file, "One")  // v3
    try space.tape("track", "add", file, "Two")  // v4
    try space.tape("clip", "add", file, "t1", "s1", "--at", "1s", "--length", "2s")  // v5: c1
    try space.tape("clip", "add", file, "t2", "s1", "--at", "0", "--length", "1s")  // v6: c2
    try space.tape("clip", "split", file, "c1", "--at", "2s")  // v7: c3 is the right part
    try space.tape("clip", "move", file, "c1", "--to", "4s", "--track", "t2")  // v8
    try space.tape("clip", "trim", file, "c1", "--start", "4.25s")  // v9
    let added = Version(
      version: 5, change: "added", onHeadLine: true,
      fields: [
        Field(name: "track", before: "null", after: "t1"),
        Field(name: "source", before: "null", after: "s1"),
        Field(name: "timelineStart", before: "null", after: "48000"),
        Field(name: "sourceStart", before: "null", after: "0"),
        Field(name: "length", before: "null", after: "96000"),
        Field(name: "gainDB", before: "null", after: "0"),
        Field(name: "fadeInLength", before: "null", after: "0"),
        Field(name: "fadeInCurve", before: "null", after: "linear"),
        Field(name: "fadeOutLength", before: "null", after: "0"),
        Field(name: "fadeOutCurve", before: "null", after: "linear"),
      ])
    let split = Version(
      version: 7, change: "changed", onHeadLine: true,
      fields: [Field(name: "length", before: "96000", after: "48000")])
    let moved = Version(
      version: 8, change: "changed", onHeadLine: true,
      fields: [
        Field(name: "track", before: "t1", after: "t2"),
        Field(name: "timelineStart", before: "48000", after: "192000"),
      ])
    let trimmed = Version(
      version: 9, change: "changed", onHeadLine: true,
      fields: [
        Field(name: "timelineStart", before: "192000", after: "204000"),
        Field(name: "sourceStart", before: "0", after: "12000"),
        Field(name: "length", before: "48000", after: "36000"),
      ])
    #expect(try Self.log(space, file, "c1") == [trimmed, moved, split, added])
    // The right part of the split: added by v7, never touched since.
    #expect(try Self.log(space, file, "c3").map(\.version) == [7])
    #expect(try Self.log(space, file, "c3")[0].change == "added")
    try space.tape("undo", file)
    #expect(try Self.log(space, file, "c1") == [moved, split, added])
    var off = trimmed
    off.onHeadLine = false
    #expect(try Self.log(space, file, "c1", all: true) == [off, moved, split, added])
    try space.tape("redo", file)
    #expect(try Self.log(space, file, "c1") == [trimmed, moved, split, added])
    // A new edit after an undo: a branch; the old tip is off the head's line.
    try space.tape("undo", file)
    try space.tape("clip", "set", file, "c1", "--gain", "-3dB")  // v10
    let gain = Version(
      version: 10, change: "changed", onHeadLine: true,
      fields: [Field(name: "gainDB", before: "0", after: "-3")])
    #expect(try Self.log(space, file, "c1") == [gain, moved, split, added])
    #expect(try Self.log(space, file, "c1", all: true) == [gain, off, moved, split, added])
    // Text: one line a version, newest first.
    let lines = try space.tape("log", file, "c1").stdout.split(separator: "\n")
    #expect(lines.count == 4)
    #expect(lines[0].hasPrefix("v10  ") && lines[0].hasSuffix(": gainDB 0 dB → -3 dB"))
    #expect(lines[2].hasSuffix(": length 0:02.000 → 0:01.000"))
    #expect(
      try space.tape("log", file, "c1", "--limit", "1").stdout.split(separator: "\n").count == 2)
  }

  /// A nudge is labelled as one: "Move c1 by -500ms", not "Move c1 to -500ms" (which reads as
  /// a move to before the timeline's start); an absolute time keeps "to".
  @Test func nudgesAreLabelledAsRelative() throws {
    let space = try Workspace()
    let file = space.path("song.tape")
    try space.tape("new", file)
    try space.tape("import", file, TestAudio.path("noise-stereo-48k-16.flac"))
    try space.tape("track", "add", file, "One")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "1s", "--length", "2s")
    try space.tape("marker", "add", file, "1s", "verse")
    try space.tape("clip", "move", file, "c1", "--to", "+1s")
    try space.tape("clip", "move", file, "c1", "--to", "-500ms")
    try space.tape("clip", "move", file, "c1", "--to", "2s")
    try space.tape("clip", "trim", file, "c1", "--start", "+10ms", "--end", "3.5s")
    try space.tape("marker", "move", file, "verse", "--to", "+1s")
    let json = try #require(
      try parseJSON(space.tape("history", file, "--json").stdout) as? [String: Any])
    let labels = try #require(json["versions"] as? [[String: Any]]).map {
      $0["label"] as? String ?? ""
    }
    #expect(
      Array(labels.suffix(5)) == [
        "Move c1 by +1s", "Move c1 by -500ms", "Move c1 to 2s",
        "Trim c1 start by +10ms, end to 3.5s",
        "Move marker verse by +1s",
      ])
  }

  @Test func aTrackRenameAndItsEnvelope() throws {
    let space = try Workspace()
    let file = space.path("song.tape")
    try space.tape("new", file)
    try space.tape("track", "add", file, "One")  // v2
    try space.tape("track", "add", file, "Two")  // v3
    try space.tape("track", "set", file, "t2", "--name", "Bass", "--gain", "-3dB")  // v4
    try space.tape("track", "set", file, "t1", "--name", "Lead")  // v5: not t2
    try space.tape("track", "envelope", file, "t2", "--set", "0s:0dB,1s:-6dB")  // v6
    try space.tape("track", "set", file, "t2", "--mute")  // v7
    let log = try Self.log(space, file, "t2")
    #expect(log.map(\.version) == [7, 6, 4, 3])
    #expect(log[0].fields.map(\.name) == ["muted"])
    #expect(
      try space.tape("log", file, "t2", "--json", "--limit", "1").stdout.contains(
        #"{"field": "muted", "before": false, "after": true}"#))
    #expect(log[1].fields == [Field(name: "envelope", before: "null", after: "null")])
    #expect(
      log[2].fields == [
        Field(name: "name", before: "Two", after: "Bass"),
        Field(name: "gainDB", before: "0", after: "-3"),
      ])
    #expect(log[3].change == "added")
    let text = try space.tape("log", file, "t2").stdout.split(separator: "\n")
    #expect(text[2].hasSuffix(": name \"Two\" → \"Bass\", gainDB 0 dB → -3 dB"))
    #expect(text[1].hasSuffix(": envelope edited"))
  }

  /// A track's place: the text counts rows from 1, as `track move --to`, `diff` and `ls` do
  /// (it said "position 1 → 0" for a move to the top); `--json` keeps `position` from 0.
  @Test func aTrackMoveCountsRowsFromOne() throws {
    let space = try Workspace()
    let file = space.path("song.tape")
    try space.tape("new", file)
    try space.tape("track", "add", file, "One")
    try space.tape("track", "add", file, "Two")
    try space.tape("track", "move", file, "t2", "--to", "1")
    let text = try space.tape("log", file, "t2").stdout.split(separator: "\n")
    #expect(text.count == 2)
    #expect(text[0].hasSuffix("\"Move track t2 to place 1\": row 2 → 1"), "\(text[0])")
    #expect(
      text[1].hasSuffix(": t2 added: row 2, name \"Two\", gainDB 0 dB, pan 0, muted no, solo no"))
    #expect(
      try Self.log(space, file, "t2")[0].fields == [
        Field(name: "position", before: "1", after: "0")
      ])
    #expect(
      try space.tape("diff", file, "3", "4").stdout
        == "t1 moved from row 1 to 2\nt2 moved from row 2 to 1\n")
  }

  @Test func idsThatAreNotThere() throws {
    let space = try Workspace()
    let file = space.path("song.tape")
    try space.tape("new", file)
    try space.tape("track", "add", file, "One")
    let missing = try space.tape("log", file, "c9", status: 65)
    #expect(missing.stderr == "error: no version of this project has c9; 'tape ls' lists the ids\n")
    try space.tape("log", file, "x9", status: 64)
    try space.tape("log", file, "t1", "--limit", "0", status: 64)
  }

  @Test func historyShowsTheLastThirtyOfTheHeadsLine() throws {
    let space = try Workspace()
    let file = space.path("song.tape")
    try space.tape("new", file)
    for index in 1...39 { try space.tape("track", "add", file, "T\(index)") }  // v2…v40
    try space.tape("undo", file, "--steps", "2")  // head 38; 39 and 40 are redo's
    try space.tape("track", "add", file, "Branch")  // v41, beside v39
    let text = try space.tape("history", file).stdout.split(separator: "\n")
    // The head's line: v1…v38, v41; its last 30 are v10…v38 and v41; v39 and v40 are left out.
    #expect(text.count == 31)
    #expect(text[0].hasPrefix("10 ") && text[29].hasPrefix("41 ") && text[29].hasSuffix("← head"))
    #expect(
      text[30]
        == "(11 more versions not shown: 9 earlier on this line, 2 on other branches; 'tape history \(file) --all' shows every version, --limit N the last N)"
    )
    let five = try space.tape("history", file, "--limit", "5").stdout.split(separator: "\n")
    #expect(five.count == 6 && five[0].hasPrefix("35 "))
    #expect(try space.tape("history", file, "--all").stdout.split(separator: "\n").count == 41)
    // JSON keeps its contract: every version unless --limit, and says how many it left out.
    let json = try #require(
      try parseJSON(space.tape("history", file, "--json").stdout) as? [String: Any])
    #expect((json["versions"] as? [Any])?.count == 41 && json["omitted"] as? Int == 0)
    #expect(json["head"] as? Int == 41)
    let limited = try #require(
      try parseJSON(space.tape("history", file, "--json", "--limit", "3").stdout)
        as? [String: Any])
    let versions = try #require(limited["versions"] as? [[String: Any]])
    #expect(versions.map { $0["version"] as? Int } == [37, 38, 41])
    #expect(limited["omitted"] as? Int == 38)
    try space.tape("history", file, "--all", "--limit", "3", status: 64)
    // Undone to the start: the window moves back to show the head.
    try space.tape("checkout", file, "3")
    let back = try space.tape("history", file).stdout.split(separator: "\n")
    #expect(back.contains { $0.hasPrefix("3 ") && $0.hasSuffix("← head") })
  }
}
