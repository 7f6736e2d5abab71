import Foundation
import Timeline

/// The history as a tree of text lines (`tape history`): a run of versions continues on one
/// line of descent; where a version has several children, each branch is drawn below it,
/// indented (`├─ `, `└─ `). Each line is the version, its date (local time), its label, its
/// tags in brackets and `← head` on the head.
///
/// ```swift
/// let history = try store.history()
/// let tags = try store.tags()
/// print(HistoryDrawing(head: history.head, versions: history.versions, tags: tags).text,
///       terminator: "")
/// // 1     2026-11-25 18:40:01  Add c1
/// // 2     2026-11-25 18:40:09  Move c1 [rough-mix]  ← head
/// ```
///
/// Rule: drawn with an explicit stack, never by recursion. Why: a linear history may be
/// 100,000 versions deep. What if you recurse: a long history overflows the stack.
public struct HistoryDrawing: Sendable, Hashable {
  /// The lines, each ending with a newline.
  public let text: String

  /// The tree of `versions` (each whose parent is not among them is drawn as a root), each
  /// version with its tags; `head` is marked.
  public init(head: Int64, versions: [HistoryEntry], tags: [VersionTag] = []) {
    let names = Dictionary(grouping: tags, by: \.version).mapValues { $0.map(\.name) }
    var children: [Int64: [HistoryEntry]] = [:]
    var roots: [HistoryEntry] = []
    let shown = Set(versions.map(\.version))
    for entry in versions {
      if let parent = entry.parent, shown.contains(parent) {
        children[parent, default: []].append(entry)
      } else {
        roots.append(entry)
      }
    }
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    var lines: [String] = []
    var stack: [(entry: HistoryEntry, prefix: String, branch: String)] = roots.reversed().map {
      ($0, "", "")
    }
    while let (entry, prefix, branch) = stack.popLast() {
      let named = (names[entry.version] ?? []).map { " [\(ProjectWords.escaped($0))]" }.joined()
      let marker = named + (entry.version == head ? "  ← head" : "")
      lines.append(
        "\(prefix)\(branch)\(ProjectWords.padded(String(entry.version), 5)) \(formatter.string(from: entry.date))  \(ProjectWords.escaped(entry.label))\(marker)"
      )
      let kids = children[entry.version] ?? []
      let childPrefix = prefix + (branch == "├─ " ? "│  " : branch == "└─ " ? "   " : "")
      if kids.count == 1 {
        stack.append((kids[0], childPrefix, ""))
      } else {
        for (index, kid) in kids.enumerated().reversed() {
          stack.append((kid, childPrefix, index == kids.count - 1 ? "└─ " : "├─ "))
        }
      }
    }
    text = lines.joined(separator: "\n") + "\n"
  }
}
