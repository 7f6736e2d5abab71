import AudioFiles
import Foundation
import Playback

/// What a recording learns while it runs, written into its pending note as soon as it is
/// known, so that `tape record --recover` after a `kill -9` adds the take where a finished
/// recording would have: an overdub's round trip (once the play's and the capture's clocks
/// meet, the note's `timelineStart` is the compensated frame) and the take's gaps (overruns).
/// The punch is in the note from the start.
///
/// Called from the recording's loop on the main thread (never a device thread); a note that
/// cannot be rewritten (a full disk) keeps what it said before.
final class TakeProgress {
  private(set) var note: PendingTake
  let hold: PendingTake.Hold
  private let recorder: Recorder
  private let captureClock: StreamClock
  private let overdub: Overdub?
  private let calibration: LatencyStore.Calibration?
  private let at: Int64
  private var lastLook = ContinuousClock.now

  init(
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
  func update() {
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
  func finished(timelineStart: Int64, roundTrip: Int64?) -> PendingTake {
    var final = note
    final.timelineStart = timelineStart
    final.roundTrip = roundTrip ?? note.roundTrip
    let gaps = recorder.gapFrames
    final.overruns = gaps.isEmpty ? nil : gaps
    return final
  }

  /// Rewrites the note when `changed` says more; a note that cannot be written keeps the
  /// old one (the next look tries again).
  func save(_ changed: PendingTake) {
    guard changed != note else { return }
    do {
      try hold.rewrite(changed)
      note = changed
    } catch {}
  }

  /// The one line a take stopped by a full disk ends with: kept and added, or kept and
  /// waiting for `--recover` (the disk had no room left to add it).
  static func diskFull(
    take: String, frames: Int64, sampleRate: Int, file: String, added: Bool
  ) -> String {
    let seconds = String(format: "%.3f", Double(frames) / Double(sampleRate))
    return added
      ? "warning: the disk filled up: the take stopped after \(seconds) s and was added as it is (\(take)); free some space on that disk before recording again"
      : "the disk filled up: the take stopped after \(seconds) s and is kept in \(take), waiting (there was no room left to add it); free some space on that disk, then run 'tape record \(file) --recover'"
  }
}
