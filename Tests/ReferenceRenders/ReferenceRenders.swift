import Foundation
public import Timeline

/// Independent renders of a project's edit list by sox and by ffmpeg, built from the model values
/// with the formulas written out here (gains, pan laws), so nothing of Tape's mixer is reused.
///
/// sox: one file per clip (`trim`, `fade`, `remix -m` with the clip's gains, `pad`), then
/// `sox -m -v 1 …` (a plain sum). ffmpeg: `atrim`, `afade`, `pan`, `adelay`, then
/// `amix normalize=0`. Sources at another rate are resampled by ffmpeg's libsoxr resampler
/// (`aresample=resampler=soxr`), for sox too, since sox's own `rate` is a different filter.
public enum ReferenceRender {
  /// Everything renders as interleaved float32 at the project rate.
  public static func sox(_ project: Project, in folder: String) throws -> [Float] {
    var clipFiles: [String] = []
    for (index, (clip, track)) in audibleClips(project).enumerated() {
      let source = try source(of: clip, in: project)
      let input = try projectRateInput(source, project: project, folder: folder)
      let output = "\(folder)/sox-clip-\(index).wav"
      var effects = ["trim", "\(clip.sourceRange.start.frames)s", "\(clip.length.frames)s"]
      if clip.fadeIn.length.frames > 0 {
        effects += ["fade", try soxCurve(clip.fadeIn.curve), "\(clip.fadeIn.length.frames)s"]
      }
      if clip.fadeOut.length.frames > 0 {
        effects += [
          "fade", try soxCurve(clip.fadeOut.curve), "0", "\(clip.length.frames)s",
          "\(clip.fadeOut.length.frames)s",
        ]
      }
      let (left, right) = gains(clip, track, sourceChannels: source.channels, project: project)
      effects += ["remix", "-m"]
      switch (source.channels, project.channels) {
      case (1, 1): effects += ["1v\(left)"]
      case (2, 1): effects += ["1v\(left),2v\(left)"]
      case (1, _): effects += ["1v\(left)", "1v\(right)"]
      default: effects += ["1v\(left)", "2v\(right)"]
      }
      effects += ["pad", "\(clip.timelineStart.frames)s"]
      try run("/usr/bin/sox", ["-D", input, "-e", "floating-point", "-b", "32", output] + effects)
      clipFiles.append(output)
    }
    let mix = "\(folder)/sox-mix.f32"
    if clipFiles.count == 1 {
      try run("/usr/bin/sox", ["-D", clipFiles[0], "-t", "f32", mix])
    } else {
      try run(
        "/usr/bin/sox", ["-D", "-m"] + clipFiles.flatMap { ["-v", "1", $0] } + ["-t", "f32", mix])
    }
    return try readFloats(mix)
  }

  public static func ffmpeg(_ project: Project, in folder: String) throws -> [Float] {
    var inputs: [String] = []
    var chains: [String] = []
    for (index, (clip, track)) in audibleClips(project).enumerated() {
      let source = try source(of: clip, in: project)
      inputs += ["-i", source.path.description]
      var filters: [String] = []
      if source.sampleRate != project.sampleRate {
        filters.append("aresample=\(project.sampleRate):resampler=soxr")
      }
      // Work in doubles: on 16-bit input ffmpeg's pan would otherwise mix in 16-bit integers.
      filters.append("aformat=sample_fmts=dbl")
      let start = clip.sourceRange.start.frames
      filters.append("atrim=start_sample=\(start):end_sample=\(start + clip.length.frames)")
      filters.append("asetpts=N/SR/TB")
      if clip.fadeIn.length.frames > 0 {
        filters.append(
          "afade=t=in:ss=0:ns=\(clip.fadeIn.length.frames):curve=\(try ffmpegCurve(clip.fadeIn.curve))"
        )
      }
      if clip.fadeOut.length.frames > 0 {
        let fadeStart = clip.length.frames - clip.fadeOut.length.frames
        filters.append(
          "afade=t=out:ss=\(fadeStart):ns=\(clip.fadeOut.length.frames):curve=\(try ffmpegCurve(clip.fadeOut.curve))"
        )
      }
      let (left, right) = gains(clip, track, sourceChannels: source.channels, project: project)
      switch (source.channels, project.channels) {
      case (1, 1): filters.append("pan=mono|c0=\(left)*c0")
      case (2, 1): filters.append("pan=mono|c0=\(left)*c0+\(left)*c1")
      case (1, _): filters.append("pan=stereo|c0=\(left)*c0|c1=\(right)*c0")
      default: filters.append("pan=stereo|c0=\(left)*c0|c1=\(right)*c1")
      }
      filters.append("adelay=delays=\(clip.timelineStart.frames)S:all=1")
      chains.append("[\(index):a]\(filters.joined(separator: ","))[c\(index)]")
    }
    let labels = (0..<chains.count).map { "[c\($0)]" }.joined()
    let graph =
      chains.joined(separator: ";")
      + ";\(labels)amix=inputs=\(chains.count):normalize=0:duration=longest[out]"
    let mix = "\(folder)/ffmpeg-mix.f32"
    try run(
      "/usr/bin/ffmpeg",
      ["-v", "error", "-y"] + inputs + [
        "-filter_complex", graph, "-map", "[out]", "-c:a", "pcm_f32le", "-f", "f32le", mix,
      ])
    return try readFloats(mix)
  }

