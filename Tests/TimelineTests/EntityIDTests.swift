import Foundation
import Testing
import Timeline

@Suite("Ids")
struct EntityIDTests {
  @Test func printsWithItsPrefix() {
    #expect(Clip.ID(12).description == "c12")
    #expect(Track.ID(1).description == "t1")
    #expect(Source.ID(3).description == "s3")
  }

  @Test(arguments: [
    ("c12", Clip.ID(12) as Clip.ID?), ("12", Clip.ID(12)), ("t12", nil), ("c", nil), ("c0", nil),
    ("c-1", nil), ("c1x", nil), ("", nil), ("c99999999999999999999", nil),
  ])
  func parses(text: String, expected: Clip.ID?) {
    #expect(Clip.ID(parsing: text) == expected)
  }

  @Test func encodesAsThePrefixedString() throws {
    let data = try JSONEncoder().encode([Clip.ID(7)])
    #expect(String(decoding: data, as: UTF8.self) == #"["c7"]"#)
    #expect(try JSONDecoder().decode([Clip.ID].self, from: data) == [Clip.ID(7)])
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode([Clip.ID].self, from: Data(#"["t7"]"#.utf8))
    }
  }

  /// The filter answers exactly like the set it was made from: dense ids (bits), ids far
  /// beyond the set's size (the Set fallback), and ids it has never seen.
  @Test(arguments: [
    [Int64(1), 2, 63, 64, 65, 4_095], [7], [], [1, 1 << 40], [-3, 5],
  ])
  func theFilterAgreesWithTheSet(raw: [Int64]) {
    let ids = Set(raw.map(Clip.ID.init))
    let filter = EntityIDFilter(ids)
    for probe in Set(raw + [0, 3, 62, 66, 4_094, 4_096, 1 << 40 - 1, 1 << 41, -1, -3]) {
      #expect(filter.contains(Clip.ID(probe)) == ids.contains(Clip.ID(probe)), "\(probe)")
    }
  }
}
