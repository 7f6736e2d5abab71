public import Testing

/// A trait for the tests that start a paced JACK server (the dummy driver, realtime): each of
/// their test cases runs alone among them, in whichever suite or test target it is. A test
/// waiting for its turn is suspended, not blocked: its thread of the cooperative pool goes on
/// running other tests.
///
/// Why: on this 2-core machine two paced servers side by side, each with its player and
/// recorder, made jackd drop cycles of both captures (a CI run logged 42 xruns in one play),
/// and tests that judge where samples land failed by what the other test's server did: the
/// recordings' suite had been a serialized suite of its own, run beside the other paced ones.
/// Applied to a suite, the trait applies to every test case in it. The suites that hold a pool
/// thread for long without a server (many processes) take it too, so that in one test process
/// at most one such test holds a thread (TapeCLITests' `ManyProcessesTests`).
public struct OneJACKServerAtATime: TestTrait, SuiteTrait, TestScoping {
  public var isRecursive: Bool { true }

  public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
    // Each test case takes its turn; a suite holds none (its cases would wait for it).
    test.isSuite || testCase == nil ? nil : self
  }

  public func provideScope(
    for test: Test, testCase: Test.Case?,
    performing function: @Sendable () async throws -> Void
  ) async throws {
    await JACKTurns.shared.take()
    do {
      try await function()
    } catch {
      await JACKTurns.shared.give()
      throw error
    }
    await JACKTurns.shared.give()
  }
}

extension Trait where Self == OneJACKServerAtATime {
  /// Runs each test case with no other paced JACK server running in this process.
  public static var oneJACKServerAtATime: Self { Self() }
}

/// The turns: first come, first served.
private actor JACKTurns {
  static let shared = JACKTurns()
  private var taken = false
  private var waiting: [CheckedContinuation<Void, Never>] = []

  func take() async {
    guard taken else {
      taken = true
      return
    }
    await withCheckedContinuation { waiting.append($0) }
  }

  func give() {
    if waiting.isEmpty {
      taken = false
    } else {
      // The turn passes straight to the first waiter: `taken` stays true.
      waiting.removeFirst().resume()
    }
  }
}
