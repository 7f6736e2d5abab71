internal import CALSA
import Foundation
internal import Logging
import Synchronization

// Every call into ALSA goes through this file, which turns its results into `PlaybackError`s.

/// Facts about the ALSA library Tape is running against.
public enum ALSALibrary {
  /// The runtime alsa-lib version, such as "1.2.8".
  public static var version: String {
    String(cString: snd_asoundlib_version())
  }
}

/// libjack's own diagnostics ("Cannot lock down … byte memory area", "Cannot use real-time
/// scheduling", "JackClient::AcquireSelfRealTime error"…), which it prints on stderr when ALSA's
/// jack plugin opens a client: Tape says what matters in its own words (the priority line of
/// `tape play`), so they go to the debug log (`tape -v`) instead.
///
/// libjack's error and info hooks are process-wide and must be set before the plugin opens its
/// client, so libjack is loaded here when the system has it (it stays loaded, as the plugin
/// would keep it); without libjack there is nothing to silence.
enum JackMessages {
  private static let logger = Logger(label: "tape.playback.jack")
  /// What libjack said lately (at most 16 lines), to explain a device that would not open.
  private static let recent = Mutex<[String]>([])

  /// Why a JACK device did not open, in Tape's words, when libjack said why.
  static var explanation: String? {
    let said = recent.withLock { $0 }
    if said.contains(where: { $0.contains("server is not running") }) {
      return "its JACK server is not running; start jackd, or check JACK_DEFAULT_SERVER"
    }
    return nil
  }

  /// Sets the hooks once; true when libjack is on this system.
  static let silenced: Bool = {
    guard let library = dlopen("libjack.so.0", RTLD_LAZY | RTLD_LOCAL) else { return false }
    typealias Hook = @convention(c) (UnsafePointer<CChar>?) -> Void
    typealias SetHook = @convention(c) (Hook?) -> Void
    let hook: Hook = { message in
      guard let message else { return }
      let text = String(cString: message)
      JackMessages.logger.debug("libjack: \(text)")
      JackMessages.recent.withLock { $0 = Array(($0 + [text]).suffix(16)) }
    }
    for name in ["jack_set_error_function", "jack_set_info_function"] {
      if let symbol = dlsym(library, name) { unsafeBitCast(symbol, to: SetHook.self)(hook) }
    }
    return true
  }()
}

/// What a player asks of a device: its name and the period and buffer it wants.
public struct DeviceRequest: Sendable, Hashable {
  public var name: String
  /// Frames per period at the device's rate: the audio thread writes this many at a time.
  public var period: Int
  /// Whether ``period`` was asked for by name (`--period`): the device must take exactly it.
  /// Otherwise it is only the preferred one, and the nearest the device takes is used (a JACK
  /// device takes only multiples of JACK's own; behind ALSA's rate converter, which Tape uses
  /// only for a rate it cannot convert to itself, only periods that convert to such multiples).
  public var exactPeriod: Bool
  /// Periods in the device's buffer (latency = period × periods); nil:
  /// ``automaticPeriods(sampleRate:realtime:)``.
  public var periods: Int?
  /// The buffer exactly, in frames, over ``periods`` (a device opened again after a stop
  /// asks for the buffer it had).
  var bufferFrames: Int?

  public static let periodRange = 16...16_384
  public static let periodsRange = 2...32
  /// The period asked for when none is named.
  public static let defaultPeriod = 256

  /// A request for exactly `period` frames per period, or (nil) for ``defaultPeriod`` or the
  /// nearest the device takes.
  public init(name: String = "default", period: Int? = nil, periods: Int? = nil) {
    self.name = name
    self.period = period ?? Self.defaultPeriod
    self.exactPeriod = period != nil
    self.periods = periods
  }

  /// Refuses values no device takes before any is asked (ALSA's `_near` calls would silently
  /// round `--period 7` to something else).
  public func validate() throws(PlaybackError) {
    guard Self.periodRange.contains(period) else {
      throw .badPeriod(period: period, range: Self.periodRange)
    }
    if let periods, !Self.periodsRange.contains(periods) {
      throw .badPeriods(periods: periods, range: Self.periodsRange)
    }
  }

