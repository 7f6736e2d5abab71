public import Timeline

/// Why an OTIO file cannot be imported: one line that says what to fix.
public struct InterchangeError: Error, Sendable, Hashable, CustomStringConvertible {
  public let description: String

  public init(_ description: String) {
    self.description = description
  }
}

/// Where the ids of an imported project come from: the store's allocator, so that later edits
/// go on from them.
public protocol ImportIDs {
  mutating func newSourceID() -> Source.ID
  mutating func newTrackID() -> Track.ID
  mutating func newClipID() -> Clip.ID
  mutating func newEffectID() -> Effect.ID
  mutating func newMarkerID() -> Marker.ID
}

/// An OpenTimelineIO timeline read for import: its audio tracks as Tape tracks, before the
/// media files are read (``media`` says which to read; ``commands(sources:lengths:ids:)``
/// then makes the project).
///
/// - Tracks of kind `"Audio"` are imported; others (video) are counted in ``skippedTracks``.
/// - `metadata["tape"]`, written by ``OTIOExport``, is honoured: tracks of one Tape track are
///   merged back into it, and gains, pan, mute, solo, envelopes, effects and exact fades are
///   taken from it.
/// - Otherwise a transition is a linear fade (a dissolve): between two clips both are lengthened
///   into it as OTIO means (the one before by `out_offset`, the one after by `in_offset`, from
///   their media's handles) and fade over `in_offset + out_offset`; beside a gap or a track's
///   edge the clip fades over its side of it. A track with `"enabled": false` is muted.
/// - Times at any rate are converted to the project's, rounded to the nearest frame.
public struct OTIOTimeline: Sendable {
  /// One audio file the timeline uses.
  public struct Media: Sendable, Hashable {
    /// The absolute path.
    public var path: RawPath
  }

  /// One clip to make.
  struct ImportedClip: Sendable {
    var name: String
    var media: Int
    var timelineStart: Int64
    var sourceStart: Int64
    var length: Int64
    var gain: Gain
    var fadeIn: Fade
    var fadeOut: Fade
    /// From `metadata["tape"]`: exact, never adjusted.
    var exact: Bool
    /// The original Tape id's number, which orders clips that start together.
    var order: Int64
    /// From `metadata["tape"]`: the clip's Tape name (`@NAME`).
    var clipName: String? = nil
  }

  /// One Tape track to make.
  struct ImportedTrack: Sendable {
    var key: String?
    var name: String
    var gain: Gain = .unity
    var pan: Double = 0
    var muted = false
    var solo = false
    var envelope: Envelope?
    var effects: [Effect] = []
    var clips: [ImportedClip] = []
  }

  public var sampleRate: Int
  public var channels: Int
  public var masterGain: Gain = .unity
  var masterEffects: [Effect] = []
  /// Every file to read, in the order sources get their ids.
  public var media: [Media] = []
  var tracks: [ImportedTrack] = []
  var markers: [(name: String, position: Int64, order: Int64)] = []
  /// Names of the tracks that are not audio (video), which are not imported.
  public var skippedTracks: [String] = []
  /// What the import could not take as it was, for stderr.
  public var notes: [String] = []

