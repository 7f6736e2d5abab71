import Interchange
import Timeline

extension VersionTag {
  /// The tag as `tape tag --list` lists it: name, version and the version's `label`, separated
  /// by tabs (`rough-mix\tv12\tMove c3`), the label's control characters escaped.
  public func listed(label: String) -> String {
    "\(name)\tv\(version)\t\(ProjectWords.escaped(label))"
  }

  /// What making or deleting the tag says: `verb` (`tagged`, `deleted tag`), the name, the
  /// version and its `label` quoted (`tagged rough-mix: v12 "Move c3"`).
  public func said(_ verb: String, label: String) -> String {
    "\(verb) \(name): v\(version) \(DiffWords(sampleRate: 1).quoted(label))"
  }
}