  /// The clips that sound, with their tracks: not muted, and soloed when any track is soloed.
  static func audibleClips(_ project: Project) -> [(Clip, Track)] {
    let soloed = project.tracks.contains { $0.isSolo }
    return project.tracks.filter { !$0.isMuted && (!soloed || $0.isSolo) }
      .flatMap { track in track.clips.map { ($0, track) } }
  }

  /// Clip gain × track gain × the pan law, written out from the documented formulas.
  static func gains(
    _ clip: Clip, _ track: Track, sourceChannels: Int, project: Project
  )
    -> (Double, Double)
  {
    let gain = pow(10, clip.gain.decibels / 20) * pow(10, track.gain.decibels / 20)
    if project.channels == 1 { return sourceChannels == 1 ? (gain, gain) : (gain / 2, gain / 2) }
    let theta = (track.pan + 1) * Double.pi / 4
    if sourceChannels == 1 { return (gain * cos(theta), gain * sin(theta)) }
    return (
      gain * min(1, 2.0.squareRoot() * cos(theta)), gain * min(1, 2.0.squareRoot() * sin(theta))
    )
  }

  static func soxCurve(_ curve: FadeCurve) throws -> String {
    switch curve {
    case .linear: "t"
    case .equalPower: "q"
    case .sCurve: "h"
    case .exponential: throw ReferenceError(message: "sox has no curve like Tape's exponential")
    }
  }

  static func ffmpegCurve(_ curve: FadeCurve) throws -> String {
    switch curve {
    case .linear: "tri"
    case .equalPower: "qsin"
    case .sCurve: "hsin"
    case .exponential: throw ReferenceError(message: "ffmpeg has no curve like Tape's exponential")
    }
  }

  /// The source itself at the project rate, or a copy resampled by ffmpeg's libsoxr.
  static func projectRateInput(_ source: Source, project: Project, folder: String) throws -> String
  {
    guard source.sampleRate != project.sampleRate else { return source.path.description }
    let output = "\(folder)/resampled-\(source.id).wav"
    if !FileManager.default.fileExists(atPath: output) {
      try run(
        "/usr/bin/ffmpeg",
        [
          "-v", "error", "-y", "-i", source.path.description, "-af",
          "aresample=\(project.sampleRate):resampler=soxr", "-c:a", "pcm_f32le", output,
        ])
    }
    return output
  }

