public import Timeline

/// A track's clips spread over lanes in which no two clips overlap: what a format whose tracks
/// are sequential (OTIO, a CMX3600 channel) can hold. Tape lets clips on one track overlap (a
/// crossfade, a layered effect); each lane becomes one track or channel there, so nothing is
/// dropped.
///
/// A clip goes to the first lane whose last clip has ended by the clip's start, taking the
/// clips in timeline order; a track without overlaps is one lane, and an empty track one
/// empty lane.
public struct Lane: Sendable, Hashable {
  /// The Tape track the lane comes from.
  public var track: Track
  /// 0 for a track's first lane, 1 for its second…
  public var index: Int
  /// In timeline order, none overlapping the next.
  public var clips: [Clip]

  /// The lane's name: the track's, with ` (2)`, ` (3)`… after it for the extra lanes.
  public var name: String { index == 0 ? track.name : "\(track.name) (\(index + 1))" }

  /// The lanes of every track of `project`, track by track. With `joiningCrossfades`, two
  /// clips that crossfade (``isCrossfade(_:_:)``) stay in one lane, overlapping, as a format
  /// with transitions (OTIO) holds them.
  public static func lanes(of project: Project, joiningCrossfades: Bool = false) -> [Lane] {
    project.tracks.flatMap { lanes(of: $0, joiningCrossfades: joiningCrossfades) }
  }

  /// The lanes of `track`: at least one.
  public static func lanes(of track: Track, joiningCrossfades: Bool = false) -> [Lane] {
    var lanes = [Lane(track: track, index: 0, clips: [])]
    for clip in track.clips.sorted(by: Clip.timelineOrder) {
      if joiningCrossfades,
        let joined = lanes.firstIndex(where: { $0.clips.last.map { isCrossfade($0, clip) } == true }
        )
      {
        lanes[joined].clips.append(clip)
      } else if let free = lanes.firstIndex(where: {
        ($0.clips.last?.timelineEnd ?? .zero) <= clip.timelineStart
      }) {
        lanes[free].clips.append(clip)
      } else {
        lanes.append(Lane(track: track, index: lanes.count, clips: [clip]))
      }
    }
    return lanes
  }

  /// Whether `before` and `after` (which starts later) crossfade as `tape clip crossfade` makes
  /// them (``/Timeline/Clip/crossfades(into:)``).
  public static func isCrossfade(_ before: Clip, _ after: Clip) -> Bool {
    before.crossfades(into: after)
  }
}

/// `file://` URLs for absolute paths, and back: bytes outside RFC 3986's unreserved set and
/// `/` are percent-encoded, so any Linux name (spaces, `#`, bytes that are not UTF-8) survives.
public enum FileURL {
  /// `file:///home/me/a%20b.wav` for the absolute path `/home/me/a b.wav`.
  public static func url(forAbsolutePath bytes: [UInt8]) -> String {
    var out = "file://"
    for byte in bytes {
      let keep =
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
        || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        || "-._~/".utf8.contains(byte)
      if keep {
        out.unicodeScalars.append(UnicodeScalar(byte))
      } else {
        let hex = String(byte, radix: 16, uppercase: true)
        out += "%" + (hex.count == 1 ? "0" + hex : hex)
      }
    }
    return out
  }

  /// The path bytes a `file:` URL names (`file:///p`, `file://localhost/p`, `file:/p`); nil for
  /// another scheme, another host, or a bad `%` escape. A text without a scheme is a path, its
  /// bytes returned as they are.
  public static func path(fromURL text: String) -> [UInt8]? {
    var rest = Substring(text)
    if let colon = text.firstIndex(of: ":"),
      text[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
      ),
      text.distance(from: text.startIndex, to: colon) > 1
    {
      guard text[..<colon].lowercased() == "file" else { return nil }
      rest = text[text.index(after: colon)...]
      if rest.hasPrefix("//") {
        rest = rest.dropFirst(2)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let host = rest[..<slash]
        guard host.isEmpty || host.lowercased() == "localhost" else { return nil }
        rest = rest[slash...]
      }
    } else {
      return Array(text.utf8)
    }
    var bytes: [UInt8] = []
    var utf8 = Array(rest.utf8)[...]
    while let byte = utf8.popFirst() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard utf8.count >= 2,
        let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
      else { return nil }
      utf8 = utf8.dropFirst(2)
      bytes.append(value)
    }
    return bytes.isEmpty ? nil : bytes
  }
}