  /// The buffer a player gets when it asks for none: 4 periods when its audio thread will run
  /// under SCHED_FIFO; at normal priority, enough periods for at least
  /// ``normalPriorityBuffer`` seconds.
  ///
  /// Why: a SCHED_OTHER thread on a loaded machine can wait tens of milliseconds for a core
  /// (a compiler on every core, say), and 4 × 256 frames at 48 kHz is 21 ms: such a play drops
  /// periods that a realtime thread never would. The longer buffer only delays what is heard
  /// (an edit, a seek) by the buffer's length.
  public func automaticPeriods(sampleRate: Int, realtime: Bool) -> Int {
    if let periods { return periods }
    guard !realtime else { return 4 }
    let wanted = Int((Self.normalPriorityBuffer * Double(sampleRate)).rounded(.up))
    return min(Self.periodsRange.upperBound, max(4, (wanted + period - 1) / period))
  }

  /// Seconds of buffer a player at normal priority asks for (see
  /// ``automaticPeriods(sampleRate:realtime:)``).
  public static let normalPriorityBuffer = 0.08
}

/// An open ALSA playback device taking interleaved float32 frames, with the period and buffer
/// asked for exactly; closed by ``close()`` or on deinit.
///
/// The hardware parameters are set one by one (access, format, channels, rate, period, buffer),
/// so a refusal names what was refused. The rate is the project's when the device takes it,
/// else the device's own nearest to it (``rate``), to which Tape converts (``RateConverter``):
/// ALSA's rate plugin is kept out (`SND_PCM_NO_AUTO_RESAMPLE`), because it converts a period
/// of whole frames into a period of whole frames, whose ratio is not the rates' (235 → 256
/// frames is 1.0894, not 48,000 / 44,100 = 1.0884: 1.5 cents flat, 3 s an hour late). When the
/// device itself does not take float32 or the channel count, it is opened again through
/// ALSA's `plug` layer, which converts those (``viaPlug``); a device that takes them directly
/// is never converted. Only a rate Tape cannot convert to (``RateConversion``) is left
/// to the plug layer's rate converter, as before. The period is never rounded: a device that
/// refuses it (the JACK plugin takes only multiples of JACK's own period) is an error naming
/// the period it would take.
final class ALSAOutput {
  private let handle: OpaquePointer
  let name: String
  let channels: Int
  /// The period and buffer the device granted, in frames at ``rate``.
  let period: Int
  let bufferFrames: Int
  /// The device's sample rate: the project's, or the one Tape converts to.
  let rate: Int
  /// Opened through `plug:` to convert the format or the channels (or, for a rate Tape cannot
  /// convert to, the rate: then ``rate`` is the project's).
  let viaPlug: Bool
  private var closed = false

  init(request: DeviceRequest, sampleRate: Int, channels: Int) throws(PlaybackError) {
    try request.validate()
    tape_alsa_silence_library_errors()
    _ = JackMessages.silenced
    let noResample = Int32(SND_PCM_NO_AUTO_RESAMPLE)
    do {
      (handle, period, bufferFrames, rate) = try Self.open(
        request.name, mode: noResample, request: request, sampleRate: sampleRate,
        channels: channels)
      viaPlug = false
    } catch .cannotConfigure(_, let what, let reason)
      where what != "the period" && what != "the buffer"
    {
      // The device does not take the format or channels: let ALSA's plug layer convert them
      // (and the rate only where Tape cannot).
      do {
        do {
          (handle, period, bufferFrames, rate) = try Self.open(
            "plug:\(request.name)", mode: noResample, request: request, sampleRate: sampleRate,
            channels: channels)
        } catch .cannotConfigure(_, let refused, _) where refused == "\(sampleRate) Hz" {
          (handle, period, bufferFrames, rate) = try Self.open(
            "plug:\(request.name)", mode: 0, request: request, sampleRate: sampleRate,
            channels: channels)
        }
        viaPlug = true
      } catch .periodRefused(let device, let period, let suggestion) {
        // The plug layer takes the format, rate and channels: the period is what is refused.
        throw .periodRefused(device: device, period: period, suggestion: suggestion)
      } catch {
        throw .cannotConfigure(device: request.name, what: what, reason: reason)
      }
    }
    name = request.name
    self.channels = channels
  }

  deinit {
    close()
  }

  /// Closes the device (a JACK client leaves the graph). Nothing may use ``device`` after.
  func close() {
    guard !closed else { return }
    closed = true
    snd_pcm_close(handle)
  }

