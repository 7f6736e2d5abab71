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
  mutating func newSendID() -> Send.ID
}

/// An OpenTimelineIO timeline read for import: its audio tracks as Tape tracks, before the
/// media files are read (``media`` says which to read; ``commands(sources:ids:)``
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
    /// The clips that play it, as messages name them (`clip 'one' on track 'Dialog'`).
    public var clips: [String] = []
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
    /// From `metadata["tape"]`: the clip's Tape name (`@NAME`); else another tool's name made
    /// to fit Tape's rules.
    var clipName: String? = nil
    /// Another tool's name for the clip, as it wrote it.
    var foreignName: String? = nil
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
    /// Effects without ids; a side chain names its source by the exported track's key (`t2`).
    var effects: [Effect] = []
    var clips: [ImportedClip] = []
    var panEnvelope: ParameterEnvelope?
    /// The exported track's key of its output, and its sends' (ids 0), each `to` a key.
    var output: String?
    var sends: [(to: String, send: Send)] = []
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
  /// `metadata["tape"]["format"]`: 0 for a file Tape did not write, 1 for one whose clips are
  /// whole without their transitions, 2 for one read as OTIO means (``OTIOExport``).
  var tapeFormat = 0
  /// The timeline's `global_start_time` as written, when it is not 0.
  public var startTimecode: String?
  /// Clip names of another tool's that were changed to fit Tape's (`Take 1` → `Take-1`).
  var adaptedNames: [(from: String, to: String)] = []

  /// The newest version of each schema this reader takes: a newer one may mean something it
  /// would misread.
  static let knownSchemas: [String: Int] = [
    "Timeline": 1, "Stack": 1, "Track": 1, "Clip": 2, "Gap": 1, "Transition": 1,
    "ExternalReference": 1, "MissingReference": 1, "GeneratorReference": 1,
    "ImageSequenceReference": 1, "Marker": 2, "LinearTimeWarp": 1, "FreezeFrame": 1,
    "TimeEffect": 1, "Effect": 1, "RationalTime": 1, "TimeRange": 1,
  ]

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
    try Self.checkSchema(root, "the timeline")
    let tape = root["metadata"]?["tape"]
    tapeFormat = Int(tape?["format"]?.number ?? 0)
    let stack = root["tracks"]
    if let stack { try Self.checkSchema(stack, "the timeline's stack") }
    let children = stack?["children"]?.array ?? []
    if rate == nil && tape?["sampleRate"]?.number == nil {
      try Self.refuseMixedRates(children)
    }
    let fileRate = try Self.firstClipRate(children)
    sampleRate =
      rate ?? (tape?["sampleRate"]?.number).map { Int($0) }
      ?? fileRate.flatMap { Project.supportedSampleRates.contains($0) ? $0 : nil } ?? 48_000
    if let start = root["global_start_time"], !start.isNull,
      let value = start["value"]?.number, let startRate = start["rate"]?.number, value != 0,
      value.isFinite, startRate.isFinite, startRate > 0
    {
      startTimecode = Self.timecode(value, rate: startRate)
    }
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
      try Self.checkSchema(child, "track \(shown)")
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
        track.panEnvelope = try Self.automation(meta["panAutomation"], "pan automation")
        track.output = meta["output"]?.string
        for send in meta["sends"]?.array ?? [] {
          guard let to = send["to"]?.string else {
            throw InterchangeError(
              "metadata[\"tape\"] send has no target; export it again from Tape")
          }
          track.sends.append(
            (
              to,
              Send(
                id: Send.ID(0), from: Track.ID(0), to: Track.ID(0),
                gain: Gain(decibels: try Self.number(send["gainDB"], "send gain") ?? 0),
                pan: try Self.number(send["pan"], "send pan") ?? 0,
                isPreFader: send["preFader"]?.bool ?? false,
                envelope: try Self.envelope(send["envelope"]))
            ))
        }
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
      try Self.checkSchema(marker, "a marker of the timeline")
      guard let range = marker["marked_range"], let start = range["start_time"] else { continue }
      let position = try frames(start, "a marker's start")
      let name = marker["name"]?.string ?? ""
      let order =
        (marker["metadata"]?["tape"]?["id"]?.string).flatMap(Self.idNumber) ?? Int64(Int32.max)
        + Int64(index)
      markers.append((name, position, order))
    }
  }

  /// Refuses `value` when its `OTIO_SCHEMA` is newer than this reader takes (``knownSchemas``),
  /// naming `what` it is.
  static func checkSchema(_ value: JSON, _ what: String) throws(InterchangeError) {
    guard let schema = value["OTIO_SCHEMA"]?.string else { return }
    let parts = schema.split(separator: ".")
    guard parts.count == 2, let version = Int(parts[1]), let known = knownSchemas[String(parts[0])]
    else { return }
    guard version <= known else {
      throw InterchangeError(
        "\(what) is a \(schema), newer than the \(parts[0]).\(known) Tape reads; write the file with OpenTimelineIO 0.18 (its target_schema_versions can downgrade it)"
      )
    }
  }

  /// `HH:MM:SS:FF` for `value` frames at `rate` (rounded to whole frames per second), or
  /// seconds when the rate is an audio rate.
  static func timecode(_ value: Double, rate: Double) -> String {
    guard rate <= 120 else { return "\(value / rate) s" }
    // Non-drop at the whole rate nearest: the EDL writer's labels (``TimecodeRate``).
    let labels = TimecodeRate(nominal: max(1, Int(rate.rounded())), dropFrame: false)
    return labels.timecode(Int64(value.rounded()))
  }

  /// Refuses a timeline whose audio clips are timed at two audio rates (44,100 and 48,000 Hz):
  /// either would misplace the others' edits by rounding, so the user chooses.
  static func refuseMixedRates(_ tracks: [JSON]) throws(InterchangeError) {
    var first: (rate: Int, clip: String)?
    for (number, track) in tracks.enumerated() where track["kind"]?.string == "Audio" {
      let trackName = track["name"]?.string ?? ""
      let shownTrack = trackName.isEmpty ? "track \(number + 1)" : "track '\(trackName)'"
      for (index, item) in (track["children"]?.array ?? []).enumerated()
      where item["OTIO_SCHEMA"]?.string?.hasPrefix("Clip.") == true {
        guard let value = item["source_range"]?["duration"]?["rate"]?.number, value.isFinite,
          Project.supportedSampleRates.contains(Int(value.rounded()))
        else { continue }
        let rate = Int(value.rounded())
        let name = item["name"]?.string ?? ""
        let clip = "\(name.isEmpty ? "item \(index + 1)" : "clip '\(name)'") on \(shownTrack)"
        guard let seen = first else {
          first = (rate, clip)
          continue
        }
        if seen.rate != rate {
          throw InterchangeError(
            "\(seen.clip) is timed at \(seen.rate) Hz and \(clip) at \(rate) Hz; give --rate \(max(seen.rate, rate)) (or --rate \(min(seen.rate, rate))) to choose the project's rate"
          )
        }
      }
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

  /// An automation lane as ``OTIOExport`` writes one (`frame`, `value`, `shape`); nil for none.
  static func automation(
    _ value: JSON?, _ what: String
  ) throws(InterchangeError) -> ParameterEnvelope? {
    guard let points = value?.array else { return nil }
    var result: [Envelope.Point] = []
    for point in points {
      guard let frame = try number(point["frame"], "\(what) frame"),
        let value = try number(point["value"], "\(what) value")
      else {
        throw InterchangeError(
          "metadata[\"tape\"] \(what) point has no frame or value; export it again from Tape")
      }
      let shape: EnvelopeShape = point["shape"]?.string == "hold" ? .hold : .decibels
      result.append(
        Envelope.Point(time: FramePosition(Int64(frame)), decibels: value, shape: shape))
    }
    return ParameterEnvelope(curve: Envelope(points: result))
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
      var automation: [String: ParameterEnvelope] = [:]
      for member in effect["automation"]?.members ?? [] {
        automation[member.key] = try Self.automation(member.value, "effect automation")
      }
      // The side chain's source by the exported key, mapped to the new track when made.
      let sidechain = try effect["sidechain"]?.string.map { key throws(InterchangeError) in
        guard let id = Track.ID(parsing: key) else {
          throw InterchangeError(
            "metadata[\"tape\"] effect side chain '\(key)' is not a track; export it again from Tape"
          )
        }
        return id
      }
      result.append(
        Effect(
          id: Effect.ID(0), plugin: plugin, parameters: parameters,
          isBypassed: effect["bypassed"]?.bool ?? false, state: state, sidechain: sidechain,
          automation: automation))
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
    let user = clip == "a source" ? [] : [clip]
    if let index = media.firstIndex(where: { $0.path == path }) {
      media[index].clips += user
      return index
    }
    media.append(Media(path: path, clips: user))
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
    for (index, marker) in (track["markers"]?.array ?? []).enumerated() {
      try Self.checkSchema(marker, "a marker of track \(shown)")
      guard let start = marker["marked_range"]?["start_time"] else { continue }
      let at = try frames(start, "the start of a marker of track \(shown)") + offset
      markers.append((marker["name"]?.string ?? "", at, Int64(Int32.max) * 2 + Int64(index)))
    }
    for (number, item) in children.enumerated() {
      let schema = item["OTIO_SCHEMA"]?.string ?? "value"
      let kind = schema.split(separator: ".").first.map(String.init) ?? schema
      let name = item["name"]?.string ?? ""
      let what = kind == "Gap" ? "gap" : kind == "Transition" ? "transition" : "clip"
      let label =
        name.isEmpty
        ? "item \(number + 1) of track \(shown)" : "\(what) '\(name)' on track \(shown)"
      try Self.checkSchema(item, label)
      switch kind {
      case "Transition":
        let type = item["transition_type"]?.string ?? ""
        guard type == "SMPTE_Dissolve" else {
          throw InterchangeError(
            "\(label) is a '\(type.isEmpty ? "unnamed" : type)' transition, which Tape cannot play; make it a dissolve (SMPTE_Dissolve) or a cut in the tool that wrote it"
          )
        }
        let inOffset = try frames(item["in_offset"], "the in_offset of \(label)")
        let outOffset = try frames(item["out_offset"], "the out_offset of \(label)")
        guard inOffset >= 0, outOffset >= 0 else {
          throw InterchangeError(
            "\(label) has a negative offset; fix the transition in the tool that wrote it")
        }
        items.append(.transition(inOffset, outOffset))
      case "Gap":
        let length = try frames(item["source_range"]?["duration"], "the duration of \(label)")
        guard length >= 0 else {
          throw InterchangeError(
            "\(label) has a negative duration (\(length) frames at \(sampleRate) Hz); fix it in the tool that wrote it"
          )
        }
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
        guard length >= 0 else {
          throw InterchangeError(
            "\(label) has a negative duration (\(length) frames at \(sampleRate) Hz); fix its source_range in the tool that wrote it"
          )
        }
        let start = try frames(range["start_time"], "the source start of \(label)")
        if let reference { try Self.checkSchema(reference, "the media of \(label)") }
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
        } else {
          clip.clipName = adaptedName(name, file: media)
          clip.foreignName = name
        }
        try noteEffects(of: item, label)
        // A clip's markers are at times of its media: on the timeline, where the clip plays
        // them.
        for (index, marker) in (item["markers"]?.array ?? []).enumerated() {
          try Self.checkSchema(marker, "a marker of \(label)")
          guard let at = marker["marked_range"]?["start_time"] else { continue }
          let timeline = try position + frames(at, "the start of a marker of \(label)") - start
          markers.append(
            (
              marker["name"]?.string ?? "", timeline,
              Int64(Int32.max) * 3 + Int64(result.count) * 1_000 + Int64(index)
            ))
        }
        items.append(.clip(result.count))
        result.append(clip)
      default:
        throw InterchangeError(
          "track \(shown) holds a \(kind) (item \(number + 1)), which Tape cannot import; flatten it into clips in the tool that wrote it"
        )
      }
    }
    // Transitions lengthen the clips beside them, as OTIO means, and are their fades where
    // Tape's metadata does not give them exactly. (Tape's first format wrote its clips whole
    // beside transitions.)
    for (index, item) in items.enumerated() {
      guard case .transition(let inOffset, let outOffset) = item else { continue }
      let length = FrameCount(inOffset + outOffset)
      if index > 0, case .clip(let before) = items[index - 1] {
        if !result[before].exact || tapeFormat >= 2 { result[before].length += outOffset }
        if !result[before].exact { result[before].fadeOut = Fade(length: length) }
      }
      if index + 1 < items.count, case .clip(let after) = items[index + 1] {
        if !result[after].exact || tapeFormat >= 2 {
          result[after].timelineStart -= inOffset
          result[after].sourceStart -= inOffset
          result[after].length += inOffset
        }
        if !result[after].exact { result[after].fadeIn = Fade(length: length) }
      }
    }
    return result
  }

  /// Notes what a clip's `effects` ask that Tape does not do: a time warp (the clip plays at
  /// its own speed here), a freeze frame, any other effect.
  mutating func noteEffects(of item: JSON, _ label: String) throws(InterchangeError) {
    for effect in item["effects"]?.array ?? [] {
      try Self.checkSchema(effect, "an effect of \(label)")
      let schema = effect["OTIO_SCHEMA"]?.string ?? ""
      let kind = schema.split(separator: ".").first.map(String.init) ?? schema
      let effectName = effect["effect_name"]?.string ?? effect["name"]?.string ?? ""
      switch kind {
      case "LinearTimeWarp":
        let scalar = effect["time_scalar"]?.number ?? 1
        guard scalar != 1 else { continue }
        notes.append(
          "\(label) is played at \(Self.trimmed(scalar))× by a time warp (LinearTimeWarp), which Tape does not apply: it plays at 1× here, for the same length"
        )
      case "FreezeFrame":
        notes.append(
          "\(label) holds one frame (FreezeFrame), which Tape does not apply: its audio plays as it is"
        )
      default:
        let named = effectName.isEmpty ? kind : "'\(effectName)'"
        notes.append("\(label) has an effect \(named), which Tape does not apply")
      }
    }
  }

  /// `2` for 2.0, `0.5` for 0.5.
  static func trimmed(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
  }

  /// Another tool's name for a clip as a Tape clip name (``Clip/validateName(_:)``: letters,
  /// digits, `-`, `_`, `.`): blanks and other characters become `-`. Nil for no name, or the
  /// name of its media file, which tools give a clip by default and would only repeat.
  func adaptedName(_ name: String, file media: Int) -> String? {
    var trimmed = Substring(name)
    while trimmed.unicodeScalars.first?.properties.isWhitespace == true { trimmed.removeFirst() }
    while trimmed.unicodeScalars.last?.properties.isWhitespace == true { trimmed.removeLast() }
    guard !trimmed.isEmpty, trimmed != self.media[media].path.lastComponent.description else {
      return nil
    }
    var adapted = ""
    for scalar in trimmed.unicodeScalars {
      let keep =
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
        || "-_.".unicodeScalars.contains(scalar)
      if keep {
        adapted.unicodeScalars.append(scalar)
      } else if !adapted.hasSuffix("-") {
        adapted += "-"
      }
    }
    while adapted.hasSuffix("-") { adapted.removeLast() }
    while let first = adapted.unicodeScalars.first,
      !(first.properties.isAlphabetic || ("0"..."9").contains(first))
    {
      adapted.unicodeScalars.removeFirst()
    }
    adapted = String(adapted.prefix(Clip.maximumNameLength))
    guard (try? Clip.validateName(adapted)) != nil else { return nil }
    return adapted
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
    // The new id of each exported track's key, and what routes by those keys: set once every
    // track is made.
    var made: [String: Track.ID] = [:]
    var routed: [(track: Track, effects: [Effect], imported: ImportedTrack)] = []
    for track in tracks {
      let id = ids.newTrackID()
      if let key = track.key { made[key] = id }
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
        guard clip.sourceStart >= 0 else {
          let before = TimeValue.clock(FrameCount(-clip.sourceStart), sampleRate: sampleRate)
          throw InterchangeError(
            "\(clip.name) starts \(before) before the beginning of \(file); fix its source_range in the tool that wrote it"
          )
        }
        guard clip.sourceStart + clip.length <= available, clip.length > 0
        else {
          let from = TimeValue.clock(FrameCount(clip.sourceStart), sampleRate: sampleRate)
          let to = TimeValue.clock(
            FrameCount(clip.sourceStart + clip.length), sampleRate: sampleRate)
          throw InterchangeError(
            "\(clip.name) plays \(from)–\(to) of \(file), which is only \(TimeValue.clock(FrameCount(available), sampleRate: sampleRate)) long; fix its source_range in the tool that wrote it"
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
        // Another tool's names repeat (every take of a file): the later ones are numbered.
        if !clip.exact, let name = clipName, clipNames.contains(name) {
          let numbered = (2...).lazy.map { number in
            let suffix = "-\(number)"
            return String(name.prefix(Clip.maximumNameLength - suffix.count)) + suffix
          }
          clipName = numbered.first { !clipNames.contains($0) }
        }
        if let foreign = clip.foreignName, let clipName, foreign != clipName {
          adaptedNames.append((foreign, clipName))
        }
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
      let value = Track(
        id: id, name: track.name, gain: track.gain, pan: track.pan, isMuted: track.muted,
        isSolo: track.solo, envelope: track.envelope, clips: clips,
        panEnvelope: track.panEnvelope)
      commands.append(.setTrack(value))
      let effects = Self.withIDs(track.effects, &ids)
      if track.output != nil || !track.sends.isEmpty
        || effects.contains(where: { $0.sidechain != nil })
      {
        routed.append((value, effects, track))
      } else if !effects.isEmpty {
        commands.append(.setEffects(effects, on: .track(id)))
      }
    }
    // Outputs, side chains and sends, by the new ids (one naming a track the file does not
    // hold is left out, with a note).
    for (value, effects, track) in routed {
      if let key = track.output {
        if let output = made[key] {
          var routedTrack = value
          routedTrack.output = output
          commands.append(.setTrack(routedTrack))
        } else {
          notes.append("\(track.name): its output \(key) is not in the file; it goes to the master")
        }
      }
      var keyed = effects
      for index in keyed.indices {
        guard let source = keyed[index].sidechain else { continue }
        keyed[index].sidechain = made[source.description]
        if keyed[index].sidechain == nil {
          notes.append("\(track.name): the side chain from \(source) is not in the file; left out")
        }
      }
      if !keyed.isEmpty { commands.append(.setEffects(keyed, on: .track(value.id))) }
      for (key, send) in track.sends {
        guard let to = made[key] else {
          notes.append("\(track.name): its send to \(key) is not in the file; left out")
          continue
        }
        commands.append(
          .setSend(
            Send(
              id: ids.newSendID(), from: value.id, to: to, gain: send.gain, pan: send.pan,
              isPreFader: send.isPreFader, envelope: send.envelope)))
      }
    }
    if !masterEffects.isEmpty {
      commands.append(.setEffects(Self.withIDs(masterEffects, &ids), on: .master))
    }
    if !adaptedNames.isEmpty {
      let shown = adaptedNames.prefix(3).map { "'\($0.from)' → \($0.to)" }.joined(separator: ", ")
      let more = adaptedNames.count > 3 ? ", and \(adaptedNames.count - 3) more" : ""
      notes.append(
        "\(adaptedNames.count) clip name\(adaptedNames.count == 1 ? " was" : "s were") made to fit Tape's (letters, digits, - _ .; a name already taken is numbered): \(shown)\(more)"
      )
    }
    var names: Set<String> = []
    // Another tool's markers may be unnamed or share a name: they are named and numbered
    // rather than left out.
    if tapeFormat == 0 {
      var renamed: [(name: String, position: Int64, order: Int64)] = []
      var taken: Set<String> = []
      for var marker in markers.sorted(by: { ($0.position, $0.order) < ($1.position, $1.order) }) {
        var base = marker.name
        while base.unicodeScalars.first?.properties.isWhitespace == true { base.removeFirst() }
        while base.unicodeScalars.last?.properties.isWhitespace == true { base.removeLast() }
        if base.isEmpty { base = "Marker" }
        var name = base
        var number = 2
        while taken.contains(name) {
          name = "\(base) \(number)"
          number += 1
        }
        taken.insert(name)
        marker.name = name
        renamed.append(marker)
      }
      markers = renamed
    }
    for marker in markers.sorted(by: { ($0.position, $0.order) < ($1.position, $1.order) }) {
      do {
        try Marker.validateNew(name: marker.name)
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
        isBypassed: effect.isBypassed, state: effect.state, sidechain: effect.sidechain,
        automation: effect.automation)
    }
  }
}
