import Foundation
public import Mixing
public import Timeline

/// Plays a render plan through an ALSA device, from the calling thread, until the range ends.
///
/// It renders with the same kernel as the offline renderer, block by block, so what plays is
/// sample for sample what `tape render` writes. This first player does not follow edits made
/// while it plays; swapping plans in on a realtime thread is the playback issue's work.
///
/// ```swift
/// let report = try PlanPlayer.play(plan, range: range, device: "default")
/// ```
public enum PlanPlayer {
  /// What happened during playback.
  public struct Report: Sendable, Equatable {
    public var frames: Int64
    public var underruns: Int
  }

  /// Why `device` cannot play `channels` of float32 at `sampleRate`, or nil when it can.
  public static func check(device: String, sampleRate: Int, channels: Int) -> PlaybackError? {
    do {
      _ = try ALSAOutput(device: device, sampleRate: sampleRate, channels: channels)
      return nil
    } catch {
      return error
    }
  }

  /// Opens `device` at the plan's rate and channel count, plays `range` and drains.
  ///
  /// - Parameters:
  ///   - prepare: called before each block with its timeline range, to read the decoded audio
  ///     it plays into memory; a failure stops playback.
  ///   - isCancelled: polled between blocks; playback stops (without draining) when it is true.
  public static func play(
    _ plan: RenderPlan, range: FrameRange, device: String, blockFrames: Int = 1_024,
    prepare: (Range<Int64>) throws -> Void,
    progress: (Int64) -> Void = { _ in }, isCancelled: () -> Bool = { false }
  ) throws -> Report {
    let output = try ALSAOutput(
      device: device, sampleRate: plan.sampleRate, channels: plan.outputChannels)
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * plan.outputChannels)
    defer { buffer.deallocate() }
    var position = range.start.frames
    let end = range.end.frames
    while position < end {
      if isCancelled() {
        return Report(frames: position - range.start.frames, underruns: output.underruns)
      }
      let frames = Int(min(Int64(blockFrames), end - position))
      try prepare(position..<position + Int64(frames))
      RenderKernel.render(plan.view, from: position, frames: frames, into: buffer)
      try output.write(buffer, frames: frames)
      position += Int64(frames)
      progress(position - range.start.frames)
    }
    output.drain()
    withExtendedLifetime(plan) {}
    return Report(frames: range.count.frames, underruns: output.underruns)
  }
}
