import AudioFiles
import Foundation
import Mixing
import SafeFiles
import Synchronization
import TerminalViews
public import Timeline
public import TimelineStore

/// One `tape scrub`: the version on screen, the history to step through, the animation, the
/// player, and the terminal.
///
/// It draws the full screen on stdout itself (`TimelineScreen`, from `TerminalViews`) and
/// reads the keys from stdin; it needs both to be a terminal.
///
/// ```swift
/// let store = try TimelineStore.open(at: "song.tape", access: .follow)
/// let session = try ScrubSession(store: store, file: "song.tape", device: "default")
/// try session.run()  // until q
/// ```
///
/// Rule: scrubbing only previews; the one write is Enter's checkout, made in the file that was
/// opened (compared with the path before the writer opens and after).
/// Why: a path that names another file since (`mv b.tape a.tape`) would have its head moved to
/// a version of the first file's history.
/// What if it does: the session ends with ``FileReplaced``, and nothing is written.
public final class ScrubSession: @unchecked Sendable {
  private let store: TimelineStore
  private let file: String
  /// The file opened: a path that names another one since (`mv b.tape a.tape`) or none ends
  /// the session, and nothing is ever written through it.
  private let identity: FileIdentity
  /// Its `-wal` and `-shm` as opened, removed if the file is deleted under the session.
  private let openedLog: (log: FileIdentity?, shared: FileIdentity?)
  /// When the path was last compared with ``identity``.
  private var lastLook = ContinuousClock.now
  private let device: String
  /// The history indexed once per change to it, so a step costs no scan of 100,000 versions.
  private var tree: HistoryTree
  private var history: History { tree.history }
  /// Which child → leads to, where the history forks (by version).
  private var branch: [Int64: Int] = [:]
  private var shown: StoreVersion
  /// The view: `span` frames from `viewStart` fill the width (the whole project until the
  /// user zooms or scrolls), tracks from `firstTrack`.
  private var span: Int64
  private var viewStart: Int64 = 0
  private var zoomed = false
  private var firstTrack = 0
  private var player: LivePlayer?
  /// The player's decoded audio (for what it has to say: a source file gone).
  private var library: AudioLibrary?
  private var playing = false
  private var keyInput = KeyInput()
  /// Whether more keys were read after the one being handled (a step then skips its
  /// animation).
  private var keysQueued = false
  /// Keys read while a decode held the main thread, handled once it is free.
  private var typedAhead: [UInt8] = []
  private var message = ""
  /// The footer's line while (and after) a project too short to loop plays once.
  private var playedOnce: String?
  /// The latest line the player or its audio library sent during this play.
  private var playNews: String?
  /// Set by the follower task when another process moves the head.
  private let headMoved = AtomicFlag()
  private var follower: Task<Void, Never>?
  /// Animation: 150 ms at 40 frames per second.
  static let animationFrames = 6
  static let frameMicroseconds: UInt32 = 25_000

  /// How long a checkout waits for another process's write lock (s).
  private let busyTimeout: Double
  /// The check of a project's effects before it plays (a missing plugin refused).
  private let checkEffects: (Project) throws -> Void
  /// An error as one line for the footer.
  private let describe: (any Error) -> String

  /// A session over `store`, opened from `file` to follow, played on `device`.
  ///
  /// - Parameters:
  ///   - store: the project, opened to follow.
  ///   - file: its path as the user gave it (compared with the file opened before any write).
  ///   - device: the device space plays on.
  ///   - busyTimeout: how long Enter's checkout waits for another process's write lock (s).
  ///   - checkEffects: checks a project's effects before space plays it; what it throws is
  ///     said in the footer (`cannot play: …`).
  ///   - describe: an error as one line for the footer.
  /// - Throws: `StoreError.notFound` when `file` names nothing; the store's errors reading its
  ///   history.
  public init(
    store: TimelineStore, file: String, device: String,
    busyTimeout: Double = TimelineStore.defaultBusyTimeout,
    checkEffects: @escaping (Project) throws -> Void,
    describe: @escaping (any Error) -> String = { "\($0)" }
  ) throws {
    self.busyTimeout = busyTimeout
    self.checkEffects = checkEffects
    self.describe = describe
    self.store = store
    self.file = file
    guard let identity = FileIdentity(path: file) else { throw StoreError.notFound(path: file) }
    self.identity = identity
    openedLog = (FileIdentity(path: file + "-wal"), FileIdentity(path: file + "-shm"))
    self.device = device
    tree = HistoryTree(try store.history())
    shown = try store.read(tree.history.head)
    span = max(shown.project.timelineEnd.frames, Int64(shown.project.sampleRate) * 10)
  }

