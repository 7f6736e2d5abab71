import Timeline

/// The routing part of a plan: where each chain goes, the sends and side chains, the order the
/// chains run in and how every path is aligned, compiled off the audio thread into flat
/// records.
///
/// Latency over the whole graph: each track `c` has an arrival `A(c)`, the latest at which
/// anything it receives comes in (0 for a track that receives nothing), and its chain's latency
/// `L(c)`; what it gives out is at `A(c) + L(c)` (its pre-fader tap at `A(c)`). Every edge into
/// a track is delayed to reach it at `A(c)`, and so are the track's own clips (the plan moves
/// them `A(c)` later); every track going to the master is delayed to reach it at `M`, the
/// latest arrival there. The graph's latency is then `M` plus the master chain's: an impulse on
/// any track reaches the output at the same frame through every path. A side chain from `s`
/// into an effect of `c` whose chain has latency `B` before it reaches the effect at
/// `A(c) + B`, with the signal the effect processes: `A(c) ≥ A(s) + L(s) − B`, and the side
/// chain is delayed by the difference.
final class Routing {
  let order: UnsafeMutableBufferPointer<Int32>
  let sends: UnsafeMutableBufferPointer<SendRecord>
  let sidechains: UnsafeMutableBufferPointer<SidechainRecord>
  /// The records in ``sends`` and ``sidechains`` (each buffer holds at least one slot, so its
  /// own count is not theirs).
  let sendCount: Int
  let sidechainCount: Int
  private let sidechainBuses: [SendBus]
  private let envelopes: [UnsafeMutableBufferPointer<EnvelopeSegment>]
  private let sendBuses: [SendBus]
  let alignment: [Track.ID: Int]
  let preFaderTracks: Set<Track.ID>
  let sendKeys: Set<SendKey>
  /// The side chains the plan runs (ghosts ramping out included): what the rack must keep.
  let sidechainKeys: Set<SidechainKey>
  /// `M`: where every chain going to the master reaches it.
  let masterArrival: Int

