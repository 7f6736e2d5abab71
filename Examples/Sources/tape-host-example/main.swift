// An app on Tape's libraries, end to end: it opens a project, commits edits, follows every
// snapshot and animates each diff, undoes and redoes, renders, null-tests two versions and
// plays. Every step is a library call the `tape` command line makes too; nothing here is
// Tape's own code copied.
//
//   tape-host-example [FOLDER] [--device NAME] [--audio FILE]
//
// FOLDER (default: a new folder under the temporary directory) receives song.tape and mix.wav.
// --device is the ALSA device to play on (default "null": plays into nothing, at once).
// --audio is the recording to edit (default: the repository's TestAudio speech, 48 kHz mono).

import AudioFiles
import Foundation
import Mixing
import Playback
import SafeFiles
import Timeline
import TimelineStore

/// The command line: FOLDER, --device, --audio.
struct Options {
  var folder: String?
  var device = "null"
  var audio = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().appendingPathComponent("../../../TestAudio/speech-mono-48k-16.wav")
    .standardizedFileURL.path

  init(_ arguments: [String]) throws {
    var rest = arguments[...]
    while let word = rest.popFirst() {
      switch word {
      case "--device": device = try Self.value(of: word, from: &rest)
      case "--audio": audio = try Self.value(of: word, from: &rest)
      case _ where word.hasPrefix("-"): throw ExampleError("unknown option \(word)")
      default: folder = word
      }
    }
  }

  static func value(of option: String, from rest: inout ArraySlice<String>) throws -> String {
    guard let value = rest.popFirst() else { throw ExampleError("\(option) needs a value") }
    return value
  }
}

struct ExampleError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// A view's model: it follows the store's snapshots in order and, for each, "draws" the
/// animation of its diff: where each moved clip is at a few points of the way
/// (`ProjectDiff.interpolated(at:easing:)`, what a timeline view draws frame by frame).
struct TimelineView {
  var updates: AsyncStream<StoreUpdate>.AsyncIterator

  /// Waits for the snapshot of `version` (each commit, undo or redo makes one), animating every
  /// snapshot on the way; returns it.
  mutating func follow(to version: Int64) async throws -> StoreUpdate {
    while let update = await updates.next() {
      animate(update)
      if update.version == version { return update }
    }
    throw ExampleError("the store's updates ended before version \(version)")
  }

  func animate(_ update: StoreUpdate) {
    let cause = update.cause.map { "\($0)" } ?? "opened"
    let tracks = update.project.tracks.count
    let clips = update.project.tracks.reduce(0) { $0 + $1.clips.count }
    print("view: version \(update.version) (\(cause)): \(tracks) tracks, \(clips) clips")
    let rate = Double(update.project.sampleRate)
    for change in update.diff.clips {
      switch (change.before, change.after) {
      case (nil, let added?):
        print("  \(change.id) appears at \(seconds(added.clip.timelineStart, rate)) s")
      case (let removed?, nil):
        print("  \(change.id) goes from \(seconds(removed.clip.timelineStart, rate)) s")
      case (let old?, let new?) where change.isMove:
        // The frames of the animation: the clip's start at each step of the eased tween.
        let steps = [0.0, 0.25, 0.5, 0.75, 1.0].map { t -> String in
          let frame = update.diff.interpolated(at: t, easing: .smooth)
          let start = frame.tracks.lazy.flatMap(\.clips).first { $0.id == change.id }?.timelineStart
          return start.map { seconds($0, rate) } ?? "-"
        }
        print(
          "  \(change.id) moves \(seconds(old.clip.timelineStart, rate)) s → \(seconds(new.clip.timelineStart, rate)) s, drawn at \(steps.joined(separator: ", ")) s"
        )
      default:
        print("  \(change.id) changes in place")
      }
    }
  }

  func seconds(_ position: FramePosition, _ rate: Double) -> String {
    String(format: "%.2f", Double(position.frames) / rate)
  }
}

@main
enum TapeHostExample {
  static func main() async {
    do {
      try await run(Options(Array(CommandLine.arguments.dropFirst())))
    } catch {
      FileHandle.standardError.write(Data("tape-host-example: \(error)\n".utf8))
      exit(1)
    }
  }

