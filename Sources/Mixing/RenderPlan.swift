public import Atomics
import Effects
public import Timeline

/// How a clip's source channels reach the output channels.
public enum ChannelRouting: UInt8, Sendable, BitwiseCopyable {
  /// Mono source, mono output: `out += src · g`.
  case monoToMono
  /// Mono source, stereo output: `L += src · gL`, `R += src · gR` (constant-power pan).
  case monoToStereo
  /// Stereo source, stereo output: `L += srcL · gL`, `R += srcR · gR` (balance).
  case stereoToStereo
  /// Stereo source, mono output: `out += (srcL + srcR)/2 · g`, pan ignored.
  case stereoToMono

  /// Channels of the source this routing reads.
  public var sourceChannels: Int {
    switch self {
    case .monoToMono, .monoToStereo: 1
    case .stereoToStereo, .stereoToMono: 2
    }
  }
}

/// One clip, flattened for the kernel: where it plays, what it reads, how loud.
///
/// Trivially copyable: no references, so the audio thread can read it without touching ARC.
/// It carries the clip's and its track's stable ids, so the player can tell, across two plans,
/// which clip is which (to ramp its gain rather than cut it).
public struct ClipRecord: @unchecked Sendable, BitwiseCopyable {
  /// The source's chunk table (see ``SourceAudio``): where its resident chunks are.
  public var chunks: UnsafeMutablePointer<UInt.AtomicRepresentation>
  /// The source frame (at the project rate) the clip's first frame plays: `sourceRange.start`.
  public var sourceStart: Int64
  public var timelineStart: Int64
  public var length: Int64
  public var fadeInLength: Int64
  public var fadeOutLength: Int64
  public var fadeInCurve: FadeCurve
  public var fadeOutCurve: FadeCurve
  /// The fades' ``/Timeline/Fade/silentCut`` and ``/Timeline/Fade/curveLength``: where in its
  /// curve each fade starts and how long the whole curve is (the length, for a whole fade).
  public var fadeInSkip: Int64 = 0
  public var fadeInSpan: Int64 = 0
  public var fadeOutSkip: Int64 = 0
  public var fadeOutSpan: Int64 = 0
  public var routing: ChannelRouting
  /// The clip's gain in the mix for the left (or only) and right outputs: clip gain × track
  /// gain × the pan law's factor, and 0 on a muted track (or an unsoloed one while another is
  /// soloed). The player ramps from one plan's values to the next's.
  public var gainLeft: Float
  public var gainRight: Float
  /// The clip's id (``/Timeline/Clip/ID``'s raw value).
  public var clipID: Int64
  /// Its track's id.
  public var trackID: Int64
  /// A hash of what the clip plays (source, crop, place, fades, routing, its track's
  /// envelope; not its gains): equal in two plans when only its gains changed.
  public var layout: UInt64
  /// Its track's volume automation (``/Timeline/Envelope/segments()``), nil for none; owned by
  /// the plan.
  public var envelope: UnsafePointer<EnvelopeSegment>?
  public var envelopeCount: Int
  /// Its track's pan automation (``/Timeline/ParameterEnvelope``'s segments, values −1 … +1)
  /// for a stereo output, nil for none; owned by the plan. With a lane, ``gainLeft`` and
  /// ``gainRight`` leave the pan out, and the kernel applies ``PanLaw`` at the lane's value
  /// frame by frame.
  public var pan: UnsafePointer<EnvelopeSegment>? = nil
  public var panCount = 0
  /// The chain bus the clip is mixed into (``GraphView/chains``' index), −1 for the output
  /// itself (a plan without effects), `−2 − i` for chain `i`'s pre-fader tap.
  public var bus: Int32 = -1
  /// Mixed into chain ``bus``'s input (what its track receives) rather than its buffer: a
  /// clip of a track an offline plan folds into its destination (see ``TrackFold``).
  public var intoInput = false

  public var timelineEnd: Int64 { timelineStart + length }

  /// Silent in this plan (its track is muted, or not soloed while another is).
  public var isSilent: Bool { gainLeft == 0 && gainRight == 0 }
}

