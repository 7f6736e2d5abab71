import Foundation
import Mixing
import Synchronization
import Testing
import Timeline

@testable import Playback

/// Chunk memory that remembers what was given back, to see when a chunk is freed.
final class RecordingChunkMemory: ChunkMemory, @unchecked Sendable {
  private let released = Mutex<Set<Int>>([])

  func allocate(channels: Int) -> UnsafeMutablePointer<Float> {
    .allocate(capacity: SourceAudio.chunkFrames * channels)
  }

  func release(_ chunk: UnsafeMutablePointer<Float>) {
    released.withLock { _ = $0.insert(Int(bitPattern: chunk)) }
    chunk.deallocate()
  }

  func wasReleased(_ address: Int) -> Bool {
    released.withLock { $0.contains(address) }
  }
}

/// The chunks a test's loader cannot read, as (source, chunk).
final class UnreadableChunks: Sendable {
  private let chunks = Mutex<Set<[Int]>>([])

  func add(_ source: Int, _ chunk: Int) {
    chunks.withLock { _ = $0.insert([source, chunk]) }
  }

  func contains(_ source: Int, _ chunk: Int) -> Bool {
    chunks.withLock { $0.contains([source, chunk]) }
  }
}

/// A player on ALSA's `null` device whose threads are not started: a test runs the planner's
/// and the loader's passes and the audio thread's periods by hand, in the order it chooses.
struct HandDrivenPlayer {
  static let period = 256
  let memory = RecordingChunkMemory()
  /// Cold mono sources of 20 s (15 chunks each; two unless asked), made resident only by
  /// `load`.
  let sources: [Source.ID: SourceAudio]
  /// Chunks `load` refuses, as (source, chunk).
  let unreadable = UnreadableChunks()
  let player: LivePlayer

  init(loop: Bool = false, sourceCount: Int = 2) throws {
    let memory = memory
    let sources = Dictionary(
      uniqueKeysWithValues: (1...sourceCount).map {
        (Source.ID(Int64($0)), SourceAudio(frames: 960_000, channels: 1, memory: memory))
      })
    let ids = Dictionary(
      uniqueKeysWithValues: sources.map { (ObjectIdentifier($0.value), Int($0.key.rawValue)) })
    self.sources = sources
    let unreadable = unreadable
    player = try LivePlayer(
      LivePlayer.Configuration(
        device: DeviceRequest(name: "null", period: Self.period, periods: 4), sampleRate: 48_000,
        channels: 2, range: 0..<Int64.max, loop: loop),
      compile: { project, version, sequence in
        try RenderPlan(project: project, audio: sources, version: version, sequence: sequence)
      },
      load: { audio, chunk in
        let id = ids[ObjectIdentifier(audio)] ?? 0
        if unreadable.contains(id, chunk) {
          throw PlaybackError.write(device: "test", reason: "chunk \(chunk) of s\(id) unreadable")
        }
        let samples = memory.allocate(channels: audio.channels)
        samples.initialize(
          repeating: Float(id) * 0.1 + Float(chunk) * 0.01, count: audio.samplesInChunk(chunk))
        audio.publish(samples, at: chunk)
      })
  }

  /// A project of one track per entry of `clips`: a clip of `length` frames (7.3 s unless
  /// asked) of source `source` from its frame `from`, at timeline frame 0.
  static func project(
    _ clips: [(source: Int, from: Int64)], gain: Double = 0, sourceCount: Int = 2,
    length: Int64 = 350_000
  ) -> Project {
    Project(
      sampleRate: 48_000, channels: 2,
      sources: (1...sourceCount).map {
        Source(
          id: Source.ID(Int64($0)), path: "/s\($0)", contentHash: "h\($0)", sampleRate: 48_000,
          channels: 1, frameCount: 960_000)
      },
      tracks: clips.enumerated().map { index, clip in
        Track(
          id: Track.ID(Int64(index + 1)), name: "T\(index + 1)", gain: Gain(decibels: gain),
          clips: [
            Clip(
              id: Clip.ID(Int64(index + 1)), source: Source.ID(Int64(clip.source)),
              timelineStart: 0,
              sourceRange: FrameRange(start: FramePosition(clip.from), count: FrameCount(length)))
          ])
      })
  }

