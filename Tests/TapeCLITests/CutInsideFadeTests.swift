import Foundation
import ReferenceRenders
import Testing

/// Cuts through fades (issue 23, item 4): the audio that stays sounds exactly as it did.
@Suite("Cuts inside fades")
struct CutInsideFadeTests {
  static let rate = 48_000
  static let seconds = 6

  /// The tests' own float64 model of the project's one clip: a stereo source at 0 dB, centred,
  /// with a 2 s s-curve fade-in and a 3 s equal-power fade-out, the curves written out from
  /// the README's formulas.
  static func model(_ source: [Float]) -> [Double] {
    let n = seconds * rate
    let (fadeIn, fadeOut) = (2 * rate, 3 * rate)
    var out = [Double](repeating: 0, count: 2 * n)
    for i in 0..<n {
      var gain = 1.0
      if i < fadeIn { gain *= (1 - cos(Double.pi * Double(i) / Double(fadeIn))) / 2 }
      if n - i <= fadeOut { gain *= sin(Double(n - i) / Double(fadeOut) * Double.pi / 2) }
      out[2 * i] = Double(source[2 * i]) * gain
      out[2 * i + 1] = Double(source[2 * i + 1]) * gain
    }
    return out
  }

  /// `model` with frames `[a, b)` removed: silent there, or (ripple) the rest moved left; a
  /// cut to the end shortens it.
  static func removing(_ model: [Double], _ a: Int, _ b: Int, ripple: Bool) -> [Double] {
    let n = model.count / 2
    if ripple { return Array(model[..<(2 * a)] + model[(2 * min(b, n))...]) }
    if b >= n { return Array(model[..<(2 * a)]) }
    var out = model
    for k in (2 * a)..<(2 * b) { out[k] = 0 }
    return out
  }

  /// The peak difference between a render and the model, in dBFS (−inf when equal); +inf when
  /// their lengths differ.
  static func difference(_ rendered: [Float], _ model: [Double]) -> Double {
    guard rendered.count == model.count else { return .infinity }
    let peak = zip(rendered, model).map { abs(Double($0) - $1) }.max() ?? 0
    return peak == 0 ? -.infinity : 20 * log10(peak)
  }

