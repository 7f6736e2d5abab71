import Foundation

/// The render kernel: mixes any block `[from, from + frames)` of a plan into a buffer.
///
/// The same code serves the offline renderer and the realtime player, so it obeys the realtime
/// contract of ARCHITECTURE.md, checked by the compiler through `@_noLocks`: no allocation, no
/// reference counting, no locks, no existentials, no unannotated C calls.
///
/// The mix, for each audible clip and `0 ≤ i < length`:
/// `out[timelineStart + i] += src[sourceRange.start + i] · gain · fade(i)`, where `gain` is clip
/// gain × track gain × the pan law's factor for the output channel (see ``PanLaw``) and
/// `fade(i)` is ``CurveCode/shape(_:)`` applied to the fade-in ramp `i / fadeIn` (for
/// `i < fadeIn`) times the fade-out ramp `(length − i) / fadeOut` (for `i ≥ length − fadeOut`).
/// The mix is a plain sum: no normalisation, no limiter.
public enum RenderKernel {
  /// Renders `frames` frames starting at timeline frame `from` into `output`, interleaved with
  /// `plan.outputChannels` channels. `output` is overwritten (silence where nothing plays).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  public static func render(
    _ plan: PlanView, from: Int64, frames: Int, into output: UnsafeMutablePointer<Float>
  ) {
    let channels = plan.outputChannels
    output.update(repeating: 0, count: frames * channels)
    guard let clips = plan.clips, let runningEnd = plan.runningEnd, frames > 0 else { return }
    let to = from + Int64(frames)
    var index = firstReaching(from, runningEnd: runningEnd, count: plan.count)
    while index < plan.count {
      let clip = clips[index]
      if clip.timelineStart >= to { break }
      if clip.timelineStart + clip.length > from {
        mix(clip, blockStart: from, blockEnd: to, into: output, channels: channels)
      }
      index += 1
    }
  }

  /// The first index whose running end is past `frame`: every earlier clip ends at or before it.
  @_noLocks
  static func firstReaching(_ frame: Int64, runningEnd: UnsafePointer<Int64>, count: Int) -> Int {
    var low = 0
    var high = count
    while low < high {
      let middle = (low + high) / 2
      if runningEnd[middle] > frame { high = middle } else { low = middle + 1 }
    }
    return low
  }

  /// Adds the part of `clip` that falls in `[blockStart, blockEnd)`.
  @_noLocks
  static func mix(
    _ clip: ClipRecord, blockStart: Int64, blockEnd: Int64,
    into output: UnsafeMutablePointer<Float>,
    channels: Int
  ) {
    let first = max(0, blockStart - clip.timelineStart)
    let last = min(clip.length, blockEnd - clip.timelineStart)
    let bodyStart = clip.fadeInLength
    let bodyEnd = clip.length - clip.fadeOutLength
    let base = output + Int(clip.timelineStart - blockStart) * channels
    if bodyStart >= bodyEnd {
      faded(clip, first, last, into: base)
      return
    }
    faded(clip, first, min(last, bodyStart), into: base)
    body(clip, max(first, bodyStart), min(last, bodyEnd), into: base)
    faded(clip, max(first, bodyEnd), last, into: base)
  }

  /// Clip frames `[first, last)` outside both fades: a constant gain per output channel.
  @_noLocks
  static func body(
    _ clip: ClipRecord, _ first: Int64, _ last: Int64, into base: UnsafeMutablePointer<Float>
  ) {
    guard first < last else { return }
    let start = Int(first)
    let count = Int(last - first)
    let left = clip.gainLeft
    let right = clip.gainRight
    switch clip.routing {
    case .monoToMono:
      let source = clip.samples + start
      let out = base + start
      for i in 0..<count { out[i] += source[i] * left }
    case .stereoToMono:
      let source = clip.samples + 2 * start
      let out = base + start
      for i in 0..<count { out[i] += (source[2 * i] + source[2 * i + 1]) * left }
    case .monoToStereo:
      let source = clip.samples + start
      let out = base + 2 * start
      for i in 0..<count {
        out[2 * i] += source[i] * left
        out[2 * i + 1] += source[i] * right
      }
    case .stereoToStereo:
      let source = clip.samples + 2 * start
      let out = base + 2 * start
      for i in 0..<count {
        out[2 * i] += source[2 * i] * left
        out[2 * i + 1] += source[2 * i + 1] * right
      }
    }
  }

  /// Clip frames `[first, last)` inside a fade: the gain is evaluated per frame.
  @_noLocks
  static func faded(
    _ clip: ClipRecord, _ first: Int64, _ last: Int64, into base: UnsafeMutablePointer<Float>
  ) {
    guard first < last else { return }
    let left = Double(clip.gainLeft)
    let right = Double(clip.gainRight)
    for i in first..<last {
      let fade = fadeGain(clip, at: i)
      let frame = Int(i)
      switch clip.routing {
      case .monoToMono:
        base[frame] += clip.samples[frame] * Float(fade * left)
      case .stereoToMono:
        base[frame] +=
          (clip.samples[2 * frame] + clip.samples[2 * frame + 1]) * Float(fade * left)
      case .monoToStereo:
        base[2 * frame] += clip.samples[frame] * Float(fade * left)
        base[2 * frame + 1] += clip.samples[frame] * Float(fade * right)
      case .stereoToStereo:
        base[2 * frame] += clip.samples[2 * frame] * Float(fade * left)
        base[2 * frame + 1] += clip.samples[2 * frame + 1] * Float(fade * right)
      }
    }
  }

  /// The fades' combined gain at clip frame `i`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  public static func fadeGain(_ clip: ClipRecord, at i: Int64) -> Double {
    var gain = 1.0
    if i < clip.fadeInLength {
      gain *= clip.fadeInCurve.shape(Double(i) / Double(clip.fadeInLength))
    }
    let fromEnd = clip.length - i
    if clip.fadeOutLength > 0 && fromEnd <= clip.fadeOutLength {
      gain *= clip.fadeOutCurve.shape(Double(fromEnd) / Double(clip.fadeOutLength))
    }
    return gain
  }
}

extension CurveCode {
  /// The curve at `x` in `0…1`: the formulas of ``Timeline/FadeCurve``.
  ///
  /// - Note: Realtime-safe: libm's `sin`, `cos` and `exp2` neither allocate nor lock.
  @_noLocks
  public func shape(_ x: Double) -> Double {
    switch self {
    case .linear: x
    case .equalPower: _unsafePerformance { sin(x * Double.pi / 2) }
    case .sCurve: _unsafePerformance { (1 - cos(Double.pi * x)) / 2 }
    case .exponential: _unsafePerformance { (exp2(10 * x) - 1) / 1023 }
    }
  }
}
