extension Project {
  /// The project as a stem of `tracks`: only those tracks, in display order, each as it plays
  /// in the mix (clips, gain, pan, envelope) with its mute and solo set aside (a stem is the
  /// track itself, whatever the mix does with it); the master gain kept unless `masterGain` is
  /// false. Unknown ids are refused.
  ///
  /// A side chain keeps its key: the tracks that key the stem's side chains
  /// (``keyingTracks(for:)``) come along, unheard (the stem's own tracks are soloed, so the
  /// others only key, as a side chain keys under solo in the mix), with their mutes, their
  /// routing among themselves and their own keys; what they send or output into the stem's
  /// tracks, and what those send into them, is left out (it would make them heard, or the
  /// stem hold more than its tracks).
  ///
  /// ```swift
  /// let voice = try project.stem(of: [Track.ID(1)], masterGain: true)
  /// ```
  public func stem(of tracks: [Track.ID], masterGain: Bool) throws(TimelineError) -> Project {
    for id in tracks where track(id) == nil { throw .unknownTrack(id) }
    let chosen = Set(tracks)
    let keying = keyingTracks(for: chosen)
    let kept = chosen.union(keying)
    /// Whether `from` may feed `to` in the stem: both the stem's, or both keys.
    func links(_ from: Track.ID, _ to: Track.ID) -> Bool {
      chosen.contains(from) == chosen.contains(to) && kept.contains(to)
    }
    var stem = self
    stem.tracks = self.tracks.filter { kept.contains($0.id) }.map { track in
      var track = track
      let isKey = keying.contains(track.id)
      if !isKey { track.isMuted = false }
      track.isSolo = !isKey && !keying.isEmpty
      // Routing among the chosen tracks stays; a track going to one left out goes to the master.
      if let output = track.output, !links(track.id, output) { track.output = nil }
      return track
    }
    stem.sends = sends.filter { links($0.from, $0.to) }
    if !masterGain { stem.masterGain = .unity }
    // The master's effects work on the whole mix (a limiter on the sum): a stem is taken
    // before them, so that stems stay what each track puts into the mix.
    stem.masterEffects = []
    return stem
  }
}

/// What a stems render writes: one file per track the mix hears.
public struct StemSelection: Sendable, Hashable {
  /// The tracks written, in display order, each with its file's name without an extension
  /// (`t1-Vocals`: the id, then the name with anything but letters, digits, `-`, `_` and `.`
  /// made `_`).
  public var stems: [Stem]
  /// The tracks left out because the mix does not hear them (muted, or silenced by another's
  /// solo), in display order.
  public var unheard: [Track]

  public init(stems: [Stem], unheard: [Track]) {
    self.stems = stems
    self.unheard = unheard
  }

  public struct Stem: Sendable, Hashable {
    public var track: Track.ID
    public var fileName: String

    public init(track: Track.ID, fileName: String) {
      self.track = track
      self.fileName = fileName
    }
  }
}

extension Project {
  /// The stems of this project: every track the mix hears (``audibleTracks``), or with
  /// `allTracks` every track, each with the name of its file.
  ///
  /// Rule: a track the mix does not hear gets no stem unless `allTracks`. Why: stems are the
  /// mix taken apart, and they add up to it only if each is a track the mix plays; a muted
  /// track's stem would be sound the mix never had. What if the mix hears no track:
  /// ``StemSelection/stems``
  /// is empty, and a stems render has nothing to write.
  ///
  /// ```swift
  /// for stem in project.stemSelection(allTracks: false).stems {
  ///   let solo = try project.stem(of: [stem.track], masterGain: true)  // render to stem.fileName
  /// }
  /// ```
  public func stemSelection(allTracks: Bool) -> StemSelection {
    let heard = Set(audibleTracks.map(\.id))
    let unheard = allTracks ? [] : tracks.filter { !heard.contains($0.id) }
    let skipped = Set(unheard.map(\.id))
    return StemSelection(
      stems: tracks.filter { !skipped.contains($0.id) }.map { track in
        let name = String(
          track.name.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" })
        return StemSelection.Stem(track: track.id, fileName: "\(track.id)-\(name)")
      }, unheard: unheard)
  }
}
