import Foundation
import Timeline
import TimelineStore

// `tape-testing`: what the tests need another process for, kept out of the user's `tape`.
//
//   tape-testing commit-loop FILE [--count N]   commit in a loop, printing each acknowledged
//                                               version (`commit 12`, `undo 11`, `redo 12`,
//                                               `checkout 3`; `toward 3` before a far checkout)
//   tape-testing hold-lock FILE [--seconds S]   hold the write lock (prints `locked`)
//   tape-testing hold-checkout FILE VERSION [--seconds S]
//                                               check out VERSION as an editor does (a large
//                                               move kept pending), print `checkout N`, keep
//                                               the store open S seconds (or until killed),
//                                               then close it (which folds the move)
//   tape-testing verify FILE                    the store's own check, as JSON; exit 65 if bad
//   tape-testing fixture FILE --clips N --versions M
//                                               a new project of N clips on 10 tracks and M
//                                               versions (one-clip gain edits), for benchmarks
//   tape-testing effect-allocations URI [--channels N]
//                                               10 s through an LV2 effect between the
//                                               allocation counter's hooks

/// Unbuffered: a line on stdout means the operation returned, even if we die right after.
func acknowledge(_ line: String) {
  var bytes = Array((line + "\n").utf8)
  var offset = 0
  while offset < bytes.count {
    let written = bytes.withUnsafeMutableBytes {
      write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset)
    }
    guard written > 0 else { return }
    offset += written
  }
}

func option(_ name: String, in arguments: ArraySlice<String>) -> String? {
  guard let index = arguments.firstIndex(of: name), index + 1 < arguments.endIndex else {
    return nil
  }
  return arguments[index + 1]
}

/// Small edits, large edits, undo and redo, for crash tests.
func commitLoop(_ file: String, count: Int?) throws {
  let store = try TimelineStore.open(at: file)
  if store.snapshot.project.sources.isEmpty {
    try store.commit(label: "Setup") { project, ids in
      let source = Source(
        id: ids.newSourceID(), path: "/crash-test/source.wav", contentHash: "crash",
        sampleRate: 48_000, channels: 2, frameCount: FrameCount(48_000 * 600))
      let track = Track(id: ids.newTrackID(), name: "Crash")
      return [.setSource(source), .setTrack(track)]
    }
  }
  // A second track of 600 clips, made once: a checkout to the version before it, then back to
  // it, moves at least 512 rows each way, so the moves are kept pending (`PendingMove`) and a
  // kill can land while one is. Such a move is announced first (`toward 7`): killed during it,
  // the head is where it went or where it was. Between the two, an undo and a redo write the
  // pending change's tail.
  let manyLabel = "Many clips"
  if try !store.history().versions.contains(where: { $0.label == manyLabel }) {
    try store.commit(label: manyLabel) { _, ids in
      let track = Track(id: ids.newTrackID(), name: "Many")
      return [.setTrack(track)]
        + (0..<600).map { index in
          .setClip(
            Clip(
              id: ids.newClipID(), source: Source.ID(1),
              timelineStart: FramePosition(Int64(index) * 48_000),
              sourceRange: FrameRange(start: FramePosition(Int64(index) * 100), count: 24_000)),
            track: track.id)
        }
    }
  }
  guard let many = try store.history().versions.first(where: { $0.label == manyLabel }),
    let beforeMany = many.parent
  else { throw StoreError.internalFailure("the crash test's large version is missing") }
  var step = 0
  while count.map({ step < $0 }) ?? true {
    step += 1
    if step % 20 == 5 {
      acknowledge("toward \(beforeMany)")
      acknowledge("checkout \(try store.checkout(beforeMany).version)")
      // Small moves while that one is pending: each writes the pending change's tail alone.
      acknowledge("undo \(try store.undo().version)")
      acknowledge("redo \(try store.redo().version)")
      acknowledge("toward \(many.version)")
      acknowledge("checkout \(try store.checkout(many.version).version)")
    } else if step % 7 == 0, store.snapshot.version > 2 {
      acknowledge("undo \(try store.undo().version)")
      acknowledge("redo \(try store.redo().version)")
    } else if step % 10 == 0 {
      let result = try store.commit(label: "Large \(step)") { project, ids in
        guard let track = project.tracks.first else { return [] }
        if track.clips.count >= 200 { return [.removeClips(track.clips.prefix(100).map(\.id))] }
        return (0..<50).map { index in
          .setClip(
            Clip(
              id: ids.newClipID(), source: Source.ID(1),
              timelineStart: FramePosition(Int64(step * 1_000 + index)),
              sourceRange: FrameRange(start: FramePosition(Int64(index) * 48_000), count: 48_000)),
            track: track.id)
        }
      }
      acknowledge("commit \(result.version)")
    } else {
      let result = try store.commit(label: "Gain \(step)") { project, _ in
        guard let track = project.tracks.first else { return [] }
        return try project.setTrack(track.id, gain: Gain(decibels: -Double(step % 40) / 4))
      }
      acknowledge("commit \(result.version)")
    }
  }
}

