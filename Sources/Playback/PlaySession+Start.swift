import AudioFiles
import Foundation
import SafeFiles
public import Timeline
public import TimelineStore

extension PlaySession {
  /// What a play is asked for, besides the project: plain values, as `tape play` parses them.
  public struct Request: Sendable, Hashable {
    /// The project's path as the user gave it (said in notes; its folder is where its effect
    /// files and its decoded-audio cache are found).
    public var file: String
    /// The device, its period and periods.
    public var device: DeviceRequest
    /// What to play, in the project's frames.
    public var range: FrameRange
    /// Whether the end moves with the project's (no `--to`): the play goes on to the end as
    /// edits move it, and `l` loops to it.
    public var followsEnd: Bool
    /// Whether to start again at the range's start when its end is reached.
    public var loop: Bool
    /// Whether effects whose plugin is missing play as if bypassed instead of refusing.
    public var bypassMissing: Bool
    /// Whether every later snapshot of the store is offered to the player.
    public var follow: Bool
    /// Whether times on the status line are frames (`96000f`).
    public var showsFrames: Bool
    /// Whether the summary is JSON (then the starting line and the device's line are not said).
    public var json: Bool

    /// A request with every field given.
    public init(
      file: String, device: DeviceRequest, range: FrameRange, followsEnd: Bool, loop: Bool,
      bypassMissing: Bool, follow: Bool, showsFrames: Bool, json: Bool
    ) {
      self.file = file
      self.device = device
      self.range = range
      self.followsEnd = followsEnd
      self.loop = loop
      self.bypassMissing = bypassMissing
      self.follow = follow
      self.showsFrames = showsFrames
      self.json = json
    }
  }

  /// A signal (`Interrupt`) stopped the first version's decode: the play said so
  /// (`stopped before the first sound, while decoding; nothing was played`) and nothing was
  /// played. The caller ends the process with the signal.
  public struct StoppedBeforeFirstSound: Error, CustomStringConvertible {
    public var description: String { "stopped before the first sound, while decoding" }
  }

  /// Starts playing `project` at `version` of `store` as `request` asks: the decoded audio
  /// (the project's cache, decoding what it lacks, a ``StartingLine`` saying so after half a
  /// second), the effects, the player, its first sound; then the session that runs it, with
  /// its notes said (another play on the device, a project that cannot be followed).
  ///
  /// - Parameters:
  ///   - project: the version to play, as read from `store`.
  ///   - version: its number.
  ///   - store: the store it was read from (labels, updates when followed).
  ///   - opened: the project file as opened (``OpenedFile``), watched while it plays.
  ///   - checkEffects: checks the project's effects before any device is opened (a missing
  ///     plugin refused unless bypassed); what it throws is thrown.
  ///   - request: what to play, and how (``Request``).
  ///   - playhead: told the position and whether it is paused every 50 ms while it plays.
  /// - Returns: the session, to ``run()``; nil when `q` stopped the first decode (the play
  ///   said so).
  /// - Throws: ``StoppedBeforeFirstSound`` for a signal during the first decode; the player's,
  ///   the cache's and `checkEffects`' errors.
  ///
  /// ```swift
  /// guard let session = try PlaySession.start(
  ///   project, version: version, store: store, opened: opened, request: request,
  ///   checkEffects: { try check($0) })
  /// else { return }
  /// let report = session.run()
  /// ```
  public static func start(
    _ project: Project, version: Int64, store: TimelineStore, opened: OpenedFile?,
    request: Request, checkEffects: (Project) throws -> Void,
    playhead: @escaping (_ frame: Int64, _ paused: Bool) -> Void = { _, _ in }
  ) throws -> PlaySession? {
    let range = request.range
    let starting = StartingLine(json: request.json)
    var cache = PlayStop.stoppable(AudioCache(forProject: request.file, lockingMemory: true))
    cache.progress = { starting.update($0) }
    let library = AudioLibrary(cache: cache)
    try checkEffects(project)
    let effects = PlayerEffects(
      bypassMissing: request.bypassMissing,
      projectFolder: RawPath.folder(ofProject: request.file))
    let player = try LivePlayer(
      LivePlayer.Configuration(
        device: request.device, sampleRate: project.sampleRate, channels: project.channels,
        range: range.start.frames..<(request.followsEnd ? Int64.max : range.end.frames),
        loop: request.loop, ringsOut: true),
      compile: { project, version, sequence in
        try effects.compile(
          project, version: version, sequence: sequence, audio: library.audio(for: project))
      },
      load: { audio, chunk in try library.makeResident(audio, chunk) })
    effects.prepare(for: player, project: project)
    // Keys while the first version decodes (a long source: seconds): `q` stops it.
    let early = EarlyKeys()
    starting.begin()
    do {
      try player.start(project, version: version)
      starting.end()
      early.end()
    } catch {
      starting.end()
      early.end()
      // A decode stopped by Ctrl-C or SIGTERM: the process ends with that signal, as after a
      // play, having said so; by `q`: it ends as a play does.
      if Interrupt.requested() {
        writeWhole(
          "tape play: stopped before the first sound, while decoding; nothing was played\n")
        throw StoppedBeforeFirstSound()
      }
      if case AudioFileError.decodeStopped = error, early.quit {
        writeWhole("tape play: \(error)\n")
        return nil
      }
      throw error
    }
    for note in effects.notes() { writeWhole(ProjectWords.escaped("note: \(note)") + "\n") }
    // Another play of this user's on the device (which mixes both) is said.
    let claim = DeviceClaim(device: request.device.name, playing: request.file)
    let session = PlaySession(
      player: player, store: store, device: request.device.name,
      sampleRate: project.sampleRate, showsFrames: request.showsFrames, json: request.json,
      notices: { library.takeNotices() }, playhead: playhead)
    session.claim = claim
    session.watch(opened)
    let followsEnd = request.followsEnd
    session.loopRange = { [store] in
      guard followsEnd else { return range }
      let end = max(range.start, store.snapshot.project.timelineEnd)
      return FrameRange(start: range.start, end: end)
    }
    if let other = claim.otherPlayer {
      session.note(
        "\(request.device.name) is played by another tape play too (\(other)): both are heard")
    }
    if request.follow && !store.canFollow {
      session.note(
        "\(request.file) is opened read-only without its log, so edits made while it plays will not be heard"
      )
    }
    if request.follow { session.follow(store, from: version) }
    return session
  }
}
