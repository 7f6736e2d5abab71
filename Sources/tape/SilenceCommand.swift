import ArgumentParser
import AudioFiles
import Foundation
import Mixing
import Timeline
import TimelineStore

struct Silences: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "silences",
    abstract: "List the quiet stretches of the mix or a track, or cut them out (strip silence).",
    discussion: """
      A quiet stretch is one where every sample of the mix (or of --track's stem: the track as \
      it plays, its mute and solo set aside) stays below --below, for at least --longer. Each \
      is listed with its start and end (--json: an array of {"start", "end"} in frames).
      With --cut, each stretch is cut from the tracks (every track for the mix, --track's \
      alone otherwise), keeping --pad of it at each end so that words do not touch, all in \
      one version; --ripple closes the gaps, as 'tape cut --ripple' does.
      Example: tape silences song.tape --below -50dB --longer 400ms
      Example: tape silences song.tape --track t1 --cut --ripple --pad 100ms
      """)

  @OptionGroup var project: ProjectArgument
  @Option(
    name: [.customLong("track"), .customLong("tracks")],
    help: "Only this track's stem, by id or name (default: the whole mix).", completion: ids("t"))
  var track: String?
  @Option(parsing: .unconditional, help: "The level a quiet sample stays below.")
  var below = "-50dB"
  @Option(parsing: .unconditional, help: "How long a quiet stretch lasts at least.")
  var longer = "400ms"
  @Flag(help: "Cut the quiet stretches out (one version).") var cut = false
  @Flag(help: "With --cut: close the gaps, moving everything after each left.") var ripple = false
  @Option(
    parsing: .unconditional, help: "With --cut: how much of each stretch to keep at each end.")
  var pad = "100ms"
  @OptionGroup var times: TimeDisplayOption
  @OptionGroup var options: EditOptions

  func validate() throws {
    if ripple && !cut { throw ValidationError("--ripple goes with --cut") }
    if options.message != nil && !cut { throw ValidationError("-m labels the version --cut makes") }
  }

  func run() throws {
    try reportingErrors(readerMayStop: !cut) {
      let file = self.project.file
      let store = try retryingReads { try openStore(file, access: cut ? .write : .read) }
      let project = store.snapshot.project
      let chosen = try track.map { try resolveTrack($0, project) }
      let threshold = try Gain(parsing: below)
      let minimum = try parseTime(longer, project, option: "--longer")
      guard minimum > .zero else {
        throw UsageError(message: "--longer \(longer) is no time; give how long a silence lasts")
      }
      let quiet = try Self.quietRanges(
        project, cache: AudioCache(forProject: file), track: chosen,
        below: Float(threshold.linear), longer: minimum)
      guard cut else {
        print(listing(quiet, sampleRate: project.sampleRate), terminator: "")
        return
      }
      let keep = try parseTime(pad, project, option: "--pad")
      let cuts = quiet.compactMap { range -> FrameRange? in
        let start = range.start + keep
        let end = range.end - keep
        return end > start ? FrameRange(start: start, end: end) : nil
      }
      let label =
        options.message
        ?? "Strip silence below \(below) longer than \(longer)\(track.map { " on \($0)" } ?? "") (\(cuts.count) cut\(cuts.count == 1 ? "" : "s"))"
      let result = try store.edit(label: label) { current, ids in
        guard current == project else {
          throw DataError(
            message:
              "\(file) changed while its silences were measured; run the command again")
        }
        // From the last to the first, so that a ripple leaves the earlier ranges in place.
        var edited = current
        var commands: [Command] = []
        for range in cuts.reversed() {
          let made = try edited.cutRange(
            range, tracks: chosen.map { [$0] }, ripple: ripple
          ) { ids.newClipID() }
          edited = try edited.applying(made)
          commands += made
        }
        return commands
      }
      if result.changed.isEmpty {
        writeOut(
          "note: no silence to cut; nothing changed; the project stays at version \(result.version)\n"
        )
      }
      try MutationOutput(version: result.version, ids: result.newIDs).print(json: options.json)
    }
  }

  private func listing(_ ranges: [FrameRange], sampleRate: Int) -> String {
    if options.json {
      return JSONValue.array(
        ranges.map {
          .object([("start", .int($0.start.frames)), ("end", .int($0.end.frames))])
        }
      ).rendered + "\n"
    }
    let show = { (frames: Int64) in times.show(frames, sampleRate: sampleRate) }
    return ranges.map {
      "\(show($0.start.frames))\t\(show($0.end.frames))\t\(show($0.count.frames))\n"
    }.joined()
  }

  /// The stretches of `project`'s mix before its effects (or of `track`'s stem) from 0 to its end where every
  /// sample of every channel is below `below` in magnitude, for at least `longer`.
  static func quietRanges(
    _ project: Project, cache: AudioCache, track: Track.ID?, below: Float, longer: FrameCount
  ) throws -> [FrameRange] {
    var analysed = try track.map { try project.stem(of: [$0], masterGain: true) } ?? project
    // The clips' silences, not the effects': a reverb's tail or a gate would move every
    // boundary, and a cut is made in the clips. (And no plugin needs to be installed.)
    analysed.masterEffects = []
    // Nor routing: each track's clips straight to the sum (buses would need a rack).
    analysed.sends = []
    for index in analysed.tracks.indices {
      analysed.tracks[index].effects = []
      analysed.tracks[index].output = nil
    }
    let end = project.timelineEnd.frames
    let audio = try cache.sources(for: analysed)
    let plan = try RenderPlan(project: analysed, audio: audio.audio)
    let channels = plan.outputChannels
    let block = 16_384
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * channels)
    defer { buffer.deallocate() }
    var ranges: [FrameRange] = []
    var quietSince: Int64? = 0
    var position: Int64 = 0
    func close(at frame: Int64) {
      if let start = quietSince, frame - start >= longer.frames {
        ranges.append(FrameRange(start: FramePosition(start), end: FramePosition(frame)))
      }
      quietSince = nil
    }
    while position < end {
      let frames = Int(min(Int64(block), end - position))
      try audio.makeResident(plan, range: position..<position + Int64(frames))
      RenderKernel.render(plan.view, from: position, frames: frames, into: buffer)
      for frame in 0..<frames {
        var loud = false
        for channel in 0..<channels where abs(buffer[frame * channels + channel]) >= below {
          loud = true
        }
        if loud {
          close(at: position + Int64(frame))
        } else if quietSince == nil {
          quietSince = position + Int64(frame)
        }
      }
      position += Int64(frames)
    }
    close(at: end)
    return ranges
  }
}
