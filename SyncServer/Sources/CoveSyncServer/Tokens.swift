// Bearer tokens: JSON Web Tokens signed with HMAC-SHA-256 under the configuration's secret, naming
// a user and when the token stops being accepted. `cove-sync-server token` makes them.
import Foundation
import JWTKit

/// What a token says: whose it is and until when it is good.
struct TokenClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Makes and checks the server's bearer tokens.
public struct TokenAuthority: Sendable {
    private let keys: JWTKeyCollection

    public init(secret: String) async {
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
    }

    /// A token for `user` good for `days` days from `now`.
    /// - Throws: `SyncServerError.badRequest` for an empty user name.
    public func token(for user: String, days: Int, now: Date = Date()) async throws -> String {
        guard !user.isEmpty else { throw SyncServerError.badRequest("a token needs a user name") }
        let claims = TokenClaims(sub: SubjectClaim(value: user), exp: ExpirationClaim(value: now.addingTimeInterval(Double(days) * 86_400)),
                                 iat: IssuedAtClaim(value: now))
        return try await keys.sign(claims)
    }

    /// The user a request's `Authorization` header names, after checking its token's signature
    /// and expiry.
    /// - Throws: `SyncServerError.unauthorized` saying what is wrong (no header, not a bearer
    ///   token, a bad signature, an expired token).
    public func user(authorization header: String?) async throws -> String {
        guard let header, !header.isEmpty else {
            throw SyncServerError.unauthorized("no Authorization header: send 'Authorization: Bearer <token>'")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw SyncServerError.unauthorized("the Authorization header is not 'Bearer <token>'")
        }
        let claims: TokenClaims
        do {
            claims = try await keys.verify(String(parts[1]), as: TokenClaims.self)
        } catch let error as JWTError where error.errorType == .claimVerificationFailure {
            throw SyncServerError.unauthorized("the token has expired")
        } catch {
            throw SyncServerError.unauthorized("the token is not one this server signed")
        }
        guard !claims.sub.value.isEmpty else { throw SyncServerError.unauthorized("the token names no user") }
        return claims.sub.value
    }
}
