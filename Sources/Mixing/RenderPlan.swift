public import Atomics
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

/// The curve codes the kernel switches on (``FadeCurve`` as one trivially-copyable byte).
public enum CurveCode: UInt8, Sendable, BitwiseCopyable {
  case linear, equalPower, sCurve, exponential

  init(_ curve: FadeCurve) {
    switch curve {
    case .linear: self = .linear
    case .equalPower: self = .equalPower
    case .sCurve: self = .sCurve
    case .exponential: self = .exponential
    }
  }
}

/// One audible clip, flattened for the kernel: where it plays, what it reads, how loud.
///
/// Trivially copyable: no references, so the audio thread can read it without touching ARC.
public struct ClipRecord: @unchecked Sendable, BitwiseCopyable {
  /// The source's chunk table (see ``SourceAudio``): where its resident chunks are.
  public var chunks: UnsafeMutablePointer<UInt.AtomicRepresentation>
  /// The source frame (at the project rate) the clip's first frame plays: `sourceRange.start`.
  public var sourceStart: Int64
  public var timelineStart: Int64
  public var length: Int64
  public var fadeInLength: Int64
  public var fadeOutLength: Int64
  public var fadeInCurve: CurveCode
  public var fadeOutCurve: CurveCode
  public var routing: ChannelRouting
  /// Clip gain × track gain × pan, for the left (or only) and right outputs.
  public var gainLeft: Float
  public var gainRight: Float

  public var timelineEnd: Int64 { timelineStart + length }
}

/// What the kernel reads: a flat, trivially-copyable view of a ``RenderPlan``.
///
/// Valid only while the plan it came from is alive; the plan's owner guarantees that.
public struct PlanView: @unchecked Sendable, BitwiseCopyable {
  /// Audible clips sorted by `timelineStart`.
  public let clips: UnsafePointer<ClipRecord>?
  /// `runningEnd[i]` = the latest `timelineEnd` among `clips[0...i]`: non-decreasing, so the
  /// first clip that can reach a block is found by binary search.
  public let runningEnd: UnsafePointer<Int64>?
  public let count: Int
  /// 1 or 2.
  public let outputChannels: Int
}

/// A snapshot compiled for rendering: every audible clip as a flat ``ClipRecord`` pointing at its
/// source's chunk table, and the sources' audio kept alive for the plan's lifetime.
///
/// Compiled off the audio thread from an immutable ``Project``; immutable afterwards, so any
/// number of threads may render from one plan at once.
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
  private let records: UnsafeMutableBufferPointer<ClipRecord>
  private let runningEnd: UnsafeMutableBufferPointer<Int64>
  /// The decoded audio every record reads, kept alive with the plan.
  public let sources: [SourceAudio]
  /// For each record, in order, its source's index in ``sources``.
  private let recordSources: [Int]

  /// Compiles `project`, reading each clip's audio from `audio` (keyed by source id).
  ///
  /// Muted tracks, and unsoloed tracks when any track is soloed, contribute no records. Throws
  /// when a clip's source has no audio or its crop reaches past the audio's end.
  public init(project: Project, audio: [Source.ID: SourceAudio]) throws(MixingError) {
    sampleRate = project.sampleRate
    outputChannels = project.channels
    end = project.timelineEnd
    var compiled: [(record: ClipRecord, source: Int)] = []
    var sources: [SourceAudio] = []
    var sourceIndex: [ObjectIdentifier: Int] = [:]
    for track in project.audibleTracks {
      for clip in track.clips where clip.length.frames > 0 {
        guard let source = audio[clip.source] else {
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
        compiled.append(
          (
            Self.record(
              clip, track: track, chunks: source.table, sourceChannels: source.channels,
              outputChannels: project.channels), index
          ))
      }
    }
    compiled.sort {
      ($0.record.timelineStart, $0.record.timelineEnd)
        < ($1.record.timelineStart, $1.record.timelineEnd)
    }
    records = .allocate(capacity: compiled.count)
    _ = records.initialize(from: compiled.map(\.record))
    runningEnd = .allocate(capacity: compiled.count)
    var latest = Int64.min
    for (index, record) in records.enumerated() {
      latest = max(latest, record.timelineEnd)
      runningEnd.initializeElement(at: index, to: latest)
    }
    self.sources = sources
    recordSources = compiled.map(\.source)
    view = PlanView(
      clips: UnsafePointer(records.baseAddress), runningEnd: UnsafePointer(runningEnd.baseAddress),
      count: compiled.count, outputChannels: project.channels)
  }

  deinit {
    records.deallocate()
    runningEnd.deallocate()
  }

  /// How many clips the plan plays (muted and unsoloed tracks excluded).
  public var clipCount: Int { view.count }

  /// Calls `body` with each source chunk that rendering the timeline frames `range` reads (a
  /// chunk read by several clips comes once per clip): what a loader makes resident first.
  public func chunksRead<Failure: Error>(
    in range: Range<Int64>, _ body: (SourceAudio, Int) throws(Failure) -> Void
  ) throws(Failure) {
    guard let runningEnd = view.runningEnd, !range.isEmpty else { return }
    var index = RenderKernel.firstReaching(
      range.lowerBound, runningEnd: runningEnd, count: clipCount)
    while index < clipCount {
      let record = records[index]
      if record.timelineStart >= range.upperBound { break }
      let first = max(range.lowerBound, record.timelineStart) - record.timelineStart
      let last = min(range.upperBound, record.timelineEnd) - record.timelineStart
      if first < last {
        let source = sources[recordSources[index]]
        let frames = Int(record.sourceStart + first)..<Int(record.sourceStart + last)
        for chunk in source.chunks(covering: frames) { try body(source, chunk) }
      }
      index += 1
    }
  }

  /// For each of ``sources``, for each of its chunks, the timeline frame from which no clip of
  /// the plan reads it any more (`Int64.min` for a chunk no clip reads): when a loader working
  /// through the timeline in order may let it go.
  public func lastReads() -> [[Int64]] {
    var last = sources.map { Array(repeating: Int64.min, count: $0.chunkCount) }
    for index in 0..<clipCount {
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
    _ clip: Clip, track: Track, chunks: UnsafeMutablePointer<UInt.AtomicRepresentation>,
    sourceChannels: Int, outputChannels: Int
  ) -> ClipRecord {
    let gain = clip.gain.linear * track.gain.linear
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
      let pan = PanLaw.monoSource(pan: track.pan)
      (left, right) = (gain * pan.left, gain * pan.right)
    default:
      routing = .stereoToStereo
      let pan = PanLaw.stereoSource(pan: track.pan)
      (left, right) = (gain * pan.left, gain * pan.right)
    }
    return ClipRecord(
      chunks: chunks, sourceStart: clip.sourceRange.start.frames,
      timelineStart: clip.timelineStart.frames, length: clip.length.frames,
      fadeInLength: clip.fadeIn.length.frames, fadeOutLength: clip.fadeOut.length.frames,
      fadeInCurve: CurveCode(clip.fadeIn.curve), fadeOutCurve: CurveCode(clip.fadeOut.curve),
      routing: routing, gainLeft: Float(left), gainRight: Float(right))
  }
}