  private static func open(
    _ name: String, mode: Int32, request: DeviceRequest, sampleRate: Int, channels: Int
  ) throws(PlaybackError) -> (OpaquePointer, Int, Int, Int) {
    var pcm: OpaquePointer?
    // Non-blocking: the audio thread waits in snd_pcm_wait with a timeout, so a device that
    // stops taking audio (a JACK server that died) is noticed instead of blocking forever.
    let opened = snd_pcm_open(&pcm, name, SND_PCM_STREAM_PLAYBACK, Int32(SND_PCM_NONBLOCK) | mode)
    guard opened >= 0, let pcm else {
      throw .cannotOpen(
        device: request.name,
        reason: JackMessages.explanation ?? String(cString: snd_strerror(opened)))
    }
    var parameters: OpaquePointer?
    snd_pcm_hw_params_malloc(&parameters)
    defer { snd_pcm_hw_params_free(parameters) }
    func check(_ result: Int32, _ what: String) throws(PlaybackError) {
      guard result >= 0 else {
        snd_pcm_close(pcm)
        throw .cannotConfigure(
          device: request.name, what: what, reason: String(cString: snd_strerror(result)))
      }
    }
    try check(snd_pcm_hw_params_any(pcm, parameters), "any configuration")
    try check(
      snd_pcm_hw_params_set_access(pcm, parameters, SND_PCM_ACCESS_RW_INTERLEAVED),
      "interleaved access")
    try check(
      snd_pcm_hw_params_set_format(pcm, parameters, SND_PCM_FORMAT_FLOAT_LE), "32-bit float")
    try check(
      snd_pcm_hw_params_set_channels(pcm, parameters, UInt32(channels)),
      channels == 1 ? "1 channel" : "\(channels) channels")
    var rate = UInt32(sampleRate)
    if snd_pcm_hw_params_set_rate(pcm, parameters, rate, 0) < 0 {
      // Not the project's rate: the device's own nearest to it, if Tape converts to it.
      var direction: Int32 = 0
      let near = snd_pcm_hw_params_set_rate_near(pcm, parameters, &rate, &direction)
      let convertible = RateConversion(from: sampleRate, to: Int(rate)) != nil
      try check(near < 0 ? near : convertible ? 0 : -EINVAL, "\(sampleRate) Hz")
    }
    var period = snd_pcm_uframes_t(request.period)
    if request.exactPeriod {
      let periodResult = snd_pcm_hw_params_set_period_size(pcm, parameters, period, 0)
      if periodResult < 0 {
        // Which period would it take? Ask near, only to name it in the message.
        var near = period
        var direction: Int32 = 0
        snd_pcm_hw_params_set_period_size_near(pcm, parameters, &near, &direction)
        snd_pcm_close(pcm)
        throw .periodRefused(device: request.name, period: request.period, suggestion: Int(near))
      }
      let periods = request.automaticPeriods(
        sampleRate: Int(rate), realtime: RealtimeThread.permitted)
      let buffer = snd_pcm_uframes_t(request.bufferFrames ?? request.period * periods)
      try check(snd_pcm_hw_params_set_buffer_size(pcm, parameters, buffer), "the buffer")
      try check(snd_pcm_hw_params(pcm, parameters), "the configuration")
    } else if let found = settle(pcm, parameters, request: request, sampleRate: Int(rate)) {
      period = found
    } else {
      var near = period
      var direction: Int32 = 0
      snd_pcm_hw_params_set_period_size_near(pcm, parameters, &near, &direction)
      snd_pcm_close(pcm)
      throw .periodRefused(device: request.name, period: request.period, suggestion: Int(near))
    }
    var granted = snd_pcm_uframes_t(0)
    var direction: Int32 = 0
    snd_pcm_hw_params_get_period_size(parameters, &period, &direction)
    snd_pcm_hw_params_get_buffer_size(parameters, &granted)
    // Start once the buffer is full; wake the writer a period at a time.
    var software: OpaquePointer?
    snd_pcm_sw_params_malloc(&software)
    defer { snd_pcm_sw_params_free(software) }
    snd_pcm_sw_params_current(pcm, software)
    snd_pcm_sw_params_set_start_threshold(pcm, software, granted)
    snd_pcm_sw_params_set_avail_min(pcm, software, period)
    try check(snd_pcm_sw_params(pcm, software), "the start threshold")
    return (pcm, Int(period), Int(granted), Int(rate))
  }

