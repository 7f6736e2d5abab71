public import Timeline

/// A project for people, as `tape ls` prints it: a line of its format and length, its markers
/// and takes, its sources, then one table per track (its settings, effects, automation, sends
/// and a row per clip), the master's effects, and what to do about missing sources.
///
/// ```swift
/// print(TimelineTable(project, version: 12, file: "song.tape").text, terminator: "")
/// ```
public struct TimelineTable: Sendable {
  /// The listing, a newline after each line.
  public let text: String

  /// The listing of `project` at `version`: times as `m:ss.mmm`, or as raw frames (`96000f`)
  /// when `frames` is set; the sources in `missing` (their files gone) marked, with their clips,
  /// and the `tape relink` command for `file` that finds them (`file` is also in the other
  /// commands it suggests: `tape take ls`, `tape import`, `tape track add`).
  public init(
    _ project: Project, version: Int64, file: String = "FILE", frames inFrames: Bool = false,
    missing: Set<Source.ID> = []
  ) {
    let rate = project.sampleRate
    // In the commands it suggests, as the relink hint wrote it (not shell-quoted: the hint is
    // quoted as a whole, as the command line's hints are).
    let shownFile = ProjectWords.escaped(file)
    let clock = { (frames: Int64) in
      TimeValue.shown(FrameCount(frames), sampleRate: rate, inFrames: inFrames)
    }
    var lines = [
      "version \(version) · \(rate) Hz · \(project.channels == 1 ? "mono" : "stereo") · length \(clock(project.timelineEnd.frames))\(project.masterGain == .unity ? "" : " · master \(project.masterGain)")"
    ]
    if !project.markers.isEmpty {
      lines.append("markers \(ProjectWords.markers(project.markers) { clock($0) })")
    }
    for group in project.takeGroups() {
      let kept = group.takes.filter { $0.id != group.playing }.map(\.id.description)
      lines.append(
        "takes \(clock(group.range.start.frames))–\(clock(group.range.end.frames)) on \(group.track): \(group.playing) plays, \(kept.joined(separator: " ")) kept ('tape take ls \(shownFile) \(group.track)')"
      )
    }
    lines.append("")
    if project.sources.isEmpty {
      lines.append("no sources yet: tape import \(shownFile) AUDIO...")
    } else {
      lines.append("sources")
      for source in project.sources {
        // At the project's rate, as --length and --from take it.
        let length =
          inFrames
          ? "\(source.frameCount(atRate: rate).frames)f"
          : TimeValue.clock(source.frameCount, sampleRate: source.sampleRate)
        lines.append(
          "  \(ProjectWords.padded(source.id.description, 5)) \(length)  \(source.sampleRate) Hz \(source.channels == 1 ? "mono  " : "stereo")  \(ProjectWords.escaped(source.path.description))\(missing.contains(source.id) ? "  (missing)" : "")"
        )
      }
    }
    if project.tracks.isEmpty {
      lines.append("")
      lines.append("no tracks yet: tape track add \(shownFile) NAME")
    }
    for track in project.tracks {
      var flags: [String] = []
      if track.isMuted { flags.append("muted") }
      if track.isSolo { flags.append("solo") }
      lines.append("")
      lines.append(
        "\(track.id) \(ProjectWords.escaped(track.name))  gain \(track.gain)  pan \(ProjectWords.pan(track.pan))\(flags.isEmpty ? "" : "  [" + flags.joined(separator: ", ") + "]")"
      )
      if let envelope = track.envelope {
        lines.append(
          "  envelope \(ProjectWords.envelope(envelope, sampleRate: rate, frames: inFrames))")
      }
      if let lane = track.panEnvelope {
        lines.append(
          "  pan automation \(ProjectWords.automation(lane, sampleRate: rate, frames: inFrames))")
      }
      if !track.effects.isEmpty {
        lines.append("  effects \(TimelineScreen.chain(track.effects, separator: " · "))")
        lines += Self.sidechainLines(track.effects, project)
        lines += Self.automationLines(track.effects, sampleRate: rate, frames: inFrames)
      }
      if let output = track.output {
        lines.append("  output \(output)")
      }
      for send in project.sends where send.from == track.id {
        lines.append("  send \(ProjectWords.send(send))")
        if let envelope = send.envelope {
          lines.append(
            "    envelope \(ProjectWords.envelope(envelope, sampleRate: rate, frames: inFrames))")
        }
      }
      if track.clips.isEmpty {
        lines.append("  (no clips)")
        continue
      }
      let time = { (frames: FrameCount) in
        inFrames ? "\(frames.frames)f" : TimeValue.seconds(frames, sampleRate: rate)
      }
      // A fade a range edit cut: the part that plays, of how long a curve.
      let fade = { (fade: Fade) in
        fade.length.frames == 0
          ? "-"
          : fade.isPartial
            ? "\(time(fade.length)) of \(time(fade.curveLength)) \(fade.curve.displayName)"
            : "\(time(fade.length)) \(fade.curve.displayName)"
      }
      let rows = track.clips.map { clip in
        [
          clip.id.description, clip.source.description, clock(clip.timelineStart.frames),
          clock(clip.timelineEnd.frames), clock(clip.sourceRange.start.frames),
          clip.gain.description, fade(clip.fadeIn), fade(clip.fadeOut),
        ]
      }
      // Each column as wide as its longest text, and at least as it always was: a long fade,
      // gain or time pushed the rest of its line out of line.
      let header = ["clip", "source", "start", "end", "from", "gain", "fade in", "fade out"]
      let widths = zip([6, 7, 10, 10, 10, 8, 18, 0], header.indices).map { least, column in
        rows.reduce(least) { max($0, $1[column].count) }
      }
      // The last column padded only where a name follows it.
      let line = { (cells: [String], named: Bool) in
        zip(cells, widths).enumerated().map { column, cell in
          column == cells.count - 1 && !named ? cell.0 : ProjectWords.padded(cell.0, cell.1)
        }.joined(separator: " ")
      }
      lines.append("  " + line(header, false))
      for (clip, row) in zip(track.clips, rows) {
        lines.append(
          "\(missing.contains(clip.source) ? "! " : "  ")\(line(row, clip.name != nil))\(clip.name.map { "  @\(ProjectWords.escaped($0))" } ?? "")"
        )
      }
    }
    if !project.masterEffects.isEmpty {
      lines.append("")
      lines.append(
        "master effects \(TimelineScreen.chain(project.masterEffects, separator: " · "))")
      lines += Self.automationLines(project.masterEffects, sampleRate: rate, frames: inFrames)
    }
    if !missing.isEmpty {
      let ids = project.sources.filter { missing.contains($0.id) }.map(\.id.description)
      let clips = project.tracks.flatMap(\.clips).filter { missing.contains($0.source) }.count
      lines.append("")
      lines.append(
        "! \(ids.count == 1 ? "source \(ids[0]) is" : "sources \(ids.joined(separator: ", ")) are") missing (\(clips) clip\(clips == 1 ? "" : "s") marked !); point \(ids.count == 1 ? "it" : "each") at its file with 'tape relink \(shownFile) \(ids[0]) PATH', or find \(ids.count == 1 ? "it" : "them all") in a folder with 'tape relink \(shownFile) --folder DIR'"
      )
    }
    text = lines.joined(separator: "\n") + "\n"
  }

  /// The `ls` lines of the automated parameters of `effects`: `  automation f1 gain 0:02.000 0 →
  /// 0:04.000 -12`.
  private static func automationLines(
    _ effects: [Effect], sampleRate: Int, frames: Bool
  ) -> [String] {
    effects.flatMap { effect in
      effect.automation.sorted { $0.key < $1.key }.map { symbol, envelope in
        "  automation \(effect.id) \(ProjectWords.escaped(symbol)) \(ProjectWords.automation(envelope, sampleRate: sampleRate, frames: frames))"
      }
    }
  }

  /// The `ls` lines of the side chains of `effects`: `  sidechain f1 ← t2 (voice)`, the track
  /// whose post-fader output keys the effect, as `fx ls` names it.
  private static func sidechainLines(_ effects: [Effect], _ project: Project) -> [String] {
    effects.compactMap { effect in
      effect.sidechain.map { source in
        let name = project.track(source).map { " (\(ProjectWords.escaped($0.name)))" } ?? ""
        return "  sidechain \(effect.id) ← \(source)\(name)"
      }
    }
  }
}