  /// The child → leads to from `version`: the one chosen with ↑/↓, else the one on the way to
  /// the head, else the newest.
  private func next(after version: Int64) -> Int64? {
    tree.next(after: version, choosing: branch[version])
  }

  private var parentOfShown: Int64? { tree.parent(of: shown.version) }

  /// The path no longer names the file opened (deleted, or replaced: `mv b.tape a.tape`):
  /// the session has ended, and nothing was written to either file.
  public struct FileReplaced: Error, CustomStringConvertible {
    /// What happened and what to do: one line.
    public let description: String
  }

  // MARK: The loop

  /// Runs until `q` or a signal (`Interrupt`): the full screen, the keys, the player.
  ///
  /// Takes the terminal (raw keys, the alternate screen) and gives it back as it was, whatever
  /// ends the session.
  /// - Throws: ``FileReplaced`` when the file opened is deleted or replaced under it.
  public func run() throws {
    var saved = termios()
    tcgetattr(STDIN_FILENO, &saved)
    let leave = "\u{1B}[?25h\u{1B}[?1049l"
    let enter = "\u{1B}[?1049h\u{1B}[?25l"
    // Remembered as it is, before raw mode: a crash or Ctrl-\ restores this.
    Termination.rememberTerminal(reset: leave)
    Termination.restoreTerminalOnCrash()
    var settings = Suspend.keysAsTyped(saved)
    tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    Resize.install()
    Suspend.install()
    write(enter)
    defer {
      follower?.cancel()
      if let player {
        player.stop()
        _ = player.wait()
      }
      write(leave)
      tcsetattr(STDIN_FILENO, TCSANOW, &saved)
      Termination.forgetTerminal()
    }
    let headMoved = headMoved
    follower = Task.detached { [store] in
      for await update in store.updates() where !update.moves.isEmpty {
        _ = update
        headMoved.value.store(true, ordering: .releasing)
      }
    }
    // While space decodes a version on this thread, `q` (or Ctrl-C) stops the decode; other
    // keys wait for it.
    PlayStop.onMainThread = { [unowned self] in
      var request = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
      if poll(&request, 1, 0) > 0 {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(STDIN_FILENO, &bytes, bytes.count)
        if count > 0 { self.typedAhead += bytes[..<count] }
      }
      return self.typedAhead.contains(UInt8(ascii: "q"))
        || self.typedAhead.contains(UInt8(ascii: "Q"))
    }
    defer { PlayStop.onMainThread = { false } }
    if !store.canFollow {
      message =
        "read-only and opened without its log: edits made elsewhere will not appear (q quits)"
    }
    draw(shown.project)
    var lastDraw = ContinuousClock.now
    while !Interrupt.requested() {
      if ContinuousClock.now - lastLook > .milliseconds(200) {
        lastLook = .now
        try checkStillOpened()
      }
      if headMoved.value.exchange(false, ordering: .acquiring) {
        do { try followHead() } catch { say(describe(error)) }
      }
      if Resize.happened() { draw(shown.project) }
      if let player { listen(to: player) }
      if Suspend.requested() {
        // As play's: the player, if any, fades out and closes its device while stopped, and
        // opens it again on SIGCONT.
        _ = player?.suspend()
        Suspend.stop(
          leave: {
            write(leave)
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
          },
          back: {
            player?.resume()
            tcsetattr(STDIN_FILENO, TCSANOW, &settings)
            write(enter)
            draw(shown.project)
          })
      }
      // Keys typed while a decode held this thread (space on a version not decoded yet).
      let typed = typedAhead
      typedAhead = []
      if !typed.isEmpty {
        do {
          if try !handle(keyInput.take(typed)) { return }
        } catch let replaced as FileReplaced {
          throw replaced
        } catch {
          say(describe(error))
        }
      }
      var request = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
      if poll(&request, 1, 25) > 0 {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(STDIN_FILENO, &bytes, bytes.count)
        if count > 0 {
          // A version that cannot be read (a read-only project changed under us) is a line
          // in the footer, not the end of the session. An arrow split between two reads
          // (many keys at once) is kept whole for the next.
          do {
            if try !handle(keyInput.take(bytes[..<count])) { return }
          } catch let replaced as FileReplaced {
            throw replaced
          } catch {
            say(describe(error))
          }
        }
      }
      if playing, ContinuousClock.now - lastDraw > .milliseconds(50) {
        lastDraw = .now
        draw(shown.project)
      }
    }
  }