  /// With no period named: the preferred period, else the nearest the device takes, with a
  /// buffer of about the automatic length that it takes; tried from the preferred period up
  /// to 8 times it, with the buffer doubled if need be, until the device takes the whole
  /// configuration. `parameters` (with the format, channels and rate set) is then the
  /// configuration installed; nil when none was taken.
  ///
  /// Why a search: behind ALSA's rate converter a JACK device takes only periods that convert
  /// to multiples of JACK's own, and a buffer that converts to a multiple of them, and the
  /// plug layer cannot say which: at 44.1 kHz on a 48 kHz, 256-frame JACK server, 256 is
  /// refused, and the nearest it offers (235) is taken only with a buffer of 8 periods.
  private static func settle(
    _ pcm: OpaquePointer, _ parameters: OpaquePointer?, request: DeviceRequest, sampleRate: Int
  ) -> snd_pcm_uframes_t? {
    var trial: OpaquePointer?
    snd_pcm_hw_params_malloc(&trial)
    defer { snd_pcm_hw_params_free(trial) }
    var wanted = request.period
    while wanted <= DeviceRequest.periodRange.upperBound {
      for stretch in [1, 2] {
        snd_pcm_hw_params_copy(trial, parameters)
        var period = snd_pcm_uframes_t(wanted)
        if snd_pcm_hw_params_set_period_size(pcm, trial, period, 0) < 0 {
          var direction: Int32 = 0
          guard snd_pcm_hw_params_set_period_size_near(pcm, trial, &period, &direction) >= 0,
            DeviceRequest.periodRange.contains(Int(period))
          else { continue }
        }
        var flexible = request
        flexible.period = Int(period)
        let periods = flexible.automaticPeriods(
          sampleRate: sampleRate, realtime: RealtimeThread.permitted)
        var buffer = snd_pcm_uframes_t(Int(period) * periods * stretch)
        guard snd_pcm_hw_params_set_buffer_size_near(pcm, trial, &buffer) >= 0,
          snd_pcm_hw_params(pcm, trial) >= 0
        else { continue }
        snd_pcm_hw_params_copy(parameters, trial)
        return period
      }
      wanted *= 2
    }
    return nil
  }

  /// The open device as the audio thread holds it: a handle, no reference.
  struct PCM: @unchecked Sendable, BitwiseCopyable {
    let handle: OpaquePointer
    let channels: Int
    /// How long a write may wait for room before the device counts as stalled (ms).
    let patience: Int32
  }

  /// How long a device may take no audio at all before playback gives up on it.
  static let stallMilliseconds: Int32 = 2_000
  /// One wait for room (ms); ``stallMilliseconds`` is this many in a row that found none.
  static let waitSliceMilliseconds: Int32 = 100

  var device: PCM { PCM(handle: handle, channels: channels, patience: Self.stallMilliseconds) }

  /// Frames written but not yet played (ALSA's `snd_pcm_delay`; 0 when it cannot say): the
  /// playback latency the device reports. Allocates nothing.
  static func delay(_ pcm: PCM) -> Int64 {
    var delay = snd_pcm_sframes_t(0)
    return snd_pcm_delay(pcm.handle, &delay) >= 0 ? Int64(delay) : 0
  }

  /// What one write came to.
  enum WriteResult {
    case written
    /// An underrun (or suspend) was recovered; the frames were written after it.
    case recoveredXrun
    /// ALSA's error code: the device went away, or recovery failed.
    case failed(Int32)
    /// The device took nothing for ``stallMilliseconds``.
    case stalled
  }

