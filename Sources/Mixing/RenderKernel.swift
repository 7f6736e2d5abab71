public import Atomics
public import Timeline

/// The render kernel: mixes any block `[from, from + frames)` of a plan into a buffer.
///
/// The same code serves the offline renderer and the realtime player, so it obeys the realtime
/// contract of ARCHITECTURE.md, checked by the compiler through `@_noLocks`: no allocation, no
/// reference counting, no locks, no existentials, no unannotated C calls.
///
/// The mix, for each audible clip and `0 ≤ i < length`:
/// `out[timelineStart + i] += src[sourceRange.start + i] · gain · fade(i)`, where `gain` is clip
/// gain × track gain × the pan law's factor for the output channel (see ``PanLaw``) and
/// `fade(i)` is ``/Timeline/FadeCurve/shape(_:)`` applied to the fade-in ramp `i / fadeIn` (for
/// `i < fadeIn`) times the fade-out ramp `(length − i) / fadeOut` (for `i ≥ length − fadeOut`),
/// each ramp offset into a longer curve for a fade an edit cut (``/Timeline/Fade/silentCut``).
/// The mix is a plain sum: no normalisation, no limiter.
public enum RenderKernel {
  /// Renders `frames` frames starting at timeline frame `from` into `output`, interleaved with
  /// `plan.outputChannels` channels. `output` is overwritten (silence where nothing plays).
  ///
  /// Every clip plays at its plan gain; see ``render(_:from:frames:into:clock:intoScratchBuses:)``
  /// for the
  /// player's ramps.
  ///
  /// Returns how many clip frames could not be rendered because their source chunk was not
  /// resident (they are silent): 0 whenever the loader kept up.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inlinable
  @discardableResult
  public static func render(
    _ plan: PlanView, from: Int64, frames: Int, into output: UnsafeMutablePointer<Float>
  ) -> Int {
    render(plan, from: from, frames: frames, into: output, clock: .max)
  }

  /// Renders like ``render(_:from:frames:into:)``, with each clip's gain following its ramp
  /// (``PlanView/ramps``) at the player's output frames `clock ..< clock + frames`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inlinable
  @discardableResult
  public static func render(
    _ plan: PlanView, from: Int64, frames: Int, into output: UnsafeMutablePointer<Float>,
    clock: Int64, intoScratchBuses: Bool = false
  ) -> Int {
    let channels = plan.outputChannels
    output.update(repeating: 0, count: frames * channels)
    // A plan with effects mixes each clip into its track's bus (see ``EffectKernel``): its
    // buffer, or its scratch buffer for a player's plan fading out.
    let buses = plan.graph?.pointee.chains
    if let buses, let count = plan.graph?.pointee.chainCount {
      for bus in 0..<count where !buses[bus].folded {
        (intoScratchBuses ? buses[bus].scratch : buses[bus].buffer).update(
          repeating: 0, count: frames * channels)
        if !intoScratchBuses, let prefader = buses[bus].prefader {
          prefader.update(repeating: 0, count: frames * channels)
        }
      }
    }
    guard let clips = plan.clips, let runningEnd = plan.runningEnd, frames > 0 else { return 0 }
    let to = from + Int64(frames)
    var missing = 0
    var index = firstReaching(from, runningEnd: runningEnd, count: plan.count)
    while index < plan.count {
      let clip = clips[index]
      if clip.timelineStart >= to { break }
      var ramp = ClipRamp.none
      if clock != .max, let ramps = plan.ramps, ramps[index].end > clock {
        ramp = ramps[index]
      }
      let silent = clip.gainLeft == 0 && clip.gainRight == 0
      if clip.timelineStart + clip.length > from && (!silent || ramp.end != .min) {
        var target = output
        var skip = false
        if clip.bus >= 0, clip.intoInput, let buses {
          // A folded track's clip, into what its destination receives (offline plans only).
          if !intoScratchBuses, let input = buses[Int(clip.bus)].input {
            target = input
          } else {
            skip = true
          }
        } else if clip.bus >= 0, let buses {
          target = intoScratchBuses ? buses[Int(clip.bus)].scratch : buses[Int(clip.bus)].buffer
        } else if clip.bus <= -2, let buses {
          // A pre-fader tap (see ``ClipRecord/bus``): the plan fading out has none.
          if !intoScratchBuses, let prefader = buses[Int(-2 - clip.bus)].prefader {
            target = prefader
          } else {
            skip = true
          }
        }
        if skip {
          index += 1
          continue
        }
        if ramp.end == .min {
          missing += mix(clip, blockStart: from, blockEnd: to, into: target, channels: channels)
        } else {
          missing += mix(
            clip, blockStart: from, blockEnd: to, into: target, channels: channels,
            ramp: ramp, clock: clock)
        }
      }
      index += 1
    }
    return missing
  }