/// What the kernel reads: a flat, trivially-copyable view of a ``RenderPlan``.
///
/// Valid only while the plan it came from is alive; the plan's owner guarantees that.
public struct PlanView: @unchecked Sendable, BitwiseCopyable {
  /// Clips sorted by `timelineStart`.
  public let clips: UnsafePointer<ClipRecord>?
  /// `runningEnd[i]` = the latest `timelineEnd` among `clips[0...i]`: non-decreasing, so the
  /// first clip that can reach a block is found by binary search.
  public let runningEnd: UnsafePointer<Int64>?
  public let count: Int
  /// 1 or 2.
  public let outputChannels: Int
  /// One ramp per clip, in `clips` order: the player's gain ramps, written by the audio thread
  /// only. Offline renders ignore them.
  public let ramps: UnsafeMutablePointer<ClipRamp>?
  /// The indices of `clips` sorted by clip id, to pair each clip with itself in another plan.
  public let byID: UnsafePointer<Int32>?
  /// A hash of what plays (every clip's id, source, crop, place and fades, not its gains): two
  /// plans with the same layout differ at most in gains.
  public let layoutHash: UInt64
  /// The end of the project's last clip (plus the effects' latency, see ``RenderPlan``).
  public let end: Int64
  /// The version the plan was compiled from.
  public let version: Int64
  /// A player's number for the plan, distinct for every plan it compiles (a version can come
  /// back: an undo), so it can tell which offer a swap played.
  public let sequence: Int64
  /// The effect chains, for a project with effects; nil for one without (every clip is mixed
  /// straight into the output).
  public let graph: UnsafePointer<GraphView>?

  init(
    clips: UnsafePointer<ClipRecord>?, runningEnd: UnsafePointer<Int64>?, count: Int,
    outputChannels: Int, ramps: UnsafeMutablePointer<ClipRamp>?, byID: UnsafePointer<Int32>?,
    layoutHash: UInt64, end: Int64, version: Int64, sequence: Int64,
    graph: UnsafePointer<GraphView>? = nil
  ) {
    self.clips = clips
    self.runningEnd = runningEnd
    self.count = count
    self.outputChannels = outputChannels
    self.ramps = ramps
    self.byID = byID
    self.layoutHash = layoutHash
    self.end = end
    self.version = version
    self.sequence = sequence
    self.graph = graph
  }
}

/// A snapshot compiled for rendering: every clip as a flat ``ClipRecord`` pointing at its
/// source's chunk table, and the sources' audio kept alive for the plan's lifetime.
///
/// Compiled off the audio thread from an immutable ``/Timeline/Project``; immutable afterwards (but
/// for
/// the player's ramps, see ``PlanView/ramps``), so any number of threads may render from one
/// plan at once.
///
/// Clips of silent tracks (muted, or unsoloed while another is soloed) are in the plan with a
/// gain of 0 when their audio is given, so that a player can ramp them in and out; the kernel
/// skips them otherwise. A clip of an audible track whose audio is missing is an error.
///
/// ```swift
/// let plan = try RenderPlan(project: snapshot, audio: decoded)
/// RenderKernel.render(plan.view, from: 0, frames: 256, into: buffer)
/// ```
public final class RenderPlan: @unchecked Sendable {
  public let sampleRate: Int
  public let outputChannels: Int
  /// The end of the project's last clip, audible or not: where a whole-project render stops.
  public let end: FramePosition
  public let view: PlanView
  /// For an offline plan with effects: ``view`` on a second set of chain buffers, so that one
  /// piece's clips can be mixed while the chains run on the piece before (see
  /// ``EffectKernel/finish(_:frames:channels:into:rampFrames:clearing:at:)``; the two views
  /// take turns, piece after piece). Nil for a plan without effects or a player's.
  public let twinView: PlanView?
  private let records: UnsafeMutableBufferPointer<ClipRecord>
  private let runningEnd: UnsafeMutableBufferPointer<Int64>
  private let ramps: UnsafeMutableBufferPointer<ClipRamp>
  private let byID: UnsafeMutableBufferPointer<Int32>
  /// The envelope segments of the tracks that have one, one buffer each.
  private let envelopes: [UnsafeMutableBufferPointer<EnvelopeSegment>]
  /// The decoded audio every record reads, kept alive with the plan.
  public let sources: [SourceAudio]
  /// For each record, in order, its source's index in ``sources``.
  private let recordSources: [Int]
  /// The effect chains of a project with effects.
  private let compiledGraph: CompiledGraph?

