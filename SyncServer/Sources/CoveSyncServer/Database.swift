// What the server keeps in PostgreSQL: its tables (made or brought up to date by `migrate`, under
// an advisory lock so that instances starting together do not race), and the queries of
// binding clients and of its health. docs/SYNC.md, "The server's tables", lists the columns.
import CoveSyncCore
import Logging
import Foundation
import PostgresNIO

/// The server's PostgreSQL database, through a pool of connections (`PostgresClient`, run as a
/// service of the application).
public struct SyncDatabase: Sendable {
    public let client: PostgresClient
    let logger: Logger
    /// The classes the server keeps typed tables of and answers subscriptions on; nil without
    /// a schema in the configuration.
    public let schema: ServerSchema?
    /// The read and write rules; nil without rules in the configuration.
    public let rules: ServerRules?

    /// The layout of the server's tables this build makes and reads.
    static let layout = 3

    /// A pool of connections to the database `url` names (not connected until the client runs).
    public init(url: DatabaseURL, schema: ServerSchema? = nil, rules: ServerRules? = nil, logger: Logger) {
        self.schema = schema
        self.rules = rules
        var configuration = PostgresClient.Configuration(host: url.host, port: url.port, username: url.user,
                                                         password: url.password, database: url.database, tls: .disable)
        configuration.options.maximumConnections = 40
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
    }