  /// Whether every source chunk that rendering `[from, from + frames)` reads is resident
  /// (silent clips aside), or known to be unreadable (``SourceAudio/markUnreadable(_:)``:
  /// nothing will come to wait for): what a player checks before a period, to wait for its
  /// loader rather than play silence where the device does not pace it.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inlinable
  public static func isResident(_ plan: PlanView, from: Int64, frames: Int) -> Bool {
    guard let clips = plan.clips, let runningEnd = plan.runningEnd, frames > 0 else { return true }
    let to = from + Int64(frames)
    var index = firstReaching(from, runningEnd: runningEnd, count: plan.count)
    while index < plan.count {
      let clip = clips[index]
      if clip.timelineStart >= to { break }
      let silent = clip.gainLeft == 0 && clip.gainRight == 0
      if clip.timelineStart + clip.length > from && !silent {
        let first = clip.sourceStart + max(0, from - clip.timelineStart)
        let last = clip.sourceStart + min(clip.length, to - clip.timelineStart)
        var chunk = first >> Int64(ChunkTable.shift)
        while chunk << Int64(ChunkTable.shift) < last {
          if !ChunkTable.isSettled(Int(chunk), in: clip.chunks) { return false }
          chunk += 1
        }
      }
      index += 1
    }
    return true
  }

  /// A ramp's gains at clock frame `t`: exactly the target from its end on.
  ///
  /// - Note: Realtime-safe: arithmetic only.
  @_noLocks
  @inlinable
  public static func gains(
    _ ramp: ClipRamp, to left: Float, _ right: Float, at t: Int64
  ) -> (Float, Float) {
    guard t < ramp.end else { return (left, right) }
    // Linear easing: the remaining fraction of the way back to `from`.
    let remaining = Float(Double(ramp.end - t) / Double(ramp.length))
    return (
      left + (ramp.fromLeft - left) * remaining, right + (ramp.fromRight - right) * remaining
    )
  }

  /// The first index whose running end is past `frame`: every earlier clip ends at or before it.
  @_noLocks
  @inlinable
  static func firstReaching(_ frame: Int64, runningEnd: UnsafePointer<Int64>, count: Int) -> Int {
    var low = 0
    var high = count
    while low < high {
      let middle = (low + high) / 2
      if runningEnd[middle] > frame { high = middle } else { low = middle + 1 }
    }
    return low
  }

