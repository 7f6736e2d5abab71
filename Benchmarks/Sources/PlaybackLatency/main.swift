// How soon an edit is heard when the player and the editor are one process: commits a gain
// change N times to a project that a LivePlayer plays on an ALSA device, and prints, for each,
// the time from the commit returning to the first frame rendered from the new plan
// (CLOCK_MONOTONIC on both sides), with the median and p99.
//
//   swift run -c release PlaybackLatency PROJECT.tape DEVICE [EDITS [PERIOD]]
//
// Benchmarks/playback-latency.py runs it on JACK's dummy driver (paced, 256-frame periods by
// default, --period to change), beside the same measurement across processes.
import AudioFiles
import Foundation
import Mixing
import Playback
import Timeline
import TimelineStore

func monotonic() -> UInt64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
  FileHandle.standardError.write(
    Data("usage: PlaybackLatency PROJECT.tape DEVICE [EDITS [PERIOD]]\n".utf8))
  exit(64)
}
let edits = arguments.count > 3 ? Int(arguments[3]) ?? 50 : 50
let periodFrames = arguments.count > 4 ? Int(arguments[4]) ?? 256 : 256
let store = try TimelineStore.open(at: arguments[1])
let project = store.snapshot.project
guard let track = project.tracks.first else { fatalError("the project needs a track") }
let library = AudioLibrary(cache: AudioCache(forProject: arguments[1], lockingMemory: true))
let player = try LivePlayer(
  LivePlayer.Configuration(
    device: DeviceRequest(name: arguments[2], period: periodFrames, periods: 4),
    sampleRate: project.sampleRate, channels: project.channels, range: 0..<Int64.max, loop: true),
  compile: { project, version, sequence in
    try RenderPlan(
      project: project, audio: try library.audio(for: project), version: version,
      sequence: sequence)
  },
  load: { audio, chunk in try library.makeResident(audio, chunk) })
try player.start(project, version: store.snapshot.version)
let follower = Task.detached {
  for await update in store.updates() where !update.moves.isEmpty {
    player.offer(update.project, version: update.version, cause: update.cause?.rawValue)
  }
}
Thread.sleep(forTimeInterval: 1)
var returned: [UInt64] = []
for step in 0..<edits {
  try store.commit(label: "Gain \(step)") { project, _ in
    try project.setTrack(track.id, gain: Gain(decibels: -Double(step % 20) - 1))
  }
  returned.append(monotonic())
  // Spaced well beyond a swap and its ramp, so each commit is its own swap.
  Thread.sleep(forTimeInterval: 0.15)
}
Thread.sleep(forTimeInterval: 0.3)
player.stop()
let report = player.wait()
follower.cancel()
let swaps = report.swaps.dropFirst()
let delays = zip(swaps, returned).map { swap, returned in
  Double(Int64(bitPattern: swap.renderedAt) - Int64(bitPattern: returned)) / 1e6
}.sorted()
let period = Double(periodFrames) / Double(project.sampleRate) * 1_000
func percentile(_ p: Double) -> Double {
  delays[min(delays.count - 1, Int(Double(delays.count) * p))]
}
print(
  String(
    format:
      "in-process: %d edits, %d swaps; commit → first new frame rendered: median %.2f ms, p99 %.2f ms, min %.2f, max %.2f (a period is %.2f ms); xruns %d",
    edits, swaps.count, percentile(0.5), percentile(0.99), delays.first ?? 0, delays.last ?? 0,
    period, report.xruns))