  static func run(_ options: Options) async throws {
    let folder =
      options.folder
      ?? FileManager.default.temporaryDirectory
      .appendingPathComponent("tape-host-example-\(ProcessInfo.processInfo.processIdentifier)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let file = (folder as NSString).appendingPathComponent("song.tape")
    let mix = (folder as NSString).appendingPathComponent("mix.wav")
    for stale in [file, mix] { try? FileManager.default.removeItem(atPath: stale) }

    // 1. A new project, and a view that follows it from its first snapshot.
    let store = try TimelineStore.create(at: file, sampleRate: 48_000, channels: 2)
    var view = TimelineView(updates: store.updates().makeAsyncIterator())
    _ = try await view.follow(to: store.snapshot.version)

    // 2. An edit: the recording as a source (read whole and hashed first: a damaged file is
    // refused here, not at render time), a track, and two clips of it.
    let info = try AudioProbe.probe(options.audio)
    let second = Int64(48_000)
    var clip = Clip.ID(0)
    let added = try store.commit(label: "Add the recording") { project, ids in
      let source = Source(
        id: ids.newSourceID(), path: info.path, contentHash: info.contentHash,
        sampleRate: info.sampleRate, channels: info.channels,
        frameCount: FrameCount(info.frameCount))
      let track = Track(id: ids.newTrackID(), name: "Voice")
      // The edit functions check each rule against the project they are given: the clips are
      // made against the project with the source and the track in it.
      var commands: [Command] = [.setSource(source), .setTrack(track)]
      var next = try project.applying(commands)
      let end = FramePosition(min(source.frameCount(atRate: project.sampleRate).frames, 2 * second))
      clip = ids.newClipID()
      for (id, start) in [(clip, Int64(0)), (ids.newClipID(), 3 * second)] {
        let more = try next.addClip(
          id, source: source.id, track: track.id, at: FramePosition(start), sourceEnd: end,
          fadeIn: Fade(length: 4_800, curve: .equalPower))
        next = try next.applying(more)
        commands += more
      }
      return commands
    }
    _ = try await view.follow(to: added.version)

    // 3. Another: the first clip moves a second later. The edit runs against the project as it
    // is on disk (another process may have committed since), inside the commit.
    let moved = try store.commit(label: "Move the first clip") { project, _ in
      try project.moveClip(clip, to: FramePosition(second), track: nil)
    }
    _ = try await view.follow(to: moved.version)

    // 4. Undo and redo: the same write path, each a new snapshot with its diff.
    let undone = try store.undo()
    _ = try await view.follow(to: undone.version)
    let redone = try store.redo()
    _ = try await view.follow(to: redone.version)

    // 5. An edit that cannot sound: the clip gets a name.
    let named = try store.commit(label: "Name the first clip") { project, _ in
      try project.nameClip(clip, "Hello")
    }
    _ = try await view.follow(to: named.version)

    // 6. Render the head to a 24-bit WAV, as `tape render` does.
    let cache = AudioCache(forProject: file)
    let head = store.snapshot.project
    let audio = try cache.sources(for: head)
    let plan = try RenderPlan(project: head, audio: audio.audio)
    // Never over a file of the project (its log, a source, the cache), by any name.
    let destination = try OutputDestination.resolve(mix)
    let protected = ProtectedFiles(project: file, cache: cache) { try store.sourcePathsInHistory() }
    if let conflict = try protected.conflict(with: destination) {
      throw ExampleError("\(mix) is \(conflict.what) (\(conflict.path)); not rendering over it")
    }
    let summary = try OfflineRenderer.render(
      plan, audio: audio, range: FrameRange(start: .zero, end: plan.end), to: destination,
      settings: RenderSettings(format: .wav, sampleFormat: .int24, dither: false))
    print(
      "render: \(mix), \(String(format: "%.2f", summary.durationSeconds)) s, peak \(String(format: "%.1f", summary.peakDecibels)) dBFS, \(String(format: "%.1f", summary.loudness)) LUFS"
    )

    // 7. Null-test two versions: where do their mixes differ, and which edit is to blame?
    // Only what the diff says can sound different is rendered.
    let (a, b, diff) = try store.diff(from: added.version, to: moved.version)
    let test = try NullTest(from: a.project, to: b.project, diff: diff) { project in
      let audio = try cache.sources(for: project)
      return (try RenderPlan(project: project, audio: audio.audio), audio)
    }
    let result = try test.run()
    for range in result.ranges {
      print(
        "compare v\(added.version) v\(moved.version): differ \(String(format: "%.2f", Double(range.start) / 48_000))–\(String(format: "%.2f", Double(range.end) / 48_000)) s, peak \(String(format: "%.1f", 20 * log10(Double(range.peak)))) dBFS, blamed on \(range.blame.joined(separator: ", "))"
      )
    }
    // A name sounds the same: the diff says nothing can differ, so nothing is rendered.
    let same = try store.diff(from: redone.version, to: named.version)
    let unchanged = try NullTest(from: same.from.project, to: same.to.project, diff: same.diff) {
      _ in throw ExampleError("nothing can differ, so nothing is compiled")
    }
    print(
      "compare v\(redone.version) v\(named.version): \(try unchanged.run().isIdentical ? "identical, nothing rendered" : "differ")"
    )

    // 8. Play the first half second on an ALSA device, as `tape play` does (which also offers
    // the player each update from the store, and the player swaps it in without a click).
    // Its effects (none here, but a project may have any) come from one rack for the
    // player's life, so that an edit never restarts a plugin.
    let library = AudioLibrary(cache: cache)
    let effects = PlayerEffects(bypassMissing: true, projectFolder: RawPath(folder))
    let player: LivePlayer
    do {
      player = try LivePlayer(
        LivePlayer.Configuration(
          device: DeviceRequest(name: options.device), sampleRate: head.sampleRate,
          channels: head.channels, range: 0..<24_000, loop: false),
        compile: { project, version, sequence in
          try effects.compile(
            project, version: version, sequence: sequence, audio: library.audio(for: project))
        },
        load: { audio, chunk in try library.makeResident(audio, chunk) })
    } catch {
      print("play: \(options.device) did not open (\(error)); nothing played")
      try store.close()
      return
    }
    effects.prepare(for: player, project: head)
    try player.start(head, version: store.snapshot.version)
    let report = player.wait()
    print("play: \(report.frames) frames on \(options.device), \(report.xruns) dropouts")

    try store.close()
    print("done: \(file)")
  }
}
