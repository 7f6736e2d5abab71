public import Timeline

/// A project as CMX3600 edit decision lists (audio only), for editors and DAWs that read EDLs.
///
/// CMX3600 has two audio channels, A and A2: each lane of each track (``Lane``, so a track
/// whose clips overlap takes two) is one channel, and every two channels make one EDL (a
/// project with three lanes makes two). Each clip is an event whose source timecode is its
/// crop in its file and whose record timecode is its place on the timeline (from 00:00:00:00),
/// with `* FROM CLIP NAME:` and `* FROM CLIP:` (its file's path) comments; a fade-in is a
/// dissolve from black (`BL`), a fade-out a dissolve to black. Everything is rounded to the
/// nearest frame at `fps` (24, 25 or 30, non-drop); ``roundedEdits`` counts the edits that
/// moved. Gain, pan, mute, solo, envelopes and effects have no place in an EDL.
///
/// The first event of a channel that fades in is preceded by a black event from 00:00:00:00,
/// since a dissolve must come from something (the reference reader refuses one at a channel's
/// start).
public struct EDLExport: Sendable {
  /// One EDL file's text and what it holds.
  public struct Document: Sendable, Hashable {
    public var text: String
    /// The lanes it holds, on channel A and (if any) A2.
    public var lanes: [Lane]
  }

  public private(set) var documents: [Document] = []
  /// How many edit points (clip starts, ends, crops, fade lengths) were not on a frame.
  public private(set) var roundedEdits = 0
  /// The largest rounding, in frames at the project rate.
  public private(set) var largestRounding: Int64 = 0
  /// Clips shorter than a frame, left out.
  public private(set) var droppedClips: [Clip.ID] = []

  /// The EDLs of `project` titled `title` at `fps` frames per second; `path` gives a source's
  /// absolute path (its last component names the clip and its reel).
  public init(
    _ project: Project, title: String, fps: Int, path: (Source) -> [UInt8]
  ) {
    let lanes = Lane.lanes(of: project)
    let groups = stride(from: 0, to: max(lanes.count, 1), by: 2).map {
      Array(lanes[min($0, lanes.count)..<min($0 + 2, lanes.count)])
    }
    let sources = Dictionary(uniqueKeysWithValues: project.sources.map { ($0.id, $0) })
    for group in groups {
      var blocks: [(record: Int64, channel: Int, sequence: Int, lines: [String])] = []
      for (channel, lane) in group.enumerated() {
        let name = channel == 0 ? "A" : "A2"
        var first = true
        for clip in lane.clips {
          let rate = project.sampleRate
          let frame = { (frames: Int64) -> Int64 in Self.frame(frames, rate, fps) }
          let recordIn = frame(clip.timelineStart.frames)
          let recordOut = frame(clip.timelineEnd.frames)
          let length = recordOut - recordIn
          guard length > 0 else {
            droppedClips.append(clip.id)
            continue
          }
          let sourceIn = frame(clip.sourceRange.start.frames)
          let fadeIn = min(frame(clip.fadeIn.length.frames), length)
          let fadeOut = min(frame(clip.fadeOut.length.frames), length - fadeIn)
          let source = sources[clip.source]
          let bytes = source.map(path) ?? []
          let fileName = String(
            decoding: bytes.split(separator: UInt8(ascii: "/")).last ?? [], as: UTF8.self)
          let reel = Self.reel(fileName)
          let comments = [
            "* FROM CLIP NAME:  \(fileName.isEmpty ? clip.id.description : fileName)",
            "* FROM CLIP: \(String(decoding: bytes, as: UTF8.self))",
            "* TAPE CLIP: \(clip.id) ON \(lane.track.id)",
          ]
          var lines: [String] = []
          let body = length - fadeOut
          if fadeIn > 0 {
            if first {
              blocks.append(
                (
                  0, channel, blocks.count,
                  [Self.line("BL", name, nil, 0, recordIn, 0, recordIn, fps)]
                ))
            }
            lines.append(Self.line("BL", name, nil, 0, 0, recordIn, recordIn, fps))
            lines.append(
              Self.line(
                reel, name, fadeIn, sourceIn, sourceIn + body, recordIn, recordIn + body, fps))
          } else {
            lines.append(
              Self.line(reel, name, nil, sourceIn, sourceIn + body, recordIn, recordIn + body, fps))
          }
          lines += comments
          blocks.append((recordIn, channel, blocks.count, lines))
          if fadeOut > 0 {
            let at = recordIn + body
            blocks.append(
              (
                at, channel, blocks.count,
                [
                  Self.line(reel, name, nil, sourceIn + body, sourceIn + body, at, at, fps),
                  Self.line("BL", name, fadeOut, 0, fadeOut, at, recordOut, fps),
                ] + comments.prefix(2) + ["* TO CLIP NAME:  BLACK"]
              ))
          }
          first = false
        }
      }
      blocks.sort { ($0.record, $0.channel, $0.sequence) < ($1.record, $1.channel, $1.sequence) }
      var text = "TITLE: \(title)\nFCM: NON-DROP FRAME\n"
      for (number, block) in blocks.enumerated() {
        let edit = String(number + 1)
        let numbered = String(repeating: "0", count: max(0, 3 - edit.count)) + edit
        text +=
          "\n" + block.lines.map { $0.hasPrefix("*") ? $0 : numbered + $0 }.joined(separator: "\n")
          + "\n"
      }
      documents.append(Document(text: text, lanes: group))
    }
    for clip in project.allClips {
      for value in [
        clip.timelineStart.frames, clip.timelineEnd.frames, clip.sourceRange.start.frames,
        clip.fadeIn.length.frames, clip.fadeOut.length.frames,
      ] {
        let off = abs(
          value - Self.frame(value, project.sampleRate, fps) * Int64(project.sampleRate)
            / Int64(fps))
        if (value * Int64(fps)) % Int64(project.sampleRate) != 0 {
          roundedEdits += 1
          largestRounding = max(largestRounding, off)
        }
      }
    }
  }

