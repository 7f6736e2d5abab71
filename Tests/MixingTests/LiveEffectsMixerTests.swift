import Foundation
import Mixing
import Testing
import Timeline

/// The plugins these tests run, with the Debian package each comes from (scripts/setup.sh
/// installs them).
enum LivePlugins {
  /// swh's amplifier: at 0 dB the identity, 64 frames late (Tape's FIFO): the sound of a chain
  /// of them is the clips' sound exactly, whatever the chain, so any slip, repeat, gap or
  /// comb-filter of a change is a difference from the render without effects.
  static let amp = ("http://plugin.org.uk/swh-plugins/amp", "swh-lv2")
  /// x42's EQ: IIR filters with state, and a gain that glides in after it starts.
  static let eq = ("http://gareus.org/oss/lv2/fil4#stereo", "x42-plugins")
  /// LSP's side-chain compressor (stereo).
  static let compressor = "http://lsp-plug.in/plugins/lv2/sc_compressor_stereo"

  /// Requires LSP's side-chain compressor, naming the package that has it.
  static func requireCompressor() throws {
    try #require(
      EffectRack.missingPlugins(
        in: Project(
          sampleRate: 48_000, channels: 2,
          masterEffects: [Effect(id: Effect.ID(1), plugin: compressor)])
      ).isEmpty, "install lsp-plugins-lv2 (scripts/setup.sh does)")
  }
}

/// Drives a `LiveMixer` with effects by hand, period by period, as the player does: plans come
/// from one live rack (its processors kept from plan to plan), and once an effect has left its
/// chain a plan compiled again lets it go (the player's `refresh`).
final class EffectsHarness {
  let audio: [Source.ID: SourceAudio]
  let period: Int
  let rack: EffectRack
  let mixer: LiveMixer
  private var version: Int64 = 0
  private var playing: Project?
  /// The project of each version published (a refresh publishes the one playing again).
  private(set) var projects: [Int64: Project] = [:]
  /// Every plan published, kept alive here as the player's list of live plans does.
  private var plans: [RenderPlan] = []

  init(
    audio: [Source.ID: SourceAudio] = Harness().audio, period: Int = 256,
    range: Range<Int64> = 0..<Int64.max, loop: Bool = false
  ) {
    self.audio = audio
    self.period = period
    rack = EffectRack(sampleRate: 48_000, channels: 2, maximumFrames: period, live: true)
    mixer = LiveMixer(
      channels: 2, maximumFrames: period, range: range, loop: loop,
      crossfadeFrames: LiveMixer.transitionFrames(sampleRate: 48_000),
      declickFrames: LiveMixer.transitionFrames(sampleRate: 48_000))
  }