  /// Reads any audio file as ffmpeg decodes it, to interleaved float32 (sox would clip floats
  /// beyond ±1).
  public static func decode(_ path: String) throws -> [Float] {
    let raw = FileManager.default.temporaryDirectory.appendingPathComponent(
      "decoded-\(UUID().uuidString).f32"
    ).path
    defer { try? FileManager.default.removeItem(atPath: raw) }
    try run(
      "/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", path, "-c:a", "pcm_f32le", "-f", "f32le", raw])
    return try readFloats(raw)
  }

  /// The integrated loudness (LUFS) ffmpeg's `ebur128` filter measures in an audio file.
  public static func integratedLoudness(_ path: String) throws -> Double {
    let log = try run(
      "/usr/bin/ffmpeg",
      [
        "-nostats", "-hide_banner", "-i", path, "-af",
        "ebur128=metadata=1,ametadata=mode=print:key=lavfi.r128.I:file=-", "-f", "null", "-",
      ])
    guard
      let value = log.split(separator: "\n").last(where: { $0.hasPrefix("lavfi.r128.I=") })
        .flatMap({ Double($0.dropFirst("lavfi.r128.I=".count)) })
    else { throw ReferenceError(message: "ffmpeg's ebur128 printed no loudness for \(path)") }
    return value
  }

  /// What ffmpeg's `ebur128=peak=true` filter measures in an audio file: integrated loudness
  /// (LUFS), loudness range (LU) and true peak (dBTP).
  ///
  /// The values are read from the filter's metadata on its last frame (three decimals; the
  /// true peak as a linear value), which the Summary it prints at the end rounds to one
  /// decimal; the Summary is parsed too and must agree with them, so both are what a user of
  /// `ffmpeg -nostats -i FILE -af ebur128=peak=true -f null -` reads. Throws, and so fails the
  /// test, when ffmpeg is missing or measures nothing.
  public static func ebur128(_ path: String) throws -> EBUR128 {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "ebur128-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let metadata = folder.appendingPathComponent("metadata.txt").path
    let log = folder.appendingPathComponent("log.txt")
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    let errors = try FileHandle(forWritingTo: log)
    defer { try? errors.close() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = [
      "-nostats", "-hide_banner", "-i", path, "-af",
      "ebur128=peak=true:metadata=1:framelog=verbose,ametadata=mode=print:file=\(metadata)",
      "-f", "null", "-",
    ]
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    let summary = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    guard process.terminationStatus == 0 else {
      throw ReferenceError(message: "ffmpeg ebur128 failed on \(path): \(summary)")
    }
    let lines = try String(contentsOfFile: metadata, encoding: .utf8).split(separator: "\n")
    func last(_ key: String) throws -> Double {
      guard
        let value = lines.last(where: { $0.hasPrefix(key + "=") })
          .flatMap({ Double($0.dropFirst(key.count + 1)) })
      else { throw ReferenceError(message: "ffmpeg's ebur128 printed no \(key) for \(path)") }
      return value
    }
    let measured = EBUR128(
      integrated: try last("lavfi.r128.I"), range: try last("lavfi.r128.LRA"),
      truePeak: 20 * log10(try last("lavfi.r128.true_peak")))
    // The Summary: "I: -16.0 LUFS", "LRA: 2.7 LU", "Peak: -1.0 dBFS" (under "True peak:").
    func summarised(_ label: String) throws -> Double {
      guard
        let line = summary.split(separator: "\n").last(where: {
          $0.trimmingCharacters(in: .whitespaces).hasPrefix(label)
        }),
        let value = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
      else { throw ReferenceError(message: "no '\(label)' in ffmpeg's Summary for \(path)") }
      return value
    }
    let printed = EBUR128(
      integrated: try summarised("I:"), range: try summarised("LRA:"),
      truePeak: try summarised("Peak:"))
    guard abs(printed.integrated - measured.integrated) <= 0.051,
      abs(printed.range - measured.range) <= 0.051,
      !measured.truePeak.isFinite || abs(printed.truePeak - measured.truePeak) <= 0.06
    else {
      throw ReferenceError(
        message: "ffmpeg's Summary \(printed) disagrees with its metadata \(measured) for \(path)")
    }
    return measured
  }

  public static func readFloats(_ path: String) throws -> [Float] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
  }

  /// Runs a tool; returns its standard output, or throws with its standard error on failure.
  ///
  /// Standard error goes to a file, so a chatty tool cannot stall on a full pipe.
  @discardableResult
  public static func run(_ tool: String, _ arguments: [String]) throws -> String {
    let errorsPath = FileManager.default.temporaryDirectory.appendingPathComponent(
      "stderr-\(UUID().uuidString).txt")
    _ = FileManager.default.createFile(atPath: errorsPath.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errorsPath) }
    let errors = try FileHandle(forWritingTo: errorsPath)
    defer { try? errors.close() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let printed = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      let message = (try? String(contentsOf: errorsPath, encoding: .utf8)) ?? ""
      throw ReferenceError(
        message: "\(tool) \(arguments.joined(separator: " ")) failed: \(message)")
    }
    return String(decoding: printed, as: UTF8.self)
  }
}

/// ffmpeg's EBU R128 measurement of a file.
public struct EBUR128: Sendable, CustomStringConvertible {
  /// Integrated loudness, LUFS.
  public let integrated: Double
  /// Loudness range, LU.
  public let range: Double
  /// True peak, dBTP.
  public let truePeak: Double

  public var description: String { "I \(integrated) LUFS, LRA \(range) LU, TP \(truePeak) dBTP" }
}

public struct ReferenceError: Error, CustomStringConvertible {
  let message: String
  public var description: String { message }

  public init(message: String) {
    self.message = message
  }
}

extension ReferenceRender {
  static func source(of clip: Clip, in project: Project) throws -> Source {
    guard let source = project.source(clip.source) else {
      throw ReferenceError(
        message: "clip \(clip.id) plays \(clip.source), which is not in the project")
    }
    return source
  }
}

/// The largest absolute difference between two renders, in dBFS; `-infinity` when identical.
public func maxDifferenceDecibels(_ a: [Float], _ b: [Float]) -> Double {
  var worst: Float = 0
  for (x, y) in zip(a, b) { worst = max(worst, abs(x - y)) }
  return 20 * log10(Double(worst))
}
