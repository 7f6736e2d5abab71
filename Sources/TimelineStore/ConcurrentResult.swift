import Dispatch
import Synchronization

/// A value computed on another thread while the caller goes on, then taken: how a large
/// history move builds its snapshot in memory while SQLite writes its rows.
///
/// Why: the two halves of a move do not depend on each other (both start from the path's net
/// change) and each costs milliseconds when thousands of clips differ. Why not an actor or a
/// task: the caller is inside a database transaction on GRDB's serial queue and must have the
/// value before it commits.
///
/// Help or wait: whoever starts the work first does it. The work is offered to a global queue;
/// if no thread has taken it when the caller asks for the value, the caller does it itself,
/// so a busy or starved pool only loses the overlap, never delays the caller past doing the
/// work alone.
final class ConcurrentResult<Value: Sendable>: Sendable {
  private let work: @Sendable () throws -> Value
  private let started = Atomic<Bool>(false)
  private let result = Mutex<Result<Value, any Error>?>(nil)
  private let done = DispatchSemaphore(value: 0)

  /// Offers `work` to a global queue at once.
  init(_ work: @escaping @Sendable () throws -> Value) {
    self.work = work
    DispatchQueue.global(qos: .userInitiated).async { [self] in
      guard start() else { return }
      let outcome = Result { try work() }
      result.withLock { $0 = outcome }
      done.signal()
    }
  }

  /// Whether this call is the one that starts the work.
  private func start() -> Bool {
    started.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
      .exchanged
  }

  /// The work's value or error: done here if no thread has started it, else waited for.
  /// Call it once, or ``abandon()`` instead.
  func value() throws -> Value {
    if start() { return try work() }
    done.wait()
    guard let outcome = result.withLock({ $0 }) else {
      throw StoreError.internalFailure("a concurrent result finished without a value")
    }
    return try outcome.get()
  }

  /// The value is not wanted: work not started yet never starts; work under way finishes on
  /// its own thread and is dropped.
  func abandon() {
    _ = start()
  }
}