  /// Reads the OTIO JSON `text`. Relative media paths are taken from `folder` (the OTIO file's,
  /// absolute); `rate` and `channels` override the project format (else the file's
  /// `metadata["tape"]`, else the clips' rate when it is an audio rate, else 48000 Hz; stereo).
  public init(
    parsing text: String, folder: RawPath, rate: Int? = nil, channels: Int? = nil
  ) throws(InterchangeError) {
    let root: JSON
    do {
      root = try JSON(parsing: text)
    } catch {
      throw InterchangeError("it is not JSON (\(error)); export it again as .otio")
    }
    guard let schema = root["OTIO_SCHEMA"]?.string else {
      throw InterchangeError(
        "it is not an OpenTimelineIO file (no OTIO_SCHEMA); export it again as .otio")
    }
    guard schema.hasPrefix("Timeline.") else {
      throw InterchangeError("it holds a \(schema), not a Timeline; export a timeline as .otio")
    }
    let tape = root["metadata"]?["tape"]
    let stack = root["tracks"]
    let children = stack?["children"]?.array ?? []
    let fileRate = try Self.firstClipRate(children)
    sampleRate =
      rate ?? (tape?["sampleRate"]?.number).map { Int($0) }
      ?? fileRate.flatMap { Project.supportedSampleRates.contains($0) ? $0 : nil } ?? 48_000
    self.channels = channels ?? (tape?["channels"]?.number).map { Int($0) } ?? 2
    if let tape {
      masterGain = Gain(decibels: try Self.number(tape["masterGainDB"], "masterGainDB") ?? 0)
      masterEffects = try Self.effects(tape["masterEffects"])
      for source in tape["sources"]?.array ?? [] {
        if let url = source["url"]?.string {
          _ = try mediaIndex(url, folder: folder, clip: "a source")
        }
      }
    }
    var byKey: [String: Int] = [:]
    var audioTracks = 0
    for (number, child) in children.enumerated() {
      let name = child["name"]?.string ?? ""
      let shown = name.isEmpty ? "track \(number + 1)" : "'\(name)'"
      guard child["OTIO_SCHEMA"]?.string?.hasPrefix("Track.") == true else {
        throw InterchangeError(
          "the timeline holds a \(child["OTIO_SCHEMA"]?.string ?? "value") where a track should be; flatten it into tracks before importing"
        )
      }
      guard child["kind"]?.string == "Audio" else {
        skippedTracks.append(name.isEmpty ? "track \(number + 1)" : name)
        continue
      }
      audioTracks += 1
      let meta = child["metadata"]?["tape"]
      var track = ImportedTrack(
        key: meta?["track"]?.string, name: name.isEmpty ? "Audio \(audioTracks)" : name)
      if let meta {
        track.name = meta["lane"]?.number.map { $0 > 0 ? Self.laneBase(name) : name } ?? track.name
        track.gain = Gain(decibels: try Self.number(meta["gainDB"], "gainDB") ?? 0)
        track.pan = try Self.number(meta["pan"], "pan") ?? 0
        track.muted = meta["muted"]?.bool ?? false
        track.solo = meta["solo"]?.bool ?? false
        track.envelope = try Self.envelope(meta["envelope"])
        track.effects = try Self.effects(meta["effects"])
      } else {
        track.muted = child["enabled"]?.bool == false
      }
      track.clips = try clips(of: child, named: shown, folder: folder)
      if let key = track.key, let existing = byKey[key] {
        tracks[existing].clips += track.clips
        if meta?["lane"]?.number == 0 {
          let clips = tracks[existing].clips
          tracks[existing] = track
          tracks[existing].clips = clips
        }
      } else {
        if let key = track.key { byKey[key] = tracks.count }
        tracks.append(track)
      }
    }
    guard audioTracks > 0 else {
      let skipped =
        skippedTracks.isEmpty
        ? "no tracks at all"
        : "only \(skippedTracks.count) track\(skippedTracks.count == 1 ? "" : "s") of another kind (video)"
      throw InterchangeError(
        "it has no audio tracks (\(skipped)); Tape imports tracks of kind \"Audio\" only")
    }
    for (index, marker) in (stack?["markers"]?.array ?? []).enumerated() {
      guard let range = marker["marked_range"], let start = range["start_time"] else { continue }
      let position = try frames(start, "a marker's start")
      let name = marker["name"]?.string ?? ""
      let order =
        (marker["metadata"]?["tape"]?["id"]?.string).flatMap(Self.idNumber) ?? Int64(Int32.max)
        + Int64(index)
      markers.append((name, position, order))
    }
  }

  /// The base name of an extra lane's OTIO track: `Drums` for `Drums (2)`.
  static func laneBase(_ name: String) -> String {
    guard name.hasSuffix(")"), let open = name.lastIndex(of: "("), open > name.startIndex else {
      return name
    }
    let base = name[..<open]
    return base.hasSuffix(" ") ? String(base.dropLast()) : name
  }

