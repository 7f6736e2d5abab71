import Foundation
import Testing

/// How a test of edits heard live judges one attempt of its paced capture (LiveRoutingTests,
/// LiveSidechainTests, AutomationTests' live test), following docs/alsa-testing.md:
/// - no click anywhere: the left channel's largest second difference is at most 0.003;
/// - the audio thread allocated and freed nothing (the LD_PRELOAD counter's `allocations` file);
/// - a swap for each change and the first plan;
/// - once the last change has settled, the capture equals the render of the last version (to
///   1e-4) over `settled(last)`, the frames of the render to compare (from, up to) given the
///   frame of the last swap, and over at least `minimumCompared` of them: a last change that settled too late
///   leaves too little to compare, and fails rather than passing unjudged. The two are lined up
///   by their first sounding frames (within `alignWithin` frames of that, the best of them).
///
/// A difference while jackd logged xruns is retried once (``PacedDevice/verdict``): returns
/// false to retry, true when the attempt was judged (or could not be, saying why).
func judgeLiveEdits(
  _ name: String, device: PacedDevice, captured: [Float], render: [Float],
  settled: (Int) -> (from: Int, to: Int), minimumCompared: Int, swaps: [[String: Any]],
  changes: Int,
  said: String, report: [String: Any], attempt: Int, allocations: String, alignWithin: Int = 0
) throws -> Bool {
  let left = stride(from: 0, to: captured.count, by: 2).map { captured[$0] }
  var largest: Float = 0
  for index in 1..<max(left.count - 1, 1) {
    largest = max(largest, abs(left[index + 1] - 2 * left[index] + left[index - 1]))
  }
  let last = swaps.last?["frame"] as? Int ?? 0
  let onsets = (onset(captured) ?? 0) - (onset(render) ?? 0)
  var (worst, compared) = (Float.infinity, 0)
  let range = settled(last)
  // The capture lined up with the render by their first sounding frames, or within
  // `alignWithin` frames of that where an effect makes the first one uncertain (a convolver's
  // arithmetic leaves a value near 1e-12 before the sound in one and not the other).
  for start in (onsets - alignWithin)...(onsets + alignWithin) {
    var (lagWorst, lagCompared): (Float, Int) = (0, 0)
    for frame in range.from..<max(range.from, range.to)
    where frame >= 0 && start + frame >= 0 && (start + frame) * 2 + 1 < captured.count
      && frame * 2 + 1 < render.count
    {
      lagCompared += 1
      for channel in 0..<2 {
        lagWorst = max(
          lagWorst, abs(captured[(start + frame) * 2 + channel] - render[frame * 2 + channel]))
      }
    }
    if lagWorst < worst { (worst, compared) = (lagWorst, lagCompared) }
  }
  let verdict = device.verdict(
    differs: largest > 0.003 || worst > 1e-4, attempt: attempt,
    playerXruns: report["xruns"] as? Int ?? -1,
    playerRealtime: report["realtimePriority"] as? Bool ?? false)
  print(
    "\(name): largest second difference \(largest), settled vs render \(worst) over \(compared) frames, swaps \(swaps.map { "\($0["kind"] ?? "")@\($0["frame"] ?? "")" }), jackd xruns \(device.serverXruns), attempt \(attempt)"
  )
  if verdict == .retry { return false }
  #expect(swaps.count >= changes + 1, "\(said)")
  let counts = try String(contentsOfFile: allocations, encoding: .utf8)
    .split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
  #expect(counts == [0, 0], "the audio thread allocated or freed")
  if case .unjudged(let reason) = verdict {
    print("\(name): not judged: \(reason)")
    return true
  }
  #expect(largest <= 0.003, "a click: a second difference of \(largest)")
  #expect(worst <= 1e-4, "once settled, the capture differs from the render by \(worst)")
  #expect(compared >= minimumCompared, "only \(compared) settled frames compared with the render")
  return true
}
