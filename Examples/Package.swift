// swift-tools-version: 6.2
// An app built on Tape's libraries (the README's last paragraph): it depends on Tape by path
// and uses its library products the way a program with a timeline view would.
// scripts/test.sh builds and runs it; run it yourself with
//
//   swift run --package-path Examples tape-host-example [FOLDER] [--device NAME]

import PackageDescription

let package = Package(
  name: "TapeExamples",
  platforms: [.macOS(.v15)],
  dependencies: [.package(name: "Tape", path: "..")],
  targets: [
    .executableTarget(
      name: "tape-host-example",
      dependencies: [
        .product(name: "Timeline", package: "Tape"),
        .product(name: "TimelineStore", package: "Tape"),
        .product(name: "Mixing", package: "Tape"),
        .product(name: "AudioFiles", package: "Tape"),
        .product(name: "Playback", package: "Tape"),
        .product(name: "SafeFiles", package: "Tape"),
      ],
      swiftSettings: [.treatAllWarnings(as: .error)])
  ]
)
