import Mixing
public import Timeline

/// Silence detection: the quiet stretches of a project's mix or of one track. What
/// `tape silences` lists and cuts.
public enum Silence {
  /// The stretches of `project`'s mix (or of `track`'s stem: the track as it plays, its mute
  /// and solo set aside), from 0 to the project's end, where every sample of every channel
  /// stays below `below` (linear) in magnitude, for at least `longer`.
  ///
  /// Rule: the clips are measured without effects or routing. Why: a reverb's tail or a gate
  /// would move every boundary, and a cut is made in the clips (and no plugin needs to be
  /// installed). What if a stretch runs to the end: it ends at the project's end, and counts if
  /// it lasts `longer`.
  ///
  /// ```swift
  /// let quiet = try Silence.ranges(
  ///   in: project, cache: AudioCache(forProject: file), below: Float(Gain(decibels: -50).linear),
  ///   longer: FrameCount(19_200))  // 400 ms at 48 kHz
  /// ```
  public static func ranges(
    in project: Project, cache: AudioCache, track: Track.ID? = nil, below: Float,
    longer: FrameCount
  ) throws -> [FrameRange] {
    var analysed = try track.map { try project.stem(of: [$0], masterGain: true) } ?? project
    analysed.masterEffects = []
    // Nor routing: each track's clips straight to the sum (buses would need a rack).
    analysed.sends = []
    for index in analysed.tracks.indices {
      analysed.tracks[index].effects = []
      analysed.tracks[index].output = nil
    }
    let end = project.timelineEnd.frames
    let audio = try cache.sources(for: analysed)
    let plan = try RenderPlan(project: analysed, audio: audio.audio)
    let channels = plan.outputChannels
    let block = 16_384
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * channels)
    defer { buffer.deallocate() }
    var ranges: [FrameRange] = []
    var quietSince: Int64? = 0
    var position: Int64 = 0
    func close(at frame: Int64) {
      if let start = quietSince, frame - start >= longer.frames {
        ranges.append(FrameRange(start: FramePosition(start), end: FramePosition(frame)))
      }
      quietSince = nil
    }
    while position < end {
      let frames = Int(min(Int64(block), end - position))
      try audio.makeResident(plan, range: position..<position + Int64(frames))
      RenderKernel.render(plan.view, from: position, frames: frames, into: buffer)
      for frame in 0..<frames {
        var loud = false
        for channel in 0..<channels where abs(buffer[frame * channels + channel]) >= below {
          loud = true
        }
        if loud {
          close(at: position + Int64(frame))
        } else if quietSince == nil {
          quietSince = position + Int64(frame)
        }
      }
      position += Int64(frames)
    }
    close(at: end)
    return ranges
  }
}
