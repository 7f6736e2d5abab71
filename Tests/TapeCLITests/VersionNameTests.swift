import Foundation
import Testing

/// Versions named as git users name them (issue 45): `HEAD`, `head`, `HEAD~N`, `HEAD^`
/// wherever a version is taken, each the version N undos would reach; `diff` and `compare`
/// with one version or none.
@Suite("Version names")
struct VersionNameTests {
  /// Versions 1–6 in a line, two undos, then an edit: the head is 7, its parent 4.
  static func branched(in space: Workspace) throws -> String {
    let file = space.path("s.tape")
    try space.tape("new", file)
    try space.tape("import", file, TestAudio.path("speech-mono-48k-16.wav"))
    try space.tape("track", "add", file, "A")
    try space.tape("clip", "add", file, "t1", "s1", "--at", "0", "--length", "2s")
    try space.tape("clip", "set", file, "c1", "--gain", "-3dB")
    try space.tape("track", "add", file, "B")
    try space.tape("undo", file)
    try space.tape("undo", file)
    try space.tape("track", "add", file, "C")
    return file
  }

  /// The version `ls --version NAME --json` shows.
  static func version(_ space: Workspace, _ file: String, _ name: String) throws -> Int? {
    let listed = try space.tape("ls", file, "--version", name, "--json")
    return try (parseJSON(listed.stdout) as? [String: Any])?["version"] as? Int
  }

  @Test func headNamesAreTheVersionsUndoReaches() throws {
    let space = try Workspace()
    let file = try Self.branched(in: space)
    let expected: [(String, Int)] = [
      ("HEAD", 7), ("head", 7), ("HEAD~1", 4), ("HEAD~", 4), ("HEAD^", 4), ("HEAD~2", 3),
      ("HEAD^^", 3), ("head~4", 1), ("HEAD~0", 7),
    ]
    for (name, number) in expected {
      #expect(try Self.version(space, file, name) == number, "\(name)")
    }
    // What two undos reach is HEAD~2.
    let copy = space.path("copy.tape")
    try FileManager.default.copyItem(atPath: file, toPath: copy)
    try space.tape("undo", copy, "--steps", "2")
    #expect(try space.head(of: copy) == Self.version(space, file, "HEAD~2"))
    // Past the first version, and a name that is none of these, in one line each.
    let past = try space.tape("ls", file, "--version", "HEAD~5", status: 65)
    #expect(
      past.stderr
        == "error: HEAD~5 goes back past the first version: the head, version 7, has 4 versions before it (HEAD~4 is the first)\n"
    )
    let unknown = try space.tape("ls", file, "--version", "HEAD~x", status: 65)
    #expect(unknown.stderr.hasPrefix("error: no version or tag 'HEAD~x' in this project"))
    // A tag cannot take such a name; HEAD~1 can be tagged.
    let tag = try space.tape("tag", file, "HEAD", status: 64)
    #expect(tag.stderr.contains("it names the head (HEAD, HEAD~N) as git does"), "\(tag.stderr)")
    try space.tape("tag", file, "HEAD~1", "before-c")
    #expect(try Self.version(space, file, "before-c") == 4)
  }

  /// Every command that takes a version takes these names: render and checkout, diff and
  /// compare (with one version or none: against the head, and the head against HEAD~1).
  @Test func everyCommandTakesThem() throws {
    let space = try Workspace()
    let file = try Self.branched(in: space)
    try space.tape(
      "render", file, "-o", space.path("named.wav"), "--version", "HEAD~1", "--bits", "32f")
    try space.tape(
      "render", file, "-o", space.path("numbered.wav"), "--version", "4", "--bits", "32f")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: space.path("named.wav")))
        == Data(contentsOf: URL(fileURLWithPath: space.path("numbered.wav"))))
    let json = { (arguments: [String]) throws -> [String: Any] in
      try #require(try parseJSON(space.tape(arguments).stdout) as? [String: Any])
    }
    let bare = try json(["diff", file, "--json"])
    #expect(bare["from"] as? Int == 4 && bare["to"] as? Int == 7)
    let one = try json(["diff", file, "HEAD~3", "--json"])
    #expect(one["from"] as? Int == 2 && one["to"] as? Int == 7)
    let both = try json(["diff", file, "HEAD~2", "HEAD~1", "--json"])
    #expect(both["from"] as? Int == 3 && both["to"] as? Int == 4)
    let compared = try json(["compare", file, "--json"])
    #expect(compared["from"] as? Int == 4 && compared["to"] as? Int == 7, "\(compared)")
    try space.tape("checkout", file, "HEAD~1")
    #expect(try space.head(of: file) == 4)
  }
}
