import Testing
import Timeline

@Suite("Validation")
struct ValidationTests {
  @Test func aWellFormedProjectIsValid() throws {
    let project = Fixture.project(
      [Fixture.clip(1, start: 0, length: 48_000, fadeIn: 480, fadeOut: 480)],
      secondTrack: [Fixture.clip(2, start: 24_000, crop: 100, length: 479_900, source: 2)])
    try project.validate()
  }

  @Test func everyProblemHasItsOwnErrorAndMessage() throws {
    let cases: [(Clip, TimelineError, String)] = [
      (
        Fixture.clip(3, start: 0, length: 0), .nonPositiveLength(clip: Clip.ID(3)),
        "clip c3 would be empty; a clip must be at least one frame long"
      ),
      (
        Fixture.clip(3, start: -48_000, length: 10),
        .negativeTimelineStart(clip: Clip.ID(3), start: -48_000, sampleRate: 48_000),
        "clip c3 would start at -1s, before the timeline starts; use a position of 0 or later"
      ),
      (
        Fixture.clip(3, start: 0, crop: 432_000, length: 96_000),
        .cropOutsideSource(
          clip: Clip.ID(3), crop: FrameRange(start: 432_000, count: 96_000), source: Source.ID(1),
          sourceLength: 480_000, sampleRate: 48_000),
        "clip c3 plays 9s–11s of source s1, which is only 10s long; end it at 10s or earlier"
      ),
      (
        Fixture.clip(3, start: 0, length: 192_000, fadeIn: 432_000),
        .fadeLongerThanClip(
          clip: Clip.ID(3), end: .fadeIn, fade: 432_000, clipLength: 192_000, sampleRate: 48_000),
        "fade-in 9s is longer than clip c3 (4s); use --fade-in 4s or less"
      ),
      (
        Fixture.clip(3, start: 0, length: 192_000, fadeIn: 96_000, fadeOut: 144_000),
        .fadesOverlap(
          clip: Clip.ID(3), fadeIn: 96_000, fadeOut: 144_000, clipLength: 192_000,
          sampleRate: 48_000),
        "fade-in 2s and fade-out 3s together are longer than clip c3 (4s); shorten them so they add up to 4s or less"
      ),
      (
        Fixture.clip(3, start: 0, length: 10, source: 9), .unknownSource(Source.ID(9)),
        "no source s9 in this project; 'tape ls' lists the sources"
      ),
      (
        Fixture.clip(3, start: 0, length: 10, gain: 60),
        .gainOutOfRange(what: "gain of clip c3", decibels: 60),
        "gain of clip c3 +60 dB is out of range; use a value from -144 to +48 dB"
      ),
      (
        Fixture.clip(3, start: 0, length: 10, gain: .nan),
        .gainOutOfRange(what: "gain of clip c3", decibels: .nan), ""
      ),
    ]
    for (clip, expected, message) in cases {
      let project = Fixture.project([clip])
      let error = #expect(throws: TimelineError.self) { try project.validate() }
      if case .gainOutOfRange(_, let dB) = expected, dB.isNaN {
        guard case .gainOutOfRange(let what, let got) = error, got.isNaN else {
          Issue.record("expected a NaN gain error, got \(String(describing: error))")
          continue
        }
        #expect(what == "gain of clip c3")
        #expect(error?.description.contains("is not a finite gain") == true)
        continue
      }
      #expect(error == expected)
      #expect(error?.description == message)
    }
  }

  /// The crop is measured at the project rate: 10 s of 44.1 kHz audio is 480 000 frames at 48 kHz.
  @Test func cropsOfResampledSourcesAreMeasuredAtTheProjectRate() throws {
    try Fixture.project([Fixture.clip(1, start: 0, length: 480_000, source: 2)]).validate()
    #expect(throws: TimelineError.self) {
      try Fixture.project([Fixture.clip(1, start: 0, length: 480_001, source: 2)]).validate()
    }
  }

  @Test(arguments: [-1.0001, 1.0001, Double.nan, Double.infinity])
  func panMustBeWithinPlusMinusOne(pan: Double) {
    var project = Fixture.project()
    project.tracks[0].pan = pan
    let error = #expect(throws: TimelineError.self) { try project.validate() }
    guard case .panOutOfRange(let track, _) = error else {
      Issue.record("expected panOutOfRange, got \(String(describing: error))")
      return
    }
    #expect(track == Track.ID(1))
  }

  @Test func formatAndNamesAreChecked() {
    var project = Fixture.project()
    project.sampleRate = 47_999
    #expect(throws: TimelineError.unsupportedSampleRate(47_999)) { try project.validate() }
    project = Fixture.project()
    project.channels = 6
    #expect(throws: TimelineError.unsupportedChannelCount(6)) { try project.validate() }
    project = Fixture.project()
    project.tracks[1].name = "  "
    #expect(throws: TimelineError.emptyTrackName) { try project.validate() }
  }

  @Test func idsMustBeUnique() {
    let project = Fixture.project(
      [Fixture.clip(1, start: 0, length: 10)], secondTrack: [Fixture.clip(1, start: 50, length: 10)]
    )
    #expect(throws: TimelineError.duplicateID("c1")) { try project.validate() }
  }

  @Test func sourcesMustHoldMonoOrStereoAudio() {
    var project = Fixture.project()
    project.sources[0].channels = 6
    #expect(
      throws: TimelineError.invalidSource(
        Source.ID(1), reason: "6 channels; only mono and stereo are supported")
    ) {
      try project.validate()
    }
    project = Fixture.project()
    project.sources[0].frameCount = 0
    #expect(throws: TimelineError.invalidSource(Source.ID(1), reason: "it holds no audio")) {
      try project.validate()
    }
  }
}

@Suite("Validation names the same problem every time")
struct ValidationOrderTests {
  /// Twenty clips made empty in one edit: the error names the lowest id, not whichever a set
  /// happens to yield first (a set's order changes from process to process).
  @Test func severalInvalidClipsNameTheLowestID() throws {
    let ids = (10..<30).map { Int64($0) }
    let commands = ids.shuffled().map {
      Command.setClip(Fixture.clip($0, start: 0, length: 0), track: Track.ID(1))
    }
    #expect(throws: TimelineError.nonPositiveLength(clip: Clip.ID(10))) {
      try Fixture.project().applying(commands)
    }
  }

  @Test func severalInvalidTracksNameTheLowestID() throws {
    let commands = (10..<30).shuffled().map {
      Command.setTrack(Track(id: Track.ID(Int64($0)), name: "T\($0)", pan: 2))
    }
    #expect(throws: TimelineError.panOutOfRange(track: Track.ID(10), pan: 2)) {
      try Fixture.project().applying(commands)
    }
  }
}
