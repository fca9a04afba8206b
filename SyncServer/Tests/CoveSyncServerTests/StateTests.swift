// The objects' states the server keeps (layout 2): merged on upload, typed tables per schema
// class equal to what the states show (a value of the wrong type NULL, the state keeping it),
// classes outside the schema kept as states, a layout-1 database migrated, and the schema in
// the configuration checked by name.
import Foundation
import CoveSyncCore
import Logging
import PostgresNIO
import XCTest
@testable import CoveSyncServer

/// The schema the subscription and state tests use.
let testSchema = try! ServerSchema(.object([
    "SDog": .object(["primaryKey": .string("name"), "properties": .object([
        "name": .string("string"), "age": .string("int"), "color": .string("string?"), "toys": .string("string[]"),
        "born": .string("date?"), "owner": .string("SPerson?"),
    ])]),
    "SPerson": .object(["primaryKey": .string("id"), "properties": .object([
        "id": .string("int"), "name": .string("string"), "dog": .object(["type": .string("object"), "objectType": .string("SDog")]),
    ])]),
]))

extension ServerTests {
    /// A changeset of `node` at `version` with `ops` (object, change) stamped in order.
    func changeset(node: UInt64, version: UInt64, _ ops: [(SyncObjectRef, SyncOperation.Change)]) throws -> String {
        // Later versions get later clocks, whatever the sources made before.
        let wall = UInt64(Date().timeIntervalSince1970 * 1000) + version * 1000
        let source = SyncClockSource(node: node, after: try SyncClock(wall: wall, counter: 0, node: node))
        var builder = ChangesetBuilder(clock: source, version: version)
        for (object, change) in ops { try builder.append(object, change, wall: wall) }
        return ChangesetLines.encode(try builder.finish(wall: wall)) + "\n"
    }

    func dog(_ name: String) -> SyncObjectRef { try! SyncObjectRef(className: "SDog", key: .string(name)) }

