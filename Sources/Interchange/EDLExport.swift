public import Timeline

/// A project as CMX3600 edit decision lists (audio only), for editors and DAWs that read EDLs.
///
/// CMX3600 has two audio channels, A and A2: each lane of each track (``Lane``, so a track
/// whose clips overlap takes two) is one channel, and every two channels make one EDL (a
/// project with three lanes makes two). Each clip is an event whose source timecode is its
/// crop in its file and whose record timecode is its place on the timeline (from 00:00:00:00),
/// with `* FROM CLIP NAME:` and `* FROM CLIP:` (its file's path) comments; a fade-in is a
/// dissolve from black (`BL`), a fade-out a dissolve to black. Everything is rounded to the
/// nearest frame at the ``TimecodeRate`` (24, 25 or 30 non-drop, or 29.97 drop-frame);
/// ``roundedEdits`` counts the edits that moved. The record timecode starts at `start` (the
/// broadcast convention is 01:00:00:00). Gain, pan, mute, solo, envelopes and effects have no
/// place in an EDL.
///
/// The first event of a channel that fades in is preceded by a black event from the start,
/// since a dissolve must come from something (the reference reader refuses one at a channel's
/// start). A fade-in at the very start, where that black would last no time (an event of no
/// length, which readers take as a clip of none), starts one frame later after a frame of
/// black, and its first frame is not played (``lateFades``; a fade of one frame is a cut).
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
  /// Clips whose fade-in at the very start begins a frame late, after a frame of black.
  public private(set) var lateFades: [Clip.ID] = []

  /// The EDLs of `project` titled `title` at `rate`, the record timecode starting `start`
  /// frames (of `rate`) after 00:00:00:00; `path` gives a source's absolute path (its last
  /// component names the clip and its reel).
  public init(
    _ project: Project, title: String, rate timecodeRate: TimecodeRate, start: Int64 = 0,
    path: (Source) -> [UInt8]
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
          let frame = { (frames: Int64) -> Int64 in
            timecodeRate.frame(ofSample: frames, sampleRate: project.sampleRate)
          }
          var recordIn = frame(clip.timelineStart.frames) + start
          let recordOut = frame(clip.timelineEnd.frames) + start
          var length = recordOut - recordIn
          guard length > 0 else {
            droppedClips.append(clip.id)
            continue
          }
          var sourceIn = frame(clip.sourceRange.start.frames)
          var fadeIn = min(frame(clip.fadeIn.length.frames), length)
          let fadeOut = min(frame(clip.fadeOut.length.frames), length - fadeIn)
          if first && fadeIn > 0 && recordIn == start {
            lateFades.append(clip.id)
            recordIn += 1
            sourceIn += 1
            length -= 1
            fadeIn -= 1
            if length == 0 { continue }
          }
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
          let line = { (reel: String, dissolve: Int64?, times: [Int64]) in
            Self.line(reel, name, dissolve, times, timecodeRate)
          }
          if fadeIn > 0 {
            if first && recordIn > start {
              blocks.append(
                (
                  start, channel, blocks.count,
                  [line("BL", nil, [0, recordIn - start, start, recordIn])]
                ))
            }
            lines.append(line("BL", nil, [0, 0, recordIn, recordIn]))
            lines.append(
              line(reel, fadeIn, [sourceIn, sourceIn + body, recordIn, recordIn + body]))
          } else {
            lines.append(line(reel, nil, [sourceIn, sourceIn + body, recordIn, recordIn + body]))
          }
          lines += comments
          blocks.append((recordIn, channel, blocks.count, lines))
          if fadeOut > 0 {
            let at = recordIn + body
            blocks.append(
              (
                at, channel, blocks.count,
                [
                  line(reel, nil, [sourceIn + body, sourceIn + body, at, at]),
                  line("BL", fadeOut, [0, fadeOut, at, recordOut]),
                ] + comments.prefix(2) + ["* TO CLIP NAME:  BLACK"]
              ))
          }
          first = false
        }
      }
      blocks.sort { ($0.record, $0.channel, $0.sequence) < ($1.record, $1.channel, $1.sequence) }
      var text =
        "TITLE: \(title)\nFCM: \(timecodeRate.dropFrame ? "DROP FRAME" : "NON-DROP FRAME")\n"
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
        let onFrame = timecodeRate.sample(
          ofFrame: timecodeRate.frame(ofSample: value, sampleRate: project.sampleRate),
          sampleRate: project.sampleRate)
        let off = abs(value - onFrame)
        if off != 0 {
          roundedEdits += 1
          largestRounding = max(largestRounding, off)
        }
      }
    }
  }

  /// An event line without its edit number: reel, channel, cut or dissolve, and `times`:
  /// source in and out, record in and out.
  static func line(
    _ reel: String, _ channel: String, _ dissolve: Int64?, _ times: [Int64], _ rate: TimecodeRate
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
    return
      "  \(reelField) \(channelField) \(transition) \(times.map(rate.timecode).joined(separator: " "))"
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
