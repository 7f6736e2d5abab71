import Testing
import Timeline

@Suite("Stem selection")
struct StemSelectionTests {
  /// Four tracks: a muted one, two soloed (one of them muted too: mute wins), one not soloed.
  static func project() -> Project {
    var project = Fixture.project(
      [Fixture.clip(1, start: 0, length: 100)],
      secondTrack: [Fixture.clip(2, start: 0, length: 100)])
    project.tracks[0].name = "Lead vox/1"
    project.tracks[1].isSolo = true
    project.tracks.append(Track(id: Track.ID(3), name: "Bass", isMuted: true, isSolo: true))
    project.tracks.append(Track(id: Track.ID(4), name: "Drums"))
    return project
  }

  @Test("the tracks the mix hears, named after them; the others said")
  func heard() {
    let project = Self.project()
    #expect(
      project.stemSelection(allTracks: false)
        == StemSelection(
          stems: [StemSelection.Stem(track: Track.ID(2), fileName: "t2-Guitar")],
          unheard: [project.tracks[0], project.tracks[2], project.tracks[3]]))
  }

  @Test("with allTracks every track, whatever the mix hears; a name's odd characters made _")
  func all() {
    let project = Self.project()
    #expect(
      project.stemSelection(allTracks: true)
        == StemSelection(
          stems: [
            StemSelection.Stem(track: Track.ID(1), fileName: "t1-Lead_vox_1"),
            StemSelection.Stem(track: Track.ID(2), fileName: "t2-Guitar"),
            StemSelection.Stem(track: Track.ID(3), fileName: "t3-Bass"),
            StemSelection.Stem(track: Track.ID(4), fileName: "t4-Drums"),
          ], unheard: []))
  }

  @Test("a mix that hears no track has no stems")
  func none() {
    var project = Self.project()
    for index in project.tracks.indices { project.tracks[index].isMuted = true }
    #expect(project.stemSelection(allTracks: false).stems.isEmpty)
    #expect(project.stemSelection(allTracks: false).unheard == project.tracks)
  }
}
