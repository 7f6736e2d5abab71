/// Effect chain edits: each returns one ``Command/setEffects(_:on:)`` carrying the whole chain
/// as it ends.
extension Project {
  /// Adds `effect` to the chain of `owner`, at `position` (0 runs first; nil, last).
  ///
  /// ```swift
  /// let commands = try project.addEffect(eq, to: .track(Track.ID(1)))
  /// ```
  public func addEffect(
    _ effect: Effect, to owner: ChainOwner, at position: Int? = nil
  ) throws(TimelineError) -> [Command] {
    guard var chain = effects(of: owner) else {
      if case .track(let id) = owner { throw .unknownTrack(id) }
      return []
    }
    guard self.effect(effect.id) == nil else { throw .duplicateID(effect.id.description) }
    let position = position ?? chain.count
    guard (0...chain.count).contains(position) else {
      throw .effectPositionOutOfRange(effect.id, position: position, chainLength: chain.count + 1)
    }
    try effect.validate()
    chain.insert(effect, at: position)
    if effect.sidechain != nil {
      _ = try applying([.setEffects(chain, on: owner)])
    }
    return [.setEffects(chain, on: owner)]
  }

  /// Sets parameters of effect `id` (the others keep their values), its bypass and its
  /// side chain (`.some(nil)` removes it; nil leaves it). A side chain that would close a
  /// loop of the routing is refused, naming the loop.
  public func setEffect(
    _ id: Effect.ID, parameters: [String: Double] = [:], bypassed: Bool? = nil,
    sidechain: Track.ID?? = nil
  ) throws(TimelineError) -> [Command] {
    guard let (effect, owner, index) = self.effect(id), var chain = effects(of: owner) else {
      throw .unknownEffect(id)
    }
    var changed = effect
    changed.parameters.merge(parameters) { _, new in new }
    if let bypassed { changed.isBypassed = bypassed }
    if let sidechain { changed.sidechain = sidechain }
    try changed.validate()
    chain[index] = changed
    if changed.sidechain != nil {
      _ = try applying([.setEffects(chain, on: owner)])
    }
    return [.setEffects(chain, on: owner)]
  }

  /// Replaces effect `id` whole (its plugin state after a preset, say), in place.
  public func replaceEffect(_ effect: Effect) throws(TimelineError) -> [Command] {
    guard let (_, owner, index) = self.effect(effect.id), var chain = effects(of: owner) else {
      throw .unknownEffect(effect.id)
    }
    try effect.validate()
    chain[index] = effect
    if effect.sidechain != nil { _ = try applying([.setEffects(chain, on: owner)]) }
    return [.setEffects(chain, on: owner)]
  }

  /// Moves effect `id` to `position` in its chain (0 runs first).
  public func moveEffect(_ id: Effect.ID, to position: Int) throws(TimelineError) -> [Command] {
    guard let (effect, owner, index) = self.effect(id), var chain = effects(of: owner) else {
      throw .unknownEffect(id)
    }
    guard (0..<chain.count).contains(position) else {
      throw .effectPositionOutOfRange(id, position: position, chainLength: chain.count)
    }
    chain.remove(at: index)
    chain.insert(effect, at: position)
    return [.setEffects(chain, on: owner)]
  }

  /// Removes the effects `ids` from their chains.
  public func removeEffects(_ ids: [Effect.ID]) throws(TimelineError) -> [Command] {
    var chains: [ChainOwner: [Effect]] = [:]
    for id in ids {
      guard let (_, owner, _) = effect(id) else { throw .unknownEffect(id) }
      var chain = chains[owner] ?? effects(of: owner) ?? []
      chain.removeAll { $0.id == id }
      chains[owner] = chain
    }
    return chains.keys.sorted().map { owner in .setEffects(chains[owner] ?? [], on: owner) }
  }
}

extension Project {
  /// Sets the automation of parameter `symbol` of effect `id` (nil removes it): one
  /// ``Command/setEffects(_:on:)``.
  ///
  /// ```swift
  /// let commands = try project.setAutomation(Effect.ID(1), "gain", sweep)
  /// ```
  public func setAutomation(
    _ id: Effect.ID, _ symbol: String, _ envelope: ParameterEnvelope?
  ) throws(TimelineError) -> [Command] {
    guard let (effect, owner, index) = self.effect(id), var chain = effects(of: owner) else {
      throw .unknownEffect(id)
    }
    var changed = effect
    changed.automation[symbol] = envelope
    try changed.validate(sampleRate: sampleRate)
    chain[index] = changed
    return [.setEffects(chain, on: owner)]
  }
}
