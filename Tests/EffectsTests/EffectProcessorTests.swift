import Effects
import Foundation
import Testing

@Suite("LV2 effects against real plugins")
struct EffectProcessorTests {
  /// The same plugin and parameters run by lv2file (an independent lilv host, in its own
  /// block size: 512 frames unless told) on the same float input: below −120 dBFS peak
  /// difference, after aligning for the 64-frame FIFO (lv2file does not compensate latency, so
  /// the plugin's own is in both).
  ///
  /// x42's darc is run by lv2file in blocks of 64 (Tape's): it is not block-size invariant
  /// itself — lv2file's own renders of it in blocks of 64 and 1024 differ by about −110 dBFS
  /// (its gain envelope is updated once per `run`) — so only the same block size can match.
  /// (lsp's compressor is not compared: lv2file 1.x dies of SIGSEGV running it with any
  /// parameter set, here.)
  @Test(
    arguments: [
      (
        TestPlugins.eq, nil,
        [
          "sec1": 1, "freq1": 1_000, "gain1": -6, "sec2": 1, "freq2": 5_000,
          "gain2": 4, "q2": 0.8,
        ] as [String: Float]
      ),
      (
        TestPlugins.compressor, 64,
        ["threshold": -35, "Ratio": 0.6, "attack": 0.005, "release": 0.08]
      ),
      (TestPlugins.limiter, nil, ["threshold": -8, "release": 0.05]),
    ] as [((String, String), Int?, [String: Float])])
  func equalsLv2file(plugin: (String, String), block: Int?, settings: [String: Float]) throws {
    let info = try requirePlugin(plugin)
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let input = folder.appendingPathComponent("in.wav").path
    let output = folder.appendingPathComponent("out.wav").path
    try tool(
      "/usr/bin/sox",
      [testAudio("strings-stereo-48k-float.wav"), "-e", "floating-point", "-b", "32", input])
    var arguments = ["-i", input, "-o", output, "--ignore-clipping"]
    if let block { arguments += ["-b", "\(block)"] }
    for (symbol, value) in settings.sorted(by: { $0.key < $1.key }) {
      arguments += ["-p", "\(symbol):\(value)"]
    }
    try tool("/usr/bin/lv2file", arguments + [plugin.0])
    let reference = try floatWAV(output)
    let samples = try floatWAV(input)
    let effect = try processor(info, settings: settings)
    let ours = run(effect, samples, block: 256)
    #expect(reference.count == ours.count)
    // lv2file does not compensate latency, so both carry the plugin's; ours is 64 frames
    // later still (the FIFO).
    let fifo = 64 * 2
    let difference = peakDifference(ours[fifo...], reference[..<(reference.count - fifo)])
    print(
      "\(plugin.0): plugin latency \(effect.pluginLatency), peak difference from lv2file \(difference) dBFS"
    )
    #expect(difference < -120, "\(plugin.0) differs from lv2file by \(difference) dBFS")
    #expect(
      peakDifference(ours[fifo...], samples[..<(samples.count - fifo)]) > -40,
      "the plugin did nothing")
  }

  /// The output does not depend on how the caller cuts the signal into blocks, with
  /// parameters ramped mid-signal and a bypass toggled.
  @Test(arguments: [TestPlugins.eq, TestPlugins.limiter, TestPlugins.compressor])
  func blockSizeInvariance(plugin: (String, String)) throws {
    let info = try requirePlugin(plugin)
    let samples = try decoded(testAudio("strings-stereo-48k-float.wav"))
    // 76,800 and 115,200 are multiples of every block size below.
    var changed = info.defaultValues
    for (index, control) in info.controls.enumerated() where control.kind == .continuous {
      changed[index] = control.minimum + (control.maximum - control.minimum) * 0.3
    }
    var outputs: [[Float]] = []
    for block in [1, 100, 256, 3_840] {
      let effect = try processor(info)
      outputs.append(
        run(effect, samples, block: block) { frame in
          if frame == 76_800 {
            changed.withUnsafeBufferPointer { effect.setTargets($0.baseAddress.unsafelyUnwrapped) }
          }
          if frame == 115_200 { effect.setBypassed(true) }
        })
    }
    for (index, output) in outputs.enumerated().dropFirst() {
      let first = firstDifference(output, outputs[0])
      #expect(
        first == nil,
        "block size \([1, 100, 256, 3_840][index]) differs from 1 at sample \(first ?? 0)")
    }
  }

  /// Without the FIFO (`.cut`), no latency is added, and blocks that are multiples of 64
  /// still give the same output (every run is a whole step). Blocks of 100 are printed for
  /// the record: x42's plugins give different output then.
  @Test(arguments: [TestPlugins.eq, TestPlugins.limiter, TestPlugins.compressor])
  func cutAlignment(plugin: (String, String)) throws {
    let info = try requirePlugin(plugin)
    let samples = try decoded(testAudio("strings-stereo-48k-float.wav"))
    var changed = info.defaultValues
    for (index, control) in info.controls.enumerated() where control.kind == .continuous {
      changed[index] = control.minimum + (control.maximum - control.minimum) * 0.3
    }
    var outputs: [[Float]] = []
    for block in [256, 3_840, 100] {
      let effect = try processor(info, alignment: .cut)
      #expect(effect.latency == effect.pluginLatency)
      outputs.append(
        run(effect, samples, block: block) { frame in
          if frame == 76_800 {
            changed.withUnsafeBufferPointer { effect.setTargets($0.baseAddress.unsafelyUnwrapped) }
          }
          if frame == 115_200 { effect.setBypassed(true) }
        })
    }
    #expect(firstDifference(outputs[0], outputs[1]) == nil)
    let hundred = firstDifference(outputs[0], outputs[2])
    print(
      "\(plugin.0) without the FIFO: blocks of 100 \(hundred.map { "differ from 256 at sample \($0), by \(peakDifference(outputs[0][...], outputs[2][...])) dBFS" } ?? "equal 256")"
    )
  }

  /// For a plugin whose output does not depend on where its runs begin (swh's amp), `.cut`
  /// gives the same output for any block size, ramps and bypass included.
  @Test func cutAlignmentWithAMemorylessPlugin() throws {
    let info = try requirePlugin(TestPlugins.amp)
    let samples: [Float] = (0..<20_000).map { sin(Float($0) * 0.003) * 0.5 }
    var target: [Float] = [-12]
    var outputs: [[Float]] = []
    for block in [1, 100, 256] {
      let effect = try processor(info, channels: 1, alignment: .cut)
      outputs.append(
        run(effect, samples, block: block) { frame in
          if frame == 6_400 { effect.setTargets(&target) }
          if frame == 12_800 { effect.setBypassed(true) }
        })
    }
    #expect(firstDifference(outputs[0], outputs[1]) == nil)
    #expect(firstDifference(outputs[0], outputs[2]) == nil)
    #expect(outputs[0][..<6_400] == samples[..<6_400])
  }

  /// A gain change on a plugin that does no smoothing of its own (swh amp) is ramped by the
  /// host: over 20 ms in 64-frame steps, each step at most the ramp's share of the change.
  @Test func aGainChangeRamps() throws {
    let info = try requirePlugin(TestPlugins.amp)
    let effect = try processor(info, channels: 1, settings: ["gain": 0])
    let samples = [Float](repeating: 0.5, count: 9_600)
    var target: [Float] = [-20]
    let output = run(effect, samples, block: 100) { frame in
      if frame == 1_000 { effect.setTargets(&target) }
    }
    #expect(effect.rampFrames == 960 && effect.latency == 64)
    // The step holding frame 1,000 (input frames 960 to 1,023) is the first with the new
    // value; it comes out 64 frames later, at 1,024. Before: the FIFO's silence, then 0 dB.
    #expect(output[..<64].allSatisfy { $0 == 0 })
    #expect(output[64..<1_024].allSatisfy { $0 == 0.5 })
    let steps = zip(output.dropFirst(64 + 1), output.dropFirst(64)).map { abs($0 - $1) }
    let largest = steps.max() ?? 0
    // A step of 20/15 dB at most from 0 dB: 0.5 × (1 − 10^(−1.333/20)).
    let allowed = 0.5 * (1 - pow(10, Float(-20.0 / 15 / 20))) + 1e-6
    #expect(largest <= allowed, "a step of \(largest), more than \(allowed)")
    #expect(largest > 0)
    // Monotonic, and at the target after the ramp (1,024 + 960 frames).
    #expect(zip(output.dropFirst(64 + 1), output.dropFirst(64)).allSatisfy { $0 <= $1 })
    // 15 steps of 64 frames: the 15th, at the target, starts at 1,024 + 14 × 64.
    let final = 0.5 * pow(10, Float(-1))
    #expect(output[(1_024 + 14 * 64)...].allSatisfy { abs($0 - final) < 1e-6 })
    #expect(abs(output[1_024 + 14 * 64 - 1] - final) > 1e-3)
  }

  /// Stepped values jump, continuous ones ramp: after one step, dpl's toggle is at its target
  /// and its threshold one fifteenth of the way; after fifteen steps both are there.
  @Test func steppedValuesJumpContinuousOnesRamp() throws {
    let info = try requirePlugin(TestPlugins.limiter)
    let effect = try processor(info, settings: ["threshold": 0, "truepeak": 0])
    let threshold = try #require(info.controls.firstIndex { $0.symbol == "threshold" })
    let truePeak = try #require(info.controls.firstIndex { $0.symbol == "truepeak" })
    var targets = effect.currentValues
    targets[threshold] = -6
    targets[truePeak] = 1
    effect.setTargets(&targets)
    let silence = [Float](repeating: 0, count: 2 * 64)
    _ = run(effect, silence, block: 64)
    #expect(effect.currentValues[truePeak] == 1)
    #expect(effect.currentValues[threshold] == -6.0 / 15)
    for _ in 0..<14 { _ = run(effect, silence, block: 64) }
    #expect(effect.currentValues == targets)
  }

  /// Bypass crossfades linearly from wet to dry over 20 ms, starting at the next 64-frame
  /// boundary; the plugin keeps running.
  @Test func bypassCrossfades() throws {
    let info = try requirePlugin(TestPlugins.amp)
    let effect = try processor(info, channels: 2, settings: ["gain": -20])
    let samples = [Float](repeating: 0.5, count: 2 * 4_800)
    let output = run(effect, samples, block: 100) { frame in
      if frame == 1_000 { effect.setBypassed(true) }
    }
    let left = stride(from: 0, to: output.count, by: 2).map { output[$0] }
    let wet: Float = 0.05
    #expect(left[64..<1_024].allSatisfy { abs($0 - wet) < 1e-6 })
    for frame in 0..<960 {
      let gain = Float(960 - frame - 1) / 960
      let expected = 0.5 + (wet - 0.5) * gain
      #expect(abs(left[1_024 + frame] - expected) < 1e-5, "frame \(1_024 + frame)")
    }
    #expect(left[(1_024 + 960)...].allSatisfy { $0 == 0.5 })
    #expect(firstDifference(output, output.indices.map { output[$0 - $0 % 2] }) == nil)
  }

  /// dpl (a look-ahead limiter) reports its latency; an impulse below the threshold comes out
  /// exactly that many frames later, and the dry path when bypassed is delayed the same.
  @Test func theLimitersLatency() throws {
    let info = try requirePlugin(TestPlugins.limiter)
    #expect(info.reportsLatency)
    let wet = try processor(info, settings: ["threshold": 0])
    let dry = try processor(info, settings: ["threshold": 0], bypassed: true)
    #expect(wet.latency > 0 && wet.latency == dry.latency)
    print("dpl#stereo latency at 48 kHz: \(wet.pluginLatency) frames (+ 64 of the FIFO)")
    var impulse = [Float](repeating: 0, count: 2 * 4_800)
    impulse[2 * 1_000] = 0.25
    impulse[2 * 1_000 + 1] = 0.25
    for effect in [wet, dry] {
      let output = run(effect, impulse, block: 256)
      let peak = output.indices.max { abs(output[$0]) < abs(output[$1]) } ?? 0
      #expect(peak / 2 == 1_000 + effect.latency)
      #expect(abs(output[peak] - 0.25) < 1e-4)
    }
  }

  /// Bypassing a look-ahead limiter mid-signal: its dry path is delayed by the same latency,
  /// so with a sine below the threshold (the limiter passes it unchanged) the crossfade is
  /// seamless: the output equals the input delayed by the latency, to float rounding.
  @Test func bypassingALatentPluginIsSeamless() throws {
    let info = try requirePlugin(TestPlugins.limiter)
    let effect = try processor(info, settings: ["threshold": 0])
    let sine: [Float] = (0..<24_000).flatMap {
      [sin(Float($0) * 0.02) * 0.25, cos(Float($0) * 0.03) * 0.25]
    }
    let output = run(effect, sine, block: 100) { frame in
      if frame == 8_000 { effect.setBypassed(true) }
      if frame == 16_000 { effect.setBypassed(false) }
    }
    let delay = 2 * effect.latency
    let difference = peakDifference(output[delay...], sine[..<(sine.count - delay)])
    #expect(difference < -100, "the bypassed limiter is \(difference) dBFS off its input")
  }

  /// A 1-in/1-out plugin on a stereo track runs as two instances, one per channel; a stereo
  /// plugin on a mono track gives the mean of its outputs.
  @Test func channelMapping() throws {
    let amp = try requirePlugin(TestPlugins.amp)
    let dual = try processor(amp, channels: 2, settings: ["gain": -6])
    let stereo: [Float] = (0..<512).flatMap { [Float($0) / 512, -Float($0) / 1024] }
    let output = run(dual, stereo, block: 512)
    let gain = pow(10, Float(-6) / 20)
    for index in 0..<(output.count - 128) {
      #expect(abs(output[index + 128] - stereo[index] * gain) < 1e-6)
    }

    let eq = try requirePlugin(TestPlugins.eq)
    let monoEffect = try processor(eq, channels: 1, settings: ["gain": -6])
    let mono: [Float] = (0..<4_800).map { sin(Float($0) * 0.05) * 0.5 }
    let eqOut = run(monoEffect, mono, block: 480)
    let stereoEffect = try processor(eq, channels: 2, settings: ["gain": -6])
    let both = run(stereoEffect, mono.flatMap { [$0, $0] }, block: 480)
    for frame in mono.indices {
      #expect(eqOut[frame] == (both[2 * frame] + both[2 * frame + 1]) * 0.5)
    }
  }

  /// 1 in, 2 out (swh's splitter copies its input to both outputs): on a stereo track it gets
  /// (L+R)/2; on a mono track it gives (L+R)/2 of its outputs, the input itself. 2 in, 1 out
  /// (swh's two-input ring modulator): on a stereo track its output goes to both channels; on
  /// a mono track the channel feeds both inputs, as a stereo track of two equal channels would.
  @Test func oneToTwoAndTwoToOne() throws {
    let split = try requirePlugin(("http://plugin.org.uk/swh-plugins/split", "swh-lv2"))
    #expect(split.audioInputs == 1 && split.audioOutputs == 2)
    let stereo: [Float] = (0..<2_048).flatMap { [sin(Float($0) * 0.01), Float($0 % 7) / 9] }
    let spread = run(try processor(split, channels: 2), stereo, block: 300)
    for frame in 0..<(2_048 - 64) {
      let mean = (stereo[2 * frame] + stereo[2 * frame + 1]) * 0.5
      #expect(spread[2 * (frame + 64)] == mean && spread[2 * (frame + 64) + 1] == mean)
    }
    let mono: [Float] = (0..<2_048).map { sin(Float($0) * 0.01) }
    let same = run(try processor(split, channels: 1), mono, block: 300)
    #expect(firstDifference(Array(same[64...]), Array(mono[..<(2_048 - 64)])) == nil)

    let ring = try requirePlugin(("http://plugin.org.uk/swh-plugins/ringmod_2i1o", "swh-lv2"))
    #expect(ring.audioInputs == 2 && ring.audioOutputs == 1)
    let modulated = run(
      try processor(ring, channels: 2, settings: ["depth": 1]), stereo, block: 300)
    #expect(
      stride(from: 0, to: modulated.count, by: 2).allSatisfy { modulated[$0] == modulated[$0 + 1] })
    #expect(modulated.contains { $0 != 0 })
    let monoRing = run(try processor(ring, channels: 1, settings: ["depth": 1]), mono, block: 300)
    let doubled = run(
      try processor(ring, channels: 2, settings: ["depth": 1]), mono.flatMap { [$0, $0] },
      block: 300)
    #expect(
      firstDifference(monoRing, stride(from: 0, to: doubled.count, by: 2).map { doubled[$0] })
        == nil)
  }

  /// lsp marks a side chain by port group (`pg:sideChainOf`), not `lv2:isSideChain`: its
  /// side-chain compressor counts as 1 in, 1 out (the key input gets silence), and on a stereo
  /// track runs as two instances whose channels are independent: each equals a mono run of it.
  @Test func aSideChainPluginRunsDualMono() throws {
    let info = try requirePlugin(
      ("http://lsp-plug.in/plugins/lv2/sc_compressor_mono", "lsp-plugins-lv2"))
    #expect(info.audioInputs == 1 && info.audioOutputs == 1)
    let samples = try decoded(testAudio("strings-stereo-48k-float.wav"))
    let stereo = run(try processor(info, channels: 2, worker: .inline), samples, block: 512)
    for channel in 0..<2 {
      let mono = stride(from: channel, to: samples.count, by: 2).map { samples[$0] }
      let alone = run(try processor(info, channels: 1, worker: .inline), mono, block: 512)
      let mine = stride(from: channel, to: stereo.count, by: 2).map { stereo[$0] }
      #expect(firstDifference(alone, mine) == nil, "channel \(channel)")
    }
    #expect(peakDifference(stereo[128...], samples[..<(samples.count - 128)]) > -60)
  }

  /// lsp's impulse reverb uses the Worker extension: it schedules work from `run` (its
  /// convolution set-up), the worker thread does it, and the response reaches the plugin on
  /// the audio side; it runs and stays finite throughout.
  @Test func aPluginWithAWorker() throws {
    let info = try requirePlugin(TestPlugins.reverb)
    #expect(info.usesWorker)
    let samples = try decoded(testAudio("strings-stereo-48k-float.wav"))
    let effect = try processor(info)
    var output = run(effect, Array(samples[..<9_600]), block: 256)
    // A minute: the wait ends as soon as the worker answers; 5 s was a guess a loaded machine
    // (the worker thread sets up a convolution) could overrun.
    let deadline = Date().addingTimeInterval(60)
    while effect.workerRequestsHandled == 0 && Date() < deadline {
      Thread.sleep(forTimeInterval: 0.01)
    }
    #expect(effect.workerRequestsHandled >= 1, "the worker handled no request")
    output += run(effect, Array(samples[9_600...]), block: 256)
    #expect(output.allSatisfy { $0.isFinite })
    print("lsp impulse reverb: \(effect.workerRequestsHandled) worker requests handled")
  }

  /// With the inline worker (offline renders), a worker-using plugin is reproducible: two
  /// renders of lsp's impulse reverb in different block sizes are equal bit for bit, and its
  /// work was done (right after the run that asked).
  @Test func theInlineWorkerIsReproducible() throws {
    let info = try requirePlugin(TestPlugins.reverb)
    let samples = try decoded(testAudio("strings-stereo-48k-float.wav"))
    var outputs: [[Float]] = []
    for block in [256, 3_840] {
      let effect = try processor(info, worker: .inline)
      outputs.append(run(effect, samples, block: block))
      #expect(effect.workerRequestsHandled >= 1)
    }
    #expect(firstDifference(outputs[0], outputs[1]) == nil)
    #expect(peakDifference(outputs[0][...], samples[...]) > -60, "the reverb did nothing")
  }

  /// State (beyond port values) saved from one instance restores into a new one, and saves
  /// back to the same bytes.
  @Test func stateRoundTrip() throws {
    let info = try requirePlugin(TestPlugins.lspCompressor)
    #expect(info.hasState)
    let first = try processor(info)
    _ = run(first, [Float](repeating: 0.1, count: 2 * 4_800), block: 256)
    let saved = try #require(first.saveState(), "lsp's compressor saved no state")
    let second = try processor(info, state: saved)
    #expect(second.saveState() == saved)
    #expect(throws: EffectError.self) { try processor(info, state: Array("not turtle".utf8)) }
  }

  /// Unusable plugins and bad arguments are errors that say what to do.
  @Test func errors() throws {
    let eq = try requirePlugin(TestPlugins.eq)
    #expect(throws: EffectError.valueCount(plugin: eq.uri, expected: eq.controls.count, got: 1)) {
      try EffectProcessor(
        plugin: eq, catalog: .load(), sampleRate: 48_000, channels: 2, maximumFrames: 64,
        values: [0], bypassed: false, state: nil)
    }
    #expect(throws: EffectError.unsupportedChannels(6)) {
      try processor(eq, channels: 6)
    }
  }
}
