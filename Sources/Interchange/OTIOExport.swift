public import Timeline

/// A project as an OpenTimelineIO timeline (JSON, the `.otio` format of OTIO 0.18): what other
/// editors and the reference implementation read.
///
/// - Each lane of each track (``Lane``) is one `Track.1` of kind `"Audio"`: a track whose clips
///   overlap is spread over extra tracks named after it (`Drums`, `Drums (2)`).
/// - A clip is a `Clip.2` whose `source_range` is its crop at the project rate, with an
///   `ExternalReference.1` to its source's file (an absolute `file://` URL) whose
///   `available_range` is the source's length at the project rate; a `Gap.1` fills each stretch
///   where nothing plays.
/// - Fades are also `Transition.1` (`SMPTE_Dissolve`) at the clip's edges, so that other tools
///   see them: `in_offset` is the fade-out of the clip before the edge, `out_offset` the
///   fade-in of the clip after it.
/// - What OTIO has no field for is kept exactly in `metadata["tape"]`: on the timeline the
///   format, master gain and effects and every source in order; on a track its gain, pan, mute,
///   solo, envelope, effects and which Tape track and lane it is; on a clip its id, gain and
///   fades (length in frames, curve). A muted track is also written `"enabled": false`.
/// - Markers are markers of the timeline's stack, at their frame, of zero length.
///
/// ```swift
/// let text = OTIOExport.document(project, name: "song") { source in absolutePath(source) }
///   .rendered()
/// ```
public enum OTIOExport {
  /// The timeline of `project`, named `name`; `path` gives each source's absolute path.
  public static func document(
    _ project: Project, name: String, path: (Source) -> [UInt8]
  ) -> JSON {
    let rate = Double(project.sampleRate)
    let sources = Dictionary(uniqueKeysWithValues: project.sources.map { ($0.id, $0) })
    let tracks = Lane.lanes(of: project).map { lane in
      trackJSON(lane, project: project, sources: sources, path: path)
    }
    let tape = JSON.object([
      "format": .number(1),
      "sampleRate": .number(rate),
      "channels": .number(Double(project.channels)),
      "masterGainDB": .number(project.masterGain.decibels),
      "masterEffects": .array(project.masterEffects.map(effectJSON)),
      "sources": .array(
        project.sources.map { source in
          .object([
            "id": .string(source.id.description),
            "url": .string(FileURL.url(forAbsolutePath: path(source))),
          ])
        }),
    ])
    return .object([
      "OTIO_SCHEMA": .string("Timeline.1"),
      "metadata": .object(["tape": tape]),
      "name": .string(name),
      "global_start_time": time(0, rate),
      "tracks": .object([
        "OTIO_SCHEMA": .string("Stack.1"),
        "metadata": .object([]),
        "name": .string("tracks"),
        "source_range": .null,
        "effects": .array([]),
        "markers": .array(project.markers.map { markerJSON($0, rate: rate) }),
        "enabled": .bool(true),
        "color": .null,
        // Never null: the reference reader crashes on `"children": null`.
        "children": .array(tracks),
      ]),
    ])
  }

  /// A `RationalTime.1` of `value` at `rate`.
  static func time(_ value: Double, _ rate: Double) -> JSON {
    .object([
      "OTIO_SCHEMA": .string("RationalTime.1"), "rate": .number(rate), "value": .number(value),
    ])
  }

  /// A `TimeRange.1` from `start` for `duration` frames at `rate`.
  static func range(_ start: Int64, _ duration: Int64, _ rate: Double) -> JSON {
    .object([
      "OTIO_SCHEMA": .string("TimeRange.1"),
      "duration": time(Double(duration), rate),
      "start_time": time(Double(start), rate),
    ])
  }

  /// A fade: its length and curve, and the parts of its curve a range edit cut away when there
  /// are any (``Fade/silentCut``, ``Fade/fullCut``), so that the audio that stays keeps its gain.
  static func fadeJSON(_ fade: Fade) -> JSON {
    var members = [
      JSON.Member("length", .number(Double(fade.length.frames))),
      JSON.Member("curve", .string(fade.curve.rawValue)),
    ]
    if fade.silentCut.frames > 0 {
      members.append(JSON.Member("silentCut", .number(Double(fade.silentCut.frames))))
    }
    if fade.fullCut.frames > 0 {
      members.append(JSON.Member("fullCut", .number(Double(fade.fullCut.frames))))
    }
    return .object(members)
  }

  static func effectJSON(_ effect: Effect) -> JSON {
    var members: [JSON.Member] = [
      JSON.Member("plugin", .string(effect.plugin)),
      JSON.Member("bypassed", .bool(effect.isBypassed)),
      JSON.Member(
        "parameters",
        .object(
          effect.parameters.sorted { $0.key < $1.key }.map {
            JSON.Member($0.key, .number($0.value))
          }
        )),
    ]
    if let state = effect.state {
      members.append(
        JSON.Member(
          "state",
          .string(
            state.map { byte in
              let hex = String(byte, radix: 16)
              return hex.count == 1 ? "0" + hex : hex
            }.joined())))
    }
    return .object(members)
  }

