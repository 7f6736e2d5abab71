import Testing
import Timeline

/// Markers in the model: names checked, kept sorted, and moved by every ripple edit.
@Suite("Markers")
struct MarkerTests {
  static func marker(_ id: Int64, _ name: String, at frame: Int64) -> Marker {
    Marker(id: Marker.ID(id), name: name, position: FramePosition(frame))
  }

  /// A project with markers at 0.5 s (before), 1.5 s (inside 1–2 s) and 3 s (after).
  static func marked() throws -> Project {
    let clips = [
      Fixture.clip(1, start: 0, length: 48_000), Fixture.clip(2, start: 96_000, length: 96_000),
    ]
    return try Fixture.project(clips).applying([
      .setMarker(marker(1, "intro", at: 24_000)), .setMarker(marker(2, "inside", at: 72_000)),
      .setMarker(marker(3, "after", at: 144_000)), .setMarker(marker(4, "start", at: 48_000)),
    ])
  }

  @Test func markersAreSortedByTimeThenID() throws {
    let project = try Fixture.project().applying([
      .setMarker(Self.marker(3, "c", at: 10)), .setMarker(Self.marker(1, "a", at: 20)),
      .setMarker(Self.marker(2, "b", at: 10)),
    ])
    #expect(project.markers.map(\.id) == [Marker.ID(2), Marker.ID(3), Marker.ID(1)])
    let moved = try project.applying(try project.moveMarker(Marker.ID(1), to: 0))
    #expect(moved.markers.map(\.id) == [Marker.ID(1), Marker.ID(2), Marker.ID(3)])
    #expect(
      Project(sampleRate: 48_000, channels: 2, markers: project.markers.reversed()).markers
        == project.markers)
  }

  @Test(arguments: [
    ("", TimelineError.invalidMarkerName("", reason: .blank)),
    ("  ", .invalidMarkerName("  ", reason: .blank)),
    (" chorus", .invalidMarkerName(" chorus", reason: .blanksAround)),
    ("m1", .invalidMarkerName("m1", reason: .idForm)),
    ("c12", .invalidMarkerName("c12", reason: .idForm)),
    ("42", .invalidMarkerName("42", reason: .idForm)),
    ("@chorus", .invalidMarkerName("@chorus", reason: .at)),
    ("two\nlines", .invalidMarkerName("two\nlines", reason: .controlCharacter)),
    ("tab\there", .invalidMarkerName("tab\there", reason: .controlCharacter)),
  ])
  func badNamesAreRefused(name: String, error: TimelineError) throws {
    let project = try Self.marked()
    #expect(throws: error) { try project.addMarker(Marker.ID(9), named: name, at: 0) }
    #expect(throws: error) { try project.renameMarker(Marker.ID(1), to: name) }
    #expect(throws: error) { try project.applying([.setMarker(Self.marker(9, name, at: 0))]) }
  }

  @Test func namesAreUniqueAndTheErrorNamesTheMarkerThatHasIt() throws {
    let project = try Self.marked()
    let taken = TimelineError.duplicateMarkerName("intro", existing: Marker.ID(1))
    #expect(throws: taken) { try project.addMarker(Marker.ID(9), named: "intro", at: 0) }
    #expect(throws: taken) { try project.renameMarker(Marker.ID(3), to: "intro") }
    #expect("\(taken)".contains("marker m1 is already named 'intro'"))
    // Renaming a marker to its own name, or names that merely look alike, are fine.
    #expect(
      try project.renameMarker(Marker.ID(1), to: "intro") == [
        .setMarker(Self.marker(1, "intro", at: 24_000))
      ])
    #expect(try project.addMarker(Marker.ID(9), named: "Intro 2", at: 0).count == 1)
    #expect(throws: TimelineError.unknownMarker(Marker.ID(9))) {
      try project.moveMarker(Marker.ID(9), to: 0)
    }
    #expect(throws: TimelineError.unknownMarker(Marker.ID(9))) {
      try project.removeMarkers([Marker.ID(1), Marker.ID(9)])
    }
  }

  /// The whole-project check finds what the commands refuse: two markers of one name, a
  /// marker twice.
  @Test func theWholeProjectCheckCoversMarkers() throws {
    var project = try Self.marked()
    try project.validate()
    project.markers.append(Self.marker(9, "intro", at: 0))
    #expect(throws: TimelineError.duplicateMarkerName("intro", existing: Marker.ID(9))) {
      try project.validate()
    }
    project.markers[project.markers.count - 1] = Self.marker(1, "other", at: 0)
    #expect(throws: TimelineError.duplicateID("m1")) { try project.validate() }
  }

  /// A ripple cut of 1–2 s: the marker after moves left by 1 s, the one inside to 1 s, the
  /// ones before and at the start stay. Without ripple nothing moves.
  @Test func aRippleCutMovesTheMarkersAfterItAndInsideIt() throws {
    let project = try Self.marked()
    let range = FrameRange(start: 48_000, end: 96_000)
    var next: Int64 = 100
    let cut = try project.applying(
      try project.cutRange(range, ripple: true) {
        next += 1
        return Clip.ID(next)
      })
    #expect(
      cut.markers == [
        Self.marker(1, "intro", at: 24_000), Self.marker(2, "inside", at: 48_000),
        Self.marker(4, "start", at: 48_000), Self.marker(3, "after", at: 96_000),
      ])
    let plain = try project.applying(
      try project.cutRange(range, ripple: false) {
        next += 1
        return Clip.ID(next)
      })
    #expect(plain.markers == project.markers)
  }

  /// Inserting 1 s at 1 s moves the markers at or after 1 s right by 1 s.
  @Test func anInsertMovesTheMarkersAtOrAfterIt() throws {
    let project = try Self.marked()
    let inserted = try project.applying(
      try project.insertGap(at: 48_000, length: 48_000) { Clip.ID(100) })
    #expect(
      inserted.markers == [
        Self.marker(1, "intro", at: 24_000), Self.marker(4, "start", at: 96_000),
        Self.marker(2, "inside", at: 120_000), Self.marker(3, "after", at: 192_000),
      ])
  }

  /// Removing c2 (2–4 s) with ripple moves the marker at 3 s (inside it) to 2 s; without
  /// ripple, nothing moves.
  @Test func aRippleClipRemovalMovesMarkersAsACut() throws {
    let project = try Self.marked()
    let removed = try project.applying(try project.removeClip(Clip.ID(2), ripple: true))
    #expect(removed.marker(Marker.ID(3))?.position == 96_000)
    #expect(
      removed.markers.filter { $0.id != Marker.ID(3) }
        == project.markers.filter { $0.id != Marker.ID(3) })
    let plain = try project.applying(try project.removeClip(Clip.ID(2), ripple: false))
    #expect(plain.markers == project.markers)
  }

  @Test func aDiffNamesEachMarkerChange() throws {
    let project = try Self.marked()
    let after = try project.applying([
      .setMarker(Self.marker(1, "intro", at: 0)), .setMarker(Self.marker(2, "middle", at: 72_000)),
      .removeMarkers([Marker.ID(3)]), .setMarker(Self.marker(5, "new", at: 5)),
    ])
    let diff = ProjectDiff(from: project, to: after, changed: ChangedIDs(markers: true))
    #expect(
      diff.markers == [
        .init(
          id: Marker.ID(1), before: Self.marker(1, "intro", at: 24_000),
          after: Self.marker(1, "intro", at: 0)),
        .init(
          id: Marker.ID(2), before: Self.marker(2, "inside", at: 72_000),
          after: Self.marker(2, "middle", at: 72_000)),
        .init(id: Marker.ID(3), before: Self.marker(3, "after", at: 144_000), after: nil),
        .init(id: Marker.ID(5), before: nil, after: Self.marker(5, "new", at: 5)),
      ])
    #expect(ProjectDiff(from: project, to: after).markers == diff.markers)
  }
}

