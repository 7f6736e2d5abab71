import TerminalViews
import Testing
import Timeline

/// `tape ls`'s listing as the library gives it (``TimelineTable``): a name is escaped wherever
/// it appears, and every command the listing suggests names the project's file.
@Suite("Timeline table")
struct TimelineTableTests {
  /// A clip named before control characters were refused (a project from then) cannot break
  /// its row: the name is written `\u{A}` as a track's is.
  @Test func aClipsNameIsEscapedInItsRow() throws {
    var clip = Fixture.clip(1, start: 0, length: 48_000)
    clip.name = "intro\nfake row"
    let table = TimelineTable(Fixture.project([clip]), version: 3, file: "song.tape").text
    let row = try #require(table.split(separator: "\n").first { $0.contains("c1 ") })
    #expect(row.hasSuffix(#"  @intro\u{A}fake row"#), "\(row)")
    #expect(!table.contains("\nfake row"), "\(table)")
  }

  /// The hints are commands to run: the file given, not the word FILE.
  @Test func theHintsNameTheFile() throws {
    let empty = Project(sampleRate: 48_000, channels: 2)
    let bare = TimelineTable(empty, version: 1, file: "talk.tape").text
    #expect(bare.contains("no sources yet: tape import talk.tape AUDIO..."), "\(bare)")
    #expect(bare.contains("no tracks yet: tape track add talk.tape NAME"), "\(bare)")
    // Two takes of 1 s at 0 on t1: c2 plays, c1 is kept.
    let range = FrameRange(start: 0, count: 48_000)
    let takes = [
      Fixture.clip(1, start: 0, length: 48_000), Fixture.clip(2, start: 0, length: 48_000),
    ]
    let project = try Fixture.project().applying(
      Fixture.project().addingTakes(takes, track: Track.ID(1), range: range))
    let listed = TimelineTable(project, version: 2, file: "talk.tape").text
    #expect(
      listed.contains(
        "takes 0:00.000–0:01.000 on t1: c2 plays, c1 kept ('tape take ls talk.tape t1')"),
      "\(listed)")
    #expect(!listed.contains("FILE"), "\(listed)")
  }

  /// Counts of clips read the same in every locale: thousands grouped by commas.
  @Test func countsAreGroupedByCommasWhateverTheLocale() {
    let written = [0, 7, 999, 1_000, 12_000, 999_999, 1_234_567, -1_000].map(ProjectWords.grouped)
    #expect(written == ["0", "7", "999", "1,000", "12,000", "999,999", "1,234,567", "-1,000"])
  }
}
