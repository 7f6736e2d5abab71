import ArgumentParser
import Foundation
import Playback
import SafeFiles
import TimelineStore

struct Scrub: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "scrub",
    abstract: "Step through the project's history on a full-screen timeline, and listen.",
    discussion: """
      Tracks as rows, clips as blocks to scale with their ids and fade ramps, a time ruler, \
      the version on screen and its label. ←/→ step to the previous/next version (↑/↓ choose \
      the branch where the history forks); each step animates the clips to their new places. \
      Space plays or pauses: the audio follows the version on screen. Enter checks out the \
      version on screen (as 'tape checkout' does); q quits and leaves the head where it was. \
      Scrubbing only previews: it never moves the head until Enter. Edits made in another \
      shell appear live. +/- zoom, < and > scroll, 0 shows it all, PgUp/PgDn page through \
      tracks; Ctrl-Z suspends (fg returns).
      Example: tape scrub song.tape
      """)

  @OptionGroup var project: ProjectArgument
  @Option(help: "The ALSA device to play on ('aplay -L' lists them).") var device = "default"

  func run() throws {
    Interrupt.install()
    try reportingErrors {
      guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
        throw UsageError(
          message:
            "tape scrub needs a terminal (it draws a full-screen view); use 'tape history', 'tape diff' or 'tape watch' in scripts"
        )
      }
      let store = try retryingReads { try openStore(project.file, access: .follow) }
      let session = try ScrubSession(
        store: store, file: project.file, device: device,
        busyTimeout: (try? busyTimeout()).flatMap { $0 } ?? TimelineStore.defaultBusyTimeout,
        checkEffects: { [file = project.file] in
          try EffectChecks.beforePlay($0, bypassMissing: false, file: file, warn: false)
        },
        describe: { describe($0).1 })
      do {
        try session.run()
      } catch let replaced as ScrubSession.FileReplaced {
        throw MissingInput(message: replaced.description)
      }
      Interrupt.reraiseIfRequested()
    }
  }
}
