import Foundation
import Timeline
import TimelineStore

// Usage:
//   StoreProfile fixture FILE --clips N --versions M
//     builds a benchmark project through the store's API: one (absent) source, 10 tracks, N
//     clips in version 2, then one-clip gain edits up to M versions (each on clip
//     step × 7,919 mod N, so every clip is edited once per N versions), and prints the time taken.
//     10,000 clips / 100,000 versions take about a minute; 100,000 clips / 1,000,000 versions
//     take tens of minutes (see the README): not for CI.
//   StoreProfile FIXTURE.tape [count]
//     on a copy of the fixture: one-clip commit p50/p99 and undo+redo p50/p99 (count of each,
//     default 500), checkouts with up to 2,300 clips differing, and checkouts where every clip
//     differs (version 2, the setup, and version 1, the empty project); with EXTRA=1 also the
//     file growth per one-field edit, far and cross-branch checkouts and cross-process
//     observation.
//   StoreProfile upgrade FILE
//     opens FILE for writing (its migrations run) and closes it once the history blocks the
//     open queued are built: a fixture made by an earlier Tape, upgraded in place.
//   CHECKOUTS_ONLY=N StoreProfile FIXTURE.tape
//     only checks out version CHECKOUT_TO (default 1,000) and back N times (for perf/callgrind).
//   COMMITS_ONLY=1 StoreProfile FIXTURE.tape [count]
//     only the commit and undo+redo figures.
let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
  FileHandle.standardError.write(
    Data(
      "usage: StoreProfile FIXTURE.tape [count] | StoreProfile fixture FILE --clips N --versions M\n"
        .utf8))
  exit(64)
}

