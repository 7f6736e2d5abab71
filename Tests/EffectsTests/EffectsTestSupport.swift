import Effects
import Foundation
import Testing

/// The plugins the tests run, with the Debian package each comes from.
enum TestPlugins {
  static let eq = ("http://gareus.org/oss/lv2/fil4#stereo", "x42-plugins")
  static let eqMono = ("http://gareus.org/oss/lv2/fil4#mono", "x42-plugins")
  static let compressor = ("http://gareus.org/oss/lv2/darc#stereo", "x42-plugins")
  static let limiter = ("http://gareus.org/oss/lv2/dpl#stereo", "x42-plugins")
  static let amp = ("http://plugin.org.uk/swh-plugins/amp", "swh-lv2")
  static let lspCompressor = ("http://lsp-plug.in/plugins/lv2/compressor_stereo", "lsp-plugins-lv2")
  static let reverb = ("http://lsp-plug.in/plugins/lv2/impulse_reverb_stereo", "lsp-plugins-lv2")
}

/// The installed plugin, or a failed test naming the Debian package to install.
func requirePlugin(_ plugin: (String, String)) throws -> PluginInfo {
  try #require(
    PluginCatalog.load().plugin(plugin.0),
    "\(plugin.0) is not installed; install the Debian package \(plugin.1) (scripts/setup.sh does)")
}

/// A processor over `info` with `settings` (symbol → value) over its defaults.
func processor(
  _ info: PluginInfo, channels: Int = 2, settings: [String: Float] = [:], bypassed: Bool = false,
  state: [UInt8]? = nil, maximumFrames: Int = 4096, worker: WorkerMode = .thread,
  alignment: EffectProcessor.StepAlignment = .fifo
) throws -> EffectProcessor {
  var values = info.defaultValues
  for (symbol, value) in settings {
    let index = try #require(info.controls.firstIndex { $0.symbol == symbol }, "no \(symbol)")
    values[index] = value
  }
  return try EffectProcessor(
    plugin: info, catalog: PluginCatalog.load(), sampleRate: 48_000, channels: channels,
    maximumFrames: maximumFrames, values: values, bypassed: bypassed, state: state,
    worker: worker, alignment: alignment)
}

/// Runs `samples` (interleaved) through `effect` in blocks of `block` frames; `before` is
/// called before the block that starts at each frame it is asked about.
func run(
  _ effect: EffectProcessor, _ samples: [Float], block: Int,
  before: (Int) -> Void = { _ in }
) -> [Float] {
  var output = samples
  let channels = effect.channels
  let frames = samples.count / channels
  output.withUnsafeMutableBufferPointer { buffer in
    var done = 0
    while done < frames {
      before(done)
      let count = min(block, frames - done)
      effect.process(buffer.baseAddress.unsafelyUnwrapped + done * channels, frames: count)
      done += count
    }
  }
  return output
}

/// Runs a tool, failing the test with its stderr when it fails.
@discardableResult
func tool(_ path: String, _ arguments: [String]) throws -> Data {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = arguments
  let output = Pipe()
  let errors = Pipe()
  process.standardOutput = output
  process.standardError = errors
  try process.run()
  let data = output.fileHandleForReading.readDataToEndOfFile()
  let said = errors.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  try #require(
    process.terminationStatus == 0,
    "\(path) \(arguments.joined(separator: " ")) failed: \(String(decoding: said, as: UTF8.self))")
  return data
}

/// The test audio file, decoded by sox to interleaved floats.
func decoded(_ path: String) throws -> [Float] {
  let data = try tool(
    "/usr/bin/sox", [path, "-t", "raw", "-e", "floating-point", "-b", "32", "-L", "-"])
  return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
}

func testAudio(_ name: String) -> String {
  URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../TestAudio/\(name)").standardizedFileURL.path
}

/// A fresh temporary folder.
func temporaryFolder() throws -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "tape-effects-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}

/// Peak difference in dBFS (−infinity for identical).
func peakDifference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
  var peak: Float = 0
  for (x, y) in zip(a, b) { peak = max(peak, abs(x - y)) }
  return peak == 0 ? -.infinity : 20 * log10(Double(peak))
}

/// The first index where two signals differ (or where one ends), nil when equal. Why not
/// `#expect(a == b)`: on failure Swift Testing diffs the arrays, which takes minutes.
func firstDifference(_ a: [Float], _ b: [Float]) -> Int? {
  for index in 0..<min(a.count, b.count) where a[index] != b[index] { return index }
  return a.count == b.count ? nil : min(a.count, b.count)
}

/// The samples of a 32-bit float WAV file (as sox and lv2file write them), read exactly: sox's
/// own decoding goes through 32-bit integers, which would hide differences below −150 dBFS.
func floatWAV(_ path: String) throws -> [Float] {
  let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
  func word(_ at: Int) -> Int {
    Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
  }
  try #require(bytes.count >= 12 && String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF")
  var offset = 12
  var isFloat = false
  while offset + 8 <= bytes.count {
    let name = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
    let size = word(offset + 4)
    if name == "fmt " {
      let tag = Int(bytes[offset + 8]) | Int(bytes[offset + 9]) << 8
      let bits = Int(bytes[offset + 22]) | Int(bytes[offset + 23]) << 8
      isFloat = (tag == 3 || tag == 0xFFFE) && bits == 32
    } else if name == "data" {
      try #require(isFloat, "\(path) is not 32-bit float")
      let end = min(bytes.count, offset + 8 + size)
      return bytes[(offset + 8)..<end].withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
    offset += 8 + size + size % 2
  }
  Issue.record("\(path) has no data chunk")
  return []
}
