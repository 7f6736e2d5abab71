import ArgumentParser
import Foundation
import Interchange
import SafeFiles
import Timeline
import TimelineStore

struct Watch: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "watch",
    abstract: "Print every move of the project's head as it happens, with what changed.",
    discussion: """
      One line per edit, undo, redo or checkout, from any process, until Ctrl-C (or --count \
      moves): the cause, the versions, the label and the change in words (c3 moved 0:01.000 → \
      0:03.000, t1 → t2; t2 gain -3 dB → -6 dB), bounded as undo's line is (clips moved \
      alike are one phrase, c4…c5003 (5,000 clips) moved 0.3s left; past 12 phrases the \
      rest are counted). Every move is printed, however fast they \
      come: the store journals each one. --json prints one object a line (see \
      docs/reference/json.md), with every change.
      Example: tape watch song.tape --json | jq .cause
      """)

  @OptionGroup var project: ProjectArgument
  @Option(parsing: .unconditional, help: "Stop after this many moves.") var count: Int?
  @OptionGroup var json: JSONOption

  func validate() throws {
    if let count, count < 1 { throw ValidationError("--count must be 1 or more") }
  }

  func run() throws {
    try reportingErrors {
      let store = try openStoreToFollow(project.file, verb: "watch")
      guard let identity = FileIdentity(path: project.file) else {
        throw StoreError.notFound(path: project.file)
      }
      let words = DiffWords(sampleRate: store.snapshot.project.sampleRate)
      let done = DispatchSemaphore(value: 0)
      let failure = ErrorBox()
      let count = count
      let json = json.json
      Task.detached {
        var printed = 0
        do {
          for await update in store.updates() where !update.moves.isEmpty {
            for move in update.moves {
              let diff: ProjectDiff
              if let from = move.from, from != move.to {
                diff = try store.diff(from: from, to: move.to).diff
              } else {
                // Folded into the head version (a drag): only this process saw the before.
                diff = update.diff
              }
              let label = try store.entry(move.to)?.label ?? ""
              let fromLabel = try move.from.flatMap { try store.entry($0)?.label }
              if json {
                printJSON(words.moveJSON(move, label: label, fromLabel: fromLabel, diff: diff))
              } else {
                print(words.moveLine(move, label: label, fromLabel: fromLabel, diff: diff))
              }
              try StandardOutput.flush()
              printed += 1
              if let count, printed >= count {
                done.signal()
                return
              }
            }
          }
        } catch {
          failure.error = error
        }
        done.signal()
      }
      // Meanwhile: the project deleted or replaced (nothing more will ever move), or the
      // reader of our output gone (`tape watch … | head -1`: done, quietly).
      while done.wait(timeout: .now() + .milliseconds(200)) == .timedOut {
        guard let now = FileIdentity(path: project.file), now.isSameFile(as: identity) else {
          // The moves journaled before it went are still printed (the open connection reads
          // the deleted file): catch up, and give the printer a moment.
          try? store.refresh()
          _ = done.wait(timeout: .now() + .milliseconds(300))
          throw MissingInput(
            message:
              "\(project.file) was deleted or replaced while it was watched; watch the new one")
        }
        if Self.readerIsGone() { return }
      }
      if let error = failure.error {
        if let output = error as? OutputFailure, output.code == EPIPE { return }
        throw error
      }
    }
  }
}

extension Watch {
  /// Whether standard output is a pipe whose reader closed it.
  static func readerIsGone() -> Bool {
    var request = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
    return poll(&request, 1, 0) > 0 && request.revents & Int16(POLLERR) != 0
  }
}

/// An error handed from a task to the thread that waits for it.
final class ErrorBox: @unchecked Sendable {
  var error: (any Error)?
}

struct Diff: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "diff",
    abstract: "Show what differs between two versions, on any branches.",
    discussion: """
      The same words and JSON as 'tape watch': every clip, track and source that differs, with \
      its value in A and in B, a phrase a line (clips moved alike are one phrase, past 12 \
      phrases the rest are counted; --json lists every change). Neither version becomes the \
      head. A version is a number, a tag's name, HEAD or HEAD~N (N steps back from the head, \
      as git names them); with one version it is compared with the head, with none the head \
      with the version before it (HEAD~1).
      Example: tape diff song.tape 12 17 --json
      Example: tape diff song.tape HEAD~3
      """)

  @OptionGroup var project: ProjectArgument
  @Argument(
    help: "The version to compare from (a number, a tag's name, HEAD~N; default HEAD~1).",
    completion: ids("v"))
  var from: String?
  @Argument(
    help: "The version to compare to (default HEAD, the head).", completion: ids("v"))
  var to: String?
  @OptionGroup var json: JSONOption

  func run() throws {
    try reportingErrors(readerMayStop: true) {
      let (a, b, diff) = try retryingReads {
        let store = try openStore(project.file, access: .read)
        return try store.diff(
          from: store.resolveVersion(from ?? "HEAD~1"),
          to: store.resolveVersion(to ?? "HEAD"))
      }
      let words = DiffWords(sampleRate: b.project.sampleRate)
      if json.json {
        printJSON(
          .object([
            ("from", .integer(a.version)), ("to", .integer(b.version)),
            ("changes", .array(words.changesJSON(diff))),
          ]))
      } else {
        // Bounded, as undo's line: a ripple edit's moved clips are one phrase (`--json` lists
        // each).
        let lines = words.boundedLines(diff)
        print(
          lines.isEmpty
            ? "v\(a.version) and v\(b.version) are the same" : lines.joined(separator: "\n"))
      }
    }
  }
}

extension DiffWords {
  /// `edit v41 → v42 "Move c3": c3 moved 0:01.000 → 0:03.000, t1 → t2`; an undo names the
  /// version it undid: `undo v42 → v41 (undid "Move c3"): c3 moved 0:03.000 → 0:01.000`.
  func moveLine(
    _ move: HeadMove, label: String, fromLabel: String?, diff: ProjectDiff
  ) -> String {
    let versions =
      move.from.map { $0 == move.to ? "v\($0)" : "v\($0) → v\(move.to)" } ?? "v\(move.to)"
    let named =
      move.cause == .undo && fromLabel != nil
      ? "(undid \(quoted(fromLabel ?? "")))" : quoted(label)
    let changes = boundedLines(diff)
    return
      "\(move.cause.rawValue) \(versions) \(named)\(changes.isEmpty ? "" : ": " + changes.joined(separator: "; "))"
  }

  /// The `watch --json` line: documented in docs/reference/json.md; keep stable.
  func moveJSON(
    _ move: HeadMove, label: String, fromLabel: String?, diff: ProjectDiff
  ) -> JSON {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return .object([
      ("sequence", .integer(move.sequence)), ("cause", .string(move.cause.rawValue)),
      ("from", move.from.map(JSON.integer) ?? .null), ("to", .integer(move.to)),
      ("label", .string(label)), ("fromLabel", fromLabel.map(JSON.string) ?? .null),
      ("date", .string(formatter.string(from: move.date))),
      ("changes", .array(changesJSON(diff))),
    ])
  }
}
