import Testing
import Timeline

/// The times typed for a place on the timeline (``TimeExpression``), read against a project
/// with two clips and three markers (one whose name reads as a name and an offset, one that
/// reads as a clip's edge). Every expected frame is worked out here from the fixture's values.
@Suite("Time expressions")
struct TimeExpressionTests {
  /// c1 at 1 s for 2 s (named verse), c2 at 5 s for 1 s; markers chorus at 4 s, take-2s at
  /// 6 s, verse.end at 9 s (a marker named like the clip's edge).
  static let project: Project = {
    var verse = Fixture.clip(1, start: 48_000, length: 96_000)
    verse.name = "verse"
    var project = Fixture.project([verse, Fixture.clip(2, start: 240_000, length: 48_000)])
    project.markers = [
      Marker(id: Marker.ID(1), name: "chorus", position: 192_000),
      Marker(id: Marker.ID(2), name: "take-2s", position: 288_000),
      Marker(id: Marker.ID(3), name: "verse.end", position: 432_000),
    ]
    return project
  }()

  @Test(arguments: [
    ("1.5", Int64(72_000)), ("250ms", 12_000), ("1:02.5", 3_000_000), ("96000f", 96_000),
    (" 2s ", 96_000),
    ("c1.start", 48_000), ("c1.end", 144_000), ("c1.end-100ms", 139_200), ("c2.start+2s", 336_000),
    ("@chorus", 192_000), ("@chorus+2s", 288_000), ("@chorus-500ms", 168_000),
    // The whole name first: a marker called take-2s, not take minus 2 s.
    ("@take-2s", 288_000), ("@take-2s+1s", 336_000),
    // A marker named like a clip's edge is the marker; the clip's own edge by its name
    // otherwise.
    ("@verse.end", 432_000), ("@verse.start+1s", 96_000),
  ])
  func aPlaceIsTheFrameItNames(text: String, frame: Int64) throws {
    #expect(try TimeExpression.position(text, in: Self.project).frames == frame)
  }

  /// A nudge is from the time the option has (a clip's start for a move), and only there.
  @Test func aNudgeIsFromTheBaseGiven() throws {
    let base = FramePosition(48_000)
    #expect(
      try TimeExpression.position("+10ms", in: Self.project, relativeTo: base).frames == 48_480)
    #expect(try TimeExpression.position("-1s", in: Self.project, relativeTo: base).frames == 0)
    #expect(throws: TimelineError.nudgeWithoutBase("+10ms")) {
      try TimeExpression.position("+10ms", in: Self.project)
    }
  }

  @Test func refusalsSayWhatIsWrongInTheirOwnWords() throws {
    func refusal(_ text: String, base: FramePosition? = nil) -> String {
      do {
        _ = try TimeExpression.position(text, in: Self.project, relativeTo: base, option: "--at")
        return "accepted"
      } catch {
        return error.description
      }
    }
    #expect(
      refusal("-2s", base: FramePosition(48_000))
        == "'-2s' comes to 1s before the timeline's start; times are 0 or later")
    #expect(refusal("@") == "'@' names no marker; write @NAME ('tape marker ls' lists them)")
    #expect(
      refusal("@chrous+1s")
        == "@chrous+1s: no marker 'chrous'; did you mean 'chorus'? ('tape marker ls' lists them)")
    #expect(refusal("c9.end") == TimelineError.unknownClip(Clip.ID(9)).description)
    #expect(refusal("@bridge.end") == TimelineError.unknownClipName("bridge").description)
    #expect(refusal("c1.end+1000000000s").hasPrefix("--at c1.end+1000000000s is more than"))
    let empty = Project(sampleRate: 48_000, channels: 2)
    #expect(throws: TimelineError.self) { try TimeExpression.position("@x", in: empty) }
    do {
      _ = try TimeExpression.position("@x", in: empty)
    } catch {
      #expect(
        error.description
          == "@x: no marker 'x'; this project has no markers yet (tape marker add FILE TIME NAME)")
    }
  }

  /// A time into a source is a time from its start, never a place on the timeline.
  @Test func aSourceTimeIsNoPlace() throws {
    #expect(
      try TimeExpression.sourceTime("2.5s", option: "--from", in: Self.project).frames == 120_000)
    for text in ["c1.end", "@chorus", "+1s"] {
      #expect(throws: TimelineError.timelinePlaceForSourceTime(text, option: "--from")) {
        try TimeExpression.sourceTime(text, option: "--from", in: Self.project)
      }
    }
  }

  @Test func aTypoIsMatchedToTheNearestName() {
    #expect(NameSuggestion.nearest(to: "chrous", in: ["intro", "chorus"]) == "chorus")
    #expect(NameSuggestion.nearest(to: "CHORUS", in: ["chorus"]) == "chorus")
    #expect(NameSuggestion.nearest(to: "bridge", in: ["intro", "chorus"]) == nil)
    // A swap of neighbours counts one, as an insertion or a deletion does.
    #expect(NameSuggestion.editDistance("ab", "ba") == 1)
    #expect(NameSuggestion.editDistance("kitten", "sitting") == 3)
  }
}
