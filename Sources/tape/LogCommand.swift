import ArgumentParser
import Foundation
import Interchange
import Timeline
import TimelineStore

struct Log: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "log",
    abstract: "Show every version that changed a clip, track, source, marker or effect.",
    discussion: """
      Newest first, on the head's line (the head and its ancestors; --all: every branch, \
      marking the versions off the head's line): the version, its date and label, and each \
      field the version changed, before → after (a track's volume automation is said as \
      'envelope edited'). It reads the changes each version recorded: nothing is checked out \
      or replayed, so it stays fast on a long history. Without an id: the last --limit \
      versions of the head's line (30 by default), each with what it changed.
      Example: tape log song.tape c3
      Example: tape log song.tape t1 --all --json
      """
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @Argument(
    help:
      "A clip (c3), track (t2), source (s1), marker (m1), effect (f1) or send (n1); none: every change."
  )
  var id: String?
  @Flag(help: "Every branch, not only the head's line.") var all = false
  @Option(
    parsing: .unconditional,
    help: "At most this many versions (without an id: 30 unless given).")
  var limit: Int?
  @OptionGroup var times: TimeDisplayOption
  @OptionGroup var json: JSONOption

  func validate() throws {
    if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more") }
    if id == nil && all { throw ValidationError("--all goes with an id: tape log FILE c3 --all") }
  }

  func run() throws {
    try reportingErrors(readerMayStop: true) {
      let store = try retryingReads { try openStore(project.file, access: .read) }
      guard let id else {
        try printRecent(store)
        return
      }
      let subject = try Self.subject(id)
      var log = try retryingReads { try store.log(of: subject, allBranches: all) }
      if log.entries.isEmpty && !all {
        // Never on the head's line: an id of another branch, or of nothing at all.
        let everywhere = try retryingReads { try store.log(of: subject, allBranches: true) }
        guard !everywhere.entries.isEmpty else {
          throw DataError(
            message: "no version of this project has \(subject); 'tape ls' lists the ids")
        }
        if !json.json {
          print(
            "no version on the head's line changed \(subject) (\(everywhere.entries.count) on other branches: add --all)"
          )
          return
        }
      }
      let dropped = limit.map { max(0, log.entries.count - $0) } ?? 0
      if let limit { log = log.newest(limit) }
      let format = LogFormat(
        subject: subject, sampleRate: store.snapshot.project.sampleRate, frames: times.frames)
      if json.json {
        printJSON(format.json(log, all: all, omitted: dropped))
      } else {
        for entry in log.entries { print(format.line(entry, marked: all)) }
        if dropped > 0 {
          print("(\(dropped) older version\(dropped == 1 ? "" : "s") not shown: drop --limit)")
        }
      }
    }
  }

  /// The id on the command line as a subject of the log.
  static func subject(_ text: String) throws -> LogSubject {
    if let subject = LogSubject(parsing: text) { return subject }
    throw UsageError(
      message:
        "'\(text)' is not an id; give a clip (c3), track (t2), source (s1), marker (m1), effect (f1) or send (n1) ('tape ls' lists them)"
    )
  }

  /// Without an id: the last versions of the head's line, newest first, each with what it
  /// changed in the words of `tape diff`.
  private func printRecent(_ store: TimelineStore) throws {
    let recent = try retryingReads { try store.recentChanges(last: limit ?? 30) }
    let rate = store.snapshot.project.sampleRate
    if json.json {
      printJSON(HistoryJSON.recent(recent, sampleRate: rate))
      return
    }
    for line in LogFormat.lines(recent, sampleRate: rate) { print(line) }
    let omitted = recent.earlier
    if omitted > 0 {
      print(
        "(\(omitted) older version\(omitted == 1 ? "" : "s") of the head's line not shown: --limit N shows the last N)"
      )
    }
  }
}