  /// Compiles `project` and publishes it, as the planner does an offered snapshot.
  func play(_ project: Project) throws {
    let missing = EffectRack.missingPlugins(in: project)
    try #require(
      missing.isEmpty,
      "\(missing.map(\.plugin)) not installed; install \(LivePlugins.amp.1) and \(LivePlugins.eq.1) (scripts/setup.sh does)"
    )
    version += 1
    let plan = try RenderPlan(project: project, audio: audio, version: version, effects: rack)
    let (effects, owners) = plan.effectsInUse
    rack.keepOnly(
      effects: effects, owners: owners, sends: plan.sendsInUse, sidechains: plan.sidechainsInUse)
    plans.append(plan)
    mixer.publish(plan)
    playing = project
    projects[version] = project
  }

  /// Pulls `periods` periods, calling `before(period)` before each, and publishing a refresh
  /// whenever an effect has finished leaving (as the player's planner does between offers).
  func pull(periods: Int, before: (Int) throws -> Void = { _ in }) throws -> [Float] {
    var all: [Float] = []
    var buffer = [Float](repeating: .nan, count: period * 2)
    for index in 0..<periods {
      try before(index)
      if rack.hasFinishedLeaving, let playing { try play(playing) }
      buffer.withUnsafeMutableBufferPointer {
        _ = LiveMixer.render(mixer.engine, frames: period, into: $0.baseAddress!)
      }
      all += buffer
      let retired = Set(mixer.collectRetired())
      plans.removeAll { retired.contains(ObjectIdentifier($0)) }
    }
    return all
  }

  /// The largest difference between `played` (a live play, interleaved stereo, from frame 0)
  /// and the offline render of `project` from the start (effects warmed up as in the play)
  /// over the `periods` periods of `period` frames before period `end`: 0 once the play has
  /// settled on that version.
  static func settledDifference(
    _ played: [Float], on project: Project, audio: [Source.ID: SourceAudio], period: Int,
    before end: Int, periods: Int = 40
  ) throws -> Float {
    let first = (end - periods) * period
    let render = try offline(project, audio: audio, frames: end * period)
    var worst: Float = 0
    for index in (first * 2)..<render.count {
      worst = max(worst, abs(render[index] - played[index]))
    }
    return worst
  }

  /// `tape render --bits 32f` of `frames` frames of `project` from `from`: a fresh rack, its
  /// effects fed their latency ahead, in the offline block.
  static func offline(
    _ project: Project, audio: [Source.ID: SourceAudio], from: Int64 = 0, frames: Int
  ) throws -> [Float] {
    let rack = EffectRack(
      sampleRate: 48_000, channels: 2, maximumFrames: EffectRack.offlineFrames)
    let plan = try RenderPlan(project: project, audio: audio, effects: rack)
    var preroll = [Float](repeating: 0, count: max(plan.latency, 1) * 2)
    preroll.withUnsafeMutableBufferPointer {
      _ = EffectKernel.render(
        plan.view, from: from, frames: plan.latency, maximumFrames: EffectRack.offlineFrames,
        into: $0.baseAddress!)
    }
    var out = [Float](repeating: 0, count: frames * 2)
    out.withUnsafeMutableBufferPointer {
      _ = EffectKernel.render(
        plan.view, from: from + Int64(plan.latency), frames: frames,
        maximumFrames: EffectRack.offlineFrames, into: $0.baseAddress!)
    }
    return out
  }
}

/// `project` with these chains: `tracks[k]` on its track k (as many as it has), `master` on
/// the master; each effect an amplifier at 0 dB unless given, ids from 1 in order.
func withEffects(
  _ project: Project, tracks: [[String]], master: [String] = [],
  parameters: [String: [String: Double]] = [:]
) -> Project {
  var project = project
  var next: Int64 = 0
  func effect(_ name: String) -> Effect {
    next += 1
    let plugin = name.hasPrefix("eq") ? LivePlugins.eq.0 : LivePlugins.amp.0
    return Effect(id: Effect.ID(next), plugin: plugin, parameters: parameters[name] ?? [:])
  }
  for (index, chain) in tracks.enumerated() where index < project.tracks.count {
    project.tracks[index].effects = chain.map(effect)
  }
  project.masterEffects = master.map(effect)
  return project
}

/// Chains by effect id: `tracks[k]` the ids on track k, `master` on the master, each id's
/// effect taken from `of` (so that an effect keeps its id, and so its instance, from version to
/// version, as `tape fx` edits do).
func chains(_ of: Project, tracks: [[Int64]], master: [Int64] = []) -> Project {
  var project = of
  var all: [Int64: Effect] = [:]
  for effect in of.allEffects.map(\.effect) { all[effect.id.rawValue] = effect }
  for (index, ids) in tracks.enumerated() where index < project.tracks.count {
    project.tracks[index].effects = ids.compactMap { all[$0] }
  }
  project.masterEffects = master.compactMap { all[$0] }
  return project
}

/// RMS in dB of each window of `frames` frames (both channels).
func levels(_ samples: ArraySlice<Float>, window frames: Int = 240) -> [Double] {
  let values = Array(samples)
  return stride(from: 0, to: values.count - frames * 2 + 1, by: frames * 2).map { start in
    let sum = values[start..<start + frames * 2].reduce(0.0) { $0 + Double($1) * Double($1) }
    return 10 * log10(max(sum / Double(frames * 2), 1e-20))
  }
}

/// A sine at `hertz`, half scale, on every channel, every chunk resident.
func sineSource(hertz: Double, channels: Int, frames: Int = 200_000) -> SourceAudio {
  let samples = (0..<frames).flatMap { frame -> [Float] in
    let value = Float(0.5 * sin(2 * Double.pi * hertz * Double(frame) / 48_000))
    return Array(repeating: value, count: channels)
  }
  return SourceAudio(interleaved: samples, channels: channels)
}

