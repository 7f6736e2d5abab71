import ArgumentParser
import Foundation
import Interchange
import Timeline
import TimelineStore

/// `tape copy`: a stretch of time kept in the project under a name; also lists and deletes
/// them. Not an edit: no version, nothing to undo.
/// `tape copy`: keeps a range under a name (its default, ``CopyRange``); `ls` lists the
/// clipboards and `rm` deletes one.
struct Copy: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "copy",
    abstract: "Keep what plays in a stretch of time under a name, to paste it elsewhere.",
    discussion: """
      Every clip that plays in [--from, --to) on those tracks (all by default) is kept cut to \
      the range, with its gain and the fades that lie in it, and each track's volume envelope, \
      pan lane and sends' envelopes over the range: 'tape paste' then plays exactly what the range played. A fade outside \
      the range is dropped (the copy starts or ends as the range does); a fade the range cuts \
      through keeps the part of its curve inside it, every frame at the gain it had. Track gain, \
      pan and effects are not copied: they are the settings of the track pasted onto.
      The clipboard is kept in the project file, not in its history: copying makes no \
      version and undo never removes one. A name copied again is replaced (a note says so). \
      --list (or 'tape copy ls FILE') shows the clipboards (--json: {"clipboards": [...]}, \
      times in frames); --delete NAME (or 'tape copy rm FILE NAME') removes one. Names are \
      letters, digits, '-', '_' and '.'.
      Example: tape copy song.tape --from 10s --to 20s --as verse
      Example: tape copy song.tape --from c3.start --to +4s --tracks t3 --as hook
      Example: tape copy song.tape --list
      """,
    subcommands: [CopyRange.self, List.self, Remove.self], defaultSubcommand: CopyRange.self)

  struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ls",
      abstract: "List the clipboards (as 'tape copy FILE --list').",
      discussion: "Example: tape copy ls song.tape --json")

    @OptionGroup var project: ProjectArgument
    @OptionGroup var times: TimeDisplayOption
    @OptionGroup var output: JSONOption

    func run() throws {
      try CopyRange.list(project.file, frames: times.frames, json: output.json)
    }
  }

  struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "rm",
      abstract: "Delete a clipboard (as 'tape copy FILE --delete NAME').",
      discussion: "Example: tape copy rm song.tape verse",
      aliases: ["remove"])

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clipboard's name.") var name: String

    func run() throws {
      try CopyRange.remove(name, from: project.file)
    }
  }
}

