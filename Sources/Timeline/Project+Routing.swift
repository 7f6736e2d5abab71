/// Routing: where each track's sound goes (its output, the master by default, or another
/// track used as a bus), the sends that copy it to other tracks, and the side chains that take
/// it into another track's effect.
///
/// The routing is a graph of tracks with no loop: a track never feeds itself by any path of
/// outputs, sends and side chains (an edit that would is refused, naming the loop). Solo keeps audible the
/// tracks a soloed track feeds and those that feed it, as Ardour's solo does: a soloed voice
/// still reaches its bus and the shared reverb it is sent to, and a soloed bus still hears what
/// feeds it.
extension Project {
  /// The tracks `id` feeds directly: its output (when not the master) and its sends' targets.
  public func feeds(of id: Track.ID) -> [Track.ID] {
    var targets: [Track.ID] = []
    if let output = track(id)?.output { targets.append(output) }
    for send in sends where send.from == id && !targets.contains(send.to) {
      targets.append(send.to)
    }
    return targets
  }

  /// The tracks that must run after `id`: those it feeds (``feeds(of:)``), and the tracks
  /// whose effects take `id`'s output as their side chain. The edges a loop is searched on and
  /// the mix is ordered by; solo follows ``feeds(of:)`` alone (a side chain is not heard, but
  /// keys whatever solo does: ``keyingTracks(for:)``).
  public func dependents(of id: Track.ID) -> [Track.ID] {
    var targets = feeds(of: id)
    for track in tracks where !targets.contains(track.id) {
      if track.effects.contains(where: { $0.sidechain == id }) { targets.append(track.id) }
    }
    return targets
  }

  /// The side chains of the project: each effect with one, its track and its source.
  public var sidechains: [(effect: Effect, track: Track.ID, source: Track.ID)] {
    tracks.flatMap { track in
      track.effects.compactMap { effect in
        effect.sidechain.map { (effect, track.id, $0) }
      }
    }
  }

  /// Whether any track's output is another track, any send exists or any effect takes a side
  /// chain.
  public var hasRouting: Bool {
    !sends.isEmpty || tracks.contains { $0.output != nil }
      || tracks.contains { $0.effects.contains { $0.sidechain != nil } }
  }

  /// The tracks that sound: not muted, and, when any track is soloed, soloed, fed by a soloed
  /// track (through outputs or sends, by any path) or feeding one (solo-safe buses, as in
  /// Ardour and Reaper).
  public var audibleTracks: [Track] {
    let soloed = tracks.filter(\.isSolo).map(\.id)
    guard !soloed.isEmpty else { return tracks.filter { !$0.isMuted } }
    var kept = Set(soloed)
    if hasRouting {
      kept.formUnion(reachable(from: soloed, forward: true))
      kept.formUnion(reachable(from: soloed, forward: false))
    }
    return tracks.filter { !$0.isMuted && kept.contains($0.id) }
  }

  /// The tracks a mix runs: those that sound (``audibleTracks``), and those a solo silences
  /// that still key a side chain of one that does (``keyingTracks(for:)``, muted ones aside):
  /// the tracks whose audio a render needs.
  public var mixedTracks: [Track] {
    let audible = Set(audibleTracks.map(\.id))
    let keying = keyingTracks(for: audible)
    return tracks.filter { audible.contains($0.id) || (keying.contains($0.id) && !$0.isMuted) }
  }

  /// The tracks that key a side chain of `sounding` without being among them: the sources of
  /// those tracks' side chains, every track that feeds a source (through outputs or sends, by
  /// any path), and so on for their own side chains.
  ///
  /// Rule: a side chain's feed is taken whatever solo does, as Ardour's and Reaper's are (their
  /// side-chain sends ignore solo's implicit mute): a soloed track whose compressor is keyed by
  /// a voice still ducks under it, the voice itself unheard. A mixer runs these tracks (their
  /// outputs into one another, their sends into one another, their side chains) with their
  /// output to anything else silent; mute still silences a track's key. A stem uses the same
  /// rule (``stem(of:masterGain:)``).
  public func keyingTracks(for sounding: Set<Track.ID>) -> Set<Track.ID> {
    var keying: Set<Track.ID> = []
    var queue = Array(sounding)
    var visited = sounding
    while let next = queue.popLast() {
      guard let track = track(next) else { continue }
      let sources = track.effects.compactMap(\.sidechain).filter { !sounding.contains($0) }
      guard !sources.isEmpty else { continue }
      for id in reachable(from: sources, forward: false) where !sounding.contains(id) {
        keying.insert(id)
        if visited.insert(id).inserted { queue.append(id) }
      }
    }
    return keying
  }

  /// The tracks reached from `start` by outputs and sends (`forward`), or that reach it.
  func reachable(from start: [Track.ID], forward: Bool) -> Set<Track.ID> {
    var edges: [Track.ID: [Track.ID]] = [:]
    for track in tracks {
      for target in feeds(of: track.id) {
        if forward {
          edges[track.id, default: []].append(target)
        } else {
          edges[target, default: []].append(track.id)
        }
      }
    }
    var seen = Set(start)
    var queue = start
    while let next = queue.popLast() {
      for other in edges[next] ?? [] where seen.insert(other).inserted { queue.append(other) }
    }
    return seen
  }

