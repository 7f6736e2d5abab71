import Mixing

/// What the device thread hands the device each period: the mixer's frames as they are, or,
/// on a device that does not take the project's rate, converted to the device's
/// (``RateConverter``): each period then renders the project frames its device frames read,
/// 235 or 236 for 256 at 48 kHz from 44.1 kHz.
///
/// Held by the device thread alone (addresses and counters, no reference).
struct DeviceFeed: @unchecked Sendable, BitwiseCopyable {
  /// The most project frames one call of the mixer renders (the effects' block).
  let mixFrames: Int
  /// The mixer's frames on their way into the converter (`mixFrames` frames).
  private let staging: UnsafeMutablePointer<Float>?
  private var converter: RateConverter.Kernel?
  /// Project frames of the play rendered so far.
  private(set) var rendered: Int64 = 0
  /// Whether the play's last frame has been rendered.
  private(set) var ended = false

  /// The mixer's frames as they are.
  init(mixFrames: Int) {
    self.mixFrames = mixFrames
    staging = nil
    converter = nil
  }

  /// Converted by `converter`, whose input passes through `staging` (`mixFrames` frames).
  init(mixFrames: Int, staging: UnsafeMutablePointer<Float>, converter: RateConverter.Kernel) {
    self.mixFrames = mixFrames
    self.staging = staging
    self.converter = converter
  }

  /// The project frames the mixer renders for the next `frames` device frames (the audio the
  /// loader must have in memory first).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  func inputNeeded(for frames: Int) -> Int {
    guard let converter else { return frames }
    return converter.inputNeeded(toProduce: frames)
  }

  /// Project frames between the mixer's position and the frame sounding at the device's
  /// converter while the device holds `delay` frames (its own rate): `delay` itself without a
  /// conversion; with one, the project frames rendered but not yet heard (those the
  /// converter still holds, and those behind the device's queued frames, in project frames).
  /// The mixer's position less this is the timeline frame sounding, as ``StreamClock`` logs.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  func framesAhead(deviceDelay delay: Int64) -> Int64 {
    guard let converter else { return delay }
    return rendered - converter.inputFrame(atOutput: converter.produced - delay)
  }

  /// Renders the next `frames` device frames into `output`; returns how many belong to the
  /// play (fewer in the period where it ends, 0 after), as ``Mixing/LiveMixer/render(_:frames:into:)``
  /// does. Converted, the play lasts exactly its project frames × the ratio, rounded up.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  mutating func render(
    _ engine: UnsafeMutablePointer<EngineState>, frames: Int,
    into output: UnsafeMutablePointer<Float>
  ) -> Int {
    guard var kernel = converter, let staging else {
      let played = Self.mix(engine, frames: frames, into: output)
      rendered += Int64(played)
      if played < frames { ended = true }
      return played
    }
    var needed = kernel.inputNeeded(toProduce: frames)
    while needed > 0 {
      let count = min(needed, mixFrames)
      // After the end the mixer renders silence: the converter's input goes on as silence.
      let played = Self.mix(engine, frames: count, into: staging)
      rendered += Int64(played)
      if played < count { ended = true }
      kernel.push(staging, frames: count)
      needed -= count
    }
    let start = kernel.produced
    kernel.pull(frames, into: output)
    converter = kernel
    guard ended else { return frames }
    let last = kernel.outputs(before: rendered)
    return Int(max(0, min(Int64(frames), last - start)))
  }

  /// ``Mixing/LiveMixer/render(_:frames:into:)``, itself `@_noLocks` (checked where it is
  /// written). The checker objects here only to naming the class, whose metadata the mixer's
  /// creation made before this thread started.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  @inline(__always)
  private static func mix(
    _ engine: UnsafeMutablePointer<EngineState>, frames: Int,
    into output: UnsafeMutablePointer<Float>
  ) -> Int {
    _unsafePerformance { LiveMixer.render(engine, frames: frames, into: output) }
  }
}
