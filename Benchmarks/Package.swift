// swift-tools-version: 6.2
// Tape's benchmarks: a package of their own so the main build and `swift test` stay fast.
// Run from this directory: swift package benchmark

import Foundation
import PackageDescription

// A path dependency is named after its directory, which differs between checkouts.
let tapePackage = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
  name: "TapeBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(path: ".."),
    .package(
      url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
  ],
  targets: [
    // Runs a fixed workload on a store fixture, for profilers (callgrind) and quick figures.
    .executableTarget(
      name: "StoreProfile",
      dependencies: [
        .product(name: "Timeline", package: tapePackage),
        .product(name: "TimelineStore", package: tapePackage),
      ],
      path: "Sources/StoreProfile"
    ),
    // Commit → first frame rendered, player and editor in one process (needs an ALSA device).
    .executableTarget(
      name: "PlaybackLatency",
      dependencies: [
        .product(name: "Timeline", package: tapePackage),
        .product(name: "TimelineStore", package: tapePackage),
        .product(name: "Mixing", package: tapePackage),
        .product(name: "AudioFiles", package: tapePackage),
        .product(name: "Playback", package: tapePackage),
      ],
      path: "Sources/PlaybackLatency"
    ),
    .executableTarget(
      name: "TimelineBenchmarks",
      dependencies: [
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "Timeline", package: tapePackage),
      ],
      path: "Benchmarks/TimelineBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
    .executableTarget(
      name: "StoreBenchmarks",
      dependencies: [
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "Timeline", package: tapePackage),
        .product(name: "TimelineStore", package: tapePackage),
        .product(name: "TerminalViews", package: tapePackage),
      ],
      path: "Benchmarks/StoreBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
    .executableTarget(
      name: "RenderBenchmarks",
      dependencies: [
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "Timeline", package: tapePackage),
        .product(name: "Mixing", package: tapePackage),
      ],
      path: "Benchmarks/RenderBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
    .executableTarget(
      name: "PlaybackBenchmarks",
      dependencies: [
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "Timeline", package: tapePackage),
        .product(name: "Mixing", package: tapePackage),
      ],
      path: "Benchmarks/PlaybackBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
  ]
)
