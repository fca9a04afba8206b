// Subscription sets and the downloads they make: a file's latest set (cove_sync_subscriptions),
// the bootstrap that sends every object the set covers in batches, and the steady downloads
// that answer object or remove lines for the objects other files' changesets touched. Which
// objects a set covers is asked of the typed tables: alive AND (any of the class's conditions).
import CoveSyncCore
import Foundation
import Logging
import PostgresNIO

/// A file's subscription set, its queries checked against the schema.
public struct SubscriptionSet: Sendable {
    public var version: Int64
    public var queries: [SubscriptionQuery]

    /// The queries of each class, by class name.
    var byClass: [String: [SubscriptionQuery]] { Dictionary(grouping: queries, by: \.className) }

    /// Checks each subscription of `body` against `schema`.
    /// - Throws: `SyncServerError.badQuery` naming the first subscription that does not check.
    init(_ body: SyncSubscriptionSetBody, schema: ServerSchema?) throws(SyncServerError) {
        version = body.version
        var queries: [SubscriptionQuery] = []
        for (i, s) in body.subscriptions.enumerated() {
            let what = "subscription \(i + 1)\(s.name.map { " '\($0.prefix(80))'" } ?? "") on class '\(s.className)'"
            guard let schema else { throw SyncServerError.badQuery("\(what): the server has no schema, so it takes no subscriptions") }
            guard schema.classes[s.className] != nil else {
                throw SyncServerError.badQuery("\(what): the server's schema has no class '\(s.className)'")
            }
            do {
                let query = try s.query(schema: schema.subscriptions)
                _ = try query.sql()
                queries.append(query)
            } catch {
                throw SyncServerError.badQuery("\(what): \(error.message)")
            }
        }
        self.queries = queries
    }
}

/// Where a bootstrap is: its set, the server version it started at, and the last object sent.
struct BootstrapCursor: Equatable {
    var set: Int64
    var serverVersion: Int64
    var className: String
    var lastKey: String

