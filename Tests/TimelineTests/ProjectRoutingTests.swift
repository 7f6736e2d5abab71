import Testing
import Timeline

/// The routing rules of the model: loops found and named from the track an edit routed, the
/// order chains run in, solo-safe buses, and what removing a track does to routing.
@Suite("Routing in the model")
struct ProjectRoutingTests {
  /// Five tracks: t1 and t2 into t4 (a bus), t3 to the master, t4 to the master, t5 an aux
  /// fed by a send from t2.
  static func project() throws -> Project {
    var project = Project(
      sampleRate: 48_000, channels: 2,
      tracks: (1...5).map { Track(id: Track.ID(Int64($0)), name: "T\($0)") })
    project = try project.applying(try project.routeOutput(of: Track.ID(1), to: Track.ID(4)))
    project = try project.applying(try project.routeOutput(of: Track.ID(2), to: Track.ID(4)))
    project = try project.applying(
      try project.settingSend(Send(id: Send.ID(1), from: Track.ID(2), to: Track.ID(5))))
    return project
  }

  @Test func everyTrackRunsAfterTheTracksThatFeedIt() throws {
    let project = try Self.project()
    #expect(project.routingOrder == [1, 2, 3, 4, 5].map { Track.ID(Int64($0)) })
    var moved = project
    moved.tracks.reverse()
    // Display order t5…t1: t5 and t4 wait for what feeds them.
    #expect(moved.routingOrder == [3, 2, 5, 1, 4].map { Track.ID(Int64($0)) })
  }

  @Test(arguments: [
    (4, 1, "t4 → t1 → t4"), (5, 2, "t5 → t2 → t5"), (4, 2, "t4 → t2 → t4"),
  ])
  func aLoopIsRefusedNamingIt(from: Int64, to: Int64, loop: String) throws {
    let project = try Self.project()
    #expect {
      try project.routeOutput(of: Track.ID(from), to: Track.ID(to))
    } throws: { error in
      "\(error)".hasPrefix("\(loop) is a loop")
    }
    #expect {
      try project.settingSend(Send(id: Send.ID(2), from: Track.ID(from), to: Track.ID(to)))
    } throws: { error in
      "\(error)".hasPrefix("\(loop) is a loop")
    }
    #expect(throws: TimelineError.routingLoop([Track.ID(3), Track.ID(3)])) {
      try project.routeOutput(of: Track.ID(3), to: Track.ID(3))
    }
  }

  /// Soloing t1 keeps t4 (the bus it feeds); soloing t4 keeps t1 and t2 (what feeds it);
  /// soloing t2 keeps t4 and t5 (its bus and its send's aux). A muted bus is silent whatever
  /// is soloed.
  @Test func soloKeepsTheTracksASoloedTrackFeedsAndThoseFeedingIt() throws {
    let project = try Self.project()
    func audible(soloing ids: [Int64], muting muted: [Int64] = []) -> [Int64] {
      var copy = project
      for index in copy.tracks.indices {
        copy.tracks[index].isSolo = ids.contains(copy.tracks[index].id.rawValue)
        copy.tracks[index].isMuted = muted.contains(copy.tracks[index].id.rawValue)
      }
      return copy.audibleTracks.map(\.id.rawValue)
    }
    #expect(audible(soloing: []) == [1, 2, 3, 4, 5])
    #expect(audible(soloing: [1]) == [1, 4])
    #expect(audible(soloing: [4]) == [1, 2, 4])
    #expect(audible(soloing: [2]) == [2, 4, 5])
    #expect(audible(soloing: [3]) == [3])
    #expect(audible(soloing: [1], muting: [4]) == [1])
  }

  /// Removing a bus sends what it received to the master and removes the sends from and to
  /// it; the diff names the output change and the send.
  @Test func removingABusReroutesWhatItReceived() throws {
    var project = try Self.project()
    project = try project.applying(
      try project.settingSend(Send(id: Send.ID(2), from: Track.ID(3), to: Track.ID(4))))
    let (after, changed) = try project.applyingWithChanges([.removeTracks([Track.ID(4)])])
    #expect(after.tracks.map(\.output) == [nil, nil, nil, nil])
    #expect(after.sends.map(\.id) == [Send.ID(1)])
    #expect(changed.sends)
    let diff = ProjectDiff(from: project, to: after, changed: changed)
    #expect(diff.sends.map(\.id) == [Send.ID(2)])
    #expect(
      diff.tracks.compactMap { $0.after?.output == nil && $0.before?.output != nil ? $0.id : nil }
        == [Track.ID(1), Track.ID(2)])
  }
}
