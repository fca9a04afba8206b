// The HTTP routes: GET /health, GET /metrics, POST /v1/bind, POST /v1/upload, GET /v1/download.
// Bodies are JSON, changesets JSON lines; docs/SYNC.md, "The protocol so far", describes them.
import CoveSyncCore
import Foundation
import Hummingbird
import Logging
import Synchronization

/// A client binding its file: which file, at which schema version, and the newest of its
/// changesets it knows the server holds (0 when not given).
struct BindRequest: Decodable {
    var clientFileId: UUID
    var schemaVersion: Int64
    var acknowledged: Int64?

    enum CodingKeys: String, CodingKey {
        case clientFileId = "client_file_id"
        case schemaVersion = "schema_version"
        case acknowledged
    }
}

struct BindResponse: ResponseEncodable {
    var user: String
    var clientFileId: UUID
    var nodeId: Int64
    var serverVersion: Int64
    var uploadedVersion: Int64
    var heldClocks: [String]

    enum CodingKeys: String, CodingKey {
        case user
        case clientFileId = "client_file_id"
        case nodeId = "node_id"
        case serverVersion = "server_version"
        case uploadedVersion = "uploaded_version"
        case heldClocks = "held_clocks"
    }
}

/// The answer to an upload: `{"uploaded_version", "server_version", "accepted", "compensating":
/// [{"class", "key", "reason"}]}`, the key written as primary keys are in changesets.
func uploadAnswer(_ done: SyncDatabase.Upload) -> Response {
    func string(_ s: String) -> String {
        String(decoding: (try? JSONEncoder().encode(s)) ?? Data("\"\"".utf8), as: UTF8.self)
    }
    let listed = done.compensating.map {
        "{\"class\":\(string($0.object.className)),\"key\":\($0.object.key.json),\"reason\":\(string($0.reason))}"
    }
    let text = "{\"uploaded_version\":\(done.uploadedVersion),\"server_version\":\(done.serverVersion),\"accepted\":\(done.accepted),"
        + "\"compensating\":[\(listed.joined(separator: ","))]}"
    var headers = HTTPFields()
    headers[.contentType] = "application/json"
    return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
}

struct SubscriptionsResponse: ResponseEncodable {
    var version: Int64
}

struct HealthResponse: ResponseEncodable {
    var status: String
    var database: String
}

/// The server: its routes over a database and a token authority.
public struct SyncServer: Sendable {
    public let database: SyncDatabase
    public let tokens: TokenAuthority
    public let metrics = ServerMetrics()
    public let bell: HistoryBell
    public let feed: HistoryFeed
    public let uploads: UploadIntegrator
    /// The user each client file seen here is bound to (a file never changes user).
    let owners = OwnerCache()
    let logger: Logger

    public init(database: SyncDatabase, tokens: TokenAuthority, logger: Logger) {
        self.database = database
        self.tokens = tokens
        self.logger = logger
        let feed = HistoryFeed(database: database)
        let bell = HistoryBell(client: database.client, feed: feed, logger: logger)
        self.feed = feed
        self.bell = bell
        uploads = UploadIntegrator(database: database) { rows in
            // This instance's own commits need not wait for their notification to come back.
            try? await feed.append(rows)
            bell.ring()
        }
    }

