public import AudioFiles
import Foundation
public import Playback

/// What a recording learns while it runs, written into its pending note as soon as it is
/// known, so that `tape record --recover` after a `kill -9` adds the take where a finished
/// recording would have: an overdub's round trip (once the play's and the capture's clocks
/// meet, the note's `timelineStart` is the compensated frame) and the take's gaps (overruns).
/// The punch is in the note from the start.
///
/// ```swift
/// let progress = TakeProgress(
///   note: note, hold: hold, recorder: recorder, captureClock: clock, overdub: nil,
///   calibration: nil, at: 0)
/// while recorder.isCapturing { progress.update(); usleep(20_000) }
/// ```
///
/// - Note: Called from the recording's loop on the main thread, never a device thread (it
///   writes files); a note that cannot be rewritten (a full disk) keeps what it said before.
public final class TakeProgress {
  /// The note as last written.
  public private(set) var note: PendingTake
  /// The note's file, held while the recording runs.
  public let hold: PendingTake.Hold
  private let recorder: Recorder
  private let captureClock: StreamClock
  private let overdub: Overdub?
  private let calibration: LatencyStore.Calibration?
  private let at: Int64
  private var lastLook = ContinuousClock.now

  /// Progress of the recording `recorder` (its capture clock `captureClock`) whose note
  /// `note` is held by `hold`; with an `overdub`, its `calibration` and the take's place
  /// `at` before alignment.
  public init(
    note: PendingTake, hold: PendingTake.Hold, recorder: Recorder, captureClock: StreamClock,
    overdub: Overdub?, calibration: LatencyStore.Calibration?, at: Int64
  ) {
    self.note = note
    self.hold = hold
    self.recorder = recorder
    self.captureClock = captureClock
    self.overdub = overdub
    self.calibration = calibration
    self.at = at
  }

  /// Looks (at most 4 times a second) at the round trip and the gaps, and rewrites the note
  /// when either changed.
  public func update() {
    guard ContinuousClock.now - lastLook >= .milliseconds(250) else { return }
    lastLook = .now
    var changed = note
    // Looked at again each time (the clocks keep their latest looks): the most common
    // offset of all the readings so far, which the first few (the devices starting) can sway.
    if let overdub,
      let trip = overdub.roundTrip(
        capture: captureClock, capturePeriod: recorder.granted.period),
      trip.agreeing >= 8
    {
      changed.roundTrip = trip.offset
      changed.timelineStart = overdub.timelineStart(trip, calibration: calibration, at: at)
    }
    let gaps = recorder.gapFrames
    if !gaps.isEmpty { changed.overruns = gaps }
    save(changed)
  }

  /// The note as the recording ended: where the take lands, and its gaps.
  public func finished(timelineStart: Int64, roundTrip: Int64?) -> PendingTake {
    var final = note
    final.timelineStart = timelineStart
    final.roundTrip = roundTrip ?? note.roundTrip
    let gaps = recorder.gapFrames
    final.overruns = gaps.isEmpty ? nil : gaps
    return final
  }

  /// Rewrites the note when `changed` says more; a note that cannot be written keeps the
  /// old one (the next look tries again).
  public func save(_ changed: PendingTake) {
    guard changed != note else { return }
    do {
      try hold.rewrite(changed)
      note = changed
    } catch {}
  }
}
