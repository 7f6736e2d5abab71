import ArgumentParser

/// `tape fx …`: LV2 effects.
struct Fx: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fx",
    abstract: "LV2 effects: the installed plugins and their parameters.",
    subcommands: [FxPlugins.self, FxInfo.self])
}
