import Foundation

/// What a file holds, as found by opening and reading it completely.
public struct AudioFileInfo: Sendable, Hashable {
  /// Absolute path.
  public let path: String
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
  /// Opens `path` with libsndfile and reads every frame, so a truncated or damaged body is found
  /// now rather than at render time. Refuses files with more than two channels or no frames.
  ///
  /// ```swift
  /// let info = try AudioProbe.probe("TestAudio/speech-mono-48k-16.wav")
  /// info.channels  // 1
  /// ```
  public static func probe(_ path: String) throws(AudioFileError) -> AudioFileInfo {
    let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
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
      total += Int64(read)
    }
    let declared = declaredFrames(inLog: reader.log)
    if total < reader.frames || (declared ?? 0) > total {
      throw .truncated(
        path: path, expectedFrames: max(declared ?? 0, reader.frames), readFrames: total)
    }
    return AudioFileInfo(
      path: absolute, sampleRate: reader.sampleRate, channels: reader.channels,
      frameCount: reader.frames, format: reader.formatName,
      contentHash: try ContentHash.ofFile(at: absolute))
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