    /// URL-safe base64 of the parts, joined by line feeds (which no part holds).
    var text: String {
        Data("\(set)\n\(serverVersion)\n\(className)\n\(lastKey)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    init(set: Int64, serverVersion: Int64, className: String, lastKey: String) {
        self.set = set
        self.serverVersion = serverVersion
        self.className = className
        self.lastKey = lastKey
    }

    /// - Throws: `SyncServerError.badRequest` for text no bootstrap answered.
    init(_ text: String) throws(SyncServerError) {
        var b64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        b64 += String(repeating: "=", count: (4 - b64.count % 4) % 4)
        guard text.count <= 4096, let data = Data(base64Encoded: b64), let decoded = String(data: data, encoding: .utf8) else {
            throw SyncServerError.badRequest("bootstrap '\(text.prefix(80))' is not a cursor a bootstrap answered")
        }
        let parts = decoded.split(separator: "\n", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, let set = Int64(parts[0]), let version = Int64(parts[1]), set >= 1, version >= 0,
              parts[2].isEmpty || SyncName.isValid(parts[2]) else {
            throw SyncServerError.badRequest("bootstrap '\(text.prefix(80))' is not a cursor a bootstrap answered")
        }
        self.init(set: set, serverVersion: version, className: parts[2], lastKey: parts[3])
    }
}

extension SyncDatabase {
    /// Makes `body` the file's subscription set. Sending the stored version again answers it
    /// again; an older one is refused.
    /// - Throws: `.badQuery` (nothing stored), `.conflict` for an older version, `.forbidden`
    ///   for a file not bound to `user`.
    public func storeSubscriptions(clientFileId: UUID, user: String, body: SyncSubscriptionSetBody) async throws -> Int64 {
        _ = try SubscriptionSet(body, schema: schema)
        let text = body.encode()
        return try await transaction { connection in
            let owners = try await connection.query("SELECT user_name FROM cove_sync_clients WHERE client_file_id = \(clientFileId) FOR UPDATE",
                                                    logger: logger)
            var owner: String?
            for try await name in owners.decode(String.self) { owner = name }
            guard let owner else { throw SyncServerError.forbidden("the file \(clientFileId) is not bound: bind it first") }
            guard owner == user else { throw SyncServerError.forbidden("the file \(clientFileId) is bound to another user") }
            let rows = try await connection.query("SELECT version FROM cove_sync_subscriptions WHERE client_file_id = \(clientFileId)",
                                                  logger: logger)
            var stored: Int64?
            for try await v in rows.decode(Int64.self) { stored = v }
            if let stored, stored > body.version {
                throw SyncServerError.conflict("subscription set \(body.version) is older than the file's set \(stored)")
            }
            if stored == body.version { return body.version }
            try await connection.query("""
                INSERT INTO cove_sync_subscriptions (client_file_id, version, body) VALUES (\(clientFileId), \(body.version), \(text))
                ON CONFLICT (client_file_id) DO UPDATE SET version = EXCLUDED.version, body = EXCLUDED.body, updated_at = now()
                """, logger: logger)
            return body.version
        }
    }

    /// The file's latest subscription set, nil when it never sent one.
    public func subscriptionSet(of clientFileId: UUID) async throws -> (version: Int64, body: String)? {
        let rows = try await client.query("SELECT version, body FROM cove_sync_subscriptions WHERE client_file_id = \(clientFileId)",
                                          logger: logger)
        var found: (Int64, String)?
        for try await row in rows.decode((Int64, String).self) { found = row }
        return found
    }

    /// `alive AND ((c1) OR (c2) ...)` over a class's typed table, and the read rule's condition
    /// when the class has one (`read`), its parameters numbered from `$(offset + 1)`.
    static func covering(_ queries: [SubscriptionQuery], read: SubscriptionQuery?, offset: Int, table: String) throws -> (String, [SyncValue]) {
        var conditions: [String] = [], values: [SyncValue] = []
        for q in queries {
            let sql = try q.sql(parameterOffset: offset + values.count)
            conditions.append("(\(sql.condition))")
            values += sql.parameters
        }
        var condition = "\(table).alive AND (\(conditions.isEmpty ? "FALSE" : conditions.joined(separator: " OR ")))"
        if let read {
            let sql = try read.sql(parameterOffset: offset + values.count)
            condition += " AND (\(sql.condition))"
            values += sql.parameters
        }
        return (condition, values)
    }

    /// A batch of a bootstrap: at most `limit` objects the set covers, after the cursor's, in
    /// class then key order; the cursor after them, nil when none are left.
    /// Only objects `user` may read are sent.
    func bootstrap(_ set: SubscriptionSet, from cursor: BootstrapCursor, limit: Int, user: String) async throws -> ([SyncStateLine], BootstrapCursor?) {
        let byClass = set.byClass
        let classes = byClass.keys.sorted()
        var lines: [SyncStateLine] = []
        for className in classes where className >= cursor.className {
            let after = className == cursor.className ? cursor.lastKey : ""
            let want = limit - lines.count
            let table = try SQLNaming().table(className)
            let (condition, values) = try Self.covering(byClass[className] ?? [], read: rules?.readRule(className, user: user),
                                                        offset: 0, table: "t")
            var bindings = PostgresBindings()
            bindings.append(values: values)
            bindings.append(className)
            bindings.append(after)
            bindings.append(Int64(want))
            let n = values.count
            // The batch's keys first, in the typed table's key order (its primary key's index,
            // read no further than the batch), then their states by the states' primary key: a
            // join lets the planner read every state of the class whenever its statistics lag
            // behind a large upload (98 ms a batch of 1,000 against 4 ms, at 100,000 objects).
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT key, state FROM cove_sync_objects WHERE class = $\(n + 1) AND key = ANY(ARRAY(
                    SELECT t.key FROM \(table) AS t WHERE \(condition) AND t.key > $\(n + 2) ORDER BY t.key LIMIT $\(n + 3)))
                ORDER BY key
                """, binds: bindings), logger: logger)
            var last = after
            for try await (keyText, bytes) in rows.decode((String, ByteBuffer).self) {
                let ref = try SyncObjectRef(className: className, key: try SyncPrimaryKey(json: keyText))
                lines.append(.object(ref, try SyncObjectState(binary: Array(bytes.readableBytesView))))
                last = keyText
            }
            if lines.count >= limit {
                return (lines, BootstrapCursor(set: set.version, serverVersion: cursor.serverVersion, className: className, lastKey: last))
            }
        }
        return (lines, nil)
    }

    /// For each object, an object line when the set covers it now and `user` may read it, a
    /// remove line otherwise.
    func coverage(_ set: SubscriptionSet, of refs: [SyncObjectRef], user: String) async throws -> [SyncStateLine] {
        let byClass = set.byClass
        var lines: [SyncStateLine] = []
        for (className, objects) in Dictionary(grouping: refs, by: \.className).sorted(by: { $0.key < $1.key }) {
            guard let queries = byClass[className] else {
                lines += objects.map { .remove($0) }
                continue
            }
            let table = try SQLNaming().table(className)
            let (condition, values) = try Self.covering(queries, read: rules?.readRule(className, user: user), offset: 0, table: "t")
            var bindings = PostgresBindings()
            bindings.append(values: values)
            bindings.append(className)
            bindings.append(objects.map(\.key.json))
            let n = values.count
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT o.key, o.state, COALESCE(\(condition), FALSE) FROM cove_sync_objects AS o
                LEFT JOIN \(table) AS t ON t.key = o.key WHERE o.class = $\(n + 1) AND o.key = ANY($\(n + 2)::text[])
                """, binds: bindings), logger: logger)
            var covered: [String: SyncObjectState] = [:]
            for try await (keyText, bytes, shown) in rows.decode((String, ByteBuffer, Bool).self) where shown {
                covered[keyText] = try SyncObjectState(binary: Array(bytes.readableBytesView))
            }
            for ref in objects.sorted() {
                if let state = covered[ref.key.json] { lines.append(.object(ref, state)) } else { lines.append(.remove(ref)) }
            }
        }
        return lines
    }
}

extension ServerRules {
    /// The changesets of a download for a file that has never subscribed, less the operations
    /// on classes with a read rule: such classes reach files through subscriptions
    /// only, where each object comes whole or not at all. A compensating write's deletes stay
    /// (the server's changesets, node 0), so that a file's refused creates are undone; a
    /// deletion shows nothing of the object. A changeset that loses every operation stays,
    /// empty, so that the cursor moves past it.
    func filterChangesetDownload(_ lines: [String]) throws -> [String] {
        let ruled = readRuled
        guard !ruled.isEmpty else { return lines }
        let needles = ruled.map { "\"class\":\"\($0)\"" }
        return try lines.map { line in
            guard needles.contains(where: { line.contains($0) }) else { return line }
            let changeset = try ChangesetLines.decodeLine(line)
            let kept = changeset.operations.filter { op in
                guard ruled.contains(op.object.className) else { return true }
                if case .delete = op.change { return changeset.clientId == 0 }
                return false
            }
            if kept.count == changeset.operations.count { return line }
            return ChangesetLines.encode(try Changeset(clientId: changeset.clientId, clientVersion: changeset.clientVersion,
                                                       clock: changeset.clock, operations: kept))
        }
    }
}
