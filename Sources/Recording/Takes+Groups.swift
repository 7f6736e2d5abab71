public import Timeline

extension Takes {
  /// The take groups (``/Timeline/Project/takeGroups(on:)``) for people, times said by
  /// `clock`: `0:01.000–0:03.000 on t2: 3 takes, take 3 (c6) plays`, then a line per take:
  /// its clip, its number in the order recorded, its source, where in the source it starts and
  /// its length (`* ` before the one that plays).
  ///
  /// ```swift
  /// let groups = project.takeGroups(on: Track.ID(2))
  /// for line in Takes.lines(groups, clock: { "\($0)f" }) { print(line) }
  /// ```
  public static func lines(_ groups: [TakeGroup], clock: (Int64) -> String) -> [String] {
    var lines: [String] = []
    for group in groups {
      let number = group.number(of: group.playing) ?? 0
      lines.append(
        "\(clock(group.range.start.frames))–\(clock(group.range.end.frames)) on \(group.track): \(group.takes.count) takes, take \(number) (\(group.playing)) plays"
      )
      for (index, clip) in group.takes.enumerated() {
        lines.append(
          "\(clip.id == group.playing ? "*" : " ") \(ProjectWords.padded(clip.id.description, 5)) take \(ProjectWords.padded(String(index + 1), 3)) \(ProjectWords.padded(clip.source.description, 4)) from \(ProjectWords.padded(clock(clip.sourceRange.start.frames), 10)) length \(clock(clip.length.frames))"
        )
      }
    }
    return lines
  }
}
