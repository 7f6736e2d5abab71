import ArgumentParser
import Foundation
import Interchange
import Timeline
import TimelineStore

/// Runs `body`, which works on a clip that does not exist yet: an error naming it by its id
/// (which the user never sees) says "the new clip" instead.
private func namingTheNewClip<T>(_ id: Clip.ID, _ body: () throws -> T) throws -> T {
  do {
    return try body()
  } catch {
    let (code, message) = describe(error)
    guard code == Exit.dataError, message.contains("clip \(id)") else { throw error }
    throw DataError(message: message.replacing("clip \(id)", with: "the new clip"))
  }
}

struct ClipCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "clip",
    abstract: "Place, cut, copy, move, trim, fade and remove clips.",
    subcommands: [
      Add.self, Split.self, Copy.self, Move.self, Trim.self, Slip.self, Set.self, Crossfade.self,
      Remove.self, ListClips.self,
    ])

  struct Slip: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "slip",
      abstract: "Move the audio inside a clip that stays in place.",
      discussion: """
        The clip keeps its place, length and fades on the timeline; what it plays moves \
        through its source: --by 120ms plays the audio 120 ms later in the source, -120ms \
        earlier. A slip past either end of the source is refused with the most that fits.
        Example: tape clip slip song.tape c3 --by -120ms
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @Option(parsing: .unconditional, help: "How far, + later in the source, - earlier.")
    var by: String
    @OptionGroup var options: EditOptions

    var label: String { "Slip \(clip) by \(by)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try parseClipID(clip, project)
      var text = by.trimmingCharacters(in: .whitespaces)
      var sign: Int64 = 1
      if let first = text.first, first == "-" || first == "+" {
        sign = first == "-" ? -1 : 1
        text.removeFirst()
      }
      let magnitude = try parseTime(text, project, option: "--by").frames
      guard magnitude > 0 else {
        throw UsageError(
          message:
            "--by \(by) moves nothing; give how far, + later in the source or - earlier (120ms, -0.5s)"
        )
      }
      return try project.slipClip(id, by: sign * magnitude)
    }
  }

  struct ListClips: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ls",
      abstract: "List the clips that play in a stretch of time.",
      discussion: """
        Every clip that plays at some time in [--from, --to) (by default the whole timeline), \
        on every track or those of --tracks, in track order then by start: one line each \
        (id, track, start, end, source and where in it), or with --json an array of the \
        clips as 'tape ls --json' shows them, each with its "track", times in frames.
        Example: tape clip ls song.tape --from 1:00 --to 1:30 --tracks t1
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Option(parsing: .unconditional, help: "Where the stretch starts (default 0).")
    var from: String?
    @Option(parsing: .unconditional, help: "Where it ends, exclusive (default: the end).")
    var to: String?
    @OptionGroup var choice: TrackChoice
    @OptionGroup var times: TimeDisplayOption
    @OptionGroup var output: JSONOption

    func run() throws {
      try reportingErrors(readerMayStop: true) {
        let file = self.project.file
        let store = try retryingReads { try openStore(file, access: .read) }
        let project = store.snapshot.project
        let start = try from.map { try parsePosition($0, project, option: "--from") } ?? .zero
        let end =
          try to.map { try parsePosition($0, project, relativeTo: start, option: "--to") }
          ?? .init(Int64.max)
        guard end > start else {
          throw UsageError(message: "--to \(to ?? "") must come after --from \(from ?? "0")")
        }
        let chosen = try choice.chosen(project)
        for id in chosen ?? [] where project.track(id) == nil {
          throw TimelineError.unknownTrack(id)
        }
        let tracks = project.tracks.filter { chosen?.contains($0.id) ?? true }
        let found = tracks.flatMap { track in
          track.clips.filter { $0.timelineStart < end && $0.timelineEnd > start }
            .sorted { $0.timelineStart < $1.timelineStart }.map { (track.id, $0) }
        }
        if output.json {
          printJSON(
            .array(
              found.map { track, clip in
                .object([("track", .string(track.description))] + ProjectJSON.clipFields(clip))
              }))
          return
        }
        let show = { (frames: Int64) in times.show(frames, sampleRate: project.sampleRate) }
        for (track, clip) in found {
          print(
            "\(clip.id)\t\(track)\t\(show(clip.timelineStart.frames))\t\(show(clip.timelineEnd.frames))\t\(clip.source)\t\(show(clip.sourceRange.start.frames))"
          )
        }
      }
    }
  }

  struct Crossfade: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "crossfade",
      abstract: "Join two clips that touch, or already overlap, with a crossfade.",
      discussion: """
        Clips that touch: the first clip plays on half the --length past the join and the \
        second starts half the length before it, each over audio from its source beyond its \
        edge, one fading out while the other fades in. Where a source has less audio than \
        that, the crossfade is shorter and a note says so. Clips that already overlap (the \
        second starting inside the first and ending after it): they crossfade over the \
        overlap, neither moving; --length may be left out (given, it must be the overlap). \
        --curve: equal-power (the default) for different material either side, linear or \
        s-curve for the same recording.
        Example: tape clip crossfade song.tape c3 c4 --length 20ms
        Example: tape clip crossfade song.tape c2 c5
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip that ends at the join (c3).", completion: ids("c")) var left: String
    @Argument(help: "The clip that starts there (c4).", completion: ids("c")) var right: String
    @Option(
      parsing: .unconditional,
      help: "How long both play together (clips that overlap: their overlap, the default).")
    var length: String?
    @Option(help: "equal-power (default), linear or s-curve.") var curve = "equal-power"
    @OptionGroup var options: EditOptions

    var label: String { "Crossfade \(left) into \(right) over \(length ?? "their overlap")" }

    private func parsed(
      _ project: Project
    ) throws -> (Clip.ID, Clip.ID, Timeline.Crossfade) {
      let (left, right) = (try parseClipID(left, project), try parseClipID(right, project))
      let overlap = project.overlap(left, right)
      let rate = project.sampleRate
      guard let typed = self.length else {
        guard let overlap else {
          throw UsageError(
            message:
              "\(left) and \(right) do not overlap; say how long they play together: --length 20ms"
          )
        }
        return (left, right, Timeline.Crossfade(length: overlap, curve: try parseCurve(curve)))
      }
      let length = try parseTime(typed, project, option: "--length")
      guard length > .zero else {
        throw UsageError(message: "--length \(typed) is no time; give the crossfade a length")
      }
      if let overlap, overlap != length, let start = project.clip(right)?.clip.timelineStart {
        let exact = { (count: FrameCount) in TimeValue.exact(count, sampleRate: rate) }
        throw UsageError(
          message:
            "\(left) and \(right) already overlap by \(exact(overlap)), so they crossfade over that, not \(exact(length)); leave out --length, or trim \(left) to end where \(right) starts first (tape clip trim \(self.project.file) \(left) --end \(exact(FrameCount(start.frames))))"
        )
      }
      return (left, right, Timeline.Crossfade(length: length, curve: try parseCurve(curve)))
    }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let (left, right, crossfade) = try parsed(project)
      return try edit(project, left, right, crossfade)
    }

    private func edit(
      _ project: Project, _ left: Clip.ID, _ right: Clip.ID, _ crossfade: Timeline.Crossfade
    ) throws -> [Command] {
      if project.overlap(left, right) != nil {
        return try project.crossfadeOverlap(left, right, curve: crossfade.curve)
      }
      return try project.crossfadeClips(left, right, crossfade)
    }

    func notes(_ project: Project) throws -> [String] {
      let (left, right, crossfade) = try parsed(project)
      let short =
        project.overlap(left, right) != nil
        ? nil
        : try project.crossfadeShortfall(left, right, crossfade).map {
          shortCrossfadeNote($0, project)
        }
      return [try replacedFadesNote(left, right, crossfade, project), short].compactMap { $0 }
    }

    /// The fades the crossfade replaces (`c3's fade-out 0.2s linear`), which it did without a
    /// word; nil when the clips had none, or had these already.
    private func replacedFadesNote(
      _ left: Clip.ID, _ right: Clip.ID, _ crossfade: Timeline.Crossfade, _ project: Project
    ) throws -> String? {
      let after = try project.applying(try edit(project, left, right, crossfade))
      guard let (leftBefore, _) = project.clip(left), let (rightBefore, _) = project.clip(right),
        let (leftAfter, _) = after.clip(left), let (rightAfter, _) = after.clip(right)
      else { return nil }
      let show = { (fade: Fade) in
        "\(TimeValue.seconds(fade.length, sampleRate: project.sampleRate)) \(fade.curve.displayName)"
      }
      let replaced = [
        (left, "fade-out", leftBefore.fadeOut, leftAfter.fadeOut),
        (right, "fade-in", rightBefore.fadeIn, rightAfter.fadeIn),
      ].compactMap { clip, end, before, after in
        before.length > .zero && before != after ? "\(clip)'s \(end) (\(show(before)))" : nil
      }
      guard !replaced.isEmpty else { return nil }
      return "the crossfade replaces \(replaced.joined(separator: " and "))"
    }
  }

  struct Add: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Place part of a source on a track; prints the clip's id.",
      discussion: """
        --from and --to/--length choose the part of the source (default: all of it); --at is \
        where it starts on the timeline. --name gives it a name that later commands take \
        instead of its id, as @NAME (clip set @intro --gain -3).
        Example: tape clip add song.tape t1 s1 --at 2s --from 0:10 --length 4s --fade-in 50ms
        Example: tape clip add song.tape t1 s1 --at 20s --length 4s --name intro
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The track: its id (t1) or its name.", completion: ids("t")) var track: String
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
    @Option(help: "A name to call the clip by (@NAME where a clip id is taken); unique.")
    var name: String?
    @OptionGroup var options: EditOptions

    func validate() throws {
      if length != nil && to != nil {
        throw ValidationError("give --length or --to, not both")
      }
    }

    var label: String { "Add \(source) to \(track) at \(at)" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let trackID = try resolveTrack(track, project)
      let sourceID = try parseID(source, as: Source.ID.self)
      let curve = try parseCurve(curve)
      let gain = try gain.map(Gain.init(parsing:)) ?? .unity
      let id = ids.newClipID()
      return try namingTheNewClip(id) {
        let start = try from.map { try parseSourceTime($0, option: "--from", project) } ?? .zero
        let end =
          try length.map { start + (try parseTime($0, project, option: "--length")) }
          ?? to.map { try parseSourceTime($0, option: "--to", project) }
        return try project.addClip(
          id, source: sourceID, track: trackID, at: try parsePosition(at, project, option: "--at"),
          sourceStart: start, sourceEnd: end, gain: gain,
          fadeIn: Fade(
            length: try fadeIn.map { try parseTime($0, project, option: "--fade-in") } ?? .zero,
            curve: curve),
          fadeOut: Fade(
            length: try fadeOut.map { try parseTime($0, project, option: "--fade-out") } ?? .zero,
            curve: curve),
          name: name)
      }
    }
  }

  struct Split: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "split",
      abstract: "Cut a clip in two at a timeline time; prints both ids (left, then right).",
      discussion: """
        --snap moves --at first: clips to the nearest edge of another clip within 100 ms, zero \
        to the nearest zero crossing of the mix within 10 ms (where a cut does not click), or \
        a grid to its nearest line (250ms, 1/4@120bpm); see 'tape cut --help'.
        Example: tape clip split song.tape c3 --at 1:02.5
        Example: tape clip split song.tape c3 --at 1:02.5 --snap zero
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @Option(parsing: .unconditional, help: "The timeline time to cut at.") var at: String
    @OptionGroup var snapping: SnapOption
    @OptionGroup var options: EditOptions

    var label: String {
      "Split \(clip) at \(at)\(snapping.shown.map { " snapped to \($0)" } ?? "")"
    }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try parseClipID(clip, project)
      let typed = try parsePosition(
        at, project, relativeTo: project.clip(id)?.clip.timelineStart, option: "--at")
      return try project.splitClip(
        id, at: try snapping.apply(typed, project, file: self.project.file, excluding: id),
        newID: ids.newClipID())
    }

    /// The clip and any whose edge `--at` names; snapping looks at every clip, and `@NAME` is
    /// printed as the id ``prepare(_:)`` finds in the whole project.
    func scope() throws -> EditScope? {
      snapping.snap == nil && !clip.hasPrefix("@") ? clipScope(clip, times: [at]) : nil
    }

    /// `@NAME` as the id it names, so that the id is what is printed.
    mutating func prepare(_ project: Project) throws {
      if let id = try? parseClipID(clip, project) { clip = id.description }
    }

    func printed(created: [String]) -> [String] { [clip] + created }
  }

  struct Copy: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "copy",
      abstract: "Copy a clip (its source range, gain and fades) to another time; prints its id.",
      discussion: """
        --snap moves --to first: clips to the nearest clip edge within 100 ms (the copied \
        clip's own too, to butt the copy against it), zero or a grid; see 'tape cut --help'. \
        --overwrite replaces what lies under the copy on its track (clips there trimmed, \
        split or removed, in the same undo step), as Pro Tools' and Reaper's default edit \
        modes do; without it the copy plays over what is there.
        Example: tape clip copy song.tape c3 --to 1:30 --track t2
        Example: tape clip copy song.tape c3 --to c3.end --snap clips
        Example: tape clip copy song.tape c3 --to 1:30 --overwrite
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @Option(parsing: .unconditional, help: "Where the copy starts on the timeline.") var to: String
    @Option(help: "The track to put it on (default: the clip's own).", completion: ids("t"))
    var track: String?
    @Flag(help: "Replace what lies under the copy on its track.") var overwrite = false
    @OptionGroup var snapping: SnapOption
    @OptionGroup var options: EditOptions

    var label: String {
      historyLabel("Copy \(clip) to \(to)", [("snapped to", snapping.shown), ("onto", track)])
        + (overwrite ? ", overwriting" : "")
    }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try parseClipID(clip, project)
      let trackID = try track.map { try resolveTrack($0, project) }
      let typed = try parsePosition(
        to, project, relativeTo: project.clip(id)?.clip.timelineStart, option: "--to")
      let start = try snapping.apply(typed, project, file: self.project.file)
      let newID = ids.newClipID()
      return try namingTheNewClip(newID) {
        guard overwrite else {
          return try project.copyClip(id, to: start, track: trackID, newID: newID)
        }
        guard let (clip, own) = project.clip(id) else { throw TimelineError.unknownClip(id) }
        return try project.overwriting(
          [(clip.withID(newID).moved(to: start), trackID ?? own.id)]
        ) { ids.newClipID() }
      }
    }

    /// The copy's id, taken first: not the right part of a clip --overwrite split.
    func printed(created: [String]) -> [String] { Array(created.prefix(1)) }
  }

  struct Move: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "move",
      abstract: "Move a clip to another time and/or track.",
      discussion: """
        --snap moves the new start first: clips to the nearest edge of another clip within \
        100 ms (to butt it against a neighbour), zero to the nearest zero crossing of the mix \
        within 10 ms, or a grid to its nearest line (250ms, 1/4@120bpm); see 'tape cut --help'.
        --overwrite replaces what lies under the clip at its new place (clips there trimmed, \
        split or removed, in the same undo step), as Pro Tools' and Reaper's default edit \
        modes do; without it the clip plays over what is there.
        Example: tape clip move song.tape c3 --to 12s --track t2
        Example: tape clip move song.tape c4 --to 1:33.95 --snap clips
        Example: tape clip move song.tape c3 --to 12s --overwrite
        """,
      aliases: ["mv"]
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @Option(parsing: .unconditional, help: "The new timeline start.") var to: String?
    @Option(help: "The track to move it to.", completion: ids("t")) var track: String?
    @Flag(help: "Replace what lies under the clip at its new place.") var overwrite = false
    @OptionGroup var snapping: SnapOption
    @OptionGroup var options: EditOptions

    func validate() throws {
      guard to != nil || track != nil else {
        throw ValidationError("say where to: --to TIME and/or --track TRACK")
      }
      if snapping.snap != nil && to == nil { throw ValidationError("--snap goes with --to") }
    }

    var label: String {
      historyLabel(
        "Move \(clip)",
        [to.map(toOrBy) ?? ("to", nil), ("snapped to", snapping.shown), ("onto", track)])
        + (overwrite ? ", overwriting" : "")
    }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try parseClipID(clip, project)
      let trackID = try track.map { try resolveTrack($0, project) }
      let start = project.clip(id)?.clip.timelineStart
      let file = self.project.file
      let moved = try project.moveClip(
        id,
        to: try to.map {
          try snapping.apply(
            try parsePosition($0, project, relativeTo: start, option: "--to"), project, file: file,
            excluding: id)
        }, track: trackID)
      guard overwrite, case .setClip(let clip, let track) = moved.first else { return moved }
      return try project.overwriting([(clip, track)], removing: [id]) { ids.newClipID() }
    }

    /// Nothing, as a move without --overwrite: not the right part of a clip it split.
    func printed(created: [String]) -> [String] { [] }

    /// The clip and any whose edge `--to` names; snapping, and overwriting what lies under the
    /// new place, look at every clip.
    func scope() throws -> EditScope? {
      snapping.snap == nil && !overwrite ? clipScope(clip, times: [to]) : nil
    }
  }

  struct Trim: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "trim",
      abstract: "Move a clip's edges on the timeline; the audio stays where it is.",
      discussion: """
        --snap moves --start and --end first: clips to the nearest edge of another clip \
        within 100 ms, zero or a grid; see 'tape cut --help'.
        Example: tape clip trim song.tape c3 --start 2.5s --end 0:07
        Example: tape clip trim song.tape c3 --end 0:07 --snap zero
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @Option(parsing: .unconditional, help: "The new timeline start.") var start: String?
    @Option(parsing: .unconditional, help: "The new timeline end.") var end: String?
    @OptionGroup var snapping: SnapOption
    @OptionGroup var options: EditOptions

    func validate() throws {
      guard start != nil || end != nil else {
        throw ValidationError("say which edge: --start TIME and/or --end TIME")
      }
    }

    var label: String {
      historyLabel(
        "Trim \(clip)",
        [
          start.map { ("start " + toOrBy($0).0, toOrBy($0).1) } ?? ("", nil),
          end.map { ("end " + toOrBy($0).0, toOrBy($0).1) } ?? ("", nil),
          ("snapped to", snapping.shown),
        ])
    }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try parseClipID(clip, project)
      let edges = project.clip(id)?.clip
      let file = self.project.file
      let snapped = { (typed: FramePosition) in
        try snapping.apply(typed, project, file: file, excluding: id)
      }
      return try project.trimClip(
        id,
        start: try start.map {
          try snapped(
            try parsePosition($0, project, relativeTo: edges?.timelineStart, option: "--start"))
        },
        end: try end.map {
          try snapped(
            try parsePosition($0, project, relativeTo: edges?.timelineEnd, option: "--end"))
        })
    }

    /// The clip and any whose edges `--start` and `--end` name; snapping looks at every clip.
    func scope() throws -> EditScope? {
      snapping.snap == nil ? clipScope(clip, times: [start, end]) : nil
    }
  }

  struct Set: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "set",
      abstract: "Change a clip's gain, fades and name.",
      discussion: """
        --name names the clip (later commands take @NAME for its id; names are unique), \
        --no-name removes its name.
        Example: tape clip set song.tape c3 --gain -4dB --fade-out 2s --fade-out-curve s-curve
        Example: tape clip set song.tape c3 --name verse
        """
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @Option(parsing: .unconditional, help: "Clip gain in dB.") var gain: String?
    @Option(parsing: .unconditional, help: "Fade-in length (0 removes it).") var fadeIn: String?
    @Option(parsing: .unconditional, help: "Fade-out length (0 removes it).") var fadeOut: String?
    @Option(help: "Fade-in curve: linear, equal-power, s-curve, exponential.") var fadeInCurve:
      String?
    @Option(help: "Fade-out curve.") var fadeOutCurve: String?
    @Option(help: "A name to call the clip by (@NAME where a clip id is taken); unique.")
    var name: String?
    @Flag(help: "Remove the clip's name.") var noName = false
    @OptionGroup var options: EditOptions

    func validate() throws {
      guard
        gain != nil || fadeIn != nil || fadeOut != nil || fadeInCurve != nil || fadeOutCurve != nil
          || name != nil || noName
      else {
        throw ValidationError(
          "say what to change: --gain, --fade-in, --fade-out, --fade-in-curve, --fade-out-curve, --name or --no-name"
        )
      }
      if name != nil && noName { throw ValidationError("give --name or --no-name, not both") }
    }

    var label: String {
      historyLabel(
        "Set \(clip)",
        [
          ("gain", gain), ("fade-in", fadeIn), ("fade-out", fadeOut),
          ("fade-in curve", fadeInCurve), ("fade-out curve", fadeOutCurve), ("name", name),
          ("", noName ? "no name" : nil),
        ])
    }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      let id = try parseClipID(clip, project)
      let gain = try gain.map(Gain.init(parsing:))
      let inCurve = try fadeInCurve.map(parseCurve)
      let outCurve = try fadeOutCurve.map(parseCurve)
      guard let (clip, _) = project.clip(id) else { throw TimelineError.unknownClip(id) }
      let newIn =
        fadeIn != nil || inCurve != nil
        ? Fade(
          length: try fadeIn.map { try parseTime($0, project, option: "--fade-in") }
            ?? clip.fadeIn.length,
          curve: inCurve ?? clip.fadeIn.curve) : nil
      let newOut =
        fadeOut != nil || outCurve != nil
        ? Fade(
          length: try fadeOut.map { try parseTime($0, project, option: "--fade-out") }
            ?? clip.fadeOut.length,
          curve: outCurve ?? clip.fadeOut.curve) : nil
      var commands: [Command] = []
      var current = project
      if gain != nil || newIn != nil || newOut != nil {
        commands = try project.setClip(id, gain: gain, fadeIn: newIn, fadeOut: newOut)
        current = try project.applying(commands)
      }
      if name != nil || noName { commands += try current.nameClip(id, name) }
      return commands
    }

    /// The clip, and any clip with the name it is to be given (which must be unique).
    func scope() throws -> EditScope? {
      guard var scope = clipScope(clip) else { return nil }
      if let name { scope.clipNames.insert(name) }
      return scope
    }
  }

  struct Remove: EditingCommand {
    static let configuration = CommandConfiguration(
      commandName: "rm",
      abstract: "Remove a clip (undo brings it back); --ripple closes the hole.",
      discussion: """
        With --ripple, every later clip of its track (starting at or after its end) moves \
        left by its length; other tracks do not move (to keep them in sync, cut the clip's \
        time range from every track with 'tape cut --ripple'). Markers move as a ripple cut \
        of the clip's time moves them: those after it left by its length, those inside it to \
        its start.
        Example: tape clip rm song.tape c3 --ripple
        """,
      aliases: ["remove"]
    ).parsedAlone()

    @OptionGroup var project: ProjectArgument
    @Argument(help: "The clip id (c1).", completion: ids("c")) var clip: String
    @Flag(help: "Move the later clips of its track left by its length.") var ripple = false
    @OptionGroup var options: EditOptions

    var label: String { "Remove \(clip)\(ripple ? " with ripple" : "")" }

    func edit(_ project: Project, _ ids: inout IDAllocator) throws -> [Command] {
      try project.removeClip(try parseClipID(clip, project), ripple: ripple)
    }

    /// The clip alone; a ripple moves the clips after it.
    func scope() throws -> EditScope? { ripple ? nil : clipScope(clip) }
  }
}

/// The scope of an edit of the clip `text` names (`c3` or `@NAME`), for
/// ``EditingCommand/scope()``, with the clips whose edges `times` name (`c5.end-1s`,
/// `@verse.end`, as
/// ``parsePosition(_:_:relativeTo:)`` reads them; markers are read whole); nil when the text
/// is neither, or an edge's id does not parse (the whole project's edit says why).
func clipScope(_ text: String, times: [String?] = []) -> EditScope? {
  var scope: EditScope
  if text.hasPrefix("@") {
    scope = EditScope(clipNames: [String(text.dropFirst())])
  } else if let id = Clip.ID(parsing: text) {
    scope = EditScope(clips: [id])
  } else {
    return nil
  }
  for time in times.compactMap({ $0 }) {
    let trimmed = time.trimmingCharacters(in: .whitespaces)
    // `@verse.end`: the clip called verse, if it is not a marker (markers are read whole).
    if trimmed.first == "@", TimeExpression.mayNameAnEdge(trimmed),
      let named = trimmed.wholeMatch(of: /@(.+)\.(?:start|end)(?:[+-].+)?/)
    {
      scope.clipNames.insert(String(named.1))
      continue
    }
    guard let edge = TimeExpression.clipEdge(trimmed) else { continue }
    guard let id = Clip.ID(parsing: String(edge.1)) else { return nil }
    scope.clips.insert(id)
  }
  return scope
}
