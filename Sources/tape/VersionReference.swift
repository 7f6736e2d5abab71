import ArgumentParser
import TimelineStore

/// A version as the command line names it (`12`, or `v12` as `tape diff` and `watch` print
/// it, a tag's name, `HEAD`, `HEAD~N`), resolved against a project: the one place that turns such words into a version
/// number, so that naming versions (tags) is added here for every command that takes it.
struct VersionReference: ExpressibleByArgument, CustomStringConvertible {
  let text: String

  init?(argument: String) {
    text = argument
  }

  /// The head (`steps` 0) or the version `steps` back from it: `HEAD~steps`.
  init(head steps: Int) {
    text = steps == 0 ? "HEAD" : "HEAD~\(steps)"
  }

  var description: String { text }

  /// The version this reference names in `store` (a number, `v12`, or a tag's name: the
  /// store's one resolver, ``TimelineStore/resolveVersion(_:mustExist:)``); refused in one
  /// line when it names no version of the project.
  func resolve(in store: TimelineStore) throws -> Int64 {
    try store.resolveVersion(text)
  }
}
