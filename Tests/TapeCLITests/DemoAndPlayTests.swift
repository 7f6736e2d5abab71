import Foundation
import ReferenceRenders
import Testing
import Timeline
import TimelineStore

/// A HOME whose ~/.asoundrc defines `tap`: ALSA's file plugin over the null device, capturing
/// every frame played as raw float32 (docs/alsa-testing.md, recipe 1).
final class ALSATap {
  let home: Workspace
  let capture: String

  init() throws {
    home = try Workspace()
    capture = home.path("tap.raw")
    try """
    pcm.tap {
      type file
      slave.pcm "null"
      file "\(capture)"
      format "raw"
    }
    """.write(toFile: home.path(".asoundrc"), atomically: true, encoding: .utf8)
  }

  var environment: [String: String] { ["HOME": home.url.path] }

  var captured: [Float] {
    get throws {
      try ReferenceRender.readFloats(capture)
    }
  }
}

@Suite("tape play and tape demo")
struct DemoAndPlayTests {
  /// What `tape play` sends to ALSA is, frame for frame, what `tape render --bits 32f` writes.
  @Test func playingEqualsTheRender() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let tap = try ALSATap()
    let played = try TapeBinary.run(
      ["play", file, "--device", "tap", "--from", "0.25s", "--json"], environment: tap.environment)
    #expect(played.status == 0, "\(played.stderr)")
    let report = try #require(try parseJSON(played.stdout) as? [String: Any])
    #expect(report["underruns"] as? Int == 0)
    try space.tape("render", file, "-o", space.path("mix.wav"), "--bits", "32f", "--from", "0.25s")
    let rendered = try ReferenceRender.decode(space.path("mix.wav"))
    #expect(rendered.count == 2 * 156_000)
    // The play, then a buffer of silence (4 periods, or 80 ms at normal priority) before the
    // device is drained.
    let captured = try tap.captured
    #expect(Array(captured.prefix(rendered.count)) == rendered)
    let buffer = try #require(report["bufferFrames"] as? Int)
    #expect(buffer == (report["realtimePriority"] as? Bool == true ? 1_024 : 3_840))
    #expect(captured.count - rendered.count == 2 * buffer)
    #expect(captured.dropFirst(rendered.count).allSatisfy { $0 == 0 })
  }

  /// A play too loud for full scale counts the samples past it (`overs`), exactly those of
  /// what the device was sent.
  @Test func oversAreCounted() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    try space.tape("track", "set", file, "t1", "--gain", "20dB")
    let tap = try ALSATap()
    let played = try TapeBinary.run(
      ["play", file, "--device", "tap", "--json"], environment: tap.environment)
    #expect(played.status == 0, "\(played.stderr)")
    let report = try #require(try parseJSON(played.stdout) as? [String: Any])
    let over = try tap.captured.filter { abs($0) > 1 }.count
    #expect(over > 0)
    #expect(report["overs"] as? Int == over)
  }

  /// A device that does not exist: one line naming the fix, exit 74... and nothing played.
  @Test func aMissingDeviceIsNamed() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let result = try TapeBinary.run(["play", file, "--device", "hw:42"])
    #expect(result.status == 74)
    #expect(result.stderr.hasPrefix("error: cannot open the audio device 'hw:42'"))
    #expect(result.stderr.contains("choose another with --device"))
    #expect(result.stderr.split(separator: "\n").count == 1)
  }

  /// The demo builds its project, shows each command, renders and plays; its mix is what a
  /// separate `tape render` of the same project writes, and what sox makes of the same edit
  /// list; the summary's loudness is ffmpeg's.
  @Test func theDemoBuildsRendersAndPlays() throws {
    let space = try Workspace()
    let folder = space.path("demo")
    let tap = try ALSATap()
    let result = try TapeBinary.run(
      ["demo", folder, "--audio", TestAudio.path(""), "--device", "tap"],
      environment: tap.environment)
    #expect(result.status == 0, "\(result.stderr)")
    for part in [
      "$ tape clip split", "$ tape undo", "$ tape redo", "$ tape checkout", "== The timeline",
      "== The history tree", "← head", "loudness", "played", "Try next:",
      "Split c1 at 3.6s", "Trim c5 end to 4.2s", "Set c2 gain +2dB  ← head",
    ] {
      #expect(result.stdout.contains(part), "\(part)")
    }

    // Each step closed the project as its own process would: everything is in the file, with
    // nothing left in a log beside it (a copy of demo.tape alone would lose what is). The
    // player reads with a log of its own, which it leaves empty.
    let log = try? FileManager.default.attributesOfItem(atPath: "\(folder)/demo.tape-wal")
    #expect((log?[.size] as? Int ?? 0) == 0)
    let project = try TimelineStore.open(at: "\(folder)/demo.tape").snapshot.project
    #expect(project.tracks.count == 4)
    #expect(Set(project.allClips.flatMap { [$0.fadeIn.curve, $0.fadeOut.curve] }).count >= 3)
    let mix = try ReferenceRender.decode("\(folder)/mix.wav")
    #expect(mix.count == Int(project.timelineEnd.frames) * 2)

    // The same project rendered again reports the same file.
    let again = try space.tape(
      "render", "\(folder)/demo.tape", "-o", space.path("again.wav"), "--json")
    let summary = try #require(try parseJSON(again.stdout) as? [String: Any])
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: "\(folder)/mix.wav"))
        == (try Data(contentsOf: URL(fileURLWithPath: space.path("again.wav")))))
    let peak = Double(mix.map(abs).max() ?? 0)
    #expect(abs((summary["peakDBFS"] as? Double ?? 0) - 20 * log10(peak)) < 0.01)
    #expect(peak < 1)

    // sox, from the edit list alone: equal within the 24-bit quantization of mix.wav.
    let sox = try ReferenceRender.sox(project, in: space.url.path)
    #expect(sox.count == mix.count)
    #expect(maxDifferenceDecibels(mix, sox) < -130)

    // What was played is the mix, before its 24-bit quantization (then a buffer of silence).
    let played = Array(try tap.captured.prefix(mix.count))
    #expect(played.count == mix.count)
    #expect(maxDifferenceDecibels(played, mix) < -130)
  }

  /// `tape ls --frames` prints every time as frames, as typed with an `f`.
  @Test func listingInFrames() throws {
    let space = try Workspace()
    let file = try RenderCommandTests.project(in: space)
    let table = try space.tape("ls", file, "--frames").stdout
    let line = try #require(table.split(separator: "\n").first { $0.hasPrefix("  c1 ") })
    #expect(
      line.split(separator: " ", omittingEmptySubsequences: true)
        == [
          "c1", "s1", "24000f", "168000f", "48000f", "0", "dB", "4800f", "equal-power", "48000f",
          "equal-power",
        ])
    #expect(try space.tape("ls", file).stdout.contains("0:00.500   0:03.500"))
    let render = try space.tape("render", file, "-o", space.path("m.wav"), "--frames").stdout
    #expect(render.hasPrefix("\(space.path("m.wav")): WAV 24-bit, 48000 Hz stereo, 168000f\n"))
  }

  /// Without a device the demo says so in one line and still succeeds.
  @Test func theDemoWithoutADevice() throws {
    let space = try Workspace()
    let result = try TapeBinary.run([
      "demo", space.path("demo"), "--audio", TestAudio.path(""), "--device", "hw:42",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let line = try #require(
      result.stdout.split(separator: "\n").first { $0.hasPrefix("not played:") })
    #expect(line.contains("cannot open the audio device 'hw:42'"))
    #expect(line.contains("listen to"))
  }
}