  func audio(_ source: Int) -> SourceAudio {
    sources[Source.ID(Int64(source))]!
  }

  /// The audio thread: `count` periods.
  func render(periods count: Int) {
    var buffer = [Float](repeating: 0, count: Self.period * 2)
    for _ in 0..<count {
      buffer.withUnsafeMutableBufferPointer {
        _ = LiveMixer.render(player.mixer.engine, frames: Self.period, into: $0.baseAddress!)
      }
    }
  }
}

/// The regions a test's lock hook was given.
final class LockedRegions: @unchecked Sendable {
  private let regions = Mutex<[(address: Int, bytes: Int)]>([])

  func add(_ address: UnsafeRawPointer, _ bytes: Int) {
    regions.withLock { $0.append((Int(bitPattern: address), bytes)) }
  }

  func contains(_ address: UnsafeRawPointer, _ bytes: Int) -> Bool {
    regions.withLock { $0.contains { $0.address == Int(bitPattern: address) && $0.bytes == bytes } }
  }

  var count: Int { regions.withLock { $0.count } }
}

/// Whether every page of `bytes` at `address` is in memory (`mincore`).
func isResident(_ address: UnsafeRawPointer, _ bytes: Int) -> Bool {
  let page = Int(sysconf(Int32(_SC_PAGESIZE)))
  let start = Int(bitPattern: address) & ~(page - 1)
  let length = Int(bitPattern: address) + bytes - start
  var pages = [UInt8](repeating: 0, count: (length + page - 1) / page)
  guard mincore(UnsafeMutableRawPointer(bitPattern: start), length, &pages) == 0 else {
    return false
  }
  return pages.allSatisfy { $0 & 1 == 1 }
}

/// The player's loader, planner and audio thread in chosen interleavings (hooks in the
/// engine, no sleeps), on ALSA's `null` device.
@Suite("Player engine: loader, eviction, planner")
struct PlayerEngineTests {
  /// A seek reads in the target, jumps, and keeps the target resident: neither the pass that
  /// made the seek nor one that runs before the audio thread has jumped lets it go.
  @Test func aSeekKeepsWhatItLoaded() throws {
    let engine = try HandDrivenPlayer()
    let player = engine.player
    try player.prime(HandDrivenPlayer.project([(1, 0)]), version: 1)
    engine.render(periods: 4)
    player.seek(to: 250_000)
    #expect(player.loaderPass())
    // The audio thread has not taken the seek yet: another pass (an edit woke the loader).
    #expect(player.loaderPass())
    #expect([3, 4, 5].allSatisfy { engine.audio(1).isResident($0) })
    engine.render(periods: 8)
    #expect(player.status.position > 250_000)
    #expect(player.status.missingFrames == 0)
  }

  /// Where the playhead is going is the seek's target from the moment it is asked for until
  /// it has landed, so seeks from the keys made in quick succession add up.
  @Test func theDestinationIsTheSeeksTarget() throws {
    let engine = try HandDrivenPlayer()
    let player = engine.player
    try player.prime(HandDrivenPlayer.project([(1, 0)]), version: 1)
    engine.render(periods: 4)
    #expect(player.destination == 1_024)
    player.seek(to: player.destination + 48_000)
    #expect(player.destination == 49_024)
    player.seek(to: player.destination + 48_000)
    #expect(player.destination == 97_024)
    #expect(player.loaderPass())
    #expect(player.destination == 97_024)
    engine.render(periods: 1)
    #expect(player.destination == 97_024)
    engine.render(periods: 2)
    #expect(player.status.position == 97_024 + 512 && player.destination == 97_024 + 512)
  }