  /// Adds the part of `clip` that falls in `[blockStart, blockEnd)`, one source chunk at a time;
  /// returns the frames skipped because their chunk was not resident.
  @_noLocks
  @inlinable
  static func mix(
    _ clip: ClipRecord, blockStart: Int64, blockEnd: Int64,
    into output: UnsafeMutablePointer<Float>, channels: Int, ramp: ClipRamp = .none,
    clock: Int64 = 0
  ) -> Int {
    let first = max(0, blockStart - clip.timelineStart)
    let last = min(clip.length, blockEnd - clip.timelineStart)
    let sourceChannels: Int
    switch clip.routing {
    case .monoToMono, .monoToStereo: sourceChannels = 1
    case .stereoToStereo, .stereoToMono: sourceChannels = 2
    }
    var missing = 0
    var i = first
    while i < last {
      let sourceFrame = clip.sourceStart + i
      let chunkFrames = 1 << ChunkTable.shift
      let offset = Int(sourceFrame) & (chunkFrames - 1)
      let run = min(last - i, Int64(chunkFrames - offset))
      if let chunk = ChunkTable.chunk(Int(sourceFrame >> Int64(ChunkTable.shift)), in: clip.chunks)
      {
        let out = output + Int(clip.timelineStart + i - blockStart) * channels
        if clip.envelope != nil || clip.pan != nil {
          // The output clock at clip frame i (used only while the gain ramps).
          let t = clock + (clip.timelineStart + i - blockStart)
          enveloped(
            clip, chunk + offset * sourceChannels, out, from: i, to: i + run, ramp, at: t)
        } else if ramp.end == .min {
          segment(clip, chunk + offset * sourceChannels, out, from: i, to: i + run)
        } else {
          // The output clock at clip frame i.
          let t = clock + (clip.timelineStart + i - blockStart)
          ramped(clip, chunk + offset * sourceChannels, out, from: i, to: i + run, ramp, at: t)
        }
      } else {
        missing += Int(run)
      }
      i += run
    }
    return missing
  }

  /// Clip frames `[first, last)`, read from `source` and added to `out` (both at frame `first`),
  /// split into the fades and the constant-gain body between them.
  @_noLocks
  @inlinable
  static func segment(
    _ clip: ClipRecord, _ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>,
    from first: Int64, to last: Int64
  ) {
    let bodyStart = clip.fadeInLength
    let bodyEnd = clip.length - clip.fadeOutLength
    if bodyStart >= bodyEnd {
      faded(clip, source, out, origin: first, first, last)
      return
    }
    faded(clip, source, out, origin: first, first, min(last, bodyStart))
    body(clip, source, out, origin: first, max(first, bodyStart), min(last, bodyEnd))
    faded(clip, source, out, origin: first, max(first, bodyEnd), last)
  }

  /// Clip frames `[first, last)` of a clip whose track has an envelope or a pan lane: its gain
  /// (ramping, if the player ramps it), fade, the envelope's gain and the pan law at the lane's
  /// value (``PanLaw``) at its timeline frame, every frame. `source` and `out` are at clip
  /// frame `first`, played at output clock `clock`.
  @_noLocks
  @inlinable
  static func enveloped(
    _ clip: ClipRecord, _ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>,
    from first: Int64, to last: Int64, _ ramp: ClipRamp, at clock: Int64
  ) {
    let envelope = UnsafeBufferPointer(start: clip.envelope, count: clip.envelopeCount)
    let lane = UnsafeBufferPointer(start: clip.pan, count: clip.panCount)
    let mono: Bool
    switch clip.routing {
    case .monoToStereo: mono = true
    default: mono = false
    }
    var segment = EnvelopeSegment.index(of: clip.timelineStart + first, in: envelope) ?? 0
    var panSegment = EnvelopeSegment.index(of: clip.timelineStart + first, in: lane) ?? 0
    for i in first..<last {
      let frame = Int(i - first)
      let t = clip.timelineStart + i
      let (gainLeft, gainRight) =
        ramp.end == .min
        ? (clip.gainLeft, clip.gainRight)
        : gains(ramp, to: clip.gainLeft, clip.gainRight, at: clock + Int64(frame))
      var shape = fadeGain(clip, at: i)
      if !envelope.isEmpty {
        while segment + 1 < envelope.count && envelope[segment + 1].start <= t { segment += 1 }
        shape *= envelope[segment].gain(at: t)
      }
      var (panLeft, panRight) = (1.0, 1.0)
      if !lane.isEmpty {
        while panSegment + 1 < lane.count && lane[panSegment + 1].start <= t { panSegment += 1 }
        let position = lane[panSegment].value(at: t)
        (panLeft, panRight) =
          mono ? PanLaw.monoSource(pan: position) : PanLaw.stereoSource(pan: position)
      }
      let (left, right) = (
        Float(shape * panLeft * Double(gainLeft)), Float(shape * panRight * Double(gainRight))
      )
      add(clip.routing, source, out, frame: frame, left: left, right: right)
    }
  }

