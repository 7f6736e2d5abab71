import ArgumentParser
import TimelineStore

/// A version as the command line names it (`12`, or `v12` as `tape diff` and `watch` print
/// it), resolved against a project: the one place that turns such words into a version
/// number, so that naming versions (tags) is added here for every command that takes it.
struct VersionReference: ExpressibleByArgument, CustomStringConvertible {
  let text: String

  init?(argument: String) {
    text = argument
  }

  var description: String { text }

  /// The version this reference names in `store`; refused in one line when it is no version
  /// of the project.
  func resolve(in store: TimelineStore) throws -> Int64 {
    var digits = Substring(text)
    if digits.first == "v" { digits = digits.dropFirst() }
    guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), let version = Int64(digits),
      version > 0
    else {
      throw UsageError(
        message:
          "'\(text)' is not a version: versions are numbered from 1 ('tape history' lists them)")
    }
    guard try store.entry(version) != nil else { throw StoreError.unknownVersion(version) }
    return version
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