/// The rules a new marker name meets (not ending in an offset, at most 100 characters) are for
/// names being given: a project made before them, with a marker called `bar-12`, still opens,
/// moves it, ripples it and renames it to a name that meets them.
@Suite("Marker names made before the offset rule")
struct OlderMarkerNameTests {
  @Test func aMarkerNamedBeforeTheRuleStillEdits() throws {
    let old = Marker(id: Marker.ID(1), name: "bar-12", position: FramePosition(144_000))
    let clips = [Fixture.clip(1, start: 0, length: 240_000)]
    let project = try Fixture.project(clips).applying([.setMarker(old)])
    try project.validate()
    let moved = try project.applying(try project.moveMarker(old.id, to: FramePosition(96_000)))
    #expect(moved.markers.first?.position == FramePosition(96_000))
    var next = Int64(100)
    let rippled = try project.applying(
      try project.cutRange(
        FrameRange(start: FramePosition(0), count: FrameCount(48_000)), ripple: true
      ) {
        next += 1
        return Clip.ID(next)
      })
    #expect(rippled.markers.first?.position == FramePosition(96_000))
    #expect(throws: TimelineError.invalidMarkerName("bar-13", reason: .readsAsOffset("-13"))) {
      try project.renameMarker(old.id, to: "bar-13")
    }
    #expect(throws: TimelineError.invalidMarkerName("x+2s", reason: .readsAsOffset("+2s"))) {
      try project.addMarker(Marker.ID(2), named: "x+2s", at: FramePosition(0))
    }
    let renamed = try project.applying(try project.renameMarker(old.id, to: "bar 12"))
    #expect(renamed.markers.first?.name == "bar 12")
  }
}