  /// Clip frames `[first, last)` while the clip's gain ramps: gain and fade per frame.
  /// `source` and `out` are at clip frame `first`, played at output clock `clock`.
  @_noLocks
  @inlinable
  static func ramped(
    _ clip: ClipRecord, _ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>,
    from first: Int64, to last: Int64, _ ramp: ClipRamp, at clock: Int64
  ) {
    for i in first..<last {
      let frame = Int(i - first)
      let (gainLeft, gainRight) = gains(
        ramp, to: clip.gainLeft, clip.gainRight, at: clock + Int64(frame))
      let fade = fadeGain(clip, at: i)
      // As in `body` and `faded`: a float gain in the body, the fade applied in double.
      let (left, right) =
        fade == 1
        ? (gainLeft, gainRight) : (Float(fade * Double(gainLeft)), Float(fade * Double(gainRight)))
      add(clip.routing, source, out, frame: frame, left: left, right: right)
    }
  }

  /// Adds source frame `frame` to output frame `frame` with these gains, as `routing` says
  /// (the per-frame paths: ramps and envelopes).
  @_noLocks
  @inlinable
  @inline(__always)
  static func add(
    _ routing: ChannelRouting, _ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>,
    frame: Int, left: Float, right: Float
  ) {
    switch routing {
    case .monoToMono:
      out[frame] += source[frame] * left
    case .stereoToMono:
      out[frame] += (source[2 * frame] + source[2 * frame + 1]) * left
    case .monoToStereo:
      out[2 * frame] += source[frame] * left
      out[2 * frame + 1] += source[frame] * right
    case .stereoToStereo:
      out[2 * frame] += source[2 * frame] * left
      out[2 * frame + 1] += source[2 * frame + 1] * right
    }
  }

  /// Clip frames `[first, last)` outside both fades: a constant gain per output channel.
  /// `source` and `out` are at clip frame `origin`.
  @_noLocks
  @inlinable
  static func body(
    _ clip: ClipRecord, _ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>,
    origin: Int64, _ first: Int64, _ last: Int64
  ) {
    guard first < last else { return }
    let start = Int(first - origin)
    let count = Int(last - first)
    let left = clip.gainLeft
    let right = clip.gainRight
    switch clip.routing {
    case .monoToMono:
      let source = source + start
      let out = out + start
      for i in 0..<count { out[i] += source[i] * left }
    case .stereoToMono:
      let source = source + 2 * start
      let out = out + start
      for i in 0..<count { out[i] += (source[2 * i] + source[2 * i + 1]) * left }
    case .monoToStereo:
      let source = source + start
      let out = out + 2 * start
      for i in 0..<count {
        out[2 * i] += source[i] * left
        out[2 * i + 1] += source[i] * right
      }
    case .stereoToStereo:
      let source = source + 2 * start
      let out = out + 2 * start
      for i in 0..<count {
        out[2 * i] += source[2 * i] * left
        out[2 * i + 1] += source[2 * i + 1] * right
      }
    }
  }

