import ArgumentParser
import Interchange
import Timeline
import TimelineStore

/// `tape marker …`: named times, which any time argument takes as `@NAME`.
struct MarkerCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "marker",
    abstract: "Named times: add, move, rename, remove and list markers (@NAME in any time).",
    discussion: """
      A marker names a time of the timeline; every option that takes a time takes @NAME, \
      with an offset if wanted (@chorus, @chorus+2s, @chorus-500ms). Ripple edits move the \
      markers after them (cut --ripple, clip rm --ripple, insert), as they move clips.
      """,
    subcommands: [Add.self, Move.self, Rename.self, Remove.self, List.self])
}

/// The marker a command names: its id (`m1`) or its name.
func parseMarker(_ text: String, _ project: Project) throws -> Marker.ID {
  if let id = Marker.ID(parsing: text) { return id }
  let name = text.hasPrefix("@") ? String(text.dropFirst()) : text
  if let marker = project.marker(named: name) { return marker.id }
  throw UsageError(message: unknownMarkerName(name, project, given: text))
}

/// The message for text given as a marker's id or name that names none, naming the nearest
/// name (a marker in a time, `@chorus+2s`, is ``Timeline/TimelineError/unknownMarkerName(_:given:nearest:projectHasMarkers:)``).
func unknownMarkerName(_ name: String, _ project: Project, given: String) -> String {
  let nearest = NameSuggestion.nearest(to: name, in: project.markers.map(\.name))
  let what = "'\(given)' is not a marker id (m1) or name"
  if project.markers.isEmpty {
    return "\(what); this project has no markers yet (tape marker add FILE TIME NAME)"
  }
  return what + (nearest.map { "; did you mean '\($0)'?" } ?? "")
    + " ('tape marker ls' lists them)"
}

extension MarkerCommand {
  struct Add: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Add a marker: a name at a time; prints its id (m1).",
      discussion: """
        The name is one line, unique in the project, and not an id's form (m1, c3, 12). The \
        time comes first, or as --at after the name.
        Example: tape marker add song.tape 1:02.5 bridge
        Example: tape marker add song.tape outro --at @chorus+4s
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    // Unrecognized words too: a time typed before the timeline's start (-5s) is a word here,
    // refused as a time, not taken for an option ("missing argument").
    @Argument(
      parsing: .allUnrecognized,
      help: """
        Where: any time (1:02.5), a clip's edge (c3.end) or a marker (@chorus+2s); then the \
        marker's name. With --at, the name alone.
        """)
    var words: [String] = []
    @Option(
      parsing: .unconditional,
      help: "Where, after the name (as the time before it is: 1:02.5, c3.end, @chorus+2s).")
    var at: String?
    @OptionGroup var options: EditOptions

    /// The words, without the `--` that ends the options (unrecognized words keep it).
    var given: [String] {
      guard let end = words.firstIndex(of: "--") else { return words }
      var given = words
      given.remove(at: end)
      return given
    }

    /// The time and the name, in either form.
    var time: String { at ?? given.first ?? "" }
    var name: String { at == nil ? given.dropFirst().first ?? "" : given.first ?? "" }

    func validate() throws {
      // A word like --bogus is an option this command does not have. (A word like -hook was
      // refused before parsing unless it came after '--', RawArguments.dashedValue: here it is
      // a name; -5s is a time, refused as a negative one.)
      let options = words.prefix { $0 != "--" }
      if let option = options.first(where: { $0.hasPrefix("--") && $0.count > 2 }) {
        throw ValidationError("unknown option '\(option)'")
      }
      guard given.count == (at == nil ? 2 : 1) else {
        throw ValidationError(
          at == nil
            ? "give the time and the name (tape marker add FILE 1:02.5 bridge), or the name and --at TIME"
            : "with --at, give the name alone: tape marker add FILE NAME --at TIME")
      }
      try RawArguments.requireText(name, "the marker name")
    }

    var label: String { "Add marker \(name) at \(time)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      try project.addMarker(ids.newMarkerID(), named: name, at: try parsePosition(time, project))
    }
  }

  struct Move: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "move",
      abstract: "Move a marker to another time.",
      discussion: """
        --to takes any time, or a nudge from where the marker is (+1s, -250ms).
        Example: tape marker move song.tape m1 --to +1s
        Example: tape marker move song.tape m1 --to 1:04
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The marker: its id (m1) or name.", completion: ids("m")) var marker: String
    @Option(
      parsing: .unconditional,
      help: "Its new time: any time, a nudge from where it is (+1s, -250ms), or @NAME.")
    var to: String
    @OptionGroup var options: EditOptions

    var label: String { "Move marker \(marker) \(toOrBy(to).0) \(toOrBy(to).1)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try parseMarker(marker, project)
      return try project.moveMarker(
        id,
        to: try parsePosition(to, project, relativeTo: project.marker(id)?.position, option: "--to")
      )
    }
  }

  struct Rename: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "rename",
      abstract: "Rename a marker.",
      discussion: "Example: tape marker rename song.tape m1 refrain"
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The marker: its id (m1) or name.", completion: ids("m")) var marker: String
    @Argument(help: "Its new name.") var name: String
    @OptionGroup var options: EditOptions

    func validate() throws {
      try RawArguments.requireText(name, "the marker name")
    }

    var label: String { "Rename marker \(marker) to \(name)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      try project.renameMarker(try parseMarker(marker, project), to: name)
    }
  }

  struct Remove: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "rm",
      abstract: "Remove markers (undo brings them back).",
      discussion: "Example: tape marker rm song.tape m1",
      aliases: ["remove"]
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The markers: ids (m1 m2) or names.", completion: ids("m"))
    var markers: [String]
    @OptionGroup var options: EditOptions

    func validate() throws {
      guard !markers.isEmpty else { throw ValidationError("name the markers to remove (m1)") }
    }

    var label: String { "Remove marker \(markers.joined(separator: ", "))" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      try project.removeMarkers(try markers.map { try parseMarker($0, project) })
    }
  }

  struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ls",
      abstract: "List the markers in time order: id, time and name.",
      discussion: "Example: tape marker ls song.tape --json"
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @OptionGroup var output: JSONOption
    @OptionGroup var times: TimeDisplayOption

    func run() throws {
      try reportingErrors(readerMayStop: true) {
        let shown = try retryingReads { try openStore(project.file, access: .read).snapshot }
        let markers = shown.project.markers
        if output.json {
          printJSON(.array(markers.map(ProjectJSON.marker)))
          return
        }
        for marker in markers {
          let time = times.show(marker.position.frames, sampleRate: shown.project.sampleRate)
          print(
            "\(ProjectWords.padded(marker.id.description, 4)) \(ProjectWords.padded(time, 10)) \(ProjectWords.escaped(marker.name))"
          )
        }
      }
    }
  }
}
