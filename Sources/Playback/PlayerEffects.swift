public import Mixing
public import Timeline

/// The effects of a play: one ``/Mixing/EffectRack`` for the player's whole life, made once
/// the device has said its period, from which every plan the player compiles takes its
/// effects. What `tape play`, `tape scrub` and `tape record --play` play through.
///
/// Rule: one rack per player, kept from the first plan to the last; each compile lets go of
/// the processors of effects the new version no longer has (plans still sounding keep theirs
/// alive until they are released, off the audio thread).
///
/// Why: a plugin instance goes on through every edit (a reverb's tail rings on across a clip
/// move, a compressor keeps its envelope), and an effect that leaves or enters a chain
/// crossfades instead of restarting the chain.
///
/// What if a plugin is missing: with `bypassMissing` its effect plays as if bypassed, and
/// ``notes()`` says so once; without it the compile throws.
///
/// ```swift
/// let effects = PlayerEffects(bypassMissing: false, projectFolder: folder)
/// let player = try LivePlayer(configuration, compile: { project, version, sequence in
///   try effects.compile(
///     project, version: version, sequence: sequence, audio: library.audio(for: project))
/// }, load: load)
/// effects.prepare(for: player, project: project)  // before player.start
/// ```
public final class PlayerEffects: @unchecked Sendable {
  private let bypassMissing: Bool
  /// Set before the player starts, then used on the planner thread only.
  private var rack: EffectRack?
  private var warned: Set<String> = []
  private var pending: [String] = []

  /// Where the project's effects' files stored relative to it are.
  public let projectFolder: RawPath?

  public init(bypassMissing: Bool, projectFolder: RawPath? = nil) {
    self.bypassMissing = bypassMissing
    self.projectFolder = projectFolder
  }

  /// Makes the rack for `player`'s device: processors take its period at most per call.
  public func prepare(for player: LivePlayer, project: Project) {
    let rack = EffectRack(
      sampleRate: project.sampleRate, channels: project.channels,
      maximumFrames: player.mixFrames, bypassMissing: bypassMissing, live: true,
      projectFolder: projectFolder)
    self.rack = rack
    // Effects that have left their chains are let go of by a plan compiled again.
    player.refresh = { rack.hasFinishedLeaving }
  }

  /// The player's compile step: a plan over `audio` whose effects come from the rack, which
  /// then lets go of the processors of effects this version no longer has.
  public func compile(
    _ project: Project, version: Int64, sequence: Int64, audio: [Source.ID: SourceAudio]
  ) throws -> RenderPlan {
    let plan = try RenderPlan(
      project: project, audio: audio, version: version, sequence: sequence, effects: rack)
    if let rack {
      let (effects, owners) = plan.effectsInUse
      rack.keepOnly(
        effects: effects, owners: owners, sends: plan.sendsInUse,
        sidechains: plan.sidechainsInUse)
      for (id, reason) in rack.skipped.sorted(by: { $0.key < $1.key })
      where warned.insert("skip \(id)").inserted {
        pending.append("effect \(id) skipped: \(reason)")
      }
    }
    for uri in plan.pluginsNotHardRT where warned.insert(uri).inserted {
      pending.append(
        "\(uri) does not say it is safe on an audio thread (lv2:hardRTCapable); it may cause dropouts"
      )
    }
    return plan
  }

  /// What the compiles so far have to say (each thing once), for the user.
  public func notes() -> [String] {
    defer { pending = [] }
    return pending
  }
}
