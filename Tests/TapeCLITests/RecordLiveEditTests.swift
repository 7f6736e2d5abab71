import Foundation
import Synchronization
import Testing

/// Edits made from another shell while `tape record --play` runs: heard as `tape play` hears
/// them, and never disturbing the capture.
extension ProcessHeavyTests.RecordTests {
  /// The click clip is moved 0.5 s later while the take is being recorded (its clicks still
  /// 3 s ahead), and 20 gain edits land on a third track beside it. The take, rendered, has
  /// the clicks where the moved clip plays them, within a frame (so the player heard the move
  /// and the take is still aligned); the command counts no overrun, and the take covers the
  /// whole played range.
  @Test func editsFromAnotherShellAreHeardAndNeverDisturbTheCapture() throws {
    let device = try Self.pacedLoop()
    let space = try Workspace()
    let song = try Self.clickProject(space)
    try space.tape("clip", "move", song, "c1", "--to", "3s")
    try space.tape("track", "add", song, "Other")
    // The recorder's capture ports are awaited by one client that stays open until the
    // recorder is done (no jack_lsp while it opens its two clients:
    // ``PacedDevice/watchPorts(_:count:connected:)``).
    let watch = try device.watchPorts(#"^tape\.C\."#, count: 2)
    defer { watch.close() }
    let edited = Flag()
    let watchFailure = Mutex<String?>(nil)
    let editor = Thread {
      // Once the recorder's ports exist (it plays from then on), give it half a second.
      do {
        try watch.wait()
      } catch {
        watchFailure.withLock { $0 = "\(error)" }
        return
      }
      Thread.sleep(forTimeInterval: 0.5)
      guard (try? TapeBinary.run(["clip", "move", song, "c1", "--to", "3.5s"]))?.status == 0
      else { return }
      for edit in 0..<20 {
        _ = try? TapeBinary.run(["track", "set", song, "t3", "--gain", "-\(edit % 7)dB"])
      }
      edited.value.store(true, ordering: .relaxed)
    }
    editor.start()
    let result = try Self.recordThroughLoop(
      ["record", song, "Voice", "--play", "--device", "loop", "--to", "7s"], device: device,
      environment: ["XDG_CONFIG_HOME": space.path("config")])
    #expect(result.status == 0, "\(result.stderr)")
    while !edited.value.load(ordering: .relaxed), editor.isExecuting {
      Thread.sleep(forTimeInterval: 0.05)
    }
    let wasEdited = edited.value.load(ordering: .relaxed)
    #expect(wasEdited, "the edits were made: \(watchFailure.withLock { $0 } ?? "")")
    #expect(result.stderr.contains(", 0 overruns"), "\(result.stderr)")
    let take = try #require(
      try Self.clips(song, space).first { $0["id"] as? String == "c2" }, "\(result.stdout)")
    let seconds = Double(take["length"] as? Int ?? 0) / 48_000
    // It covers the played range, and not much more: the capture runs from before the play
    // starts until the player's buffer (several JACK cycles of 1,024 frames: 7.104 s was seen)
    // has drained.
    #expect(seconds >= 6.95 && seconds <= 7.25, "the take covers the played range: \(seconds) s")
    // The clicks were at 4–5 s when the recording began, and at 4.5–5.5 s after the move.
    let rendered = try Self.renderedVoice(space, song)
    let (lag, each, peak) = Self.misalignment(Array(rendered.dropFirst(168_000)))
    print("overdub with edits from another shell: lag \(lag), each click \(each), peak \(peak)")
    #expect(peak > 0.4, "the loop carried the clicks")
    #expect(abs(lag) <= 1 && each.allSatisfy { abs($0) <= 1 }, "lag \(lag), clicks \(each)")
  }
}