  /// `3` for `c3`.
  static func idNumber(_ id: String) -> Int64? { Int64(id.drop { $0.isLetter }) }

  /// The rate of the first clip's source range, if any.
  static func firstClipRate(_ tracks: [JSON]) throws(InterchangeError) -> Int? {
    for track in tracks where track["kind"]?.string == "Audio" {
      for item in track["children"]?.array ?? []
      where item["OTIO_SCHEMA"]?.string?.hasPrefix("Clip.") == true {
        if let rate = item["source_range"]?["duration"]?["rate"]?.number, rate.isFinite, rate >= 1,
          rate < 1e7
        {
          return Int(rate.rounded())
        }
      }
    }
    return nil
  }

  static func number(_ value: JSON?, _ what: String) throws(InterchangeError) -> Double? {
    guard let value, !value.isNull else { return nil }
    guard let number = value.number, number.isFinite else {
      throw InterchangeError(
        "metadata[\"tape\"] \(what) is not a number; export it again from Tape")
    }
    return number
  }

  static func envelope(_ value: JSON?) throws(InterchangeError) -> Envelope? {
    guard let points = value?.array else { return nil }
    var result: [Envelope.Point] = []
    for point in points {
      guard let frame = try number(point["frame"], "envelope frame") else {
        throw InterchangeError(
          "metadata[\"tape\"] envelope point has no frame; export it again from Tape")
      }
      let decibels = try number(point["gainDB"], "envelope gain") ?? -.infinity
      let shape = point["shape"]?.string.flatMap(EnvelopeShape.init(rawValue:)) ?? .decibels
      result.append(
        Envelope.Point(time: FramePosition(Int64(frame)), decibels: decibels, shape: shape))
    }
    return Envelope(points: result)
  }

