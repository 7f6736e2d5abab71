import ArgumentParser
import Interchange
import Timeline
import TimelineStore

struct TrackCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "track",
    abstract: "Add, change, reorder, duplicate and remove tracks.",
    subcommands: [
      Add.self, Set.self, EnvelopeCommand.self, Move.self, Duplicate.self, Remove.self,
      List.self,
    ])

  struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ls",
      abstract: "List the tracks in order: id, name, gain, pan, mute and solo, clips, effects.",
      discussion: """
        --json prints each track as 'tape ls --json' does, its clips counted ("clips": N) \
        instead of listed.
        Example: tape track ls song.tape
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Option(
      help: ArgumentHelp(
        "List the tracks of this version (a number, a tag's name, HEAD~N) instead of the head's.",
        valueName: "version"))
    var version: VersionReference?
    @OptionGroup var output: JSONOption

    func run() throws {
      try reportingErrors(readerMayStop: true) {
        let tracks = try retryingReads {
          let store = try openStore(project.file, access: .read)
          guard let version else { return store.snapshot.project.tracks }
          return try store.project(at: version.resolve(in: store)).tracks
        }
        if output.json {
          printJSON(
            .array(
              tracks.map { track in
                .object(
                  ProjectJSON.trackFields(track) + [
                    ("clips", .integer(Int64(track.clips.count))),
                    ("effects", .array(track.effects.map(ProjectJSON.effect))),
                  ])
              }))
          return
        }
        // As `tape ls` heads each track, with its clips and effects counted.
        for track in tracks {
          let flags = [track.isMuted ? "muted" : nil, track.isSolo ? "solo" : nil].compactMap { $0 }
          let clips = "\(track.clips.count) clip\(track.clips.count == 1 ? "" : "s")"
          let effects = track.effects.isEmpty ? "" : ", \(track.effects.count) fx"
          print(
            "\(track.id) \(ProjectWords.escaped(track.name))  gain \(track.gain)  pan \(ProjectWords.pan(track.pan))  \(clips)\(effects)\(flags.isEmpty ? "" : "  [" + flags.joined(separator: ", ") + "]")"
          )
        }
      }
    }
  }

  struct Add: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Add a track after the existing ones; prints its id.",
      discussion: "Example: tape track add song.tape Drums --gain -3dB --pan -0.2"
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track's name.") var name: String
    @Option(parsing: .unconditional, help: "Gain in dB (-3, -3dB, +2.5dB).") var gain: String?
    @Option(parsing: .unconditional, help: "Pan from -1 (left) to 1 (right).") var pan: String?
    @OptionGroup var options: EditOptions

    func validate() throws { try RawArguments.requireText(name, "the track name") }

    var label: String { "Add track \(name)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let gain = try gain.map(Gain.init(parsing:)) ?? .unity
      let pan = try pan.map(Track.pan(parsing:)) ?? 0
      return try project.addTrack(Track(id: ids.newTrackID(), name: name, gain: gain, pan: pan))
    }
  }

  enum MuteFlag: EnumerableFlag {
    case mute, unmute
  }

  enum SoloFlag: EnumerableFlag {
    case solo, unsolo
  }

  struct Set: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "set",
      abstract: "Change a track's name, gain, pan, mute, solo or output.",
      discussion: """
        --output routes the track's sound into another track (a bus: mixed with that track's \
        clips before its gain, pan, envelope and effects) or back to the master; a route that \
        would feed a track into itself is refused, naming the loop.
        Example: tape track set song.tape t2 --gain -6 --pan 0.5 --solo
        Example: tape track set song.tape t1 --output t2
        Example: tape track set song.tape t1 --output master
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track: its id (t1) or its name.", completion: ids("t")) var track: String
    @Option(help: "A new name.") var name: String?
    @Option(parsing: .unconditional, help: "Gain in dB (-3, -3dB, +2.5dB).") var gain: String?
    @Option(parsing: .unconditional, help: "Pan from -1 (left) to 1 (right).") var pan: String?
    @Flag(help: "Silence the track, or let it sound again.") var mute: MuteFlag?
    @Flag(
      help:
        "Solo the track (only soloed tracks sound, with the buses they feed and the tracks that feed them), or stop soloing it."
    ) var solo: SoloFlag?
    @Option(
      help: "Where its sound goes: another track (its id or name; a bus) or master.",
      completion: ids("t"))
    var output: String?
    @OptionGroup var options: EditOptions

    func validate() throws {
      if let name { try RawArguments.requireText(name, "the track name") }
      guard name != nil || gain != nil || pan != nil || mute != nil || solo != nil || output != nil
      else {
        throw ValidationError(
          "say what to change: --name, --gain, --pan, --mute/--unmute, --solo/--unsolo or --output")
      }
    }

    var label: String {
      historyLabel(
        "Set track \(track)",
        [
          ("name", name), ("gain", gain), ("pan", pan),
          ("", mute.map { $0 == .mute ? "muted" : "unmuted" }),
          ("", solo.map { $0 == .solo ? "solo" : "not solo" }), ("output", output),
        ])
    }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try resolveTrack(track, project)
      let gain = try gain.map(Gain.init(parsing:))
      let pan = try pan.map(Track.pan(parsing:))
      let routed: Track.ID?? = try output.map { text in
        text == "master" ? nil : try resolveTrack(text, project)
      }
      return try project.setTrack(
        id, name: name, gain: gain, pan: pan, muted: mute.map { $0 == .mute },
        solo: solo.map { $0 == .solo }, output: routed)
    }
  }

  struct EnvelopeCommand: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "envelope",
      abstract: "Shape a track's volume over time (automation), or clear it.",
      discussion: """
        --set takes TIME:GAIN breakpoints separated by commas, in time order. The gain runs \
        linearly in dB from each point to the next, holds the first point's gain before it \
        and the last's after it; a segment with -inf (silence) at either end runs linearly in \
        amplitude. It multiplies the track's gain, sample by sample, exact at every point.
        --shape changes how a segment runs: db (as above, the default), linear (linearly in \
        amplitude) or hold (the point's gain until the next point, then a step); one shape \
        for every segment, or one per segment, comma-separated.
        --add adds points (replacing one at the same time), --remove removes the points at \
        the times given, --move TIME --to TIME moves one (it keeps its gain and shape, and \
        cannot pass another point); --clear removes the whole envelope.
        Example: tape track envelope song.tape t1 --set 0s:0dB,10s:-6dB,12s:-inf
        Example: tape track envelope song.tape t1 --set 0s:0dB,4s:-inf,6s:0dB --shape hold
        Example: tape track envelope song.tape t1 --add 5s:-6dB
        Example: tape track envelope song.tape t1 --move 10s --to 11s
        Example: tape track envelope song.tape t1 --remove 12s
        Example: tape track envelope song.tape t1 --clear
        --pan automates the track's pan instead, with the same forms: TIME:PAN points, each a         pan position from -1 (left) to 1 (right) as 'track set --pan' takes it, running         linearly (--shape linear, the default) or held (--shape hold) from each point to the         next. Where the lane has points it sets the pan (before the first point the first's,         after the last the last's), in place of the track's pan, which applies again once         the lane is cleared (as Ardour's automated panner does); the pan law is the track's         (constant power for a mono clip, a balance for a stereo one), frame by frame.
        Example: tape track envelope song.tape t1 --pan --set 0s:-1,2s:1
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track: its id (t1) or its name.", completion: ids("t")) var track: String
    @Flag(help: "Automate the track's pan (-1 left … 1 right) instead of its volume.")
    var pan = false
    @OptionGroup var envelope: EnvelopeEditOptions
    @OptionGroup var options: EditOptions

    func validate() throws { try envelope.check() }

    var label: String { envelope.label(pan ? "\(track) pan" : track) }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try resolveTrack(track, project)
      guard let existing = project.track(id) else { throw TimelineError.unknownTrack(id) }
      if pan {
        return try project.setPanEnvelope(
          id,
          Project.panAutomation(
            existing.panEnvelope, by: envelope.edit(project), name: "\(id) pan",
            sampleRate: project.sampleRate))
      }
      return try project.setEnvelope(
        id,
        Envelope.edited(
          existing.envelope, by: envelope.edit(project), name: id.description,
          sampleRate: project.sampleRate))
    }
  }

  /// `TIME:GAIN` points (`0s:0dB,@chorus:-8dB,c2.end:-inf`) with each time read as every
  /// timeline time is (``parsePosition(_:_:relativeTo:option:)``: a marker, a clip's edge)
  /// and written back in frames (`0s:0dB,96000f:-8dB,…`), for ``Envelope``'s parser, which
  /// knows no project; a plain time, and a piece without a colon, are left as they are.
  static func framesAt(_ points: String, _ project: Project, option: String) throws -> String {
    try points.split(separator: ",", omittingEmptySubsequences: false).map { part in
      // The last colon separates the gain: times may hold colons (1:02.5).
      guard let colon = part.lastIndex(of: ":") else { return String(part) }
      let text = String(part[..<colon])
      // A plain time stays as typed (the parser's messages quote the point).
      if (try? TimeValue(parsing: text, sampleRate: project.sampleRate)) != nil {
        return String(part)
      }
      let time = try parsePosition(text, project, option: option)
      return "\(time.frames)f" + part[colon...]
    }.joined(separator: ",")
  }

  struct Move: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "move",
      abstract: "Move a track to another place in the order (1 is the top).",
      discussion: "Example: tape track move song.tape t3 --to 1"
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track: its id (t1) or its name.", completion: ids("t")) var track: String
    @Option(
      parsing: .unconditional, help: "Its new place, from 1 (the top) to the number of tracks.")
    var to: Int
    @OptionGroup var options: EditOptions

    var label: String { "Move track \(track) to place \(to)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try resolveTrack(track, project)
      guard (1...max(project.tracks.count, 1)).contains(to) else {
        throw UsageError(
          message:
            "--to \(to) is not a place in the order; use 1 (the top) to \(project.tracks.count)")
      }
      return try project.moveTrack(id, to: to - 1)
    }
  }

  struct Duplicate: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "duplicate",
      abstract: "Copy a track with its settings and clips, right below it; prints the new ids.",
      discussion: """
        Prints the new track's id, then its clips' ids in timeline order, then its effects'.
        Example: tape track duplicate song.tape t2 --name "Vocals double"
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track: its id (t1) or its name.", completion: ids("t")) var track: String
    @Option(help: "The copy's name (default: the track's name and \"copy\").") var name: String?
    @OptionGroup var options: EditOptions

    func validate() throws {
      if let name { try RawArguments.requireText(name, "the track name") }
    }

    var label: String { "Duplicate track \(track)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try resolveTrack(track, project)
      guard let original = project.track(id) else { throw TimelineError.unknownTrack(id) }
      let newID = ids.newTrackID()
      let effectIDs = original.effects.map { _ in ids.newEffectID() }
      return try project.duplicateTrack(
        id, newID: newID, name: name ?? "\(original.name) copy", effectIDs: effectIDs
      ) { ids.newClipID() }
    }
  }

  struct Remove: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "rm",
      abstract: "Remove a track and its clips (undo brings them back).",
      discussion: "Example: tape track rm song.tape t3",
      aliases: ["remove"]
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track: its id (t1) or its name.", completion: ids("t")) var track: String
    @OptionGroup var options: EditOptions

    var label: String { "Remove track \(track)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      try project.removeTracks([try resolveTrack(track, project)])
    }
  }
}
