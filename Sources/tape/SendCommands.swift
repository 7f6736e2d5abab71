import ArgumentParser
import Interchange
import Timeline
import TimelineStore

/// `tape send …`: copies of a track's sound into other tracks (a shared reverb, an aux bus).
struct SendCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "send",
    abstract: "Sends: copy a track's sound into another track (a shared reverb, a bus).",
    discussion: """
      A send taps its track after the track's whole chain and its mute (post-fader, the \
      default), or with --pre-fader before the track's gain, pan, envelope and effects; the \
      receiving track mixes it with its own clips and whatever else it receives, then applies \
      its gain, pan, envelope, effects and mute. A send that would feed a track into itself \
      is refused, naming the loop.
      """,
    subcommands: [Add.self, Set.self, Remove.self, List.self, EnvelopeCommand.self])
}

/// The send a command names: its id (`n1`).
func parseSend(_ text: String, _ project: Project) throws -> Send.ID {
  guard let id = Send.ID(parsing: text) else {
    throw UsageError(
      message: "'\(ProjectWords.escaped(text))' is not a send id (n1); 'tape send ls' lists them")
  }
  guard project.send(id) != nil else { throw TimelineError.unknownSend(id) }
  return id
}

extension SendCommand {
  struct EnvelopeCommand: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "envelope",
      abstract: "Shape a send's level over time (automation), or clear it.",
      discussion: """
        The same forms as 'tape track envelope': TIME:GAIN points in dB (-inf for silence), \
        each segment db (the default), linear or hold, the whole envelope multiplying the \
        send's gain sample by sample on what it delivers. Ripple edits of the track it sends \
        move the envelope with that track's clips.
        Example: tape send envelope song.tape n1 --set 0s:-inf,2s:0dB
        Example: tape send envelope song.tape n1 --add 5s:-6dB
        Example: tape send envelope song.tape n1 --clear
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The send's id (n1; 'tape send ls' lists them).") var send: String
    @OptionGroup var envelope: EnvelopeEditOptions
    @OptionGroup var options: EditOptions

    func validate() throws { try envelope.check() }

    var label: String { envelope.label(send) }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try parseSend(send, project)
      return try project.setSendEnvelope(
        id,
        Envelope.edited(
          project.send(id)?.envelope, by: envelope.edit(project), name: id.description,
          sampleRate: project.sampleRate))
    }
  }
}

extension SendCommand {
  struct Add: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Send a track's sound into another track; prints the send's id (n1).",
      discussion: """
        Example: tape send add song.tape t1 t2 --gain -6
        Example: tape send add song.tape t1 t2 --pre-fader --pan -0.5
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track sent: its id (t1) or its name.", completion: ids("t"))
    var from: String
    @Argument(help: "The track that receives it: its id (t2) or its name.", completion: ids("t"))
    var to: String
    @Option(parsing: .unconditional, help: "The send's gain in dB (-6, -6dB); 0 dB by default.")
    var gain: String?
    @Option(parsing: .unconditional, help: "Balance of the sent sound from -1 (left) to 1 (right).")
    var pan: String?
    @Flag(help: "Tap before the track's gain, pan, envelope and effects (post-fader by default).")
    var preFader = false
    @OptionGroup var options: EditOptions

    var label: String { "Send \(from) to \(to)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let send = Send(
        id: ids.newSendID(), from: try resolveTrack(from, project),
        to: try resolveTrack(to, project), gain: try gain.map(Gain.init(parsing:)) ?? .unity,
        pan: try pan.map(Track.pan(parsing:)) ?? 0, isPreFader: preFader)
      return try project.settingSend(send)
    }
  }

  struct Set: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "set",
      abstract: "Change a send's gain, pan, tap or target.",
      discussion: """
        Example: tape send set song.tape n1 --gain -3
        Example: tape send set song.tape n1 --pre-fader --to t1
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The send: its id (n1).", completion: ids("n")) var send: String
    @Option(parsing: .unconditional, help: "Gain in dB (-3, -3dB).") var gain: String?
    @Option(parsing: .unconditional, help: "Balance from -1 (left) to 1 (right).") var pan: String?
    @Option(help: "The track that receives it: its id or name.", completion: ids("t"))
    var to: String?
    @Flag(
      exclusivity: .exclusive,
      help: "Tap before the track's gain, pan, envelope and effects, or after its chain and mute.")
    var tap: Tap?
    @OptionGroup var options: EditOptions

    enum Tap: EnumerableFlag {
      case preFader
      case postFader
    }

    func validate() throws {
      guard gain != nil || pan != nil || to != nil || tap != nil else {
        throw ValidationError(
          "say what to change: --gain, --pan, --to, or --pre-fader/--post-fader")
      }
    }

    var label: String {
      historyLabel(
        "Set send \(send)",
        [
          ("gain", gain), ("pan", pan), ("to", to),
          ("", tap.map { $0 == .preFader ? "pre-fader" : "post-fader" }),
        ])
    }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try parseSend(send, project)
      guard var changed = project.send(id) else { throw TimelineError.unknownSend(id) }
      if let gain { changed.gain = try Gain(parsing: gain) }
      if let pan { changed.pan = try Track.pan(parsing: pan) }
      if let to { changed.to = try resolveTrack(to, project) }
      if let tap { changed.isPreFader = tap == .preFader }
      return try project.settingSend(changed)
    }
  }

  struct Remove: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "rm",
      abstract: "Remove sends (undo brings them back).",
      discussion: "Example: tape send rm song.tape n1",
      aliases: ["remove"]
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The sends: ids (n1 n2).", completion: ids("n")) var sends: [String]
    @OptionGroup var options: EditOptions

    func validate() throws {
      guard !sends.isEmpty else { throw ValidationError("name the sends to remove (n1)") }
    }

    var label: String { "Remove send \(sends.joined(separator: ", "))" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      [.removeSends(try sends.map { try parseSend($0, project) })]
    }
  }

  struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ls",
      abstract: "List the sends: id, from, to, gain, pan and tap; and each track's output.",
      discussion: "Example: tape send ls song.tape --json"
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @OptionGroup var output: JSONOption

    func run() throws {
      try reportingErrors(readerMayStop: true) {
        let shown = try retryingReads { try openStore(project.file, access: .read).snapshot }
        let routed = shown.project
        if output.json {
          printJSON(.array(routed.sends.map(ProjectJSON.send)))
          return
        }
        for send in routed.sends {
          print("\(send.from) \(ProjectWords.send(send, project: routed))")
        }
        for track in routed.tracks {
          guard let target = track.output else { continue }
          let name = routed.track(target).map { " \"\(ProjectWords.escaped($0.name))\"" } ?? ""
          print("\(track.id) output → \(target)\(name)")
        }
      }
    }
  }
}
