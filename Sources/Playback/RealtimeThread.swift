internal import CRealtime
import Foundation
import Mixing
import Synchronization

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

  /// Locks the calling thread's whole stack into memory (best effort): 0, or the error
  /// number.
  static func lockStack() -> Int32 {
    tape_lock_thread_stack() == 0 ? 0 : errno
  }

  /// Locks `bytes` at `address` into memory: 0, or the error number (`ENOMEM` or `EPERM` past
  /// RLIMIT_MEMLOCK).
  static func lockMemory(_ address: UnsafeRawPointer, _ bytes: Int) -> Int32 {
    mlock(address, bytes) == 0 ? 0 : errno
  }

  /// Brings the code and constant data the audio thread runs (the program, the Swift and C
  /// runtimes, ALSA and its plugins, JACK, every LV2 plugin loaded) into memory, once for each
  /// set of loaded objects: locked when the process may lock without limit (root,
  /// `memlock unlimited`: ``mayLockCode``), else read a page at a time so that the page cache holds them (a
  /// limited budget, 8 MiB by default, is kept for the audio the thread reads). Why: pages mapped
  /// from files that the audio thread runs for the first time (a kind of swap first seen
  /// minutes in) are a disk read, a dropout, when the page cache has let them go.
  static func lockCode() {
    let loaded = tape_loaded_objects()
    let due = codeLock.withLock { covered in
      guard covered != loaded else { return false }
      covered = loaded
      return true
    }
    guard due else { return }
    var bytes: UInt = 0
    _ = tape_lock_code(mayLockCode ? 1 : 0, &bytes)
  }

  /// Whether ``lockCode()`` locks: as root (CAP_IPC_LOCK: no limit applies) or under an
  /// unlimited RLIMIT_MEMLOCK. Under a limit, code would take the budget the audio needs.
  static var mayLockCode: Bool { geteuid() == 0 || tape_memory_lock_limit() == 0 }

  /// How many loaded objects ``lockCode()`` last covered.
  private static let codeLock = Mutex<UInt64>(0)

  /// What a failure to lock memory means, and what to do about it: one line.
  static func lockFailure(_ code: Int32) -> String {
    let limit = tape_memory_lock_limit()
    let shown = limit == 0 ? "" : " (RLIMIT_MEMLOCK is \(limit / 1_024) KiB)"
    return
      "could not lock the audio thread's memory into RAM: \(String(cString: strerror(code)))\(shown); a page fault may cause a dropout. Raise the limit (ulimit -l, or memlock in /etc/security/limits.conf)"
  }

  /// The calling thread's page faults so far (major: a disk read; minor: no disk).
  static func pageFaults() -> (major: Int, minor: Int) {
    var major = 0
    var minor = 0
    tape_thread_page_faults(&major, &minor)
    return (major, minor)
  }

  /// Nanoseconds of a monotonic clock (vDSO: no system call, no lock).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  static func now() -> UInt64 {
    tape_monotonic_ns()
  }

  /// Nanoseconds of CPU time the calling thread has used (one system call: the device thread
  /// asks about once a second).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  static func threadCPUTime() -> UInt64 {
    tape_thread_cpu_ns()
  }

  /// The device thread's wait, before a period, for the audio it will read: true at once when
  /// it is in memory; otherwise it wakes the loader and checks again every 200 µs for up to
  /// `patience` nanoseconds. The one bounded exception to "the audio thread never blocks"
  /// besides the PCM write: it sleeps, but takes no lock and allocates nothing (checked), and
  /// ``LoaderWait`` bounds how often it may.
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  static func waitUntilReady(
    _ engine: UnsafeMutablePointer<EngineState>, frames: Int, patience: UInt64,
    loader: Wakeup.Handle
  ) -> Bool {
    if EngineState.isReady(engine, frames: frames) { return true }
    tape_post(loader.semaphore)
    let since = tape_monotonic_ns()
    while tape_monotonic_ns() - since < patience {
      tape_sleep_ns(200_000)
      if EngineState.isReady(engine, frames: frames) { return true }
    }
    return false
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

/// A wake-up call for a helper thread that the audio thread may make: a POSIX semaphore,
/// whose post takes no lock and allocates nothing (a `DispatchSemaphore` is a reference the
/// audio thread would retain and release).
final class Wakeup: @unchecked Sendable {
  /// The semaphore as the audio thread holds it: an address, no reference.
  struct Handle: @unchecked Sendable, BitwiseCopyable {
    let semaphore: UnsafeMutablePointer<sem_t>
  }

  let handle: Handle

  init() {
    let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    sem_init(semaphore, 0, 0)
    handle = Handle(semaphore: semaphore)
  }

  deinit {
    sem_destroy(handle.semaphore)
    handle.semaphore.deallocate()
  }

  /// Wakes the waiting thread (or the next wait).
  ///
  /// - Note: Realtime-safe: no allocation, no locks.
  @_noLocks
  static func signal(_ handle: Handle) {
    tape_post(handle.semaphore)
  }

  func signal() {
    Self.signal(handle)
  }

  /// Waits for a wake-up, at most `milliseconds`.
  func wait(milliseconds: Int) {
    _ = tape_wait(handle.semaphore, milliseconds)
  }
}