  /// Writes `frames` frames, waiting for the device as needed: the one blocking call of the
  /// audio thread, by design outside the realtime annotations. Allocates nothing, throws
  /// nothing (a failure is a code, turned into an error by ``failure(_:)`` afterwards).
  /// `watch` counts the dropouts the device does not report (``DropoutWatch``).
  static func write(
    _ pcm: PCM, _ samples: UnsafePointer<Float>, frames: Int, watch: inout DropoutWatch
  ) -> WriteResult {
    watch.begin(at: RealtimeThread.now())
    defer {
      watch.end(
        at: RealtimeThread.now(), continued: LivePlayer.continuations, playing: playing(pcm))
    }
    var done = 0
    var result = WriteResult.written
    // Waits that found no room, in a row: the stall is counted in slices of waiting, not by
    // the clock, so time the process spent stopped (Ctrl-Z, then `fg`) counts as one slice
    // at most instead of ending the play.
    var emptyWaits: Int32 = 0
    while done < frames {
      if let room = room(pcm) {
        let skipped = watch.skip(room: room)
        if skipped > 0 { _ = snd_pcm_forward(pcm.handle, snd_pcm_uframes_t(skipped)) }
      }
      let written = snd_pcm_writei(
        pcm.handle, samples + done * pcm.channels, snd_pcm_uframes_t(frames - done))
      switch step(after: Int(written)) {
      case .wrote(let count):
        done += count
      case .waitForRoom:
        // Full: wait for room (the pacing), but not forever.
        let ready = snd_pcm_wait(pcm.handle, Self.waitSliceMilliseconds)
        if ready == 0 {
          emptyWaits += 1
          if emptyWaits * Self.waitSliceMilliseconds >= pcm.patience { return .stalled }
          continue
        }
        emptyWaits = 0
        if ready < 0 && ready != -EPIPE && ready != -ESTRPIPE { return .failed(ready) }
        if ready > 0 { continue }
        result = .recoveredXrun
        let recovered = snd_pcm_recover(pcm.handle, ready, 1)
        guard recovered >= 0 else { return .failed(recovered) }
      case .recover(let error, let xrun):
        if xrun { result = .recoveredXrun }
        let recovered = snd_pcm_recover(pcm.handle, error, 1)
        guard recovered >= 0 else { return .failed(recovered) }
      case .fail(let error):
        return .failed(error)
      }
    }
    return result
  }

  /// What a write does after `snd_pcm_writei` returned `written`.
  enum WriteStep: Equatable {
    case wrote(Int)
    /// Nothing was taken: wait until the device has room.
    case waitForRoom
    /// An error `snd_pcm_recover` handles (`xrun`: an underrun or a suspend, counted).
    case recover(Int32, xrun: Bool)
    /// The device is gone.
    case fail(Int32)
  }

  /// The write loop's decision, alone. 0 frames written is no progress: it waits like
  /// `-EAGAIN` (retrying at once would be a busy loop on a SCHED_FIFO thread).
  static func step(after written: Int) -> WriteStep {
    if written > 0 { return .wrote(written) }
    let error = Int32(written)
    if error == 0 || error == -EAGAIN { return .waitForRoom }
    if error == -ENODEV || error == -EBADFD || error == -ESHUTDOWN || error == -EIO {
      return .fail(error)
    }
    return .recover(error, xrun: error == -EPIPE || error == -ESTRPIPE)
  }

  /// Whether the device is playing (`SND_PCM_STATE_RUNNING`). Compared as numbers: `==` on
  /// the C enum would make the Swift runtime build its type's metadata on the audio thread,
  /// the first time (two allocations, seen by the allocation counter).
  private static func playing(_ pcm: PCM) -> Bool {
    snd_pcm_state(pcm.handle).rawValue == SND_PCM_STATE_RUNNING.rawValue
  }

  /// The room in the device's buffer (what a write would take at once) while it plays; nil
  /// when it has not started (or stopped), or on an error (which the next write reports).
  /// More room than the buffer holds: the device played past what was written, and the
  /// write moves on to where it reads (`snd_pcm_forward`), so that the next frames written
  /// are the next heard and none is written behind it.
  private static func room(_ pcm: PCM) -> Int? {
    guard playing(pcm) else { return nil }
    let room = snd_pcm_avail_update(pcm.handle)
    return room >= 0 ? Int(room) : nil
  }

  /// The error a stalled device stands for.
  var stalled: PlaybackError {
    .deviceGone(
      device: name,
      reason:
        "it took no audio for \(Self.stallMilliseconds / 1_000) s; its server may have stopped")
  }

  /// The error a failed write's code stands for.
  func failure(_ code: Int32) -> PlaybackError {
    let reason = String(cString: snd_strerror(code))
    if code == -ENODEV || code == -EBADFD || code == -ESHUTDOWN || code == -EIO {
      return .deviceGone(device: name, reason: reason)
    }
    return .write(device: name, reason: reason)
  }