  /// Compiles `project` at `version` (a player's `sequence` number for it), reading each clip's audio from `audio` (keyed by source
  /// id).
  ///
  /// Throws when a clip of an audible track has no audio or its crop reaches past the audio's
  /// end. Clips of silent tracks without audio are left out.
  ///
  /// A project with effects needs `effects`, the rack its processors come from (and stay in
  /// from plan to plan).
  public init(
    project: Project, audio: [Source.ID: SourceAudio], version: Int64 = 0, sequence: Int64 = 0,
    effects rack: EffectRack? = nil
  ) throws(MixingError) {
    sampleRate = project.sampleRate
    outputChannels = project.channels
    end = project.timelineEnd
    // Tracks a solo silences that key a side chain play into their buses too.
    let audible = Set(project.mixedTracks.map(\.id))
    // A player's last effects still leaving their chains keep a graph until they have left.
    let hasEffects =
      !project.allEffects.isEmpty || project.hasRouting || rack?.isSounding == true
      || rack?.lastSends.isEmpty == false
    if hasEffects {
      guard let rack else { throw .effectsNeedRack }
      compiledGraph = try CompiledGraph(project: project, rack: rack)
    } else {
      compiledGraph = nil
      rack?.forgetChains()
      // Effects added later join a play under way (see ``EffectRack/chain(_:_:)``).
      rack?.compiled()
    }
    var compiled: [(record: ClipRecord, source: Int)] = []
    var sources: [SourceAudio] = []
    var sourceIndex: [ObjectIdentifier: Int] = [:]
    var envelopes: [UnsafeMutableBufferPointer<EnvelopeSegment>] = []
    for (trackIndex, track) in project.tracks.enumerated() {
      let isAudible = audible.contains(track.id)
      // A track that receives sound of latency has its clips delayed to line up with it.
      let shift = Int64(compiledGraph?.alignment[track.id] ?? 0)
      let tapped = compiledGraph?.preFaderTracks.contains(track.id) == true
      let fold = compiledGraph?.folds[track.id]
      /// `segments` shifted with the track's clips (and `shift` more), in memory the plan
      /// keeps, and a hash of them (with `salt`) for the clips' layout; nil for none.
      func lane(
        _ segments: [EnvelopeSegment]?, salt: Int, shift: Int64 = shift
      ) -> (UnsafeMutableBufferPointer<EnvelopeSegment>, UInt64)? {
        guard var segments, !segments.isEmpty else { return nil }
        if shift != 0 { segments = segments.map { Routing.shifted($0, by: shift) } }
        let buffer = UnsafeMutableBufferPointer<EnvelopeSegment>.allocate(capacity: segments.count)
        _ = buffer.initialize(from: segments)
        envelopes.append(buffer)
        var hasher = Hasher()
        hasher.combine(segments)
        if salt != 0 { hasher.combine(salt) }
        return (buffer, UInt64(bitPattern: Int64(hasher.finalize())))
      }
      let envelope = lane(track.envelope?.segments(), salt: 0)
      // A mono mix ignores pan, automated or not.
      let pan = project.channels == 2 ? lane(track.panEnvelope?.curve.segments(), salt: 1) : nil
      // A folded track's lanes for each of its copies, moved with the copy's clips: made once
      // for the track, not once per clip.
      let copyLanes = (fold?.copies ?? []).map { copy in
        let moved = shift + Int64(copy.delay)
        return copy.delay == 0
          ? (envelope, pan)
          : (
            lane(track.envelope?.segments(), salt: 0, shift: moved),
            project.channels == 2
              ? lane(track.panEnvelope?.curve.segments(), salt: 1, shift: moved) : nil
          )
      }
      for clip in track.clips where clip.length.frames > 0 {
        guard let source = audio[clip.source] else {
          if !isAudible { continue }
          throw .noAudio(source: clip.source, clip: clip.id)
        }
        guard source.channels == 1 || source.channels == 2 else {
          throw .unsupportedChannels(source: clip.source, channels: source.channels)
        }
        let cropEnd = clip.sourceRange.end.frames
        guard clip.sourceRange.start.frames >= 0, cropEnd <= Int64(source.frames) else {
          throw .cropBeyondAudio(clip: clip.id, cropEnd: cropEnd, audioFrames: source.frames)
        }
        let index =
          sourceIndex[ObjectIdentifier(source)]
          ?? {
            sources.append(source)
            sourceIndex[ObjectIdentifier(source)] = sources.count - 1
            return sources.count - 1
          }()
        // With effects, mute, solo and the master gain come after the track's chain.
        var record = Self.record(
          clip, track: track, audible: hasEffects || isAudible,
          masterGain: hasEffects ? 1 : project.masterGain.linear,
          envelope: envelope, pan: pan, chunks: source.table, sourceChannels: source.channels,
          outputChannels: project.channels)
        if hasEffects {
          record.bus = Int32(trackIndex)
          record.layout = (record.layout ^ UInt64(trackIndex + 1)) &* 0x100_0000_01B3
        }
        if shift != 0 {
          record.timelineStart += shift
          record.layout = (record.layout ^ UInt64(shift)) &* 0x100_0000_01B3
        }
        if let fold {
          // Where the chain would have sent it, when it would have: once per destination,
          // its envelope and pan lane moved with it.
          for (number, copy) in fold.copies.enumerated() {
            var moved = record
            if copy.delay != 0 {
              moved.timelineStart += Int64(copy.delay)
              let (envelope, pan) = copyLanes[number]
              if let envelope { moved.envelope = UnsafePointer(envelope.0.baseAddress) }
              if let pan { moved.pan = UnsafePointer(pan.0.baseAddress) }
            }
            moved.gainLeft *= copy.gainLeft
            moved.gainRight *= copy.gainRight
            moved.bus = Int32(copy.destination)
            moved.intoInput = copy.destination >= 0
            if number > 0 { moved.clipID = -clip.id.rawValue }
            compiled.append((moved, index))
          }
          continue
        }
        compiled.append((record, index))
        if tapped {
          // The pre-fader tap: the clip again at its clip gain alone (a mono clip at the
          // centre of a stereo mix), into the chain's pre-fader buffer, ids negated.
          var tap = Self.record(
            clip, track: Track(id: track.id, name: track.name), audible: true, masterGain: 1,
            envelope: nil, chunks: source.table, sourceChannels: source.channels,
            outputChannels: project.channels)
          tap.bus = -2 - Int32(trackIndex)
          tap.clipID = -clip.id.rawValue
          tap.timelineStart += shift
          tap.layout = (tap.layout ^ UInt64(bitPattern: -2 - Int64(trackIndex))) &* 0x100_0000_01B3
          compiled.append((tap, index))
        }
      }
    }
    compiled.sort {
      ($0.record.timelineStart, $0.record.timelineEnd, $0.record.clipID)
        < ($1.record.timelineStart, $1.record.timelineEnd, $1.record.clipID)
    }
    let built = compiled.map(\.record)
    records = .allocate(capacity: built.count)
    _ = records.initialize(from: built)
    runningEnd = .allocate(capacity: compiled.count)
    var latest = Int64.min
    for (index, record) in built.enumerated() {
      latest = max(latest, record.timelineEnd)
      runningEnd.initializeElement(at: index, to: latest)
    }
    ramps = .allocate(capacity: compiled.count)
    ramps.initialize(repeating: .none)
    let order = built.indices.sorted { built[$0].clipID < built[$1].clipID }
    byID = .allocate(capacity: compiled.count)
    _ = byID.initialize(from: order.map { Int32($0) })
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for index in order { hash = (hash ^ built[index].layout) &* 0x100_0000_01B3 }
    self.sources = sources
    self.envelopes = envelopes
    recordSources = compiled.map(\.source)
    let view = PlanView(
      clips: UnsafePointer(records.baseAddress), runningEnd: UnsafePointer(runningEnd.baseAddress),
      count: compiled.count, outputChannels: project.channels, ramps: ramps.baseAddress,
      byID: UnsafePointer(byID.baseAddress), layoutHash: hash,
      // With effects, a player plays on for their latency after the last clip: what it feeds
      // comes out that much later, and the end of the mix must be heard.
      end: project.timelineEnd.frames + Int64(compiledGraph?.view.pointee.latency ?? 0),
      version: version, sequence: sequence,
      graph: compiledGraph.map { UnsafePointer($0.view) })
    self.view = view
    twinView = compiledGraph?.twin.map { twin in
      PlanView(
        clips: view.clips, runningEnd: view.runningEnd, count: view.count,
        outputChannels: view.outputChannels, ramps: view.ramps, byID: view.byID,
        layoutHash: view.layoutHash, end: view.end, version: version, sequence: sequence,
        graph: UnsafePointer(twin))
    }
  }

