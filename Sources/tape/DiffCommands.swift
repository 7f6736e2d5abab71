import ArgumentParser
import Foundation
import SafeFiles
import Timeline
import TimelineStore

struct Watch: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Print every move of the project's head as it happens, with what changed.",
    discussion: """
      One line per edit, undo, redo or checkout, from any process, until Ctrl-C (or --count \
      moves): the cause, the versions, the label and the change in words (c3 moved 0:01.000 → \
      0:03.000, t1 → t2; t2 gain -3 dB → -6 dB). Every move is printed, however fast they \
      come: the store journals each one. --json prints one object a line (see the README).
      Example: tape watch song.tape --json | jq .cause
      """)

  @OptionGroup var project: ProjectArgument
  @Option(help: "Stop after this many moves.") var count: Int?
  @OptionGroup var json: JSONOption

  func validate() throws {
    if let count, count < 1 { throw ValidationError("--count must be 1 or more") }
  }

  func run() throws {
    try reportingErrors {
      let store = try openStore(project.file, access: .follow)
      guard store.canFollow else {
        throw DataError(
          message:
            "\(project.file) is read-only and nobody has it open, so it was opened immutably and its moves cannot be followed; watch it as a user who may write its folder"
        )
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
              if json {
                printJSON(words.moveJSON(move, label: label, diff: diff))
              } else {
                print(words.moveLine(move, label: label, diff: diff))
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
      done.wait()
      if let error = failure.error { throw error }
    }
  }
}

/// An error handed from a task to the thread that waits for it.
final class ErrorBox: @unchecked Sendable {
  var error: (any Error)?
}

struct Diff: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Show what differs between two versions, on any branches.",
    discussion: """
      The same words and JSON as 'tape watch': every clip, track and source that differs, with \
      its value in A and in B. Neither version becomes the head.
      Example: tape diff song.tape 12 17 --json
      """)

  @OptionGroup var project: ProjectArgument
  @Argument(help: "The version to compare from.") var from: Int64
  @Argument(help: "The version to compare to.") var to: Int64
  @OptionGroup var json: JSONOption

  func run() throws {
    try reportingErrors {
      let (a, b, diff) = try retryingReads {
        try openStore(project.file, access: .read).diff(from: from, to: to)
      }
      let words = DiffWords(sampleRate: b.project.sampleRate)
      if json.json {
        printJSON(
          .object([
            ("from", .int(a.version)), ("to", .int(b.version)),
            ("changes", .array(words.changesJSON(diff))),
          ]))
      } else {
        let lines = words.lines(diff)
        print(lines.isEmpty ? "v\(from) and v\(to) are the same" : lines.joined(separator: "\n"))
      }
    }
  }
}

/// A diff in words and in JSON: what `watch` and `diff` print.
struct DiffWords {
  let sampleRate: Int

  func time(_ frames: Int64) -> String {
    TimeValue.clock(FrameCount(frames), sampleRate: sampleRate)
  }

  /// `edit v41 → v42 "Move c3": c3 moved 0:01.000 → 0:03.000, t1 → t2`.
  func moveLine(_ move: HeadMove, label: String, diff: ProjectDiff) -> String {
    let versions =
      move.from.map { $0 == move.to ? "v\($0)" : "v\($0) → v\(move.to)" } ?? "v\(move.to)"
    let changes = lines(diff)
    return
      "\(move.cause.rawValue) \(versions) \"\(label)\"\(changes.isEmpty ? "" : ": " + changes.joined(separator: "; "))"
  }

  /// The `watch --json` line: documented in the README; keep stable.
  func moveJSON(_ move: HeadMove, label: String, diff: ProjectDiff) -> JSONValue {
    .object([
      ("sequence", .int(move.sequence)), ("cause", .string(move.cause.rawValue)),
      ("from", move.from.map(JSONValue.int) ?? .null), ("to", .int(move.to)),
      ("label", .string(label)),
      ("date", .string(ISO8601DateFormatter().string(from: move.date))),
      ("changes", .array(changesJSON(diff))),
    ])
  }

  /// One phrase per changed source, track and clip.
  func lines(_ diff: ProjectDiff) -> [String] {
    var lines: [String] = []
    if diff.formatChanged, let before = diff.before, let after = diff.after {
      lines.append(
        "format \(before.sampleRate) Hz \(before.channels) ch → \(after.sampleRate) Hz \(after.channels) ch"
      )
    }
    for change in diff.sources {
      switch (change.before, change.after) {
      case (nil, let new?): lines.append("\(change.id) added (\(new.path))")
      case (let old?, nil): lines.append("\(change.id) removed (\(old.path))")
      case (let old?, let new?): lines.append("\(change.id) relinked \(old.path) → \(new.path)")
      default: break
      }
    }
    for change in diff.tracks { lines.append(trackWords(change)) }
    for change in diff.clips { lines.append(clipWords(change)) }
    return lines
  }