  /// Effects without ids (they get theirs when the project is made).
  static func effects(_ value: JSON?) throws(InterchangeError) -> [Effect] {
    var result: [Effect] = []
    for effect in value?.array ?? [] {
      guard let plugin = effect["plugin"]?.string else {
        throw InterchangeError("metadata[\"tape\"] effect has no plugin; export it again from Tape")
      }
      var parameters: [String: Double] = [:]
      for member in effect["parameters"]?.members ?? [] {
        parameters[member.key] = try number(member.value, "effect parameter") ?? 0
      }
      var state: [UInt8]?
      if let hex = effect["state"]?.string {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else {
          throw InterchangeError(
            "metadata[\"tape\"] effect state is not hex; export it again from Tape")
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
          guard
            let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)
          else {
            throw InterchangeError(
              "metadata[\"tape\"] effect state is not hex; export it again from Tape")
          }
          bytes.append(byte)
        }
        state = bytes
      }
      result.append(
        Effect(
          id: Effect.ID(0), plugin: plugin, parameters: parameters,
          isBypassed: effect["bypassed"]?.bool ?? false, state: state))
    }
    return result
  }

  /// A `RationalTime` in frames at the project rate, rounded to the nearest.
  func frames(_ time: JSON?, _ what: String) throws(InterchangeError) -> Int64 {
    guard let time, let value = time["value"]?.number, let rate = time["rate"]?.number,
      value.isFinite, rate.isFinite, rate > 0
    else {
      throw InterchangeError(
        "\(what) is not a time (a RationalTime with a value and a positive rate)")
    }
    let frames =
      rate == Double(sampleRate) ? value.rounded() : (value * Double(sampleRate) / rate).rounded()
    guard abs(frames) < 9e15 else {
      throw InterchangeError("\(what) is out of range (\(value) at \(rate))")
    }
    return Int64(frames)
  }

  /// The index in ``media`` of the file `url` names, added if new.
  mutating func mediaIndex(
    _ url: String, folder: RawPath, clip: String
  ) throws(InterchangeError) -> Int {
    guard let bytes = FileURL.path(fromURL: url) else {
      throw InterchangeError(
        "\(clip) refers to \(url), which is not a local file; Tape reads files (file:// URLs or paths)"
      )
    }
    let path = RawPath(bytes: bytes).resolved(against: folder).normalized
    if let index = media.firstIndex(where: { $0.path == path }) { return index }
    media.append(Media(path: path))
    return media.count - 1
  }

  /// The clips of one OTIO track, with fades from its transitions where they carry no
  /// `metadata["tape"]`.
  mutating func clips(
    of track: JSON, named shown: String, folder: RawPath
  ) throws(InterchangeError) -> [ImportedClip] {
    guard let children = track["children"]?.array ?? (track["children"]?.isNull != false ? [] : nil)
    else {
      throw InterchangeError("track \(shown)'s children are not a list")
    }
    var offset: Int64 = 0
    if let trim = track["source_range"], !trim.isNull {
      offset = -(try frames(trim["start_time"], "track \(shown)'s source_range"))
    }
    /// An item in order: a clip (its index in `result`), a gap, or a transition.
    enum Item { case clip(Int), gap, transition(Int64, Int64) }
    var items: [Item] = []
    var result: [ImportedClip] = []
    var position: Int64 = offset
    for (number, item) in children.enumerated() {
      let schema = item["OTIO_SCHEMA"]?.string ?? "value"
      let kind = schema.split(separator: ".").first.map(String.init) ?? schema
      let name = item["name"]?.string ?? ""
      let label =
        name.isEmpty ? "item \(number + 1) of track \(shown)" : "clip '\(name)' on track \(shown)"
      switch kind {
      case "Transition":
        let inOffset = try frames(item["in_offset"], "the in_offset of \(label)")
        let outOffset = try frames(item["out_offset"], "the out_offset of \(label)")
        guard inOffset >= 0, outOffset >= 0 else {
          throw InterchangeError(
            "\(label) has a negative offset; fix the transition in the tool that wrote it")
        }
        items.append(.transition(inOffset, outOffset))
      case "Gap":
        let length = try frames(item["source_range"]?["duration"], "the duration of \(label)")
        position += length
        items.append(.gap)
      case "Clip":
        let reference: JSON? =
          item["media_reference"]
          ?? item["media_references"]?[
            item["active_media_reference_key"]?.string ?? "DEFAULT_MEDIA"]
        let referenceSchema = reference?["OTIO_SCHEMA"]?.string ?? "MissingReference"
        let available = reference?["available_range"].flatMap { $0.isNull ? nil : $0 }
        guard let range = item["source_range"].flatMap({ $0.isNull ? nil : $0 }) ?? available else {
          throw InterchangeError(
            "\(label) has no source_range and its media no available_range; trim it in the tool that wrote it"
          )
        }
        let length = try frames(range["duration"], "the duration of \(label)")
        let start = try frames(range["start_time"], "the source start of \(label)")
        let mediaStart =
          try available.map { (range) throws(InterchangeError) in
            try frames(range["start_time"], "the available_range of \(label)'s media")
          } ?? 0
        defer { position += length }
        guard item["enabled"]?.bool != false else {
          notes.append("\(label) is disabled, so it was left out")
          items.append(.gap)
          continue
        }
        guard referenceSchema.hasPrefix("ExternalReference."),
          let url = reference?["target_url"]?.string
        else {
          let what = referenceSchema.split(separator: ".").first.map(String.init) ?? referenceSchema
          throw InterchangeError(
            "\(label) has no media file (its reference is a \(what)); link it to its audio file in the tool that wrote it"
          )
        }
        guard length > 0 else {
          notes.append("\(label) is shorter than a frame at \(sampleRate) Hz, so it was left out")
          items.append(.gap)
          continue
        }
        let media = try mediaIndex(url, folder: folder, clip: label)
        let meta = item["metadata"]?["tape"]
        var clip = ImportedClip(
          name: label, media: media, timelineStart: position, sourceStart: start - mediaStart,
          length: length, gain: .unity, fadeIn: .none, fadeOut: .none, exact: meta != nil,
          order: (meta?["id"]?.string).flatMap(Self.idNumber) ?? Int64(Int32.max)
            + Int64(result.count))
        if let meta {
          clip.clipName = meta["name"]?.string
          clip.gain = Gain(decibels: try Self.number(meta["gainDB"], "gainDB") ?? 0)
          clip.fadeIn = try Self.fade(meta["fadeIn"])
          clip.fadeOut = try Self.fade(meta["fadeOut"])
        }
        items.append(.clip(result.count))
        result.append(clip)
      default:
        throw InterchangeError(
          "track \(shown) holds a \(kind) (item \(number + 1)), which Tape cannot import; flatten it into clips in the tool that wrote it"
        )
      }
    }
    // Transitions into fades, for clips without exact fades.
    for (index, item) in items.enumerated() {
      guard case .transition(let inOffset, let outOffset) = item else { continue }
      let length = FrameCount(inOffset + outOffset)
      if index > 0, case .clip(let before) = items[index - 1], !result[before].exact {
        result[before].length += outOffset
        result[before].fadeOut = Fade(length: length)
      }
      if index + 1 < items.count, case .clip(let after) = items[index + 1], !result[after].exact {
        result[after].timelineStart -= inOffset
        result[after].sourceStart -= inOffset
        result[after].length += inOffset
        result[after].fadeIn = Fade(length: length)
      }
    }
    return result
  }

  static func fade(_ value: JSON?) throws(InterchangeError) -> Fade {
    guard let value, !value.isNull else { return .none }
    let length = try number(value["length"], "fade length") ?? 0
    guard let curve = FadeCurve(rawValue: value["curve"]?.string ?? "linear") else {
      throw InterchangeError(
        "metadata[\"tape\"] has an unknown fade curve; export it again from Tape")
    }
    let silentCut = try number(value["silentCut"], "fade silentCut") ?? 0
    let fullCut = try number(value["fullCut"], "fade fullCut") ?? 0
    guard length >= 0, silentCut >= 0, fullCut >= 0 else {
      throw InterchangeError(
        "metadata[\"tape\"] has a negative fade length; export it again from Tape")
    }
    return Fade(
      length: FrameCount(Int64(length)), curve: curve, silentCut: FrameCount(Int64(silentCut)),
      fullCut: FrameCount(Int64(fullCut)))
  }

  /// The commands that make the project: `sources[i]` is ``media``[i] registered (its length
  /// at the project rate read from the file). Clips whose media is too short for a transition's
  /// handles are shortened (noted); an exact clip outside its media is an error.
  public mutating func commands(
    sources made: [Source], ids: inout some ImportIDs
  ) throws(InterchangeError) -> [Command] {
    var commands: [Command] = []
    var sources: [Source] = []
    for source in made {
      let registered = Source(
        id: ids.newSourceID(), path: source.path, contentHash: source.contentHash,
        sampleRate: source.sampleRate, channels: source.channels, frameCount: source.frameCount)
      sources.append(registered)
      commands.append(.setSource(registered))
    }
    if masterGain != .unity { commands.append(.setMasterGain(masterGain)) }
    // Clip names, checked as a Tape edit checks them: a name that is not one, or a second clip
    // of that name, is left out with a note (the clip is kept).
    var clipNames: Set<String> = []
    for track in tracks {
      let id = ids.newTrackID()
      var clips: [Clip] = []
      for var clip in track.clips.sorted(by: {
        ($0.timelineStart, $0.order) < ($1.timelineStart, $1.order)
      }) {
        let source = sources[clip.media]
        let available = source.frameCount(atRate: sampleRate).frames
        let file = media[clip.media].path.lastComponent.description
        if !clip.exact {
          if clip.sourceStart < 0 && clip.fadeIn.length.frames > 0 {
            let short = min(-clip.sourceStart, clip.fadeIn.length.frames)
            clip.timelineStart += short
            clip.sourceStart += short
            clip.length -= short
            clip.fadeIn.length = FrameCount(clip.fadeIn.length.frames - short)
            notes.append(
              "\(clip.name): \(file) has too little audio before it for its whole fade-in; the fade was shortened"
            )
          }
          let over = clip.sourceStart + clip.length - available
          if over > 0 && clip.fadeOut.length.frames > 0 {
            let short = min(over, clip.fadeOut.length.frames)
            clip.length -= short
            clip.fadeOut.length = FrameCount(clip.fadeOut.length.frames - short)
            notes.append(
              "\(clip.name): \(file) has too little audio after it for its whole fade-out; the fade was shortened"
            )
          }
        }
        guard clip.sourceStart >= 0, clip.sourceStart + clip.length <= available, clip.length > 0
        else {
          let from = TimeValue.clock(FrameCount(clip.sourceStart), sampleRate: sampleRate)
          let to = TimeValue.clock(
            FrameCount(clip.sourceStart + clip.length), sampleRate: sampleRate)
          throw InterchangeError(
            "\(clip.name) plays \(clip.sourceStart < 0 ? "-" : "")\(from)–\(to) of \(file), which is only \(TimeValue.clock(FrameCount(available), sampleRate: sampleRate)) long; fix its source_range in the tool that wrote it"
          )
        }
        guard clip.timelineStart >= 0 else {
          throw InterchangeError(
            "\(clip.name) starts before the timeline does; move it in the tool that wrote it")
        }
        if !clip.exact && clip.fadeIn.length.frames + clip.fadeOut.length.frames > clip.length {
          let fadeIn = min(clip.fadeIn.length.frames, clip.length)
          clip.fadeIn.length = FrameCount(fadeIn)
          clip.fadeOut.length = FrameCount(min(clip.fadeOut.length.frames, clip.length - fadeIn))
          notes.append("\(clip.name): its transitions overlap; its fades were shortened to fit")
        }
        var clipName = clip.clipName
        if let name = clipName {
          do {
            try Clip.validateName(name)
            guard clipNames.insert(name).inserted else {
              throw InterchangeError("a second clip is called '\(name)'")
            }
          } catch {
            notes.append("\(clip.name): its name '\(name)' was left out: \(error)")
            clipName = nil
          }
        }
        clips.append(
          Clip(
            id: ids.newClipID(), source: source.id,
            timelineStart: FramePosition(clip.timelineStart),
            sourceRange: FrameRange(
              start: FramePosition(clip.sourceStart), count: FrameCount(clip.length)),
            gain: clip.gain, fadeIn: clip.fadeIn, fadeOut: clip.fadeOut, name: clipName))
      }
      commands.append(
        .setTrack(
          Track(
            id: id, name: track.name, gain: track.gain, pan: track.pan, isMuted: track.muted,
            isSolo: track.solo, envelope: track.envelope, clips: clips)))
      if !track.effects.isEmpty {
        commands.append(.setEffects(Self.withIDs(track.effects, &ids), on: .track(id)))
      }
    }
    if !masterEffects.isEmpty {
      commands.append(.setEffects(Self.withIDs(masterEffects, &ids), on: .master))
    }
    var names: Set<String> = []
    for marker in markers.sorted(by: { ($0.position, $0.order) < ($1.position, $1.order) }) {
      do {
        try Marker.validate(name: marker.name)
      } catch {
        notes.append("the marker '\(marker.name)' was left out: \(error)")
        continue
      }
      guard marker.position >= 0, names.insert(marker.name).inserted else {
        notes.append(
          "the marker '\(marker.name)' was left out (a second one of that name, or before the start)"
        )
        continue
      }
      commands.append(
        .setMarker(
          Marker(id: ids.newMarkerID(), name: marker.name, position: FramePosition(marker.position))
        ))
    }
    return commands
  }

  static func withIDs(_ effects: [Effect], _ ids: inout some ImportIDs) -> [Effect] {
    effects.map { effect in
      Effect(
        id: ids.newEffectID(), plugin: effect.plugin, parameters: effect.parameters,
        isBypassed: effect.isBypassed, state: effect.state)
    }
  }
}