  /// The frames the plan's effects delay its sound by (0 without effects): a render feeds the
  /// kernel this far ahead of what it writes.
  public var latency: Int { compiledGraph?.view.pointee.latency ?? 0 }

  /// The plugins of the plan's effects that do not say they are safe on an audio thread
  /// (`lv2:hardRTCapable`), by URI: a player warns of them.
  public var pluginsNotHardRT: [String] {
    Array(
      Set((compiledGraph?.processors ?? []).filter { !$0.plugin.isHardRTCapable }.map(\.plugin.uri))
    ).sorted()
  }

  /// The effect ids and chains the plan runs, for its rack's
  /// ``EffectRack/keepOnly(effects:owners:sends:sidechains:)``.
  public var effectsInUse: (effects: Set<Effect.ID>, owners: Set<ChainOwner>) {
    (compiledGraph?.effectIDs ?? [], compiledGraph?.owners ?? [])
  }

  /// The sends the plan runs (ghosts of removed ones ramping out included), for its rack's
  /// ``EffectRack/keepOnly(effects:owners:sends:sidechains:)``.
  public var sendsInUse: Set<SendKey> { compiledGraph?.sendKeys ?? [] }

  /// The side chains the plan runs (ghosts of removed or switched ones included), for its
  /// rack's ``EffectRack/keepOnly(effects:owners:sends:sidechains:)``.
  public var sidechainsInUse: Set<SidechainKey> { compiledGraph?.sidechainKeys ?? [] }