  static func project(_ ws: Workspace) throws -> (song: String, source: [Float]) {
    let wav = ws.path("tones.wav")
    try ReferenceRender.run(
      "/usr/bin/sox",
      [
        "-n", "-r", "\(rate)", "-c", "2", "-e", "floating-point", "-b", "32", wav, "synth",
        "\(seconds)", "sine", "440", "sine", "331", "gain", "-3",
      ])
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, wav)
    try ws.tape("track", "add", song, "Tones")
    try ws.tape(
      "clip", "add", song, "t1", "s1", "--at", "0", "--fade-in", "2s", "--fade-out", "3s",
      "--curve", "s-curve")
    try ws.tape("clip", "set", song, "c1", "--fade-out-curve", "equal-power")
    return (song, try ReferenceRender.decode(wav))
  }

  /// Each cut through a fade (the end of a fade-out cut off, a range inside a fade-in, one
  /// from inside the fade-in to inside the fade-out, the start of a fade-in cut off), with
  /// and without ripple: the render is the model with exactly the range removed, below −120
  /// dBFS everywhere (on the old code the first was refused or rescaled the rest of the fade,
  /// −21 dBFS off); one undo renders bit for bit what was there before.
  @Test(arguments: [
    (4.5, 6.0, false), (4.5, 6.0, true), (1.0, 1.5, true), (1.5, 3.5, true), (1.5, 3.5, false),
    (0.0, 0.5, false), (3.5, 4.0, false),
  ])
  func theAudioThatStaysIsUnchanged(from: Double, to: Double, ripple: Bool) throws {
    let ws = try Workspace()
    let (song, source) = try Self.project(ws)
    let model = Self.model(source)
    try ws.tape("render", song, "-o", ws.path("before.wav"), "--bits", "32f")
    let before = try ReferenceRender.decode(ws.path("before.wav"))
    #expect(Self.difference(before, model) < -120)

    try ws.tape(
      ["cut", song, "--from", "\(from)s", "--to", "\(to)s"] + (ripple ? ["--ripple"] : []))
    try ws.tape("render", song, "-o", ws.path("after.wav"), "--bits", "32f")
    let after = try ReferenceRender.decode(ws.path("after.wav"))
    let expected = Self.removing(
      model, Int(from * Double(Self.rate)), Int(to * Double(Self.rate)), ripple: ripple)
    let off = Self.difference(after, expected)
    #expect(off < -120, "cut \(from)–\(to) s ripple \(ripple): \(off) dBFS off the model")

    try ws.tape("undo", song)
    try ws.tape("render", song, "-o", ws.path("undone.wav"), "--bits", "32f")
    #expect(try ReferenceRender.decode(ws.path("undone.wav")) == before)
  }

  /// What `tape play` sends to ALSA after a cut through both fades is, frame for frame, what
  /// `tape render` writes: the player compiles its plan from the same model.
  @Test func playingACutFadeEqualsTheRender() throws {
    let ws = try Workspace()
    let (song, _) = try Self.project(ws)
    try ws.tape("cut", song, "--from", "1.5s", "--to", "3.5s", "--ripple")
    try ws.tape("cut", song, "--from", "3.5s", "--to", "5s")
    try ws.tape("render", song, "-o", ws.path("mix.wav"), "--bits", "32f")
    let render = try ReferenceRender.decode(ws.path("mix.wav"))
    let played = try playedThroughFilePCM(ws, song, period: "256")
    #expect(Array(played.prefix(render.count)) == render)
    #expect(played.dropFirst(render.count).allSatisfy { $0 == 0 })
  }

  /// `ls` shows what is left of a cut fade, and the store reads it back after reopening and
  /// through history moves (undo, redo) the same.
  @Test func lsShowsAPartialFade() throws {
    let ws = try Workspace()
    let (song, _) = try Self.project(ws)
    try ws.tape("cut", song, "--from", "5s", "--to", "6s")
    let listing = try ws.tape("ls", song).stdout
    #expect(listing.contains("2s of 3s equal-power"), "\(listing)")
    let json = try #require(try parseJSON(ws.tape("ls", song, "--json").stdout) as? [String: Any])
    let clip = try #require(
      ((json["tracks"] as? [[String: Any]])?[0]["clips"] as? [[String: Any]])?.first)
    let fadeOut = try #require(clip["fadeOut"] as? [String: Any])
    #expect(fadeOut["length"] as? Int == 96_000)
    #expect(fadeOut["silentCut"] as? Int == 48_000)
    #expect(fadeOut["fullCut"] as? Int == 0)
    try ws.tape("undo", song)
    try ws.tape("redo", song)
    #expect(try ws.tape("ls", song).stdout == listing)
  }

  /// `ls`'s columns are as wide as their texts: a cut fade of an exponential curve, a gain of
  /// -100.25 dB and a name no longer push the columns after them out of line.
  @Test func lsColumnsStayAlignedWithLongTexts() throws {
    let ws = try Workspace()
    let song = ws.path("song.tape")
    try ws.tape("new", song)
    try ws.tape("import", song, TestAudio.path("speech-mono-48k-16.wav"))
    try ws.tape("track", "add", song, "Voice")
    try ws.tape("clip", "add", song, "t1", "s1", "--at", "0", "--length", "3s")
    try ws.tape(
      "clip", "set", song, "c1", "--fade-in", "2.5s", "--fade-in-curve", "exponential",
      "--fade-out", "0.5s")
    try ws.tape("cut", song, "--from", "0.5s", "--to", "1s")
    try ws.tape("clip", "set", song, "c1", "--gain", "-100.25")
    try ws.tape("clip", "set", song, "c2", "--name", "intro")
    let lines = try ws.tape("ls", song).stdout.split(separator: "\n").map(String.init)
    let headerIndex = try #require(lines.firstIndex { $0.hasPrefix("  clip ") })
    let header = Array(lines[headerIndex])
    let rows = lines[(headerIndex + 1)...].map(Array.init)
    #expect(rows.count == 2)
    #expect(rows.first.map { String($0).contains("0.5s of 2.5s exponential") } == true)
    // Where each column's heading starts, each row's text starts, after a space.
    let starts = header.indices.dropFirst().filter { header[$0] != " " && header[$0 - 1] == " " }
      .filter { header[$0 - 2] == " " }
    #expect(starts.count == 8, "\(String(header))")
    for row in rows {
      for start in starts {
        #expect(
          row.count > start && row[start - 1] == " " && row[start] != " ",
          "column at \(start) of \(String(header)) in \(String(row))")
      }
      #expect(row.last != " ")
    }
  }
}
