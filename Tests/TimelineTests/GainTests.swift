import Foundation
import Testing
import Timeline

@Suite("Gain")
struct GainTests {
  @Test(arguments: [
    ("-3", -3.0), ("-3dB", -3), ("+2.5dB", 2.5), ("-3 db", -3), ("0", 0), ("6DB", 6),
    (" -0.5dB ", -0.5), ("-144", -144), ("+48", 48),
    // As `ls --json` prints them: every digit counts, and tiny values have an exponent.
    ("-16.436371826489722", -16.436371826489722), ("-3.0000000001dB", -3.0000000001),
    ("-1.5e1", -15), ("1.9286681361e-15", 1.9286681361e-15), (".5", 0.5),
  ])
  func parses(text: String, decibels: Double) throws {
    #expect(try Gain(parsing: text) == Gain(decibels: decibels))
  }

  @Test(arguments: [
    "", "dB", "loud", "--3", "3dBFS", "nan", "inf", "-inf", "+-1", "3 d B", "e2", "1e", "1e+",
    "1.2.3", "0x10", ".", "1 e2", "1e2.5",
  ])
  func rejectsWhatIsNotAGain(text: String) {
    #expect(throws: TimelineError.invalidGain(text)) { try Gain(parsing: text) }
  }

  /// Said as typed (`+48.0000000001` was "+48 dB is out of range … to +48", `1e400` was
  /// "inf dB is not a finite gain").
  @Test(arguments: ["-145", "+48.01", "100", "1e2", "1e400", "+48.0000000001", " -144.5dB"])
  func rejectsGainsOutOfRange(text: String) throws {
    #expect(throws: TimelineError.gainTypedOutOfRange(text.trimmingCharacters(in: .whitespaces))) {
      try Gain(parsing: text)
    }
    let shown = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "dB", with: "")
    #expect(
      TimelineError.gainTypedOutOfRange(text).description
        == "gain \(shown) dB is out of range; use a value from -144 to +48 dB")
  }

  /// −6.02 dB halves the amplitude; +6.02 dB doubles it; 0 dB is unity; 20 dB is ×10.
  @Test func linearValuesAreAnalytic() {
    #expect(abs(Gain(decibels: -6.020_599_913_279_624).linear - 0.5) < 1e-12)
    #expect(abs(Gain(decibels: 6.020_599_913_279_624).linear - 2.0) < 1e-12)
    #expect(Gain.unity.linear == 1.0)
    #expect(abs(Gain(decibels: 20).linear - 10) < 1e-12)
    #expect(abs(Gain(decibels: -60).linear - 0.001) < 1e-15)
  }

  @Test func describesItselfWithASign() {
    #expect(Gain(decibels: -3).description == "-3 dB")
    #expect(Gain(decibels: 2.5).description == "+2.5 dB")
    #expect(Gain(decibels: 0).description == "0 dB")
  }
}
