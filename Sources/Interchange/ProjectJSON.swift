public import Timeline

/// A project and its parts as `tape ls --json` shows them: every time in frames at the
/// project's rate, keys in the order docs/reference/json.md lists them. `track ls`, `marker ls`,
/// `send ls` and `take ls` print these with `--json`; a change's `before` and `after` in
/// `tape diff --json` (``DiffWords/changesJSON(_:)``) are built from them, with what a change
/// needs beside (a clip's `track`, an effect's `chain` and `index`, a track's `index` in place
/// of its clips and effects).
///
/// Rule: a shape here is a contract that users' scripts read; add keys, never rename one.
///
/// ```swift
/// let text = ProjectJSON.project(project, version: 12, folder: "/music", missing: []).line
/// ```
public enum ProjectJSON {
  /// The whole `tape ls --json` document of `project` at `version`: its format, master gain,
  /// sources (each with `absolutePath`, resolved against `folder`, the project's absolute
  /// folder, and `missing`, whether it is in `missing`), tracks with their clips and effects, master effects, markers, sends and
  /// take groups.
  public static func project(
    _ project: Project, version: Int64, folder: RawPath, missing: Set<Source.ID>
  ) -> JSON {
    .object([
      ("version", .integer(version)),
      ("sampleRate", .integer(Int64(project.sampleRate))),
      ("channels", .integer(Int64(project.channels))),
      ("masterGainDB", .number(project.masterGain.decibels)),
      (
        "sources",
        .array(
          project.sources.map { source in
            .object(
              sourceFields(source, projectRate: project.sampleRate) + [
                ("absolutePath", .string(source.path.resolved(against: folder).description)),
                ("missing", .bool(missing.contains(source.id))),
              ])
          })
      ),
      (
        "tracks",
        .array(
          project.tracks.map { track in
            .object(
              trackFields(track) + [
                ("clips", .array(track.clips.map(clip))),
                ("effects", .array(track.effects.map(effect))),
              ])
          })
      ),
      ("masterEffects", .array(project.masterEffects.map(effect))),
      ("markers", .array(project.markers.map(marker))),
      ("sends", .array(project.sends.map(send))),
      ("takes", .array(project.takeGroups().map(takeGroup))),
    ])
  }

  /// A source: `path` as the project holds it (relative to the project's folder, or absolute;
  /// bytes that are not UTF-8 written `\xE9`, their exact bytes then in `pathHex`), `frames` at
  /// the source's own `sampleRate`, `projectFrames` the same length at the project's rate
  /// (what `--length` takes).
  public static func source(_ source: Source, projectRate: Int) -> JSON {
    .object(sourceFields(source, projectRate: projectRate))
  }

  /// ``source(_:projectRate:)``'s members, for an object that adds more.
  public static func sourceFields(_ source: Source, projectRate: Int) -> [(String, JSON)] {
    let hex: [(String, JSON)] =
      source.path.string == nil
      ? [("pathHex", .string(source.path.bytes.map(hexByte).joined()))] : []
    return [("id", .string(source.id.description)), ("path", .string(source.path.description))]
      + hex + [
        ("sampleRate", .integer(Int64(source.sampleRate))),
        ("channels", .integer(Int64(source.channels))),
        ("frames", .integer(source.frameCount.frames)),
        ("projectFrames", .integer(source.frameCount(atRate: projectRate).frames)),
      ]
  }

  /// A track's settings (its clips and effects aside): `id`, `name`, `gainDB`, `pan`, `muted`,
  /// `solo`, `envelope`, `output` (a bus's id or `master`) and `panAutomation`.
  public static func trackFields(_ track: Track) -> [(String, JSON)] {
    [
      ("id", .string(track.id.description)), ("name", .string(track.name)),
      ("gainDB", .number(track.gain.decibels)), ("pan", .number(track.pan)),
      ("muted", .bool(track.isMuted)), ("solo", .bool(track.isSolo)),
      ("envelope", envelope(track.envelope)),
      ("output", .string(track.output?.description ?? "master")),
      ("panAutomation", track.panEnvelope.map(automation) ?? .null),
    ]
  }

  /// A clip: ``clipFields(_:)`` as an object.
  public static func clip(_ clip: Clip) -> JSON {
    .object(clipFields(clip))
  }

  /// A clip's members: `id`, `source`, `timelineStart`, `sourceStart`, `length`, `gainDB`,
  /// `fadeIn` and `fadeOut` (each `length`, `curve`, and `silentCut` and `fullCut`: the frames
  /// of a longer curve a range edit cut away, 0 and 0 for a whole fade) and `name`.
  public static func clipFields(_ clip: Clip) -> [(String, JSON)] {
    let fade = { (fade: Fade) in
      JSON.object([
        ("length", .integer(fade.length.frames)), ("curve", .string(fade.curve.rawValue)),
        ("silentCut", .integer(fade.silentCut.frames)), ("fullCut", .integer(fade.fullCut.frames)),
      ])
    }
    return [
      ("id", .string(clip.id.description)), ("source", .string(clip.source.description)),
      ("timelineStart", .integer(clip.timelineStart.frames)),
      ("sourceStart", .integer(clip.sourceRange.start.frames)),
      ("length", .integer(clip.length.frames)),
      ("gainDB", .number(clip.gain.decibels)), ("fadeIn", fade(clip.fadeIn)),
      ("fadeOut", fade(clip.fadeOut)), ("name", clip.name.map(JSON.string) ?? .null),
    ]
  }

