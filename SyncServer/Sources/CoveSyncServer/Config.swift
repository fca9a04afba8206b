// The server's configuration: a JSON file, any field of which a command-line flag may replace.
// docs/SYNC.md, "Running the server", describes every field.
import Foundation

/// Where the server listens, which PostgreSQL it keeps its data in, and the key its bearer
/// tokens are signed with.
public struct ServerConfig: Codable, Sendable, Equatable {
    /// The address to listen on, `host:port` (default `127.0.0.1:9080`).
    public var listen: String
    /// The PostgreSQL database, as a URL: `postgres://user[:password]@host[:port]/database`.
    public var database: String
    /// The secret bearer tokens are signed with (HMAC-SHA-256), at least 32 characters. Anyone
    /// who holds it can make tokens: keep it out of version control.
    public var tokenSecret: String
    /// How long a token made by `cove-sync-server token` lasts, in days (default 30).
    public var tokenDays: Int
    /// The least severe log level written: trace, debug, info, notice, warning, error, critical.
    public var logLevel: String
    /// The classes, in Cove's schema notation (docs/schema.md): the server keeps a typed table of
    /// each and answers subscriptions on them. Optional: without it, subscriptions are refused.
    public var schema: JSONDocument?
    /// Read and write rules per class of the schema (docs/SYNC.md, "Read and write rules");
    /// optional: without them every user reads and writes everything.
    public var rules: JSONDocument?

    public init(listen: String = "127.0.0.1:9080", database: String, tokenSecret: String, tokenDays: Int = 30,
                logLevel: String = "info", schema: JSONDocument? = nil, rules: JSONDocument? = nil) {
        self.schema = schema
        self.rules = rules
        self.listen = listen
        self.database = database
        self.tokenSecret = tokenSecret
        self.tokenDays = tokenDays
        self.logLevel = logLevel
    }

    enum CodingKeys: String, CodingKey {
        case listen, database
        case tokenSecret = "token_secret"
        case tokenDays = "token_days"
        case logLevel = "log_level"
        case schema, rules
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        listen = try c.decodeIfPresent(String.self, forKey: .listen) ?? "127.0.0.1:9080"
        database = try c.decode(String.self, forKey: .database)
        tokenSecret = try c.decode(String.self, forKey: .tokenSecret)
        tokenDays = try c.decodeIfPresent(Int.self, forKey: .tokenDays) ?? 30
        logLevel = try c.decodeIfPresent(String.self, forKey: .logLevel) ?? "info"
        schema = try c.decodeIfPresent(JSONDocument.self, forKey: .schema)
        rules = try c.decodeIfPresent(JSONDocument.self, forKey: .rules)
    }

    /// Reads the configuration file at `path`.
    /// - Throws: `ConfigError` naming the file and what is wrong with it.
    public static func load(_ path: String) throws(ConfigError) -> ServerConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError("cannot read the configuration file '\(path)'")
        }
        do {
            return try JSONDecoder().decode(ServerConfig.self, from: data)
        } catch {
            throw ConfigError("'\(path)': " + (jsonProblem(error) ?? "not a JSON object of the server's settings"))
        }
    }

    /// Checks every field, naming the first that is wrong.
    public func validate() throws(ConfigError) {
        _ = try listenAddress()
        _ = try DatabaseURL(database)
        if tokenSecret.utf8.count < 32 {
            throw ConfigError("token_secret has \(tokenSecret.utf8.count) characters: it needs at least 32")
        }
        if tokenDays < 1 { throw ConfigError("token_days is \(tokenDays): it must be at least 1") }
        if LogLevelName.level(logLevel) == nil {
            throw ConfigError("log_level '\(logLevel)' is not one of \(LogLevelName.names.joined(separator: ", "))")
        }
        _ = try serverRules()
    }

    /// The schema, checked; nil when the configuration has none.
    /// - Throws: `ConfigError` naming the class and property that is wrong.
    public func serverSchema() throws(ConfigError) -> ServerSchema? {
        guard let schema, schema != .null else { return nil }
        return try ServerSchema(schema)
    }

    /// The rules, checked against the schema; nil when the configuration has none.
    /// - Throws: `ConfigError` naming the class and rule that is wrong (or the schema's error).
    public func serverRules() throws(ConfigError) -> ServerRules? {
        let schema = try serverSchema()
        guard let rules, rules != .null else { return nil }
        return try ServerRules(rules, schema: schema)
    }

    /// `listen` as a host and a port.
    public func listenAddress() throws(ConfigError) -> (host: String, port: Int) {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
              (0...65535).contains(port), colon != listen.startIndex else {
            throw ConfigError("listen '\(listen)' is not host:port (such as 127.0.0.1:9080)")
        }
        return (String(listen[..<colon]), port)
    }
}

/// A configuration that cannot be used, and why.
public struct ConfigError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The parts of a `postgres://` URL.
public struct DatabaseURL: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String

    public init(host: String, port: Int, user: String, password: String?, database: String) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
    }

    /// - Throws: `ConfigError` for anything but `postgres://user[:password]@host[:port]/database`
    ///   (or `postgresql://`).
    public init(_ text: String) throws(ConfigError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
              scheme == "postgres" || scheme == "postgresql" else {
            throw ConfigError("database '\(text)' is not a postgres:// URL")
        }
        guard let host = components.host, !host.isEmpty else { throw ConfigError("database '\(text)' names no host") }
        guard let user = components.user, !user.isEmpty else { throw ConfigError("database '\(text)' names no user") }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.host = host
        self.port = components.port ?? 5432
        self.user = user
        self.password = components.password
        self.database = path.isEmpty ? user : path
    }
}

/// The log levels by name.
enum LogLevelName {
    static let names = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    static func level(_ name: String) -> Int? { names.firstIndex(of: name.lowercased()) }
}

/// What is wrong with a JSON document a decoder refused, naming the field: the field missing,
/// of the wrong type, null or not valid; nil when the document itself is not JSON of the
/// expected shape. What the configuration file and request bodies report.
func jsonProblem(_ error: any Error) -> String? {
    func field(_ context: DecodingError.Context) -> String? {
        context.codingPath.last.map { "the field \"\($0.stringValue)\"" }
    }
    switch error {
    case DecodingError.keyNotFound(let key, _): return "the field \"\(key.stringValue)\" is missing"
    case DecodingError.typeMismatch(_, let c): return field(c).map { "\($0) has the wrong type" }
    case DecodingError.valueNotFound(_, let c): return field(c).map { "\($0) is null" }
    case DecodingError.dataCorrupted(let c): return field(c).map { "\($0) is not valid: \(c.debugDescription)" }
    default: return nil
    }
}
