// Read and write rules: the configuration's rules checked by name; writes a rule refuses (create,
// delete, property, list, set and map edits) left out of the states, typed tables and history,
// and answered by a compensating changeset every file downloads, the uploader's included,
// bringing a file that applied them back to the server's state; a retry answered the same, with
// nothing compensated twice; writes outside a file's subscriptions compensated; read rules on
// bootstraps, subscribed downloads and changeset downloads; `$user` in the core's queries.
import Foundation
import CoveSyncCore
import Logging
import PostgresNIO
import XCTest
@testable import CoveSyncServer

/// The schema of the rules tests: `WNote` has a write rule, `RNote` read and write rules, `FNote`
/// none.
let rulesSchema = try! ServerSchema(.object(Dictionary(uniqueKeysWithValues: ["WNote", "RNote", "FNote"].map { name in
    (name, JSONDocument.object(["primaryKey": .string("id"), "properties": .object([
        "id": .string("int"), "owner": .string("string"), "body": .string("string?"), "tags": .string("string[]"),
        "labels": .string("string<>"), "meta": .string("string{}"),
    ])]))
})))

let rulesDocument = JSONDocument.object([
    "WNote": .object(["write": .string("owner == $user")]),
    "RNote": .object(["read": .string("owner == $user"), "write": .string("owner == $user")]),
])

extension ServerTests {
    /// A node's changesets, stamped in order from one clock source.
    final class Writer {
        let source: SyncClockSource
        var version: UInt64 = 0

        init(node: UInt64) { source = SyncClockSource(node: node) }

        /// The next changeset of `ops`; `clocks` gets each operation's clock.
        func changeset(_ ops: [(SyncObjectRef, SyncOperation.Change)], clocks: inout [SyncClock]) throws -> Changeset {
            version += 1
            var builder = ChangesetBuilder(clock: source, version: version)
            let wall = SyncClockSource.systemWall()
            for (object, change) in ops { clocks.append(try builder.append(object, change, wall: wall)) }
            return try builder.finish(wall: wall)
        }

        func changeset(_ ops: [(SyncObjectRef, SyncOperation.Change)]) throws -> Changeset {
            var clocks: [SyncClock] = []
            return try changeset(ops, clocks: &clocks)
        }
    }

    func startRulesServer() async throws -> (URL, SyncServer, Task<Void, any Error>) {
        try await startServer(schema: rulesSchema, rules: try ServerRules(rulesDocument, schema: rulesSchema))
    }

    func note(_ className: String, _ id: Int64) -> SyncObjectRef { try! SyncObjectRef(className: className, key: .int(id)) }

    /// The changesets of a changeset download after `after`, decoded.
    func changesets(_ base: URL, _ token: String, _ file: UUID, after: Int) async throws -> [Changeset] {
        let got = try await Self.download(base, token, file, after: after, limit: 10_000)
        XCTAssertEqual(got.status, 200, got.text)
        return try got.lines.map { try ChangesetLines.decodeLine($0) }
    }

    func compensating(_ json: [String: Any]?) -> [String] {
        ((json?["compensating"] as? [[String: Any]]) ?? []).map { "\($0["class"] ?? "?")/\($0["key"] ?? "?"): \($0["reason"] ?? "?")" }
    }

