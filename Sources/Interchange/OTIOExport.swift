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
/// - Fades are also `Transition.1` (`SMPTE_Dissolve`), placed so that a reader that lengthens
///   clips into transitions as OTIO means (the reference library's
///   `track_with_expanded_transitions`) plays what Tape plays (`items(of:)`): two clips that
///   crossfade (``Lane/isCrossfade(_:_:)``, as `tape clip crossfade` makes them) are one lane
///   with one transition between them; any other fade is a dissolve from or into a gap.
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
  /// `start` is the timeline's `global_start_time` (its first frame's timecode: 01:00:00:00 in
  /// broadcast), in frames of its rate; none writes 0 at the project rate.
  public static func document(
    _ project: Project, name: String, start: (frames: Int64, rate: TimecodeRate)? = nil,
    path: (Source) -> [UInt8]
  ) -> JSON {
    let rate = Double(project.sampleRate)
    let sources = Dictionary(uniqueKeysWithValues: project.sources.map { ($0.id, $0) })
    let tracks = Lane.lanes(of: project, joiningCrossfades: true).map { lane in
      trackJSON(lane, project: project, sources: sources, path: path)
    }
    let tape = JSON.object([
      // 2: transitions lengthen the clips beside them as OTIO means, also where this
      // metadata gives the clips' fades (1 wrote a fade before an abutting clip as a dissolve
      // into it, and its clips were whole without their transitions).
      "format": .number(2),
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
      "global_start_time": start.map { start in
        let (numerator, denominator) = start.rate.framesPerSecond
        return time(Double(start.frames), Double(numerator) / Double(denominator))
      } ?? time(0, rate),
      "tracks": .object([
        "OTIO_SCHEMA": .string("Stack.1"),
        "metadata": .object([:]),
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
    if let source = effect.sidechain {
      members.append(JSON.Member("sidechain", .string(source.description)))
    }
    if !effect.automation.isEmpty {
      members.append(
        JSON.Member(
          "automation",
          .object(
            effect.automation.sorted { $0.key < $1.key }.map {
              JSON.Member($0.key, automationJSON($0.value))
            })))
    }
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

  /// An automation lane (a pan lane, an effect parameter's): its points, `frame`, `value` in
  /// the parameter's units and `shape` (`linear` or `hold`).
  static func automationJSON(_ lane: ParameterEnvelope) -> JSON {
    .array(
      lane.points.map { point in
        .object([
          "frame": .number(Double(point.time.frames)), "value": .number(point.value),
          "shape": .string(point.shape.rawValue),
        ])
      })
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
    let settings = JSON.object([
      "track": .string(track.id.description),
      "lane": .number(Double(lane.index)),
      "gainDB": .number(track.gain.decibels),
      "pan": .number(track.pan),
      "muted": .bool(track.isMuted),
      "solo": .bool(track.isSolo),
      "envelope": envelopeJSON(track.envelope),
      "effects": .array(track.effects.map(effectJSON)),
    ])
    // Routing and automation, only where the track has them (older readers ignore them).
    var extra: [JSON.Member] = []
    if let output = track.output {
      extra.append(JSON.Member("output", .string(output.description)))
    }
    if let lane = track.panEnvelope {
      extra.append(JSON.Member("panAutomation", automationJSON(lane)))
    }
    let sends = project.sends.filter { $0.from == track.id }
    if !sends.isEmpty {
      extra.append(
        JSON.Member(
          "sends",
          .array(
            sends.map { send in
              .object([
                "to": .string(send.to.description), "gainDB": .number(send.gain.decibels),
                "pan": .number(send.pan), "preFader": .bool(send.isPreFader),
                "envelope": envelopeJSON(send.envelope),
              ])
            })))
    }
    var tape = settings
    if !extra.isEmpty, case .object(let members) = settings { tape = .object(members + extra) }
    var children: [JSON] = []
    for item in items(of: lane) {
      switch item {
      case .gap(let length):
        children.append(
          .object([
            "OTIO_SCHEMA": .string("Gap.1"),
            "metadata": .object([:]),
            "name": .string(""),
            "source_range": range(0, length, rate),
            "effects": .array([]),
            "markers": .array([]),
            "enabled": .bool(true),
            "color": .null,
          ]))
      case .transition(let inOffset, let outOffset):
        children.append(
          .object([
            "OTIO_SCHEMA": .string("Transition.1"),
            "metadata": .object([:]),
            "name": .string(""),
            "in_offset": time(Double(inOffset), rate),
            "out_offset": time(Double(outOffset), rate),
            "transition_type": .string("SMPTE_Dissolve"),
          ]))
      case .clip(let clip, let sourceStart, let length):
        children.append(
          clipJSON(
            clip, sourceStart: sourceStart, length: length, project: project, sources: sources,
            path: path))
      }
    }
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

  /// One OTIO item of a lane, in order.
  enum Item: Equatable {
    /// Silence for `length` frames; 0 beside a fade's transition, which needs silence to
    /// dissolve from or into.
    case gap(Int64)
    /// A dissolve around the cut between the items beside it (``OTIOExport``).
    case transition(Int64, Int64)
    /// A clip as placed between its cuts: the part of its crop from `sourceStart` for `length`
    /// frames (less than the whole clip where a crossfade's transition plays the rest).
    case clip(Clip, sourceStart: Int64, length: Int64)
  }

  /// The items of `lane` (which may hold crossfading clips, ``Lane/isCrossfade(_:_:)``): what
  /// plays, as OTIO means its transitions.
  ///
  /// - Two crossfading clips meet at a cut in the middle of their overlap, with one transition
  ///   whose `in_offset` and `out_offset` reach back to where the later clip starts and on to
  ///   where the earlier one ends: a reader that lengthens both into it (as OTIO means) plays
  ///   each clip whole.
  /// - Any other fade is a dissolve from or into silence: a fade-in is a transition with an
  ///   `in_offset` of 0 after a gap, a fade-out one with an `out_offset` of 0 before a gap,
  ///   so a clip that abuts another gets a gap of length 0 between them (else a reader would
  ///   start the next clip early and fade it in: the dissolve Tape wrote before).
  static func items(of lane: Lane) -> [Item] {
    var items: [Item] = []
    let clips = lane.clips
    var position: Int64 = 0
    // A fade-out's transition was the last item: what follows must start with a gap.
    var afterFadeOut = false
    for (index, clip) in clips.enumerated() {
      let start = clip.timelineStart.frames
      let end = clip.timelineEnd.frames
      let joinedBefore = index > 0 && clips[index - 1].timelineEnd.frames > start
      let next = index + 1 < clips.count ? clips[index + 1] : nil
      let joinedAfter = next.map { $0.timelineStart.frames < end } ?? false
      var leftCut = start
      if joinedBefore {
        leftCut = position
      } else {
        let fadeIn = clip.fadeIn.length.frames
        if start > position {
          items.append(.gap(start - position))
        } else if afterFadeOut || (fadeIn > 0 && items.last.map(isGap) != true) {
          items.append(.gap(0))
        }
        if fadeIn > 0 { items.append(.transition(0, fadeIn)) }
      }
      let rightCut = next.map { joinedAfter ? cut(clip, $0) : end } ?? end
      items.append(
        .clip(
          clip, sourceStart: clip.sourceRange.start.frames + (leftCut - start),
          length: rightCut - leftCut))
      position = rightCut
      afterFadeOut = false
      if let next, joinedAfter {
        items.append(.transition(rightCut - next.timelineStart.frames, end - rightCut))
      } else if clip.fadeOut.length.frames > 0 {
        items.append(.transition(clip.fadeOut.length.frames, 0))
        afterFadeOut = true
      }
    }
    if afterFadeOut { items.append(.gap(0)) }
    return items
  }

  static func isGap(_ item: Item) -> Bool {
    if case .gap = item { return true }
    return false
  }

  /// Where two crossfading clips meet in OTIO: the middle of their overlap.
  static func cut(_ before: Clip, _ after: Clip) -> Int64 {
    let overlap = before.timelineEnd.frames - after.timelineStart.frames
    return after.timelineStart.frames + overlap / 2
  }

  /// The clips whose fades a range edit cut (``/Timeline/Fade/silentCut``,
  /// ``/Timeline/Fade/fullCut``) and that
  /// are not one side of a crossfade: OTIO's dissolves run from or to silence, so another tool
  /// fades them whole over the length that plays (Tape's own import keeps them exact).
  public static func partlyCutFades(_ project: Project) -> [Clip.ID] {
    var found: [Clip.ID] = []
    for lane in Lane.lanes(of: project, joiningCrossfades: true) {
      for (index, clip) in lane.clips.enumerated() {
        let joinedBefore = index > 0 && lane.clips[index - 1].timelineEnd > clip.timelineStart
        let joinedAfter =
          index + 1 < lane.clips.count && lane.clips[index + 1].timelineStart < clip.timelineEnd
        let cutIn = !joinedBefore && clip.fadeIn.length > .zero && !clip.fadeIn.isWhole
        let cutOut = !joinedAfter && clip.fadeOut.length > .zero && !clip.fadeOut.isWhole
        if cutIn || cutOut { found.append(clip.id) }
      }
    }
    return found.sorted()
  }

  static func clipJSON(
    _ clip: Clip, sourceStart: Int64, length: Int64, project: Project,
    sources: [Source.ID: Source], path: (Source) -> [UInt8]
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
          "metadata": .object([:]),
          "name": .string(fileName),
          "available_range": range(0, source.frameCount(atRate: project.sampleRate).frames, rate),
          "available_image_bounds": .null,
          "target_url": .string(FileURL.url(forAbsolutePath: bytes)),
        ])
      } else {
        .object([
          "OTIO_SCHEMA": .string("MissingReference.1"), "metadata": .object([:]),
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
      "source_range": range(sourceStart, length, rate),
      "effects": .array([]),
      "markers": .array([]),
      "enabled": .bool(true),
      "color": .null,
      "media_references": .object(["DEFAULT_MEDIA": reference]),
      "active_media_reference_key": .string("DEFAULT_MEDIA"),
    ])
  }
}