/// A benchmark project: one (absent) source, 10 tracks, `clips` clips in the first version
/// after the empty one, then one-clip gain edits up to `versions` versions.
func fixture(_ file: String, clips: Int, versions: Int) throws {
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
  var version = store.snapshot.version
  try store.close()
  // Each edit reads the one clip it changes (as `tape clip set` does): a commit then costs the
  // same at 100 clips as at 100,000, and the file is the one whole-project commits would make.
  let editor = try ScopedEditor(at: file, durability: .normal)
  var step = 0
  while version < Int64(versions) {
    step += 1
    let id = Clip.ID(Int64(step * 7_919 % clips + 1))
    let gain = Gain(decibels: -Double((step + step / 1_000) % 40) / 4 - 0.125)
    // Clip and gain cycles of 1,000 and 40 steps would repeat after 1,000 (an edit that
    // changes nothing makes no version): the gain also moves on every 1,000 steps.
    let outcome = try editor.commit(scope: EditScope(clips: [id]), label: "Gain \(id)") {
      project, _ in try project.setClipGain(id, gain)
    }
    guard case .committed(let result) = outcome else {
      throw StoreError.internalFailure("a one-clip gain edit needed the whole project")
    }
    version = result.version
  }
  try editor.close()
}

/// A long-lived store's checkout (an editor's, the API's default): a large move stays pending
/// while the store is open, as other processes then find the file.
func holdCheckout(_ file: String, version: Int64, seconds: Double) throws {
  let store = try TimelineStore.open(at: file)
  acknowledge("checkout \(try store.checkout(version).version)")
  Thread.sleep(forTimeInterval: seconds)
  try store.close()
  acknowledge("closed")
}

func verify(_ file: String) throws -> Bool {
  let report = try TimelineStore.open(at: file, access: .read).verify()
  let encoder = JSONEncoder()
  encoder.outputFormatting = .sortedKeys
  acknowledge(String(decoding: try encoder.encode(report), as: UTF8.self))
  return report.isOK
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2, let command = arguments.first else {
  FileHandle.standardError.write(
    Data("usage: tape-testing commit-loop|hold-lock|verify FILE [options]\n".utf8))
  exit(64)
}
let file = arguments[arguments.startIndex + 1]
do {
  switch command {
  case "commit-loop":
    try commitLoop(file, count: option("--count", in: arguments).flatMap { Int($0) })
  case "hold-lock":
    let seconds = option("--seconds", in: arguments).flatMap { Double($0) } ?? 5
    try TimelineStore.open(at: file).holdWriteLock(for: seconds) { acknowledge("locked") }
  case "hold-checkout":
    guard let version = arguments.dropFirst(2).first.flatMap({ Int64($0) }) else {
      FileHandle.standardError.write(Data("usage: tape-testing hold-checkout FILE VERSION\n".utf8))
      exit(64)
    }
    try holdCheckout(
      file, version: version,
      seconds: option("--seconds", in: arguments).flatMap { Double($0) } ?? 5)
  case "verify":
    if try !verify(file) { exit(65) }
  case "fixture":
    try fixture(
      file, clips: option("--clips", in: arguments).flatMap { Int($0) } ?? 1_000,
      versions: option("--versions", in: arguments).flatMap { Int($0) } ?? 10_000)
  case "effect-allocations":
    try effectAllocations(
      file, channels: option("--channels", in: arguments).flatMap { Int($0) } ?? 2)
  default:
    FileHandle.standardError.write(Data("error: unknown command \(command)\n".utf8))
    exit(64)
  }
} catch {
  FileHandle.standardError.write(Data("error: \(error)\n".utf8))
  exit(1)
}
