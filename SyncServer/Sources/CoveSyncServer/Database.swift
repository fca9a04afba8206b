// What the server keeps in PostgreSQL: its tables (made or brought up to date by `migrate`, under
// an advisory lock so that instances starting together do not race), and the queries of
// binding clients and of its health. docs/SYNC.md, "The server's tables", lists the columns.
import Logging
import Foundation
import PostgresNIO

/// The server's PostgreSQL database, through a pool of connections (`PostgresClient`, run as a
/// service of the application).
public struct SyncDatabase: Sendable {
    public let client: PostgresClient
    let logger: Logger

    /// The layout of the server's tables this build makes and reads.
    static let layout = 1

    /// A pool of connections to the database `url` names (not connected until the client runs).
    public init(url: DatabaseURL, logger: Logger) {
        var configuration = PostgresClient.Configuration(host: url.host, port: url.port, username: url.user,
                                                         password: url.password, database: url.database, tls: .disable)
        configuration.options.maximumConnections = 40
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
    }

    /// Makes the server's tables, or checks that those already there are of this build's layout.
    /// - Throws: `SyncServerError.unavailable` when the database cannot be reached or its tables
    ///   are of a newer layout.
    public func migrate() async throws {
        try await transaction { connection in
            // One instance at a time: the others wait here, then find the tables made.
            try await connection.query("SELECT pg_advisory_xact_lock(7013210529)", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS cove_sync_meta (
                    id integer PRIMARY KEY CHECK (id = 1),
                    layout integer NOT NULL,
                    server_version bigint NOT NULL)
                """, logger: logger)
            try await connection.query("""
                INSERT INTO cove_sync_meta (id, layout, server_version) VALUES (1, \(Self.layout), 0)
                ON CONFLICT (id) DO NOTHING
                """, logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS cove_sync_clients (
                    client_file_id uuid PRIMARY KEY,
                    user_name text NOT NULL,
                    schema_version bigint NOT NULL,
                    bound_at timestamptz NOT NULL DEFAULT now(),
                    last_seen timestamptz NOT NULL DEFAULT now(),
                    uploaded_version bigint NOT NULL DEFAULT 0)
                """, logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS cove_sync_history (
                    server_version bigint PRIMARY KEY,
                    client_file_id uuid NOT NULL REFERENCES cove_sync_clients (client_file_id),
                    client_version bigint NOT NULL,
                    changeset text NOT NULL,
                    committed_at timestamptz NOT NULL DEFAULT now(),
                    UNIQUE (client_file_id, client_version))
                """, logger: logger)
            let rows = try await connection.query("SELECT layout FROM cove_sync_meta WHERE id = 1", logger: logger)
            for try await layout in rows.decode(Int.self) where layout > Self.layout {
                throw SyncServerError.unavailable("the database's sync tables are of layout \(layout), newer than this server's \(Self.layout): run a newer cove-sync-server")
            }
        }
    }

    /// Runs `body` in a transaction (committed when it returns, rolled back when it throws); a
    /// refusal it throws comes out as it is, not wrapped in the driver's transaction error.
    func transaction<T: Sendable>(isolation: isolated (any Actor)? = #isolation,
                                  _ body: (PostgresConnection) async throws -> sending T) async throws -> sending T {
        do {
            return try await client.withTransaction(logger: logger, isolation: isolation, body)
        } catch let error as PostgresTransactionError {
            if let refusal = error.closureError as? SyncServerError { throw refusal }
            throw error
        }
    }

    /// Whether the database answers.
    public func isHealthy() async -> Bool {
        do {
            let rows = try await client.query("SELECT 1", logger: logger)
            for try await _ in rows {}
            return true
        } catch {
            return false
        }
    }

    /// What the server answers a client binding its file.
    public struct Binding: Sendable, Equatable {
        /// The newest server version: what the client's downloads start from when it is new.
        public var serverVersion: Int64
        /// The newest of the client's versions the server holds, so that the client uploads only
        /// what comes after it (an upload the server took before it lost the answer is not sent
        /// again).
        public var uploadedVersion: Int64
    }

    /// Records that `user` syncs the file `clientFileId` at `schemaVersion` (a file already
    /// bound keeps its history and takes the new schema version).
    /// - Throws: `SyncServerError.forbidden` when another user bound that file.
    public func bind(clientFileId: UUID, user: String, schemaVersion: Int64) async throws -> Binding {
        try await transaction { connection in
            let rows = try await connection.query("""
                INSERT INTO cove_sync_clients (client_file_id, user_name, schema_version)
                VALUES (\(clientFileId), \(user), \(schemaVersion))
                ON CONFLICT (client_file_id) DO UPDATE
                    SET schema_version = EXCLUDED.schema_version, last_seen = now()
                    WHERE cove_sync_clients.user_name = EXCLUDED.user_name
                RETURNING uploaded_version
                """, logger: logger)
            var uploaded: Int64?
            for try await value in rows.decode(Int64.self) { uploaded = value }
            guard let uploaded else {
                throw SyncServerError.forbidden("the file \(clientFileId) is bound to another user")
            }
            let meta = try await connection.query("SELECT server_version FROM cove_sync_meta WHERE id = 1", logger: logger)
            var version: Int64 = 0
            for try await value in meta.decode(Int64.self) { version = value }
            return Binding(serverVersion: version, uploadedVersion: uploaded)
        }
    }

    /// How many client files are bound.
    public func clientCount() async throws -> Int {
        let rows = try await client.query("SELECT count(*) FROM cove_sync_clients", logger: logger)
        var count = 0
        for try await value in rows.decode(Int.self) { count = value }
        return count
    }
}
