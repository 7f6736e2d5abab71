/// Marker edits: each returns ``Command/setMarker(_:)`` with the marker as it ends, or
/// ``Command/removeMarkers(_:)``.
extension Project {
  /// Adds a marker named `name` at `position`, under `id` (from the store's allocator).
  ///
  /// ```swift
  /// let commands = try project.addMarker(ids.newMarkerID(), named: "chorus", at: 2_976_000)
  /// ```
  public func addMarker(
    _ id: Marker.ID, named name: String, at position: FramePosition
  ) throws(TimelineError) -> [Command] {
    guard marker(id) == nil else { throw .duplicateID(id.description) }
    let marker = Marker(id: id, name: name, position: position)
    try Marker.validateNew(name: name)
    try validate(marker)
    return [.setMarker(marker)]
  }

  /// Moves marker `id` to `position`.
  public func moveMarker(
    _ id: Marker.ID, to position: FramePosition
  ) throws(TimelineError)
    -> [Command]
  {
    guard var marker = marker(id) else { throw .unknownMarker(id) }
    marker.position = position
    try validate(marker)
    return [.setMarker(marker)]
  }

  /// Renames marker `id`.
  public func renameMarker(_ id: Marker.ID, to name: String) throws(TimelineError) -> [Command] {
    guard var marker = marker(id) else { throw .unknownMarker(id) }
    marker.name = name
    try Marker.validateNew(name: name)
    try validate(marker)
    return [.setMarker(marker)]
  }

  /// Removes the markers `ids`.
  public func removeMarkers(_ ids: [Marker.ID]) throws(TimelineError) -> [Command] {
    for id in ids where marker(id) == nil { throw .unknownMarker(id) }
    return [.removeMarkers(ids)]
  }

  /// Checks `marker` against the project: a valid name that no other marker has, a time on
  /// the timeline.
  public func validate(_ marker: Marker) throws(TimelineError) {
    try Marker.validate(name: marker.name)
    if let other = markers.first(where: { $0.name == marker.name && $0.id != marker.id }) {
      throw .duplicateMarkerName(marker.name, existing: other.id)
    }
    guard marker.position >= .zero else {
      throw .negativeMarkerPosition(marker.id, position: marker.position, sampleRate: sampleRate)
    }
  }

  // MARK: Markers in ripple edits

  /// The markers a ripple removal of `range` moves: those after it move left by its length,
  /// those inside it to its start.
  func markersRippled(removing range: FrameRange) -> [Command] {
    markers.compactMap { marker in
      var moved = marker
      if marker.position >= range.end {
        moved.position = marker.position - range.count
      } else if marker.position > range.start {
        moved.position = range.start
      } else {
        return nil
      }
      return .setMarker(moved)
    }
  }

  /// The markers a gap of `length` opened at `position` moves: those at or after it, right
  /// by `length`.
  func markersShifted(openingAt position: FramePosition, length: FrameCount) -> [Command] {
    markers.compactMap { marker in
      guard marker.position >= position else { return nil }
      var moved = marker
      moved.position = marker.position + length
      return .setMarker(moved)
    }
  }
}
