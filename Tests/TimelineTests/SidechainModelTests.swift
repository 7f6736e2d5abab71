import Testing
import Timeline

/// Side chains in the model: a dependency of the routing graph (the source runs first, a loop
/// through one is refused naming it), not heard by solo but keying under it, kept by stems,
/// dropped with their source track, and refused on the master.
@Suite("Side chains in the model")
struct SidechainModelTests {
  static let plugin = "http://lsp-plug.in/plugins/lv2/sc_compressor_stereo"

  /// Three tracks: t1 music keyed by t3 (a voice), t2 a bus the voice goes into.
  static func project() throws -> Project {
    var project = Project(
      sampleRate: 48_000, channels: 2,
      tracks: (1...3).map { Track(id: Track.ID(Int64($0)), name: "T\($0)") })
    project = try project.applying(try project.routeOutput(of: Track.ID(3), to: Track.ID(2)))
    project = try project.applying(
      try project.addEffect(
        Effect(id: Effect.ID(1), plugin: plugin, sidechain: Track.ID(3)), to: .track(Track.ID(1))
      ))
    return project
  }

  @Test func theSourceRunsBeforeTheTrackItKeys() throws {
    let project = try Self.project()
    #expect(project.hasRouting)
    #expect(project.routingOrder == [3, 1, 2].map { Track.ID(Int64($0)) })
    #expect(project.sidechains.map(\.source) == [Track.ID(3)])
    // Solo follows outputs and sends only: soloing the music leaves the voice unheard, but it
    // still keys the music, and so does nothing else (the bus it goes to is not its key).
    var soloed = project
    soloed.tracks[0].isSolo = true
    #expect(soloed.audibleTracks.map(\.id) == [Track.ID(1)])
    #expect(soloed.keyingTracks(for: [Track.ID(1)]) == [Track.ID(3)])
    #expect(soloed.mixedTracks.map(\.id) == [Track.ID(1), Track.ID(3)])
    // Keyed by the bus: the bus and the voice feeding it key; a muted key keys nothing.
    soloed.tracks[0].effects[0].sidechain = Track.ID(2)
    #expect(soloed.keyingTracks(for: [Track.ID(1)]) == [Track.ID(2), Track.ID(3)])
    soloed.tracks[1].isMuted = true
    #expect(soloed.mixedTracks.map(\.id) == [Track.ID(1), Track.ID(3)])
  }

  @Test func aLoopThroughASidechainIsRefusedNamingIt() throws {
    let project = try Self.project()
    // The music into the voice it is keyed by.
    #expect {
      try project.routeOutput(of: Track.ID(1), to: Track.ID(3))
    } throws: { error in
      "\(error)".hasPrefix("t1 → t3 → t1 is a loop")
    }
    // A track keyed by itself.
    #expect {
      try project.setEffect(Effect.ID(1), sidechain: .some(Track.ID(1)))
    } throws: { error in
      "\(error)".hasPrefix("t1 → t1 is a loop")
    }
    // The bus keying the music while the music goes into the bus.
    let routed = try project.applying(try project.routeOutput(of: Track.ID(1), to: Track.ID(2)))
    #expect {
      try routed.addEffect(
        Effect(id: Effect.ID(2), plugin: Self.plugin, sidechain: Track.ID(2)),
        to: .track(Track.ID(1)))
    } throws: { error in
      "\(error)".hasPrefix("t1 → t2 → t1 is a loop")
    }
    // The same through the command itself (a batch, an undo), not only the edit function.
    #expect(throws: TimelineError.self) {
      try routed.applying([
        .setEffects(
          [Effect(id: Effect.ID(1), plugin: Self.plugin, sidechain: Track.ID(2))],
          on: .track(Track.ID(1)))
      ])
    }
  }

  @Test func removingTheSourceDropsTheSidechainAndTheMasterTakesNone() throws {
    let project = try Self.project()
    let removed = try project.applyingWithChanges([.removeTracks([Track.ID(3)])])
    #expect(removed.project.effect(Effect.ID(1))?.effect.sidechain == nil)
    #expect(removed.changed.effects)
    #expect(throws: TimelineError.self) {
      try project.addEffect(
        Effect(id: Effect.ID(2), plugin: Self.plugin, sidechain: Track.ID(3)), to: .master)
    }
    // A stem keeps its side chain: the source comes along unheard (the stem's own track
    // soloed), its output to a track the stem leaves out going to the master.
    let stem = try project.stem(of: [Track.ID(1)], masterGain: true)
    #expect(stem.effect(Effect.ID(1))?.effect.sidechain == Track.ID(3))
    #expect(
      stem.tracks.map { "\($0.id) \($0.isSolo) \($0.output.map(\.description) ?? "master")" } == [
        "t1 true master", "t3 false master",
      ])
    #expect(stem.audibleTracks.map(\.id) == [Track.ID(1)])
    let both = try project.stem(of: [Track.ID(1), Track.ID(3)], masterGain: true)
    #expect(both.effect(Effect.ID(1))?.effect.sidechain == Track.ID(3))
    #expect(both.tracks.allSatisfy { !$0.isSolo })
  }
}