  /// Routes `records` (the chains of `project.tracks`, in that order, their latencies
  /// `latencies`), taking send buses from `rack`.
  init(
    project: Project, rack: EffectRack, buses: [ChainBus], latencies: [Int],
    audible: Set<Track.ID>, keying: Set<Track.ID> = [], order ordered: [Track.ID]? = nil,
    sidechains taps: [SidechainTap], receivers: Set<Track.ID> = [],
    records: inout [ChainRecord]
  ) throws(MixingError) {
    /// Whether what `from` gives `to` (an output or a send) is heard: `from` sounds, or both
    /// only key side chains (a solo silences their outputs to anything else).
    func carries(_ from: Track.ID, _ to: Track.ID) -> Bool {
      audible.contains(from) || (keying.contains(from) && keying.contains(to))
    }
    let tracks = project.tracks
    let index = Dictionary(uniqueKeysWithValues: tracks.enumerated().map { ($1.id, $0) })
    // A send the project no longer has (or has at another tap) ramps out, at gain 0, while it
    // still sounds: a ghost.
    var all = project.sends.map { (send: $0, ghost: false) }
    let current = Set(project.sends.map(SendKey.init))
    for send in rack.lastSends.values.sorted(by: { $0.id < $1.id })
    where !current.contains(SendKey(send)) && rack.sendIsSounding(SendKey(send)) {
      if index[send.from] != nil && index[send.to] != nil { all.append((send, true)) }
    }
    let order = (ordered ?? project.routingOrder).compactMap { index[$0] }
    // Arrivals, in an order where every track comes after those that feed it.
    var arrival = [Int](repeating: 0, count: tracks.count)
    for chain in order {
      let id = tracks[chain].id
      var latest = 0
      for (other, track) in tracks.enumerated() where track.output == id {
        latest = max(latest, arrival[other] + latencies[other])
      }
      for (send, _) in all where send.to == id {
        guard let from = index[send.from] else { continue }
        latest = max(latest, arrival[from] + (send.isPreFader ? 0 : latencies[from]))
      }
      // A side chain reaches its effect with what the effect processes: the effect's input is
      // at A(c) plus what runs before it.
      for tap in taps where tap.chain == chain {
        latest = max(latest, arrival[tap.source] + latencies[tap.source] - tap.before)
      }
      arrival[chain] = latest
    }
    var master = 0
    for (chain, track) in tracks.enumerated() where track.output == nil {
      master = max(master, arrival[chain] + latencies[chain])
    }
    guard master <= rack.maximumDelay else {
      throw .latencyTooLong(frames: master, most: rack.maximumDelay)
    }
    masterArrival = master
    let stereo = project.channels == 2
    var envelopes: [UnsafeMutableBufferPointer<EnvelopeSegment>] = []
    let receiving = Set(tracks.compactMap(\.output)).union(all.map(\.send.to)).union(receivers)
    let tapped = Set(all.filter(\.send.isPreFader).map(\.send.from))
    for (chain, track) in tracks.enumerated() {
      var record = records[chain]
      record.trackID = track.id.rawValue
      record.route = buses[chain].route
      if let output = track.output, let target = index[output] {
        record.destination = target
        record.destinationTrack = output.rawValue
        record.delay = arrival[target] - arrival[chain] - latencies[chain]
        record.postGain = carries(track.id, output) ? 1 : 0
      } else {
        record.delay = master - arrival[chain] - latencies[chain]
      }
      if receiving.contains(track.id) {
        record.input = buses[chain].inputBuffer()
        // An automated pan is applied frame by frame (``ChainRecord/pan``), not here.
        let lane = stereo ? track.panEnvelope : nil
        let pan =
          stereo && lane == nil ? PanLaw.stereoSource(pan: track.pan) : (left: 1.0, right: 1.0)
        record.inputLeft = Float(track.gain.linear * pan.left)
        record.inputRight = Float(track.gain.linear * pan.right)
        (record.envelope, record.envelopeCount, record.envelopeKey) = Self.segments(
          track.envelope?.segments(), shiftedBy: arrival[chain], into: &envelopes)
        (record.pan, record.panCount, record.panKey) = Self.segments(
          lane?.curve.segments(), shiftedBy: arrival[chain], into: &envelopes)
      }
      if tapped.contains(track.id) { record.prefader = buses[chain].prefaderBuffer() }
      records[chain] = record
    }
    var sendRecords: [SendRecord] = []
    var sendBuses: [SendBus] = []
    for (send, ghost) in all {
      guard let from = index[send.from], let to = index[send.to] else { continue }
      let bus = rack.sendBus(SendKey(send))
      sendBuses.append(bus)
      let heard = carries(send.from, send.to) && !ghost
      let pan = stereo ? PanLaw.stereoSource(pan: send.pan) : (left: 1.0, right: 1.0)
      let gain = heard ? send.gain.linear : 0
      let tap = arrival[from] + (send.isPreFader ? 0 : latencies[from])
      var record = SendRecord(
        source: from, target: to, preFader: send.isPreFader,
        gainLeft: Float(gain * pan.left), gainRight: Float(gain * pan.right),
        delay: arrival[to] - tap, buffer: bus.buffer, delayLine: bus.delay, state: bus.state)
      // The send's envelope on what it delivers, which plays at the target's arrival.
      (record.envelope, record.envelopeCount, record.envelopeKey) = Self.segments(
        send.envelope?.segments(), shiftedBy: arrival[to], into: &envelopes)
      sendRecords.append(record)
    }
    var sidechainRecords: [SidechainRecord] = []
    var sidechainBuses: [SendBus] = []
    for tap in taps {
      let bus = rack.sidechainBus(SidechainKey(effect: tap.effect, source: tracks[tap.source].id))
      sidechainBuses.append(bus)
      let delay =
        arrival[tap.chain] + tap.before - arrival[tap.source] - latencies[tap.source]
      guard delay <= rack.maximumDelay else {
        throw .latencyTooLong(frames: delay, most: rack.maximumDelay)
      }
      sidechainRecords.append(
        SidechainRecord(
          source: tap.source, target: tap.targets[0], second: tap.targets.dropFirst().first,
          gain: !tap.ghost
            && (audible.contains(tracks[tap.source].id) || keying.contains(tracks[tap.source].id))
            ? 1 : 0, delay: max(0, delay),
          buffer: bus.buffer, delayLine: bus.delay, state: bus.state))
    }
    for record in records where record.delay > rack.maximumDelay {
      throw .latencyTooLong(frames: record.delay, most: rack.maximumDelay)
    }
    self.order = .allocate(capacity: max(order.count, 1))
    _ = self.order.initialize(from: order.map { Int32($0) })
    sends = .allocate(capacity: max(sendRecords.count, 1))
    _ = sends.initialize(from: sendRecords)
    sidechains = .allocate(capacity: max(sidechainRecords.count, 1))
    _ = sidechains.initialize(from: sidechainRecords)
    sendCount = sendRecords.count
    sidechainCount = sidechainRecords.count
    self.sidechainBuses = sidechainBuses
    self.envelopes = envelopes
    self.sendBuses = sendBuses
    alignment = Dictionary(
      uniqueKeysWithValues: tracks.enumerated().filter { arrival[$0.offset] > 0 }.map {
        ($1.id, arrival[$0])
      })
    preFaderTracks = tapped
    sendKeys = Set(all.map { SendKey($0.send) })
    sidechainKeys = Set(taps.map { SidechainKey(effect: $0.effect, source: tracks[$0.source].id) })
  }

