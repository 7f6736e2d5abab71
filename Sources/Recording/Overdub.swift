import AudioFiles
import Foundation
public import Playback
public import Timeline
public import TimelineStore

/// A recording that plays the project while it records (`tape record --play`): the project
/// played as `tape play` plays it (every edit heard, from this process or another), its device
/// thread logging where the play was heard (``/Playback/StreamClock``), and where the take
/// lands once both have ended: the round trip of the two devices compensated (and the extra
/// latency a calibration measured).
///
/// ```swift
/// let overdub = try Overdub(
///   store: store, file: "song.tape", project: store.snapshot.project, range: 0..<Int64.max,
///   request: DeviceRequest(name: "hw:1"))
/// try overdub.start()
/// // … record with a Recorder whose clock is `capture` …
/// _ = overdub.stop()
/// let landing = overdub.landing(
///   capture: capture, capturePeriod: recorder.granted.period, calibration: nil, at: 0)
/// ```
///
/// Rule: the caller checks the project's effects before making one, as a play does (missing
/// and unusable plugins refused); the overdub compiles them as they are. Why: a refusal says
/// the project's own fixes, which are the command line's words.
///
/// - Note: Made, started and stopped on one thread (the recording's loop); the player's
///   device thread only logs to ``clock``.
public final class Overdub: @unchecked Sendable {
  /// The play: its device, its report, whether it still plays.
  public let player: LivePlayer
  /// Where the play was heard, as its device thread logs it.
  public let clock = StreamClock()
  private let store: TimelineStore
  private let project: Project
  private let version: Int64
  private let range: Range<Int64>
  private let library: AudioLibrary
  private var follower: Task<Void, Never>?

  /// A player of `project` (open in `store`, from the file `file`) over `range` (over and over
  /// with `loop`) on the device `request` names, not yet started.
  ///
  /// - Throws: ``RecordingError/deviceRate(device:sampleRate:)`` when the device does not
  ///   play the project's rate; what opening the device or compiling the project throws.
  public init(
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
    let effects = PlayerEffects(bypassMissing: false, projectFolder: .folder(ofProject: file))
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
      throw RecordingError.deviceRate(device: request.name, sampleRate: project.sampleRate)
    }
    effects.prepare(for: player, project: project)
    player.clock = clock
  }

  /// Starts the play (its first version's audio read first) and follows the store's edits.
  public func start() throws {
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
  public func stop() -> LivePlayer.Report {
    player.stop()
    let report = player.wait()
    follower?.cancel()
    return report
  }

  /// The round trip the two clocks give so far (nil while they have not met); the device
  /// threads may still run.
  public func roundTrip(capture: StreamClock, capturePeriod: Int) -> RoundTrip? {
    // A loop's passes come laid out end to end (``LivePlayer/clock``).
    RoundTrip.align(
      playback: clock.entries, capture: capture.entries,
      period: min(player.granted.period, capturePeriod), sampleRate: project.sampleRate)
  }

  /// Where the take's frame 0 lands for the round trip `trip`.
  public func timelineStart(
    _ trip: RoundTrip, calibration: LatencyStore.Calibration?, at: Int64
  ) -> Int64 {
    let extra = calibration?.extraFrames(atRate: project.sampleRate) ?? 0
    return trip.timelineStart(extraFrames: extra, at: at, from: range.lowerBound)
  }

  /// Where the take lands (its frame 0 on the timeline), the line that says how it was
  /// aligned, and the round trip (nil when the two clocks never met: the take lands at `at`
  /// as captured). Called once both device threads have ended.
  public func landing(
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