  /// Clip frames `[first, last)` inside a fade: the gain is evaluated per frame. `source` and
  /// `out` are at clip frame `origin`.
  @_noLocks
  @inlinable
  static func faded(
    _ clip: ClipRecord, _ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>,
    origin: Int64, _ first: Int64, _ last: Int64
  ) {
    guard first < last else { return }
    let left = Double(clip.gainLeft)
    let right = Double(clip.gainRight)
    for i in first..<last {
      let fade = fadeGain(clip, at: i)
      let frame = Int(i - origin)
      switch clip.routing {
      case .monoToMono:
        out[frame] += source[frame] * Float(fade * left)
      case .stereoToMono:
        out[frame] += (source[2 * frame] + source[2 * frame + 1]) * Float(fade * left)
      case .monoToStereo:
        out[2 * frame] += source[frame] * Float(fade * left)
        out[2 * frame + 1] += source[frame] * Float(fade * right)
      case .stereoToStereo:
        out[2 * frame] += source[2 * frame] * Float(fade * left)
        out[2 * frame + 1] += source[2 * frame + 1] * Float(fade * right)
      }
    }
  }

  /// The fades' combined gain at clip frame `i`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inlinable
  public static func fadeGain(_ clip: ClipRecord, at i: Int64) -> Double {
    Fade.gain(
      at: i, length: clip.length, fadeIn: clip.fadeInLength, inCurve: clip.fadeInCurve,
      inSkip: clip.fadeInSkip, inSpan: max(clip.fadeInSpan, clip.fadeInLength),
      fadeOut: clip.fadeOutLength, outCurve: clip.fadeOutCurve, outSkip: clip.fadeOutSkip,
      outSpan: max(clip.fadeOutSpan, clip.fadeOutLength))
  }
}

/// A clip's gain on its way from one plan's value to another's: the player's state that
/// survives a plan swap, owned by the audio thread.
///
/// At output frame `t` (the player's clock) the gain is `to + (from − to)·(end − t)/length`
/// before `end` and exactly `to` from `end` on: a straight line that lands on the new value
/// (see ``/Timeline/Easing/linear``, the same shape the animated diffs use).
public struct ClipRamp: Sendable, BitwiseCopyable, Equatable {
  public var fromLeft: Float
  public var fromRight: Float
  /// The clock frame at which the ramp arrives; at or before the current frame: no ramp.
  public var end: Int64
  public var length: Int64

  /// No ramp: the clip is at its plan gain.
  @inlinable public static var none: ClipRamp {
    @_noLocks get { ClipRamp(fromLeft: 0, fromRight: 0, end: .min, length: 1) }
  }

  @_noLocks
  @inlinable
  public init(fromLeft: Float, fromRight: Float, end: Int64, length: Int64) {
    self.fromLeft = fromLeft
    self.fromRight = fromRight
    self.end = end
    self.length = length
  }
}

/// Reading a chunk table (what a ``ClipRecord`` carries) on the audio thread. In this file
/// because the compiler checks `@_noLocks` functions only against bodies it can see: in a
/// debug build, those of the same file.
@usableFromInline enum ChunkTable {
  /// log2 of the frames per chunk (a computed constant: the audio thread reads no globals).
  @_transparent @usableFromInline static var shift: Int { 16 }

  /// The chunk's samples when resident.
  ///
  /// - Note: Realtime-safe: one atomic load.
  @_noLocks
  @inlinable
  static func chunk(
    _ index: Int, in table: UnsafeMutablePointer<UInt.AtomicRepresentation>
  ) -> UnsafePointer<Float>? {
    let bits = UnsafeAtomic<UInt>(at: table + index).load(ordering: .acquiring)
    return bits == unreadable ? nil : UnsafePointer(bitPattern: bits)
  }

  /// What a table holds for a chunk its loader could not read: never an address (a chunk's
  /// floats are aligned to 4 bytes).
  @_transparent @usableFromInline static var unreadable: UInt { 1 }

  /// Whether the chunk is resident or known to be unreadable: either way, nothing to wait for.
  ///
  /// - Note: Realtime-safe: one atomic load.
  @_noLocks
  @inlinable
  static func isSettled(
    _ index: Int, in table: UnsafeMutablePointer<UInt.AtomicRepresentation>
  ) -> Bool {
    UnsafeAtomic<UInt>(at: table + index).load(ordering: .acquiring) != 0
  }
}
