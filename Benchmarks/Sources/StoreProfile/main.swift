import Foundation
import Timeline
import TimelineStore

// Usage: StoreProfile FIXTURE.tape [commits]
// Copies the fixture, then times one-clip commits, undos and redos on the copy, the file growth
// per one-field edit, far checkouts and cross-process observation.
// With CHECKOUTS_ONLY=N it only checks out version CHECKOUT_TO (default 1,000) and back N times
// (for callgrind / perf).
let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
  FileHandle.standardError.write(Data("usage: StoreProfile FIXTURE.tape [count]\n".utf8))
  exit(64)
}
let count = arguments.count > 2 ? Int(arguments[2]) ?? 500 : 500
let copy = FileManager.default.temporaryDirectory.appendingPathComponent("profile-\(getpid()).tape")
  .path
try FileManager.default.copyItem(atPath: arguments[1], toPath: copy)
defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + s) } }
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

func time(_ label: String, _ body: () throws -> Void) rethrows {
  var samples: [Double] = []
  for _ in 0..<count {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000)
  }
  samples.sort()
  print(
    "\(label): p50 \(Int(samples[count / 2])) µs, p99 \(Int(samples[count * 99 / 100])) µs, max \(Int(samples[count - 1])) µs"
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
try time("undo+redo") {
  try store.undo()
  try store.redo()
}
try store.close()

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
  let start = DispatchTime.now().uptimeNanoseconds
  try growthStore.commit(label: "Clip gain") { project, _ in
    try project.setClipGain(id, Gain(decibels: -Double(step % 90) / 4 - 0.375))
  }
  // The commits that complete a block of 8,192 versions (the largest block build).
  if growthStore.snapshot.version % 8_192 == 1 {
    blockCommits.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000)
  }
}
try growthStore.close()
let sizeAfter = try fileSize(growthCopy)
print(
  "growth: \((sizeAfter - sizeBefore) / growthEdits) bytes per one-field edit (\(growthEdits) edits, \(sizeBefore) -> \(sizeAfter) bytes)"
)
print("commits that complete an 8,192-version block: \(blockCommits.map { "\(Int($0)) µs" })")

// A checkout across the whole history and back, ≤ 2,000 rows differing in the fixture.
let farCopy = FileManager.default.temporaryDirectory.appendingPathComponent("far-\(getpid()).tape")
  .path
try FileManager.default.copyItem(atPath: arguments[1], toPath: farCopy)
defer {
  for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: farCopy + s) }
}
let farStore = try TimelineStore.open(at: farCopy)
let farHead = farStore.snapshot.version
var farSamples: [Double] = []
for _ in 0..<5 {
  let start = DispatchTime.now().uptimeNanoseconds
  try farStore.checkout(1_000)
  farSamples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
  try farStore.checkout(farHead)
}
print("checkout \(farHead - 1_000) versions back: \(farSamples.sorted().map { "\(Int($0)) ms" })")
// The cost follows the rows that differ, not the versions crossed: median of 5 at each distance.
let headProject = farStore.snapshot.project
for distance in [Int64(10), 100, 1_000, 10_000, 50_000] {
  var samples: [Double] = []
  var rows = 0
  for _ in 0..<5 {
    let start = DispatchTime.now().uptimeNanoseconds
    let snapshot = try farStore.checkout(farHead - distance)
    samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e3)
    rows = ProjectDiff(from: snapshot.project, to: headProject).clips.count
    try farStore.checkout(farHead)
  }
  print(
    "checkout \(distance) versions back: \(rows) clips differ, median \(Int(samples.sorted()[2])) µs"
  )
}
// Across branches: a branch of 300 edits from version 50,000, then jumps from its tip to the
// main head (up 300 versions to the common ancestor, down 50,000).
try farStore.checkout(50_000)
for step in 0..<300 {
  // The fixture's edits touch its first 2,000 clips; so does the branch.
  let id = Clip.ID(Int64(1 + (step * 7) % 2_000))
  try farStore.commit(label: "Branch gain") { project, _ in
    try project.setClipGain(id, Gain(decibels: -Double(step % 90) / 4 - 0.875))
  }
}
let branchTip = farStore.snapshot.version
var branchSamples: [Double] = []
for _ in 0..<5 {
  let start = DispatchTime.now().uptimeNanoseconds
  try farStore.checkout(farHead)
  branchSamples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
  try farStore.checkout(branchTip)
}
let branchRows = ProjectDiff(from: farStore.snapshot.project, to: headProject).clips.count
print(
  "checkout from a 300-version branch at 50,000 to the main head: \(branchRows) clips differ, \(branchSamples.sorted().map { "\(Int($0)) ms" })"
)
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
    let start = DispatchTime.now().uptimeNanoseconds
    try writer.commit(label: "Clip gain") { project, _ in
      try project.setClipGain(id, Gain(decibels: -Double(step % 90) / 4 - 0.625))
    }
    _ = await updates.next()
    samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    try await Task.sleep(for: .milliseconds(Int(step % 7) * 3))
  }
  return samples.sorted()
}()
print(
  "observed another connection's commit after: p50 \(Int(latencies[20])) ms, max \(Int(latencies.last ?? 0)) ms"
)
