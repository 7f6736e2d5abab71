import ArgumentParser
import Timeline
import TimelineStore

struct TrackCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "track",
    abstract: "Add, change and remove tracks.",
    subcommands: [Add.self, Set.self, Remove.self])

  struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Add a track after the existing ones; prints its id.",
      discussion: "Example: tape track add song.tape Drums --gain -3dB --pan -0.2")

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track's name.") var name: String
    @Option(parsing: .unconditional, help: "Gain in dB (-3, -3dB, +2.5dB).") var gain: String?
    @Option(parsing: .unconditional, help: "Pan from -1 (left) to 1 (right).") var pan: String?
    @OptionGroup var output: JSONOption

    func validate() throws { try RawArguments.requireText(name, "the track name") }

    func run() throws {
      try reportingErrors {
        let gain = try gain.map(Gain.init(parsing:)) ?? .unity
        let pan = try pan.map(parsePan) ?? 0
        let store = try openStore(project.file)
        let result = try store.edit(label: "Add track \(name)") { project, ids in
          try project.addTrack(Track(id: ids.newTrackID(), name: name, gain: gain, pan: pan))
        }
        try MutationOutput(version: result.version, ids: result.newIDs).print(json: output.json)
      }
    }
  }

  enum MuteFlag: EnumerableFlag {
    case mute, unmute
  }

  enum SoloFlag: EnumerableFlag {
    case solo, unsolo
  }

  struct Set: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Change a track's name, gain, pan, mute or solo.",
      discussion: "Example: tape track set song.tape t2 --gain -6 --pan 0.5 --solo")

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track id (t1).", completion: ids("t")) var track: String
    @Option(help: "A new name.") var name: String?
    @Option(parsing: .unconditional, help: "Gain in dB (-3, -3dB, +2.5dB).") var gain: String?
    @Option(parsing: .unconditional, help: "Pan from -1 (left) to 1 (right).") var pan: String?
    @Flag(help: "Silence the track, or let it sound again.") var mute: MuteFlag?
    @Flag(help: "Solo the track (only soloed tracks sound), or stop soloing it.") var solo:
      SoloFlag?
    @OptionGroup var output: JSONOption

    func validate() throws {
      if let name { try RawArguments.requireText(name, "the track name") }
      guard name != nil || gain != nil || pan != nil || mute != nil || solo != nil else {
        throw ValidationError(
          "say what to change: --name, --gain, --pan, --mute/--unmute or --solo/--unsolo")
      }
    }

    func run() throws {
      try reportingErrors {
        let id = try parseID(track, as: Track.ID.self)
        let gain = try gain.map(Gain.init(parsing:))
        let pan = try pan.map(parsePan)
        let store = try openStore(project.file)
        let result = try store.edit(
          label: historyLabel(
            "Set track \(id)",
            [
              ("name", name), ("gain", self.gain), ("pan", self.pan),
              ("", mute.map { $0 == .mute ? "muted" : "unmuted" }),
              ("", solo.map { $0 == .solo ? "solo" : "not solo" }),
            ])
        ) { project, _ in
          try project.setTrack(
            id, name: name, gain: gain, pan: pan, muted: mute.map { $0 == .mute },
            solo: solo.map { $0 == .solo })
        }
        try MutationOutput(version: result.version, ids: []).print(json: output.json)
      }
    }
  }

  struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "rm",
      abstract: "Remove a track and its clips (undo brings them back).",
      discussion: "Example: tape track rm song.tape t3")

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track id (t1).", completion: ids("t")) var track: String
    @OptionGroup var output: JSONOption

    func run() throws {
      try reportingErrors {
        let id = try parseID(track, as: Track.ID.self)
        let store = try openStore(project.file)
        let result = try store.edit(label: "Remove track \(id)") { project, _ in
          try project.removeTracks([id])
        }
        try MutationOutput(version: result.version, ids: []).print(json: output.json)
      }
    }
  }
}
