public import Timeline

/// The last versions of the head's line, each with what it changed: what `tape log` lists
/// without an id.
public struct RecentChanges: Sendable, Hashable {
  /// One version and the diff from its parent (nil for a version with none: the first).
  public struct Version: Sendable, Hashable {
    public let entry: HistoryEntry
    public let diff: ProjectDiff?
  }

  /// The head when the window was read.
  public let head: Int64
  /// Newest first.
  public let versions: [Version]
  /// The versions of the head's line older than the window.
  public let earlier: Int
}

extension TimelineStore {
  /// The last `count` versions of the head's line (up to the head, not past it toward redo),
  /// newest first, each with the diff from its parent.
  ///
  /// Rule: the window is read oldest first, each version stepped to from the one before (one
  /// changeset a step, ``step(from:to:)``). Why: reading each version and its parent anew costs
  /// two whole reads a version; a step costs only what changed. What if the window's oldest
  /// version has no parent: it is read whole and has no diff.
  ///
  /// ```swift
  /// for version in try store.recentChanges(last: 30).versions {
  ///   print(version.entry.label, version.diff?.clips.count ?? 0)
  /// }
  /// ```
  public func recentChanges(last count: Int) throws(StoreError) -> RecentChanges {
    let window = try headLine(last: count, throughTip: false)
    var diffs: [Int64: ProjectDiff] = [:]
    if let oldest = window.entries.first {
      var previous = try oldest.parent.map { parent throws(StoreError) in try read(parent) }
      for entry in window.entries {
        if let base = previous {
          let (next, diff) = try step(from: base, to: entry.version)
          diffs[entry.version] = diff
          previous = next
        } else {
          previous = try read(entry.version)
        }
      }
    }
    return RecentChanges(
      head: window.head,
      versions: window.entries.reversed().map {
        RecentChanges.Version(entry: $0, diff: diffs[$0.version])
      }, earlier: window.earlier)
  }
}
