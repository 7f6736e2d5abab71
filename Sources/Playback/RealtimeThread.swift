internal import CRealtime
import Foundation

/// A thread for the audio device: SCHED_FIFO when the system permits it, its stack locked in
/// memory, and its page faults counted.
///
/// Rule: lock only what the audio thread touches (its stack, the plans, the chunk memory it
/// reads), never `mlockall(MCL_FUTURE)`. Why: that would lock every later mapping, every
/// decoded chunk and every library the process loads.
enum RealtimeThread {
  /// SCHED_FIFO priority, as in the realtime findings (above JACK's clients, below the kernel's
  /// own threads).
  static let priority: Int32 = 70

  /// Starts `body` on a new thread; returns the thread and whether it runs under SCHED_FIFO
  /// (false: it runs at normal priority, because the system refused; the caller warns).
  static func start(_ body: @escaping @Sendable () -> Void) -> (pthread_t, realtime: Bool)? {
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { raw in
      guard let raw else { return nil }
      Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().body()
      return nil
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, 512 * 1_024)
    pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED))
    pthread_attr_setschedpolicy(&attributes, SCHED_FIFO)
    var parameters = sched_param(sched_priority: priority)
    pthread_attr_setschedparam(&attributes, &parameters)
    var thread = pthread_t()
    if pthread_create(&thread, &attributes, entry, context) == 0 { return (thread, true) }
    // Not permitted (no CAP_SYS_NICE, no rtprio limit): an ordinary thread.
    var plain = pthread_attr_t()
    pthread_attr_init(&plain)
    defer { pthread_attr_destroy(&plain) }
    pthread_attr_setstacksize(&plain, 512 * 1_024)
    if pthread_create(&thread, &plain, entry, context) == 0 { return (thread, false) }
    Unmanaged<Box>.fromOpaque(context).release()
    return nil
  }

  /// Whether this process may start a SCHED_FIFO thread (root, CAP_SYS_NICE or an rtprio
  /// limit), found once by starting one that returns at once.
  static let permitted: Bool = {
    let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { _ in nil }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED))
    pthread_attr_setschedpolicy(&attributes, SCHED_FIFO)
    var parameters = sched_param(sched_priority: priority)
    pthread_attr_setschedparam(&attributes, &parameters)
    var thread = pthread_t()
    guard pthread_create(&thread, &attributes, entry, nil) == 0 else { return false }
    pthread_join(thread, nil)
    return true
  }()

  /// Locks the calling thread's whole stack into memory (best effort).
  static func lockStack() {
    _ = tape_lock_thread_stack()
  }

  /// The calling thread's page faults so far (major: a disk read; minor: no disk).
  static func pageFaults() -> (major: Int, minor: Int) {
    var major = 0
    var minor = 0
    tape_thread_page_faults(&major, &minor)
    return (major, minor)
  }

  /// Nanoseconds of a monotonic clock (vDSO: no system call, no lock).
  static func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }

  /// A test's allocation counter (an `LD_PRELOAD`ed library exporting
  /// `tape_audio_thread_begin` and `tape_audio_thread_end`), told when the calling thread
  /// starts and stops being the audio thread; both nil without one. Looked up before the audio
  /// thread starts, so that telling it allocates nothing.
  typealias Hook = @convention(c) () -> Void

  static func audioThreadHooks() -> (begin: Hook?, end: Hook?) {
    // nil is RTLD_DEFAULT: every loaded object, a preloaded one first.
    func hook(_ name: String) -> Hook? {
      dlsym(nil, name).map { unsafeBitCast($0, to: Hook.self) }
    }
    return (hook("tape_audio_thread_begin"), hook("tape_audio_thread_end"))
  }

  private final class Box {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }
}