    func testRulesAreCheckedByName() throws {
        func refused(_ rules: JSONDocument, _ expected: String, schema: ServerSchema? = rulesSchema, line: UInt = #line) {
            XCTAssertThrowsError(try ServerRules(rules, schema: schema), line: line) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error)", line: line)
            }
        }
        refused(.object(["Cat": .object(["read": .string("TRUEPREDICATE")])]), "rules: the schema has no class 'Cat'")
        refused(.object(["WNote": .object(["reed": .string("TRUEPREDICATE")])]), "rules: class 'WNote' has unknown member \"reed\"")
        refused(.object(["WNote": .object(["read": .number(1)])]), "rules: class 'WNote', read: expected a query string")
        refused(.object(["WNote": .object(["write": .string("ownr == $user")])]),
                "rules: class 'WNote', write: subscription query \"ownr == $user\"")
        refused(.object(["WNote": .object(["write": .string("owner == $usr")])]), "rules: class 'WNote', write: syntax error")
        refused(.object(["WNote": .object(["write": .string("id == $user")])]), "property 'id' of class 'WNote' is int, compared with string")
        refused(.object(["*": .object(["read": .string("colour == $user")])]), "rules: class 'FNote', read (from \"*\"):")
        refused(.object(["WNote": .string("owner == $user")]), "rules: class 'WNote': expected an object")
        refused(.array([]), "rules: expected an object")
        refused(rulesDocument, "rules: rules need a schema", schema: nil)
        // "*" gives defaults; a class's own rule wins; TRUEPREDICATE is no rule.
        let rules = try ServerRules(.object(["*": .object(["write": .string("owner == $user")]),
                                             "FNote": .object(["write": .string("TRUEPREDICATE")])]), schema: rulesSchema)
        XCTAssertEqual(rules.write["RNote"], "owner == $user")
        XCTAssertNotNil(rules.writeRule("RNote", user: "ann"))
        XCTAssertNil(rules.writeRule("FNote", user: "ann"))
        XCTAssertNil(rules.readRule("RNote", user: "ann"))
        // The configuration file's rules, checked with the rest.
        let config = ServerConfig(database: "postgres://u@h/d", tokenSecret: String(repeating: "s", count: 32),
                                  rules: .object(["Dog": .object([:])]))
        XCTAssertThrowsError(try config.validate()) { XCTAssertTrue("\($0)".contains("rules need a schema"), "\($0)") }
    }

    func testUserArgumentsInQueries() throws {
        let schema = try SubscriptionSchema(notation: ["Note": ["owner": "string", "age": "int"]])
        let query = try SubscriptionQuery(className: "Note", query: "owner == $user AND age > $0", schema: schema,
                                          arguments: [.value(.int(3))], namedArguments: ["user": .value(.string("ann"))])
        let sql = try query.sql()
        XCTAssertEqual(sql.condition, #"("p_owner" = $1 AND "p_age" > $2)"#)
        XCTAssertEqual(sql.parameters, [.string("ann"), .int(3)])
        XCTAssertThrowsError(try SubscriptionQuery(className: "Note", query: "owner == $user", schema: schema)) {
            XCTAssertEqual(($0 as? SyncError)?.code, .querySyntax, "without named arguments $user is what it always was")
        }
    }

    func testRefusedWritesAreCompensated() async throws {
        let (base, server, task) = try await startRulesServer()
        defer { task.cancel() }
        let alice = try await server.tokens.token(for: "alice", days: 1)
        let bob = try await server.tokens.token(for: "bob", days: 1)
        let (aliceFile, aliceNode) = try await bind(base, alice)
        let (bobFile, bobNode) = try await bind(base, bob)
        let start = try await Int(server.database.latestVersion())
        let id = Int64.random(in: 1...1 << 40)
        let (kept, refusedNew, bobs) = (note("WNote", id), note("WNote", id + 1), note("WNote", id + 2))
        let a = Writer(node: aliceNode), b = Writer(node: bobNode)
        var clocks: [SyncClock] = []
        let first = try a.changeset([
            (kept, .create(values: ["owner": .string("alice"), "body": .string("mine")])),
            (kept, .listInsert(property: "tags", position: try ListPosition("V"), value: .string("a"))),
            (kept, .setAdd(property: "labels", value: .string("x"))),
            (kept, .mapSet(property: "meta", key: "m", value: .string("1"))),
        ], clocks: &clocks)
        var (status, json, text) = try await upload(base, alice, aliceFile, ChangesetLines.encode(first) + "\n")
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(compensating(json), [], "allowed writes are not compensated")
        // Bob writes alice's note in every way, makes a note for alice, and one of his own.
        let attack = try b.changeset([
            (refusedNew, .create(values: ["owner": .string("alice"), "body": .string("forged")])),
            (kept, .setProperty("body", .string("bob was here"))),
            (kept, .listInsert(property: "tags", position: try ListPosition("W"), value: .string("b"))),
            (kept, .listRemove(property: "tags", element: clocks[1])),
            (kept, .setAdd(property: "labels", value: .string("y"))),
            (kept, .setRemove(property: "labels", value: .string("x"))),
            (kept, .mapSet(property: "meta", key: "m", value: .string("2"))),
            (kept, .mapRemove(property: "meta", key: "m")),
            (kept, .delete),
            (bobs, .create(values: ["owner": .string("bob"), "body": .string("his")])),
        ])
        let body = ChangesetLines.encode(attack) + "\n"
        (status, json, text) = try await upload(base, bob, bobFile, body)
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(json?["accepted"] as? Int, 1, text)
        let reason = "write rule of class 'WNote' (owner == $user)"
        let expected = ["WNote/\(id + 1): \(reason)", "WNote/\(id): \(reason)"]
        XCTAssertEqual(compensating(json), expected, text)
        let serverVersion = try XCTUnwrap(json?["server_version"] as? Int)
        XCTAssertEqual(serverVersion, start + 3, "alice's, bob's and the compensation")
        // A retry is answered the same and adds nothing.
        (status, json, text) = try await upload(base, bob, bobFile, body)
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(json?["accepted"] as? Int, 0, text)
        XCTAssertEqual(compensating(json), expected, "a retry lists the same objects: \(text)")
        let latestAfterRetry = try await server.database.latestVersion()
        XCTAssertEqual(latestAfterRetry, Int64(start + 3), "nothing compensated twice")
        // The server's state and typed table show alice's note as she wrote it, no forged note.
        let rows = try await texts(server, #"SELECT key, alive::text, "p_owner", "p_body" FROM "c_WNote" WHERE key = ANY($1::text[]) ORDER BY key"#,
                                   ["{\(id),\(id + 1),\(id + 2)}"])
        XCTAssertEqual(rows.filter { $0[1] == "true" }, [["\(id)", "true", "alice", "mine"], ["\(id + 2)", "true", "bob", "his"]])
        // Both files download the compensating changeset (the uploader too: it is not its own).
        let bobGot = try await changesets(base, bob, bobFile, after: start)
        XCTAssertEqual(bobGot.map(\.clientId), [aliceNode, 0], "alice's and the server's, not bob's own")
        let compensation = try XCTUnwrap(bobGot.last)
        XCTAssertTrue(compensation.operations.allSatisfy { $0.clock > attack.clock }, "clocks after the refused operations'")
        let aliceGot = try await changesets(base, alice, aliceFile, after: start)
        XCTAssertEqual(aliceGot.map(\.clientId), [bobNode, 0])
        XCTAssertEqual(aliceGot.first?.operations.map(\.object), [bobs], "the history keeps bob's changeset without its refused operations")
        XCTAssertEqual(aliceGot.last, compensation)
        // A file that applied bob's changeset whole and one that has what the server kept end
        // alike once each merges the compensation: bob's file is brought back.
        var bobsFile = SyncReplica(), othersFile = SyncReplica()
        for c in [first, attack, compensation] { bobsFile.apply(c) }
        for c in [first] + aliceGot { othersFile.apply(c) }
        XCTAssertEqual(bobsFile.snapshot().description, othersFile.snapshot().description)
        let shown = othersFile.snapshot().objects.first { $0.ref == kept }
        XCTAssertEqual(shown?.properties["body"], .string("mine"))
        XCTAssertEqual(shown?.lists["tags"], [.string("a")])
        XCTAssertEqual(shown?.sets["labels"], [.string("x")])
        XCTAssertEqual(shown?.maps["meta"], [SyncSnapshot.MapEntry(key: "m", value: .string("1"))])
        XCTAssertFalse(othersFile.contains(refusedNew))
        XCTAssertTrue(bobsFile.contains(bobs))
        // Alice's own writes still pass, and deleting her note is hers to do.
        (status, json, text) = try await upload(base, alice, aliceFile, ChangesetLines.encode(try a.changeset([
            (kept, .setProperty("body", .string("edited"))), (kept, .delete),
        ])) + "\n")
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(compensating(json), [], text)
    }

    func testWritesOutsideSubscriptionsAreCompensated() async throws {
        let (base, server, task) = try await startRulesServer()
        defer { task.cancel() }
        let carol = try await server.tokens.token(for: "carol", days: 1)
        let (file, node) = try await bind(base, carol)
        let id = Int64.random(in: 1...1 << 40)
        let (inside, outside) = (note("FNote", id), note("FNote", id + 1))
        var (status, _, text) = try await postSet(base, carol, file, SyncSubscriptionSetBody(version: 1, subscriptions: [
            SyncSubscriptionEntry(name: "in", className: "FNote", query: "owner BEGINSWITH 'in'"),
        ]))
        XCTAssertEqual(status, 200, text)
        let w = Writer(node: node)
        var json: [String: Any]?
        (status, json, text) = try await upload(base, carol, file, ChangesetLines.encode(try w.changeset([
            (inside, .create(values: ["owner": .string("in one"), "body": .string("carol's")])),
            (outside, .create(values: ["owner": .string("out"), "body": .string("carol's")])),
        ])) + "\n")
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(compensating(json), ["FNote/\(id + 1): outside the file's subscriptions"], text)
        (status, json, text) = try await upload(base, carol, file, ChangesetLines.encode(try w.changeset([
            (inside, .setProperty("owner", .string("gone out"))),
        ])) + "\n")
        XCTAssertEqual(compensating(json), ["FNote/\(id): outside the file's subscriptions"], "a write that takes the object out: \(text)")
        (status, json, text) = try await upload(base, carol, file, ChangesetLines.encode(try w.changeset([(inside, .delete)])) + "\n")
        XCTAssertEqual(compensating(json), [], "deleting a covered object is within the subscriptions: \(text)")
        let rows = try await texts(server, #"SELECT key, alive::text, "p_owner" FROM "c_FNote" WHERE key = ANY($1::text[]) ORDER BY key"#,
                                   ["{\(id),\(id + 1)}"])
        XCTAssertEqual(rows.map { $0[1] }, ["false", "false"], "the covered one deleted, the other never made")
    }

    func testReadRules() async throws {
        let (base, server, task) = try await startRulesServer()
        defer { task.cancel() }
        let alice = try await server.tokens.token(for: "alice", days: 1)
        let bob = try await server.tokens.token(for: "bob", days: 1)
        let (aliceFile, aliceNode) = try await bind(base, alice)
        let (bobFile, bobNode) = try await bind(base, bob)
        let (reader, _) = try await bind(base, alice)
        let (plain, _) = try await bind(base, alice)
        let start = try await Int(server.database.latestVersion())
        let id = Int64.random(in: 1...1 << 40)
        let (hers, his) = (note("RNote", id), note("RNote", id + 1))
        let a = Writer(node: aliceNode), b = Writer(node: bobNode)
        var (status, _, text) = try await upload(base, alice, aliceFile, ChangesetLines.encode(try a.changeset([
            (hers, .create(values: ["owner": .string("alice"), "body": .string("hers")])),
        ])) + "\n")
        XCTAssertEqual(status, 200, text)
        (status, _, text) = try await upload(base, bob, bobFile, ChangesetLines.encode(try b.changeset([
            (his, .create(values: ["owner": .string("bob"), "body": .string("his")])),
        ])) + "\n")
        XCTAssertEqual(status, 200, text)
        (status, _, text) = try await postSet(base, alice, reader, SyncSubscriptionSetBody(version: 1, subscriptions: [
            SyncSubscriptionEntry(name: nil, className: "RNote", query: "id >= $0", arguments: [.value(.int(id))]),
        ]))
        XCTAssertEqual(status, 200, text)
        let (got, boot, bootText) = try await stateDownload(base, alice, reader, "subscriptions=1&bootstrap=start")
        XCTAssertEqual(got, 200, bootText)
        XCTAssertEqual(boot?.lines.map { line -> SyncObjectRef in
            if case .object(let ref, _) = line { return ref } else { return his }
        }.filter { $0 == hers || $0 == his }, [hers], "the bootstrap sends only what alice may read")
        // Bob edits his note: alice's subscribed download says it is not hers to hold.
        (status, _, text) = try await upload(base, bob, bobFile, ChangesetLines.encode(try b.changeset([
            (his, .setProperty("body", .string("still his"))),
        ])) + "\n")
        XCTAssertEqual(status, 200, text)
        let (steady, lines, steadyText) = try await stateDownload(base, alice, reader, "subscriptions=1&after=\(start + 2)")
        XCTAssertEqual(steady, 200, steadyText)
        XCTAssertEqual(lines?.lines.map { line -> String in
            if case .remove(let ref) = line { return "remove \(ref)" } else { return "object" }
        }, ["remove \(his)"], steadyText)
        // A file that downloads changesets gets none of a class with read rules: the changesets
        // come, without those operations, so that its cursor moves past them.
        let stripped = try await Self.download(base, alice, plain, after: start)
        XCTAssertEqual(stripped.status, 200, stripped.text)
        XCTAssertFalse(stripped.text.contains("\"RNote\""), stripped.text)
        XCTAssertTrue(stripped.text.contains("\"ops\":[]"), stripped.text)
    }
}