  private func trackWords(_ change: ProjectDiff.TrackChange) -> String {
    let id = change.id
    switch (change.before, change.after) {
    case (nil, let new?): return "\(id) added \"\(new.name)\""
    case (let old?, nil): return "\(id) removed \"\(old.name)\""
    case (let old?, let new?):
      var parts: [String] = []
      if old.name != new.name { parts.append("renamed \"\(old.name)\" → \"\(new.name)\"") }
      if old.gain != new.gain { parts.append("gain \(old.gain) → \(new.gain)") }
      if old.pan != new.pan { parts.append("pan \(formatPan(old.pan)) → \(formatPan(new.pan))") }
      if old.isMuted != new.isMuted { parts.append(new.isMuted ? "muted" : "unmuted") }
      if old.isSolo != new.isSolo { parts.append(new.isSolo ? "soloed" : "unsoloed") }
      if old.index != new.index {
        parts.append("moved from row \(old.index + 1) to \(new.index + 1)")
      }
      return "\(id) " + parts.joined(separator: ", ")
    default:
      return "\(id)"
    }
  }

  private func clipWords(_ change: ProjectDiff.ClipChange) -> String {
    let id = change.id
    switch (change.before, change.after) {
    case (nil, let new?):
      return
        "\(id) added on \(new.track) at \(time(new.clip.timelineStart.frames)) (\(new.clip.source) from \(time(new.clip.sourceRange.start.frames)), \(time(new.clip.length.frames)) long)"
    case (let old?, nil):
      return "\(id) removed from \(old.track) (was at \(time(old.clip.timelineStart.frames)))"
    case (let old?, let new?):
      var parts: [String] = []
      let (a, b) = (old.clip, new.clip)
      if a.timelineStart != b.timelineStart || old.track != new.track {
        var moved = "moved"
        if a.timelineStart != b.timelineStart {
          moved += " \(time(a.timelineStart.frames)) → \(time(b.timelineStart.frames))"
        }
        if old.track != new.track {
          moved += (moved == "moved" ? " " : ", ") + "\(old.track) → \(new.track)"
        }
        parts.append(moved)
      }
      if a.sourceRange != b.sourceRange {
        parts.append(
          "cropped \(time(a.sourceRange.start.frames))–\(time(a.sourceRange.end.frames)) → \(time(b.sourceRange.start.frames))–\(time(b.sourceRange.end.frames)) of \(b.source)"
        )
      }
      if a.source != b.source { parts.append("source \(a.source) → \(b.source)") }
      if a.gain != b.gain { parts.append("gain \(a.gain) → \(b.gain)") }
      if a.fadeIn != b.fadeIn { parts.append("fade-in \(fade(a.fadeIn)) → \(fade(b.fadeIn))") }
      if a.fadeOut != b.fadeOut { parts.append("fade-out \(fade(a.fadeOut)) → \(fade(b.fadeOut))") }
      return "\(id) " + parts.joined(separator: ", ")
    default:
      return "\(id)"
    }
  }

  private func fade(_ fade: Fade) -> String {
    fade.length.frames == 0
      ? "none"
      : "\(TimeValue.seconds(fade.length, sampleRate: sampleRate)) \(fade.curve.displayName)"
  }

  /// Every change with its values before and after, as `ls --json` shows them (a clip's with
  /// its `track`, a track's with its `index` in the display order).
  func changesJSON(_ diff: ProjectDiff) -> [JSONValue] {
    var items: [JSONValue] = []
    for change in diff.sources {
      items.append(
        .object([
          ("kind", .string("source")), ("id", .string(change.id.description)),
          ("words", .string(lines(sourcesOnly(change)).first ?? "")),
          ("before", change.before.map(sourceJSON) ?? .null),
          ("after", change.after.map(sourceJSON) ?? .null),
        ]))
    }
    for change in diff.tracks {
      let settings = { (settings: ProjectDiff.TrackSettings) in
        JSONValue.object([
          ("id", .string(change.id.description)), ("name", .string(settings.name)),
          ("gainDB", .double(settings.gain.decibels)), ("pan", .double(settings.pan)),
          ("muted", .bool(settings.isMuted)), ("solo", .bool(settings.isSolo)),
          ("index", .int(Int64(settings.index))),
        ])
      }
      items.append(
        .object([
          ("kind", .string("track")), ("id", .string(change.id.description)),
          ("words", .string(trackWords(change))),
          ("before", change.before.map(settings) ?? .null),
          ("after", change.after.map(settings) ?? .null),
        ]))
    }
    for change in diff.clips {
      let placed = { (placed: ProjectDiff.PlacedClip) in
        JSONValue.object(clipFields(placed.clip) + [("track", .string(placed.track.description))])
      }
      items.append(
        .object([
          ("kind", .string("clip")), ("id", .string(change.id.description)),
          ("words", .string(clipWords(change))),
          ("before", change.before.map(placed) ?? .null),
          ("after", change.after.map(placed) ?? .null),
        ]))
    }
    return items
  }

  private func sourcesOnly(_ change: ProjectDiff.SourceChange) -> ProjectDiff {
    ProjectDiff(
      from: Project(
        sampleRate: sampleRate, channels: 2, sources: change.before.map { [$0] } ?? []),
      to: Project(sampleRate: sampleRate, channels: 2, sources: change.after.map { [$0] } ?? []))
  }
}
