// The objects' merge states (layout 2): every changeset an upload integrates is merged, in the
// same transaction, into the state of each object it touches (cove_sync_objects, for every
// class), and for the schema's classes into a typed table per class ("c_<Class>") whose columns
// show what the states show, for subscriptions to query. Reads and writes are batched: one
// locking read of all touched states, one upsert of them, one upsert per typed table.
import CoveSyncCore
import Foundation
import Logging
import PostgresNIO

extension SyncDatabase {
    /// Merges `changesets` into the states of the objects they touch and into the typed tables,
    /// on `connection` (in its transaction).
    static func mergeStates(_ changesets: [Changeset], schema: ServerSchema?, _ connection: PostgresConnection,
                            _ logger: Logger) async throws {
        var operations: [SyncObjectRef: [SyncOperation]] = [:]
        for changeset in changesets {
            for op in changeset.operations { operations[op.object, default: []].append(op) }
        }
        guard !operations.isEmpty else { return }
        let refs = operations.keys.sorted()
        let classes = refs.map(\.className), keys = refs.map(\.key.json)
        // Locked in one order (class, key), so that two transactions cannot deadlock.
        let rows = try await connection.query("""
            SELECT class, key, state FROM cove_sync_objects
            WHERE (class, key) IN (SELECT * FROM unnest(\(classes)::text[], \(keys)::text[]))
            ORDER BY class, key FOR UPDATE
            """, logger: logger)
        var states: [SyncObjectRef: SyncObjectState] = [:]
        for try await (className, keyText, bytes) in rows.decode((String, String, ByteBuffer).self) {
            let ref = try SyncObjectRef(className: className, key: try SyncPrimaryKey(json: keyText))
            states[ref] = try SyncObjectState(binary: Array(bytes.readableBytesView))
        }
        for (ref, ops) in operations {
            var state = states[ref] ?? SyncObjectState()
            for op in ops { state.apply(op) }
            states[ref] = state
        }
        var statement = FoldedStatement()
        try writeStates(refs.map { ($0, states[$0] ?? SyncObjectState()) }, schema: schema, into: &statement)
        try await run(statement, connection, logger)
    }

    /// Writes states (new or replacing) and their typed tables' rows: one data-modifying part
    /// of `statement` for the states, one per typed table.
    static func writeStates(_ states: [(SyncObjectRef, SyncObjectState)], schema: ServerSchema?,
                            into statement: inout FoldedStatement) throws {
        guard !states.isEmpty else { return }
        let classes = states.map(\.0.className), keys = states.map(\.0.key.json)
        let bodies = states.map { Data($0.1.binary()).base64EncodedString() }
        statement.add("""
            INSERT INTO cove_sync_objects (class, key, state)
            SELECT c, k, decode(s, 'base64') FROM unnest(\(statement.bind(classes))::text[], \(statement.bind(keys))::text[],
                                                         \(statement.bind(bodies))::text[]) AS t(c, k, s)
            WHERE \(statement.gate)
            ON CONFLICT (class, key) DO UPDATE SET state = EXCLUDED.state
            """)
        guard let schema else { return }
        var byClass: [String: [(SyncObjectRef, SyncObjectState)]] = [:]
        for item in states where schema.classes[item.0.className] != nil { byClass[item.0.className, default: []].append(item) }
        for (className, items) in byClass.sorted(by: { $0.key < $1.key }) {
            guard let cls = schema.classes[className] else { continue }
            try writeTypedRows(cls, items, into: &statement)
        }
    }

    /// Runs the writes of `statement` on `connection`.
    static func run(_ statement: FoldedStatement, _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !statement.isEmpty else { return }
        try await connection.query(statement.query(final: "SELECT 1"), logger: logger)
    }

    /// One upsert of a class's typed rows: each row travels as a JSON array of texts (key,
    /// liveness, then each column's value or null), which the statement casts to the columns'
    /// types.
    static func writeTypedRows(_ cls: ServerClass, _ items: [(SyncObjectRef, SyncObjectState)], into statement: inout FoldedStatement) throws {
        let naming = SQLNaming()
        var rows: [String] = []
        rows.reserveCapacity(items.count)
        for (ref, state) in items {
            var texts: [String?] = [ref.key.json, state.exists ? "true" : "false"]
            for (property, type, _) in cls.columns {
                let value = property == cls.primaryKey ? ref.key.value : state.property(property)
                texts.append(value.flatMap { SQLValues.text($0, for: type) })
            }
            rows.append(jsonArray(texts))
        }
        var names = ["key", "alive"], reads = ["r->>0", "(r->>1)::boolean"]
        for (i, column) in cls.columns.enumerated() {
            names.append(try naming.column(column.property))
            reads.append(column.column.fromText("r->>\(i + 2)"))
        }
        let updates = names.dropFirst().map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
        statement.add("""
            INSERT INTO \(try naming.table(cls.name)) (\(names.joined(separator: ", ")))
            SELECT \(reads.joined(separator: ", ")) FROM (SELECT x::jsonb AS r FROM unnest(\(statement.bind(rows))::text[]) AS u(x)) AS t
            WHERE \(statement.gate)
            ON CONFLICT (key) DO UPDATE SET \(updates)
            """)
    }

    /// `["a", null, ...]`: texts as a JSON array.
    static func jsonArray(_ texts: [String?]) -> String {
        var out = "["
        for (i, text) in texts.enumerated() {
            if i > 0 { out += "," }
            guard let text else { out += "null"; continue }
            out += "\""
            for u in text.unicodeScalars {
                switch u {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                default:
                    if u.value < 0x20 {
                        let hex = String(u.value, radix: 16)
                        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    } else {
                        out.unicodeScalars.append(u)
                    }
                }
            }
            out += "\""
        }
        return out + "]"
    }