    /// The application listening on `host:port`, with the database pool as one of its services
    /// and the tables migrated before it takes requests. `onRunning` is told the port it bound
    /// (0 picks a free one).
    public func application(host: String, port: Int,
                            onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        var app = Application(router: router(), configuration: .init(address: .hostname(host, port: port), serverName: "cove-sync-server"),
                              onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
                              logger: logger)
        app.addServices(database.client, bell)
        let database = database
        app.beforeServerStarts { try await database.migrate() }
        return app
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        let (database, tokens, metrics, bell, feed, uploads) = (database, tokens, metrics, bell, feed, uploads)
        let server = self
        router.middlewares.add(CountingMiddleware(metrics: metrics))
        router.get("health") { request, context -> Response in
            let healthy = await database.isHealthy()
            let body = HealthResponse(status: healthy ? "ok" : "unavailable", database: healthy ? "ok" : "unreachable")
            var response = try body.response(from: request, context: context)
            response.status = healthy ? .ok : .serviceUnavailable
            return response
        }
        router.get("metrics") { _, _ -> Response in
            let clients = try? await database.clientCount()
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4"
            return Response(status: .ok, headers: headers,
                            body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.rendered(clients: clients, waiting: bell.waiting))))
        }
        router.post("v1/bind") { request, context -> BindResponse in
            let user = try await tokens.user(authorization: request.headers[.authorization])
            let bind = try await Self.decode(BindRequest.self, request)
            guard bind.schemaVersion >= 0 else {
                throw SyncServerError.badRequest("schema_version is \(bind.schemaVersion): it cannot be negative")
            }
            guard (bind.acknowledged ?? 0) >= 0 else {
                throw SyncServerError.badRequest("acknowledged is \(bind.acknowledged ?? 0): it cannot be negative")
            }
            let binding = try await database.bind(clientFileId: bind.clientFileId, user: user, schemaVersion: bind.schemaVersion,
                                                  acknowledged: bind.acknowledged ?? 0)
            metrics.binds.add(1, ordering: .relaxed)
            return BindResponse(user: user, clientFileId: bind.clientFileId, nodeId: binding.nodeId,
                                serverVersion: binding.serverVersion, uploadedVersion: binding.uploadedVersion,
                                heldClocks: binding.heldClocks)
        }
        router.post("v1/upload") { request, context -> Response in
            let user = try await tokens.user(authorization: request.headers[.authorization])
            let file = try Self.clientFileId(request)
            let body = try await Self.body(request)
            let changesets: [Changeset]
            do throws(SyncError) {
                changesets = try ChangesetLines.decode(bytes: Array(body.readableBytesView))
            } catch {
                throw SyncServerError.badRequest("the changesets do not decode: \(error.message)")
            }
            // Decoded once: the database layer merges these and writes their canonical lines.
            let done = try await uploads.upload(SyncDatabase.UploadRequest(clientFileId: file, user: user, changesets: changesets))
            metrics.uploads.add(1, ordering: .relaxed)
            metrics.changesets.add(done.accepted, ordering: .relaxed)
            return uploadAnswer(done)
        }
        router.post("v1/subscriptions") { request, context -> SubscriptionsResponse in
            let user = try await tokens.user(authorization: request.headers[.authorization])
            let file = try Self.clientFileId(request)
            let buffer = try await Self.body(request)
            let body: SyncSubscriptionSetBody
            do throws(SyncError) {
                body = try SyncSubscriptionSetBody(json: String(decoding: buffer.readableBytesView, as: UTF8.self))
            } catch {
                throw SyncServerError.badRequest(error.message)
            }
            let version = try await database.storeSubscriptions(clientFileId: file, user: user, body: body)
            metrics.subscriptionSets.add(1, ordering: .relaxed)
            return SubscriptionsResponse(version: version)
        }
        router.get("v1/download") { request, context -> Response in
            let user = try await tokens.user(authorization: request.headers[.authorization])
            let file = try Self.clientFileId(request)
            let after = try Self.integer(request, "after", default: 0, range: 0...Int64.max)
            let wait = try Self.integer(request, "wait", default: 0, range: 0...60)
            let limit = Int(try Self.integer(request, "limit", default: 1000, range: 1...10_000))
            try await server.checkOwner(file, user)
            // A file that sent a subscription set names it; its downloads are object states.
            var subscribed: SubscriptionSet?
            if request.uri.queryParameters["subscriptions"] != nil {
                let named = try Self.integer(request, "subscriptions", default: 0, range: 1...Int64.max)
                let set = try await server.latestSet(of: file, named: named)
                if let text = request.uri.queryParameters["bootstrap"] {
                    return try await server.bootstrap(set, String(text), limit: limit, user: user)
                }
                subscribed = set
            }
            let start = ContinuousClock.now
            var seen = bell.rings
            func look() async throws -> SyncDatabase.Batch {
                if let fromMemory = await feed.batch(for: file, after: after, limit: limit) { return fromMemory }
                return try await database.history(clientFileId: file, after: after, limit: limit)
            }
            // A download that does not wait wants the history as it stands: what any instance
            // committed before it arrived, whether or not this one has heard of it yet.
            if wait == 0 { try await feed.refresh() }
            var batch = try await look()
            // Nothing new: wait for a commit (any instance's); after a second without one, read
            // the history again, in case a notification was lost.
            while batch.to == after && ContinuousClock.now - start < .seconds(wait) {
                let left = .seconds(wait) - (ContinuousClock.now - start)
                await bell.wait(after: seen, timeout: min(left, .seconds(1)))
                if bell.rings == seen { try await feed.refresh() }
                seen = bell.rings
                batch = try await look()
            }
            // The newest version this instance knows of, so that the client can tell how far it
            // is behind: its feed's (kept up to date by its uploads and the commits it hears),
            // the database's before the feed's first read; never behind the batch's end.
            let known: Int64
            if let fromFeed = await feed.latest { known = fromFeed } else { known = try await database.latestVersion() }
            let latest = max(known, batch.to)
            metrics.downloads.add(1, ordering: .relaxed)
            if let subscribed {
                // Every object other files' changesets in the batch touched, once, as it is now.
                var touched = Set<SyncObjectRef>()
                for line in batch.lines {
                    for op in try ChangesetLines.decodeLine(line).operations { touched.insert(op.object) }
                }
                let lines = try await database.coverage(subscribed, of: Array(touched), user: user)
                return Self.ndjson(StateLines.encode(SyncStateDownload(
                    header: SyncDownloadHeader(.steady(to: batch.to, more: batch.more), count: lines.count, latest: latest), lines: lines)))
            }
            let lines = try database.rules?.filterChangesetDownload(batch.lines) ?? batch.lines
            let head = "{\"to\":\(batch.to),\"more\":\(batch.more),\"count\":\(lines.count),\"latest\":\(latest)}\n"
            var text = head
            for line in lines { text += line + "\n" }
            return Self.ndjson(text)
        }
        return router
    }

    /// JSON lines as an answer.
    static func ndjson(_ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/x-ndjson"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// The file's latest subscription set, which the download must name.
    /// - Throws: `.conflict` when the file has no set or another one than `named`.
    func latestSet(of file: UUID, named: Int64) async throws -> SubscriptionSet {
        guard let (version, text) = try await database.subscriptionSet(of: file) else {
            throw SyncServerError.conflict("the file \(file) has no subscription set \(named): send the set first")
        }
        guard version == named else {
            throw SyncServerError.conflict("subscription set \(named) is not the file's latest, \(version): send the set again")
        }
        // Stored after its queries were checked: it checks again unless the schema changed.
        return try SubscriptionSet(try SyncSubscriptionSetBody(json: text), schema: database.schema)
    }

    /// A batch of a bootstrap of `set`: `cursor` is `start` or the `next` of the batch before.
    func bootstrap(_ set: SubscriptionSet, _ cursorText: String, limit: Int, user: String) async throws -> Response {
        var cursor: BootstrapCursor
        if cursorText == "start" {
            cursor = BootstrapCursor(set: set.version, serverVersion: try await database.latestVersion(), className: "", lastKey: "")
        } else {
            cursor = try BootstrapCursor(cursorText)
            guard cursor.set == set.version else {
                throw SyncServerError.conflict("the bootstrap began with subscription set \(cursor.set), not the file's latest, \(set.version): begin again")
            }
        }
        let (lines, next) = try await database.bootstrap(set, from: cursor, limit: limit, user: user)
        let known: Int64
        if let fromFeed = await feed.latest { known = fromFeed } else { known = try await database.latestVersion() }
        metrics.bootstraps.add(1, ordering: .relaxed)
        return Self.ndjson(StateLines.encode(SyncStateDownload(
            header: SyncDownloadHeader(.bootstrap(set: set.version, serverVersion: cursor.serverVersion, next: next?.text),
                                       count: lines.count, latest: max(known, cursor.serverVersion)),
            lines: lines)))
    }

    /// Refuses a download of a file that is not bound, or is bound to another user than the
    /// token's. The owner is asked of the database once per file and instance.
    func checkOwner(_ file: UUID, _ user: String) async throws {
        if let known = owners.withLock({ $0[file] }) {
            if known == user { return }
            throw SyncServerError.forbidden("the file \(file) is bound to another user")
        }
        guard let owner = try await database.owner(of: file) else {
            throw SyncServerError.forbidden("the file \(file) is not bound: bind it first")
        }
        owners.withLock { $0[file] = owner }
        if owner != user { throw SyncServerError.forbidden("the file \(file) is bound to another user") }
    }

    /// The `client_file_id` query parameter.
    static func clientFileId(_ request: Request) throws -> UUID {
        guard let text = request.uri.queryParameters["client_file_id"] else {
            throw SyncServerError.badRequest("the query parameter client_file_id is missing")
        }
        guard let id = UUID(uuidString: String(text)) else {
            throw SyncServerError.badRequest("client_file_id '\(text)' is not a UUID")
        }
        return id
    }

    /// The integer query parameter `name`, `fallback` when absent.
    static func integer(_ request: Request, _ name: String, default fallback: Int64, range: ClosedRange<Int64>) throws -> Int64 {
        guard let text = request.uri.queryParameters[Substring(name)] else { return fallback }
        guard let value = Int64(String(text)), range.contains(value) else {
            throw SyncServerError.badRequest("\(name) '\(text)' is not an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// The largest request body the server reads.
    static let maxBody = 16 << 20

    /// The request's body, at most `maxBody` bytes.
    static func body(_ request: Request) async throws -> ByteBuffer {
        var request = request
        do { return try await request.collectBody(upTo: maxBody) } catch {
            throw SyncServerError.badRequest("the request body is larger than \(maxBody) bytes")
        }
    }

    /// The request's JSON body as `T`.
    /// - Throws: `SyncServerError.badRequest` naming the field that is missing or mistyped, or
    ///   saying that the body is not JSON or too large.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        let buffer = try await body(request)
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch {
            throw SyncServerError.badRequest(jsonProblem(error) ?? "the request body is not a JSON object")
        }
    }
}

/// The user each client file is bound to, as far as this instance has asked.
final class OwnerCache: Sendable {
    private let map = Mutex<[UUID: String]>([:])

    func withLock<T>(_ body: (inout [UUID: String]) -> T) -> T { map.withLock { body(&$0) } }
}

/// Counts every request, and those answered with an error.
struct CountingMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        metrics.requests.add(1, ordering: .relaxed)
        do {
            let response = try await next(request, context)
            if response.status.code >= 400 { metrics.refused.add(1, ordering: .relaxed) }
            return response
        } catch {
            metrics.refused.add(1, ordering: .relaxed)
            throw error
        }
    }
}