  deinit {
    records.deallocate()
    runningEnd.deallocate()
    ramps.deallocate()
    byID.deallocate()
    for buffer in envelopes { buffer.deallocate() }
  }

  /// How many clips the plan holds (silent ones included).
  public var clipCount: Int { view.count }

  /// How many clips sound.
  public var audibleClipCount: Int { records.lazy.filter { !$0.isSilent }.count }

  /// The clips, in timeline order.
  public var clips: UnsafeBufferPointer<ClipRecord> { UnsafeBufferPointer(records) }

  /// The memory the audio thread reads of this plan (records, ramps, indices), for a player to
  /// lock into RAM: its address and length in bytes, region by region.
  public var memoryRegions: [(address: UnsafeRawPointer, bytes: Int)] {
    var regions: [(UnsafeRawPointer?, Int)] = [
      (UnsafeRawPointer(records.baseAddress), records.count * MemoryLayout<ClipRecord>.stride),
      (UnsafeRawPointer(runningEnd.baseAddress), runningEnd.count * 8),
      (UnsafeRawPointer(ramps.baseAddress), ramps.count * MemoryLayout<ClipRamp>.stride),
      (UnsafeRawPointer(byID.baseAddress), byID.count * 4),
    ]
    for buffer in envelopes {
      regions.append(
        (UnsafeRawPointer(buffer.baseAddress), buffer.count * MemoryLayout<EnvelopeSegment>.stride))
    }
    for (address, bytes) in compiledGraph?.memoryRegions ?? [] { regions.append((address, bytes)) }
    return regions.compactMap { address, bytes in address.map { ($0, bytes) } }
  }

  /// Calls `body` with each source chunk that rendering the timeline frames `range` reads (a
  /// chunk read by several clips comes once per clip): what a loader makes resident first.
  /// Silent clips are left out unless `includingSilent` (a player keeps their audio near the
  /// playhead, to ramp them in).
  public func chunksRead<Failure: Error>(
    in range: Range<Int64>, includingSilent: Bool = false,
    _ body: (SourceAudio, Int) throws(Failure) -> Void
  ) throws(Failure) {
    guard let runningEnd = view.runningEnd, !range.isEmpty else { return }
    var index = RenderKernel.firstReaching(
      range.lowerBound, runningEnd: runningEnd, count: clipCount)
    while index < clipCount {
      let record = records[index]
      if record.timelineStart >= range.upperBound { break }
      let first = max(range.lowerBound, record.timelineStart) - record.timelineStart
      let last = min(range.upperBound, record.timelineEnd) - record.timelineStart
      if first < last && (includingSilent || !record.isSilent) {
        let source = sources[recordSources[index]]
        let frames = Int(record.sourceStart + first)..<Int(record.sourceStart + last)
        for chunk in source.chunks(covering: frames) { try body(source, chunk) }
      }
      index += 1
    }
  }

