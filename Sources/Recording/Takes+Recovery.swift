public import AudioFiles
import Foundation
import Timeline
public import TimelineStore

extension Takes {
  /// Adds the takes recorders left unfinished (killed, a power cut) to the project `file` open
  /// in `store`, each where its note says it lands, all in one version labelled `label` (by
  /// default `Recover take-….wav`, or `Recover 3 takes`); returns what was added, or nil when
  /// no take was left to add.
  ///
  /// Each of `waiting` (notes no recorder holds, from ``/AudioFiles/PendingTake/all(in:)``):
  /// a take the project already has (its recorder died between its commit and removing its
  /// note) has its note removed; a take never written, or that holds no audio, is removed with
  /// its note; any other has its header repaired to all the frames written (at most the last
  /// half second before the end is lost) and is added. Then each note is removed.
  ///
  /// `say` is called with a line for each take, in order, before anything is added:
  /// `recovered take-….wav: 4.000 s, to t2 at 0:01.000 (its header said 3.500 s: …)`, `take-….wav
  /// was already added`.
  ///
  /// ```swift
  /// let waiting = try PendingTake.all(in: PendingTake.folder(forProject: "song.tape"))
  ///   .filter { !$0.recording }
  /// let added = try Takes.recover(waiting, to: store, file: "song.tape") { print($0) }
  /// ```
  ///
  /// Rule: a take the project's sources already hold is never added again. Why: a recorder
  /// killed between its commit and removing its note leaves both. What if you add it anyway:
  /// the recording is in the project twice.
  ///
  /// - Throws: what repairing a take throws (``/AudioFiles/AudioFileError``), before anything
  ///   is said or added; then what ``add(_:to:file:label:)`` throws.
  public static func recover(
    _ waiting: [PendingTake.Found], to store: TimelineStore, file: String, label: String? = nil,
    say: (String) -> Void
  ) throws -> Added? {
    let rate = store.snapshot.project.sampleRate
    var takes: [(note: PendingTake, path: String)] = []
    var lines: [String] = []
    for entry in waiting {
      let stored = RawPath(entry.takePath).absolute.stored(inProject: file)
      if store.snapshot.project.sources.contains(where: { $0.path == stored }) {
        unlink(entry.notePath)
        lines.append("\(entry.note.take) was already added")
        continue
      }
      guard FileManager.default.fileExists(atPath: entry.takePath) else {
        unlink(entry.notePath)
        lines.append("\(entry.note.take) was never written (the recorder died before it began)")
        continue
      }
      let repaired = try TakeFile.repair(entry.takePath)
      guard repaired.frames > 0 else {
        unlink(entry.takePath)
        unlink(entry.notePath)
        lines.append("\(entry.note.take) held no audio; removed")
        continue
      }
      let seconds = { (frames: Int64) in
        String(format: "%.3f", Double(frames) / Double(entry.note.sampleRate))
      }
      let how = [
        entry.note.roundTrip != nil
          ? "aligned by the round trip measured while it recorded" : nil,
        entry.note.punch != nil ? "only its punch kept" : nil,
        entry.note.overruns.map { "\($0.count) overruns marked" },
      ].compactMap { $0 }.map { "; \($0)" }.joined()
      lines.append(
        "recovered \(entry.note.take): \(seconds(repaired.frames)) s, to t\(entry.note.track) at \(TimeValue.clock(FrameCount(entry.note.timelineStart), sampleRate: rate))\(how) (its header said \(seconds(repaired.headerFrames)) s: \(seconds(repaired.frames - repaired.headerFrames)) s more were found written after it; what the recorder had captured but not yet written when it died, at most the last half second, is lost)"
      )
      takes.append((entry.note, entry.takePath))
    }
    for line in lines { say(line) }
    guard !takes.isEmpty else { return nil }
    let added = try add(
      takes, to: store, file: file,
      label: label
        ?? (takes.count == 1 ? "Recover \(takes[0].note.take)" : "Recover \(takes.count) takes"))
    for (_, path) in takes { unlink(path + ".pending") }
    return added
  }

  /// The line a command on the project `file` says when takes wait to be recovered (a
  /// recording that did not finish): `a take waits to be recovered (…); 'tape record FILE
  /// --recover' adds it`; nil when none waits, or when the recordings folder cannot be read
  /// (that folder is `tape record`'s to refuse, not every command's).
  public static func waitingNotice(forProject file: String) -> String? {
    let folder = PendingTake.folder(forProject: file)
    let waiting = ((try? PendingTake.all(in: folder)) ?? []).filter { !$0.recording }.count
    guard waiting > 0 else { return nil }
    return
      "\(waiting == 1 ? "a take waits" : "\(waiting) takes wait") to be recovered (a recording that did not finish); 'tape record \(file) --recover' adds \(waiting == 1 ? "it" : "them")"
  }

  /// The one line a take stopped by a full disk ends with: kept and `added`, or kept and
  /// waiting for `tape record FILE --recover` (the disk had no room left to add it). `take` is
  /// the take's path as shown, `frames` what it holds at `sampleRate`.
  public static func diskFullLine(
    take: String, frames: Int64, sampleRate: Int, file: String, added: Bool
  ) -> String {
    let seconds = String(format: "%.3f", Double(frames) / Double(sampleRate))
    return added
      ? "warning: the disk filled up: the take stopped after \(seconds) s and was added as it is (\(take)); free some space on that disk before recording again"
      : "the disk filled up: the take stopped after \(seconds) s and is kept in \(take), waiting (there was no room left to add it); free some space on that disk, then run 'tape record \(file) --recover'"
  }

  /// A peak level in dBFS with one decimal (`-12.3 dBFS`), `-inf dBFS` for silence.
  public static func decibels(_ peak: Float) -> String {
    guard peak > 0 else { return "-inf dBFS" }
    return String(format: "%.1f dBFS", 20 * log10(Double(peak)))
  }
}

extension Takes.Gap {
  /// The gap in words, times at `sampleRate`: `marked overrun1 at 0:01.000`, `take 2 of
  /// take-….wav has a gap at 0:03.000`.
  public func said(sampleRate: Int) -> String {
    switch self {
    case .marked(let name, let position):
      "marked \(name) at \(TimeValue.clock(FrameCount(position), sampleRate: sampleRate))"
    case .inUnplayedPass(let take, let pass, let position):
      "take \(pass) of \(take) has a gap at \(TimeValue.clock(FrameCount(position), sampleRate: sampleRate))"
    }
  }
}