  /// A loop of the routing, as the tracks along it from its first back to it (`t3 → t5 → t3`
  /// is `[t3, t5, t3]`); nil when there is none. Searched from `first` when given (the track
  /// an edit routed), then from every track in display order.
  public func routingLoop(startingAt first: Track.ID? = nil) -> [Track.ID]? {
    let order = (first.map { [$0] } ?? []) + tracks.map(\.id)
    var done: Set<Track.ID> = []
    for root in order where !done.contains(root) {
      var path: [Track.ID] = []
      var onPath: Set<Track.ID> = []
      var stack: [(Track.ID, [Track.ID])] = [(root, dependents(of: root))]
      path.append(root)
      onPath.insert(root)
      while !stack.isEmpty {
        if stack[stack.count - 1].1.isEmpty {
          let (finished, _) = stack.removeLast()
          path.removeLast()
          onPath.remove(finished)
          done.insert(finished)
          continue
        }
        let next = stack[stack.count - 1].1.removeFirst()
        if onPath.contains(next) {
          let start = path.firstIndex(of: next) ?? 0
          return Array(path[start...]) + [next]
        }
        if done.contains(next) { continue }
        path.append(next)
        onPath.insert(next)
        stack.append((next, dependents(of: next)))
      }
    }
    return nil
  }

  /// The tracks in an order where every track comes after every track that feeds it (each in
  /// display order otherwise): the order a mix runs their chains in. Requires no loop.
  public var routingOrder: [Track.ID] {
    var waiting: [Track.ID: Int] = [:]
    for track in tracks {
      for target in dependents(of: track.id) { waiting[target, default: 0] += 1 }
    }
    var order: [Track.ID] = []
    var ready = tracks.map(\.id).filter { (waiting[$0] ?? 0) == 0 }
    var placed: Set<Track.ID> = []
    while !ready.isEmpty {
      let next = ready.removeFirst()
      order.append(next)
      placed.insert(next)
      var freed: [Track.ID] = []
      for target in dependents(of: next) {
        waiting[target, default: 0] -= 1
        if waiting[target] == 0 { freed.append(target) }
      }
      // Keep display order among the tracks that are ready.
      ready = tracks.map(\.id).filter { id in
        !placed.contains(id) && (ready.contains(id) || freed.contains(id))
      }
    }
    // A loop (refused by every edit) leaves tracks unplaced: they come last, in display order.
    return order + tracks.map(\.id).filter { !placed.contains($0) }
  }

  /// Checks the routing: every output and send names a track of the project other than its
  /// own, each send's settings are in range, and no loop.
  public func validateRouting(startingAt first: Track.ID? = nil) throws(TimelineError) {
    let ids = Set(tracks.map(\.id))
    for track in tracks {
      guard let output = track.output else { continue }
      guard ids.contains(output) else { throw .unknownTrack(output) }
      guard output != track.id else { throw .routingLoop([track.id, track.id]) }
    }
    for send in sends {
      guard ids.contains(send.from) else { throw .unknownTrack(send.from) }
      guard ids.contains(send.to) else { throw .unknownTrack(send.to) }
      guard send.from != send.to else { throw .routingLoop([send.from, send.from]) }
      try send.gain.validate(as: "gain of send \(send.id)")
      guard send.pan.isFinite, (-1.0...1.0).contains(send.pan) else {
        throw .panOutOfRange(track: nil, pan: send.pan)
      }
      try send.envelope?.validate(send: send.id, sampleRate: sampleRate)
    }
    for (_, track, source) in sidechains {
      guard ids.contains(source) else { throw .unknownTrack(source) }
      guard source != track else { throw .routingLoop([track, track]) }
    }
    if let loop = routingLoop(startingAt: first) { throw .routingLoop(loop) }
  }

  /// The send with `id`.
  public func send(_ id: Send.ID) -> Send? {
    sends.first { $0.id == id }
  }

  /// The commands that route `track`'s output to `output` (nil: the master). Refused, naming
  /// the loop, when `output` is fed by `track` by any path.
  public func routeOutput(
    of id: Track.ID, to output: Track.ID?
  ) throws(TimelineError) -> [Command] {
    guard var track = track(id) else { throw .unknownTrack(id) }
    track.output = output
    var routed = self
    if let index = routed.tracks.firstIndex(where: { $0.id == id }) {
      routed.tracks[index].output = output
    }
    try routed.validateRouting(startingAt: id)
    return [.setTrack(track)]
  }

  /// The command that adds or changes `send`. Refused, naming the loop, when its target feeds
  /// its source by any path.
  public func settingSend(_ send: Send) throws(TimelineError) -> [Command] {
    var routed = self
    routed.sends.removeAll { $0.id == send.id }
    routed.sends.append(send)
    try routed.validateRouting(startingAt: send.from)
    return [.setSend(send)]
  }
}