  /// For each of ``sources``, for each of its chunks, the timeline frame from which no audible
  /// clip of the plan reads it any more (`Int64.min` for a chunk none reads): when a loader
  /// working through the timeline in order may let it go.
  public func lastReads() -> [[Int64]] {
    var last = sources.map { Array(repeating: Int64.min, count: $0.chunkCount) }
    for index in 0..<clipCount where !records[index].isSilent {
      let record = records[index]
      let source = sources[recordSources[index]]
      let frames = Int(record.sourceStart)..<Int(record.sourceStart + record.length)
      for chunk in source.chunks(covering: frames) {
        let chunkEnd = Int64((chunk + 1) * SourceAudio.chunkFrames)
        let end = record.timelineStart + min(record.length, chunkEnd - record.sourceStart)
        last[recordSources[index]][chunk] = max(last[recordSources[index]][chunk], end)
      }
    }
    return last
  }

  private static func record(
    _ clip: Clip, track: Track, audible: Bool, masterGain: Double,
    envelope: (UnsafeMutableBufferPointer<EnvelopeSegment>, UInt64)?,
    pan lane: (UnsafeMutableBufferPointer<EnvelopeSegment>, UInt64)? = nil,
    chunks: UnsafeMutablePointer<UInt.AtomicRepresentation>, sourceChannels: Int,
    outputChannels: Int
  ) -> ClipRecord {
    // An automated pan is applied by the kernel, frame by frame: the plan's gains leave it out.
    let staticPan = lane == nil ? track.pan : nil
    let gain = audible ? clip.gain.linear * track.gain.linear * masterGain : 0
    let routing: ChannelRouting
    let left: Double
    let right: Double
    switch (sourceChannels, outputChannels) {
    case (1, 1):
      routing = .monoToMono
      (left, right) = (gain, gain)
    case (2, 1):
      routing = .stereoToMono
      (left, right) = (gain / 2, gain / 2)
    case (1, _):
      routing = .monoToStereo
      let pan = staticPan.map { PanLaw.monoSource(pan: $0) } ?? (left: 1, right: 1)
      (left, right) = (gain * pan.left, gain * pan.right)
    default:
      routing = .stereoToStereo
      let pan = staticPan.map { PanLaw.stereoSource(pan: $0) } ?? (left: 1, right: 1)
      (left, right) = (gain * pan.left, gain * pan.right)
    }
    var record = ClipRecord(
      chunks: chunks, sourceStart: clip.sourceRange.start.frames,
      timelineStart: clip.timelineStart.frames, length: clip.length.frames,
      fadeInLength: clip.fadeIn.length.frames, fadeOutLength: clip.fadeOut.length.frames,
      fadeInCurve: clip.fadeIn.curve, fadeOutCurve: clip.fadeOut.curve,
      routing: routing, gainLeft: Float(left), gainRight: Float(right), clipID: clip.id.rawValue,
      trackID: track.id.rawValue, layout: 0,
      envelope: envelope.flatMap { UnsafePointer($0.0.baseAddress) },
      envelopeCount: envelope?.0.count ?? 0)
    record.fadeInSkip = clip.fadeIn.silentCut.frames
    record.fadeInSpan = clip.fadeIn.curveLength.frames
    record.fadeOutSkip = clip.fadeOut.silentCut.frames
    record.fadeOutSpan = clip.fadeOut.curveLength.frames
    if let lane, outputChannels == 2 {
      record.pan = UnsafePointer(lane.0.baseAddress)
      record.panCount = lane.0.count
    }
    record.layout = Self.layout(of: record) ^ (envelope?.1 ?? 0) ^ (lane?.1 ?? 0)
    return record
  }

  /// FNV-1a over the fields that say what a clip plays (not how loud). The source is told by
  /// its chunk table: a player compiles every plan from the same ``SourceAudio`` objects.
  private static func layout(of record: ClipRecord) -> UInt64 {
    var value: UInt64 = 0xCBF2_9CE4_8422_2325
    for field in [
      record.clipID, Int64(Int(bitPattern: record.chunks)), record.sourceStart,
      record.timelineStart, record.length, record.fadeInLength, record.fadeOutLength,
      Int64(record.fadeInCurve.ordinal), Int64(record.fadeOutCurve.ordinal),
      Int64(record.routing.rawValue), record.fadeInSkip, record.fadeInSpan, record.fadeOutSkip,
      record.fadeOutSpan,
    ] {
      value = (value ^ UInt64(bitPattern: field)) &* 0x100_0000_01B3
    }
    return value
  }
}
