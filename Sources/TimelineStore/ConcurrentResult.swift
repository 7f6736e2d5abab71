import Dispatch
import Synchronization

/// A value computed on another core while the caller goes on, then waited for: how a large
/// history move builds its snapshot in memory while SQLite writes its rows.
///
/// Why: the two halves of a move do not depend on each other (both start from the path's net
/// change) and each costs milliseconds when thousands of clips differ. Why not an actor or a
/// task: the caller is inside a database transaction on GRDB's serial queue and must wait
/// synchronously before it commits; a semaphore is the plain way to do that.
final class ConcurrentResult<Value: Sendable>: Sendable {
  private let result = Mutex<Result<Value, any Error>?>(nil)
  private let done = DispatchSemaphore(value: 0)

  /// Starts `work` on a global queue at once.
  init(_ work: @escaping @Sendable () throws -> Value) {
    DispatchQueue.global(qos: .userInitiated).async { [self] in
      let outcome = Result { try work() }
      result.withLock { $0 = outcome }
      done.signal()
    }
  }

  /// Waits for the work and returns its value or throws its error.
  func value() throws -> Value {
    done.wait()
    guard let outcome = result.withLock({ $0 }) else {
      throw StoreError.internalFailure("a concurrent result was read twice")
    }
    return try outcome.get()
  }
}
