import Foundation
public import Timeline

/// What a file holds, as found by opening and reading it completely.
public struct AudioFileInfo: Sendable, Hashable {
  /// Absolute path, normalized (`.` and `..` applied).
  public let path: RawPath
  public let sampleRate: Int
  public let channels: Int
  public let frameCount: Int64
  /// The container, as libsndfile names it.
  public let format: String
  /// A hash of the file's bytes (see ``ContentHash``).
  public let contentHash: String
}

/// Checks that a file is usable audio before it is registered as a source.
public enum AudioProbe {
  /// ``probe(_:)-(RawPath)`` of a path given as text.
  public static func probe(_ path: String) throws(AudioFileError) -> AudioFileInfo {
    try probe(RawPath(path))
  }

  /// Opens `path` with libsndfile and reads every frame, so a truncated or damaged body is found
  /// now rather than at render time. Refuses files with more than two channels or no frames.
  ///
  /// ```swift
  /// let info = try AudioProbe.probe("TestAudio/speech-mono-48k-16.wav")
  /// info.channels  // 1
  /// ```
  public static func probe(_ file: RawPath) throws(AudioFileError) -> AudioFileInfo {
    let path = file.description
    let absolute = file.absolute
    let reader = try SndfileReader(path: absolute)
    guard reader.channels <= 2 else {
      throw .tooManyChannels(path: path, channels: reader.channels)
    }
    guard reader.frames > 0 else { throw .empty(path: path) }
    // Read everything: libsndfile trims a too-short body silently, but says so in its log.
    let chunk = 16_384
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * reader.channels)
    defer { buffer.deallocate() }
    var total: Int64 = 0
    while true {
      let read = reader.readFloats(into: buffer, frames: chunk)
      if read <= 0 { break }
      // A float file can hold NaN or ±infinity; mixed in, one such sample ruins the whole
      // render (NaN spreads through every sum), so the file is refused with where it is.
      for index in 0..<read * reader.channels where !buffer[index].isFinite {
        throw .nonFiniteSample(
          path: path, frame: total + Int64(index / reader.channels),
          sampleRate: reader.sampleRate)
      }
      total += Int64(read)
    }
    // WAV: libsndfile's log says what the header declared; AIFF: its COMM chunk does.
    let declared = declaredFrames(inLog: reader.log) ?? declaredAIFFFrames(at: absolute)
    // An MP3's length is exact only when it has a LAME/Xing header (then the encoder delay and
    // padding are taken off too); without one (sox, ffmpeg -write_xing 0, a stream cut to a
    // file) libsndfile's count is mpg123's estimate from the bit rate, and what decodes is the
    // length, as it is for ffmpeg. A cut MP3 cannot be told from that, and imports shorter.
    let estimated = reader.isMPEG
    if !estimated && (total < reader.frames || (declared ?? 0) > total) {
      throw .truncated(
        path: path, expectedFrames: max(declared ?? 0, reader.frames), readFrames: total)
    }
    return AudioFileInfo(
      path: absolute, sampleRate: reader.sampleRate, channels: reader.channels,
      frameCount: estimated ? total : reader.frames, format: reader.formatName,
      contentHash: try ContentHash.ofFile(at: absolute))
  }

  /// The `numSampleFrames` of an AIFF or AIFF-C file's COMM chunk (nil for anything else):
  /// libsndfile reads a cut AIFF as a shorter file without a word in its log.
  static func declaredAIFFFrames(at path: RawPath) -> Int64? {
    let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 1 << 16)
    let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
    guard count >= 12 else { return nil }
    bytes.removeLast(bytes.count - count)
    guard bytes[0..<4] == Array("FORM".utf8)[...],
      bytes[8..<12] == Array("AIFF".utf8)[...] || bytes[8..<12] == Array("AIFC".utf8)[...]
    else { return nil }
    func bigEndian(_ offset: Int, _ count: Int) -> Int64 {
      bytes[offset..<offset + count].reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }
    var offset = 12
    while offset + 8 <= bytes.count {
      let size = Int(bigEndian(offset + 4, 4))
      if bytes[offset..<offset + 4] == Array("COMM".utf8)[...] {
        guard offset + 8 + 6 <= bytes.count else { return nil }
        return bigEndian(offset + 8 + 2, 4)
      }
      offset += 8 + size + (size & 1)
    }
    return nil
  }

  /// The frame count a header declared when libsndfile found less data than that: its log then
  /// reads `data : 192000 (should be 99956)` (bytes) beside `Block Align : 4`.
  static func declaredFrames(inLog log: String) -> Int64? {
    var blockAlign: Int64?
    var declaredBytes: Int64?
    for line in log.split(separator: "\n") {
      let parts = line.split(separator: ":", maxSplits: 1).map {
        $0.trimmingCharacters(in: .whitespaces)
      }
      guard parts.count == 2 else { continue }
      if parts[0] == "Block Align" { blockAlign = Int64(parts[1]) }
      if parts[0] == "data", parts[1].contains("(should be") {
        declaredBytes = Int64(parts[1].prefix { $0.isNumber })
      }
    }
    guard let declaredBytes, let blockAlign, blockAlign > 0 else { return nil }
    return declaredBytes / blockAlign
  }
}

extension RawPath {
  /// This path made absolute against the working folder and normalized.
  public var absolute: RawPath {
    if isAbsolute { return normalized }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return normalized }
    let folder = RawPath(bytes: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) })
    return folder.appending(self).normalized
  }

  /// The absolute folder of the project file `project`: what its sources' relative paths are
  /// relative to.
  public static func folder(ofProject project: String) -> RawPath {
    RawPath(project).absolute.folder
  }

  /// Where a source at this (absolute) path is kept in the project `project`: relative to the
  /// project's folder when it lies inside it, so that the folder can move; absolute otherwise.
  public func stored(inProject project: String) -> RawPath {
    relative(to: .folder(ofProject: project)) ?? self
  }
}