func option(_ name: String) -> Int? {
  guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
  return Int(arguments[index + 1])
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

if arguments[1] == "fixture", arguments.count >= 3 {
  let file = arguments[2]
  let clips = option("--clips") ?? 10_000
  let versions = option("--versions") ?? 100_000
  let start = now()
  _ = try TimelineStore.create(at: file)
  let store = try TimelineStore.open(at: file, durability: .normal)
  try store.commit(label: "Setup") { _, ids in
    let source = Source(
      id: ids.newSourceID(), path: "/benchmark/source.wav", contentHash: "benchmark",
      sampleRate: 48_000, channels: 2, frameCount: FrameCount(48_000 * 3_600))
    var commands: [Command] = [.setSource(source)]
    var tracks = (0..<10).map { Track(id: ids.newTrackID(), name: "Track \($0 + 1)") }
    for index in 0..<clips {
      tracks[index % 10].clips.append(
        Clip(
          id: ids.newClipID(), source: source.id,
          timelineStart: FramePosition(Int64(index / 10) * 96_000),
          sourceRange: FrameRange(start: FramePosition(Int64(index) * 1_000), count: 48_000)))
    }
    commands += tracks.map(Command.setTrack)
    return commands
  }
  var step = 0
  while store.snapshot.version < Int64(versions) {
    step += 1
    let id = Clip.ID(Int64(step * 7_919 % clips + 1))
    try store.commit(label: "Gain \(id)") { project, _ in
      // Clip and gain cycles of 1,000 and 40 steps would repeat after 1,000 (an edit that
      // changes nothing makes no version): the gain also moves on every 1,000 steps.
      try project.setClipGain(id, Gain(decibels: -Double((step + step / 1_000) % 40) / 4 - 0.125))
    }
    if step % 100_000 == 0 {
      print("\(step) versions: \(Int(Double(now() - start) / 1e9)) s")
    }
  }
  try store.close()
  let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
  print(
    "fixture: \(clips) clips, \(versions) versions, \(size) bytes, built in \(Int(Double(now() - start) / 1e9)) s"
  )
  exit(0)
}

if arguments[1] == "upgrade", arguments.count >= 3 {
  let start = now()
  try TimelineStore.open(at: arguments[2]).close()
  print("upgraded in \(Int(Double(now() - start) / 1e6)) ms")
  exit(0)
}

let count = arguments.count > 2 ? Int(arguments[2]) ?? 500 : 500
let copy = FileManager.default.temporaryDirectory.appendingPathComponent("profile-\(getpid()).tape")
  .path
try FileManager.default.copyItem(atPath: arguments[1], toPath: copy)
// At exit, which every mode ends with (a top-level `defer` does not run on `exit`, so each run
// used to leave its 200 MB copy behind).
atexit {
  for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + s) }
}
if let rounds = ProcessInfo.processInfo.environment["CHECKOUTS_ONLY"].flatMap(Int.init) {
  let store = try TimelineStore.open(at: copy)
  let head = store.snapshot.version
  let target = ProcessInfo.processInfo.environment["CHECKOUT_TO"].flatMap(Int64.init) ?? 1_000
  for _ in 0..<rounds {
    try store.checkout(target)
    try store.checkout(head)
  }
  try store.close()
  exit(0)
}
let store = try TimelineStore.open(at: copy)
let clips = store.snapshot.project.allClips.map(\.id)
/// This thread's CPU time in ns: what a commit costs besides waiting for the disk (steadier
/// than the wall time on a shared machine).
func cpuNow() -> UInt64 {
  var spec = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
  return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

func time(_ label: String, _ body: () throws -> Void) rethrows {
  var samples: [Double] = []
  var cpu: [Double] = []
  for _ in 0..<count {
    let (start, startCPU) = (now(), cpuNow())
    try body()
    samples.append(Double(now() - start) / 1_000)
    cpu.append(Double(cpuNow() - startCPU) / 1_000)
  }
  samples.sort()
  cpu.sort()
  print(
    "\(label): p50 \(Int(samples[count / 2])) µs, p99 \(Int(samples[count * 99 / 100])) µs, max \(Int(samples[count - 1])) µs (CPU of the calling thread p50 \(Int(cpu[count / 2])) µs)"
  )
}

var step = 0
try time("commit") {
  step += 1
  let id = clips[(step * 7919) % clips.count]
  try store.commit(label: "Clip gain") { project, _ in
    try project.setClipGain(id, Gain(decibels: -Double(step % 90) / 4 - 0.125))
  }
}
// The pair, and each of its two moves (each one durable commit) on its own.
var undos: [Double] = []
var redos: [Double] = []
try time("undo+redo") {
  let start = now()
  try store.undo()
  let middle = now()
  try store.redo()
  undos.append(Double(middle - start) / 1_000)
  redos.append(Double(now() - middle) / 1_000)
}
for (label, samples) in [("undo", undos.sorted()), ("redo", redos.sorted())] {
  print(
    "  \(label) alone: p50 \(Int(samples[count / 2])) µs, p99 \(Int(samples[count * 99 / 100])) µs"
  )
}
if ProcessInfo.processInfo.environment["COMMITS_ONLY"] != nil {
  try store.close()
  exit(0)
}

// Checkouts: from the head to a version and back, the median of 5 of the way there; the clips
// that differ counted by the model's diff.
let head = store.snapshot.version
let headProject = store.snapshot.project
func checkouts(_ label: String, to target: Int64) throws {
  var samples: [Double] = []
  var back: [Double] = []
  var differing = 0
  for _ in 0..<5 {
    let start = now()
    let snapshot = try store.checkout(target)
    samples.append(Double(now() - start) / 1e6)
    differing = ProjectDiff(from: snapshot.project, to: headProject).clips.count
    let backStart = now()
    try store.checkout(head)
    back.append(Double(now() - backStart) / 1e6)
  }
  samples.sort()
  back.sort()
  print(
    "checkout \(label) (version \(target)): \(differing) clips differ, median \(String(format: "%.2f", samples[2])) ms, min \(String(format: "%.2f", samples[0])) ms, max \(String(format: "%.2f", samples[4])) ms; back to the head: median \(String(format: "%.2f", back[2])) ms"
  )
}
// What the moves above left pending (a large move keeps its change in one row): the next edit
// writes it to the rows first, and so does closing. Timed: an edit right after the farthest
// checkout there and back, then after a checkout to the setup left pending.
func firstEdit(_ label: String) throws {
  let start = now()
  try store.commit(label: "First edit") { project, _ in
    try project.setClipGain(clips[0], Gain(decibels: -0.25))
  }
  print(
    "first edit \(label): \(String(format: "%.2f", Double(now() - start) / 1e6)) ms"
  )
}
for distance in [Int64(10), 100, 1_000, 2_300] where distance < head - 2 {
  try checkouts("\(distance) versions back", to: head - distance)
}
try checkouts("to the setup, every clip differs", to: 2)
try checkouts("to the empty project, every clip differs", to: 1)
try firstEdit("after the checkouts")
// Small moves while a large one is pending: each is composed into the pending change, which is
// written whole (what a scrub after a far jump pays per step).
if head > 1_000 {
  try store.checkout(head / 2)
  var pairs: [Double] = []
  for _ in 0..<20 {
    let start = now()
    try store.undo()
    try store.redo()
    pairs.append(Double(now() - start) / 1e6)
  }
  pairs.sort()
  print(
    "undo+redo while a checkout of version \(head / 2) is pending: median \(String(format: "%.2f", pairs[10])) ms, max \(String(format: "%.2f", pairs[19])) ms"
  )
  try store.checkout(head)
}
try store.checkout(2)
try firstEdit("after a checkout of every clip (it writes the pending move first)")
let closing = now()
try store.checkout(head)
try store.close()
print(
  "checkout back and close (which writes a pending move): \(String(format: "%.2f", Double(now() - closing) / 1e6)) ms"
)

guard ProcessInfo.processInfo.environment["EXTRA"] == "1" else { exit(0) }

// File growth per one-field edit: checkpointed size before and after 16,384 clip-gain edits,
// each on a different clip (the worst case for the history blocks: nothing merges), so the
// edits complete 64 blocks of 256 versions and 2 of 8,192.
let growthEdits = 16_384
let growthCopy = FileManager.default.temporaryDirectory
  .appendingPathComponent("growth-\(getpid()).tape").path
try FileManager.default.copyItem(atPath: arguments[1], toPath: growthCopy)
defer {
  for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: growthCopy + s) }
}
func fileSize(_ path: String) throws -> Int {
  (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
}
let sizeBefore = try fileSize(growthCopy)
let growthStore = try TimelineStore.open(at: growthCopy)
var blockCommits: [Double] = []
for step in 0..<growthEdits {
  let id = clips[(step * 7919) % clips.count]
  let start = now()
  try growthStore.commit(label: "Clip gain") { project, _ in
    try project.setClipGain(id, Gain(decibels: -Double(step % 90) / 4 - 0.375))
  }
  // The commits that complete a block of 8,192 versions (the largest block build).
  if growthStore.snapshot.version % 8_192 == 1 {
    blockCommits.append(Double(now() - start) / 1_000)
  }
}
try growthStore.close()
let sizeAfter = try fileSize(growthCopy)
print(
  "growth: \((sizeAfter - sizeBefore) / growthEdits) bytes per one-field edit (\(growthEdits) edits, \(sizeBefore) -> \(sizeAfter) bytes)"
)
print("commits that complete an 8,192-version block: \(blockCommits.map { "\(Int($0)) µs" })")

// A checkout across the whole history and back.
let farCopy = FileManager.default.temporaryDirectory.appendingPathComponent("far-\(getpid()).tape")
  .path
try FileManager.default.copyItem(atPath: arguments[1], toPath: farCopy)
defer {
  for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: farCopy + s) }
}
let farStore = try TimelineStore.open(at: farCopy)
let farHead = farStore.snapshot.version
let farProject = farStore.snapshot.project
for distance in [Int64(10_000), 50_000] where distance < farHead - 2 {
  var samples: [Double] = []
  var rows = 0
  for _ in 0..<5 {
    let start = now()
    let snapshot = try farStore.checkout(farHead - distance)
    samples.append(Double(now() - start) / 1e3)
    rows = ProjectDiff(from: snapshot.project, to: farProject).clips.count
    try farStore.checkout(farHead)
  }
  print(
    "checkout \(distance) versions back: \(rows) clips differ, median \(Int(samples.sorted()[2])) µs"
  )
}
// Across branches: a branch of 300 edits from version 50,000, then jumps from its tip to the
// main head (up 300 versions to the common ancestor, down the rest).
if farHead > 50_000 {
  try farStore.checkout(50_000)
  for step in 0..<300 {
    let id = clips[(step * 7) % min(2_000, clips.count)]
    try farStore.commit(label: "Branch gain") { project, _ in
      try project.setClipGain(id, Gain(decibels: -Double(step % 90) / 4 - 0.875))
    }
  }
  let branchTip = farStore.snapshot.version
  var branchSamples: [Double] = []
  for _ in 0..<5 {
    let start = now()
    try farStore.checkout(farHead)
    branchSamples.append(Double(now() - start) / 1e6)
    try farStore.checkout(branchTip)
  }
  let branchRows = ProjectDiff(from: farStore.snapshot.project, to: farProject).clips.count
  print(
    "checkout from a 300-version branch at 50,000 to the main head: \(branchRows) clips differ, \(branchSamples.sorted().map { "\(Int($0)) ms" })"
  )
}
try farStore.close()

// How soon a commit made through another connection (as by another process) reaches a
// subscriber of this one: the polling interval is 20 ms.
let watchCopy = FileManager.default.temporaryDirectory.appendingPathComponent(
  "watch-\(getpid()).tape"
).path
try FileManager.default.copyItem(atPath: arguments[1], toPath: watchCopy)
defer {
  for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: watchCopy + s) }
}
let watcher = try TimelineStore.open(at: watchCopy)
let writer = try TimelineStore.open(at: watchCopy)
let latencies = try await { () async throws -> [Double] in
  var updates = watcher.updates().makeAsyncIterator()
  _ = await updates.next()
  var samples: [Double] = []
  for step in 0..<40 {
    let id = clips[(step * 104_729) % clips.count]
    let start = now()
    try writer.commit(label: "Clip gain") { project, _ in
      try project.setClipGain(id, Gain(decibels: -Double(step % 90) / 4 - 0.625))
    }
    _ = await updates.next()
    samples.append(Double(now() - start) / 1e6)
    try await Task.sleep(for: .milliseconds(Int(step % 7) * 3))
  }
  return samples.sorted()
}()
print(
  "observed another connection's commit after: p50 \(Int(latencies[20])) ms, max \(Int(latencies.last ?? 0)) ms"
)
