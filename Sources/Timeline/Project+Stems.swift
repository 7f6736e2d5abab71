extension Project {
  /// The project as a stem of `tracks`: only those tracks, in display order, each as it plays
  /// in the mix (clips, gain, pan, envelope) with its mute and solo set aside (a stem is the
  /// track itself, whatever the mix does with it); the master gain kept unless `masterGain` is
  /// false. Unknown ids are refused.
  ///
  /// ```swift
  /// let voice = try project.stem(of: [Track.ID(1)], masterGain: true)
  /// ```
  public func stem(of tracks: [Track.ID], masterGain: Bool) throws(TimelineError) -> Project {
    for id in tracks where track(id) == nil { throw .unknownTrack(id) }
    let chosen = Set(tracks)
    var stem = self
    stem.tracks = self.tracks.filter { chosen.contains($0.id) }.map { track in
      var track = track
      track.isMuted = false
      track.isSolo = false
      // Routing among the chosen tracks stays; a track going to one left out goes to the master.
      if let output = track.output, !chosen.contains(output) { track.output = nil }
      // A side chain from a track left out is silent in the stem, as that track is.
      for slot in track.effects.indices {
        if let source = track.effects[slot].sidechain, !chosen.contains(source) {
          track.effects[slot].sidechain = nil
        }
      }
      return track
    }
    stem.sends = sends.filter { chosen.contains($0.from) && chosen.contains($0.to) }
    if !masterGain { stem.masterGain = .unity }
    // The master's effects work on the whole mix (a limiter on the sum): a stem is taken
    // before them, so that stems stay what each track puts into the mix.
    stem.masterEffects = []
    return stem
  }
}
