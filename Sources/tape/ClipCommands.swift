import ArgumentParser
import Synchronization
import Timeline
import TimelineStore

/// Runs `body`; an error naming the id a failed `clip add` would have given its clip (nobody
/// ever sees that id) says "the new clip" instead.
private func renamingTheNewClip<T>(
  _ id: borrowing Mutex<Clip.ID?>, _ body: () throws -> T
) throws -> T {
  do {
    return try body()
  } catch {
    let (code, message) = describe(error)
    guard code == Exit.dataError, let id = id.withLock({ $0 }) else { throw error }
    throw DataError(message: message.replacing("clip \(id)", with: "the new clip"))
  }
}

struct ClipCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "clip",
    abstract: "Place, cut, move, trim, fade and remove clips.",
    subcommands: [Add.self, Split.self, Move.self, Trim.self, Set.self, Remove.self])

  struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Place part of a source on a track; prints the clip's id.",
      discussion: """
        --from and --to/--length choose the part of the source (default: all of it); --at is \
        where it starts on the timeline.
        Example: tape clip add song.tape t1 s1 --at 2s --from 0:10 --length 4s --fade-in 50ms
        """)

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track id (t1).", completion: ids("t")) var track: String
    @Argument(help: "The source id (s1).", completion: ids("s")) var source: String
    @Option(parsing: .unconditional, help: "Where the clip starts on the timeline.") var at: String
    @Option(parsing: .unconditional, help: "Where in the source the clip starts (default 0).")
    var from: String?
    @Option(parsing: .unconditional, help: "How long the clip is.") var length: String?
    @Option(
      parsing: .unconditional, help: "Where in the source the clip ends (instead of --length).")
    var to: String?
    @Option(parsing: .unconditional, help: "Clip gain in dB.") var gain: String?
    @Option(parsing: .unconditional, help: "Fade-in length.") var fadeIn: String?
    @Option(parsing: .unconditional, help: "Fade-out length.") var fadeOut: String?
    @Option(help: "Curve of both fades: linear, equal-power, s-curve, exponential.")
    var curve: String = "linear"
    @OptionGroup var output: JSONOption

    func validate() throws {
      if length != nil && to != nil {
        throw ValidationError("give --length or --to, not both")
      }
    }

    func run() throws {
      try reportingErrors {
        let trackID = try parseID(track, as: Track.ID.self)
        let sourceID = try parseID(source, as: Source.ID.self)
        let curve = try parseCurve(curve)
        let gain = try gain.map(Gain.init(parsing:)) ?? .unity
        let store = try openStore(project.file)
        let newID = Mutex<Clip.ID?>(nil)
        let result = try renamingTheNewClip(newID) {
          try store.edit(label: "Add \(sourceID) to \(trackID) at \(at)") {
            project, ids in
            guard let source = project.source(sourceID) else {
              throw TimelineError.unknownSource(sourceID)
            }
            let start = try from.map { try parsePosition($0, project) } ?? .zero
            let end: FramePosition
            if let length {
              end = start + (try parseTime(length, project))
            } else if let to {
              end = try parsePosition(to, project)
            } else {
              end = FramePosition(source.frameCount(atRate: project.sampleRate).frames)
            }
            guard end > start else {
              throw UsageError(
                message: "the clip would be empty: its end in the source must come after --from")
            }
            let id = ids.newClipID()
            let clip = Clip(
              id: id, source: sourceID, timelineStart: try parsePosition(at, project),
              sourceRange: FrameRange(start: start, end: end), gain: gain,
              fadeIn: Fade(
                length: try fadeIn.map { try parseTime($0, project) } ?? .zero, curve: curve),
              fadeOut: Fade(
                length: try fadeOut.map { try parseTime($0, project) } ?? .zero, curve: curve))
            newID.withLock { $0 = id }
            return try project.addClip(clip, to: trackID)
          }
        }
        try MutationOutput(version: result.version, ids: result.newIDs).print(json: output.json)
      }
    }
  }

  struct Split: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Cut a clip in two at a timeline time; prints both ids (left, then right).",
      discussion: "Example: tape clip split song.tape c3 --at 1:02.5")

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @Option(parsing: .unconditional, help: "The timeline time to cut at.") var at: String
    @OptionGroup var output: JSONOption

    func run() throws {
      try reportingErrors {
        let id = try parseID(clip, as: Clip.ID.self)
        let store = try openStore(project.file)
        let result = try store.edit(label: "Split \(id) at \(at)") { project, ids in
          try project.splitClip(id, at: try parsePosition(at, project), newID: ids.newClipID())
        }
        try MutationOutput(version: result.version, ids: [id.description] + result.newIDs)
          .print(json: output.json)
      }
    }
  }

  struct Move: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Move a clip to another time and/or track.",
      discussion: "Example: tape clip move song.tape c3 --to 12s --track t2")

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @Option(parsing: .unconditional, help: "The new timeline start.") var to: String?
    @Option(help: "The track to move it to.", completion: ids("t")) var track: String?
    @OptionGroup var output: JSONOption

    func validate() throws {
      guard to != nil || track != nil else {
        throw ValidationError("say where to: --to TIME and/or --track TRACK")
      }
    }

    func run() throws {
      try reportingErrors {
        let id = try parseID(clip, as: Clip.ID.self)
        let trackID = try track.map { try parseID($0, as: Track.ID.self) }
        let store = try openStore(project.file)
        let result = try store.edit(
          label: historyLabel("Move \(id)", [("to", to), ("onto", track)])
        ) { project, _ in
          try project.moveClip(
            id, to: try to.map { try parsePosition($0, project) }, track: trackID)
        }
        try MutationOutput(version: result.version, ids: []).print(json: output.json)
      }
    }
  }

  struct Trim: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Move a clip's edges on the timeline; the audio stays where it is.",
      discussion: "Example: tape clip trim song.tape c3 --start 2.5s --end 0:07")

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @Option(parsing: .unconditional, help: "The new timeline start.") var start: String?
    @Option(parsing: .unconditional, help: "The new timeline end.") var end: String?
    @OptionGroup var output: JSONOption

    func validate() throws {
      guard start != nil || end != nil else {
        throw ValidationError("say which edge: --start TIME and/or --end TIME")
      }
    }

    func run() throws {
      try reportingErrors {
        let id = try parseID(clip, as: Clip.ID.self)
        let store = try openStore(project.file)
        let result = try store.edit(
          label: historyLabel("Trim \(id)", [("start to", start), ("end to", end)])
        ) { project, _ in
          try project.trimClip(
            id, start: try start.map { try parsePosition($0, project) },
            end: try end.map { try parsePosition($0, project) })
        }
        try MutationOutput(version: result.version, ids: []).print(json: output.json)
      }
    }
  }

  struct Set: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Change a clip's gain and fades.",
      discussion:
        "Example: tape clip set song.tape c3 --gain -4dB --fade-out 2s --fade-out-curve s-curve")

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @Option(parsing: .unconditional, help: "Clip gain in dB.") var gain: String?
    @Option(parsing: .unconditional, help: "Fade-in length (0 removes it).") var fadeIn: String?
    @Option(parsing: .unconditional, help: "Fade-out length (0 removes it).") var fadeOut: String?
    @Option(help: "Fade-in curve: linear, equal-power, s-curve, exponential.") var fadeInCurve:
      String?
    @Option(help: "Fade-out curve.") var fadeOutCurve: String?
    @OptionGroup var output: JSONOption

    func validate() throws {
      guard
        gain != nil || fadeIn != nil || fadeOut != nil || fadeInCurve != nil || fadeOutCurve != nil
      else {
        throw ValidationError(
          "say what to change: --gain, --fade-in, --fade-out, --fade-in-curve or --fade-out-curve")
      }
    }

    func run() throws {
      try reportingErrors {
        let id = try parseID(clip, as: Clip.ID.self)
        let gain = try gain.map(Gain.init(parsing:))
        let inCurve = try fadeInCurve.map(parseCurve)
        let outCurve = try fadeOutCurve.map(parseCurve)
        let store = try openStore(project.file)
        let result = try store.edit(
          label: historyLabel(
            "Set \(id)",
            [
              ("gain", self.gain), ("fade-in", fadeIn), ("fade-out", fadeOut),
              ("fade-in curve", fadeInCurve), ("fade-out curve", fadeOutCurve),
            ])
        ) { project, _ in
          guard let (clip, _) = project.clip(id) else { throw TimelineError.unknownClip(id) }
          var commands: [Command] = []
          var current = project
          if let gain {
            commands += try current.setClipGain(id, gain)
            current = try current.applying(commands)
          }
          let newIn =
            fadeIn != nil || inCurve != nil
            ? Fade(
              length: try fadeIn.map { try parseTime($0, project) } ?? clip.fadeIn.length,
              curve: inCurve ?? clip.fadeIn.curve) : nil
          let newOut =
            fadeOut != nil || outCurve != nil
            ? Fade(
              length: try fadeOut.map { try parseTime($0, project) } ?? clip.fadeOut.length,
              curve: outCurve ?? clip.fadeOut.curve) : nil
          if newIn != nil || newOut != nil {
            commands += try current.setClipFades(id, fadeIn: newIn, fadeOut: newOut)
          }
          return commands
        }
        try MutationOutput(version: result.version, ids: []).print(json: output.json)
      }
    }
  }

  struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "rm",
      abstract: "Remove a clip (undo brings it back).",
      discussion: "Example: tape clip rm song.tape c3")

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @OptionGroup var output: JSONOption

    func run() throws {
      try reportingErrors {
        let id = try parseID(clip, as: Clip.ID.self)
        let store = try openStore(project.file)
        let result = try store.edit(label: "Remove \(id)") { project, _ in
          try project.removeClips([id])
        }
        try MutationOutput(version: result.version, ids: []).print(json: output.json)
      }
    }
  }
}
