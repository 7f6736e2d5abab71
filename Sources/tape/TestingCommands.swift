import ArgumentParser
import Foundation
import Timeline
import TimelineStore

/// Commits in a loop for crash testing: small edits, large edits, undo and redo, printing each
/// acknowledged version (`commit 12`, `undo 11`, `redo 12`) once the call has returned.
struct CommitLoop: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "_commit-loop", abstract: "Testing: commit in a loop.", shouldDisplay: false)

  @OptionGroup var project: ProjectArgument
  @Option(help: "Stop after this many operations (default: run until killed).") var count: Int?

  func run() throws {
    try reportingErrors {
      let store = try openStore(project.file)
      if store.snapshot.project.sources.isEmpty {
        try store.commit(label: "Setup") { project, ids in
          let source = Source(
            id: ids.newSourceID(), path: "/crash-test/source.wav", contentHash: "crash",
            sampleRate: 48_000,
            channels: 2, frameCount: FrameCount(48_000 * 600))
          let track = Track(id: ids.newTrackID(), name: "Crash")
          return [.setSource(source), .setTrack(track)]
        }
      }
      var step = 0
      while count.map({ step < $0 }) ?? true {
        step += 1
        let line: String
        if step % 7 == 0, store.snapshot.version > 2 {
          acknowledge("undo \(try store.undo().version)")
          line = "redo \(try store.redo().version)"
        } else if step % 10 == 0 {
          let result = try store.commit(label: "Large \(step)") { project, ids in
            guard let track = project.tracks.first else { return [] }
            if track.clips.count >= 200 { return [.removeClips(track.clips.prefix(100).map(\.id))] }
            return (0..<50).map { index in
              .setClip(
                Clip(
                  id: ids.newClipID(), source: Source.ID(1),
                  timelineStart: FramePosition(Int64(step * 1_000 + index)),
                  sourceRange: FrameRange(
                    start: FramePosition(Int64(index) * 48_000), count: 48_000)),
                track: track.id)
            }
          }
          line = "commit \(result.version)"
        } else {
          let result = try store.commit(label: "Gain \(step)") { project, _ in
            guard let track = project.tracks.first else { return [] }
            return try project.setTrack(track.id, gain: Gain(decibels: -Double(step % 40) / 4))
          }
          line = "commit \(result.version)"
        }
        acknowledge(line)
      }
    }
  }

  /// Unbuffered: a line on stdout means the operation returned, even if we die right after.
  private func acknowledge(_ line: String) {
    writeOut((line + "\n"), to: STDOUT_FILENO)
  }
}

/// Holds the project's write lock for a while, as a long commit in another process would.
struct HoldLock: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "_hold-lock", abstract: "Testing: hold the write lock.", shouldDisplay: false)

  @OptionGroup var project: ProjectArgument
  @Option(help: "Seconds to hold it.") var seconds: Double = 5

  func run() throws {
    try reportingErrors {
      try openStore(project.file).holdWriteLock(for: seconds) {
        writeOut("locked\n", to: STDOUT_FILENO)
      }
    }
  }
}

/// Checks a project file and its history (see `TimelineStore.verify()`); prints JSON and exits
/// 65 when a check fails.
struct Verify: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "_verify", abstract: "Testing: check a project and its history.",
    shouldDisplay: false)

  @OptionGroup var project: ProjectArgument

  func run() throws {
    try reportingErrors {
      let report = try openStore(project.file, access: .read).verify()
      printJSON(
        .object([
          ("integrity", .string(report.integrity)),
          ("foreignKeyViolations", .int(Int64(report.foreignKeyViolations))),
          ("head", .int(report.head)), ("versions", .int(Int64(report.versions))),
          ("undoToFirstVersionWorks", .bool(report.undoToFirstVersionWorks)),
          ("historyBlocks", .int(Int64(report.historyBlocks))),
          ("historyBlocksMatch", .bool(report.historyBlocksMatch)),
        ]))
      if !report.isOK { throw ExitCode(Exit.dataError) }
    }
  }
}
