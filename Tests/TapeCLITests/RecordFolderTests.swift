import Foundation
import Testing

/// A recordings folder that another user could change under the recorder is refused: such a
/// user could link a take's name to any file of the recorder's, or plant a note that
/// `--recover` would follow.
extension ProcessHeavyTests.RecordTests {
  /// A link, a folder others may write, another user's folder (when the test runs as root,
  /// which can make one): `tape record` and `tape record --recover` refuse each with exit 77
  /// before anything is captured, saying what makes it safe; the project is unchanged and
  /// nothing is written where the folder pointed. Once fixed as the error says, the same
  /// recording succeeds.
  @Test func aRecordingsFolderOthersCouldChangeIsRefused() throws {
    let setup = try Setup()
    let frames = 4_800
    let samples = Self.noise(frames: frames, channels: 2, seed: 3).map { Float($0) / 32_768 }
    try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: setup.input)) }
    let folder = setup.song + "-recordings"
    let elsewhere = setup.space.path("elsewhere")
    let files = FileManager.default
    try files.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
    let record = [
      "record", setup.song, "Voice", "--device", "capture", "--duration", "\(frames)f",
    ]
    let before = try setup.space.fingerprint("song.tape")

    func refused(
      _ arguments: [String], _ words: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
      let result = try setup.space.tape(
        arguments, status: 77, environment: setup.environment, sourceLocation: sourceLocation)
      #expect(
        result.stderr.split(separator: "\n").count == 1, "\(result.stderr)",
        sourceLocation: sourceLocation)
      for word in words {
        #expect(result.stderr.contains(word), "\(result.stderr)", sourceLocation: sourceLocation)
      }
      #expect(result.stdout.isEmpty, "\(result.stdout)", sourceLocation: sourceLocation)
      #expect(try setup.space.fingerprint("song.tape") == before, sourceLocation: sourceLocation)
    }

    // A link to a folder of the recorder's own: refused all the same (whoever made the link
    // chose where the takes go).
    try files.createSymbolicLink(atPath: folder, withDestinationPath: elsewhere)
    try refused(record, ["is a symbolic link", "rm '\(folder)'"])
    try refused(["record", setup.song, "--recover"], ["is a symbolic link"])
    #expect(try files.contentsOfDirectory(atPath: elsewhere).isEmpty)
    try files.removeItem(atPath: folder)

    // A folder others may write, holding a note someone planted.
    try files.createDirectory(atPath: folder, withIntermediateDirectories: false)
    #expect(chmod(folder, 0o777) == 0)
    try Data(
      #"{"take":"planted.wav","track":1,"timelineStart":0,"sampleRate":48000,"channels":2}"#.utf8
    ).write(to: URL(fileURLWithPath: folder + "/planted.wav.pending"))
    try Data(count: 1_000).write(to: URL(fileURLWithPath: folder + "/planted.wav"))
    try refused(record, ["may be written by its group or by others", "chmod go-w '\(folder)'"])
    try refused(["record", setup.song, "--recover"], ["may be written by its group or by others"])
    #expect(
      try files.contentsOfDirectory(atPath: folder).sorted() == [
        "planted.wav", "planted.wav.pending",
      ])

    // Another user's folder: only root can make one here.
    if geteuid() == 0 {
      #expect(chmod(folder, 0o755) == 0)
      #expect(chown(folder, 65_534, 65_534) == 0)
      try refused(record, ["belongs to another user (uid 65534)"])
      #expect(chown(folder, 0, 0) == 0)
    }

    // Made safe as the error said (the planted note removed), the recording succeeds.
    try files.removeItem(atPath: folder + "/planted.wav.pending")
    try files.removeItem(atPath: folder + "/planted.wav")
    #expect(chmod(folder, 0o777) == 0)
    #expect(try TapeBinary.run(URL(fileURLWithPath: "/bin/chmod"), ["go-w", folder]).status == 0)
    let result = try setup.space.tape(record, environment: setup.environment)
    #expect(result.stdout.hasPrefix("c"), "\(result.stderr)")
  }
}