    // MARK: Migration

    /// Makes the states' tables of layout 2; a database of layout 1 has its history replayed
    /// into the states. On `connection`, in the migration's transaction.
    static func migrateStates(from layout: Int, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("""
            CREATE TABLE IF NOT EXISTS cove_sync_objects (
                class text COLLATE "C" NOT NULL,
                key text COLLATE "C" NOT NULL,
                state bytea NOT NULL,
                PRIMARY KEY (class, key))
            """, logger: logger)
        try await connection.query("""
            CREATE TABLE IF NOT EXISTS cove_sync_subscriptions (
                client_file_id uuid PRIMARY KEY REFERENCES cove_sync_clients (client_file_id),
                version bigint NOT NULL,
                body text NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        guard layout < 2 else { return }
        try await replayHistory(connection, logger)
        try await connection.query("UPDATE cove_sync_meta SET layout = 2 WHERE id = 1", logger: logger)
    }

    /// Layout 3: the server's clock (for its compensating changesets), the compensations made,
    /// and the client file the server's own changesets are kept under.
    static func migrateCompensations(from layout: Int, _ connection: PostgresConnection, _ logger: Logger) async throws {
        if layout < 3 {
            try await connection.query("ALTER TABLE cove_sync_meta ADD COLUMN IF NOT EXISTS server_clock text", logger: logger)
        }
        try await connection.query("""
            CREATE TABLE IF NOT EXISTS cove_sync_compensations (
                client_file_id uuid NOT NULL REFERENCES cove_sync_clients (client_file_id),
                client_version bigint NOT NULL,
                position integer NOT NULL,
                class text NOT NULL,
                key text NOT NULL,
                reason text NOT NULL,
                PRIMARY KEY (client_file_id, client_version, position))
            """, logger: logger)
        try await connection.query("""
            INSERT INTO cove_sync_clients (client_file_id, node_id, user_name, schema_version)
            VALUES (\(serverFileId), 0, '', 0) ON CONFLICT DO NOTHING
            """, logger: logger)
        if layout < 3 { try await connection.query("UPDATE cove_sync_meta SET layout = 3 WHERE id = 1", logger: logger) }
    }

    /// Merges the whole history into the states (a database of layout 1).
    static func replayHistory(_ connection: PostgresConnection, _ logger: Logger) async throws {
        var after: Int64 = 0
        while true {
            let rows = try await connection.query("""
                SELECT server_version, changeset FROM cove_sync_history WHERE server_version > \(after)
                ORDER BY server_version LIMIT 2000
                """, logger: logger)
            var changesets: [Changeset] = []
            for try await (version, line) in rows.decode((Int64, String).self) {
                changesets.append(try ChangesetLines.decodeLine(line))
                after = version
            }
            if changesets.isEmpty { break }
            try await mergeStates(changesets, schema: nil, connection, logger)
        }
    }

    /// Makes the schema's typed tables and columns that are missing (a column whose type the
    /// schema changed is made again) and fills those from the states.
    static func migrateTypedTables(_ schema: ServerSchema, _ connection: PostgresConnection, _ logger: Logger) async throws {
        let naming = SQLNaming()
        let rows = try await connection.query("""
            SELECT table_name, column_name, data_type FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name LIKE 'c\\_%'
            """, logger: logger)
        var existing: [String: [String: String]] = [:]
        for try await (table, column, type) in rows.decode((String, String, String).self) { existing[table, default: [:]][column] = type }
        for cls in schema.classes.values.sorted(by: { $0.name < $1.name }) {
            let table = try naming.table(cls.name)
            let tableName = naming.tablePrefix + cls.name
            var changed = false
            if existing[tableName] == nil {
                try await connection.query(PostgresQuery(unsafeSQL: """
                    CREATE TABLE \(table) (key text COLLATE "C" PRIMARY KEY, alive boolean NOT NULL)
                    """), logger: logger)
                changed = true
            }
            let columns = existing[tableName] ?? [:]
            for (property, _, type) in cls.columns {
                let column = try naming.column(property)
                let found = columns[naming.columnPrefix + property]
                if found == type.sql { continue }
                if found != nil {
                    try await connection.query(PostgresQuery(unsafeSQL: "ALTER TABLE \(table) DROP COLUMN \(column)"), logger: logger)
                }
                try await connection.query(PostgresQuery(unsafeSQL: "ALTER TABLE \(table) ADD COLUMN \(column) \(type.sql)"), logger: logger)
                changed = true
            }
            if changed { try await fillTypedTable(cls, connection, logger) }
        }
    }

    /// Writes a class's typed rows from every state of the class, a batch at a time.
    static func fillTypedTable(_ cls: ServerClass, _ connection: PostgresConnection, _ logger: Logger) async throws {
        var after = ""
        while true {
            let rows = try await connection.query("""
                SELECT key, state FROM cove_sync_objects WHERE class = \(cls.name) AND key > \(after) ORDER BY key LIMIT 2000
                """, logger: logger)
            var items: [(SyncObjectRef, SyncObjectState)] = []
            for try await (keyText, bytes) in rows.decode((String, ByteBuffer).self) {
                items.append((try SyncObjectRef(className: cls.name, key: try SyncPrimaryKey(json: keyText)),
                              try SyncObjectState(binary: Array(bytes.readableBytesView))))
                after = keyText
            }
            if items.isEmpty { return }
            var statement = FoldedStatement()
            try writeTypedRows(cls, items, into: &statement)
            try await run(statement, connection, logger)
        }
    }
}