struct CopyRange: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "range",
    abstract:
      "Keep what plays in a stretch of time under a name (tape copy FILE --from --to --as).",
    discussion: """
      The default of 'tape copy' ('tape copy FILE --from TIME --to TIME --as NAME'); see \
      'tape copy --help'.
      Example: tape copy range song.tape --from 10s --to 20s --as verse
      """
  )

  @OptionGroup var project: ProjectArgument
  @Option(parsing: .unconditional, help: "Where the range starts on the timeline.")
  var from: String?
  @Option(parsing: .unconditional, help: "Where it ends (exclusive).") var to: String?
  @OptionGroup var choice: TrackChoice
  @Option(
    name: .customLong("as"),
    help: ArgumentHelp("The clipboard's name (replaced if it exists).", valueName: "name"))
  var name: String?
  @Flag(help: "List the clipboards.") var list = false
  @Option(help: ArgumentHelp("Delete the clipboard with this name.", valueName: "name"))
  var delete: String?
  @OptionGroup var times: TimeDisplayOption
  @OptionGroup var output: JSONOption

  func validate() throws {
    let copying = from != nil || to != nil || name != nil || choice.tracks != nil || choice.all
    if list && delete != nil { throw ValidationError("give --list or --delete, not both") }
    if (list || delete != nil) && copying {
      throw ValidationError(
        "\(list ? "--list" : "--delete") takes no range; copy with --from, --to and --as alone")
    }
    if !list && delete == nil {
      guard from != nil, to != nil else {
        throw ValidationError("give the range to copy: --from TIME --to TIME --as NAME")
      }
      guard name != nil else { throw ValidationError("name the clipboard: --as NAME") }
    }
  }

  /// Lists the clipboards of the project `file` (`--list`, `copy ls`).
  static func list(_ file: String, frames: Bool, json: Bool) throws {
    try reportingErrors(readerMayStop: true) {
      let store = try retryingReads { try openStore(file, access: .read) }
      let saved = try store.clipboards()
      let rate = store.snapshot.project.sampleRate
      if json {
        printJSON(.object([("clipboards", .array(saved.map(clipboardJSON)))]))
      } else {
        for entry in saved { print(clipboardLine(entry, sampleRate: rate, frames: frames)) }
      }
    }
  }

  /// Deletes the clipboard `name` of the project `file` (`--delete`, `copy rm`).
  static func remove(_ name: String, from file: String) throws {
    try reportingErrors {
      let store = try openStore(file)
      guard try store.removeClipboard(named: name) else {
        throw unknownClipboard(name, in: store, pasting: false)
      }
    }
  }

  func run() throws {
    if list { return try Self.list(project.file, frames: times.frames, json: output.json) }
    if let delete { return try Self.remove(delete, from: project.file) }
    try reportingErrors {
      let file = project.file
      let store = try openStore(file)
      guard let from, let to, let name else { return }
      let current = store.snapshot.project
      let start = try parsePosition(from, current, option: "--from")
      let end = try parsePosition(to, current, relativeTo: start, option: "--to")
      guard end > start else {
        throw UsageError(message: "--to \(to) must come after --from \(from)")
      }
      let clipboard = try current.copyRange(
        FrameRange(start: start, end: end), tracks: try choice.chosen(current), name: name)
      let replaced = try store.saveClipboard(clipboard)
      let seconds = { (n: FrameCount) in TimeValue.seconds(n, sampleRate: current.sampleRate) }
      if replaced { writeOut("note: clipboard \(name) replaced\n") }
      if clipboard.pieces.isEmpty {
        writeOut(
          "note: no clip plays in that range on those tracks; \(name) holds \(seconds(clipboard.length)) of silence\n"
        )
      }
      guard let saved = try store.clipboard(named: name) else { return }
      if output.json {
        printJSON(clipboardJSON(saved))
      } else {
        print(Self.clipboardLine(saved, sampleRate: current.sampleRate, frames: times.frames))
      }
    }
  }

  /// One clipboard for people: name, length, clips, tracks, where it was copied from and at
  /// which version, separated by tabs.
  static func clipboardLine(_ saved: SavedClipboard, sampleRate: Int, frames: Bool) -> String {
    let board = saved.clipboard
    let show = { (count: Int64) in
      TimeDisplayOption.show(count, sampleRate: sampleRate, frames: frames)
    }
    let count = board.pieces.count
    return [
      board.name, show(board.length.frames), "\(count) clip\(count == 1 ? "" : "s")",
      board.tracks.map(\.id.description).joined(separator: ","),
      "\(show(board.range.start.frames))–\(show(board.range.end.frames))",
      "version \(saved.version)",
    ].joined(separator: "\t")
  }
}

/// A clipboard as `copy --json` and `copy --list --json` show it, times in frames.
func clipboardJSON(_ saved: SavedClipboard) -> JSON {
  let board = saved.clipboard
  let fade = { (fade: Fade) in
    JSON.object([
      ("length", .integer(fade.length.frames)), ("curve", .string(fade.curve.rawValue)),
      ("silentCut", .integer(fade.silentCut.frames)), ("fullCut", .integer(fade.fullCut.frames)),
    ])
  }
  return .object([
    ("name", .string(board.name)), ("from", .integer(board.range.start.frames)),
    ("to", .integer(board.range.end.frames)), ("length", .integer(board.length.frames)),
    ("version", .integer(saved.version)),
    (
      "tracks",
      .array(
        board.tracks.map {
          .object([
            ("id", .string($0.id.description)), ("envelope", ProjectJSON.envelope($0.envelope)),
          ])
        })
    ),
    (
      "clips",
      .array(
        board.pieces.map { piece in
          .object([
            ("copiedFrom", .string(piece.copiedFrom.description)),
            ("track", .string(piece.track.description)),
            ("source", .string(piece.source.description)),
            ("offset", .integer(piece.offset.frames)),
            ("sourceStart", .integer(piece.sourceRange.start.frames)),
            ("length", .integer(piece.sourceRange.count.frames)),
            ("gainDB", .number(piece.gain.decibels)), ("fadeIn", fade(piece.fadeIn)),
            ("fadeOut", fade(piece.fadeOut)),
          ])
        })
    ),
  ])
}

