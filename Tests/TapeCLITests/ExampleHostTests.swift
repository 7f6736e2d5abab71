import Foundation
import ReferenceRenders
import Testing
import Timeline
import TimelineStore

/// The example app (`Examples/`, a package of its own that depends on Tape by path and uses its
/// libraries as an app would): built by the test command before the tests, run here, and judged
/// by what it left and said, against sox and against the store read back.
enum ExampleHost {
  /// The example's debug build (`swift build --package-path Examples`), where scripts/test.sh
  /// builds it; nil when it has not been built.
  static var binary: String? {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../Examples/.build/debug/tape-host-example")
      .standardizedFileURL.path
    return FileManager.default.isExecutableFile(atPath: path) ? path : nil
  }
}

@Suite(
  "The example app",
  .enabled(
    if: ExampleHost.binary != nil,
    "build it first: swift build --package-path Examples (scripts/test.sh does)"))
struct ExampleHostTests {
  /// It opens a project, commits two clips and a move, follows each snapshot and draws its
  /// diff's animation, undoes and redoes, renders, null-tests two versions and plays: the store
  /// holds what it committed, its mix is the edit list as sox renders it, its animation moves
  /// the clip through eased steps in order, the compare blames the moved clip, and what it
  /// played is its mix.
  @Test func anAppEditsFollowsRendersComparesAndPlays() throws {
    let binary = try #require(ExampleHost.binary)
    let space = try Workspace()
    let folder = space.path("app")
    let tap = try ALSATap()
    let result = try TapeBinary.run(
      URL(fileURLWithPath: binary),
      [folder, "--device", "tap", "--audio", TestAudio.path("speech-mono-48k-16.wav")],
      environment: tap.environment, killAfter: 120)
    let said = result.stdout
    #expect(result.status == 0 && !result.killedBySignal, "\(result.stderr)")
    #expect(result.stderr.isEmpty, "\(result.stderr)")
    let lines = said.split(separator: "\n").map(String.init)

    // The view saw every snapshot, in order, each with its cause.
    let views = lines.filter { $0.hasPrefix("view: ") }
    #expect(
      views == [
        "view: version 1 (opened): 0 tracks, 0 clips",
        "view: version 2 (edit): 1 tracks, 2 clips",
        "view: version 3 (edit): 1 tracks, 2 clips",
        "view: version 2 (undo): 1 tracks, 2 clips",
        "view: version 3 (redo): 1 tracks, 2 clips",
        "view: version 4 (edit): 1 tracks, 2 clips",
      ], "\(said)")
    #expect(lines.contains("  c1 changes in place"), "\(said)")
    #expect(lines.contains("  c1 appears at 0.00 s") && lines.contains("  c2 appears at 3.00 s"))
    // Each move is drawn from where the clip was to where it goes, eased, in order.
    let moves = lines.filter { $0.hasPrefix("  c1 moves ") }
    #expect(moves.count == 3, "\(said)")
    for (line, (from, to)) in zip(moves, [(0.0, 1.0), (1.0, 0.0), (0.0, 1.0)]) {
      let drawn = try #require(line.split(separator: "drawn at ").last)
        .split(separator: ",").compactMap {
          Double($0.trimmingCharacters(in: CharacterSet(charactersIn: " s")))
        }
      #expect(drawn.count == 5 && drawn.first == from && drawn.last == to, "\(line)")
      let steps = zip(drawn, drawn.dropFirst()).map { $1 - $0 }
      #expect(steps.allSatisfy { to > from ? $0 > 0 : $0 < 0 }, "\(line)")
      // Eased: the middle steps cover more than the first and the last.
      #expect(abs(steps[1]) > abs(steps[0]) && abs(steps[2]) > abs(steps[3]), "\(line)")
    }

    // The store holds what it committed, the head where the redo left it.
    let file = "\(folder)/song.tape"
    let store = try TimelineStore.open(at: file, access: .read)
    defer { try? store.close() }
    #expect(store.snapshot.version == 4)
    let project = store.snapshot.project
    let clips = project.tracks.flatMap(\.clips)
    #expect(clips.map(\.timelineStart.frames).sorted() == [48_000, 144_000])
    #expect(clips.first { $0.timelineStart.frames == 48_000 }?.name == "Hello")
    #expect(
      try store.history().versions.map(\.label).suffix(3)
        == ["Add the recording", "Move the first clip", "Name the first clip"])

    // Its mix is the edit list as sox renders it, within mix.wav's 24-bit quantization.
    let mix = try ReferenceRender.decode("\(folder)/mix.wav")
    let sox = try ReferenceRender.sox(project, in: space.url.path)
    #expect(mix.count == sox.count && mix.count == Int(project.timelineEnd.frames) * 2)
    #expect(maxDifferenceDecibels(mix, sox) < -130)
    #expect(lines.contains { $0.hasPrefix("render: \(folder)/mix.wav, 5.00 s") }, "\(said)")

    // The null test of the add and the move differs where the clip was and is, blaming it; a
    // name is the same without a render.
    let compare = lines.filter { $0.hasPrefix("compare v2 v3: differ ") }
    #expect(!compare.isEmpty && compare.allSatisfy { $0.contains("c1") }, "\(said)")
    #expect(lines.contains("compare v3 v4: identical, nothing rendered"), "\(said)")

    // What it played (the first half second) is its mix.
    #expect(lines.contains("play: 24000 frames on tap, 0 dropouts"), "\(said)")
    let played = Array(try tap.captured.prefix(48_000))
    #expect(played.count == 48_000)
    #expect(maxDifferenceDecibels(played, Array(mix.prefix(48_000))) < -130)
  }
}