    /// Makes the server's tables, or checks that those already there are of this build's layout;
    /// tables of layout 1 are brought up to layout 2 (the history replayed into the objects'
    /// states), and the schema's typed tables and columns that are missing are made and filled.
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
                    server_version bigint NOT NULL,
                    server_clock text)
                """, logger: logger)
            try await connection.query("""
                INSERT INTO cove_sync_meta (id, layout, server_version) VALUES (1, \(Self.layout), 0)
                ON CONFLICT (id) DO NOTHING
                """, logger: logger)
            var layout = Self.layout
            for try await found in try await connection.query("SELECT layout FROM cove_sync_meta WHERE id = 1", logger: logger).decode(Int.self) {
                layout = found
            }
            if layout > Self.layout {
                throw SyncServerError.unavailable("the database's sync tables are of layout \(layout), newer than this server's \(Self.layout): run a newer cove-sync-server")
            }
            // Each client file's clocks carry its node id, derived from the file's id
            // (`SyncUUID.nodeId`; the server's is 0): unique, so that two files never share one.
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS cove_sync_clients (
                    client_file_id uuid PRIMARY KEY,
                    node_id bigint NOT NULL UNIQUE,
                    user_name text NOT NULL,
                    schema_version bigint NOT NULL,
                    bound_at timestamptz NOT NULL DEFAULT now(),
                    last_seen timestamptz NOT NULL DEFAULT now(),
                    uploaded_version bigint NOT NULL DEFAULT 0)
                """, logger: logger)
            // Tables made by an earlier build gave node ids from a sequence: dropped, with the
            // column's default (only then: ALTER TABLE would lock the table at every start).
            let sequence = try await connection.query("SELECT to_regclass('cove_sync_node_ids') IS NOT NULL", logger: logger)
            var hasSequence = false
            for try await value in sequence.decode(Bool.self) { hasSequence = value }
            if hasSequence {
                try await connection.query("ALTER TABLE cove_sync_clients ALTER COLUMN node_id DROP DEFAULT", logger: logger)
                try await connection.query("DROP SEQUENCE cove_sync_node_ids", logger: logger)
            }
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS cove_sync_history (
                    server_version bigint PRIMARY KEY,
                    client_file_id uuid NOT NULL REFERENCES cove_sync_clients (client_file_id),
                    client_version bigint NOT NULL,
                    changeset text NOT NULL,
                    committed_at timestamptz NOT NULL DEFAULT now(),
                    UNIQUE (client_file_id, client_version))
                """, logger: logger)
            try await Self.migrateStates(from: layout, connection, logger)
            try await Self.migrateCompensations(from: layout, connection, logger)
            if let schema { try await Self.migrateTypedTables(schema, connection, logger) }
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
        /// The node id the file's clocks and changesets carry, derived from the file's id.
        public var nodeId: Int64
        /// The newest server version: what the client's downloads start from when it is new.
        public var serverVersion: Int64
        /// The newest of the client's versions the server holds, so that the client uploads only
        /// what comes after it (an upload the server took before it lost the answer is not sent
        /// again).
        public var uploadedVersion: Int64
        /// The clocks (text form) of the client's changesets the server holds after the version
        /// the client said it knows held (`acknowledged`), in order, at most `maxHeldClocks`: a
        /// client tells by them which of its own changesets the server holds, and whether the
        /// file forked (a copy that wrote on its own).
        public var heldClocks: [String] = []
    }

    /// The node id of the client file `clientFileId`: `SyncUUID.nodeId`, the one its clocks
    /// carry from its first write.
    public static func nodeId(of clientFileId: UUID) -> Int64 {
        // A UUID's text is always a UUID's text; nodeId has its top bit clear, so fits an Int64.
        Int64(try! SyncUUID(text: clientFileId.uuidString).nodeId)
    }

    /// Records that `user` syncs the file `clientFileId` at `schemaVersion` (a file already
    /// bound keeps its history and takes the new schema version). A new file's node id is
    /// derived from its id (`nodeId(of:)`).
    /// - Throws: `SyncServerError.forbidden` when another user bound that file;
    ///   `SyncServerError.conflict` when the file is new and another file has its node id (the
    ///   client must take a new file id). Nothing is written then.
    /// The most clocks a bind answers (`Binding.heldClocks`).
    public static let maxHeldClocks = 10_000

    public func bind(clientFileId: UUID, user: String, schemaVersion: Int64, acknowledged: Int64 = 0) async throws -> Binding {
        do {
            return try await bindOnce(clientFileId: clientFileId, user: user, schemaVersion: schemaVersion, acknowledged: acknowledged)
        } catch SyncServerError.conflict(let message) {
            // Two binds of one new file at once: the one that lost the race on the file's row
            // can meet the other's node id first. The file's row is there now: bind again.
            let rows = try await client.query("SELECT 1 FROM cove_sync_clients WHERE client_file_id = \(clientFileId)", logger: logger)
            var exists = false
            for try await _ in rows.decode(Int.self) { exists = true }
            guard exists else { throw SyncServerError.conflict(message) }
            return try await bindOnce(clientFileId: clientFileId, user: user, schemaVersion: schemaVersion, acknowledged: acknowledged)
        }
    }

    private func bindOnce(clientFileId: UUID, user: String, schemaVersion: Int64, acknowledged: Int64) async throws -> Binding {
        let nodeId = Self.nodeId(of: clientFileId)
        return try await transaction { connection in
            var found: (Int64, Int64)?
            do {
                let rows = try await connection.query("""
                    INSERT INTO cove_sync_clients (client_file_id, node_id, user_name, schema_version)
                    VALUES (\(clientFileId), \(nodeId), \(user), \(schemaVersion))
                    ON CONFLICT (client_file_id) DO UPDATE
                        SET schema_version = EXCLUDED.schema_version, last_seen = now()
                        WHERE cove_sync_clients.user_name = EXCLUDED.user_name
                    RETURNING uploaded_version, node_id
                    """, logger: logger)
                for try await value in rows.decode((Int64, Int64).self) { found = value }
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                // unique_violation: not of the file's id (ON CONFLICT takes that), so of its node id.
                throw SyncServerError.conflict("client file \(clientFileId): its node id \(nodeId) is taken by another file; the client must take a new file id")
            }
            guard let (uploaded, node) = found else {
                throw SyncServerError.forbidden("the file \(clientFileId) is bound to another user")
            }
            var clocks: [String] = []
            if uploaded > acknowledged {
                let rows = try await connection.query("""
                    SELECT changeset FROM cove_sync_history WHERE client_file_id = \(clientFileId)
                    AND client_version > \(acknowledged) ORDER BY client_version LIMIT \(Self.maxHeldClocks)
                    """, logger: logger)
                for try await line in rows.decode(String.self) {
                    clocks.append((try? ChangesetLines.decodeLine(line).clock.description) ?? "")
                }
            }
            return Binding(nodeId: node, serverVersion: try await Self.latestVersion(connection, logger), uploadedVersion: uploaded,
                           heldClocks: clocks)
        }
    }

    /// How many client files are bound.
    public func clientCount() async throws -> Int {
        let rows = try await client.query("SELECT count(*) FROM cove_sync_clients WHERE node_id <> 0", logger: logger)
        var count = 0
        for try await value in rows.decode(Int.self) { count = value }
        return count
    }

    /// The channel a commit of the history is announced on (NOTIFY, delivered at commit).
    static let historyChannel = "cove_sync_history"

    /// What an upload did: the newest of the client's versions the server now holds, and the
    /// newest server version.
    public struct Upload: Sendable, Equatable {
        public var uploadedVersion: Int64
        public var serverVersion: Int64
        /// How many of the changesets were new (the others the server held already).
        public var accepted: Int
        /// The objects whose operations in the upload's changesets were refused and compensated,
        /// once each, in the order of their first refusal (those of changesets taken before, for
        /// a retry, included).
        public var compensating: [Compensation] = []
    }

    /// One client's upload: its changesets, decoded, in order.
    public struct UploadRequest: Sendable {
        public var clientFileId: UUID
        public var user: String
        public var changesets: [Changeset]

        public init(clientFileId: UUID, user: String, changesets: [Changeset]) {
            self.clientFileId = clientFileId
            self.user = user
            self.changesets = changesets
        }
    }

    /// Adds `changesets` of the client file `clientFileId` (bound to `user`) to the history:
    /// `upload(_:)` of one request.
    public func upload(clientFileId: UUID, user: String, changesets: [Changeset]) async throws -> Upload {
        try await upload([UploadRequest(clientFileId: clientFileId, user: user, changesets: changesets)]).results[0].get()
    }

    /// A file as an upload transaction finds it: its newest uploaded version, node, user and
    /// subscription set (the set's body, when it has one).
    struct BoundFile {
        var held: Int64
        var node: Int64
        var owner: String
        var set: String?
    }

    /// Adds the changesets of several uploads to the history in one commit, so that they
    /// share one flush of the database's log. Of each upload, changesets the server holds
    /// already (a retried upload) are skipped, the others must follow on without a gap and carry
    /// the file's node id; each gets the next server version, so the history's versions are
    /// gap-free and in commit order. Operations the rules or the file's subscriptions refuse are
    /// left out and answered by a compensating changeset of the server's, right after. An upload
    /// that breaks a rule of the protocol gets its refusal and adds nothing; the others go on.
    /// One notification at commit announces them all.
    ///
    /// Two statements, optimistically: one read of the counter, the files and the objects'
    /// states, and one write of everything (data-modifying CTEs) that writes only if the counter
    /// is still what the read found, so that nothing another instance committed in between is
    /// lost. When it is not (another instance's upload came between), the uploads are taken
    /// again; after three such collisions, in a transaction that holds the counter row's lock
    /// from before the read, which orders every instance's uploads.
    /// - Returns: per upload, what it did or why it was refused (`.forbidden` for a file not
    ///   bound to its user, `.badRequest` for a gap or another node's changeset); and the
    ///   history rows the transaction committed, in order.
    /// - Throws: a database failure, for all of them (nothing is written).
    public func upload(_ requests: [UploadRequest]) async throws -> (results: [Result<Upload, SyncServerError>], committed: [HistoryRow]) {
        for _ in 0..<3 {
            if let done = try await client.withConnection({ try await self.upload(requests, $0, locked: false) }) { return done }
        }
        return try await transaction { connection in
            guard let done = try await self.upload(requests, connection, locked: true) else {
                throw SyncServerError.unavailable("the history's counter moved under its lock")
            }
            return done
        }
    }

    /// One try of `upload(_:)` on `connection`; nil when the counter moved between the read
    /// and the write (nothing was written). `locked`: in a transaction, the counter row locked
    /// first.
    private func upload(_ requests: [UploadRequest], _ connection: PostgresConnection,
                        locked: Bool) async throws -> (results: [Result<Upload, SyncServerError>], committed: [HistoryRow])? {
        do {
            if locked { try await connection.query("SELECT 1 FROM cove_sync_meta WHERE id = 1 FOR UPDATE", logger: logger) }
            let (last, clockText, files, read) = try await Self.readForUpload(requests, connection, logger)
            var integration = UploadIntegration(schema: schema, rules: rules, states: read,
                                                serverClock: try clockText.map { try SyncClock(text: $0) } ?? .zero)
            var held = files.mapValues(\.held)
            var checked: [Result<[Changeset], SyncServerError>] = []
            for request in requests {
                do throws(SyncServerError) {
                    let fresh = try Self.check(request, files[request.clientFileId], held: held[request.clientFileId] ?? 0)
                    if let v = fresh.last?.clientVersion { held[request.clientFileId] = Int64(v) }
                    checked.append(.success(fresh))
                } catch {
                    checked.append(.failure(error))
                }
            }
            var next = last + 1
            var versions: [Int64] = [], owners: [UUID] = [], clientVersions: [Int64] = [], lines: [String] = []
            var refusals = CompensationRows()
            var answers: [Int: (listed: [Compensation], to: Int64)] = [:]
            for (i, (request, outcome)) in zip(requests, checked).enumerated() {
                guard case .success(let fresh) = outcome else { continue }
                let file = files[request.clientFileId]
                let set = file?.set.flatMap { try? SubscriptionSet(try SyncSubscriptionSetBody(json: $0), schema: schema) }
                var listed: [Compensation] = []
                for changeset in fresh {
                    let taken = try integration.integrate(changeset, user: request.user, set: set, serverVersion: next + 1)
                    versions.append(next)
                    owners.append(request.clientFileId)
                    clientVersions.append(Int64(changeset.clientVersion))
                    lines.append(ChangesetLines.encode(taken.kept))
                    next += 1
                    if let compensation = taken.compensation {
                        versions.append(next)
                        owners.append(Self.serverFileId)
                        clientVersions.append(next)
                        lines.append(ChangesetLines.encode(compensation))
                        next += 1
                    }
                    refusals.add(request.clientFileId, Int64(changeset.clientVersion), taken.refused)
                    listed += taken.refused
                }
                answers[i] = (listed, next - 1)
            }
            let total = next - last - 1
            // Retried changesets answer the compensations the server made when it took them.
            var earlier: [UUID: [(Int64, Compensation)]] = [:]
            let retried = requests.filter { r in r.changesets.contains { Int64(exactly: $0.clientVersion).map { $0 <= files[r.clientFileId]?.held ?? 0 } ?? false } }
            if !retried.isEmpty { earlier = try await Self.compensations(of: retried.map(\.clientFileId), connection, logger) }
            var results: [Result<Upload, SyncServerError>] = []
            for (i, (request, outcome)) in zip(requests, checked).enumerated() {
                switch outcome {
                case .failure(let refusal):
                    results.append(.failure(refusal))
                case .success(let fresh):
                    var listed: [Compensation] = []
                    if let held = files[request.clientFileId]?.held {
                        let versions = Set(request.changesets.map(\.clientVersion).filter { Int64(exactly: $0).map { $0 <= held } ?? false })
                        listed = (earlier[request.clientFileId] ?? []).filter { versions.contains(UInt64($0.0)) }.map(\.1)
                    }
                    listed += answers[i]?.listed ?? []
                    let uploaded = fresh.last.map { Int64($0.clientVersion) } ?? files[request.clientFileId]?.held ?? 0
                    results.append(.success(Upload(uploadedVersion: uploaded, serverVersion: fresh.isEmpty ? last : answers[i]?.to ?? last,
                                                   accepted: fresh.count, compensating: Compensation.once(listed))))
                }
            }
            guard total > 0 else { return (results, []) }
            var statement = FoldedStatement()
            let newClock = integration.clockMoved ? integration.serverClock.description : nil
            // Every other part writes only when this one did: the counter still `last`.
            statement.add("""
                UPDATE cove_sync_meta SET server_version = \(statement.bind(next - 1)),
                    server_clock = COALESCE(\(statement.bind(newClock))::text, server_clock)
                WHERE id = 1 AND server_version = \(statement.bind(last)) RETURNING 1
                """)
            statement.gate = "EXISTS (SELECT 1 FROM w0)"
            statement.add("""
                INSERT INTO cove_sync_history (server_version, client_file_id, client_version, changeset)
                SELECT * FROM unnest(\(statement.bind(versions))::bigint[], \(statement.bind(owners))::uuid[],
                                     \(statement.bind(clientVersions))::bigint[], \(statement.bind(lines))::text[]) WHERE \(statement.gate)
                """)
            let moved = held.filter { files[$0.key]?.held != $0.value }
            statement.add("""
                UPDATE cove_sync_clients SET uploaded_version = v.uploaded, last_seen = now()
                FROM unnest(\(statement.bind(Array(moved.keys)))::uuid[], \(statement.bind(Array(moved.values)))::bigint[]) AS v(file, uploaded)
                WHERE client_file_id = v.file AND \(statement.gate)
                """)
            // The objects' states (and typed tables), in the same transaction, under the counter
            // row's lock, so that no two merges of one object race.
            try Self.writeStates(integration.changed, schema: schema, into: &statement)
            refusals.write(into: &statement)
            let notify = "SELECT pg_notify(\(statement.bind(Self.historyChannel)), \(statement.bind(String(next - 1)))) WHERE \(statement.gate)"
            var wrote = false
            for try await _ in try await connection.query(statement.query(final: notify), logger: logger) { wrote = true }
            guard wrote else { return nil }
            var committed: [HistoryRow] = []
            committed.reserveCapacity(versions.count)
            for i in versions.indices { committed.append(HistoryRow(version: versions[i], clientFileId: owners[i], line: lines[i])) }
            return (results, committed)
        }
    }

    /// The client file the server's own changesets (compensating writes) are kept under in the
    /// history: node 0, bound to no user a token can name.
    static let serverFileId = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// The uploading files (with their subscription sets) and the states of every object the
    /// uploads' changesets touch, in one read.
    static func readForUpload(_ requests: [UploadRequest], _ connection: PostgresConnection, _ logger: Logger)
        async throws -> (Int64, String?, [UUID: BoundFile], [SyncObjectRef: SyncObjectState]) {
        let fileIds = Array(Set(requests.map(\.clientFileId)))
        var refs = Set<SyncObjectRef>()
        for r in requests { for c in r.changesets { for op in c.operations { refs.insert(op.object) } } }
        let sorted = refs.sorted()
        let rows = try await connection.query("""
            SELECT 2, '', server_version, 0, '', server_clock, NULL::bytea FROM cove_sync_meta WHERE id = 1
            UNION ALL
            SELECT 0, c.client_file_id::text, c.uploaded_version, c.node_id, c.user_name, s.body, NULL::bytea
            FROM cove_sync_clients c LEFT JOIN cove_sync_subscriptions s USING (client_file_id) WHERE c.client_file_id = ANY(\(fileIds))
            UNION ALL
            SELECT 1, o.class, 0, 0, o.key, NULL, o.state FROM cove_sync_objects o
            WHERE (o.class, o.key) IN (SELECT * FROM unnest(\(sorted.map(\.className))::text[], \(sorted.map(\.key.json))::text[]))
            """, logger: logger)
        var files: [UUID: BoundFile] = [:], states: [SyncObjectRef: SyncObjectState] = [:]
        var counter: Int64 = 0, clock: String?
        for try await (kind, a, held, node, b, set, bytes) in rows.decode((Int, String, Int64, Int64, String, String?, ByteBuffer?).self) {
            if kind == 2 {
                (counter, clock) = (held, set)
            } else if kind == 0 {
                guard let id = UUID(uuidString: a) else { continue }
                files[id] = BoundFile(held: held, node: node, owner: b, set: set)
            } else if let bytes {
                let ref = try SyncObjectRef(className: a, key: try SyncPrimaryKey(json: b))
                states[ref] = try SyncObjectState(binary: Array(bytes.readableBytesView))
            }
        }
        return (counter, clock, files, states)
    }

    /// The compensations the server made for the changesets of `files`, by file, in order.
    static func compensations(of files: [UUID], _ connection: PostgresConnection, _ logger: Logger) async throws -> [UUID: [(Int64, Compensation)]] {
        let rows = try await connection.query("""
            SELECT client_file_id, client_version, class, key, reason FROM cove_sync_compensations
            WHERE client_file_id = ANY(\(files)) ORDER BY client_file_id, client_version, position
            """, logger: logger)
        var out: [UUID: [(Int64, Compensation)]] = [:]
        for try await (file, version, className, key, reason) in rows.decode((UUID, Int64, String, String, String).self) {
            let ref = try SyncObjectRef(className: className, key: try SyncPrimaryKey(json: key))
            out[file, default: []].append((version, Compensation(object: ref, reason: reason)))
        }
        return out
    }

    /// The changesets of `request` the server does not hold yet, after checking that the file is
    /// bound to the request's user (`bound`) and that they follow on from `held` without a gap,
    /// each of the file's node.
    static func check(_ request: UploadRequest, _ bound: BoundFile?, held: Int64) throws(SyncServerError) -> [Changeset] {
        let file = request.clientFileId
        guard let bound else {
            throw SyncServerError.forbidden("the file \(file) is not bound: bind it first")
        }
        guard bound.owner == request.user else { throw SyncServerError.forbidden("the file \(file) is bound to another user") }
        var expected = held + 1
        var fresh: [Changeset] = []
        for c in request.changesets {
            guard let version = Int64(exactly: c.clientVersion), let node = Int64(exactly: c.clientId) else {
                throw SyncServerError.badRequest("changeset version \(c.clientVersion) of node \(c.clientId) is out of range")
            }
            guard version > held else { continue }
            guard version == expected else {
                throw SyncServerError.badRequest("changeset version \(version) does not follow \(expected - 1), the newest the server holds of this file: upload from \(expected)")
            }
            guard node == bound.node else {
                throw SyncServerError.badRequest("changeset version \(version) is of node \(node), not of this file's node \(bound.node)")
            }
            fresh.append(c)
            expected += 1
        }
        return fresh
    }

    /// One changeset of the history.
    public struct HistoryRow: Sendable, Equatable {
        public var version: Int64
        public var clientFileId: UUID
        public var line: String
    }

    /// The history's changesets after server version `after`, at most `limit` of them, in order.
    public func rows(after: Int64, limit: Int) async throws -> [HistoryRow] {
        let rows = try await client.query("""
            SELECT server_version, client_file_id, changeset FROM cove_sync_history
            WHERE server_version > \(after) ORDER BY server_version LIMIT \(limit)
            """, logger: logger)
        var out: [HistoryRow] = []
        for try await (version, from, line) in rows.decode((Int64, UUID, String).self) {
            out.append(HistoryRow(version: version, clientFileId: from, line: line))
        }
        return out
    }

    /// The newest server version.
    public func latestVersion() async throws -> Int64 {
        try await client.withConnection { try await Self.latestVersion($0, logger) }
    }

    /// The newest server version, read on `connection` (in its transaction, if any).
    static func latestVersion(_ connection: PostgresConnection, _ logger: Logger) async throws -> Int64 {
        let rows = try await connection.query("SELECT server_version FROM cove_sync_meta WHERE id = 1", logger: logger)
        var version: Int64 = 0
        for try await value in rows.decode(Int64.self) { version = value }
        return version
    }

    /// The user the client file `clientFileId` is bound to, nil when it is not bound.
    public func owner(of clientFileId: UUID) async throws -> String? {
        let rows = try await client.query("SELECT user_name FROM cove_sync_clients WHERE client_file_id = \(clientFileId)", logger: logger)
        var name: String?
        for try await value in rows.decode(String.self) { name = value }
        return name
    }

    /// A batch of the history for one client.
    public struct Batch: Sendable, Equatable {
        /// The batch of `rows` (the history after `after`, in order) for `clientFileId`: its
        /// first `limit` changesets but the client's own, `more` when `rows` holds more.
        init(of rows: ArraySlice<HistoryRow>, for clientFileId: UUID, after: Int64, limit: Int) {
            let taken = rows.prefix(limit)
            lines = taken.filter { $0.clientFileId != clientFileId }.map(\.line)
            to = taken.last?.version ?? after
            more = rows.count > limit
        }

        /// The changesets of other clients after the cursor, as their JSON lines, in order.
        public var lines: [String]
        /// The cursor after this batch: the newest server version it covers.
        public var to: Int64
        /// Whether more of the history follows (the client asks again at once).
        public var more: Bool
    }

    /// The history after server version `after`, at most `limit` changesets of it, leaving out
    /// the changesets of `clientFileId` itself (it has them; the cursor still moves past them).
    public func history(clientFileId: UUID, after: Int64, limit: Int) async throws -> Batch {
        let rows = try await rows(after: after, limit: limit + 1)
        return Batch(of: rows[...], for: clientFileId, after: after, limit: limit)
    }
}