  /// The device loop's write: a write that took nothing waits for room like `-EAGAIN` (it
  /// used to retry at once: a busy loop on a SCHED_FIFO thread); the rest as before.
  @Test func aWriteOfNothingWaitsForRoom() {
    #expect(ALSAOutput.step(after: 0) == .waitForRoom)
    #expect(ALSAOutput.step(after: Int(-EAGAIN)) == .waitForRoom)
    #expect(ALSAOutput.step(after: 256) == .wrote(256))
    #expect(ALSAOutput.step(after: Int(-EPIPE)) == .recover(-EPIPE, xrun: true))
    #expect(ALSAOutput.step(after: Int(-ESTRPIPE)) == .recover(-ESTRPIPE, xrun: true))
    #expect(ALSAOutput.step(after: Int(-EINTR)) == .recover(-EINTR, xrun: false))
    #expect(ALSAOutput.step(after: Int(-ENODEV)) == .fail(-ENODEV))
  }

  /// A plan being published (its audio read, not yet in the mixer) and a plan waiting in the
  /// mixer's inbox keep their audio: a loader pass at either moment lets none of it go.
  @Test func aPlanBeingPublishedKeepsItsAudio() throws {
    let engine = try HandDrivenPlayer()
    let player = engine.player
    try player.prime(HandDrivenPlayer.project([(1, 0)]), version: 1)
    engine.render(periods: 4)
    player.offer(HandDrivenPlayer.project([(1, 600_000)]), version: 2, cause: "edit")
    player.hooks.plannerBeforePublish = { _ = player.loaderPass() }
    #expect(player.plannerPass())
    player.hooks.plannerBeforePublish = nil
    #expect([9, 10, 11].allSatisfy { engine.audio(1).isResident($0) })
    // In the inbox, not taken by the audio thread yet.
    #expect(player.loaderPass())
    #expect([9, 10, 11].allSatisfy { engine.audio(1).isResident($0) })
    engine.render(periods: 8)
    #expect(player.status.version == 2)
    #expect(player.status.missingFrames == 0)
  }

  /// A chunk let go of is freed only once two periods of the audio thread have ended after
  /// it was detached (one may have begun before, reading it), however long the loader took
  /// between deciding and detaching.
  @Test func aChunkIsFreedTwoPeriodsAfterItsDetach() throws {
    let engine = try HandDrivenPlayer()
    let player = engine.player
    try player.prime(HandDrivenPlayer.project([(1, 0)]), version: 1)
    // The playhead at 2.1 s: chunk 0 (0…1.37 s) is behind the window kept.
    engine.render(periods: 400)
    let chunk0 = try #require(engine.audio(1).chunk(0).map { Int(bitPattern: $0) })
    // The loader is preempted between deciding and detaching; the audio thread plays on.
    player.hooks.loaderBeforeDetach = { engine.render(periods: 2) }
    #expect(player.loaderPass())
    player.hooks.loaderBeforeDetach = nil
    #expect(!engine.audio(1).isResident(0))
    // A period may be under way that began before the detach.
    #expect(player.loaderPass())
    #expect(!engine.memory.wasReleased(chunk0))
    engine.render(periods: 1)
    #expect(player.loaderPass())
    #expect(!engine.memory.wasReleased(chunk0))
    engine.render(periods: 1)
    #expect(player.loaderPass())
    #expect(engine.memory.wasReleased(chunk0))
  }

  /// The audio of a source no plan that can sound uses any more is let go of (and freed).
  @Test func audioNoPlanUsesIsLetGo() throws {
    let engine = try HandDrivenPlayer()
    let player = engine.player
    try player.prime(HandDrivenPlayer.project([(1, 0)]), version: 1)
    engine.render(periods: 4)
    player.offer(HandDrivenPlayer.project([(2, 0)]), version: 2, cause: "checkout")
    #expect(player.plannerPass())
    // The crossfade ends; the planner releases the old plan.
    engine.render(periods: 4)
    #expect(player.plannerPass())
    #expect(player.loaderPass())
    engine.render(periods: 2)
    #expect(player.loaderPass())
    #expect(engine.audio(1).residentChunks == [])
    #expect(engine.audio(2).residentChunks == [0, 1, 2])
  }

