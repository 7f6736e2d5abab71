import Foundation
import Testing

/// Recordings ended every way a session ends: Ctrl-C, SIGTERM, kill -9, and kill -9 followed
/// by dropping the page cache (what the disk holds, as after a power cut, where the kernel
/// lets the test drop it), each at a random moment, while another process commits edits.
extension ProcessHeavyTests.RecordTests {
  /// How a recording is ended in one round.
  enum Ending: CaseIterable, CustomStringConvertible {
    case interrupt, terminate, kill, powerCut

    var signal: Int32 {
      switch self {
      case .interrupt: SIGINT
      case .terminate: SIGTERM
      case .kill, .powerCut: SIGKILL
      }
    }

    var description: String {
      switch self {
      case .interrupt: "Ctrl-C"
      case .terminate: "SIGTERM"
      case .kill: "kill -9"
      case .powerCut: "kill -9 + drop caches"
      }
    }
  }

  /// 32 recordings, 8 of each ending, at random moments from 0.2 to 2.5 s in: a signal keeps
  /// the take as its clip at once; after kill -9 any command says in one line that a take
  /// waits, and `--recover` adds it with at most one second missing. Meanwhile every round
  /// commits a marker from another process: every acknowledged edit is still there at the
  /// end, and `tape verify` passes.
  @Test func everyWayARecordingEndsKeepsTheTakeAndEveryAcknowledgedEdit() throws {
    let device = try Self.pacedCapture()
    let space = try Workspace()
    let song = space.path("song.tape")
    try space.tape("new", song, "--rate", "48000", "--channels", "2")
    try space.tape("track", "add", song, "Voice")
    let canDropCaches = FileManager.default.isWritableFile(atPath: "/proc/sys/vm/drop_caches")
    var generator = SystemRandomNumberGenerator()
    let endings = (0..<8).flatMap { _ in Ending.allCases }.shuffled(using: &generator)
    var acknowledged: [String] = []
    var clipIDs: [String] = []
    var worst: [String: Double] = [:]
    for (round, ending) in endings.enumerated() {
      let log = space.path("record-\(round).log")
      let moment = Double.random(in: 0.2...2.5, using: &generator)
      let (process, started) = try Self.startRecording(space, song, device: device, log: log)
      // An edit from another process while the take is being written.
      let marker = try space.tape("marker", "add", song, "\(round)s", "mark_\(round)")
      acknowledged.append(marker.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
      let wait = moment - Date().timeIntervalSince(started)
      if wait > 0 { Thread.sleep(forTimeInterval: wait) }
      kill(process.processIdentifier, ending.signal)
      let elapsed = Date().timeIntervalSince(started)
      process.waitUntilExit()
      let context = "round \(round), \(ending) after \(String(format: "%.3f", elapsed)) s"
      if ending == .powerCut, canDropCaches {
        try "3\n".write(toFile: "/proc/sys/vm/drop_caches", atomically: false, encoding: .utf8)
      }
      let clipID: String
      switch ending {
      case .interrupt, .terminate:
        #expect(
          process.terminationReason == .uncaughtSignal
            && process.terminationStatus == ending.signal, "\(context)")
        clipID = try String(contentsOfFile: log + ".out", encoding: .utf8)
          .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
          !(try space.tape("ls", song).stderr.contains("waits to be recovered")), "\(context)")
      case .kill, .powerCut:
        let listed = try space.tape("ls", song)
        let notices = listed.stderr.split(separator: "\n").filter {
          $0.contains("waits to be recovered")
        }
        #expect(notices.count == 1, "\(context): \(listed.stderr)")
        #expect(notices.first?.contains("tape record \(song) --recover") == true, "\(context)")
        let recovered = try space.tape("record", song, "--recover")
        #expect(recovered.stderr.contains("recovered take-"), "\(context): \(recovered.stderr)")
        clipID = recovered.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
          !(try space.tape("ls", song).stderr.contains("waits to be recovered")), "\(context)")
      }
      #expect(
        clipID.hasPrefix("c"),
        "\(context): \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
      clipIDs.append(clipID)
      let clip = try #require(try Self.clips(song, space).first { $0["id"] as? String == clipID })
      let seconds = Double(clip["length"] as? Int ?? 0) / 48_000
      // A signal keeps what reached the ring (within two periods of the moment); kill -9 what
      // reached the file, which is written at least once a second.
      let allowed = ending.signal == SIGKILL ? 1.0 : 0.5
      #expect(clip["timelineStart"] as? Int == 96_000, "\(context)")
      #expect(
        seconds >= elapsed - allowed && seconds <= elapsed + 0.2,
        "\(context): \(String(format: "%.3f", seconds)) s kept")
      worst[ending.description] = max(worst[ending.description] ?? 0, elapsed - seconds)
    }
    let project = try #require(
      try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])
    let markers = ((project["markers"] as? [[String: Any]]) ?? []).compactMap {
      $0["id"] as? String
    }
    #expect(Set(markers) == Set(acknowledged), "markers \(markers), acknowledged \(acknowledged)")
    let clips = try Self.clips(song, space).compactMap { $0["id"] as? String }
    #expect(clips.sorted() == clipIDs.sorted())
    try space.tape("verify", song)
    print(
      "record endings: \(endings.count) rounds (page cache \(canDropCaches ? "dropped" : "not droppable here")); most missing: "
        + worst.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.3f", $0.value)) s" }
        .joined(separator: ", "))
  }

  /// Every clip of the project, from `tape ls --json`.
  static func clips(_ song: String, _ space: Workspace) throws -> [[String: Any]] {
    try #require(
      (try parseJSON(space.tape("ls", song, "--json").stdout) as? [String: Any])?["tracks"]
        as? [[String: Any]]
    ).flatMap { ($0["clips"] as? [[String: Any]]) ?? [] }
  }
}