@Suite("The live mixer with effects: loops, seeks, chain changes")
struct LiveEffectsMixerTests {
  /// The two-track project of `LiveMixerTests` (clips from 100 and 2,000, to 30,100).
  let base = liveProject()

  /// A loop through effects is seamless and the range's length exactly, every pass: each pass
  /// is the render of the range (its first pass without the fade-in, every wrap faded out and
  /// in as without effects), sample for sample, over 100 passes; no drift. Before, each wrap
  /// let out the chains' latency of silence (257 frames for four amplifiers, more than the
  /// fade-in) and the loop grew by as much every pass. With one chain of latency, chains of
  /// several, and the master's.
  @Test(arguments: [
    (tracks: [["amp"]], master: [String]()), (tracks: [["amp", "amp", "amp", "amp"]], master: []),
    (tracks: [["amp"], ["amp", "amp"]], master: ["amp"]),
  ])
  func aLoopThroughEffectsIsTheRangeEveryPass(tracks: [[String]], master: [String]) throws {
    let project = withEffects(base, tracks: tracks, master: master)
    let range: Range<Int64> = 1_000..<4_000
    let length = Int(range.count)
    let harness = EffectsHarness(period: 256, range: range, loop: true)
    try harness.play(project)
    let passes = 100
    let played = try harness.pull(periods: passes * length / 256 + 1)
    let render = try EffectsHarness.offline(
      project, audio: harness.audio, from: range.lowerBound, frames: length)
    let fade = 256
    var worst: Float = 0
    for pass in 0..<passes {
      for frame in 0..<length {
        var gain: Float = 1
        if pass > 0 && frame < fade { gain = Float(frame) / Float(fade) }
        if frame >= length - fade { gain = min(gain, Float(length - 1 - frame) / Float(fade)) }
        for channel in 0..<2 {
          let heard = played[(pass * length + frame) * 2 + channel]
          worst = max(worst, abs(heard - render[frame * 2 + channel] * gain))
        }
      }
    }
    #expect(worst == 0, "a pass differs from the range's render by \(worst)")
    #expect(render.contains { abs($0) > 0.1 }, "the range is silent: the test proves nothing")
  }

  /// A loop over the whole project through a stateful effect (x42's EQ: its filters ring
  /// across the wrap, so a pass is not the render exactly) wraps at the project's end exactly
  /// every pass: the fade-out reaches silence on the range's last frame and the fade-in starts
  /// from it on the next, at multiples of the project's length.
  @Test func aLoopOverTheProjectThroughAnEQDoesNotDrift() throws {
    var short = base
    short.tracks[0].clips[0].sourceRange = FrameRange(start: 500, count: 2_900)
    short.tracks[1].clips = []
    let project = withEffects(
      short, tracks: [["eq", "amp"]], master: ["amp"],
      parameters: ["eq": ["sec1": 1, "gain1": -9, "freq1": 300]])
    let length = Int(project.timelineEnd.frames)
    let harness = EffectsHarness(period: 256, range: 0..<Int64.max, loop: true)
    try harness.play(project)
    let passes = 100
    let played = try harness.pull(periods: passes * length / 256 + 1)
    // At each wrap, the fade-out's last frame and the fade-in's first are silent, and the
    // frame before is not: the wrap is there, to the frame.
    func silent(_ frame: Int) -> Bool { played[frame * 2] == 0 && played[frame * 2 + 1] == 0 }
    var misplaced: [Int] = []
    for pass in 1..<passes {
      let wrap = pass * length
      if !silent(wrap - 1) || !silent(wrap) || silent(wrap - 2) { misplaced.append(pass) }
    }
    #expect(misplaced.isEmpty, "no wrap at the end of passes \(misplaced.prefix(10))")
  }