  /// A chunk that cannot be read stops nothing else: the other track's audio is read, the
  /// source is reported once, and the audio thread does not wait for that chunk.
  @Test func anUnreadableChunkStopsNothingElse() throws {
    let engine = try HandDrivenPlayer()
    let player = engine.player
    try player.prime(HandDrivenPlayer.project([(1, 0), (2, 0)]), version: 1)
    engine.unreadable.add(1, 3)
    engine.render(periods: 400)
    for _ in 0..<3 { #expect(player.loaderPass()) }
    #expect(engine.audio(1).residentChunks == [1, 2])
    #expect(engine.audio(2).residentChunks == [1, 2, 3])
    // Into chunk 3 (from 4.1 s).
    engine.render(periods: 400)
    #expect(LiveMixer.isReady(player.mixer.engine, frames: HandDrivenPlayer.period))
    for _ in 0..<3 { #expect(player.loaderPass()) }
    let messages = player.takeMessages()
    #expect(messages.count == 1)
    #expect(messages.first?.contains("chunk 3 of s1 unreadable") == true)
  }

  /// After a wait for the loader that ran out, the device thread does not wait again for a
  /// buffer's worth of periods: one chunk that never comes cannot drain the buffer.
  @Test func aWaitThatRanOutRestsForABuffer() {
    var wait = LoaderWait(patience: 10_000_000, restPeriods: 4)
    var asked: [Bool] = []
    asked.append(wait.mayWait())
    wait.ranOut()
    for _ in 0..<6 { asked.append(wait.mayWait()) }
    #expect(asked == [true, false, false, false, false, true, true])
  }

  /// A player's crossfades and declick fades last 5.3 ms at every rate (256 frames at 48 kHz).
  @Test(arguments: [(44_100, 235), (48_000, 256), (96_000, 512), (192_000, 1_024)])
  func transitionsScaleWithTheRate(rate: Int, frames: Int64) throws {
    let player = try LivePlayer(
      LivePlayer.Configuration(
        device: DeviceRequest(name: "null"), sampleRate: rate, channels: 2,
        range: 0..<Int64.max, loop: false),
      compile: { _, _, _ in throw PlaybackError.write(device: "test", reason: "unused") },
      load: { _, _ in })
    #expect(player.mixer.crossfadeFrames == frames)
    #expect(player.mixer.declickFrames == frames)
  }

  /// Everything the audio thread touches is written before it starts (the swap log's pages are
  /// resident) and locked into RAM, the first plan too.
  @Test func theAudioThreadsMemoryIsLockedBeforeItStarts() throws {
    let engine = try HandDrivenPlayer()
    let player = engine.player
    let locked = LockedRegions()
    player.hooks.lockMemory = { address, bytes in
      locked.add(address, bytes)
      return 0
    }
    try player.prime(HandDrivenPlayer.project([(1, 0)]), version: 1)
    let regions = player.mixer.memoryRegions
    for (address, bytes) in regions {
      #expect(locked.contains(address, bytes))
      #expect(isResident(address, bytes))
    }
    // And the device's buffers, and the first plan (records, running ends, ramps, ids).
    #expect(locked.count == regions.count + 2 + 4)
    #expect(player.takeMessages() == [])
  }

  /// A failure to lock memory (RLIMIT_MEMLOCK) is said once, in one line; the play goes on.
  @Test func aLockFailureIsSaidOnce() throws {
    let engine = try HandDrivenPlayer()
    let player = engine.player
    player.hooks.lockMemory = { _, _ in ENOMEM }
    try player.prime(HandDrivenPlayer.project([(1, 0)]), version: 1)
    player.offer(HandDrivenPlayer.project([(1, 0)], gain: -6), version: 2, cause: "edit")
    #expect(player.plannerPass())
    let messages = player.takeMessages()
    #expect(messages.count == 1)
    #expect(messages.first?.hasPrefix("could not lock the audio thread's memory into RAM") == true)
    engine.render(periods: 2)
    #expect(player.status.version == 2)
  }

  /// A device thread that cannot be started fails the start and leaves no thread running.
  @Test func aDeviceThreadThatCannotStartStopsTheHelpers() throws {
    let engine = try HandDrivenPlayer()
    let player = engine.player
    player.hooks.startDeviceThread = { _ in nil }
    #expect(throws: PlaybackError.self) {
      try player.start(HandDrivenPlayer.project([(1, 0)]), version: 1)
    }
    #expect(!player.helpersRunning)
    #expect(!player.isPlaying)
  }

  /// The status line's figures: the mix's peak over the last window (it falls again when the
  /// load does), the thread's CPU share of that window, and the samples past full scale.
  @Test func theDeviceFiguresAreWindowed() {
    let times = UnsafeMutablePointer<UInt64>.allocate(capacity: 8)
    defer { times.deallocate() }
    var meter = DeviceMeter(
      periodNanoseconds: 1_000, periodsPerWindow: 4, times: times, capacity: 8)
    meter.begin(at: 0, cpu: 0)
    let samples: [Float] = [0.5, 1.5, -2, 1, -1, 0]
    var clock: UInt64 = 0
    func period(mix: UInt64) {
      samples.withUnsafeBufferPointer { buffer in
        meter.rendered(
          start: clock, end: clock + mix, swaps: 0, samples: buffer.baseAddress!,
          count: buffer.count, cpu: { (clock + mix) / 4 })
      }
      clock += 1_000
    }
    for _ in 0..<4 { period(mix: 500) }
    #expect(meter.windowMixLoad == 0.5)
    for _ in 0..<4 { period(mix: 100) }
    #expect(meter.windowMixLoad == 0.1)
    #expect(meter.peak == 0.5)
    #expect(abs(meter.windowThreadLoad - 0.25) < 0.01)
    #expect(meter.overs == 8 * 2)
  }

  /// Twenty seeks, from the keys (±5 s) and to random places, over eight cold sources, with
  /// the loader running every eight periods: never a frame of silence where a clip plays,
  /// and no more audio resident than the windows around the playhead.
  @Test func seeksNeverLandInSilence() throws {
    let engine = try HandDrivenPlayer(sourceCount: 8)
    let player = engine.player
    try player.prime(
      HandDrivenPlayer.project(
        (1...8).map { ($0, 0) }, sourceCount: 8, length: 900_000), version: 1)
    var generator = SeededRandom(seed: 21)
    var mostResident = 0
    for seek in 0..<20 {
      let position = player.status.position
      let target =
        switch seek % 3 {
        case 0: position + 240_000
        case 1: max(0, position - 240_000)
        default: Int64(generator.next() % 850_000)
        }
      player.seek(to: min(target, 850_000))
      #expect(player.loaderPass())
      for period in 0..<64 {
        if period % 8 == 7 { #expect(player.loaderPass()) }
        engine.render(periods: 1)
      }
      mostResident = max(
        mostResident, engine.sources.values.map(\.residentChunks.count).reduce(0, +))
    }
    #expect(player.status.missingFrames == 0)
    // Once each seek has landed, per source at most the window around the playhead (3.25 s:
    // 4 chunks at most). (32 here.)
    #expect(mostResident <= 8 * 4)
  }

  /// Scrubbing through 1,000 versions over 200 sources keeps only what the sounding plans
  /// need resident: memory stays bounded.
  @Test func scrubbingThroughManySourcesKeepsMemoryBounded() throws {
    let engine = try HandDrivenPlayer(sourceCount: 200)
    let player = engine.player
    try player.prime(HandDrivenPlayer.project([(1, 0)], sourceCount: 200), version: 1)
    var mostResident = 0
    for version in 2...1_000 {
      player.offer(
        HandDrivenPlayer.project([((version * 7) % 200 + 1, 0)], sourceCount: 200),
        version: Int64(version), cause: "scrub")
      #expect(player.plannerPass())
      engine.render(periods: 2)
      #expect(player.loaderPass())
      mostResident = max(
        mostResident, engine.sources.values.map(\.residentChunks.count).reduce(0, +))
    }
    #expect(player.status.missingFrames == 0)
    // The plans that can sound (current, fading, inbox, being published) read 3 chunks each.
    // (8 here.)
    #expect(mostResident <= 4 * 3)
  }
}

/// A seeded generator (SplitMix64) for repeatable random tests.
struct SeededRandom: RandomNumberGenerator {
  var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