  static func envelopeJSON(_ envelope: Envelope?) -> JSON {
    guard let envelope else { return .null }
    return .array(
      envelope.points.map { point in
        .object([
          "frame": .number(Double(point.time.frames)),
          "gainDB": point.decibels.isFinite ? .number(point.decibels) : .null,
          "shape": .string(point.shape.rawValue),
        ])
      })
  }

  static func markerJSON(_ marker: Marker, rate: Double) -> JSON {
    .object([
      "OTIO_SCHEMA": .string("Marker.2"),
      "metadata": .object(["tape": .object(["id": .string(marker.id.description)])]),
      "name": .string(marker.name),
      "color": .string("RED"),
      "marked_range": range(marker.position.frames, 0, rate),
      "comment": .string(""),
    ])
  }

  static func trackJSON(
    _ lane: Lane, project: Project, sources: [Source.ID: Source], path: (Source) -> [UInt8]
  ) -> JSON {
    let rate = Double(project.sampleRate)
    let track = lane.track
    let tape = JSON.object([
      "track": .string(track.id.description),
      "lane": .number(Double(lane.index)),
      "gainDB": .number(track.gain.decibels),
      "pan": .number(track.pan),
      "muted": .bool(track.isMuted),
      "solo": .bool(track.isSolo),
      "envelope": envelopeJSON(track.envelope),
      "effects": .array(track.effects.map(effectJSON)),
    ])
    var children: [JSON] = []
    var position: Int64 = 0
    // The fade-out of the clip before the current edge: written with the next item's fade-in
    // as one transition.
    var pendingFadeOut: Int64 = 0
    func transition(_ fadeOut: Int64, _ fadeIn: Int64) {
      guard fadeOut > 0 || fadeIn > 0 else { return }
      children.append(
        .object([
          "OTIO_SCHEMA": .string("Transition.1"),
          "metadata": .object([]),
          "name": .string(""),
          "in_offset": time(Double(fadeOut), rate),
          "out_offset": time(Double(fadeIn), rate),
          "transition_type": .string("SMPTE_Dissolve"),
        ]))
    }
    for clip in lane.clips {
      let start = clip.timelineStart.frames
      if start > position {
        transition(pendingFadeOut, 0)
        pendingFadeOut = 0
        children.append(
          .object([
            "OTIO_SCHEMA": .string("Gap.1"),
            "metadata": .object([]),
            "name": .string(""),
            "source_range": range(0, start - position, rate),
            "effects": .array([]),
            "markers": .array([]),
            "enabled": .bool(true),
            "color": .null,
          ]))
      }
      transition(pendingFadeOut, clip.fadeIn.length.frames)
      pendingFadeOut = clip.fadeOut.length.frames
      children.append(clipJSON(clip, project: project, sources: sources, path: path))
      position = clip.timelineEnd.frames
    }
    transition(pendingFadeOut, 0)
    return .object([
      "OTIO_SCHEMA": .string("Track.1"),
      "metadata": .object(["tape": tape]),
      "name": .string(lane.name),
      "source_range": .null,
      "effects": .array([]),
      "markers": .array([]),
      "enabled": .bool(!track.isMuted),
      "color": .null,
      "children": .array(children),
      "kind": .string("Audio"),
    ])
  }

  static func clipJSON(
    _ clip: Clip, project: Project, sources: [Source.ID: Source], path: (Source) -> [UInt8]
  ) -> JSON {
    let rate = Double(project.sampleRate)
    let source = sources[clip.source]
    let bytes = source.map(path) ?? []
    let fileName = String(
      decoding: bytes.split(separator: UInt8(ascii: "/")).last ?? [], as: UTF8.self)
    let reference: JSON =
      if let source {
        .object([
          "OTIO_SCHEMA": .string("ExternalReference.1"),
          "metadata": .object([]),
          "name": .string(fileName),
          "available_range": range(0, source.frameCount(atRate: project.sampleRate).frames, rate),
          "available_image_bounds": .null,
          "target_url": .string(FileURL.url(forAbsolutePath: bytes)),
        ])
      } else {
        .object([
          "OTIO_SCHEMA": .string("MissingReference.1"), "metadata": .object([]),
          "name": .string(""),
        ])
      }
    var tape = [
      JSON.Member("id", .string(clip.id.description)),
      JSON.Member("source", .string(clip.source.description)),
      JSON.Member("gainDB", .number(clip.gain.decibels)),
      JSON.Member("fadeIn", fadeJSON(clip.fadeIn)),
      JSON.Member("fadeOut", fadeJSON(clip.fadeOut)),
    ]
    if let name = clip.name { tape.append(JSON.Member("name", .string(name))) }
    return .object([
      "OTIO_SCHEMA": .string("Clip.2"),
      "metadata": .object(["tape": .object(tape)]),
      // A clip's own name where it has one: what another tool shows.
      "name": .string(clip.name ?? (fileName.isEmpty ? clip.id.description : fileName)),
      "source_range": range(clip.sourceRange.start.frames, clip.length.frames, rate),
      "effects": .array([]),
      "markers": .array([]),
      "enabled": .bool(true),
      "color": .null,
      "media_references": .object(["DEFAULT_MEDIA": reference]),
      "active_media_reference_key": .string("DEFAULT_MEDIA"),
    ])
  }
}
