import Testing

@Suite("tape --help")
struct HelpTests {
  @Test func helpDescribesTheToolAndExitsZero() throws {
    let result = try TapeBinary.run(["--help"])
    #expect(result.status == 0)
    #expect(
      result.stdout.hasPrefix("OVERVIEW: Cut, mix, undo and render multitrack audio projects"))
    #expect(result.stdout.contains("USAGE: tape"))
    #expect(result.stderr == "")
  }

  @Test func anUnknownOptionIsAUsageError() throws {
    let result = try TapeBinary.run(["--no-such-option"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("--no-such-option"))
  }
}