  /// Handles keys; false for `q`.
  private func handle(_ bytes: [UInt8]) throws -> Bool {
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      // A control sequence, read whole: ESC [ parameters… final, or ESC O final (arrows in
      // the terminal's application mode). F9 is ESC [ 2 0 ~: none of its bytes is a key.
      if byte == 0x1B, index + 1 < bytes.count,
        bytes[index + 1] == UInt8(ascii: "[") || bytes[index + 1] == UInt8(ascii: "O")
      {
        var end = index + 2
        while end < bytes.count, (0x20...0x3F).contains(bytes[end]) { end += 1 }
        guard end < bytes.count else { break }
        // More keys read with this one (← held, or pressed 20 times): each steps, and only the
        // last step is animated, so 20 steps take one animation, not 20.
        keysQueued = end + 1 < bytes.count
        defer { keysQueued = false }
        try control(
          final: bytes[end], parameters: String(decoding: bytes[(index + 2)..<end], as: UTF8.self))
        index = end + 1
        continue
      }
      switch byte {
      case UInt8(ascii: "q"), UInt8(ascii: "Q"):
        PlayStop.request()
        return false
      case UInt8(ascii: " "): togglePlay()
      case UInt8(ascii: "+"), UInt8(ascii: "="): zoom(0.5)
      case UInt8(ascii: "-"), UInt8(ascii: "_"): zoom(2)
      case UInt8(ascii: "<"), UInt8(ascii: ","): scroll(-0.25)
      case UInt8(ascii: ">"), UInt8(ascii: "."): scroll(0.25)
      case UInt8(ascii: "0"): fitAll()
      case 0x0D, 0x0A: try checkout()
      default: break
      }
      index += 1
    }
    return true
  }

  /// Arrows and Page Up / Page Down; other control sequences (function keys…) do nothing.
  private func control(final: UInt8, parameters: String) throws {
    switch (Character(Unicode.Scalar(final)), parameters) {
    case ("D", ""):
      if let parent = parentOfShown {
        try go(to: parent)
      } else {
        say("v\(shown.version) is the first version")
      }
    case ("C", ""):
      if let next = next(after: shown.version) {
        try go(to: next)
      } else {
        say("v\(shown.version) is the newest version on this branch")
      }
    case ("A", ""): chooseBranch(-1)
    case ("B", ""): chooseBranch(1)
    case ("~", "5"): scrollTracks(-1)
    case ("~", "6"): scrollTracks(1)
    default: break
    }
  }

  // MARK: The view: zoom, scroll, tracks

  /// Shows `factor` times the span, around its middle (or the playhead while playing).
  private func zoom(_ factor: Double) {
    let rate = Int64(shown.project.sampleRate)
    let centre = playing ? (player?.status.position ?? viewStart) : viewStart + span / 2
    let wanted = Int64(Double(span) * factor)
    span = min(max(wanted, rate / 10), max(fullSpan, rate * 10) * 2)
    zoomed = true
    viewStart = max(0, centre - span / 2)
    draw(shown.project)
  }

  private func scroll(_ share: Double) {
    viewStart = max(0, viewStart + Int64(Double(span) * share))
    zoomed = true
    draw(shown.project)
  }

  /// Back to the whole project on screen.
  private func fitAll() {
    zoomed = false
    viewStart = 0
    span = fullSpan
    draw(shown.project)
  }

  /// The whole project, and 10 s at least.
  private var fullSpan: Int64 {
    max(shown.project.timelineEnd.frames, Int64(shown.project.sampleRate) * 10)
  }

  private func scrollTracks(_ pages: Int) {
    var size = winsize()
    _ = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size)
    let page = max(1, Int(size.ws_row) - 6)
    firstTrack = max(0, min(firstTrack + pages * page, shown.project.tracks.count - 1))
    draw(shown.project)
  }

  /// The player's news in the footer: a version it cannot play, a source file gone; and a
  /// play that ended (a device lost), which the header then no longer calls playing (space
  /// starts a new one).
  private func listen(to player: LivePlayer) {
    let lines = player.takeMessages() + (library?.takeNotices() ?? [])
    // A project played once keeps saying so beside the play's latest news (a notice that
    // memory could not be locked must not hide why the play did not loop).
    if let newest = lines.last { playNews = newest }
    let news = [playedOnce, playNews].compactMap { $0 }.joined(separator: " — ")
    if !lines.isEmpty { say(news) }
    guard !player.isPlaying else { return }
    let report = player.wait()
    self.player = nil
    library = nil
    playing = false
    // A failure's line says that playback stopped.
    say(report.failure.map { "\($0)" } ?? (news.isEmpty ? "playback stopped" : news))
    playedOnce = nil
    playNews = nil
  }

  /// A line in the footer until the next step.
  private func say(_ text: String) {
    message = text
    draw(shown.project)
  }

  private func chooseBranch(_ step: Int) {
    let options = tree.children(of: shown.version)
    guard options.count > 1 else {
      message = "no fork at v\(shown.version)"
      draw(shown.project)
      return
    }
    let current = next(after: shown.version).flatMap { options.firstIndex(of: $0) } ?? 0
    branch[shown.version] = (current + step + options.count) % options.count
    message = ""
    draw(shown.project)
  }

  /// Steps to `version` (read from the version on screen: one changeset for a neighbour),
  /// animating the change, and has the player follow.
  private func go(to version: Int64) throws {
    let (next, diff) = try store.step(from: shown, to: version)
    show(next, diff: diff)
  }

  /// Puts `next` on screen, animating `diff`, and has the player follow.
  private func show(_ next: StoreVersion, diff: ProjectDiff) {
    if !zoomed { span = max(span, next.project.timelineEnd.frames) }
    shown = next
    message = ""
    player?.offer(next.project, version: next.version, cause: "scrub")
    // A key pressed meanwhile (← held down) cuts the animation short: the steps keep up with
    // the keys instead of queueing 150 ms each.
    for frame in 1...Self.animationFrames {
      var request = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
      if keysQueued || (frame < Self.animationFrames && poll(&request, 1, 0) > 0) {
        draw(next.project)
        return
      }
      draw(diff.interpolated(at: Double(frame) / Double(Self.animationFrames), easing: .smooth))
      if frame < Self.animationFrames { usleep(Self.frameMicroseconds) }
    }
  }

  /// Another process moved the head: the history grows; a screen that showed the head
  /// follows it.
  private func followHead() throws {
    let wasHead = shown.version == history.head
    tree = HistoryTree(try store.history())
    if wasHead && shown.version != history.head {
      try go(to: history.head)
    } else if wasHead {
      // A commit folded into the head version (a drag, coalesced) changed it in place: the
      // version on screen is read afresh from the head.
      let fresh = try store.read(history.head)
      if fresh.project != shown.project {
        show(fresh, diff: ProjectDiff(from: shown.project, to: fresh.project))
      }
    } else {
      draw(shown.project)
    }
  }

  private func togglePlay() {
    if player == nil {
      let project = shown.project
      let library = AudioLibrary(
        cache: PlayStop.stoppable(AudioCache(forProject: file, lockingMemory: true)))
      do {
        try checkEffects(project)
        let effects = PlayerEffects(
          bypassMissing: false, projectFolder: RawPath.folder(ofProject: file))
        // A project shorter than the loop's wrap fades plays once: looped, it would click at
        // every wrap.
        let shortfall = LivePlayer.loopShortfall(
          FrameCount(project.timelineEnd.frames), sampleRate: project.sampleRate)
        let started = try LivePlayer(
          LivePlayer.Configuration(
            device: DeviceRequest(name: device), sampleRate: project.sampleRate,
            channels: project.channels, range: 0..<Int64.max, loop: shortfall == nil),
          compile: { project, version, sequence in
            try effects.compile(
              project, version: version, sequence: sequence, audio: library.audio(for: project))
          },
          load: { audio, chunk in try library.makeResident(audio, chunk) })
        effects.prepare(for: started, project: project)
        try started.start(project, version: shown.version)
        player = started
        self.library = library
        playing = true
        playNews = nil
        playedOnce = shortfall.map {
          "v\(shown.version) plays once: a loop over its \($0); space plays it again"
        }
        if let playedOnce { message = playedOnce }
      } catch {
        message = "cannot play: \(describe(error))"
      }
    } else if let player {
      playing.toggle()
      player.setPaused(!playing)
    }
    draw(shown.project)
  }

  /// Ends the session (exit 66) when the path no longer names the file opened: its versions
  /// are not the other file's, and a checkout would move that file's head.
  private func checkStillOpened() throws {
    guard let now = FileIdentity(path: file), now.isSameFile(as: identity) else {
      PlaySession.removeOrphans(of: file, log: openedLog.log, shared: openedLog.shared)
      throw FileReplaced(
        description:
          "\(file) was deleted or replaced while it was scrubbed; nothing was written to it; scrub the new one"
      )
    }
  }

  /// Checks out the version on screen, exactly as `tape checkout` does, in the file that was
  /// opened: the path is compared with it before the writer opens and after (a file moved
  /// over it in between is refused, never written).
  ///
  /// While another process holds the write lock it waits (up to TAPE_BUSY_TIMEOUT, 5 s by
  /// default) in tries of 0.1 s, the screen and keys live between them: `q` or Ctrl-C cancels
  /// the checkout (and then quits), other keys are handled once it is done.
  private func checkout() throws {
    try checkStillOpened()
    let version = shown.version
    let limit = busyTimeout
    let started = ContinuousClock.now
    while true {
      do {
        // Closed right after its one move: a large one written at once, as `tape checkout`
        // writes it (kept pending, the close would write it again).
        let writer = try TimelineStore.open(
          at: file, access: .write, busyTimeout: min(Self.busyTry, limit),
          keepingLargeMovesPending: false)
        do {
          try checkStillOpened()
          try writer.checkout(version)
        } catch {
          try? writer.close()
          throw error
        }
        try writer.close()
        tree = HistoryTree(try store.history())
        message = "checked out v\(version)"
        break
      } catch StoreError.busy where ContinuousClock.now - started < .seconds(limit) {
        message =
          "checking out v\(version): the project is busy (another tape process is writing to it); waiting up to \(Int(limit.rounded(.up))) s, q cancels"
        if waitingKeysCancel() {
          message = "checkout of v\(version) cancelled; the head stays at v\(history.head)"
          break
        }
        draw(shown.project)
      } catch let replaced as FileReplaced {
        throw replaced
      } catch {
        message = describe(error)
        break
      }
    }
    draw(shown.project)
  }

  /// One try at the write lock while a checkout waits for it (s).
  static let busyTry = 0.1

  /// Keys typed while a write waits, kept for afterwards; true when they (or a signal) cancel it.
  private func waitingKeysCancel() -> Bool {
    if Interrupt.requested() { return true }
    var request = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
    if poll(&request, 1, 0) > 0 {
      var bytes = [UInt8](repeating: 0, count: 64)
      let count = read(STDIN_FILENO, &bytes, bytes.count)
      if count > 0 { typedAhead += bytes[..<count] }
    }
    return typedAhead.contains(UInt8(ascii: "q")) || typedAhead.contains(UInt8(ascii: "Q"))
  }

  // MARK: Drawing

  private func draw(_ project: Project) {
    var size = winsize()
    _ = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size)
    let width = size.ws_col > 0 ? Int(size.ws_col) : 80
    let height = size.ws_row > 0 ? Int(size.ws_row) : 24
    let label = tree.label(of: shown.version) ?? ""
    // A zoomed view follows the playhead.
    if playing, zoomed, let position = player?.status.position,
      position < viewStart || position >= viewStart + span
    {
      viewStart = max(0, position - span / 10)
    }
    // The versions first: a narrow terminal cuts the label, not the head.
    var header = "v\(shown.version)   head v\(history.head)"
    let options = tree.children(of: shown.version)
    if options.count > 1, let next = next(after: shown.version),
      let index = options.firstIndex(of: next)
    {
      header += "   fork: → v\(next) (branch \(index + 1)/\(options.count), ↑/↓)"
    }
    if let player {
      let status = player.status
      header +=
        "   \(playing ? "playing" : "paused") \(TimeValue.clock(FrameCount(status.position), sampleRate: project.sampleRate))"
    }
    header += "   \"\(label)\""
    let footer =
      message.isEmpty
      ? "←/→ versions  ↑/↓ branch  space play/pause  enter checkout  q quit  +/- zoom  </> scroll  0 all  PgUp/PgDn tracks"
      : message
    let lines = TimelineScreen.lines(
      of: project, width: width, height: height, span: span, start: viewStart,
      firstTrack: firstTrack,
      playhead: playing ? player?.status.position : nil, header: header, footer: footer)
    write("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n"))
  }

  private func write(_ text: String) {
    writeWhole(text, to: STDOUT_FILENO)
  }
}

/// An atomic flag shared by reference.
private final class AtomicFlag: Sendable {
  let value = Atomic<Bool>(false)
}