  /// An effect: ``effectFields(_:)`` as an object.
  public static func effect(_ effect: Effect) -> JSON {
    .object(effectFields(effect))
  }

  /// An effect's members: `id`, `plugin` (its LV2 URI), `bypassed`, `sidechain` (the track
  /// feeding its side-chain inputs, or null), `parameters` (port symbol → value, by
  /// ``parameter(_:)``), `hasState` (the plugin's own state is stored with it) and `automation`
  /// (port symbol → ``automation(_:)``).
  public static func effectFields(_ effect: Effect) -> [(String, JSON)] {
    [
      ("id", .string(effect.id.description)), ("plugin", .string(effect.plugin)),
      ("bypassed", .bool(effect.isBypassed)),
      ("sidechain", effect.sidechain.map { .string($0.description) } ?? .null),
      (
        "parameters",
        .object(effect.parameters.sorted { $0.key < $1.key }.map { ($0.key, parameter($0.value)) })
      ),
      ("hasState", .bool(effect.state != nil)),
      (
        "automation",
        .object(effect.automation.sorted { $0.key < $1.key }.map { ($0.key, automation($0.value)) })
      ),
    ]
  }

  /// A stored parameter value: one that is a Float (a plugin's ports are) as the shortest
  /// decimal that reads back as that Float, 0.3 rather than 0.30000001192092896; any other as
  /// it is.
  public static func parameter(_ value: Double) -> JSON {
    let float = Float(value)
    guard Double(float) == value, let shortest = Double(float.description) else {
      return .number(value)
    }
    return .number(shortest)
  }

  /// An automation lane (an effect parameter's, a pan's): its points in order, `frame` at the
  /// project rate, `value` in the parameter's units and `shape` (`linear` or `hold`: how the
  /// value runs to the next point).
  public static func automation(_ lane: ParameterEnvelope) -> JSON {
    .array(
      lane.points.map { point in
        .object([
          ("frame", .integer(point.time.frames)), ("value", parameter(point.value)),
          ("shape", .string(point.shape.rawValue)),
        ])
      })
  }

  /// An envelope: its points in order, `frame` at the project rate, `gainDB` (`null` for
  /// `-inf`, silence) and `shape` (`db`, `linear` or `hold`: how the gain runs to the next
  /// point); `null` for no envelope.
  public static func envelope(_ envelope: Envelope?) -> JSON {
    guard let envelope else { return .null }
    return .array(
      envelope.points.map { point in
        .object([
          ("frame", .integer(point.time.frames)),
          ("gainDB", point.decibels.isFinite ? .number(point.decibels) : .null),
          ("shape", .string(point.shape.rawValue)),
        ])
      })
  }

  /// A marker: `id`, `name`, `frame`.
  public static func marker(_ marker: Marker) -> JSON {
    .object([
      ("id", .string(marker.id.description)), ("name", .string(marker.name)),
      ("frame", .integer(marker.position.frames)),
    ])
  }

  /// A send: `id`, `from`, `to` (track ids), `gainDB`, `pan`, `tap` (`post` or `pre`) and
  /// `envelope`.
  public static func send(_ send: Send) -> JSON {
    .object([
      ("id", .string(send.id.description)), ("from", .string(send.from.description)),
      ("to", .string(send.to.description)), ("gainDB", .number(send.gain.decibels)),
      ("pan", .number(send.pan)), ("tap", .string(send.tap)),
      ("envelope", envelope(send.envelope)),
    ])
  }

  /// A take group: `track`, `start` and `length` (its range), `playing` (the clip that plays)
  /// and `takes`: each take's ``clipFields(_:)`` with `take` (its number, from 1) and
  /// `playing`.
  public static func takeGroup(_ group: TakeGroup) -> JSON {
    .object([
      ("track", .string(group.track.description)), ("start", .integer(group.range.start.frames)),
      ("length", .integer(group.range.count.frames)),
      ("playing", .string(group.playing.description)),
      (
        "takes",
        .array(
          group.takes.enumerated().map { index, clip in
            .object(
              [("take", .integer(Int64(index + 1)))] + clipFields(clip) + [
                ("playing", .bool(clip.id == group.playing))
              ])
          })
      ),
    ])
  }

  /// `0e`, `ff`: a byte as two lowercase hex digits.
  private static func hexByte(_ byte: UInt8) -> String {
    let hex = String(byte, radix: 16)
    return hex.count == 1 ? "0" + hex : hex
  }
}
