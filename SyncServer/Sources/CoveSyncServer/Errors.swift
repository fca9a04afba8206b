// The errors the server answers with: an HTTP status and a JSON body naming the problem, the same
// shape for every route, so that a client reports the server's own words.
import Foundation
import Hummingbird

/// A request the server refuses, or cannot serve now.
public enum SyncServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Malformed JSON, a missing or mistyped field (400).
    case badRequest(String)
    /// A subscription whose query does not parse or check, or names a class the schema lacks
    /// (400, `bad_query`).
    case badQuery(String)
    /// No token, or one the server did not sign or that has expired (401).
    case unauthorized(String)
    /// A token that is good, for something its user may not do (403).
    case forbidden(String)
    /// A request that clashes with what the server holds, such as a new file whose node id
    /// another file has (409).
    case conflict(String)
    /// The database cannot be reached, or is not fit to use (503).
    case unavailable(String)

    public var message: String {
        switch self {
        case .badRequest(let m), .badQuery(let m), .unauthorized(let m), .forbidden(let m), .conflict(let m), .unavailable(let m): return m
        }
    }

    /// The short name in the body's `code`.
    public var code: String {
        switch self {
        case .badRequest: return "bad_request"
        case .badQuery: return "bad_query"
        case .unauthorized: return "unauthorized"
        case .forbidden: return "forbidden"
        case .conflict: return "conflict"
        case .unavailable: return "unavailable"
        }
    }

    public var status: HTTPResponse.Status {
        switch self {
        case .badRequest, .badQuery: return .badRequest
        case .unauthorized: return .unauthorized
        case .forbidden: return .forbidden
        case .conflict: return .conflict
        case .unavailable: return .serviceUnavailable
        }
    }

    public var description: String { "\(code): \(message)" }
}

extension SyncServerError: HTTPResponseError {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body: [String: [String: String]] = ["error": ["code": code, "message": message]]
        let data = (try? JSONEncoder().encode(body)) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if case .unauthorized = self { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
