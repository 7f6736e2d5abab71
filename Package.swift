// swift-tools-version: 6.2
// Tape: a multitrack audio editing engine with an undoable timeline.
// See ../shared/ARCHITECTURE.md for the design each target serves.

import PackageDescription

let package = Package(
  name: "Tape",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "tape", targets: ["tape"]),
    .library(name: "Timeline", targets: ["Timeline"]),
    .library(name: "TimelineStore", targets: ["TimelineStore"]),
    .library(name: "Mixing", targets: ["Mixing"]),
    .library(name: "AudioFiles", targets: ["AudioFiles"]),
    .library(name: "Playback", targets: ["Playback"]),
    .library(name: "TerminalViews", targets: ["TerminalViews"]),
    .library(name: "Pictures", targets: ["Pictures"]),
    .library(name: "Effects", targets: ["Effects"]),
    .library(name: "Interchange", targets: ["Interchange"]),
  ],
  dependencies: [
    .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
  ],
  targets: [
    // C libraries, each behind one module map.
    .systemLibrary(
      name: "CSndfile",
      pkgConfig: "sndfile",
      providers: [.apt(["libsndfile1-dev"])]
    ),
    .systemLibrary(
      name: "CALSA",
      pkgConfig: "alsa",
      providers: [.apt(["libasound2-dev"])]
    ),
    .systemLibrary(
      name: "CSoxr",
      pkgConfig: "soxr",
      providers: [.apt(["libsoxr-dev"])]
    ),
    // SHA-256, which identifies a source's bytes against a forger (OpenSSL's libcrypto).
    .systemLibrary(
      name: "CCrypto",
      pkgConfig: "libcrypto",
      providers: [.apt(["libssl-dev"])]
    ),
    // Declares SQLite's session extension, which Debian's libsqlite3 exports but whose header
    // only declares under SQLITE_ENABLE_SESSION + SQLITE_ENABLE_PREUPDATE_HOOK.
    .systemLibrary(
      name: "CSQLiteSession",
      providers: [.apt(["libsqlite3-dev"])]
    ),

    // LV2 plugin hosting: lilv and the LV2 extension headers.
    .systemLibrary(
      name: "CLilv",
      pkgConfig: "lilv-0",
      providers: [.apt(["liblilv-dev", "lv2-dev"])]
    ),

    // The audio thread's stack and page faults (glibc's _GNU_SOURCE calls).
    .systemLibrary(name: "CRealtime"),
    // Flushing and checking C's stdout, which Swift 6 cannot name.
    .systemLibrary(name: "CStandardOutput"),

    // Pure core: model values, time, validation, edits, commands, diffs. No I/O, no C.
    .target(
      name: "Timeline",
      dependencies: [.product(name: "HashTreeCollections", package: "swift-collections")]),
    // How Tape writes a file safely (unnamed temporary files, streams, signals): one small
    // shell every writer uses. No dependencies.
    .target(name: "SafeFiles"),
    // The store: one SQLite file per project, commit/undo/redo/history/observation.
    .target(
      name: "TimelineStore",
      dependencies: [
        "Timeline",
        "SafeFiles",
        "CSQLiteSession",
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // Other editors' formats: OpenTimelineIO in and out, CMX3600 EDLs out. Pure, no I/O.
    .target(name: "Interchange", dependencies: ["Timeline"]),
    // Text views of a project for terminals (tape scrub): pure, measurable without a terminal.
    .target(name: "TerminalViews", dependencies: ["Timeline"]),
    // Pictures of a project (tape draw): SVG drawn from the model and waveform peaks. Pure.
    .target(name: "Pictures", dependencies: ["Timeline"]),
    // Pure DSP: render plans, fades, gain, pan law, the render kernel.
    .target(
      name: "Mixing",
      dependencies: ["Timeline", "Effects", .product(name: "Atomics", package: "swift-atomics")]),
    // Decoding, the decoded-audio cache, export writers and the offline renderer (libsndfile).
    .target(
      name: "AudioFiles",
      dependencies: [
        "Timeline",
        "Mixing",
        "Pictures",
        "SafeFiles",
        "CSndfile",
        "CCrypto",
        "CSoxr",
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // The ALSA device thread, transport, plan swap and retirement.
    .target(
      name: "Playback",
      dependencies: [
        "Timeline",
        "Mixing",
        "CALSA",
        "CRealtime",
        .product(name: "Atomics", package: "swift-atomics"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // LV2 plugins: the lilv world, discovery, running instances and their worker threads.
    .target(
      name: "Effects",
      dependencies: [
        "CLilv",
        .product(name: "Atomics", package: "swift-atomics"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // Argument parsing and wiring only.
    .executableTarget(
      name: "tape",
      dependencies: [
        "Timeline",
        "TimelineStore",
        "Mixing",
        "AudioFiles",
        "Playback",
        "SafeFiles",
        "TerminalViews",
        "Pictures",
        "Effects",
        "Interchange",
        "CStandardOutput",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ],
      // A release `tape` carries the Swift runtime and Foundation (static: the libraries
      // static Foundation needs are named, as `--static-swift-stdlib` does) and is not
      // position-independent: each process then skips loading and relocating the shared runtime
      // (README, "One edit, one process"). Debug builds and the tests, which link the tape
      // target with XCTest, keep the shared runtime.
      linkerSettings: [
        .unsafeFlags(
          [
            "-static-stdlib", "-Xlinker", "-no-pie", "-lFoundation",
            "-lFoundationInternationalization", "-lFoundationEssentials", "-lCoreFoundation",
            "-l_FoundationICU", "-l_FoundationCShims", "-l_FoundationCollections",
            "-lswiftSynchronization",
          ],
          .when(platforms: [.linux], configuration: .release))
      ]
    ),

    .testTarget(
      name: "TimelineTests", dependencies: ["Timeline", "TerminalViews", "ReferenceRenders"]),
    .testTarget(name: "SafeFilesTests", dependencies: ["SafeFiles"]),
    .testTarget(name: "PicturesTests", dependencies: ["Pictures", "Timeline", "ReferenceRenders"]),
    .testTarget(
      name: "TimelineStoreTests",
      dependencies: [
        "TimelineStore", "Timeline", "ReferenceRenders",
        .product(name: "GRDB", package: "GRDB.swift"),
      ]
    ),
    .testTarget(name: "MixingTests", dependencies: ["Mixing", "Timeline", "ReferenceRenders"]),
    // Independent sox and ffmpeg renders of an edit list, shared by the render and demo tests.
    .target(name: "ReferenceRenders", dependencies: ["Timeline"], path: "Tests/ReferenceRenders"),
    .testTarget(
      name: "AudioFilesTests",
      dependencies: ["AudioFiles", "Mixing", "Timeline", "ReferenceRenders", "SafeFiles"]),
    .testTarget(name: "EffectsTests", dependencies: ["Effects"]),
    .testTarget(name: "PlaybackTests", dependencies: ["Playback", "Mixing", "Timeline"]),
    // What the command-line tests need another process for (a commit loop to kill, a held
    // write lock, the store's own check), kept out of the user's `tape`.
    .executableTarget(
      name: "tape-testing", dependencies: ["TimelineStore", "Timeline", "Effects"],
      path: "Tests/TestingTool"),
    .testTarget(
      name: "TapeCLITests",
      dependencies: [
        "tape", "tape-testing", "TimelineStore", "Timeline", "ReferenceRenders", "SafeFiles",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
  ]
)

// Our own Swift targets get the strict settings of STYLE.md; dependencies are left alone.
for target in package.targets where target.type != .system {
  target.swiftSettings =
    (target.swiftSettings ?? []) + [
      .enableUpcomingFeature("InternalImportsByDefault"),
      .enableUpcomingFeature("ExistentialAny"),
      .enableUpcomingFeature("MemberImportVisibility"),
      .treatAllWarnings(as: .error),
    ]
}
