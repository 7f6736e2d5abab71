#if canImport(Glibc)
  import Glibc
#endif

extension Project {
  /// Checks the whole project: format, sources, tracks, every clip against its source, and
  /// the markers.
  ///
  /// Throws the first problem found. The store validates only what a commit touches
  /// (``validate(_:)-(Clip)``, ``Track/validateSettings(sampleRate:)``), so this full check is for
  /// tests, imports
  /// and diagnostics.
  public func validate() throws(TimelineError) {
    try validateFormat()
    var seenSources = Set<Source.ID>()
    for source in sources {
      guard seenSources.insert(source.id).inserted else { throw .duplicateID("\(source.id)") }
      try source.validate()
    }
    try masterGain.validate(as: "master gain")
    var seenTracks = Set<Track.ID>()
    var seenClips = Set<Clip.ID>()
    for track in tracks {
      guard seenTracks.insert(track.id).inserted else { throw .duplicateID("\(track.id)") }
      try track.validateSettings(sampleRate: sampleRate)
      for clip in track.clips {
        guard seenClips.insert(clip.id).inserted else { throw .duplicateID("\(clip.id)") }
        try validate(clip)
      }
    }
    var seenMarkers = Set<Marker.ID>()
    for marker in markers {
      guard seenMarkers.insert(marker.id).inserted else { throw .duplicateID("\(marker.id)") }
      try validate(marker)
    }
  }

  /// Checks the sample rate and channel count.
  public func validateFormat() throws(TimelineError) {
    guard Self.supportedSampleRates.contains(sampleRate) else {
      throw .unsupportedSampleRate(sampleRate)
    }
    guard channels == 1 || channels == 2 else { throw .unsupportedChannelCount(channels) }
  }

  /// Checks one clip: a positive length, a start at or after 0, a crop inside its source
  /// (measured at the project rate), fades that fit, and a valid gain.
  public func validate(_ clip: Clip) throws(TimelineError) {
    guard clip.length.frames > 0 else { throw .nonPositiveLength(clip: clip.id) }
    guard clip.timelineStart >= .zero else {
      throw .negativeTimelineStart(clip: clip.id, start: clip.timelineStart, sampleRate: sampleRate)
    }
    // The same limit as every typed time (2^40 frames, about 260 days at 48 kHz): a move or a
    // trim cannot take a clip where `clip add` would not put it.
    guard clip.timelineEnd.frames <= TimeValue.maximumFrames.frames else {
      throw .pastTheTimeLimit(clip: clip.id, limit: TimeValue.maximumFrames, sampleRate: sampleRate)
    }
    guard let source = source(clip.source) else { throw .unknownSource(clip.source) }
    let available = FrameRange(start: .zero, count: source.frameCount(atRate: sampleRate))
    guard clip.sourceRange.start >= .zero, available.contains(clip.sourceRange) else {
      throw .cropOutsideSource(
        clip: clip.id, crop: clip.sourceRange, source: source.id, sourceLength: available.count,
        sampleRate: sampleRate)
    }
    try clip.validateFades(sampleRate: sampleRate)
    try clip.gain.validate(as: "gain of clip \(clip.id)")
  }
}

extension Clip {
  /// Checks that both fades are non-negative (their cut parts too), each fits in the clip, and
  /// together they fit.
  public func validateFades(sampleRate: Int) throws(TimelineError) {
    guard fadeIn.length >= .zero, fadeIn.silentCut >= .zero, fadeIn.fullCut >= .zero else {
      throw .negativeFade(clip: id, end: .fadeIn)
    }
    guard fadeOut.length >= .zero, fadeOut.silentCut >= .zero, fadeOut.fullCut >= .zero else {
      throw .negativeFade(clip: id, end: .fadeOut)
    }
    guard fadeIn.length <= length else {
      throw .fadeLongerThanClip(
        clip: id, end: .fadeIn, fade: fadeIn.length, clipLength: length, sampleRate: sampleRate)
    }
    guard fadeOut.length <= length else {
      throw .fadeLongerThanClip(
        clip: id, end: .fadeOut, fade: fadeOut.length, clipLength: length, sampleRate: sampleRate)
    }
    guard fadeIn.length + fadeOut.length <= length else {
      throw .fadesOverlap(
        clip: id, fadeIn: fadeIn.length, fadeOut: fadeOut.length, clipLength: length,
        sampleRate: sampleRate)
    }
  }
}

extension Track {
  /// Checks the name, gain and pan (not the clips, which need the project's sources).
  /// Throws unless the name, gain, pan and envelope are valid (`sampleRate` for messages).
  public func validateSettings(sampleRate: Int) throws(TimelineError) {
    guard !name.trimmingBlanks.isEmpty else { throw .emptyTrackName }
    // A newline or another control character would break every listing that shows the name.
    guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else { throw .controlCharacterInName(name) }
    try gain.validate(as: "gain of track \(id)")
    guard pan.isFinite, (-1.0...1.0).contains(pan) else {
      throw .panOutOfRange(track: id, pan: pan)
    }
    try envelope?.validate(track: id, sampleRate: sampleRate)
    if let panEnvelope {
      try panEnvelope.validate(name: "the pan of track \(id)", sampleRate: sampleRate)
      if let point = panEnvelope.points.first(where: { !(-1.0...1.0).contains($0.value) }) {
        throw .panOutOfRange(track: id, pan: point.value)
      }
    }
  }
}

extension Source {
  /// Checks the metadata a probe recorded: a positive rate, 1 or 2 channels, some frames.
  public func validate() throws(TimelineError) {
    guard sampleRate > 0 else { throw .invalidSource(id, reason: "sample rate \(sampleRate) Hz") }
    guard channels == 1 || channels == 2 else {
      throw .invalidSource(id, reason: "\(channels) channels; only mono and stereo are supported")
    }
    guard frameCount.frames > 0 else { throw .invalidSource(id, reason: "it holds no audio") }
    // No file name holds a NUL byte, and text with one would not survive the store.
    guard !path.isEmpty, !path.bytes.contains(0) else {
      throw .invalidSource(id, reason: "its path is empty or holds a NUL byte")
    }
    guard !contentHash.unicodeScalars.contains("\u{0}") else {
      throw .invalidSource(id, reason: "its content hash holds a NUL byte")
    }
  }
}
