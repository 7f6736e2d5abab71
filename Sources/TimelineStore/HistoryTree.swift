/// The version tree of a ``History``, indexed for stepping through it: each version's parent,
/// children and label, and the child on the way to the head. What a history scrubber's ← and →
/// and a view's history strip walk (`tape scrub` does).
///
/// Rule: built once per change to history (``init(_:)``), then every question is a dictionary
/// look-up. Why: a step must not scan 100,000 versions. What if the history changed meanwhile
/// (another process committed)? Build a new tree from ``TimelineStore/history()``; the old one
/// still answers for the versions it knew.
///
/// ```swift
/// let tree = HistoryTree(try store.history())
/// tree.parent(of: 5)        // the version undo from 5 leads to
/// tree.next(after: 2)       // the child on the way to the head, else the newest
/// ```
public struct HistoryTree: Sendable, Hashable {
  public let history: History
  private var childrenByVersion: [Int64: [Int64]] = [:]
  private var parents: [Int64: Int64] = [:]
  private var labels: [Int64: String] = [:]
  private var towardHead: [Int64: Int64] = [:]

  public init(_ history: History) {
    self.history = history
    for entry in history.versions {
      labels[entry.version] = entry.label
      if let parent = entry.parent {
        childrenByVersion[parent, default: []].append(entry.version)
        parents[entry.version] = parent
      }
    }
    var cursor = history.head
    while let parent = parents[cursor] {
      towardHead[parent] = cursor
      cursor = parent
    }
  }

  /// The version `version` was made from; nil for the root (or a version not in the tree).
  public func parent(of version: Int64) -> Int64? { parents[version] }

  /// The versions made from `version`, oldest first (more than one where history forks).
  public func children(of version: Int64) -> [Int64] { childrenByVersion[version] ?? [] }

  /// The label of `version` (what made it); nil for a version not in the tree.
  public func label(of version: Int64) -> String? { labels[version] }

  /// Whether `version` is an ancestor of the head or the head itself.
  public func leadsToHead(_ version: Int64) -> Bool {
    version == history.head || towardHead[version] != nil
  }

  /// The child a step forward from `version` leads to: its `chosen`th child when given (the
  /// last one when `chosen` is past the end), else the child on the way to the head, else the
  /// newest; nil at a leaf.
  public func next(after version: Int64, choosing chosen: Int? = nil) -> Int64? {
    let options = children(of: version)
    guard !options.isEmpty else { return nil }
    if let chosen { return options[min(max(chosen, 0), options.count - 1)] }
    return towardHead[version] ?? options.last
  }
}
