import Testing
import Timeline

@Suite("RawPath: file paths as bytes")
struct RawPathTests {
  let latin1: RawPath = RawPath(bytes: Array("/audio/caf".utf8) + [0xE9] + Array(".wav".utf8))

  @Test func bytesThatAreNotUTF8ReadAsEscapes() {
    #expect(latin1.string == nil)
    #expect(latin1.description == "/audio/caf\\xE9.wav")
    // Valid UTF-8 reads as itself, a truncated sequence byte by byte.
    #expect(RawPath("/audio/café.wav").description == "/audio/café.wav")
    #expect(RawPath(bytes: [0x61, 0xC3]).description == "a\\xC3")
    #expect(RawPath(bytes: [0xF0, 0x9F, 0x8E, 0xB5, 0xFF]).description == "🎵\\xFF")
  }

  @Test func componentsAndJoining() {
    #expect(latin1.lastComponent == RawPath(bytes: Array("caf".utf8) + [0xE9] + Array(".wav".utf8)))
    #expect(latin1.folder == "/audio")
    #expect(RawPath("kick.wav").folder == ".")
    #expect(RawPath("/kick.wav").folder == "/")
    #expect(RawPath("/a/b").appending("c/d.wav") == "/a/b/c/d.wav")
    #expect(RawPath("/a/b/").appending("d.wav") == "/a/b/d.wav")
    #expect(RawPath("/a").appending("/x.wav") == "/x.wav")
  }

  @Test func normalizingBySpelling() {
    #expect(RawPath("/a/./b//c/../d.wav").normalized == "/a/b/d.wav")
    #expect(RawPath("/../x").normalized == "/x")
    #expect(RawPath("../a/../../b").normalized == "../../b")
    #expect(RawPath("./").normalized == ".")
  }

  @Test func relativeToAProjectFolderAndBack() {
    let folder: RawPath = "/home/me/song"
    let inside: RawPath = "/home/me/song/audio/kick.wav"
    #expect(inside.relative(to: folder) == "audio/kick.wav")
    #expect(inside.relative(to: "/home/me/song/") == "audio/kick.wav")
    // A sibling folder that shares the prefix is not inside.
    #expect(RawPath("/home/me/song2/kick.wav").relative(to: folder) == nil)
    #expect(folder.relative(to: folder) == nil)
    #expect(
      RawPath("audio/kick.wav").resolved(against: "/moved/song") == "/moved/song/audio/kick.wav")
    #expect(inside.resolved(against: "/elsewhere") == inside)
    let raw = latin1.relative(to: "/audio")
    #expect(raw?.resolved(against: "/audio") == latin1)
  }

  @Test func theCStringIsTheBytes() {
    let bytes = latin1.withCString { pointer in
      (0..<latin1.bytes.count + 1).map { UInt8(bitPattern: pointer[$0]) }
    }
    #expect(bytes == latin1.bytes + [0])
  }
}
