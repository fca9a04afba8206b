// The HTTP routes: GET /health, GET /metrics, POST /v1/bind. Every request body and answer is
// JSON; docs/SYNC.md, "The protocol", describes them.
import Foundation
import Hummingbird
import Logging

/// A client binding its file: which file, at which schema version.
struct BindRequest: Decodable {
    var clientFileId: UUID
    var schemaVersion: Int64

    enum CodingKeys: String, CodingKey {
        case clientFileId = "client_file_id"
        case schemaVersion = "schema_version"
    }
}

struct BindResponse: ResponseEncodable {
    var user: String
    var clientFileId: UUID
    var serverVersion: Int64
    var uploadedVersion: Int64

    enum CodingKeys: String, CodingKey {
        case user
        case clientFileId = "client_file_id"
        case serverVersion = "server_version"
        case uploadedVersion = "uploaded_version"
    }
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
    let logger: Logger

    public init(database: SyncDatabase, tokens: TokenAuthority, logger: Logger) {
        self.database = database
        self.tokens = tokens
        self.logger = logger
    }

    /// The application listening on `host:port`, with the database pool as one of its services
    /// and the tables migrated before it takes requests. `onRunning` is told the port it bound
    /// (0 picks a free one).
    public func application(host: String, port: Int,
                            onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        var app = Application(router: router(), configuration: .init(address: .hostname(host, port: port), serverName: "cove-sync-server"),
                              onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
                              logger: logger)
        app.addServices(database.client)
        let database = database
        app.beforeServerStarts { try await database.migrate() }
        return app
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        let (database, tokens, metrics) = (database, tokens, metrics)
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
                            body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.rendered(clients: clients))))
        }
        router.post("v1/bind") { request, context -> BindResponse in
            let user = try await tokens.user(authorization: request.headers[.authorization])
            let bind = try await Self.decode(BindRequest.self, request)
            guard bind.schemaVersion >= 0 else {
                throw SyncServerError.badRequest("schema_version is \(bind.schemaVersion): it cannot be negative")
            }
            let binding = try await database.bind(clientFileId: bind.clientFileId, user: user, schemaVersion: bind.schemaVersion)
            metrics.binds.add(1, ordering: .relaxed)
            return BindResponse(user: user, clientFileId: bind.clientFileId, serverVersion: binding.serverVersion,
                                uploadedVersion: binding.uploadedVersion)
        }
        return router
    }

    /// The largest request body the server reads.
    static let maxBody = 16 << 20

    /// The request's JSON body as `T`.
    /// - Throws: `SyncServerError.badRequest` naming the field that is missing or mistyped, or
    ///   saying that the body is not JSON or too large.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maxBody)
        } catch {
            throw SyncServerError.badRequest("the request body is larger than \(maxBody) bytes")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let DecodingError.keyNotFound(key, _) {
            throw SyncServerError.badRequest("the field \"\(key.stringValue)\" is missing")
        } catch let DecodingError.typeMismatch(_, context) {
            throw SyncServerError.badRequest("\(fieldName(context)) has the wrong type")
        } catch let DecodingError.valueNotFound(_, context) {
            throw SyncServerError.badRequest("\(fieldName(context)) is null")
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw SyncServerError.badRequest("\(fieldName(context)) is not valid: \(context.debugDescription)")
        } catch {
            throw SyncServerError.badRequest("the request body is not a JSON object")
        }
    }

    private static func fieldName(_ context: DecodingError.Context) -> String {
        context.codingPath.last.map { "the field \"\($0.stringValue)\"" } ?? "the body"
    }
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
