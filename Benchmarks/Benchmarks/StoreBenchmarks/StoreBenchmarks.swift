import Benchmark
import Foundation
import TerminalViews
import Timeline
import TimelineStore

/// State a benchmark's setup hands to its closure.
final class Shared: @unchecked Sendable {
  var store: TimelineStore?
  var path = ""
  var rng = SplitMix(state: 7)
}

/// `Benchmark(...)` with the measured closure last, as trailing-closure syntax wants it.
func measure(
  _ name: String, configuration: Benchmark.Configuration = Benchmark.defaultConfiguration,
  setup: Benchmark.BenchmarkSetupHook? = nil, teardown: Benchmark.BenchmarkTeardownHook? = nil,
  _ body: @escaping Benchmark.BenchmarkThrowingClosure
) {
  Benchmark(name, configuration: configuration, closure: body, setup: setup, teardown: teardown)
}

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = .init(
    metrics: [.wallClock],
    warmupIterations: 20,
    maxDuration: .seconds(4),
    maxIterations: 3_000
  )

  // Commit, undo and redo on projects of two sizes and two history lengths: the goal is < 1 ms
  // median and < 3 ms p99 with synchronous=FULL, flat in both.
  let shapes = [(10_000, 100_000), (10_000, 1_000), (100, 100_000)]
  for (clips, versions) in shapes {
    let shape = "\(clips) clips, \(versions / 1_000)k versions"
    let shared = Shared()
    let setup: Benchmark.BenchmarkSetupHook = {
      (shared.store, shared.path) = try StoreFixtures.copy(clips: clips, versions: versions)
    }
    let teardown: Benchmark.BenchmarkTeardownHook = {
      try shared.store?.close()
      StoreFixtures.remove(shared.path)
    }

    measure("Commit one-clip edit (\(shape))", setup: setup, teardown: teardown) { benchmark in
      guard let store = shared.store else { return }
      for _ in benchmark.scaledIterations {
        let id = Clip.ID(Int64.random(in: 1...Int64(clips), using: &shared.rng))
        let gain = Gain(decibels: -Double(Int.random(in: 0...96, using: &shared.rng)) / 4 - 0.125)
        try store.commit(label: "Clip gain") { project, _ in try project.setClipGain(id, gain) }
      }
    }

    measure("Undo (\(shape))", setup: setup, teardown: teardown) { benchmark in
      guard let store = shared.store else { return }
      for _ in benchmark.scaledIterations {
        benchmark.startMeasurement()
        try store.undo()
        benchmark.stopMeasurement()
        try store.redo()
      }
    }

    measure("Redo (\(shape))", setup: setup, teardown: teardown) { benchmark in
      guard let store = shared.store else { return }
      for _ in benchmark.scaledIterations {
        try store.undo()
        benchmark.startMeasurement()
        try store.redo()
        benchmark.stopMeasurement()
      }
    }
  }

  // Checkout across the whole history: from the head (version 100,000) to version 1,000 and
  // back, ~98,000 versions crossed, at most 2,000 rows differing.
  let far = Shared()
  measure(
    "Checkout 99k versions away, ≤2,000 rows differ (10000 clips, 100k versions)",
    configuration: .init(
      metrics: [.wallClock], warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 20),
    setup: { (far.store, far.path) = try StoreFixtures.copy(clips: 10_000, versions: 100_000) },
    teardown: {
      try far.store?.close()
      StoreFixtures.remove(far.path)
    }
  ) { benchmark in
    guard let store = far.store else { return }
    for _ in benchmark.scaledIterations {
      let head = store.snapshot.version
      benchmark.startMeasurement()
      try store.checkout(1_000)
      benchmark.stopMeasurement()
      try store.checkout(head)
    }
  }

  let opening = Shared()
  measure(
    "Open a project (10000 clips, 100k versions)",
    configuration: .init(
      metrics: [.wallClock], warmupIterations: 2, maxDuration: .seconds(5), maxIterations: 100),
    setup: { opening.path = try StoreFixtures.path(clips: 10_000, versions: 100_000) }
  ) { benchmark in
    for _ in benchmark.scaledIterations {
      benchmark.startMeasurement()
      let store = try TimelineStore.open(at: opening.path)
      blackHole(store.snapshot.version)
      benchmark.stopMeasurement()
      try store.close()
    }
  }

  // Scrubbing: one step through history as `tape scrub` takes it (the neighbouring version read
  // from the one on screen, the diff, one frame drawn at 200×50), on the 10,000-clip project
  // with 100,000 versions. 60 steps a second need each under 16.7 ms.
  let scrub = Shared()
  measure(
    "Scrub one version back: read + diff + frame (10000 clips, 100k versions)",
    configuration: .init(
      metrics: [.wallClock], warmupIterations: 5, maxDuration: .seconds(5), maxIterations: 2_000),
    setup: { (scrub.store, scrub.path) = try StoreFixtures.copy(clips: 10_000, versions: 100_000) },
    teardown: {
      try scrub.store?.close()
      StoreFixtures.remove(scrub.path)
    }
  ) { benchmark in
    guard let store = scrub.store else { return }
    var shown = try store.read(store.snapshot.version)
    let span = max(shown.project.timelineEnd.frames, 48_000)
    for _ in benchmark.scaledIterations {
      let back = shown.version > 2 ? shown.version - 1 : store.snapshot.version
      benchmark.startMeasurement()
      let (next, diff) = try store.step(from: shown, to: back)
      let frame = TimelineScreen.lines(
        of: diff.interpolated(at: 1), width: 200, height: 50, span: span, header: "v\(back)",
        footer: "")
      benchmark.stopMeasurement()
      blackHole(frame)
      shown = next
    }
  }
}
