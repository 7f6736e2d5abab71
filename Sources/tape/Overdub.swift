import AudioFiles
import Foundation
import Playback
import Timeline
import TimelineStore

/// `tape record --play`: the project played as `tape play` plays it (every edit heard, from
/// this shell or another), its device thread logging where the play was heard (a
/// ``StreamClock``), and where the take lands once both have ended.
final class Overdub: @unchecked Sendable {
  let player: LivePlayer
  let clock = StreamClock()
  private let store: TimelineStore
  private let project: Project
  private let version: Int64
  private let range: Range<Int64>
  private let library: AudioLibrary
  private var follower: Task<Void, Never>?

  init(
    store: TimelineStore, file: String, project: Project, range: Range<Int64>,
    request: DeviceRequest, loop: Bool = false
  ) throws {
    try request.validate()
    self.store = store
    self.project = project
    self.range = range
    version = store.snapshot.version
    let library = AudioLibrary(cache: AudioCache(forProject: file, lockingMemory: true))
    self.library = library
    try EffectChecks.beforePlay(project, bypassMissing: false, file: file)
    let effects = PlayerEffects(bypassMissing: false, projectFolder: projectFolder(file))
    player = try LivePlayer(
      LivePlayer.Configuration(
        device: request, sampleRate: project.sampleRate, channels: project.channels,
        range: range, loop: loop),
      compile: { project, version, sequence in
        try effects.compile(
          project, version: version, sequence: sequence, audio: library.audio(for: project))
      },
      load: { audio, chunk in try library.makeResident(audio, chunk) })
    guard player.deviceRate == project.sampleRate else {
      throw UsageError(
        message:
          "--play: the device '\(request.name)' does not play \(project.sampleRate) Hz, the project's rate, and a take is aligned only at one rate; choose another with --output"
      )
    }
    effects.prepare(for: player, project: project)
    player.clock = clock
  }

  /// Starts the play (its first version's audio read first) and follows the store's edits.
  func start() throws {
    try player.start(project, version: version)
    let player = player
    let store = store
    follower = Task.detached {
      for await update in store.updates() where !update.moves.isEmpty {
        player.offer(update.project, version: update.version, cause: update.cause?.rawValue)
      }
    }
  }

  /// Stops the play (fading out) and returns its report.
  func stop() -> LivePlayer.Report {
    player.stop()
    let report = player.wait()
    follower?.cancel()
    return report
  }

  /// The round trip the two clocks give so far (nil while they have not met); the device
  /// threads may still run.
  func roundTrip(capture: StreamClock, capturePeriod: Int) -> RoundTrip? {
    // A loop's passes come laid out end to end (``LivePlayer/clock``).
    RoundTrip.align(
      playback: clock.entries, capture: capture.entries,
      period: min(player.granted.period, capturePeriod), sampleRate: project.sampleRate)
  }

  /// Where the take's frame 0 lands for the round trip `trip`.
  func timelineStart(
    _ trip: RoundTrip, calibration: LatencyStore.Calibration?, at: Int64
  ) -> Int64 {
    let extra = calibration?.extraFrames(atRate: project.sampleRate) ?? 0
    return trip.timelineStart(extraFrames: extra, at: at, from: range.lowerBound)
  }

  /// Where the take lands, and the line that says how it was aligned.
  func landing(
    capture: StreamClock, capturePeriod: Int, calibration: LatencyStore.Calibration?, at: Int64
  ) -> (timelineStart: Int64, said: String, trip: RoundTrip?) {
    let rate = project.sampleRate
    let milliseconds = { (frames: Int64) in
      String(format: "%.2f ms", Double(frames) / Double(rate) * 1_000)
    }
    guard let trip = roundTrip(capture: capture, capturePeriod: capturePeriod) else {
      return (
        at,
        "warning: the play's and the capture's clocks never met; the take is placed at --at as captured, its latency not compensated",
        nil
      )
    }
    let extra = calibration?.extraFrames(atRate: rate) ?? 0
    let start = timelineStart(trip, calibration: calibration, at: at)
    let reported = trip.playbackDelay + trip.captureDelay
    let how =
      if let calibration {
        "calibrated (\(extra) frames measured on \(calibration.measured) beyond the \(reported) the devices report: playback \(trip.playbackDelay) + capture \(trip.captureDelay))"
      } else {
        "reported by the devices (playback \(trip.playbackDelay) + capture \(trip.captureDelay)); not calibrated: 'tape record --calibrate --device NAME' measures what they do not report"
      }
    return (
      start,
      "round trip \(reported + extra) frames (\(milliseconds(reported + extra))), \(how); the take starts at frame \(start) (\(trip.agreeing) of \(trip.pairs) clock readings agree)",
      trip
    )
  }
}
