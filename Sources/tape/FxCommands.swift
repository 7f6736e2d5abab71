import ArgumentParser

/// `tape fx …`: LV2 effects.
struct Fx: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fx",
    abstract:
      "LV2 effects: find plugins and their presets, and add, set, bypass, move and remove effects.",
    subcommands: [
      FxPlugins.self, FxInfo.self, FxPresets.self, Add.self, Set.self, Bypass.self, Move.self,
      Remove.self, FxEnvelope.self,
      List.self,
    ])
}