  deinit {
    order.deallocate()
    sends.deallocate()
    sidechains.deallocate()
    for buffer in envelopes { buffer.deallocate() }
  }

  /// `segments` moved `frames` later, in memory the plan keeps in `buffers` until it goes: the
  /// address and count a record carries (nil and 0 for none), and a key that differs when the
  /// lane does (a hash of the moved segments, never 0; 0 for none).
  static func segments(
    _ segments: [EnvelopeSegment]?, shiftedBy frames: Int,
    into buffers: inout [UnsafeMutableBufferPointer<EnvelopeSegment>]
  ) -> (UnsafePointer<EnvelopeSegment>?, Int, Int) {
    guard let segments, !segments.isEmpty else { return (nil, 0, 0) }
    let moved = segments.map { shifted($0, by: Int64(frames)) }
    let buffer = UnsafeMutableBufferPointer<EnvelopeSegment>.allocate(capacity: segments.count)
    _ = buffer.initialize(from: moved)
    buffers.append(buffer)
    let key = moved.hashValue
    return (UnsafePointer(buffer.baseAddress), buffer.count, key == 0 ? 1 : key)
  }

  /// `segment` moved `frames` later (its open ends stay open).
  static func shifted(_ segment: EnvelopeSegment, by frames: Int64) -> EnvelopeSegment {
    var moved = segment
    if moved.start != .min { moved.start += frames }
    if moved.end != .max { moved.end += frames }
    return moved
  }

  /// The memory the audio thread touches, for a player to lock into RAM.
  var memoryRegions: [(address: UnsafeRawPointer, bytes: Int)] {
    var regions: [(UnsafeRawPointer, Int)] = []
    if let base = order.baseAddress { regions.append((UnsafeRawPointer(base), order.count * 4)) }
    if let base = sends.baseAddress {
      regions.append((UnsafeRawPointer(base), sends.count * MemoryLayout<SendRecord>.stride))
    }
    for buffer in envelopes {
      if let base = buffer.baseAddress {
        regions.append(
          (UnsafeRawPointer(base), buffer.count * MemoryLayout<EnvelopeSegment>.stride))
      }
    }
    if let base = sidechains.baseAddress {
      regions.append(
        (UnsafeRawPointer(base), sidechains.count * MemoryLayout<SidechainRecord>.stride))
    }
    return regions + sendBuses.flatMap(\.memoryRegions) + sidechainBuses.flatMap(\.memoryRegions)
  }
}
