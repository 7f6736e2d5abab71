import ArgumentParser
import Interchange
import Recording
import Timeline
import TimelineStore

/// `tape take …`: the takes `tape record --loop` keeps of a range, and which one plays.
struct TakeCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "take",
    abstract: "List the takes of a looped recording and choose which one plays.",
    discussion: """
      'tape record FILE TRACK --play --from T --to T --loop' records one take per pass over \
      the range; the last plays (a clip on the track) and the others are kept, each named by \
      its clip's id. 'take use' makes another one play in its place: one version, which undo \
      and redo see. A group follows the clip that plays: moved (or rippled), its takes move \
      with it; removed, its takes go with it. See docs/reference/recording.md.
      """,
    subcommands: [List.self, Use.self])
}

extension TakeCommand {
  struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ls",
      abstract: "List a track's take groups: each range, its takes, the one that plays.",
      discussion: """
        Each take: its clip id (what 'take use' takes), its number in the order recorded, its \
        source, where in the source it starts and its length; * marks the one that plays.
        Example: tape take ls song.tape t2
        Example: tape take ls song.tape t2 --json
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track: its id (t1) or its name.", completion: ids("t")) var track: String
    @OptionGroup var output: JSONOption
    @OptionGroup var times: TimeDisplayOption

    func run() throws {
      try reportingErrors(readerMayStop: true) {
        let shown = try retryingReads { try openStore(project.file, access: .read).snapshot }
        let trackID = try resolveTrack(track, shown.project)
        let groups = shown.project.takeGroups(on: trackID)
        if output.json {
          printJSON(.array(groups.map(ProjectJSON.takeGroup)))
          return
        }
        if groups.isEmpty {
          print(
            "no takes on \(trackID): 'tape record FILE \(trackID) --play --from T --to T --loop' records one per pass"
          )
          return
        }
        let rate = shown.project.sampleRate
        for line in Takes.lines(groups, clock: { times.show($0, sampleRate: rate) }) {
          print(line)
        }
      }
    }
  }

  struct Use: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "use",
      abstract: "Make a take the one that plays in its range; prints its clip id.",
      discussion: """
        The clip that played becomes a kept take of the range and the take chosen plays in its \
        place, on its track: one version (tape undo goes back to the take before).
        Example: tape take use song.tape c12
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The take: its clip id ('tape take ls' lists them).", completion: ids("c"))
    var take: String
    @OptionGroup var options: EditOptions

    var label: String { "Use take \(take)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      try project.choosingTake(try parseClipID(take, project))
    }

    func printed(created: [String]) -> [String] { [take] }

    func unchanged(version: Int64) -> String? {
      "take \(take) plays already; nothing changed (version \(version))"
    }
  }
}