  /// A seek through effects is as clean as one without: with amplifiers on both tracks and the
  /// master (latency 192), seeks forward and back, one while paused, sound exactly as they do
  /// with no effect (a fade-out, then the target fading in). Before, the chains let out what
  /// they held of the old place (the latency's worth at the fade-in's gains), then the target
  /// came in at once at a quarter of full level or more: a click.
  @Test func aSeekThroughEffectsIsAsCleanAsOneWithout() throws {
    let project = withEffects(base, tracks: [["amp"], ["amp", "amp"]], master: ["amp"])
    func play(_ project: Project) throws -> [Float] {
      let harness = EffectsHarness(period: 256)
      try harness.play(project)
      return try harness.pull(periods: 80) { period in
        switch period {
        case 10: harness.mixer.seek(to: 20_000)
        case 30: harness.mixer.seek(to: 5_000)
        case 50: harness.mixer.setPaused(true)
        case 53: harness.mixer.seek(to: 12_000)
        case 56: harness.mixer.setPaused(false)
        default: break
        }
      }
    }
    let with = try play(project)
    let without = try play(base)
    #expect(with.count == without.count)
    let worst = zip(with, without).map { abs($0 - $1) }.max() ?? 1
    #expect(worst == 0, "the seeks through effects differ from those without by \(worst)")
    // And the fades are there: silence at the seek's landing, sound around it.
    #expect(without[(10 * 256 + 255) * 2] == 0 && without[(10 * 256 + 512) * 2] != 0)
  }