    /// Rows of a query as texts (each column cast to text in the SQL).
    func texts(_ server: SyncServer, _ sql: String, _ binds: [String] = []) async throws -> [[String?]] {
        var bindings = PostgresBindings()
        for b in binds { bindings.append(b) }
        let rows = try await server.database.client.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: Logger(label: "test"))
        var out: [[String?]] = []
        for try await row in rows {
            var values: [String?] = []
            for cell in row { values.append(try cell.decode(String?.self)) }
            out.append(values)
        }
        return out
    }

    func testUploadsMergeIntoStatesAndTypedTables() async throws {
        let (base, server, task) = try await startServer(schema: testSchema)
        defer { task.cancel() }
        let token = try await server.tokens.token(for: "alice", days: 1)
        let (file, node) = try await bind(base, token)
        let tag = UUID().uuidString.prefix(8)
        let rex = dog("rex-\(tag)"), odd = dog("odd-\(tag)")
        let note = try SyncObjectRef(className: "Note\(tag.filter(\.isLetter))", key: .int(1))
        var lines = try changeset(node: node, version: 1, [
            (rex, .create(values: ["age": .int(3), "color": .string("brown")])),
            (rex, .listInsert(property: "toys", position: try ListPosition("V"), value: .string("ball"))),
            (odd, .create(values: ["age": .string("old"), "born": .date(try SyncDate(seconds: -2, nanoseconds: -5))])),
            (note, .create(values: ["text": .string("kept")])),
        ])
        lines += try changeset(node: node, version: 2, [(rex, .setProperty("age", .int(4)))])
        let (status, _, text) = try await upload(base, token, file, lines)
        XCTAssertEqual(status, 200, text)
        let rows = try await texts(server, #"SELECT key, alive::text, "p_name", "p_age"::text, "p_color", "p_born"::text FROM "c_SDog" WHERE key = ANY($1::text[]) ORDER BY key"#,
                                   [#"{"\#(odd.key.json.replacingOccurrences(of: "\"", with: "\\\""))","\#(rex.key.json.replacingOccurrences(of: "\"", with: "\\\""))"}"#])
        XCTAssertEqual(rows, [
            [odd.key.json, "true", "odd-\(tag)", nil, nil, "-2.000000005"],
            [rex.key.json, "true", "rex-\(tag)", "4", "brown", nil],
        ], "typed columns show the states; a string age is NULL")
        // The states keep what the typed table cannot show, and classes outside the schema.
        for (ref, property, value) in [(odd, "age", SyncValue.string("old")), (note, "text", .string("kept")), (rex, "age", .int(4))] {
            let found = try await texts(server, "SELECT encode(state, 'base64') FROM cove_sync_objects WHERE class = $1 AND key = $2",
                                        [ref.className, ref.key.json])
            let body = try XCTUnwrap(found.first?.first ?? nil)
            let state = try SyncObjectState(binary: Array(try XCTUnwrap(Data(base64Encoded: body, options: .ignoreUnknownCharacters))))
            XCTAssertEqual(state.property(property), value, "\(ref)")
        }
        // A delete shows as not alive.
        _ = try await upload(base, token, file, try changeset(node: node, version: 3, [(rex, .delete)]))
        let alive = try await texts(server, #"SELECT alive::text FROM "c_SDog" WHERE key = $1"#, [rex.key.json])
        XCTAssertEqual(alive, [["false"]])
    }

    func testALayoutOneDatabaseIsMigrated() async throws {
        let db = TestDatabase.shared
        if let error = db.error { throw XCTSkip(error) }
        let logger = Logger(label: "test")
        let url = try DatabaseURL(db.url)
        let name = "cove_layout1_\(getpid())"
        let admin = SyncDatabase(url: url, logger: logger)
        var old = url
        old.database = name
        let database = SyncDatabase(url: old, schema: testSchema, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await admin.client.run() }
            group.addTask { await database.client.run() }
            defer { group.cancelAll() }
            try await admin.client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name)"), logger: logger)
            try await admin.client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
            // The tables as layout 1 made them, with a history of two changesets.
            let file = UUID()
            let node = SyncDatabase.nodeId(of: file)
            for statement in [
                "CREATE TABLE cove_sync_meta (id integer PRIMARY KEY CHECK (id = 1), layout integer NOT NULL, server_version bigint NOT NULL)",
                "INSERT INTO cove_sync_meta VALUES (1, 1, 2)",
                """
                CREATE TABLE cove_sync_clients (client_file_id uuid PRIMARY KEY, node_id bigint NOT NULL UNIQUE, user_name text NOT NULL,
                    schema_version bigint NOT NULL, bound_at timestamptz NOT NULL DEFAULT now(), last_seen timestamptz NOT NULL DEFAULT now(),
                    uploaded_version bigint NOT NULL DEFAULT 0)
                """,
                "INSERT INTO cove_sync_clients (client_file_id, node_id, user_name, schema_version, uploaded_version) VALUES ('\(file)', \(node), 'alice', 1, 2)",
                """
                CREATE TABLE cove_sync_history (server_version bigint PRIMARY KEY, client_file_id uuid NOT NULL REFERENCES cove_sync_clients (client_file_id),
                    client_version bigint NOT NULL, changeset text NOT NULL, committed_at timestamptz NOT NULL DEFAULT now(), UNIQUE (client_file_id, client_version))
                """,
            ] {
                try await database.client.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            let lines = [
                try changeset(node: UInt64(node), version: 1, [(dog("a"), .create(values: ["age": .int(1)])), (dog("b"), .create(values: ["age": .int(2)]))]),
                try changeset(node: UInt64(node), version: 2, [(dog("b"), .delete), (dog("a"), .setProperty("color", .string("red")))]),
            ]
            for (i, line) in lines.enumerated() {
                try await database.client.query("""
                    INSERT INTO cove_sync_history (server_version, client_file_id, client_version, changeset)
                    VALUES (\(Int64(i + 1)), \(file), \(Int64(i + 1)), \(String(line.dropLast())))
                    """, logger: logger)
            }
            try await database.migrate()
            try await database.migrate()  // again: nothing to do
            let rows = try await database.client.query(#"SELECT key, alive, "p_age", "p_color" FROM "c_SDog" ORDER BY key"#, logger: logger)
            var found: [String] = []
            for try await (key, alive, age, color) in rows.decode((String, Bool, Int64?, String?).self) {
                found.append("\(key) \(alive) \(age.map(String.init) ?? "-") \(color ?? "-")")
            }
            XCTAssertEqual(found, [#""a" true 1 red"#, #""b" false - -"#])
            var layout = 0
            for try await v in try await database.client.query("SELECT layout FROM cove_sync_meta", logger: logger).decode(Int.self) { layout = v }
            XCTAssertEqual(layout, 3, "layout 1 brought up to the newest")
            try await admin.client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger)
        }
    }

    func testTheSchemaIsCheckedByName() throws {
        func refused(_ json: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
            let config = #"{"database": "postgres://u@h/d", "token_secret": "\#(Self.secret)", "schema": \#(json)}"#
            XCTAssertThrowsError(try JSONDecoder().decode(ServerConfig.self, from: Data(config.utf8)).validate(), file: file, line: line) {
                XCTAssertTrue("\($0)".contains(expected), "\($0) lacks \(expected)", file: file, line: line)
            }
        }
        refused("[]", "schema: expected an object of classes by name")
        refused(#"{"Dog": {"properties": {"name": "string"}}}"#, "class 'Dog' has no primaryKey")
        refused(#"{"Dog": {"properties": {"name": "string", "o": "Strin"}, "primaryKey": "name"}}"#, "class 'Dog', property 'o' links to 'Strin', which the schema lacks")
        refused(#"{"Dog": {"properties": {"name": "string"}, "primaryKey": "id"}}"#, "the primaryKey 'id' is not one of its properties")
        refused(#"{"Dog": {"properties": {"n": "double"}, "primaryKey": "n"}}"#, "the primary key 'n' is double; it must be int, string, objectId or uuid")
        refused(#"{"Dog": {"properties": {"n": "int"}, "primaryKey": "n", "colour": 1}}"#, #"class 'Dog' has unknown member "colour""#)
        refused(#"{"int": {"properties": {"n": "int"}, "primaryKey": "n"}}"#, "'int' is not a class name")
        refused(#"{"Dog": {"properties": {"n": "int?[]x"}, "primaryKey": "n"}}"#, "class 'Dog', property 'n': invalid type")
        refused(#"{"Dog": {"properties": {"n": 5}, "primaryKey": "n"}}"#, #"class 'Dog', property 'n': expected a type such as "int""#)
        refused(#"{"Dog": {"embedded": true, "properties": {"n": "int"}}}"#, "embedded objects do not sync yet")
        let good = #"{"database": "postgres://u@h/d", "token_secret": "\#(Self.secret)", "schema": {"D": {"properties": {"n": "int", "t": "string[]"}, "primaryKey": "n"}}}"#
        let schema = try XCTUnwrap(try JSONDecoder().decode(ServerConfig.self, from: Data(good.utf8)).serverSchema())
        XCTAssertEqual(schema.classes["D"]?.columns.map(\.property), ["n"], "a list has no column")
        XCTAssertEqual(schema.subscriptions.classes["D"]?["n"], SyncPropertyType(.int), "the primary key is queryable")
    }
}