extension ServerTests {
    /// The in-memory evaluation of write rules answers what the same query's SQL answers on the
    /// typed table, nulls, NOT, [c], LIKE and IN included.
    func testRulesEvaluateAsTheirSQL() async throws {
        let (base, server, task) = try await startRulesServer()
        defer { task.cancel() }
        let token = try await server.tokens.token(for: "erin", days: 1)
        let (file, node) = try await bind(base, token)
        let first = Int64.random(in: 1...1 << 40) * 10
        let rows: [(String, String?)] = [("a", "xab"), ("b", nil), ("Ann", "XbZ"), ("c", "q"), ("d", "%_\\"), ("B", "yb1")]
        var ops: [(SyncObjectRef, SyncOperation.Change)] = []
        for (i, (owner, text)) in rows.enumerated() {
            var values: [String: SyncValue] = ["owner": .string(owner)]
            if let text { values["body"] = .string(text) }
            ops.append((note("FNote", first + Int64(i)), .create(values: values)))
        }
        let changeset = try Writer(node: node).changeset(ops)
        let (status, _, text) = try await upload(base, token, file, ChangesetLines.encode(changeset) + "\n")
        XCTAssertEqual(status, 200, text)
        var states: [SyncObjectRef: SyncObjectState] = [:]
        for op in changeset.operations { states[op.object, default: SyncObjectState()].apply(op) }
        let cls = try XCTUnwrap(rulesSchema.classes["FNote"])
        let keys = "{" + (0..<rows.count).map { String(first + Int64($0)) }.joined(separator: ",") + "}"
        for text in ["owner == 'a'", "owner != 'a'", "body == null", "body != null", "NOT body BEGINSWITH 'x'", "owner ==[c] 'ANN'",
                     "body LIKE '*b?'", "owner IN {'a', 'b'}", "NOT (owner < 'b')", "body CONTAINS[c] 'x'", "body ENDSWITH '\\\\'",
                     "id > \(first + 2) AND NOT body ENDSWITH 'Z'", "body IN {'q', null}", "NOT body IN {'q'}", "NOT (body == 'q' OR owner == 'a')",
                     "body BEGINSWITH '%'", "owner >= 'B' AND owner < 'b'"] {
            let query = try SubscriptionQuery(className: "FNote", query: text, schema: rulesSchema.subscriptions)
            let sql = try query.sql(parameterOffset: 1)
            var bindings = PostgresBindings()
            bindings.append(keys)
            bindings.append(values: sql.parameters)
            let found = try await server.database.client.query(PostgresQuery(unsafeSQL: """
                SELECT key FROM "c_FNote" WHERE key = ANY($1::text[]) AND alive AND \(sql.condition) ORDER BY key
                """, binds: bindings), logger: Logger(label: "test"))
            var bySQL: [String] = []
            for try await key in found.decode(String.self) { bySQL.append(key) }
            let inMemory = states.filter { RowEvaluator(cls: cls, ref: $0.key, state: $0.value).matches(query) }.map(\.key.key.json).sorted()
            XCTAssertEqual(inMemory, bySQL, text)
        }
    }
}
