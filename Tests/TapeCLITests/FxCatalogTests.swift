import Foundation
import Testing

/// `tape fx plugins` and `tape fx info`: the installed LV2 plugins (x42-plugins must be
/// installed: scripts/setup.sh does).
@Suite("LV2 plugin listing")
struct FxCatalogTests {
  static let limiter = "http://gareus.org/oss/lv2/dpl#stereo"

  @Test func pluginsAreListedAndSearched() throws {
    let all = try TapeBinary.run(["fx", "plugins"])
    #expect(all.status == 0 && all.stderr == "")
    let lines = all.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
    #expect(lines.allSatisfy { $0.count == 4 })
    #expect(lines.map { $0[0] } == lines.map { $0[0] }.sorted())
    try #require(
      lines.contains { $0[0] == Self.limiter },
      "\(Self.limiter) is not installed; install the Debian package x42-plugins")
    #expect(
      lines.first { $0[0] == Self.limiter }
        == [Self.limiter, "x42-dpl - Digital Peak Limiter Stereo", "2 in, 2 out", "usable"])
    #expect(lines.contains { $0[3] == "unusable: has no audio input" })

    let found = try TapeBinary.run(["fx", "plugins", "--search", "PEAK LIMITER"])
    #expect(found.status == 0)
    #expect(
      found.stdout.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) } == [
        "http://gareus.org/oss/lv2/dpl#mono", Self.limiter,
      ])

    let json = try TapeBinary.run(["fx", "plugins", "--search", "dpl#stereo", "--json"])
    let parsed = try #require(
      try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
    #expect(parsed.count == 1)
    #expect(parsed.first?["uri"] as? String == Self.limiter)
    #expect(parsed.first?["audioInputs"] as? Int == 2)
    #expect(parsed.first?["usable"] as? Bool == true)
  }

  @Test func infoShowsEveryParameter() throws {
    let result = try TapeBinary.run(["fx", "info", Self.limiter])
    #expect(result.status == 0 && result.stderr == "")
    #expect(
      result.stdout == """
        http://gareus.org/oss/lv2/dpl#stereo
        name: x42-dpl - Digital Peak Limiter Stereo
        author: Robin Gareus
        audio: 2 in, 2 out
        reports latency: yes
        hard realtime: yes
        state: yes
        usable: yes
        parameters: 5
          enable\tEnable\toff to on\tdefault on\ttoggle
          gain\tInput Gain\t-10 to 30 dB\tdefault 0 dB\tcontinuous
          threshold\tThreshold\t-10 to 0 dB\tdefault -1 dB\tcontinuous
          release\tRelease Time\t0.001 to 1\tdefault 0.01\tcontinuous, logarithmic
          truepeak\tTrue Peak\toff to on\tdefault off\ttoggle

        """)
    let json = try TapeBinary.run(["fx", "info", "http://gareus.org/oss/lv2/fil4#stereo", "--json"])
    let parsed = try #require(
      try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let controls = try #require(parsed["controls"] as? [[String: Any]])
    let gain = try #require(controls.first { $0["symbol"] as? String == "gain1" })
    #expect(gain["unit"] as? String == "dB" && gain["kind"] as? String == "continuous")
    #expect(parsed["reportsLatency"] as? Bool == false)
  }

  /// An unknown URI: one line naming the nearest installed one, exit 66 (not found).
  @Test func anUnknownPluginNamesTheNearest() throws {
    let result = try TapeBinary.run(
      ["fx", "info", "http://gareus.org/oss/lv2/dpl#sterio"], environment: ["NO_COLOR": "1"])
    #expect(result.status == 66)
    #expect(result.stdout == "")
    #expect(
      result.stderr
        == "error: no installed LV2 plugin has the URI http://gareus.org/oss/lv2/dpl#sterio; did you mean http://gareus.org/oss/lv2/dpl#stereo? ('tape fx plugins --search TEXT' lists them)\n"
    )
  }
}

/// The audio thread's side of an LV2 effect allocates nothing: 10 s through each plugin in
/// 256-frame periods, with parameter ramps and bypass crossfades, under the LD_PRELOAD
/// allocation counter (`tape-testing effect-allocations`).
@Suite("LV2 effects allocate nothing on the audio thread")
struct EffectAllocationTests {
  @Test(arguments: [
    ("http://gareus.org/oss/lv2/fil4#stereo", 2), ("http://gareus.org/oss/lv2/dpl#stereo", 2),
    ("http://gareus.org/oss/lv2/darc#stereo", 1), ("http://plugin.org.uk/swh-plugins/amp", 2),
    ("http://lsp-plug.in/plugins/lv2/compressor_stereo", 2),
    ("http://lsp-plug.in/plugins/lv2/impulse_reverb_stereo", 2),
  ])
  func noAllocations(uri: String, channels: Int) throws {
    let space = try Workspace()
    let counter = try allocationCounter(in: space)
    let report = space.path("allocations")
    let result = try TapeBinary.run(
      TapeBinary.testing, ["effect-allocations", uri, "--channels", "\(channels)"],
      environment: ["LD_PRELOAD": counter, "TAPE_ALLOC_REPORT": report])
    #expect(
      result.status == 0,
      "\(result.stderr) (is the plugin installed? x42-plugins, swh-lv2, lsp-plugins-lv2)")
    #expect(result.stdout == "ran 1875 periods\n")
    let counts = try String(contentsOfFile: report, encoding: .utf8)
    #expect(counts == "0 0\n", "mallocs and frees on the audio thread for \(uri): \(counts)")
  }
}