  /// `frames` at `rate` in frames at `fps`, rounded to the nearest (halves up).
  static func frame(_ frames: Int64, _ rate: Int, _ fps: Int) -> Int64 {
    (frames * Int64(fps) * 2 + Int64(rate)) / (Int64(rate) * 2)
  }

  /// An event line without its edit number: reel, channel, cut or dissolve, source in/out and
  /// record in/out.
  static func line(
    _ reel: String, _ channel: String, _ dissolve: Int64?, _ sourceIn: Int64, _ sourceOut: Int64,
    _ recordIn: Int64, _ recordOut: Int64, _ fps: Int
  ) -> String {
    let transition: String
    if let dissolve {
      let digits = String(dissolve)
      transition = "D " + String(repeating: "0", count: max(0, 3 - digits.count)) + digits + "   "
    } else {
      transition = "C       "
    }
    let reelField = reel + String(repeating: " ", count: max(0, 8 - reel.count))
    let channelField = channel + String(repeating: " ", count: max(0, 5 - channel.count))
    let times = [sourceIn, sourceOut, recordIn, recordOut].map { timecode($0, fps) }
    return "  \(reelField) \(channelField) \(transition) \(times.joined(separator: " "))"
  }

  /// `HH:MM:SS:FF` for `frames` at `fps` (non-drop).
  static func timecode(_ frames: Int64, _ fps: Int) -> String {
    let rate = Int64(fps)
    let parts = [
      frames / (rate * 3600), frames / (rate * 60) % 60, frames / rate % 60, frames % rate,
    ]
    return parts.map { $0 < 10 ? "0\($0)" : "\($0)" }.joined(separator: ":")
  }

  /// A reel name from a file name: its letters and digits, without the extension, at most 8;
  /// `AX` (an auxiliary source) when none are left.
  static func reel(_ fileName: String) -> String {
    var base = Substring(fileName)
    if let dot = base.lastIndex(of: "."), dot > base.startIndex { base = base[..<dot] }
    let kept = base.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }.prefix(8)
    return kept.isEmpty ? "AX" : String(kept)
  }
}
