import Effects
import Foundation
import Synchronization
import Testing

/// Plugin instances made and freed on several threads at once, as tests and a host's threads
/// do: lilv keeps each world's open plugin libraries in a list with a count of instances, and
/// closes a library (`dlclose`) when its count drops to zero. Instantiating took the world's
/// lock but freeing did not, so a free could close a library another thread had just found in
/// the list and was instantiating from: the process crashed inside lilv or in the unmapped
/// plugin (seen twice in CI, in the LV2 tests).
@Suite("Plugin instances across threads")
struct InstanceLifetimeTests {
  @Test(arguments: [TestPlugins.reverb, TestPlugins.limiter])
  func instancesMadeAndFreedOnManyThreadsAtOnce(plugin: (String, String)) throws {
    let info = try requirePlugin(plugin)
    let threads = 4
    let rounds = 40
    let failures = Mutex<[String]>([])
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
      for round in 0..<rounds {
        do {
          // Made and dropped at once: the library's count goes to zero over and over.
          let effect = try processor(info, worker: .inline)
          let output = run(effect, [Float](repeating: 0.25, count: 2 * 256), block: 64)
          if output.count != 2 * 256 {
            failures.withLock { $0.append("thread \(thread), round \(round): \(output.count)") }
          }
        } catch {
          failures.withLock { $0.append("thread \(thread), round \(round): \(error)") }
        }
      }
    }
    #expect(failures.withLock { $0 } == [])
  }
}
