import Testing
import Timeline

@Suite("Effect")
struct EffectTests {
  @Test(arguments: ["gain", "g_1", "HPfreq", "_", "A9", "sec1", "Z"])
  func portSymbolsAreAccepted(symbol: String) throws {
    try Effect(id: Effect.ID(1), plugin: "urn:eq", parameters: [symbol: -3, "other": 1])
      .validate()
  }

  /// Letters and digits outside ASCII (which `Character.isLetter` and `isNumber` take), and
  /// anything else, are no port symbol.
  @Test(arguments: [
    "", "gain db", "gäin", "g-1", "g.1", "é", "e\u{301}", "\u{663}", "\u{FF47}", "\r\n", "²",
    "gain\0",
  ])
  func otherSymbolsAreRefused(symbol: String) {
    #expect(
      throws: TimelineError.invalidEffect(Effect.ID(2), reason: "'\(symbol)' is not a port symbol")
    ) {
      try Effect(id: Effect.ID(2), plugin: "urn:eq", parameters: [symbol: 0, "ok": 1]).validate()
    }
  }

  /// With several bad parameters, the first by name is reported, whatever the dictionary's
  /// order.
  @Test func theFirstBadParameterByNameIsReported() {
    let parameters: [String: Double] = [
      "zeta": .nan, "ok": 1, "b d": 0, "alpha": .infinity, "mid": -.infinity,
    ]
    #expect(
      throws: TimelineError.invalidEffect(
        Effect.ID(3), reason: "parameter alpha is inf, not a finite number")
    ) {
      try Effect(id: Effect.ID(3), plugin: "urn:eq", parameters: parameters).validate()
    }
    var named = parameters
    named["alpha"] = 0
    #expect(
      throws: TimelineError.invalidEffect(Effect.ID(3), reason: "'b d' is not a port symbol")
    ) {
      try Effect(id: Effect.ID(3), plugin: "urn:eq", parameters: named).validate()
    }
  }
}