  /// Plays out what is buffered, then stops the device; false when it took longer than the
  /// buffer's length plus ``stallMilliseconds`` (a device that stopped taking audio), and what
  /// was left was dropped. Never a blocking `snd_pcm_drain`, which waits for such a device
  /// forever: the queue is watched going down instead.
  func drain(sampleRate: Int) -> Bool {
    if snd_pcm_state(handle) == SND_PCM_STATE_PREPARED {
      // Less than a start threshold's worth was written: start it, so it plays out.
      snd_pcm_start(handle)
    }
    let limit = Double(bufferFrames) / Double(sampleRate) + Double(Self.stallMilliseconds) / 1_000
    let deadline = Date().addingTimeInterval(limit)
    var played = true
    while snd_pcm_state(handle) == SND_PCM_STATE_RUNNING {
      var delay = snd_pcm_sframes_t(0)
      guard snd_pcm_delay(handle, &delay) >= 0, delay > 0 else { break }
      guard Date() < deadline else {
        played = false
        break
      }
      // A little less than what is queued, at most 10 ms at a time.
      usleep(UInt32(min(10_000, max(500, Int(delay) * 1_000_000 / sampleRate / 2))))
    }
    snd_pcm_drop(handle)
    return played
  }

  /// Drops what is buffered (a quit should be heard at once).
  func drop() {
    snd_pcm_drop(handle)
  }
}

/// Counts the dropouts a device played without reporting them, write by write (at most one
/// per write).
///
/// ALSA's JACK plugin reads its ring buffer every JACK cycle whether or not the player wrote
/// (alsa-plugins jack/pcm_jack.c): it never reports an underrun, it plays on from what is
/// left in its ring; and a process stopped with SIGSTOP stops its JACK client with it, which
/// stalls the whole JACK graph. A dropout is counted when:
/// - before a write, the device has more room than its buffer holds: it read past the last
///   frame written (the write then starts where it reads, so that nothing is written behind
///   it);
/// - the device thread was late, from the end of one write to the start of the next, by more
///   than the buffer and a period (by the monotonic clock): the device ran dry, though a
///   position that wraps at the buffer's length (the JACK plugin's) may not show it;
/// - the process was stopped (SIGSTOP, or a stop signal it did not catch) and continued since
///   the last write ended, the device open: ``LivePlayer/noteContinued()`` counts SIGCONTs.
///
/// The clock is only judged on a device that has paced the player (had less room than its
/// buffer): ALSA's `null` and `file` PCMs always have the whole buffer free. A JACK server
/// that stalls on its own (jackd's own xruns, while the player waits) is not counted: ALSA
/// does not say, and no frame the player wrote was lost. Underruns ALSA reports (`-EPIPE`)
/// are counted by the write, not here.
struct DropoutWatch: BitwiseCopyable {
  let bufferFrames: Int
  /// Nanoseconds of the buffer and a period at the device's rate.
  let limit: UInt64
  /// Whether the device has paced the player since the start.
  private(set) var paced = false
  /// Dropouts counted so far.
  private(set) var dropouts = 0
  /// When the last write ended while the device played (nanoseconds; 0: none to judge from).
  private var lastWrite: UInt64 = 0
  /// SIGCONTs counted when the last write ended.
  private var continued: Int
  /// Whether this write counted one already.
  private var counted = false

  /// `continued`: SIGCONTs so far (``LivePlayer/continuations``).
  init(bufferFrames: Int, period: Int, rate: Int, continued: Int) {
    self.bufferFrames = bufferFrames
    limit = UInt64(Double(bufferFrames + period) * 1e9 / Double(rate))
    self.continued = continued
  }

  /// A write starts at `now`.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  mutating func begin(at now: UInt64) {
    counted = false
    if paced && lastWrite != 0 && now > lastWrite && now - lastWrite > limit { count() }
  }

  /// Before each attempt of the write, the `room` in the device's buffer while it plays:
  /// the frames to skip first (more room than the buffer: it read past the end).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  mutating func skip(room: Int) -> Int {
    if room < bufferFrames { paced = true }
    guard room > bufferFrames else { return 0 }
    count()
    return room - bufferFrames
  }

  /// The write ended at `now`, `continued` SIGCONTs counted so far; `playing`: the device
  /// plays (it may pace the next).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  mutating func end(at now: UInt64, continued: Int, playing: Bool) {
    if continued != self.continued { count() }
    self.continued = continued
    lastWrite = playing ? now : 0
  }

  /// The device was opened again (`continued` SIGCONTs so far): nothing before counts.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  mutating func restart(continued: Int) {
    paced = false
    lastWrite = 0
    self.continued = continued
  }

  @_noLocks
  private mutating func count() {
    guard !counted else { return }
    counted = true
    dropouts += 1
  }
}
