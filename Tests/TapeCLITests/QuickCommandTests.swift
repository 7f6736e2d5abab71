import Foundation
import Testing

/// The quick-command table (`Tape.quickCommands`: the commands parsed without the whole
/// command tree) names each command as the tree does. The debug build checks an entry each
/// time it is used; the test command runs a release build, so this runs the check for every
/// entry with the debug one (``TapeBinary/checking``).
@Suite("The quick-command table")
struct QuickCommandTests {
  @Test func everyEntryIsTheCommandTheTreeNames() throws {
    let checked = try TapeBinary.run(
      TapeBinary.checking, ["ls"], environment: ["TAPE_CHECK_QUICK_COMMANDS": "1"])
    #expect(checked.status == 0, "\(checked.stderr)")
    #expect(checked.stderr.isEmpty, "\(checked.stderr)")
  }
}
