extension Clip {
  private enum CodingKeys: String, CodingKey {
    case id, source, timelineStart, sourceRange, gain, fadeIn, fadeOut, name
  }

  /// The same keys, in the same order, as the stored properties had when `name` was one.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(id, forKey: .id)
    try container.encode(source, forKey: .source)
    try container.encode(timelineStart, forKey: .timelineStart)
    try container.encode(sourceRange, forKey: .sourceRange)
    try container.encode(gain, forKey: .gain)
    try container.encode(fadeIn, forKey: .fadeIn)
    try container.encode(fadeOut, forKey: .fadeOut)
    try container.encodeIfPresent(name, forKey: .name)
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      id: try container.decode(ID.self, forKey: .id),
      source: try container.decode(Source.ID.self, forKey: .source),
      timelineStart: try container.decode(FramePosition.self, forKey: .timelineStart),
      sourceRange: try container.decode(FrameRange.self, forKey: .sourceRange),
      gain: try container.decode(Gain.self, forKey: .gain),
      fadeIn: try container.decode(Fade.self, forKey: .fadeIn),
      fadeOut: try container.decode(Fade.self, forKey: .fadeOut),
      name: try container.decodeIfPresent(String.self, forKey: .name))
  }
}
