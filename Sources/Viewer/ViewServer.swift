import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Timeline
public import TimelineStore

/// The server of `tape view`: one page that draws the timeline, and what it reads, on
/// 127.0.0.1 only.
///
/// ```swift
/// let server = ViewServer(store: store, projectPath: "song.tape")
/// try await server.run { url in print(url) }   // until SIGINT or SIGTERM
/// ```
///
/// - `GET /`: the page (``ViewPage``);
/// - `GET /snapshot`: the head as ``ViewModel/Snapshot`` JSON;
/// - `GET /history`: ``ViewModel/HistoryView`` JSON, for the history strip;
/// - `GET /version/N`: version N as a snapshot (reading only: the head does not move);
/// - `GET /events`: server-sent events, `snapshot` (the head, first) then one `update`
///   (``ViewModel/Update``) per move of the head by any process, and `playhead` (where a
///   `tape play` of the project is, ``PlayheadFile``) while one plays.
///
/// Rule: every request carries the token printed in the URL (`?token=…`), or is refused (403)
/// before anything is read; the server writes nothing to the project.
/// Why: any program on the machine may reach 127.0.0.1, and a web page in any browser tab may
/// make requests to it; only who was shown the URL may read the project.
/// What if the port is taken: ``run(ready:)`` throws, and nothing was served.
public struct ViewServer: Sendable {
  /// The secret every request must carry.
  public let token: String
  /// The port asked for (0: any free one).
  public let port: Int
  private let store: TimelineStore
  private let model: ViewModel
  private let playhead: PlayheadFile

  public init(store: TimelineStore, projectPath: String, port: Int = 0, token: String? = nil) {
    self.store = store
    self.port = port
    self.token = token ?? Self.randomToken()
    model = ViewModel(projectPath: projectPath)
    playhead = PlayheadFile(projectPath: projectPath)
  }

  /// 32 hexadecimal digits from the system's random source.
  public static func randomToken() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<4).map { _ in
      let value = generator.next() as UInt32
      let digits = String(value, radix: 16)
      return String(repeating: "0", count: 8 - digits.count) + digits
    }.joined()
  }

  /// Serves until the process gets SIGINT or SIGTERM; `ready` is called with the page's URL
  /// (token included) once the server listens.
  public func run(ready: @escaping @Sendable (String) -> Void) async throws {
    let router = Router()
    router.middlewares.add(TokenCheck(token: token))
    let (store, model, playhead) = (store, model, playhead)
    router.get("/") { _, _ in
      Self.response(ViewPage.html, type: "text/html; charset=utf-8")
    }
    router.get("/snapshot") { _, _ in
      let head = store.snapshot
      return try Self.json(
        await Self.offPool { model.snapshot(head.project, version: head.version) })
    }
    router.get("/history") { request, _ in
      // ?last=N: the last N versions of the head's line, without reading the rest.
      if let last = request.uri.queryParameters["last"].flatMap({ Int(String($0)) }), last > 0 {
        return try Self.json(ViewModel.history(store.headLine(last: last)))
      }
      return try Self.json(ViewModel.history(store.history()))
    }
    router.get("/version/:number") { _, context in
      guard let number = context.parameters.get("number", as: Int64.self) else {
        return Self.response("not a version number\n", status: .badRequest)
      }
      do {
        let project = try store.project(at: number)
        return try Self.json(await Self.offPool { model.snapshot(project, version: number) })
      } catch {
        return Self.response("version \(number): \(error)\n", status: .notFound)
      }
    }
    router.get("/events") { _, _ in
      let body = ResponseBody { writer in
        // The newest events if the page falls behind (an update that does not start from the
        // version the page has makes it fetch the snapshot).
        let events = AsyncStream<String>(bufferingPolicy: .bufferingNewest(256)) { continuation in
          let following = Task {
            // Subscribed here, with the page there to read: a subscription no page reads
            // would hold the store's updates for the life of the process.
            for await update in store.updates() {
              let event = await Self.offPool {
                if let moved = model.update(update) { return Self.event("update", moved) }
                return Self.event(
                  "snapshot", model.snapshot(update.project, version: update.version))
              }
              continuation.yield(event)
            }
            continuation.finish()
          }
          // Where a play is, 20 times a second when it moves; and a comment every 15 s, so
          // that a page gone is noticed (the write fails) even when nothing happens.
          let watching = Task {
            var last: PlayheadFile.Position?
            var quiet = 0
            while !Task.isCancelled {
              let now = playhead.read()
              if now != last {
                last = now
                continuation.yield(Self.event("playhead", now ?? PlayheadFile.Position.stopped))
                quiet = 0
              } else {
                quiet += 1
                if quiet >= 300 {
                  continuation.yield(": still here\n\n")
                  quiet = 0
                }
              }
              try? await Task.sleep(for: .milliseconds(50))
            }
          }
          continuation.onTermination = { _ in
            following.cancel()
            watching.cancel()
          }
        }
        // Until the page goes, or the server stops (SIGINT, SIGTERM): a stream that never
        // ended would hold the server's graceful shutdown open for ever.
        for await event in events.cancelOnGracefulShutdown() {
          try await writer.write(ByteBuffer(string: event))
        }
        try await writer.finish(nil)
      }
      return Response(
        status: .ok,
        headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }
    var logger = Logger(label: "tape.view")
    logger.logLevel = .critical
    let token = token
    let app = Application(
      router: router,
      configuration: ApplicationConfiguration(
        address: .hostname("127.0.0.1", port: port), serverName: "tape view"),
      onServerRunning: { channel in
        ready("http://127.0.0.1:\(channel.localAddress?.port ?? 0)/?token=\(token)")
      },
      logger: logger)
    try await app.runService()
  }

  /// `work` on a thread of Dispatch's, not Swift's cooperative pool (two threads on two
  /// cores): the first view of a source decodes it, for seconds.
  static func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
      DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: work()) }
    }
  }

  static func response(
    _ text: String, type: String = "text/plain; charset=utf-8", status: HTTPResponse.Status = .ok
  ) -> Response {
    Response(
      status: status, headers: [.contentType: type, .cacheControl: "no-store"],
      body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
  }

  static func json(_ value: some Encodable) throws -> Response {
    let data = try JSONEncoder().encode(value)
    return response(String(decoding: data, as: UTF8.self), type: "application/json")
  }

  /// One server-sent event named `name` carrying `value` as JSON (on one line).
  static func event(_ name: String, _ value: some Encodable) -> String {
    let data = (try? JSONEncoder().encode(value)) ?? Data("null".utf8)
    return "event: \(name)\ndata: \(String(decoding: data, as: UTF8.self))\n\n"
  }
}

/// Refuses (403) every request without the server's token in its query.
struct TokenCheck<Context: RequestContext>: RouterMiddleware {
  let token: String

  func handle(
    _ request: Request, context: Context,
    next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    let given = request.uri.queryParameters["token"].map(String.init) ?? ""
    guard Self.same(Array(given.utf8), Array(token.utf8)) else {
      return ViewServer.response(
        "tape view: this address needs the token printed with its URL (?token=…)\n",
        status: .forbidden)
    }
    return try await next(request, context)
  }

  /// Compares every byte whatever the first difference (the time says nothing of the token).
  static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) { difference |= x ^ y }
    return difference == 0
  }
}