/// No clipboard `name` in the project: what it has, and, for a paste, that a clipboard stays in
/// its project.
func unknownClipboard(
  _ name: String, in store: TimelineStore, pasting: Bool = true
) -> TimelineError {
  let known = ((try? store.clipboards()) ?? []).map(\.clipboard.name)
  return .unknownClipboard(name, known: known, pasting: pasting)
}

struct Paste: EditingCommand {
  static let configuration = CommandConfiguration(
    commandName: "paste",
    abstract: "Place a copied range at a time: new clips, one undo step; prints their ids.",
    discussion: """
      Each clip of the clipboard (see 'tape copy') becomes a new clip at --at plus its offset \
      in the range, with the copied crop, gain and fades, on the track it was copied from, or \
      on --tracks (the copied tracks mapped in order onto as many tracks, each named once). \
      The new ids are printed in timeline order. Each track's envelope, pan lane and sends' \
      envelopes over the pasted range become the copied ones, so the paste plays exactly what the range played. Without \
      --ripple the clips play over whatever is there (clips on a track add up); with it, a \
      gap of the clipboard's length opens at --at on those tracks first, as 'tape insert' \
      opens one (a clip across --at is split; its right part's new id is not printed). With \
      --overwrite the pasted clips replace what lies under each of them on its track, as \
      Pro Tools' and Reaper's default edit modes do: the clips there are trimmed, split (the \
      right part's new id is not printed) or removed. A clipboard whose tracks (without --tracks) or sources are no longer in the project is \
      refused. Clipboards belong to the project they were copied in. --snap moves --at \
      first, as for 'tape cut' (clips: to the nearest clip edge within 100 ms).
      Example: tape paste song.tape verse --at 1:00 --ripple
      Example: tape paste song.tape verse --at 30s --tracks t2,t1,t3
      Example: tape paste song.tape verse --at 2:00 --overwrite
      """
  ).parsedAlone()

  @OptionGroup var project: ProjectArgument
  @Argument(help: "The clipboard's name ('tape copy FILE --list' lists them).") var name: String
  @Option(parsing: .unconditional, help: "Where the range's start lands on the timeline.")
  var at: String
  @Option(
    name: [.customLong("tracks"), .customLong("track")],
    help:
      "Paste onto these tracks instead (ids or names), comma-separated, one per copied track, in order.",
    completion: ids("t"))
  var tracks: String?
  @Flag(help: "Open a gap of the clipboard's length first, moving later clips right.")
  var ripple = false
  @Flag(help: "Replace what lies under the pasted clips on their tracks.")
  var overwrite = false
  @OptionGroup var snapping: SnapOption
  @OptionGroup var options: EditOptions

  /// The clipboard, read by ``load(from:)``.
  var clipboard: Clipboard?

  enum CodingKeys: CodingKey {
    case project, name, at, tracks, ripple, overwrite, snapping, options
  }

  func validate() throws {
    if ripple && overwrite {
      throw ValidationError(
        "--ripple opens a gap for the paste and --overwrite replaces what is there; choose one")
    }
  }

  var label: String {
    "Paste \(name) at \(at)\(snapping.shown.map { " snapped to \($0)" } ?? "")\(tracks.map { " on \($0)" } ?? "")\(ripple ? " with ripple" : "")\(overwrite ? ", overwriting" : "")"
  }

  static let loadsFromStore = true

  mutating func load(from store: TimelineStore) throws {
    guard let saved = try store.clipboard(named: name) else {
      throw unknownClipboard(name, in: store)
    }
    clipboard = saved.clipboard
  }

  mutating func takeLoaded(from other: any EditingCommand) {
    if let other = other as? Paste, other.name == name { clipboard = other.clipboard }
  }

  func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
    guard let clipboard else { throw unknownClipboard(name, known: []) }
    let position = try snapping.apply(
      try parsePosition(at, project, option: "--at"), project, file: self.project.file)
    return try project.paste(
      clipboard, at: position, tracks: try tracks.map { try parseTrackIDs($0, project) },
      ripple: ripple, overwrite: overwrite
    ) { ids.newClipID() }
  }

  /// The pasted clips (their ids are taken first, in timeline order), not the right parts of
  /// clips the gap split.
  func printed(created: [String]) -> [String] {
    Array(created.prefix(clipboard?.pieces.count ?? created.count))
  }
}

/// ``TimelineError/unknownClipboard(_:known:pasting:)``, for a command that has no store at hand.
func unknownClipboard(_ name: String, known: [String]) -> TimelineError {
  .unknownClipboard(name, known: known)
}