  /// Adding, removing, moving, bypassing effects while playing is not heard when the chains
  /// sound the same (amplifiers at 0 dB): the play equals the render without effects, sample
  /// for sample, through every change, on one track (the longest chain), on another (not the
  /// longest: the graph's latency grows and gives it back), on the master, an effect taken
  /// back while it leaves, and a move. Before, each change comb-filtered the track for 20 ms
  /// (the chain's delay crossfading with itself: −3 dB on noise, −17 to −26 dB on a 375 Hz
  /// tone).
  @Test func chainChangesOfIdentitiesAreNotHeard() throws {
    let all = withEffects(base, tracks: [["amp", "amp", "amp"], ["amp", "amp"]], master: ["amp"])
    // Effects 1-3 on track 1, 4-5 on track 2, 6 on the master.
    let versions: [(period: Int, tracks: [[Int64]], master: [Int64])] = [
      (0, [[1], [4]], []),
      (20, [[1, 2], [4]], []),  // enters the longest chain
      (40, [[2, 1], [4]], []),  // a move
      (60, [[2, 1], [4, 5]], []),  // enters a chain that is not the longest
      (80, [[2, 1], [4, 5]], [6]),  // the master's
      (100, [[1], [4, 5]], [6]),  // leaves a chain as long as the longest
      (120, [[1], [4]], [6]),  // leaves a chain: the graph gives latency back
      (122, [[1], [4, 5]], [6]),  // taken back while it leaves
      (160, [[1], [5, 4]], []),  // a move and the master's leaves
      (200, [[], [5, 4]], []),
      (240, [[], []], []),  // the last effects leave
      (280, [[3], []], []),  // and one comes back
    ]
    let harness = EffectsHarness(period: 256)
    var index = 0
    let played = try harness.pull(periods: 330) { period in
      while index < versions.count && versions[index].period == period {
        let version = versions[index]
        try harness.play(chains(all, tracks: version.tracks, master: version.master))
        index += 1
      }
    }
    let render = try EffectsHarness.offline(base, audio: harness.audio, frames: played.count / 2)
    // Exactly, but where the project gains a graph or loses it (the mixes through buses and
    // without them crossfade, `x·(1 − w) + x·w`: a rounding of x).
    let differs = played.indices.first { abs(played[$0] - render[$0]) > 1e-7 }
    #expect(
      differs == nil,
      "differs from the render without effects at frame \(differs.map { $0 / 2 } ?? 0) by \(differs.map { played[$0] - render[$0] } ?? 0)"
    )
    let exact = zip(played, render).filter { $0 == $1 }.count
    #expect(exact > played.count * 99 / 100)
    #expect(harness.mixer.swaps.count >= versions.count)
  }

  /// Through an add, a move, a bypass and a removal of effects that change the sound (x42's EQ
  /// with a band cut 9 dB at 375 Hz and its gain at −6 dB, an amplifier at −6 dB), on noise and
  /// on a 375 Hz tone, the level in every 5 ms window stays within 1 dB of the louder of the
  /// old and new versions' renders, and never more than 1 dB below the quieter (where they
  /// differ, a change passes from one to the other over 20 ms). Reordering the two (they
  /// commute) keeps it within 1 dB of both renders throughout. The changes come after the
  /// first second: the renders' EQ glides its own gain in over that long from its start.
  @Test(arguments: ["noise", "tone"])
  func chainChangesKeepTheLevel(signal: String) throws {
    var audio = Harness().audio
    if signal == "tone" { audio[Source.ID(2)] = sineSource(hertz: 375, channels: 2) }
    var long = base
    long.tracks = [base.tracks[1]]
    long.tracks[0].clips[0].timelineStart = 0
    long.tracks[0].clips[0].sourceRange = FrameRange(start: 0, count: 150_000)
    long.tracks[0].clips[0].fadeOut = Fade(length: 0)
    let all = withEffects(
      long, tracks: [["eq", "amp"]],
      parameters: ["eq": ["sec1": 1, "gain1": -9, "freq1": 375, "gain": -6], "amp": ["gain": -6]])
    let versions: [(period: Int, ids: [Int64])] = [
      (0, []), (200, [1]), (215, [1, 2]), (230, [2, 1]), (245, [2]), (260, [2]), (275, []),
    ]
    let harness = EffectsHarness(audio: audio, period: 256)
    var index = 0
    let played = try harness.pull(periods: 300) { period in
      while index < versions.count && versions[index].period == period {
        var ids = versions[index].ids
        // At 260, the amplifier bypassed.
        if period == 260 { ids = [2] }
        var project = chains(all, tracks: [ids])
        if period == 260 { project.tracks[0].effects[0].isBypassed = true }
        try harness.play(project)
        index += 1
      }
    }
    let frames = played.count / 2
    var renders: [Int64: [Double]] = [:]
    for (version, project) in harness.projects {
      renders[version] = levels(
        try EffectsHarness.offline(project, audio: audio, frames: frames)[...])
    }
    let heard = levels(played[...])
    let swaps = harness.mixer.swaps
    var worst = (below: 0.0, above: 0.0, at: 0)
    var reorderWorst = 0.0
    for window in (48_000 / 240)..<min(heard.count, 150_000 / 240) {
      let frame = window * 240
      // The version of the last swap before the window, and of the one before it: a change
      // takes its warm-up, the latency and a ramp to be heard, less than a swap's spacing.
      let before = swaps.filter { $0.frame <= Int64(frame + 240) }
      let new = try #require(renders[before.last?.version ?? 1])[window]
      let old = try #require(renders[before.dropLast().last?.version ?? 1])[window]
      let below = min(old, new) - heard[window]
      let above = heard[window] - max(old, new)
      if below > worst.below { worst = (below, worst.above, frame) }
      if above > worst.above { worst = (worst.below, above, frame) }
      if abs(old - new) < 0.01, (230 * 256 + 256)...(245 * 256) ~= frame {
        reorderWorst = max(reorderWorst, abs(heard[window] - new))
      }
    }
    if ProcessInfo.processInfo.environment["TRACE_LEVELS"] != nil {
      print(swaps.map { "\($0.version)@\($0.frame)" })
      for window in (58_880 / 240 - 2)..<(58_880 / 240 + 30) {
        let before = swaps.filter { $0.frame <= Int64(window * 240 + 240) }
        print(
          window * 240, heard[window], renders[before.last?.version ?? 1]![window],
          renders[before.dropLast().last?.version ?? 1]![window])
      }
    }
    print(
      "\(signal): the level at most \(worst.below) dB below the quieter render, \(worst.above) dB above the louder (near frame \(worst.at)); through the reorder within \(reorderWorst) dB"
    )
    #expect(
      worst.below <= 1, "a dip of \(worst.below) dB below both renders near frame \(worst.at)")
    #expect(worst.above <= 1, "\(worst.above) dB above both renders near frame \(worst.at)")
    #expect(reorderWorst <= 1, "the reorder is heard: \(reorderWorst) dB")
    #expect(swaps.count >= versions.count)
  }
}
