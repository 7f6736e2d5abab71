import Foundation
public import Timeline

/// A `ProjectDiff` (Timeline) in words and in JSON: what `tape diff`, `tape watch`, `undo`, `redo` and
/// `checkout` print, and what an app can show for a version (its undo menu's "Undo Move c3",
/// a history list's lines).
///
/// A phrase a change: `c3 moved 0:01.000 → 0:03.000, t1 → t2`, `t2 renamed "a" → "b"`,
/// `f1 gain -6 → -12, bypassed`. ``boundedLines(_:)`` keeps any edit to one line's worth
/// (clips moved alike are one phrase); ``changesJSON(_:)`` lists every change with its values
/// before and after, as ``ProjectJSON`` shows them.
///
/// ```swift
/// let words = DiffWords(sampleRate: 48_000)
/// print(words.boundedLines(ProjectDiff(from: before, to: after)).joined(separator: "; "))
/// ```
public struct DiffWords: Sendable {
  /// The project's rate, for the times said.
  public let sampleRate: Int

  public init(sampleRate: Int) {
    self.sampleRate = sampleRate
  }

  public func time(_ frames: Int64) -> String {
    TimeValue.clock(FrameCount(frames), sampleRate: sampleRate)
  }

  /// `"name"`, with quotes, backslashes and control characters escaped: a name never breaks
  /// the line it is in.
  public func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        out += String(format: "\\u{%X}", scalar.value)
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }

  /// ``lines(_:bounded:)`` for one line of output whatever the edit's size (what `undo`, `redo`
  /// and `checkout` print): clips that all moved by the same amount and changed nothing else
  /// are one phrase (`c4…c5003 (5,000 clips) moved 0.3s left`), a long envelope is its point
  /// counts, and past ``boundedPhrases`` phrases the rest are counted (`--json` lists each).
  public func boundedLines(_ diff: ProjectDiff) -> [String] {
    var lines = lines(diff, bounded: true)
    if lines.count > Self.boundedPhrases {
      let rest = lines.count - Self.boundedPhrases + 1
      lines = Array(lines.prefix(Self.boundedPhrases - 1))
      lines.append("\(rest) more changes (--json lists them)")
    }
    return lines
  }

  /// The most phrases a bounded line has.
  public static let boundedPhrases = 12

  /// Envelopes longer than this are said by their point counts in a bounded line.
  public static let boundedEnvelopePoints = 8

  /// Groups of at least this many clips moved by the same amount are one phrase in a bounded
  /// line.
  public static let boundedMoveGroup = 3

  /// Clips that only moved along their track, by the same number of frames: by that shift,
  /// their ids in order.
  private func shiftedClips(_ diff: ProjectDiff) -> [(shift: Int64, ids: [Clip.ID])] {
    var groups: [Int64: [Clip.ID]] = [:]
    for change in diff.clips {
      guard let old = change.before, let new = change.after, old.track == new.track else {
        continue
      }
      let shift = new.clip.timelineStart.frames - old.clip.timelineStart.frames
      guard shift != 0, new.clip.moved(to: old.clip.timelineStart) == old.clip else { continue }
      groups[shift, default: []].append(change.id)
    }
    return groups.filter { $0.value.count >= Self.boundedMoveGroup }
      .map { (shift: $0.key, ids: $0.value.sorted()) }
      .sorted { $0.ids[0] < $1.ids[0] }
  }

  /// One phrase per changed source, track and clip; `bounded`, groups of moved clips and long
  /// envelopes said briefly (``boundedLines(_:)``).
  public func lines(_ diff: ProjectDiff, bounded: Bool = false) -> [String] {
    var lines: [String] = []
    if diff.formatChanged, let before = diff.before, let after = diff.after {
      lines.append(
        "format \(before.sampleRate) Hz \(before.channels) ch → \(after.sampleRate) Hz \(after.channels) ch"
      )
    }
    if diff.masterGainChanged, let before = diff.before, let after = diff.after {
      lines.append("master gain \(before.masterGain) → \(after.masterGain)")
    }
    for change in diff.sources {
      switch (change.before, change.after) {
      case (nil, let new?):
        lines.append("\(change.id) added (\(ProjectWords.escaped(new.path.description)))")
      case (let old?, nil):
        lines.append("\(change.id) removed (\(ProjectWords.escaped(old.path.description)))")
      case (let old?, let new?):
        lines.append(
          "\(change.id) relinked \(ProjectWords.escaped(old.path.description)) → \(ProjectWords.escaped(new.path.description))"
        )
      default: break
      }
    }
    for change in diff.tracks where !isShiftOnly(change, in: diff) {
      lines.append(trackWords(change, bounded: bounded))
    }
    var grouped = Set<Clip.ID>()
    if bounded {
      for group in shiftedClips(diff) {
        grouped.formUnion(group.ids)
        let count = ProjectWords.grouped(group.ids.count)
        let length = TimeValue.seconds(FrameCount(abs(group.shift)), sampleRate: sampleRate)
        lines.append(
          "\(group.ids[0])…\(group.ids[group.ids.count - 1]) (\(count) clips) moved \(length) \(group.shift < 0 ? "left" : "right")"
        )
      }
    }
    for change in diff.clips where !grouped.contains(change.id) {
      lines.append(clipWords(change))
    }
    for change in diff.effects {
      lines.append(effectWords(change))
    }
    for change in diff.markers {
      lines.append(markerWords(change))
    }
    for change in diff.sends {
      lines.append(sendWords(change))
    }
    return lines
  }

  /// `n1 added: t1 → t3 -6 dB pan C post-fader` (and its envelope, when it comes back with
  /// one: `…, envelope 0:00.500 0 dB → 0:00.800 -12 dB`), `n1 (t1 → t3) gain -6 dB → -3 dB,
  /// pre-fader`, `n1 removed (t1 → t3)`.
  private func sendWords(_ change: ProjectDiff.SendChange) -> String {
    let id = change.id
    func described(_ send: Send) -> String {
      let envelope =
        send.envelope.map { ", envelope \(ProjectWords.envelope($0, sampleRate: sampleRate))" }
        ?? ""
      return
        "\(send.from) → \(send.to) \(send.gain) pan \(ProjectWords.pan(send.pan)) \(send.isPreFader ? "pre" : "post")-fader\(envelope)"
    }
    switch (change.before, change.after) {
    case (nil, let new?): return "\(id) added: \(described(new))"
    case (let old?, nil): return "\(id) removed (\(old.from) → \(old.to))"
    case (let old?, let new?):
      var parts: [String] = []
      if old.from != new.from || old.to != new.to {
        parts.append("\(old.from) → \(old.to) now \(new.from) → \(new.to)")
      }
      if old.gain != new.gain { parts.append("gain \(old.gain) → \(new.gain)") }
      if old.pan != new.pan {
        parts.append("pan \(ProjectWords.pan(old.pan)) → \(ProjectWords.pan(new.pan))")
      }
      if old.envelope != new.envelope {
        parts.append(
          new.envelope.map { "envelope \(ProjectWords.envelope($0, sampleRate: sampleRate))" }
            ?? "envelope cleared")
      }
      if old.isPreFader != new.isPreFader {
        parts.append(new.isPreFader ? "pre-fader" : "post-fader")
      }
      return "\(id) (\(new.from) → \(new.to)) " + parts.joined(separator: ", ")
    default: return "\(id)"
    }
  }

  /// `m1 "chorus" added at 1:02.000`, `m1 "chorus" moved 1:02.000 → 1:03.000`,
  /// `m1 renamed "chorus" → "refrain"`, `m1 "chorus" removed (at 1:02.000)`.
  private func markerWords(_ change: ProjectDiff.MarkerChange) -> String {
    let id = change.id
    func quoted(_ name: String) -> String { "\"\(ProjectWords.escaped(name))\"" }
    switch (change.before, change.after) {
    case (nil, let new?):
      return "\(id) \(quoted(new.name)) added at \(time(new.position.frames))"
    case (let old?, nil):
      return "\(id) \(quoted(old.name)) removed (at \(time(old.position.frames)))"
    case (let old?, let new?):
      var parts: [String] = []
      if old.name != new.name { parts.append("renamed \(quoted(old.name)) → \(quoted(new.name))") }
      if old.position != new.position {
        parts.append(
          (old.name == new.name ? "\(quoted(new.name)) " : "")
            + "moved \(time(old.position.frames)) → \(time(new.position.frames))")
      }
      return "\(id) " + parts.joined(separator: ", ")
    default:
      return "\(id)"
    }
  }

  /// `f1 added to t1 at 0 (fil4#stereo)`, `f1 gain -6 → -12, bypassed`, `f1 moved t1 #1 → #0`,
  /// `f1 removed from t1 (fil4#stereo)`.
  private func effectWords(_ change: ProjectDiff.EffectChange) -> String {
    let id = change.id
    func short(_ uri: String) -> String {
      ProjectWords.escaped(uri.split(separator: "/").last.map(String.init) ?? uri)
    }
    switch (change.before, change.after) {
    case (nil, let new?):
      return
        "\(id) added to \(new.owner) at \(new.index) (\(short(new.effect.plugin)))\(new.effect.isBypassed ? ", bypassed" : "")\(new.effect.sidechain.map { ", sidechain \($0)" } ?? "")"
    case (let old?, nil):
      return "\(id) removed from \(old.owner) (\(short(old.effect.plugin)))"
    case (let old?, let new?):
      var parts: [String] = []
      if old.owner != new.owner {
        parts.append("moved \(old.owner) #\(old.index) → \(new.owner) #\(new.index)")
      } else if old.index != new.index {
        parts.append("moved \(old.owner) #\(old.index) → #\(new.index)")
      }
      let symbols = Set(old.effect.parameters.keys).union(new.effect.parameters.keys).sorted()
      for symbol in symbols where old.effect.parameters[symbol] != new.effect.parameters[symbol] {
        let value = { (value: Double?) in value.map { String(format: "%g", $0) } ?? "default" }
        parts.append(
          "\(ProjectWords.escaped(symbol)) \(value(old.effect.parameters[symbol])) → \(value(new.effect.parameters[symbol]))"
        )
      }
      let automated = Set(old.effect.automation.keys).union(new.effect.automation.keys).sorted()
      for symbol in automated where old.effect.automation[symbol] != new.effect.automation[symbol] {
        parts.append(
          new.effect.automation[symbol].map {
            "\(ProjectWords.escaped(symbol)) automation \(ProjectWords.automation($0, sampleRate: sampleRate))"
          } ?? "\(ProjectWords.escaped(symbol)) automation cleared")
      }
      if old.effect.isBypassed != new.effect.isBypassed {
        parts.append(new.effect.isBypassed ? "bypassed" : "turned on")
      }
      if old.effect.sidechain != new.effect.sidechain {
        let name = { (source: Track.ID?) in source?.description ?? "none" }
        parts.append("sidechain \(name(old.effect.sidechain)) → \(name(new.effect.sidechain))")
      }
      if old.effect.state != new.effect.state { parts.append("plugin state changed") }
      if old.effect.plugin != new.effect.plugin {
        parts.append("plugin \(short(old.effect.plugin)) → \(short(new.effect.plugin))")
      }
      return "\(id) " + parts.joined(separator: ", ")
    default:
      return "\(id)"
    }
  }

  /// Whether a track only changed row because tracks above it were added or removed (not
  /// worth a line: `t3 moved from row 3 to 2` after `t2 removed` is noise).
  private func isShiftOnly(_ change: ProjectDiff.TrackChange, in diff: ProjectDiff) -> Bool {
    guard let old = change.before, let new = change.after else { return false }
    var same = new
    same.index = old.index
    guard same == old else { return false }
    let removedAbove = diff.tracks.filter {
      $0.after == nil && ($0.before?.index ?? .max) < old.index
    }
    let addedAbove = diff.tracks.filter {
      $0.before == nil && ($0.after?.index ?? .max) < new.index
    }
    return new.index == old.index - removedAbove.count + addedAbove.count
  }

  private func trackWords(_ change: ProjectDiff.TrackChange, bounded: Bool = false) -> String {
    let id = change.id
    switch (change.before, change.after) {
    case (nil, let new?):
      var settings: [String] = []
      if new.gain != .unity { settings.append("gain \(new.gain)") }
      if new.pan != 0 { settings.append("pan \(ProjectWords.pan(new.pan))") }
      if new.isMuted { settings.append("muted") }
      if new.isSolo { settings.append("soloed") }
      if let output = new.output { settings.append("output \(output)") }
      return
        "\(id) added \(quoted(new.name))\(settings.isEmpty ? "" : " (" + settings.joined(separator: ", ") + ")")"
    case (let old?, nil): return "\(id) removed \(quoted(old.name))"
    case (let old?, let new?):
      var parts: [String] = []
      if old.name != new.name { parts.append("renamed \(quoted(old.name)) → \(quoted(new.name))") }
      if old.gain != new.gain { parts.append("gain \(old.gain) → \(new.gain)") }
      if old.pan != new.pan {
        parts.append("pan \(ProjectWords.pan(old.pan)) → \(ProjectWords.pan(new.pan))")
      }
      if old.isMuted != new.isMuted { parts.append(new.isMuted ? "muted" : "unmuted") }
      if old.isSolo != new.isSolo { parts.append(new.isSolo ? "soloed" : "unsoloed") }
      if old.output != new.output {
        parts.append(
          "output \(old.output?.description ?? "master") → \(new.output?.description ?? "master")")
      }
      if old.envelope != new.envelope {
        let counts = (old.envelope?.points.count ?? 0, new.envelope?.points.count ?? 0)
        if bounded, max(counts.0, counts.1) > Self.boundedEnvelopePoints, new.envelope != nil {
          parts.append("envelope of \(counts.1) points (was \(counts.0))")
        } else {
          parts.append(
            new.envelope.map { "envelope \(ProjectWords.envelope($0, sampleRate: sampleRate))" }
              ?? "envelope cleared")
        }
      }
      if old.panEnvelope != new.panEnvelope {
        parts.append(
          new.panEnvelope.map {
            "pan automation \(ProjectWords.automation($0, sampleRate: sampleRate))"
          } ?? "pan automation cleared")
      }
      if old.index != new.index {
        parts.append("moved from row \(old.index + 1) to \(new.index + 1)")
      }
      return "\(id) " + parts.joined(separator: ", ")
    default:
      return "\(id)"
    }
  }

  private func clipWords(_ change: ProjectDiff.ClipChange) -> String {
    let id = change.id
    switch (change.before, change.after) {
    case (nil, let new?):
      let clip = new.clip
      var settings = [
        "\(clip.source) from \(time(clip.sourceRange.start.frames))",
        "\(time(clip.length.frames)) long",
      ]
      if clip.gain != .unity { settings.append("gain \(clip.gain)") }
      if clip.fadeIn.length.frames > 0 { settings.append("fade-in \(fade(clip.fadeIn))") }
      if clip.fadeOut.length.frames > 0 { settings.append("fade-out \(fade(clip.fadeOut))") }
      if let name = clip.name { settings.append("named \(quoted(name))") }
      return
        "\(id) added on \(new.track) at \(time(clip.timelineStart.frames)) (\(settings.joined(separator: ", ")))"
    case (let old?, nil):
      return "\(id) removed from \(old.track) (was at \(time(old.clip.timelineStart.frames)))"
    case (let old?, let new?):
      var parts: [String] = []
      let (a, b) = (old.clip, new.clip)
      // A trim: an edge moved and the audio stayed where it was on the timeline.
      let shift = b.timelineStart.frames - a.timelineStart.frames
      let trimmed =
        old.track == new.track && a.source == b.source
        && b.sourceRange.start.frames - a.sourceRange.start.frames == shift
        && (shift != 0 || a.sourceRange.count != b.sourceRange.count)
      if trimmed {
        if shift != 0 {
          parts.append(
            "start trimmed \(time(a.timelineStart.frames)) → \(time(b.timelineStart.frames))")
        }
        if a.timelineEnd != b.timelineEnd {
          parts.append("end trimmed \(time(a.timelineEnd.frames)) → \(time(b.timelineEnd.frames))")
        }
      } else if a.timelineStart != b.timelineStart || old.track != new.track {
        var moved = "moved"
        if a.timelineStart != b.timelineStart {
          moved += " \(time(a.timelineStart.frames)) → \(time(b.timelineStart.frames))"
        }
        if old.track != new.track {
          moved += (moved == "moved" ? " " : ", ") + "\(old.track) → \(new.track)"
        }
        parts.append(moved)
      }
      if a.sourceRange != b.sourceRange && !trimmed {
        parts.append(
          "cropped \(time(a.sourceRange.start.frames))–\(time(a.sourceRange.end.frames)) → \(time(b.sourceRange.start.frames))–\(time(b.sourceRange.end.frames)) of \(b.source)"
        )
      }
      if a.source != b.source { parts.append("source \(a.source) → \(b.source)") }
      if a.gain != b.gain { parts.append("gain \(a.gain) → \(b.gain)") }
      if a.fadeIn != b.fadeIn { parts.append(fadeChange("fade-in", a.fadeIn, b.fadeIn)) }
      if a.fadeOut != b.fadeOut { parts.append(fadeChange("fade-out", a.fadeOut, b.fadeOut)) }
      switch (a.name, b.name) {
      case (nil, let new?): parts.append("named \(quoted(new))")
      case (let old?, nil): parts.append("name \(quoted(old)) removed")
      case (let old?, let new?) where old != new:
        parts.append("renamed \(quoted(old)) → \(quoted(new))")
      default: break
      }
      return "\(id) " + parts.joined(separator: ", ")
    default:
      return "\(id)"
    }
  }

  /// `fade-in 50ms linear → 1s s-curve`; a curve set where there is no fade yet says so.
  private func fadeChange(_ name: String, _ a: Fade, _ b: Fade) -> String {
    if a.length == b.length && a.length.frames == 0 {
      return "\(name) curve \(a.curve.displayName) → \(b.curve.displayName) (no \(name) yet)"
    }
    return "\(name) \(fade(a)) → \(fade(b))"
  }

  private func fade(_ fade: Fade) -> String {
    let seconds = { (frames: FrameCount) in TimeValue.seconds(frames, sampleRate: sampleRate) }
    return fade.length.frames == 0
      ? "none"
      : fade.isPartial
        ? "\(seconds(fade.length)) of \(seconds(fade.curveLength)) \(fade.curve.displayName)"
        : "\(seconds(fade.length)) \(fade.curve.displayName)"
  }

  /// Every change with its values before and after, as `ls --json` shows them (a clip's with
  /// its `track`, a track's with its `index` in the display order).
  public func changesJSON(_ diff: ProjectDiff) -> [JSON] {
    var items: [JSON] = []
    if diff.masterGainChanged, let before = diff.before, let after = diff.after {
      items.append(
        .object([
          ("kind", .string("master")),
          ("words", .string("master gain \(before.masterGain) → \(after.masterGain)")),
          ("before", .object([("gainDB", .number(before.masterGain.decibels))])),
          ("after", .object([("gainDB", .number(after.masterGain.decibels))])),
        ]))
    }
    for change in diff.sources {
      items.append(
        item(
          "source", change.id.description, lines(sourcesOnly(change)).first ?? "",
          before: change.before.map { ProjectJSON.source($0, projectRate: sampleRate) },
          after: change.after.map { ProjectJSON.source($0, projectRate: sampleRate) }))
    }
    for change in diff.tracks {
      let settings = { (settings: ProjectDiff.TrackSettings) in
        JSON.object([
          ("id", .string(change.id.description)), ("name", .string(settings.name)),
          ("gainDB", .number(settings.gain.decibels)), ("pan", .number(settings.pan)),
          ("muted", .bool(settings.isMuted)), ("solo", .bool(settings.isSolo)),
          ("envelope", ProjectJSON.envelope(settings.envelope)),
          ("index", .integer(Int64(settings.index))),
          ("output", .string(settings.output?.description ?? "master")),
          ("panAutomation", settings.panEnvelope.map(ProjectJSON.automation) ?? .null),
        ])
      }
      items.append(
        item(
          "track", change.id.description, trackWords(change), before: change.before.map(settings),
          after: change.after.map(settings)))
    }
    for change in diff.clips {
      let placed = { (placed: ProjectDiff.PlacedClip) in
        JSON.object(
          ProjectJSON.clipFields(placed.clip) + [("track", .string(placed.track.description))])
      }
      items.append(
        item(
          "clip", change.id.description, clipWords(change), before: change.before.map(placed),
          after: change.after.map(placed)))
    }
    for change in diff.effects {
      // As `ls --json` shows an effect, with its `chain` and `index` there.
      let placed = { (placed: ProjectDiff.PlacedEffect) -> JSON in
        .object(
          ProjectJSON.effectFields(placed.effect) + [
            ("chain", .string(placed.owner.description)), ("index", .integer(Int64(placed.index))),
          ])
      }
      items.append(
        item(
          "effect", change.id.description, effectWords(change), before: change.before.map(placed),
          after: change.after.map(placed)))
    }
    for change in diff.markers {
      items.append(
        item(
          "marker", change.id.description, markerWords(change),
          before: change.before.map(ProjectJSON.marker),
          after: change.after.map(ProjectJSON.marker)))
    }
    for change in diff.sends {
      items.append(
        item(
          "send", change.id.description, sendWords(change),
          before: change.before.map(ProjectJSON.send),
          after: change.after.map(ProjectJSON.send)))
    }
    return items
  }

  /// One item of ``changesJSON(_:)``: its `kind`, `id`, `words`, and its values `before` and
  /// `after` (null where it was added or removed).
  private func item(
    _ kind: String, _ id: String, _ words: String, before: JSON?, after: JSON?
  ) -> JSON {
    .object([
      ("kind", .string(kind)), ("id", .string(id)), ("words", .string(words)),
      ("before", before ?? .null), ("after", after ?? .null),
    ])
  }

  private func sourcesOnly(_ change: ProjectDiff.SourceChange) -> ProjectDiff {
    ProjectDiff(
      from: Project(
        sampleRate: sampleRate, channels: 2, sources: change.before.map { [$0] } ?? []),
      to: Project(sampleRate: sampleRate, channels: 2, sources: change.after.map { [$0] } ?? []))
  }
}
