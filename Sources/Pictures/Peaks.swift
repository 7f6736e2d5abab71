/// A waveform overview of a source: the smallest and largest sample of each block of
/// ``framesPerBlock`` frames, channel by channel, as Audacity's and Ardour's peak files keep it,
/// so that a drawing of any width reads these instead of the audio.
///
/// A column of a drawing that covers frames `a..<b` shows the extremes of every block that
/// frames `a..<b` touch (``extremes(in:)``): exact where the column's edges fall on block
/// edges, otherwise at most one block (256 frames, 5.3 ms at 48 kHz) wider on each side.
///
/// ```swift
/// var summary = PeakSummarizer(channels: 2)
/// summary.add(samples)  // interleaved, any number of calls
/// let peaks = summary.finished()
/// peaks.extremes(in: 0..<48_000)  // (minimum: -0.8, maximum: 0.79)
/// ```
public struct Peaks: Sendable, Hashable {
  /// Frames per block in every peak file Tape writes (Ardour's and Audacity's choice).
  public static let standardFramesPerBlock = 256

  public let framesPerBlock: Int
  public let channels: Int
  /// The frames summarised (the last block may be shorter).
  public let frames: Int
  /// Block after block, channel after channel: its minimum, then its maximum.
  public let values: [Float]

  /// Peaks from their parts; nil when `values` does not hold two numbers per channel per block
  /// or a count is impossible.
  public init?(framesPerBlock: Int, channels: Int, frames: Int, values: [Float]) {
    guard framesPerBlock > 0, channels > 0, frames >= 0 else { return nil }
    let blocks = (frames + framesPerBlock - 1) / framesPerBlock
    guard values.count == blocks * channels * 2 else { return nil }
    self.init(checked: framesPerBlock, channels: channels, frames: frames, values: values)
  }

  /// Peaks whose counts the caller has checked.
  fileprivate init(checked framesPerBlock: Int, channels: Int, frames: Int, values: [Float]) {
    self.framesPerBlock = framesPerBlock
    self.channels = channels
    self.frames = frames
    self.values = values
  }

  public var blockCount: Int { (frames + framesPerBlock - 1) / framesPerBlock }

  /// The smallest and largest sample of any channel in the blocks that `range` (frames of the
  /// source) touches, clamped to the source; nil when nothing of it lies in the source.
  public func extremes(in range: Range<Int>) -> (minimum: Float, maximum: Float)? {
    let start = max(range.lowerBound, 0)
    let end = min(range.upperBound, frames)
    guard start < end else { return nil }
    var low = Float.infinity
    var high = -Float.infinity
    let stride = channels * 2
    for block in (start / framesPerBlock)...((end - 1) / framesPerBlock) {
      let base = block * stride
      for channel in 0..<channels {
        low = min(low, values[base + 2 * channel])
        high = max(high, values[base + 2 * channel + 1])
      }
    }
    return (low, high)
  }
}

/// Builds ``Peaks`` from interleaved samples fed in pieces of any size.
public struct PeakSummarizer: Sendable {
  public let channels: Int
  public let framesPerBlock: Int
  private var values: [Float] = []
  private var current: [Float]
  private var inBlock = 0
  private var frames = 0

  public init(channels: Int, framesPerBlock: Int = Peaks.standardFramesPerBlock) {
    precondition(channels > 0 && framesPerBlock > 0)
    self.channels = channels
    self.framesPerBlock = framesPerBlock
    current = Self.empty(channels)
  }

  private static func empty(_ channels: Int) -> [Float] {
    (0..<channels * 2).map { $0 % 2 == 0 ? Float.infinity : -Float.infinity }
  }

  /// Takes `samples` (whole frames, interleaved). A NaN sample is left out.
  public mutating func add(_ samples: UnsafeBufferPointer<Float>) {
    precondition(samples.count % channels == 0, "samples must be whole frames")
    var index = 0
    while index < samples.count {
      // The rest of this block, or of the samples: one pass per channel over it.
      let count = min(framesPerBlock - inBlock, (samples.count - index) / channels)
      current.withUnsafeMutableBufferPointer { extremes in
        for channel in 0..<channels {
          var low = extremes[2 * channel]
          var high = extremes[2 * channel + 1]
          var position = index + channel
          for _ in 0..<count {
            let sample = samples[position]
            if sample < low { low = sample }
            if sample > high { high = sample }
            position += channels
          }
          extremes[2 * channel] = low
          extremes[2 * channel + 1] = high
        }
      }
      index += count * channels
      inBlock += count
      frames += count
      if inBlock == framesPerBlock { closeBlock() }
    }
  }

  /// Takes an array of interleaved samples.
  public mutating func add(_ samples: [Float]) {
    samples.withUnsafeBufferPointer { add($0) }
  }

  private mutating func closeBlock() {
    for channel in 0..<channels where current[2 * channel] > current[2 * channel + 1] {
      // Only NaNs: drawn as silence.
      current[2 * channel] = 0
      current[2 * channel + 1] = 0
    }
    values += current
    current = Self.empty(channels)
    inBlock = 0
  }

  /// The peaks of everything added.
  public mutating func finished() -> Peaks {
    if inBlock > 0 { closeBlock() }
    // Two values per channel for every block begun: the counts agree by construction.
    return Peaks(checked: framesPerBlock, channels: channels, frames: frames, values: values)
  }
}
